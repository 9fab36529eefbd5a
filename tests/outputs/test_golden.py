"""generated/ is the golden record: a fresh build of rules/ must reproduce it byte for byte.

Also: `build --check` passes on the real tree and names the stale files after a rules edit, and
builds are deterministic whatever PYTHONHASHSEED or the order in which files are found.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lisboa_rules.cli.main import main
from lisboa_rules.core.diagnostics import render_text
from lisboa_rules.front.loader import discover
from lisboa_rules.outputs import writer
from lisboa_rules.pipeline import compile_rules

ROOT = Path(__file__).resolve().parents[2]


def _tree(folder: Path) -> dict[str, bytes]:
    """Every file under `folder` by relative POSIX path."""
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()
            # Tools' caches (a test importing the engine, a linter run) are not outputs.
            and "__pycache__" not in p.parts and not any(
                part.startswith(".") and part != ".manifest"
                for part in p.relative_to(folder).parts)}


def test_generated_is_a_fresh_build(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every output equals the committed file; nothing is missing, nothing is left over."""
    monkeypatch.chdir(ROOT)  # the headers name the sources relative to the working directory
    result = compile_rules(Path("rules"))
    assert result.ok, render_text(result.diagnostics)
    checked = writer.write_outputs(Path("generated"), result.files, check=True)
    assert checked.ok, render_text(checked.diagnostics)
    assert not checked.stale, (
        "generated/ differs from a fresh build of rules/ (run `lisboa-rules build`):\n"
        + "\n".join(checked.messages()))
    on_disk = _tree(ROOT / "generated")
    on_disk.pop(writer.MANIFEST, None)
    assert {k: v.decode("utf-8") for k, v in on_disk.items()} == result.files


def test_build_check_passes_on_the_real_tree(monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(ROOT)
    assert main(["build", "--check"]) == 0, capsys.readouterr().err
    assert "generated/ is up to date" in capsys.readouterr().err


def test_build_check_names_stale_files_after_an_edit(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Edit one number (the starting réis): --check exits 1, names each stale file, writes
    nothing; a real build then rewrites exactly the files it named."""
    monkeypatch.chdir(tmp_path)
    shutil.copytree(ROOT / "rules", tmp_path / "rules")
    assert main(["build"]) == 0
    before = _tree(tmp_path / "generated")
    game = tmp_path / "rules" / "game.yaml"
    text, n = re.subn(r"(?m)^(  reis: )(\d+)$", lambda m: f"{m[1]}{int(m[2]) + 1}",
                      game.read_text(encoding="utf-8"))
    assert n == 1, "rules/game.yaml no longer has `  reis: N` under start:"
    game.write_text(text, encoding="utf-8")
    capsys.readouterr()

    assert main(["build", "--check"]) == 1
    err = capsys.readouterr().err
    named = re.findall(r"^would \w+ (\S+)$", err, re.MULTILINE)
    assert "generated/lisboa_engine.py" in named, err
    assert any(n.startswith("generated/reference/") for n in named), err
    assert re.search(rf"^lisboa-rules: {len(named)} output files? out of date", err,
                     re.MULTILINE), err
    assert _tree(tmp_path / "generated") == before  # --check writes nothing
    # the named files are exactly the ones a real build then rewrites
    assert main(["build"]) == 0
    after = _tree(tmp_path / "generated")
    changed = sorted(f"generated/{k}" for k in after if before.get(k) != after[k])
    # The manifest lists the same files, so it is not rewritten.
    assert "generated/.manifest" not in changed
    assert sorted(named) == changed


def _build_in_subprocess(cwd: Path, out: str, seed: str) -> None:
    env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-m", "lisboa_rules", "build", "--out", out],
                          cwd=cwd, env=env, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr


def test_builds_are_identical_whatever_the_hash_seed(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "rules", tmp_path / "rules")
    _build_in_subprocess(tmp_path, "out-a", "0")
    _build_in_subprocess(tmp_path, "out-b", "4242")
    a, b = _tree(tmp_path / "out-a"), _tree(tmp_path / "out-b")
    assert a.keys() == b.keys()
    assert [k for k in a if a[k] != b[k]] == []


def test_builds_are_identical_whatever_the_discovery_order(monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    monkeypatch.chdir(ROOT)
    rules = Path("rules")
    files = [p.relative_to(rules) for p in discover(rules)]
    forward = compile_rules(rules, order=files)
    backward = compile_rules(rules, order=list(reversed(files)))
    assert forward.ok and backward.ok
    assert forward.files == backward.files
