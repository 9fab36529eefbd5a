"""The output writer: compile gate, change-only, whole-folder atomic swap, check/diff, pruning."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest

from lisboa_rules.outputs import writer
from lisboa_rules.outputs.writer import MANIFEST, write_outputs

FILES = {
    "lisboa_engine.py": "RULES = {'a': 1}\n",
    "reference/rules.md": "# Lisboa\n\nRéis.\n",
    "schema/game.schema.json": "{}\n",
}

Snapshot = dict[str, tuple[bytes, int, int]]


def snapshot(root: Path) -> Snapshot:
    """Return every file under root with its bytes, mtime_ns and inode."""
    out: Snapshot = {}
    for p in sorted(root.rglob("*")):
        if p.is_file():
            st = p.stat()
            out[p.relative_to(root).as_posix()] = (p.read_bytes(), st.st_mtime_ns, st.st_ino)
    return out


def siblings(out: Path) -> list[str]:
    """Return the entries next to the output folder (temp folders must not linger)."""
    return sorted(p.name for p in out.parent.iterdir())


@pytest.fixture
def out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An output folder `gen` under a CWD of its own, so display paths are `gen/...`."""
    monkeypatch.chdir(tmp_path)
    return tmp_path / "gen"


def age(root: Path) -> None:
    """Move every mtime an hour back so any rewrite is visible."""
    for p in root.rglob("*"):
        st = p.stat()
        os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns - 3_600_000_000_000))


def test_first_write_creates_files_and_manifest(out: Path) -> None:
    result = write_outputs(out, FILES)
    assert result.ok and result.diagnostics == []
    assert result.written == sorted(FILES)
    assert (out / "reference/rules.md").read_bytes() == "# Lisboa\n\nRéis.\n".encode()
    manifest = (out / MANIFEST).read_text().splitlines()
    assert [ln for ln in manifest if not ln.startswith("#")] == sorted(FILES)
    assert siblings(out) == ["gen"]


def test_files_get_normal_permissions(out: Path) -> None:
    umask = os.umask(0o022)
    try:
        write_outputs(out, FILES)
    finally:
        os.umask(umask)
    assert stat.S_IMODE((out / "lisboa_engine.py").stat().st_mode) == 0o644
    assert stat.S_IMODE(out.stat().st_mode) == 0o755


def test_newlines_are_written_verbatim(out: Path) -> None:
    write_outputs(out, {"a.md": "x\ny\n"})
    assert (out / "a.md").read_bytes() == b"x\ny\n"


def test_nothing_is_touched_when_up_to_date(out: Path) -> None:
    write_outputs(out, FILES)
    age(out)
    before = snapshot(out)
    dir_inode = out.stat().st_ino
    result = write_outputs(out, FILES)
    assert result.written == [] and result.stale == [] and result.removed == []
    assert result.unchanged == sorted(FILES)
    assert snapshot(out) == before
    assert out.stat().st_ino == dir_inode
    assert siblings(out) == ["gen"]


def test_unchanged_files_keep_mtime_when_another_changes(out: Path) -> None:
    write_outputs(out, FILES)
    age(out)
    before = snapshot(out)
    result = write_outputs(out, {**FILES, "lisboa_engine.py": "RULES = {}\n"})
    assert result.written == ["lisboa_engine.py"]
    after = snapshot(out)
    assert after["lisboa_engine.py"][0] == b"RULES = {}\n"
    for rel in ("reference/rules.md", "schema/game.schema.json"):
        assert after[rel] == before[rel], rel
    # The manifest lists the same files: it is left alone too.
    assert after[MANIFEST] == before[MANIFEST]
    assert siblings(out) == ["gen"]


