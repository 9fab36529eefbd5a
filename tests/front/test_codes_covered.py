"""Every diagnostic code has a failing fixture whose expected diagnostic sits on the offending line.

The fixtures are the folders of tests/cases/invalid/ (see the README there): each is laid over a
copy of the real rules/, compiled, and its `# E: code` markers compared with what the compiler
reports. The codes only the emit and write stages can produce (a broken template, a generated
file that does not compile, an output folder that cannot be written, a stray file in it) are
triggered by the tests in the second half, through the real CLI. A last test checks that every
code in lisboa_rules.core.codes.CODES is expected somewhere.

Also here: the issue-2 acceptance case (four problems in four real files, one run).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import jinja2
import pytest

from lisboa_rules import emit
from lisboa_rules.cli.main import main
from lisboa_rules.core import codes
from lisboa_rules.core.diagnostics import Diagnostic, render_text
from lisboa_rules.pipeline import compile_rules

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "rules"
CASES = Path(__file__).resolve().parents[1] / "cases" / "invalid"
NOT_RULES = {"expected.txt", "setup.txt", "README.md"}

MARKER = re.compile(r"#\s*E(?:@(?P<col>\d+))?:\s*(?P<code>[a-z0-9]+(?:-[a-z0-9]+)*)"
                    r"(?::\s*(?P<words>.*?))?\s*(?=#\s*E[@:]|$)")
EXPECTED = re.compile(r"(?:(?P<none>-)|(?P<file>[^\s:]+):(?P<line>\d+)(?::(?P<col>\d+))?)\s+"
                      r"(?P<code>[a-z0-9-]+)(?::\s*(?P<words>.*))?$")


@dataclass(frozen=True)
class Expect:
    """One expected diagnostic: file and line (None when spanless), optional column and words."""

    file: str | None
    line: int | None
    col: int | None
    code: str
    words: str | None
    origin: str  # where the expectation is written, for messages

    def matches(self, d: Diagnostic) -> bool:
        if d.code != self.code:
            return False
        if self.words and self.words not in d.full_message:
            return False
        if self.file is None:
            return d.span is None
        if d.span is None or d.span.file != self.file or d.span.line != self.line:
            return False
        return self.col is None or d.span.col == self.col


def markers(path: Path, shown: str) -> Iterator[Expect]:
    """`# E:` markers of one case file (bytes that are not UTF-8 are replaced, not refused)."""
    text = path.read_bytes().decode("utf-8", errors="replace")
    for n, line in enumerate(text.split("\n"), start=1):
        for m in MARKER.finditer(line):
            col = int(m["col"]) if m["col"] else None
            yield Expect(shown, n, col, m["code"], m["words"] or None, f"{shown}:{n}")


def expected_txt(path: Path) -> Iterator[Expect]:
    """The lines of a case's expected.txt."""
    for n, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        m = EXPECTED.match(line)
        assert m, f"{path}:{n}: cannot read this expectation: {raw!r}"
        origin = f"{path.relative_to(CASES)}:{n}"
        if m["none"]:
            yield Expect(None, None, None, m["code"], m["words"], origin)
        else:
            col = int(m["col"]) if m["col"] else None
            yield Expect(m["file"], int(m["line"]), col, m["code"], m["words"], origin)


@dataclass
class Case:
    """A fixture folder, prepared in a temporary project."""

    name: str
    rules_dir: Path
    variants: tuple[str, ...]
    expects: list[Expect]


