"""Generated output is deterministic to the byte: whatever PYTHONHASHSEED (and locale and time
zone), whatever order the rules files are found in, and wherever the checkout lives.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from lisboa_rules import pipeline
from lisboa_rules.cli.main import main
from lisboa_rules.front.loader import discover, load_dir

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "rules"


def tree(root: Path) -> dict[str, bytes]:
    """Every file under `root` by relative POSIX path."""
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file()}


def differing(a: dict[str, bytes], b: dict[str, bytes]) -> list[str]:
    return sorted(k for k in {*a, *b} if a.get(k) != b.get(k))


@pytest.fixture(scope="module")
def reference_files() -> dict[str, str]:
    """The outputs of one in-process build of rules/."""
    result = pipeline.compile_rules(RULES)
    assert result.ok, result.diagnostics
    return result.files


def subprocess_build(cwd: Path, out: str, env: dict[str, str]) -> None:
    full = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), *sys.path]), **env}
    full.pop("LISBOA_RULES_DEBUG", None)
    proc = subprocess.run(
        [sys.executable, "-m", "lisboa_rules", "build", "--rules", "rules", "--out", out],
        cwd=cwd, env=full, capture_output=True, text=True, check=False,
    )
    assert proc.returncode == 0, proc.stderr


def test_identical_bytes_across_hash_seeds_locales_and_time_zones(
    tmp_path: Path, reference_files: dict[str, str]
) -> None:
    shutil.copytree(RULES, tmp_path / "rules")
    envs = {
        "a": {"PYTHONHASHSEED": "0", "LC_ALL": "C.UTF-8", "TZ": "UTC"},
        "b": {"PYTHONHASHSEED": "1", "LC_ALL": "C", "TZ": "Asia/Kathmandu"},
        "c": {"PYTHONHASHSEED": "4242424242", "LANG": "pt_PT.UTF-8", "TZ": "America/St_Johns",
              "PYTHONIOENCODING": "latin-1"},
    }
    trees = {}
    for name, env in envs.items():
        subprocess_build(tmp_path, f"out-{name}", env)
        trees[name] = tree(tmp_path / f"out-{name}")
    expected = {rel: text.encode("utf-8") for rel, text in reference_files.items()}
    for name, files in trees.items():
        files.pop(".manifest")
        assert differing(files, expected) == [], f"build {name} ({envs[name]}) differs"


def test_reversed_and_shuffled_discovery_order_give_identical_bytes(
    reference_files: dict[str, str],
) -> None:
    found = [p.relative_to(RULES) for p in discover(RULES)]
    assert len(found) >= 8
    orders = [list(reversed(found))]
    for seed in (1, 2):
        shuffled = list(found)
        random.Random(seed).shuffle(shuffled)
        orders.append(shuffled)
    for order in orders:
        result = pipeline.compile_rules(RULES, order=order)
        assert result.ok, result.diagnostics
        assert list(result.files) == list(reference_files)
        assert differing(
            {k: v.encode() for k, v in result.files.items()},
            {k: v.encode() for k, v in reference_files.items()},
        ) == [], f"order {[str(p) for p in order]}"


def test_load_dir_keeps_the_given_order_and_the_same_documents() -> None:
    found = [p.relative_to(RULES) for p in discover(RULES)]
    forward, d1 = load_dir(RULES)
    backward, d2 = load_dir(RULES, order=list(reversed(found)))
    assert d1 == d2 == []
    assert [d.source for d in backward] == [p.as_posix() for p in reversed(found)]
    assert sorted((d.source, d.digest, repr(d.data)) for d in forward) == \
        sorted((d.source, d.digest, repr(d.data)) for d in backward)


def test_discovery_is_sorted_whatever_the_file_system_returns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """os.walk returns entries in directory order; discover() sorts them itself."""
    shutil.copytree(RULES, tmp_path / "rules")
    real_walk = os.walk

    def reversed_walk(top: Path) -> Iterator[tuple[str, list[str], list[str]]]:
        for root, dirs, names in real_walk(top):
            dirs.reverse()
            yield root, dirs, list(reversed(names))

    expected = discover(tmp_path / "rules")
    monkeypatch.setattr(os, "walk", reversed_walk)
    assert discover(tmp_path / "rules") == expected


@pytest.mark.parametrize(
    "where", [("checkout-a",), ("nested-dir", "checkout with space", "ünïcödé")]
)
def test_checkout_path_does_not_matter(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reference_files: dict[str, str],
    where: tuple[str, ...],
) -> None:
    """Two checkouts in different places, each built from its own root, give identical bytes
    (the same as the main checkout's), with no trace of where they were."""
    checkout = tmp_path.joinpath(*where)
    shutil.copytree(RULES, checkout / "rules")
    monkeypatch.chdir(checkout)
    monkeypatch.delenv("LISBOA_RULES_DEBUG", raising=False)
    assert main(["build"]) == 0  # the defaults: rules/ -> generated/
    files = tree(checkout / "generated")
    files.pop(".manifest")
    assert differing(files, {k: v.encode() for k, v in reference_files.items()}) == []
    for rel, data in files.items():
        text = data.decode("utf-8")
        for part in (str(tmp_path), tmp_path.name, *where):
            assert part not in text, f"{rel} names the checkout path ({part!r})"


def test_working_directory_does_not_matter(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reference_files: dict[str, str]
) -> None:
    """`lisboa-rules build --rules /abs/rules --out /abs/out` from anywhere gives the same bytes."""
    shutil.copytree(RULES, tmp_path / "checkout" / "rules")
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    monkeypatch.delenv("LISBOA_RULES_DEBUG", raising=False)
    rules, out = tmp_path / "checkout" / "rules", tmp_path / "checkout" / "out"
    assert main(["build", "--rules", str(rules), "--out", str(out)]) == 0
    files = tree(out)
    files.pop(".manifest")
    assert differing(files, {k: v.encode() for k, v in reference_files.items()}) == []


def test_a_second_build_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copytree(RULES, tmp_path / "rules")
    monkeypatch.chdir(tmp_path)
    assert main(["build"]) == 0
    stamps = {p: p.stat().st_mtime_ns for p in (tmp_path / "generated").rglob("*")}
    assert main(["build"]) == 0
    assert {p: p.stat().st_mtime_ns for p in (tmp_path / "generated").rglob("*")} == stamps
