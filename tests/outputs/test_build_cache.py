"""Nothing vouches for an output folder but the pipeline (issue 11, item 3).

`build --check` runs the whole pipeline in this process and compares real bytes: no cache
entry, stamp or manifest line can make it certify outputs it did not compute, and no entry of
an earlier version's outputs cache is ever read. The private cache folder holds Jinja's
compiled templates (cache.py, emit/env.py) and the results of the passes a plain `build`
reuses (reuse.py; tests/outputs/test_reuse.py), read only from a private folder (the user's
own, mode 0700, not a symlink); damaged files there (a FIFO, a symlink to /dev/zero, garbage)
cost a recompile, never a hang, a crash or an output.

Each test runs with a cache folder of its own (the rest of the suite runs with the cache off).
Tests that need the compiled-template cache run the build in a subprocess: the Jinja
environments are made once per process.
"""

from __future__ import annotations

import hashlib
import json
import marshal
import os
import pickle
import shutil
import socket
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import jinja2
import jinja2.bccache
import pytest

from lisboa_rules.cli.main import main
from lisboa_rules.outputs import cache, reuse, writer

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "generated"
OUTPUTS = sorted(p.relative_to(GOLDEN).as_posix() for p in GOLDEN.rglob("*") if p.is_file())
POISON = "raise SystemExit('planted')\n"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of rules/ in an empty folder (the CWD), with a cache folder of its own."""
    shutil.copytree(ROOT / "rules", tmp_path / "rules")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(cache.ENV, str(tmp_path / "cache"))
    return tmp_path


def tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def run_build(project: Path, *args: str, cache_dir: Path | None = None, timeout: float = 120
              ) -> subprocess.CompletedProcess[str]:
    """`lisboa-rules build ARGS` in a fresh process (compiled templates are read at start)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT),
           cache.ENV: str(cache_dir if cache_dir is not None else project / "cache")}
    return subprocess.run([sys.executable, "-m", "lisboa_rules", "build", *args], cwd=project,
                          env=env, capture_output=True, text=True, timeout=timeout, check=False)


def old_outputs_hash(files: dict[str, bytes]) -> str:
    """The hash an earlier version wrote into the manifest and its cache's `.outputs` stamps."""
    h = hashlib.sha256()
    for rel in sorted(files):
        h.update(f"{rel} {len(files[rel])}\n".encode())
        h.update(files[rel])
    return h.hexdigest()


