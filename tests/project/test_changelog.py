"""CHANGELOG.md keeps the form of Keep a Changelog 1.1.0, and the version the package says is the
newest version it records.

The form: `# Changelog`, then `## [Unreleased]` once, on top, then one `## [X.Y.Z] - YYYY-MM-DD`
per released version, newest first (semver descending, dates ISO and never later than the newer
version's); under each, only the sections Added, Changed, Deprecated, Removed, Fixed and
Security, each at most once; a link reference at the bottom for every version. The release
procedure (CONTRIBUTING.md, "Releasing") bumps `version` in pyproject.toml with the move of
[Unreleased] to a version, and these tests fail until both agree.
"""

from __future__ import annotations

import datetime
import importlib.metadata
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from lisboa_rules import version
from lisboa_rules.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
CHANGELOG = ROOT / "CHANGELOG.md"
SECTIONS = ("Added", "Changed", "Deprecated", "Removed", "Fixed", "Security")
SEMVER = r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
RELEASE = re.compile(rf"## \[(?P<version>{SEMVER})\] - (?P<date>\d{{4}}-\d{{2}}-\d{{2}})")
LINK = re.compile(r"\[(?P<name>[^\]]+)\]: (?P<target>\S+)")


def _key(v: str) -> tuple[int, ...]:
    return tuple(int(n) for n in v.split("."))


def releases(text: str) -> list[tuple[str, datetime.date]]:
    """The released versions and their dates, in the order written."""
    found = []
    for line in text.splitlines():
        m = RELEASE.fullmatch(line)
        if m:
            found.append((m["version"], datetime.date.fromisoformat(m["date"])))
    return found


def problems(text: str) -> list[str]:
    """What in `text` breaks the form (empty when it keeps it)."""
    bad: list[str] = []
    lines = text.splitlines()
    if not lines or lines[0] != "# Changelog":
        bad.append("the first line is not '# Changelog'")
    versions: list[str] = []
    dates: list[datetime.date] = []
    sections: set[str] = set()
    for n, line in enumerate(lines, start=1):
        if not line.startswith("#"):
            continue
        if line.startswith("## "):
            sections = set()
            if line == "## [Unreleased]":
                if versions:
                    bad.append(f"line {n}: [Unreleased] is not the first version")
                versions.append("Unreleased")
                continue
            m = RELEASE.fullmatch(line)
            if m is None:
                bad.append(f"line {n}: {line!r} is not '## [X.Y.Z] - YYYY-MM-DD'")
                continue
            try:
                day = datetime.date.fromisoformat(m["date"])
            except ValueError:
                bad.append(f"line {n}: {m['date']} is no date")
                continue
            released = [v for v in versions if v != "Unreleased"]
            if released and _key(m["version"]) >= _key(released[-1]):
                bad.append(f"line {n}: {m['version']} is not below {released[-1]}")
            if dates and day > dates[-1]:
                bad.append(f"line {n}: {day} is later than the newer version's {dates[-1]}")
            versions.append(m["version"])
            dates.append(day)
        elif line.startswith("### "):
            name = line[4:]
            if name not in SECTIONS:
                bad.append(f"line {n}: section {name!r} is none of {', '.join(SECTIONS)}")
            elif name in sections:
                bad.append(f"line {n}: a second {name} section in one version")
            if not versions:
                bad.append(f"line {n}: section {name!r} before any version")
            sections.add(name)
        elif n > 1:
            bad.append(f"line {n}: {line!r}: only '## ' versions and '### ' sections")
    if "Unreleased" not in versions:
        bad.append("no [Unreleased] section")
    if len(versions) < 2:
        bad.append("no released version")
    links = {m["name"] for m in map(LINK.fullmatch, lines) if m}
    for v in versions:
        if v not in links:
            bad.append(f"no link reference for [{v}]")
    bad.extend(
        f"a link reference for [{name}], which has no heading"
        for name in sorted(links - set(versions))
    )
    return bad


def _pyproject_version() -> str:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return str(data["project"]["version"])


def test_the_changelog_keeps_the_form() -> None:
    assert problems(CHANGELOG.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize(
    ("change", "want"),
    [
        (("## [Unreleased]\n", "## Unreleased\n"), "is not '## [X.Y.Z] - YYYY-MM-DD'"),
        (("## [0.9.0] - 2026-12-07", "## [0.11.0] - 2026-12-07"), "is not below 0.10.0"),
        (("## [0.9.0] - 2026-12-07", "## [0.9.0] - 2026-12-31"), "is later than"),
        (("## [0.9.0] - 2026-12-07", "## [0.9.0] - 2026-13-07"), "is no date"),
        (("## [0.9.0] - 2026-12-07", "## [0.9.0] - 7 December 2026"), "is not '## [X.Y.Z]"),
        (("### Fixed\n", "### Found by a review\n"), "is none of Added"),
        (("### Added\n", "### Added\n\n- x\n\n### Added\n"), "a second Added section"),
        (("\n### ", "\n#### "), "only '## ' versions and '### ' sections"),
        (("[0.1.0]: ", "[0.0.1]: "), "no link reference for [0.1.0]"),
    ],
)
def test_a_broken_form_is_found(change: tuple[str, str], want: str) -> None:
    """The checker's own test: each break of the form, made in the real change log, is found."""
    text = CHANGELOG.read_text(encoding="utf-8")
    old, new = change
    assert old in text
    broken = text.replace(old, new, 1)
    assert any(want in p for p in problems(broken)), problems(broken)


def test_the_package_version_is_the_newest_released_version() -> None:
    (newest, _), *_ = releases(CHANGELOG.read_text(encoding="utf-8"))
    assert _pyproject_version() == newest, (
        "pyproject.toml's version and CHANGELOG.md's newest release differ: "
        "see CONTRIBUTING.md, Releasing"
    )


def test_lisboa_rules_version_prints_it(capsys: pytest.CaptureFixture[str]) -> None:
    want = f"lisboa-rules {_pyproject_version()}\n"
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == want
    printed = subprocess.run(
        [sys.executable, "-m", "lisboa_rules", "--version"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert (printed.returncode, printed.stdout) == (0, want), printed.stderr


def test_outside_a_checkout_the_version_is_the_installed_one(tmp_path: Path) -> None:
    """A copy of the package with no pyproject.toml beside it (as a wheel installs it) says the
    installed distribution's version, or 0+unknown when none is installed."""
    shutil.copytree(
        ROOT / "lisboa_rules",
        tmp_path / "lisboa_rules",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    try:
        want = importlib.metadata.version("lisboa-rules")
    except importlib.metadata.PackageNotFoundError:
        want = "0+unknown"
    said = subprocess.run(
        [sys.executable, "-c", "import lisboa_rules as m; print(m.__version__)"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (said.returncode, said.stdout) == (0, f"{want}\n"), said.stderr
    assert version() == _pyproject_version()  # this checkout's own
