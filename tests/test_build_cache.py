"""The build key, the build cache and the up-to-date stamp (stamp.py, cache.py, writer.py).

They may only ever skip work: every test here checks that a build served from them is the
same, byte for byte, as one that ran the pipeline, and that anything the key covers (rules,
variants, the compiler, library versions) or any change to the output folder sends the build
back through the pipeline.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import jinja2.bccache
import pytest

from lisboa_rules import cache, pipeline, stamp, writer
from lisboa_rules.cli import main
from lisboa_rules.diagnostics import Diagnostic
from lisboa_rules.pipeline import CompileResult
from lisboa_rules.source import Span

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of rules/ in an empty folder (the CWD), with a cache folder of its own."""
    shutil.copytree(ROOT / "rules", tmp_path / "rules")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(cache.ENV, str(tmp_path / "cache"))
    return tmp_path


def count_pipeline_runs(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, ...]]:
    """Wrap the real compile_rules and record every call."""
    calls: list[tuple[str, ...]] = []
    real = pipeline.compile_rules

    def counting(rules_dir: Path, variants: Sequence[str] = (), order: None = None
                 ) -> CompileResult:
        calls.append(tuple(variants))
        return real(rules_dir, variants)

    monkeypatch.setattr(pipeline, "compile_rules", counting)
    return calls


def tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_a_cached_build_writes_the_same_bytes_without_running_the_pipeline(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    calls = count_pipeline_runs(monkeypatch)
    assert main(["build", "--out", "first"]) == 0
    assert calls == [()]
    assert main(["build", "--out", "second"]) == 0
    assert calls == [()], "the second build came from the cache"
    assert tree(project / "first") == tree(project / "second")
    # ... and both equal the committed golden record, manifest included.
    assert tree(project / "second") == tree(ROOT / "generated")
    assert capsys.readouterr().err.count("wrote 17, removed 0") == 2


def test_an_up_to_date_folder_is_recognised_without_the_pipeline(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["build", "--out", "gen"]) == 0
    calls = count_pipeline_runs(monkeypatch)
    loaded = count_cache_loads(monkeypatch)
    capsys.readouterr()
    assert main(["build", "--check", "--out", "gen"]) == 0
    assert main(["build", "--out", "gen"]) == 0
    assert calls == [] and loaded == [], "the stamp alone decided"
    assert capsys.readouterr().err.count("gen/ is up to date") == 2


def count_cache_loads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    real = cache.load

    def counting(root: Path | None, key: str) -> dict[str, str] | None:
        calls.append(key)
        return real(root, key)

    monkeypatch.setattr(cache, "load", counting)
    return calls


@pytest.mark.parametrize("damage", ["same-size", "deleted", "stray", "manifest"])
def test_check_still_sees_every_change_to_the_output_folder(
    project: Path, damage: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["build", "--out", "gen"]) == 0
    target = project / "gen" / "reference" / "rules.md"
    if damage == "same-size":
        data = bytearray(target.read_bytes())
        data[-2] = ord("X") if data[-2] != ord("X") else ord("Y")
        target.write_bytes(bytes(data))
    elif damage == "deleted":
        target.unlink()
    elif damage == "stray":
        (project / "gen" / "notes.txt").write_text("mine\n")
    else:
        manifest = project / "gen" / writer.MANIFEST
        manifest.write_text(manifest.read_text().replace("reference/rules.md\n", ""))
    capsys.readouterr()
    code = main(["build", "--check", "--out", "gen"])
    err = capsys.readouterr().err
    if damage == "stray":  # a warning, not staleness: reported, and the check passes
        assert code == 0 and "notes.txt" in err and "stray-output" in err
    else:
        assert code == 1 and "out of date" in err


def test_editing_a_rule_value_runs_the_pipeline_and_changes_the_outputs(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert main(["build", "--out", "gen"]) == 0
    before = tree(project / "gen")
    calls = count_pipeline_runs(monkeypatch)
    scoring = project / "rules" / "scoring.yaml"
    edit(scoring, "table: [15, 10, 5]", "table: [16, 10, 5]")
    assert main(["build", "--check", "--out", "gen"]) == 1
    assert main(["build", "--out", "gen"]) == 0
    assert len(calls) == 1, "the check ran the pipeline; the build reused its outputs"
    after = tree(project / "gen")
    assert after != before and after["lisboa_engine.py"] != before["lisboa_engine.py"]
    # Going back to the old value is a cache hit again, and gives the old bytes.
    edit(scoring, "table: [16, 10, 5]", "table: [15, 10, 5]")
    assert main(["build", "--out", "gen"]) == 0
    assert len(calls) == 1
    assert tree(project / "gen") == before


def test_the_key_covers_rules_variants_compiler_and_libraries(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rules = project / "rules"
    key = stamp.build_key(rules)
    assert key is not None and key == stamp.build_key(rules)
    assert stamp.build_key(rules, ("queen",)) != key
    (rules / "variants" / "house.yaml").write_text("kind: variant\n")
    assert stamp.build_key(rules) != key  # a new rules file
    (rules / "variants" / "house.yaml").unlink()
    (rules / "notes.txt").write_text("not a rules file\n")
    assert stamp.build_key(rules) == key  # the loader does not read it either
    (rules / "variants").rename(rules / "other")
    assert stamp.build_key(rules) != key  # same bytes, another path
    (rules / "other").rename(rules / "variants")
    stamp.compiler_fingerprint.cache_clear()
    try:
        versions = stamp.library_versions()
        monkeypatch.setattr(stamp, "library_versions", lambda: {**versions, "jinja2": "99"})
        assert stamp.build_key(rules) != key
        monkeypatch.setattr(stamp, "library_versions", lambda: versions)
        stamp.compiler_fingerprint.cache_clear()
        assert stamp.build_key(rules) == key
    finally:
        stamp.compiler_fingerprint.cache_clear()


def test_the_compiler_fingerprint_reads_every_code_template_and_schema_file() -> None:
    package = ROOT / "lisboa_rules"
    seen = {p.relative_to(package).as_posix() for p in stamp._package_files(package)}
    for suffix in ("*.py", "*.jinja", "*.json"):
        for p in package.rglob(suffix):
            if "__pycache__" not in p.parts:
                assert p.relative_to(package).as_posix() in seen
    assert any(s.endswith(".jinja") for s in seen) and any(s.endswith(".json") for s in seen)


def test_a_damaged_cache_entry_is_ignored(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert main(["build", "--out", "first"]) == 0
    entries = list((project / "cache").glob("*.build.json"))
    assert len(entries) == 1
    raw = json.loads(entries[0].read_text())
    raw["files"]["lisboa_engine.py"] = "raise SystemExit('poisoned')\n"
    entries[0].write_text(json.dumps(raw))
    calls = count_pipeline_runs(monkeypatch)
    assert main(["build", "--out", "second"]) == 0
    assert calls == [()]
    assert tree(project / "second") == tree(project / "first")


def test_no_cache_runs_the_pipeline_and_a_broken_cache_folder_is_harmless(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = count_pipeline_runs(monkeypatch)
    assert main(["build", "--out", "a"]) == 0
    assert main(["build", "--no-cache", "--out", "b"]) == 0
    assert main(["build", "--no-cache", "--check", "--out", "b"]) == 0
    assert len(calls) == 3
    monkeypatch.setenv(cache.ENV, str(project / "a" / "lisboa_engine.py"))  # a file, not a dir
    assert main(["build", "--out", "c"]) == 0
    assert tree(project / "c") == tree(project / "a") == tree(project / "b")
    monkeypatch.setenv(cache.ENV, "off")
    assert cache.cache_dir() is None


WARNING = Diagnostic("unused-value", "value 'bonus' is never used", Span.point("rules/a.yaml", 2))


def test_a_build_with_warnings_is_not_cached(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    calls: list[int] = []

    def compile_rules(rules_dir: Path, variants: Sequence[str] = ()) -> CompileResult:
        calls.append(1)
        return CompileResult({"x.md": "x\n"}, [WARNING])

    monkeypatch.setattr(pipeline, "compile_rules", compile_rules)
    for _ in range(2):
        assert main(["build", "--out", "gen"]) == 0
        assert "unused-value" in capsys.readouterr().err  # every run shows the warning
    assert len(calls) == 2
    assert not list((project / "cache").glob("*.build.json"))


def test_only_the_newest_entries_are_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cache, "MAX_ENTRIES", 2)
    for i in range(4):
        cache.store(tmp_path, f"{i:064x}", {"a": str(i)}, "0" * 64)
    kept = sorted(p.name for p in tmp_path.iterdir())
    assert kept == [f"{i:064x}{suffix}" for i in (2, 3) for suffix in (".build.json", ".outputs")]
    assert cache.load(tmp_path, f"{3:064x}") == {"a": "3"}
    assert cache.load(tmp_path, f"{0:064x}") is None


def test_damaged_template_bytecode_only_costs_a_recompile(project: Path) -> None:
    """Jinja's compiled templates live in the cache folder too; garbage there is ignored."""
    env = {**os.environ, cache.ENV: str(project / "cache"), "PYTHONPATH": str(ROOT)}
    argv = [sys.executable, "-m", "lisboa_rules", "build", "--no-cache", "--out"]

    def build(out: str) -> None:
        done = subprocess.run([*argv, out], cwd=project, env=env, capture_output=True,
                              text=True, check=False)
        assert done.returncode == 0, done.stderr

    build("first")
    compiled = list((project / "cache" / "templates").iterdir())
    assert compiled, "the templates were not cached"
    # Jinja's own checks catch a wrong magic number; a right one followed by garbage makes
    # its unpickling raise, which must not reach the build.
    magic = jinja2.bccache.bc_magic
    for i, p in enumerate(compiled):
        p.write_bytes([b"", b"j2 garbage", magic + b"\x80\x04garbage", magic][i % 4])
    build("second")
    assert tree(project / "second") == tree(project / "first")
