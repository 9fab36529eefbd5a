"""Atomicity of the whole build: a build that fails or is killed part-way leaves the output
folder exactly as it was (bytes, modes, the user's own files) and no temp folders behind.

Failures are injected at the writer's seams (`_write_bytes`, `_exchange`, `_rename`). The kill
tests run a real build in a subprocess that stops itself at a chosen point and reports it on a
pipe; the test then sends SIGKILL. Nothing here waits on a clock.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from lisboa_rules import pipeline
from lisboa_rules.cli.main import main
from lisboa_rules.outputs import writer

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "rules"

Snapshot = dict[str, tuple[bytes, int]]


def snapshot(root: Path) -> Snapshot:
    """Every entry under `root`: file bytes and modes, folders as empty entries."""
    out: Snapshot = {}
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        if p.is_dir() and not p.is_symlink():
            out[rel + "/"] = (b"", p.stat().st_mode)
        else:
            out[rel] = (p.read_bytes(), p.stat().st_mode)
    return out


def siblings(project: Path) -> list[str]:
    return sorted(p.name for p in project.iterdir())


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    """A project folder with a copy of rules/ and a built `out/` holding a user's own file;
    the rules are then edited, so the next build has several files to write. Built once; each
    test gets a copy. Returns the folder and how many files the next build writes."""
    root = tmp_path_factory.mktemp("atomic") / "project"
    shutil.copytree(RULES, root / "rules")
    result = pipeline.compile_rules(root / "rules")
    assert result.ok, result.diagnostics
    assert writer.write_outputs(root / "out", result.files).ok
    (root / "out" / "notes.txt").write_text("mine\n", encoding="utf-8")
    edit_rules(root / "rules")
    result = pipeline.compile_rules(root / "rules")
    assert result.ok, result.diagnostics
    stale = writer.write_outputs(root / "out", result.files, check=True).stale
    return root, len(stale)  # the .manifest is among them when it changes


@pytest.fixture
def project(template: tuple[Path, int], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh copy of the template project, as the working directory."""
    root = tmp_path / "project"
    shutil.copytree(template[0], root, symlinks=True)
    monkeypatch.chdir(root)
    monkeypatch.delenv("LISBOA_RULES_DEBUG", raising=False)
    return root


@pytest.fixture
def stale(template: tuple[Path, int]) -> int:
    """How many files the next build writes."""
    return template[1]


def edit_rules(rules: Path) -> None:
    """Change the title of the game, which several outputs show (engine, reference)."""
    game = rules / "game.yaml"
    text = game.read_text(encoding="utf-8")
    assert "\ntitle: Lisboa\n" in text, "test fixture: game.yaml no longer has 'title: Lisboa'"
    game.write_text(text.replace("\ntitle: Lisboa\n", "\ntitle: Lisboa Edited\n"),
                    encoding="utf-8")


def build() -> int:
    return main(["build", "--rules", "rules", "--out", "out"])


def test_the_fixture_really_changes_several_files(stale: int) -> None:
    assert stale >= 3