def test_check_lists_stale_files_and_writes_nothing(out: Path) -> None:
    write_outputs(out, FILES)
    before = snapshot(out)
    changed = {**FILES, "lisboa_engine.py": "RULES = {}\n", "new.md": "n\n"}
    del changed["schema/game.schema.json"]
    result = write_outputs(out, changed, check=True)
    assert snapshot(out) == before
    assert result.stale == [MANIFEST, "lisboa_engine.py", "new.md", "schema/game.schema.json"]
    assert result.messages() == [
        "would regenerate gen/.manifest",
        "would regenerate gen/lisboa_engine.py",
        "would create gen/new.md",
        "would remove gen/schema/game.schema.json",
    ]
    assert result.written == [] and result.removed == []


def test_check_on_a_missing_folder_creates_nothing(out: Path) -> None:
    result = write_outputs(out, FILES, check=True)
    assert not out.exists()
    assert len(result.stale) == len(FILES) + 1


def test_diff_is_unified_with_a_b_paths_and_writes_nothing(out: Path) -> None:
    write_outputs(out, FILES)
    before = snapshot(out)
    result = write_outputs(out, {**FILES, "lisboa_engine.py": "RULES = {}\n"}, diff=True)
    assert snapshot(out) == before
    assert result.stale == ["lisboa_engine.py"]
    assert result.diff_text == (
        "--- a/gen/lisboa_engine.py\n"
        "+++ b/gen/lisboa_engine.py\n"
        "@@ -1 +1 @@\n"
        "-RULES = {'a': 1}\n"
        "+RULES = {}\n"
    )


def test_diff_marks_a_missing_final_newline(out: Path) -> None:
    write_outputs(out, {"a.md": "x\n"})
    text = write_outputs(out, {"a.md": "x"}, diff=True).diff_text
    assert text.endswith("+x\n\\ No newline at end of file\n")


def test_python_outputs_must_compile_before_anything_is_written(out: Path) -> None:
    write_outputs(out, FILES)
    before = snapshot(out)
    bad = {**FILES, "lisboa_engine.py": "def f(:\n    pass\n", "other.py": "x = 1\n"}
    result = write_outputs(out, bad)
    assert snapshot(out) == before
    assert not result.ok
    (d,) = result.diagnostics
    assert d.code == "generated-invalid"
    assert d.span is not None and (d.span.file, d.span.line) == ("gen/lisboa_engine.py", 1)


@pytest.mark.parametrize("fail_at", [1, 2, 3])
def test_failure_on_nth_file_write_leaves_the_folder_byte_identical(
    out: Path, monkeypatch: pytest.MonkeyPatch, fail_at: int
) -> None:
    write_outputs(out, FILES)
    (out / "notes.txt").write_text("mine\n")
    before = snapshot(out)
    real = writer._write_bytes
    calls = 0

    def flaky(path: Path, data: bytes) -> None:
        nonlocal calls
        calls += 1
        if calls == fail_at:
            raise OSError(28, "No space left on device", str(path))
        real(path, data)

    monkeypatch.setattr(writer, "_write_bytes", flaky)
    new = {rel: text.replace("\n", "  # v2\n") for rel, text in FILES.items()}
    result = write_outputs(out, {**new, "extra.md": "e\n"})
    assert calls == fail_at
    assert snapshot(out) == before
    assert siblings(out) == ["gen"]
    (d,) = [d for d in result.diagnostics if d.code == "write-failed"]
    assert "No space left on device" in d.message and d.span is None
    assert result.written == []