def plant_cache(cache_dir: Path, files: dict[str, str], outputs_hash: str) -> None:
    """Plant build-cache entries the way an earlier version filed them: under every name an
    earlier build left in the folder, and under a made-up key, each with a valid checksum and
    an outputs stamp."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    keys = {p.name.removesuffix(".build.json") for p in cache_dir.glob("*.build.json")}
    keys.add("0" * 64)
    digest = hashlib.sha256(json.dumps(files, sort_keys=True).encode("utf-8")).hexdigest()
    for key in keys:
        entry = {"format": 2, "key": key, "sha256": digest, "files": files}
        (cache_dir / f"{key}.build.json").write_text(json.dumps(entry), encoding="utf-8")
        (cache_dir / f"{key}.outputs").write_text(f"{key} {outputs_hash}\n", encoding="ascii")


# --- the outputs are always computed ------------------------------------------------------


@pytest.mark.sampled(3)
@pytest.mark.parametrize("poisoned", ["lisboa_engine.py", "reference/rules.html",
                                      "state.schema.json"])
@pytest.mark.parametrize("into", ["empty", "stale"])
def test_a_planted_cache_entry_is_never_written(
    project: Path, poisoned: str, into: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["build", "--out", "first"]) == 0  # (an earlier version cached it here)
    golden = tree(project / "first")
    files = {rel: data.decode("utf-8") for rel, data in golden.items() if rel != writer.MANIFEST}
    files[poisoned] = POISON
    plant_cache(project / "cache", files, "0" * 64)
    out = project / "second"
    if into == "stale":
        shutil.copytree(project / "first", out)
        (out / "reference" / "rules.md").write_text("old\n", encoding="utf-8")
    assert main(["build", "--out", "second"]) == 0
    assert tree(out) == golden == tree(GOLDEN)
    capsys.readouterr()
    assert main(["build", "--check", "--out", "second"]) == 0


@pytest.mark.parametrize("poisoned", ["lisboa_engine.py", "reference/player-aid.md",
                                      "schema/game.schema.json"])
def test_a_planted_cache_entry_and_stamp_never_certify_a_tampered_folder(
    project: Path, poisoned: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The folder, its manifest's hash line and the cache's stamp all agree with each other,
    and not with the rules: --check says so."""
    assert main(["build", "--out", "gen"]) == 0
    out = project / "gen"
    (out / poisoned).write_text(POISON, encoding="utf-8")
    tampered = {rel: data for rel, data in tree(out).items() if rel != writer.MANIFEST}
    fake = old_outputs_hash(tampered)
    manifest = out / writer.MANIFEST
    lines = manifest.read_text(encoding="utf-8").splitlines(keepends=True)
    head = [ln for ln in lines if ln.startswith("#") and "outputs-sha256" not in ln]
    body = [ln for ln in lines if not ln.startswith("#")]
    manifest.write_text("".join([*head, f"# outputs-sha256: {fake}\n", *body]), encoding="utf-8")
    plant_cache(project / "cache", {r: d.decode() for r, d in tampered.items()}, fake)
    capsys.readouterr()
    assert main(["build", "--check", "--out", "gen"]) == 1
    err = capsys.readouterr().err
    assert f"would regenerate gen/{poisoned}" in err and "out of date" in err
    assert main(["build", "--out", "gen"]) == 0
    assert tree(out) == tree(GOLDEN)


def flip_byte(data: bytes) -> bytes:
    """One byte of `data` changed; an empty file (py.typed) cannot keep its size: it gets one."""
    if not data:
        return b"\n"
    i = len(data) // 2
    return data[:i] + bytes([data[i] ^ 0x01]) + data[i + 1:]


TAMPER: dict[str, Callable[[Path], None]] = {
    "same size": lambda p: p.write_bytes(flip_byte(p.read_bytes())),
    "appended": lambda p: p.write_bytes(p.read_bytes() + b"\n"),
    "emptied": lambda p: p.write_bytes(b""),
    "deleted": lambda p: p.unlink(),
    "symlink to a copy": lambda p: (p.with_name("copy").write_bytes(p.read_bytes()),
                                    p.unlink(), p.symlink_to("copy")),
}