def prepare(case_dir: Path, project: Path) -> Case:
    """Copy the real rules/ into `project`, lay the case over it, run setup.txt."""
    rules = project / "rules"
    steps = []
    setup = case_dir / "setup.txt"
    if setup.exists():
        steps = [ln.split() for ln in setup.read_text().splitlines() if ln.strip()]
    if ["empty-rules"] in steps:
        rules.mkdir()
    else:
        shutil.copytree(RULES, rules)
    expects: list[Expect] = []
    for src in sorted(case_dir.rglob("*")):
        rel = src.relative_to(case_dir)
        if src.is_dir() or rel.as_posix() in NOT_RULES:
            continue
        dst = rules / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dst)
        expects.extend(markers(src, f"rules/{rel.as_posix()}"))
    if (case_dir / "expected.txt").exists():
        expects.extend(expected_txt(case_dir / "expected.txt"))
    rules_dir, variants = Path("rules"), []
    for step in steps:
        verb, args = step[0], step[1:]
        if verb == "remove":
            (rules / args[0]).unlink()
        elif verb == "symlink":
            (rules / args[0]).symlink_to(args[1])
        elif verb == "pad":
            target, size = rules / args[0], int(args[1])
            filler = "# " + "x" * 76 + "\n"
            with target.open("a", encoding="utf-8") as fh:
                fh.write(filler * ((size - target.stat().st_size) // len(filler) + 1))
        elif verb == "variant":
            variants.append(args[0])
        elif verb == "rules-dir":
            rules_dir = Path(args[0])
        else:
            assert verb == "empty-rules", f"{setup}: unknown step {verb!r}"
    return Case(case_dir.name, rules_dir, tuple(variants), expects)


CASE_DIRS = sorted(p for p in CASES.iterdir() if p.is_dir())


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> set[tuple[str, str, object]]:
    """What the unmodified rules report (warnings only, one hopes): never held against a case."""
    project = tmp_path_factory.mktemp("baseline")
    shutil.copytree(RULES, project / "rules")
    old = Path.cwd()
    os.chdir(project)
    try:
        result = compile_rules(Path("rules"))
    finally:
        os.chdir(old)
    assert result.ok, "the real rules do not compile:\n" + render_text(result.diagnostics)
    return {(d.code, d.message, d.span) for d in result.diagnostics}


def run_case(case_dir: Path, project: Path, baseline: set[tuple[str, str, object]]
             ) -> tuple[Case, list[Diagnostic]]:
    """Prepare and compile one case; assert its expectations. Returns what was reported."""
    case = prepare(case_dir, project)
    assert case.expects, f"case {case.name} expects nothing"
    result = compile_rules(case.rules_dir, case.variants)
    reported = result.diagnostics
    shown = render_text(reported)
    assert all(d.code in codes.CODES for d in reported), f"unregistered code:\n{shown}"
    missing = [e for e in case.expects if not any(e.matches(d) for d in reported)]
    assert not missing, (
        f"case {case.name}: expected but not reported:\n"
        + "\n".join(f"  {e.origin}: {e.code} {e.words or ''}" for e in missing)
        + f"\nreported:\n{shown}"
    )
    extra = [d for d in reported
             if not any(e.matches(d) for e in case.expects)
             and (d.code, d.message, d.span) not in baseline]
    assert not extra, f"case {case.name}: unexpected diagnostics:\n{render_text(extra)}"
    assert not result.ok and not result.files, f"case {case.name}: the build did not fail"
    return case, reported


@pytest.mark.sampled(24)
@pytest.mark.parametrize("case_dir", CASE_DIRS, ids=[p.name for p in CASE_DIRS])
def test_invalid_case(case_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                      baseline: set[tuple[str, str, object]]) -> None:
    monkeypatch.chdir(tmp_path)
    run_case(case_dir, tmp_path, baseline)


def test_marker_syntax_is_read() -> None:
    """The marker reader itself: columns, words, several markers on one line."""
    line = "x: 1  # E@3: duplicate-key: first defined  # E: yaml-tag"
    found = [(m["col"], m["code"], m["words"]) for m in MARKER.finditer(line)]
    assert found == [("3", "duplicate-key", "first defined"), (None, "yaml-tag", None)]


def test_a_wrong_expectation_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                   baseline: set[tuple[str, str, object]]) -> None:
    """The harness is not a rubber stamp: a marker on the wrong line makes the case fail."""
    case_dir = tmp_path / "case"
    case_dir.mkdir()
    (case_dir / "broken.yaml").write_text("kind: variant  # E: duplicate-key\nkind: variant\n")
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    with pytest.raises(AssertionError, match="expected but not reported"):
        run_case(case_dir, project, baseline)


# --- the codes only the emit and write stages produce --------------------------------------


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project with a copy of the real rules and a built output folder (built once)."""
    project = tmp_path_factory.mktemp("built")
    shutil.copytree(RULES, project / "rules")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(project)
        assert main(["build"]) == 0
    return project


def _build_project(built: Path, tmp_path: Path) -> Path:
    """A fresh copy of the built project in `tmp_path` (files keep their mtimes)."""
    shutil.copytree(built / "rules", tmp_path / "rules")
    shutil.copytree(built / "generated", tmp_path / "generated")
    return tmp_path / "generated"


def _snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    """Every file's bytes and mtime (ns) under `folder`."""
    return {p.relative_to(folder).as_posix(): (p.read_bytes(), p.stat().st_mtime_ns)
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_template_error(built: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                        capsys: pytest.CaptureFixture[str]) -> None:
    """A template that names a missing attribute: template-error, nothing written."""
    monkeypatch.chdir(tmp_path)
    out = _build_project(built, tmp_path)
    before = _snapshot(out)

    def broken_engine(compiled: object, lowered: object) -> dict[str, str]:
        template = jinja2.Environment(undefined=jinja2.StrictUndefined).from_string(
            "{{ view.cots }}")
        return {"lisboa_engine.py": template.render(view=compiled)}

    monkeypatch.setattr(emit, "emit_engine", broken_engine)
    capsys.readouterr()
    code = main(["build"])
    err = capsys.readouterr().err
    assert "error[template-error]: template failed" in err and "cots" in err
    assert code != 0 and "Traceback" not in err
    assert _snapshot(out) == before


def test_generated_invalid(built: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                           capsys: pytest.CaptureFixture[str]) -> None:
    """Generated Python that does not compile: generated-invalid at its line, nothing written."""
    monkeypatch.chdir(tmp_path)
    out = _build_project(built, tmp_path)
    before = _snapshot(out)
    monkeypatch.setattr(emit, "emit_engine",
                        lambda compiled, lowered: {
                            "lisboa_engine.py": "X = 1\ndef broken(:\n    pass\n"})
    capsys.readouterr()
    assert main(["build"]) == 2
    err = capsys.readouterr().err
    assert re.search(r"^generated/lisboa_engine\.py:2:\d+: error\[generated-invalid\]", err,
                     re.MULTILINE), err
    assert _snapshot(out) == before


def test_write_failed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                      capsys: pytest.CaptureFixture[str]) -> None:
    """The output path is a file, not a folder: write-failed, exit 2, the file untouched."""
    monkeypatch.chdir(tmp_path)
    shutil.copytree(RULES, tmp_path / "rules")
    (tmp_path / "out").write_text("not a folder\n")
    assert main(["build", "--out", "out"]) == 2
    err = capsys.readouterr().err
    assert "error[write-failed]: 'out' exists and is not a directory" in err
    assert (tmp_path / "out").read_text() == "not a folder\n"


def test_stray_output(built: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                      capsys: pytest.CaptureFixture[str]) -> None:
    """A file lisboa-rules did not write: a stray-output warning at it; it is kept."""
    monkeypatch.chdir(tmp_path)
    out = _build_project(built, tmp_path)
    (out / "notes.txt").write_text("mine\n")
    capsys.readouterr()
    assert main(["build"]) == 0
    err = capsys.readouterr().err
    assert re.search(r"^generated/notes\.txt:1:1: warning\[stray-output\]", err, re.MULTILINE), err
    assert (out / "notes.txt").read_text() == "mine\n"


def test_unsafe_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                       capsys: pytest.CaptureFixture[str]) -> None:
    """The output folder is the current directory: unsafe-output, exit 2, nothing written."""
    monkeypatch.chdir(tmp_path)
    shutil.copytree(RULES, tmp_path / "rules")
    assert main(["build", "--out", "."]) == 2
    err = capsys.readouterr().err
    assert "error[unsafe-output]: refusing to use '.' as the output folder" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rules"]