@pytest.mark.parametrize("nth", [1, 2, -1])
def test_write_error_on_the_nth_file_leaves_the_folder_as_it_was(
    project: Path,
    stale: int,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    nth: int,
) -> None:
    fail_at = stale if nth == -1 else nth
    before = snapshot(project / "out")
    real = writer._write_bytes
    calls: list[Path] = []

    def flaky(path: Path, data: bytes) -> None:
        calls.append(path)
        if len(calls) == fail_at:
            real(path, data[: len(data) // 2])  # half a file on disk, then the disk is full
            raise OSError(28, "No space left on device", str(path))
        real(path, data)

    monkeypatch.setattr(writer, "_write_bytes", flaky)
    assert build() == 2
    assert len(calls) == fail_at
    assert snapshot(project / "out") == before
    assert siblings(project) == ["out", "rules"]
    err = capsys.readouterr().err
    assert "error[write-failed]" in err and "No space left on device" in err
    assert "Traceback" not in err
    if nth == 1:  # the disk has room again: the same build now goes through completely
        monkeypatch.setattr(writer, "_write_bytes", real)
        assert build() == 0
        assert snapshot(project / "out") != before
        assert (project / "out" / "notes.txt").read_text(encoding="utf-8") == "mine\n"
        assert siblings(project) == ["out", "rules"]


def test_a_failed_exchange_leaves_the_folder_as_it_was(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = snapshot(project / "out")

    def refuse(a: Path, b: Path) -> bool:
        raise PermissionError(13, "Permission denied", str(b))

    monkeypatch.setattr(writer, "_exchange", refuse)
    assert build() == 2
    assert snapshot(project / "out") == before
    assert siblings(project) == ["out", "rules"]


def test_two_rename_fallback_restores_the_folder_when_the_second_rename_fails(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = snapshot(project / "out")
    monkeypatch.setattr(writer, "_exchange", lambda a, b: False)  # a system without renameat2
    real = writer._rename
    calls = 0

    def flaky(src: Path, dst: Path) -> None:
        nonlocal calls
        calls += 1
        if calls == 2:  # the old folder is already aside, the new one not yet in place
            raise PermissionError(13, "Permission denied", str(dst))
        real(src, dst)

    monkeypatch.setattr(writer, "_rename", flaky)
    assert build() == 2
    assert calls == 3  # aside, (failed) in, back
    assert snapshot(project / "out") == before
    assert siblings(project) == ["out", "rules"]


def test_exchange_is_atomic_on_this_system(tmp_path: Path) -> None:
    """The Linux fast path really swaps (CI runs on Linux; elsewhere the fallback is used)."""
    if writer._renameat2() is None:
        pytest.skip("no renameat2 here: the two-rename fallback is used")
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (a / "x").write_text("a")
    (b / "y").write_text("b")
    if not writer._exchange(a, b):
        pytest.skip("this file system cannot exchange; the two-rename fallback is used")
    assert [p.name for p in a.iterdir()] == ["y"]
    assert [p.name for p in b.iterdir()] == ["x"]


# --- SIGKILL part-way through -------------------------------------------------------------------

CHILD = textwrap.dedent(
    """
    import os, sys
    from pathlib import Path
    from lisboa_rules.outputs import writer
    from lisboa_rules.cli.main import main

    point, nth = sys.argv[1], int(sys.argv[2])
    calls = {"write": 0, "rename": 0}

    def pause():
        sys.stdout.write(f"paused at {point} {nth}\\n")
        sys.stdout.flush()
        sys.stdin.read()  # blocks until the parent kills us
        os._exit(99)  # the parent closed stdin without killing: should not happen

    real_write, real_exchange, real_rename = writer._write_bytes, writer._exchange, writer._rename

    def write(path, data):
        calls["write"] += 1
        if point == "mid-write" and calls["write"] == nth:
            with path.open("wb") as fh:
                fh.write(data[: len(data) // 2])
                fh.flush()
                pause()
        real_write(path, data)

    def exchange(a, b):
        if point == "before-exchange":
            pause()
        done = real_exchange(a, b)
        if point == "after-exchange":
            pause()
        return done

    def rename(src, dst):
        calls["rename"] += 1
        if point == "between-renames" and calls["rename"] == 2:
            pause()
        real_rename(src, dst)

    writer._write_bytes = write
    writer._exchange = (lambda a, b: False) if point == "between-renames" else exchange
    writer._rename = rename
    sys.exit(main(["build", "--rules", "rules", "--out", "out"]))
    """
)


def kill_build_at(project: Path, point: str, nth: int = 1) -> None:
    """Run a build that stops at `point`, wait for it to say so, then SIGKILL it."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), *sys.path])}
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, point, str(nth)],
        cwd=project,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stdin is not None
    line = proc.stdout.readline()  # blocks until the child pauses (or ends)
    if not line.startswith("paused"):
        _, err = proc.communicate()
        pytest.fail(f"the build never reached {point}: exit {proc.returncode}\n{err}")
    proc.send_signal(signal.SIGKILL)
    proc.communicate()
    assert proc.returncode == -signal.SIGKILL


def test_killed_mid_write_leaves_the_folder_as_it_was(project: Path) -> None:
    before = snapshot(project / "out")
    kill_build_at(project, "mid-write", 1)  # half of the first file is on disk
    assert snapshot(project / "out") == before
    # The next build clears the dead build's temp folder and completes.
    assert build() == 0
    assert siblings(project) == ["out", "rules"]
    assert (project / "out" / "notes.txt").read_text(encoding="utf-8") == "mine\n"


def test_killed_just_before_the_swap_leaves_the_folder_as_it_was(project: Path) -> None:
    if writer._renameat2() is None:
        pytest.skip("no renameat2 here")
    before = snapshot(project / "out")
    kill_build_at(project, "before-exchange")
    assert snapshot(project / "out") == before


def test_killed_just_after_the_swap_leaves_the_complete_new_folder(project: Path) -> None:
    if writer._renameat2() is None:
        pytest.skip("no renameat2 here")
    kill_build_at(project, "after-exchange")
    new = snapshot(project / "out")
    assert build() == 0  # nothing left to write: the killed build had finished the swap
    assert snapshot(project / "out") == new
    assert siblings(project) == ["out", "rules"]


def test_killed_between_the_two_renames_the_next_build_puts_the_folder_back(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without renameat2 there is a moment with no folder; the next build recovers it first
    (with its write failing here, so that what it recovered stays visible), then completes."""
    before = snapshot(project / "out")
    kill_build_at(project, "between-renames")
    assert not (project / "out").exists()

    def full_disk(path: Path, data: bytes) -> None:
        raise OSError(28, "No space left on device", str(path))

    with monkeypatch.context() as mp:
        mp.setattr(writer, "_write_bytes", full_disk)
        assert build() == 2
    assert snapshot(project / "out") == before
    assert siblings(project) == ["out", "rules"]
    assert build() == 0
    assert (project / "out" / "notes.txt").read_text(encoding="utf-8") == "mine\n"
    assert siblings(project) == ["out", "rules"]


HOLDER = textwrap.dedent(
    """
    import fcntl, os, sys
    fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    print("locked", flush=True)
    sys.stdin.read()  # hold the lock until the test closes stdin
    """
)


def temp_folders(project: Path, token: str) -> dict[str, Path]:
    """The temp folders and lock file one build with this token would use next to out/."""
    return {k: project / f".out.{k}-{token}" for k in ("new", "old", "lock")}


def fill(folder: Path) -> None:
    folder.mkdir()
    (folder / "lisboa_engine.py").write_text("# half-written by another build\n")
    (folder / "sub").mkdir()
    (folder / "sub" / "notes.txt").write_text("theirs\n")


@pytest.mark.sampled(2)
@pytest.mark.parametrize("holder", ["another process", "this process, another descriptor"])
@pytest.mark.parametrize("kinds", [("new",), ("old",), ("new", "old")])
def test_temp_folders_of_a_live_build_are_left_alone(
    project: Path, holder: str, kinds: tuple[str, ...]
) -> None:
    """A build is live while it holds its lock, whatever its PID or PID namespace: its temp
    folders are not touched (and, with out/ in place, its backup is not put back)."""
    paths = temp_folders(project, "a" * 32)
    for k in kinds:
        fill(paths[k])
    before = {k: snapshot(paths[k]) for k in kinds}
    proc = None
    fd = -1
    if holder == "another process":
        proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(paths["lock"])],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert proc.stdout is not None and proc.stdout.readline() == "locked\n"
    else:
        import fcntl

        fd = os.open(paths["lock"], os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        assert build() == 0
        assert {k: snapshot(paths[k]) for k in kinds} == before
        assert paths["lock"].exists()
    finally:
        if proc is not None:
            proc.communicate("")
        else:
            os.close(fd)
    # Once that build is gone, the next build cleans up after it.
    assert build() == 0
    assert siblings(project) == ["out", "rules"]


@pytest.mark.parametrize("name", [
    f".out.new-{2**22 + 12345}-abcdef",  # a PID that is free here, live in another namespace
    f".out.old-{2**22 + 12345}-abcdef",
    ".out.new-1-x",  # PID 1 here, someone else's PID 1 elsewhere
    ".out.new-" + "b" * 32,  # a temp folder without its lock file
    ".out.old-" + "c" * 32,
    ".out.lock-not-a-token",
])
def test_temp_folders_without_a_lock_are_never_touched(project: Path, name: str) -> None:
    """Folders named like an earlier version's (by PID), or ours without a lock file: no build
    can prove they are dead, so none deletes or moves them."""
    fill(project / name)
    before = snapshot(project / name)
    assert build() == 0
    assert snapshot(project / name) == before


@pytest.mark.parametrize("left", ["new", "old", "new and old", "lock only", "new, lock a fifo"])
def test_temp_folders_of_a_dead_build_are_cleaned(project: Path, left: str) -> None:
    """A lock file nobody holds: its build is gone; its folders go (out/ is in place, so a
    backup is not needed), and so does the lock file."""
    paths = temp_folders(project, "d" * 32)
    if "fifo" in left:
        os.mkfifo(paths["lock"])
    else:
        paths["lock"].write_bytes(b"")
    for k in ("new", "old"):
        if k in left:
            fill(paths[k])
    assert build() == 0
    assert siblings(project) == ["out", "rules"]


def test_a_dead_builds_backup_is_put_back_when_out_is_missing(project: Path) -> None:
    paths = temp_folders(project, "e" * 32)
    before = snapshot(project / "out")
    (project / "out").rename(paths["old"])
    paths["lock"].write_bytes(b"")
    assert build() == 0
    assert (project / "out" / "notes.txt").read_text(encoding="utf-8") == "mine\n"
    assert set(snapshot(project / "out")) == set(before)
    assert siblings(project) == ["out", "rules"]


def test_a_dead_builds_temp_name_that_is_a_symlink_is_not_followed(project: Path) -> None:
    paths = temp_folders(project, "f" * 32)
    theirs = project.parent / "theirs"
    fill(theirs)
    paths["new"].symlink_to(theirs, target_is_directory=True)
    paths["lock"].write_bytes(b"")
    assert build() == 0
    assert (theirs / "sub" / "notes.txt").read_text() == "theirs\n"


@pytest.mark.parametrize("out", [".", "..", "rules", "rules/..", "/", "~", "symlink to ."])
def test_the_cli_refuses_an_output_folder_it_must_not_replace(
    project: Path, out: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("HOME", str(project))
    if out == "symlink to .":
        (project.parent / "link").symlink_to(project, target_is_directory=True)
        out = str(project.parent / "link")
    elif out == "~":
        out = str(project)
    before = snapshot(project)
    capsys.readouterr()
    assert main(["build", "--rules", "rules", "--out", out]) == 2
    err = capsys.readouterr().err
    assert "error[unsafe-output]: refusing to use" in err, err
    assert snapshot(project) == before
    assert Path.cwd() == project and project.is_dir()


def test_a_build_from_inside_the_output_folder_is_refused(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`cd out && lisboa-rules build --rules ../rules --out .` would leave the shell in the
    old, deleted folder (and `--out ..` would too): refused; --check is fine."""
    monkeypatch.chdir(project / "out" / "reference")
    before = snapshot(project)
    for out in ("..", "../.."):
        assert main(["build", "--rules", "../../rules", "--out", out]) == 2
    assert snapshot(project) == before
    capsys.readouterr()
    assert main(["build", "--check", "--rules", "../../rules", "--out", ".."]) == 1


def test_an_output_folder_that_is_a_symlink_loop_is_a_write_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copytree(RULES, tmp_path / "rules")
    (tmp_path / "out").symlink_to("out")
    monkeypatch.chdir(tmp_path)
    assert build() == 2
    err = capsys.readouterr().err
    assert "error[write-failed]" in err and "internal error" not in err
    assert (tmp_path / "out").is_symlink() and sorted(p.name for p in tmp_path.iterdir()) == [
        "out", "rules"]