def test_failure_while_swapping_restores_the_folder(
    out: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_outputs(out, FILES)
    before = snapshot(out)
    monkeypatch.setattr(writer, "_exchange", lambda a, b: False)  # the two-rename fallback
    real = writer._rename
    calls = 0

    def flaky(src: Path, dst: Path) -> None:
        nonlocal calls
        calls += 1
        if calls == 2:  # old folder already moved aside, new one not yet in place
            raise PermissionError(13, "Permission denied", str(dst))
        real(src, dst)

    monkeypatch.setattr(writer, "_rename", flaky)
    result = write_outputs(out, {**FILES, "lisboa_engine.py": "RULES = {}\n"})
    assert not result.ok
    assert snapshot(out) == before
    assert siblings(out) == ["gen"]


def test_owned_files_are_pruned_and_strays_reported(out: Path) -> None:
    write_outputs(out, FILES)
    (out / "notes.txt").write_text("mine\n")
    (out / "schema" / "local.json").write_text("{}\n")
    result = write_outputs(out, {"lisboa_engine.py": FILES["lisboa_engine.py"]})
    assert result.ok
    assert result.removed == ["reference/rules.md", "schema/game.schema.json"]
    assert result.strays == ["notes.txt", "schema/local.json"]
    assert [(d.code, d.severity) for d in result.diagnostics] == [("stray-output", "warning")] * 2
    assert sorted(snapshot(out)) == [MANIFEST, "lisboa_engine.py", "notes.txt", "schema/local.json"]
    assert not (out / "reference").exists()  # emptied by pruning
    assert (out / "notes.txt").read_text() == "mine\n"


def test_without_a_manifest_nothing_unknown_is_deleted(out: Path) -> None:
    out.mkdir()
    (out / "old_engine.py").write_text("x = 1\n")
    result = write_outputs(out, FILES)
    assert result.removed == [] and result.strays == ["old_engine.py"]
    assert (out / "old_engine.py").exists()


def test_prune_false_keeps_and_still_owns_old_outputs(out: Path) -> None:
    write_outputs(out, FILES)
    result = write_outputs(out, {"lisboa_engine.py": "x = 2\n"}, prune=False)
    assert result.removed == [] and result.strays == []
    assert (out / "reference/rules.md").exists()
    assert "reference/rules.md" in (out / MANIFEST).read_text()


def test_output_folder_that_is_a_file(out: Path) -> None:
    out.write_text("oops")
    result = write_outputs(out, FILES)
    assert [d.code for d in result.diagnostics] == ["write-failed"]
    assert out.read_text() == "oops"


@pytest.mark.parametrize(
    "rel", ["/abs.py", "../up.py", "a/../b.py", "a\\b.py", "", MANIFEST, "./a"]
)
def test_unsafe_output_paths_are_a_programming_error(out: Path, rel: str) -> None:
    with pytest.raises(ValueError):
        write_outputs(out, {rel: "x\n"})


# --- a build never removes or moves a file it did not write (issue 11, item 4) ------------


def tree_of(root: Path) -> dict[str, tuple[str, bytes]]:
    """Every entry under `root` (not following symlinks): its kind and, for files, bytes."""
    out: dict[str, tuple[str, bytes]] = {}
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        mode = p.lstat().st_mode
        if stat.S_ISLNK(mode):
            out[rel] = ("link", os.readlink(p).encode())
        elif stat.S_ISDIR(mode):
            out[rel] = ("dir", b"")
        elif stat.S_ISREG(mode):
            out[rel] = ("file", p.read_bytes())
        else:
            out[rel] = ("special", b"")
    return out


def refused(result: writer.WriteResult) -> str:
    assert not result.ok
    found = [d for d in result.diagnostics if d.code == "unsafe-output"]
    assert found, [d.message for d in result.diagnostics]
    return found[0].message


UNSAFE_TARGETS = ["/", "symlink to /", "home", "ancestor of home", "rules", "ancestor of rules",
                  "cwd", "parent of cwd", "symlink to cwd"]


def unsafe_target(where: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                  ) -> tuple[Path, list[Path]]:
    """The output folder for one case, and the protected folders to pass."""
    home = tmp_path / "users" / "me"
    rules = tmp_path / "work" / "game" / "rules"
    cwd = tmp_path / "work" / "shell"
    for d in (home, rules, cwd):
        d.mkdir(parents=True)
    (rules / "game.yaml").write_text("kind: game\n")
    (home / "thesis.txt").write_text("years of work\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(cwd)
    (cwd / "mine.txt").write_text("mine\n")
    (tmp_path / "to-root").symlink_to("/")
    (tmp_path / "to-cwd").symlink_to(cwd)
    out = {
        "/": Path("/"),
        "symlink to /": tmp_path / "to-root",
        "home": home,
        "ancestor of home": home.parent,
        "rules": rules,
        "ancestor of rules": rules.parent,
        "cwd": Path("."),
        "parent of cwd": Path(".."),
        "symlink to cwd": tmp_path / "to-cwd",
    }[where]
    return out, [rules]


@pytest.mark.parametrize("where", UNSAFE_TARGETS)
def test_an_output_folder_a_build_must_not_replace_is_refused(
    where: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out, protect = unsafe_target(where, tmp_path, monkeypatch)
    before = tree_of(tmp_path)

    def no_walk(folder: Path) -> set[str]:
        raise AssertionError(f"walked {folder}")

    monkeypatch.setattr(writer, "_survey", no_walk)
    message = refused(write_outputs(out, FILES, protect=protect))
    assert "refusing to use" in message
    assert tree_of(tmp_path) == before


@pytest.mark.parametrize("where", ["/", "symlink to /", "home", "ancestor of home", "rules",
                                   "ancestor of rules"])
def test_check_refuses_them_too(where: str, tmp_path: Path,
                                monkeypatch: pytest.MonkeyPatch) -> None:
    """`--check` on `/` or the home folder would walk it all; on the rules folder it would
    report the rules as strays: refused as well."""
    out, protect = unsafe_target(where, tmp_path, monkeypatch)
    monkeypatch.setattr(writer, "_survey", lambda folder: pytest.fail(f"walked {folder}"))
    refused(write_outputs(out, FILES, check=True, protect=protect))


@pytest.mark.parametrize("where", ["cwd", "symlink to cwd"])
def test_check_on_the_current_directory_is_allowed(where: str, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Only a write swaps the folder (and would leave the caller in a deleted directory)."""
    out, protect = unsafe_target(where, tmp_path, monkeypatch)
    result = write_outputs(out, FILES, check=True, protect=protect)
    assert result.ok and result.stale and result.strays == ["mine.txt"]


def test_a_folder_next_to_the_rules_is_fine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                            ) -> None:
    out, protect = unsafe_target("rules", tmp_path, monkeypatch)
    assert write_outputs(out.parent / "generated", FILES, protect=protect).ok
    assert write_outputs(tmp_path / "work" / "shell" / "gen", FILES, protect=protect).ok


def _mknod(path: Path) -> None:
    try:
        os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(1, 3))  # like /dev/null
    except PermissionError:
        pytest.skip("cannot make a device file here (needs root)")


def _socket(path: Path) -> None:
    import socket

    here = os.getcwd()
    os.chdir(path.parent)  # a short relative path: AF_UNIX paths are limited to ~100 bytes
    try:
        s = socket.socket(socket.AF_UNIX)
        s.bind(path.name)
        s.close()
    finally:
        os.chdir(here)


BEFORE: list[dict[str, tuple[str, bytes]]] = []
UNREADABLE = ["fifo", "socket", "device", "nested fifo", "unlistable folder",
              "unreadable file", "unenterable folder", "listing fails", "stat fails"]


def make_unreadable(kind: str, out: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Put one entry the builder cannot carry over into `out`; return it. Tests run as root,
    whom chmod 000 does not stop: permission denials are simulated at the system calls the
    writer makes (os.access, os.scandir, DirEntry.stat), for that one path only. Snapshots
    of the folder are taken before (see `BEFORE`), while the real calls are in place."""
    secret = out / "private"
    secret.mkdir()
    (secret / "diary.txt").write_text("dear diary\n")
    if kind == "fifo":
        os.mkfifo(out / "pipe")
        return out / "pipe"
    if kind == "socket":
        _socket(out / "sock")
        return out / "sock"
    if kind == "device":
        _mknod(out / "null")
        return out / "null"
    if kind == "nested fifo":
        os.mkfifo(secret / "pipe")
        return secret / "pipe"
    BEFORE[:] = [tree_of(out)]
    real_access, real_scandir = os.access, os.scandir
    target = secret / "diary.txt" if kind == "unreadable file" else secret
    if kind in ("unlistable folder", "unreadable file", "unenterable folder"):
        secret.chmod(0o000 if kind == "unlistable folder" else 0o700)
        denied = os.R_OK if kind != "unenterable folder" else os.X_OK

        def access(path: object, mode: int, **kw: object) -> bool:
            if Path(str(path)) == target and mode & denied:
                return False
            return real_access(path, mode, **kw)  # type: ignore[arg-type]

        monkeypatch.setattr(os, "access", access)
    elif kind == "listing fails":

        def scandir(path: object) -> object:
            if Path(str(path)) == secret:
                raise PermissionError(13, "Permission denied", str(path))
            return real_scandir(path)  # type: ignore[call-overload]

        monkeypatch.setattr(os, "scandir", scandir)
    elif kind == "stat fails":
        real_stat = os.DirEntry.stat  # type: ignore[attr-defined]

        class Entry:
            def __init__(self, e: os.DirEntry[str]) -> None:
                self._e = e
                self.name, self.path = e.name, e.path

            def stat(self, *, follow_symlinks: bool = True) -> os.stat_result:
                if Path(self.path) == secret:
                    raise PermissionError(13, "Permission denied", self.path)
                return real_stat(self._e, follow_symlinks=follow_symlinks)

        class Listing:
            def __init__(self, path: object) -> None:
                self._it = real_scandir(path)  # type: ignore[call-overload]

            def __enter__(self) -> list[Entry]:
                return [Entry(e) for e in self._it]

            def __exit__(self, *a: object) -> None:
                self._it.close()

        monkeypatch.setattr(os, "scandir", Listing)
    return secret


@pytest.mark.parametrize("check", [False, True], ids=["build", "check"])
@pytest.mark.parametrize("kind", UNREADABLE)
def test_a_folder_holding_what_a_build_cannot_carry_over_is_refused(
    out: Path, kind: str, check: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_outputs(out, FILES)
    BEFORE.clear()
    entry = make_unreadable(kind, out, monkeypatch)
    before = BEFORE[0] if BEFORE else tree_of(out)
    stale = {**FILES, "lisboa_engine.py": "RULES = {}\n"}
    message = refused(write_outputs(out, stale, check=check))
    assert entry.relative_to(out.parent).as_posix() in message
    assert "refusing to update 'gen'" in message
    monkeypatch.undo()
    (out / "private").chmod(0o700)
    assert tree_of(out) == before
    assert siblings(out) == ["gen"]
    # Once the entry is moved out of the folder, the build goes through.
    shutil.move(str(entry), str(out.parent / "moved"))
    assert write_outputs(out, stale).ok


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a chmod 000 folder anyway")
def test_a_real_chmod_000_folder_is_refused(out: Path) -> None:
    write_outputs(out, FILES)
    secret = out / "private"
    secret.mkdir()
    (secret / "diary.txt").write_text("dear diary\n")
    secret.chmod(0)
    try:
        refused(write_outputs(out, {**FILES, "lisboa_engine.py": "RULES = {}\n"}))
    finally:
        secret.chmod(0o700)
    assert (secret / "diary.txt").read_text() == "dear diary\n"


@pytest.mark.parametrize("kind", ["symlink", "fifo", "symlink to a folder", "folder"])
def test_an_output_that_is_not_a_regular_file_is_stale(out: Path, kind: str) -> None:
    """A symlink (even to the right bytes), a FIFO (never opened blocking) or a folder where an
    output belongs is not what the build wrote."""
    write_outputs(out, FILES)
    rel = "reference/rules.md"
    elsewhere = out.parent / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "rules.md").write_text(FILES[rel])
    (out / rel).unlink()
    if kind == "symlink":
        (out / rel).symlink_to(elsewhere / "rules.md")
    elif kind == "fifo":
        os.mkfifo(out / rel)
    elif kind == "folder":
        (out / rel).mkdir()
    else:
        shutil.rmtree(out / "reference")
        (out / "reference").symlink_to(elsewhere, target_is_directory=True)
    result = write_outputs(out, FILES, check=True)
    if kind == "fifo":  # a special file in the folder: refused, as any other
        refused(result)
    else:
        assert result.ok and rel in result.stale


@pytest.mark.parametrize("late", ["file", "folder with a file", "symlink"])
@pytest.mark.parametrize("exchange", [True, False], ids=["exchange", "two renames"])
def test_a_file_that_appears_during_the_build_is_not_deleted(
    out: Path, late: str, exchange: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Made in the folder after its tree was copied and before the swap: the old tree, which
    holds it, is kept (and reported), not deleted."""
    write_outputs(out, FILES)
    real_exchange = writer._exchange

    def add_then_swap(a: Path, b: Path) -> bool:
        if late == "file":
            (b / "late.txt").write_text("just saved\n")
        elif late == "symlink":
            (b / "late.txt").symlink_to("elsewhere")
        else:
            (b / "late").mkdir()
            (b / "late" / "late.txt").write_text("just saved\n")
        return real_exchange(a, b) if exchange else False

    monkeypatch.setattr(writer, "_exchange", add_then_swap)
    result = write_outputs(out, {**FILES, "lisboa_engine.py": "RULES = {}\n"})
    assert result.ok and result.written == ["lisboa_engine.py"]
    kept = [p for p in out.parent.iterdir() if p.name.startswith(".gen.kept-")]
    assert len(kept) == 1 and any("kept" in d.message for d in result.diagnostics)
    found = kept[0] / ("late/late.txt" if late.startswith("folder") else "late.txt")
    assert found.is_symlink() if late == "symlink" else found.read_text() == "just saved\n"
    assert (out / "lisboa_engine.py").read_text() == "RULES = {}\n"


def test_one_durable_pass_before_the_swap(out: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The staged files are not flushed one by one: one pass flushes every written file and
    every staged folder, and it ends before the swap starts (issue 36)."""
    write_outputs(out, FILES)
    events: list[tuple[str, object]] = []
    real_fsync, real_swap = os.fsync, writer._swap

    def fsync(fd: int) -> None:
        events.append(("fsync", os.readlink(f"/proc/self/fd/{fd}")
                       if os.path.exists("/proc/self/fd") else fd))
        real_fsync(fd)

    def swap(staging: Path, target: Path, lock: object) -> object:
        events.append(("swap", staging))
        return real_swap(staging, target, lock)  # type: ignore[arg-type]

    def write(path: Path, data: bytes) -> None:
        events.append(("write", path))
        writer.files.write_new_file(path, data, sync=False)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(writer, "_swap", swap)
    monkeypatch.setattr(writer, "_write_bytes", write)
    new = {rel: text.replace("\n", "  # v2\n") for rel, text in FILES.items()}
    result = write_outputs(out, new)
    assert sorted(result.written) == sorted(FILES)
    kinds = [k for k, _ in events]
    first_sync, at_swap = kinds.index("fsync"), kinds.index("swap")
    assert set(kinds[:first_sync]) == {"write"}, "no flush while the files are written"
    assert set(kinds[first_sync:at_swap]) == {"fsync"}, "one pass, then the swap"
    staged = events[at_swap][1]
    synced = [str(v) for k, v in events[first_sync:at_swap]]
    if os.path.exists("/proc/self/fd"):  # which paths were flushed: every file, every folder
        files = [str(p) for k, p in events if k == "write"]
        assert set(files) <= set(synced)
        assert str(staged) in synced and str(staged / "reference") in synced
    written = [p for k, p in events if k == "write"]
    assert len(written) == len(FILES)  # the manifest lists the same files: kept
    assert len(synced) == len(written) + 2 + 1  # each file once, 2 subfolders, the root
    assert kinds[at_swap + 1:] == ["fsync"], "the folder holding the swap is flushed after it"
    assert {p.relative_to(out).as_posix(): p.read_text() for p in out.rglob("*")
            if p.is_file() and p.name != MANIFEST} == new