def _edit_court(out: Path) -> set[str]:
    court = out.parent / "rules" / "court.yaml"
    court.write_text(court.read_text().replace("per_official: 1", "per_official: 2"))
    return {"generated/lisboa_engine.py", "generated/reference/rules.md"}


def _delete_output(out: Path) -> set[str]:
    (out / "reference" / "player-aid.md").unlink()
    return {"generated/reference/player-aid.md"}


def _change_output(out: Path) -> set[str]:
    (out / "state.schema.json").write_text("{}\n")
    return {"generated/state.schema.json"}


@pytest.mark.parametrize("edit", [_edit_court, _delete_output, _change_output])
def test_stale_output(built: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                      capsys: pytest.CaptureFixture[str], edit: Callable[[Path], set[str]]) -> None:
    """`build --check --format json` lists each stale file as a stale-output error, exit 1."""
    import json

    monkeypatch.chdir(tmp_path)
    out = _build_project(built, tmp_path)
    expected = edit(out)
    capsys.readouterr()
    assert main(["build", "--check", "--no-cache", "--format", "json"]) == 1
    found = json.loads(capsys.readouterr().out)
    stale = {d["file"] for d in found if d["code"] == "stale-output"}
    assert expected <= stale, found
    assert all(d["severity"] == "error" and "run lisboa-rules build" in d["message"]
               for d in found if d["code"] == "stale-output")
    assert main(["build", "--no-cache"]) == 0  # and once rebuilt, nothing is listed
    capsys.readouterr()
    assert main(["build", "--check", "--no-cache", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == []


def test_engine_failed(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A rule the static checks accept whose games fail: engine-failed (the backstop's games,
    which only the CLI plays), at the rule; tests/cli/test_backstop.py has the rest."""
    house = tmp_path / "markers-from-nowhere.yaml"
    shutil.copy(ROOT / "tests" / "cases" / "backstop" / "markers-from-nowhere.yaml", house)
    monkeypatch.chdir(ROOT)
    code = main(["validate", "--house", str(house), "--variant", "markers-from-nowhere",
                 "--play", "1"])
    err = capsys.readouterr().err
    assert code == 1 and re.search(rf"{re.escape(str(house))}:\d+:\d+: "
                                   r"error\[engine-failed\]", err), err


STAGE_TESTS: dict[str, Callable[..., None]] = {
    "engine-failed": test_engine_failed,
    "stale-output": test_stale_output,
    "template-error": test_template_error,
    "generated-invalid": test_generated_invalid,
    "write-failed": test_write_failed,
    "stray-output": test_stray_output,
    "unsafe-output": test_unsafe_output,
}


def test_every_code_is_covered() -> None:
    """Every registered code is expected by a fixture or triggered by a stage test above."""
    expected: dict[str, list[str]] = {}
    for case_dir in CASE_DIRS:
        for path in sorted(case_dir.rglob("*")):
            if path.is_file() and path.name not in NOT_RULES:
                for e in markers(path, path.name):
                    expected.setdefault(e.code, []).append(case_dir.name)
        if (case_dir / "expected.txt").exists():
            for e in expected_txt(case_dir / "expected.txt"):
                expected.setdefault(e.code, []).append(case_dir.name)
    unknown = sorted(set(expected) - set(codes.CODES))
    assert not unknown, f"fixtures expect codes that are not registered: {unknown}"
    uncovered = sorted(set(codes.CODES) - set(expected) - set(STAGE_TESTS))
    assert not uncovered, f"codes without a failing fixture: {uncovered}"
    assert set(STAGE_TESTS) <= set(codes.CODES)


# --- issue 2 acceptance: four problems in four files, one run -------------------------------


@dataclass(frozen=True)
class Edit:
    """Replace the first `old` in a real rules file by `new`; expect `code` at `marker`'s spot."""

    file: str
    old: str
    new: str
    code: str
    marker: str  # text of `new` where the diagnostic must point (its first character)
    line_offset: int = 0  # the diagnostic is this many lines below the edit's first line


EDITS = (
    # a duplicated key: the second `periods` is reported, a note points at the first
    Edit("game.yaml", "\nperiods: 2\n", "\nperiods: 2\nperiods: 3\n", "duplicate-key",
         "periods: 3"),
    # a string where a number belongs
    Edit("court.yaml", "per_official: 1}", 'per_official: "1"}', "schema-type", '"1"'),
    # a misspelt key
    Edit("scoring.yaml", "    short:", "    shrot:", "schema-unknown-key", "shrot"),
    # a YAML syntax error: a second ':' in a plain value
    Edit("nobles.yaml", "name: Manuel da Maia", "name: Manuel: da Maia", "yaml-syntax",
         ": da Maia"),
)


def _apply_edits(rules: Path) -> list[tuple[str, int, int, str]]:
    """Make the four edits; return the expected (file, line, col, code) of each."""
    found = []
    for e in EDITS:
        path = rules / e.file
        text = path.read_text(encoding="utf-8")
        at = text.find(e.old)
        assert at >= 0, f"rules/{e.file} no longer contains {e.old!r}; update EDITS"
        text = text[:at] + e.new + text[at + len(e.old):]
        path.write_text(text, encoding="utf-8")
        spot = text.index(e.marker, at)
        line = text.count("\n", 0, spot) + 1
        col = spot - (text.rfind("\n", 0, spot) + 1) + 1
        found.append((f"rules/{e.file}", line, col, e.code))
    return found


def test_issue2_four_problems_in_one_run(tmp_path: Path) -> None:
    """A copy of rules/ with a duplicated key, a string for a number, a misspelt key and a
    YAML syntax error, each in another file: exactly one located diagnostic per problem, in
    one run, exit 1, no traceback, and the existing output folder left exactly as it was."""
    shutil.copytree(RULES, tmp_path / "rules")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("LISBOA_RULES_DEBUG", None)
    run = [sys.executable, "-m", "lisboa_rules", "build"]
    first = subprocess.run(run, cwd=tmp_path, env=env, capture_output=True, text=True, check=False)
    assert first.returncode == 0, first.stderr
    out = tmp_path / "generated"
    (out / "notes.txt").write_text("a file of mine\n")
    before = _snapshot(out)
    wanted = _apply_edits(tmp_path / "rules")

    proc = subprocess.run(run, cwd=tmp_path, env=env, capture_output=True, text=True,
                          check=False)
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    errors = re.findall(r"^(\S+?):(\d+):(\d+): error\[([a-z0-9-]+)\]", proc.stderr, re.MULTILINE)
    got = sorted((f, int(line), int(col), code) for f, line, col, code in errors)
    assert got == sorted(wanted), proc.stderr
    unlocated = [ln for ln in proc.stderr.splitlines() if ln.startswith("lisboa-rules: error")]
    assert not unlocated, proc.stderr
    assert proc.stderr.rstrip().endswith("found 4 errors"), proc.stderr
    assert _snapshot(out) == before