@pytest.mark.sampled(6)
@pytest.mark.parametrize("rel", OUTPUTS)
@pytest.mark.parametrize("with_cache", [True, False], ids=["cache", "no-cache"])
def test_check_fails_on_any_changed_file(
    project: Path, rel: str, with_cache: bool, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Every output of the committed tree (the manifest too), changed by one byte."""
    shutil.copytree(GOLDEN, project / "gen")
    TAMPER["same size"](project / "gen" / rel)
    if not with_cache:
        monkeypatch.setenv(cache.ENV, "off")
    capsys.readouterr()
    assert main(["build", "--check", "--out", "gen"]) == 1
    assert f"would regenerate gen/{rel}" in capsys.readouterr().err


@pytest.mark.sampled(4)
@pytest.mark.parametrize("how", sorted(TAMPER))
@pytest.mark.parametrize("rel", ["lisboa_engine.py", "reference/rules.md", writer.MANIFEST])
def test_check_fails_whatever_the_tampering(
    project: Path, how: str, rel: str, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copytree(GOLDEN, project / "gen")
    TAMPER[how](project / "gen" / rel)
    assert main(["build", "--check", "--no-cache", "--out", "gen"]) == 1
    assert main(["build", "--out", "gen"]) == 0
    kept = {k: v for k, v in tree(project / "gen").items() if not k.endswith("copy")}
    assert kept == tree(GOLDEN)


@pytest.mark.sampled(3)
@pytest.mark.parametrize("edit", ["outputs hash", "comment", "header dropped", "reversed",
                                  "blank line", "twice", "unsafe line", "crlf"])
def test_a_rewritten_manifest_fails_the_check(
    project: Path, edit: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The manifest is an output like any other: any byte of it rewritten is stale (it used to
    be 'bookkeeping' when only its comment lines changed)."""
    shutil.copytree(GOLDEN, project / "gen")
    manifest = project / "gen" / writer.MANIFEST
    text = manifest.read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    head = [ln for ln in lines if ln.startswith("#")]
    body = [ln for ln in lines if not ln.startswith("#")]
    changed = {
        "outputs hash": "".join([*head, f"# outputs-sha256: {'a' * 64}\n", *body]),
        "comment": text + "# hi\n",
        "header dropped": "".join(body),
        "reversed": "".join(head + body[::-1]),
        "blank line": text + "\n",
        "twice": text + body[0],
        "unsafe line": text + "../evil\n",
        "crlf": text.replace("\n", "\r\n"),
    }[edit]
    manifest.write_text(changed, encoding="utf-8", newline="")
    for cached in (["--no-cache"], []):
        capsys.readouterr()
        assert main(["build", "--check", *cached, "--out", "gen"]) == 1
        assert "would regenerate gen/.manifest" in capsys.readouterr().err
    assert main(["build", "--out", "gen"]) == 0
    assert manifest.read_text(encoding="utf-8") == text, "a build restores the manifest"


def test_every_check_runs_the_pipeline(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from lisboa_rules import pipeline

    calls: list[int] = []
    real = pipeline.compile_rules
    monkeypatch.setattr(pipeline, "compile_rules",
                        lambda *a, **k: (calls.append(1), real(*a, **k))[1])
    for argv in (["build"], ["build", "--check"], ["build"], ["build", "--check", "--no-cache"]):
        assert main([*argv, "--out", "gen"]) == 0
    assert len(calls) == 4


def test_a_build_writes_no_build_cache(project: Path) -> None:
    assert main(["build", "--out", "gen"]) == 0
    names = [p.name for p in (project / "cache").rglob("*")] if (project / "cache").exists() \
        else []
    assert not [n for n in names if n.endswith((".build.json", ".outputs"))]


def test_no_cache_is_accepted_and_changes_nothing(project: Path) -> None:
    assert main(["build", "--no-cache", "--out", "a"]) == 0
    assert main(["build", "--out", "b"]) == 0
    assert main(["build", "--no-cache", "--check", "--out", "b"]) == 0
    assert tree(project / "a") == tree(project / "b") == tree(GOLDEN)


# --- compiled templates: only from a private folder ---------------------------------------


def warm(project: Path) -> list[Path]:
    """Fill the cache folder with compiled templates; return their files."""
    done = run_build(project, "--out", "warm")
    assert done.returncode == 0, done.stderr
    files = sorted((project / "cache").rglob("__jinja2_*"))
    assert files, "no compiled templates were cached"
    # (An earlier version also cached whole outputs here, which would skip the templates; the
    # passes' results, reuse.py, would skip them too: each build below renders every template.)
    for p in (project / "cache").glob("*.build.json"):
        p.unlink()
    shutil.rmtree(project / "cache" / reuse.FOLDER, ignore_errors=True)
    return files


def planted_bytecode(original: bytes) -> bytes:
    """A compiled template with the original's source checksum (so Jinja would run it) whose
    code renders something else."""
    magic = jinja2.bccache.bc_magic
    assert original.startswith(magic)
    checksum = pickle.loads(original[len(magic):])
    code = jinja2.Environment().compile("PLANTED {{ 1 }}\n", "planted")
    return magic + pickle.dumps(checksum, 2) + marshal.dumps(code)


def plant_bytecode(files: list[Path]) -> None:
    for p in files:
        p.write_bytes(planted_bytecode(p.read_bytes()))


def test_planted_compiled_templates_in_a_private_folder_show(project: Path) -> None:
    """The control for the tests below: the planting works, so when they find golden output
    the folder really was not read."""
    plant_bytecode(warm(project))
    done = run_build(project, "--out", "gen")
    # The planted engine template renders "PLANTED 1": not Python, so nothing is written.
    assert done.returncode == 2 and "generated-invalid" in done.stderr, done.stderr


@pytest.mark.sampled(3)
@pytest.mark.parametrize("setup", ["0770", "0750", "0707", "0755", "0777", "1777", "foreign",
                                   "symlinked folder"])
def test_compiled_templates_are_not_read_from_a_folder_others_can_write(
    project: Path, setup: str
) -> None:
    files = warm(project)
    plant_bytecode(files)
    folder = files[0].parent
    if setup == "foreign":
        if os.geteuid() != 0:
            pytest.skip("needs root to give the folder away")
        os.chown(folder, 12345, 12345)
    elif setup == "symlinked folder":
        moved = project / "elsewhere"
        folder.rename(moved)  # private, planted, and reached through a symlink
        folder.symlink_to(moved, target_is_directory=True)
    else:
        folder.chmod(int(setup, 8))
    done = run_build(project, "--out", "gen")
    assert done.returncode == 0, done.stderr
    assert tree(project / "gen") == tree(GOLDEN)


@pytest.mark.sampled(3)
@pytest.mark.parametrize("setup", ["symlink to a planted file", "foreign file", "fifo",
                                   "/dev/zero", "empty", "garbage", "magic only",
                                   "magic and garbage", "too big", "folder", "socket"])
def test_a_damaged_or_foreign_cache_file_costs_a_recompile(project: Path, setup: str) -> None:
    """Each compiled template replaced; the build is the golden one and does not hang (a
    timeout of two minutes would fail the test)."""
    files = warm(project)
    elsewhere = project / "planted"
    elsewhere.mkdir()
    for p in files:
        original = p.read_bytes()
        p.unlink()
        if setup == "symlink to a planted file":
            (elsewhere / p.name).write_bytes(planted_bytecode(original))
            p.symlink_to(elsewhere / p.name)
        elif setup == "foreign file":
            if os.geteuid() != 0:
                pytest.skip("needs root to give a file away")
            p.write_bytes(planted_bytecode(original))
            os.chown(p, 12345, 12345)
        elif setup == "fifo":
            os.mkfifo(p)
        elif setup == "/dev/zero":
            p.symlink_to("/dev/zero")
        elif setup == "too big":
            with p.open("wb") as fh:
                fh.truncate(cache.MAX_CACHE_FILE + 10)  # sparse
        elif setup == "folder":
            p.mkdir()
        elif setup == "socket":
            with socket.socket(socket.AF_UNIX) as s:
                s.bind(os.path.relpath(p))  # (the CWD is the project: a short path)
        else:
            magic = jinja2.bccache.bc_magic
            p.write_bytes({"empty": b"", "garbage": b"j2 garbage\x00\xff", "magic only": magic,
                           "magic and garbage": magic + b"\x80\x04garbage"}[setup])
    done = run_build(project, "--out", "gen")
    assert done.returncode == 0, done.stderr
    assert tree(project / "gen") == tree(GOLDEN)


@pytest.mark.sampled(3)
@pytest.mark.parametrize("where", ["a file", "a fifo", "/dev/zero", "newline\nin name",
                                   "dotdot/../cache", "jinja is a file", "jinja is a fifo",
                                   "jinja is /dev/null"])
def test_a_strange_cache_location_is_harmless(project: Path, where: str) -> None:
    base = project / "c"
    base.mkdir()
    if where == "a file":
        target = base / "file"
        target.write_text("x")
    elif where == "a fifo":
        target = base / "fifo"
        os.mkfifo(target)
    elif where == "/dev/zero":
        target = Path("/dev/zero")
    elif where.startswith("jinja is"):
        target = base / "root"
        target.mkdir()
        j = target / cache.TEMPLATES
        if where == "jinja is a file":
            j.write_text("x")
        elif where == "jinja is a fifo":
            os.mkfifo(j)
        else:
            j.symlink_to("/dev/null")
    else:
        target = base / where
    done = run_build(project, "--out", "gen", cache_dir=target)
    assert done.returncode == 0, done.stderr
    assert tree(project / "gen") == tree(GOLDEN)


def test_the_compiled_template_cache_is_private_and_names_the_compiler(project: Path) -> None:
    files = warm(project)
    folder = files[0].parent
    st = folder.lstat()
    assert stat.S_ISDIR(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o700
    assert st.st_uid == os.geteuid()
    from lisboa_rules.emit import env

    fingerprint = env.template_fingerprint()[:20]
    assert all(p.name.endswith(f".{fingerprint}.cache") for p in files)
    assert {p.name.split(".")[-3] for p in files} == {"code", "doc"}
    assert all(stat.S_IMODE(p.lstat().st_mode) & 0o077 == 0 for p in files)


def test_no_cache_reads_and_writes_no_compiled_template(project: Path) -> None:
    done = run_build(project, "--no-cache", "--out", "gen")
    assert done.returncode == 0, done.stderr
    assert not list((project / "cache").rglob("__jinja2_*"))
    plant_bytecode(warm(project))
    done = run_build(project, "--no-cache", "--out", "gen2")
    assert done.returncode == 0, done.stderr
    assert tree(project / "gen2") == tree(GOLDEN)


def test_a_fifo_among_the_rules_does_not_hang(project: Path) -> None:
    os.mkfifo(project / "rules" / "zz-pipe.yaml")
    for extra in ([], ["--no-cache"]):
        done = run_build(project, "--check", *extra, timeout=60)
        assert done.returncode == 1 and "unreadable-file" in done.stderr, done.stderr


@pytest.mark.sampled(1)
@pytest.mark.parametrize(
    ("setting", "changed"),
    [
        ("keep_trailing_newline=True", "keep_trailing_newline=False"),
        ('enabled_extensions=("html", "html.jinja")', "enabled_extensions=()"),
        ("trim_blocks=True", "trim_blocks=False"),
    ],
)
def test_templates_compiled_under_other_environment_settings_are_not_used(
    project: Path, setting: str, changed: str
) -> None:
    """Jinja files a compiled template by its name, path and source only; the settings of the
    environment (emit/env.py) are baked into the compiled code. After env.py changes (an
    upgrade in place), what the earlier compiler compiled must not be loaded: the build equals
    a `--no-cache` one."""
    copy = project / "copy"
    shutil.copytree(ROOT / "lisboa_rules", copy / "lisboa_rules",
                    ignore=shutil.ignore_patterns("__pycache__"))

    def build(*args: str) -> dict[str, bytes]:
        env = {**os.environ, "PYTHONPATH": str(copy), cache.ENV: str(project / "cache")}
        out = project / f"out-{len(list(project.glob('out-*')))}"
        done = subprocess.run([sys.executable, "-m", "lisboa_rules", "build", *args, "--out",
                               str(out)], cwd=project, env=env, capture_output=True, text=True,
                              timeout=120, check=False)  # fmt: skip
        assert done.returncode == 0, done.stderr
        return tree(out)

    before = build()  # the earlier compiler fills the cache
    assert list((project / "cache").rglob("__jinja2_*"))
    env_py = copy / "lisboa_rules" / "emit" / "env.py"
    text = env_py.read_text(encoding="utf-8")
    assert setting in text
    env_py.write_text(text.replace(setting, changed), encoding="utf-8")
    fresh = build("--no-cache")
    assert fresh != before  # the setting does change the outputs
    assert build() == fresh
