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

from lisboa_rules import pipeline
from lisboa_rules.cli.main import main
from lisboa_rules.core.diagnostics import Diagnostic
from lisboa_rules.core.source import Span
from lisboa_rules.outputs import cache, stamp, writer
from lisboa_rules.pipeline import CompileResult

ROOT = Path(__file__).resolve().parents[2]


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
    argv = [sys.executable, "-m", "lisboa_rules", "build", "--out"]

    def build(out: str) -> None:
        for entry in (project / "cache").glob("*.build.json"):  # force the pipeline to run
            entry.unlink()
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


# --- found by review: each of these gave another answer than --no-cache -------------------------


def test_variant_lists_that_join_alike_have_different_keys(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rules = project / "rules"
    keys = {
        stamp.build_key(rules, v)
        for v in [(), ("",), ("queen", "two-player"), ("queen two-player",), ("a\nb",), ("a", "b")]
    }
    assert len(keys) == 6
    assert main(["build", "--out", "gen"]) == 0
    capsys.readouterr()
    assert main(["build", "--check", "--out", "gen", "--variant", ""]) == 1
    assert "unknown-variant" in capsys.readouterr().err
    assert main(["build", "--variant", "queen two-player", "--out", "other"]) == 1


def test_file_names_cannot_imitate_the_next_file_in_the_key() -> None:
    a = stamp.key_of((), [("a.yaml", "0" * 64), ("b.yaml", "1" * 64)])
    b = stamp.key_of((), [(f"a.yaml {'0' * 64}\nfile b.yaml", "1" * 64)])
    assert a != b


def test_a_file_saved_during_the_build_is_cached_under_what_was_read(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The key is computed before the loader reads the files; an editor saving in between must
    not file the new outputs under the old content's key."""
    court = project / "rules" / "court.yaml"
    before = court.read_text(encoding="utf-8")
    real = pipeline.compile_rules

    def saved_meanwhile(rules_dir: Path, variants: Sequence[str] = ()) -> CompileResult:
        court.write_text(before.replace("per_official: 1}", "per_official: 2}", 1))
        return real(rules_dir, variants)

    assert "per_official: 1}" in before
    monkeypatch.setattr(pipeline, "compile_rules", saved_meanwhile)
    assert main(["build", "--out", "gen"]) == 0
    monkeypatch.setattr(pipeline, "compile_rules", real)
    court.write_text(before, encoding="utf-8")  # back to the content the key was made from
    capsys.readouterr()
    assert main(["build", "--check", "--out", "gen"]) == 1  # as --no-cache says
    assert main(["build", "--check", "--no-cache", "--out", "gen"]) == 1


def test_a_fifo_among_the_rules_does_not_hang_the_key(project: Path) -> None:
    os.mkfifo(project / "rules" / "zz-pipe.yaml")
    env = {**os.environ, cache.ENV: str(project / "cache"), "PYTHONPATH": str(ROOT)}
    for extra in ([], ["--no-cache"]):
        done = subprocess.run([sys.executable, "-m", "lisboa_rules", "build", "--check", *extra],
                              cwd=project, env=env, capture_output=True, text=True, timeout=60,
                              check=False)
        assert done.returncode == 1 and "unreadable-file" in done.stderr, done.stderr


@pytest.mark.parametrize("edit", ["reversed", "blank line", "twice", "unsafe line", "comment"])
def test_a_manifest_a_build_would_rewrite_is_not_up_to_date(
    project: Path, edit: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["build", "--out", "gen"]) == 0
    manifest = project / "gen" / writer.MANIFEST
    lines = manifest.read_text().splitlines(keepends=True)
    head = [ln for ln in lines if ln.startswith("#")]
    body = [ln for ln in lines if not ln.startswith("#")]
    changed = {
        "reversed": head + body[::-1],
        "blank line": [*lines, "\n"],
        "twice": [*lines, body[0]],
        "unsafe line": [*lines, "../evil\n"],
        "comment": [*lines, "# hi\n"],
    }[edit]
    manifest.write_text("".join(changed))
    no_cache = main(["build", "--check", "--no-cache", "--out", "gen"])
    assert main(["build", "--check", "--out", "gen"]) == no_cache
    assert main(["build", "--out", "gen"]) == 0
    assert manifest.read_text() == "".join(lines), "a build restores the manifest"


def test_an_outputs_stamp_copied_under_another_key_is_not_believed(tmp_path: Path) -> None:
    k1, k2 = "1" * 64, "2" * 64
    cache.store(tmp_path, k1, {"a": "1"}, "a" * 64)
    cache.store(tmp_path, k2, {"a": "2"}, "b" * 64)
    assert cache.outputs_stamp(tmp_path, k1) == "a" * 64
    (tmp_path / f"{k1}.outputs").write_bytes((tmp_path / f"{k2}.outputs").read_bytes())
    assert cache.outputs_stamp(tmp_path, k1) is None


def test_no_cache_writes_no_cache_at_all_and_template_files_name_the_compiler(
    project: Path,
) -> None:
    env = {**os.environ, cache.ENV: str(project / "cache"), "PYTHONPATH": str(ROOT)}
    argv = [sys.executable, "-m", "lisboa_rules", "build", "--out", "gen"]
    done = subprocess.run([*argv, "--no-cache"], cwd=project, env=env, capture_output=True,
                          text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert not (project / "cache").exists()
    done = subprocess.run(argv, cwd=project, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    names = [p.name for p in (project / "cache" / "templates").iterdir()]
    fingerprint = stamp.compiler_fingerprint()[:20]
    assert names and all(n.endswith(f".{fingerprint}.cache") for n in names)
    assert {n.split(".")[-3] for n in names} == {"code", "doc"}
