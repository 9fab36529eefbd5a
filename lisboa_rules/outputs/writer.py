"""Last stage, write: `{relative path: text}` -> the output folder, all at once or not at all.

Contract:
- Every `*.py` output must `compile()` first; otherwise nothing is written (generated-invalid).
- Nothing is touched when every output is already up to date (mtimes stay put).
- Otherwise the complete new tree is built in a sibling temp folder (unchanged files are hard
  links, so they keep their inode and mtime) and swapped in: in one atomic exchange where the
  system has one (Linux renameat2), else with two renames. Any failure leaves the folder
  exactly as it was and becomes a write-failed diagnostic. The staged files are written
  without a flush each; one pass flushes the whole new tree (its files, then its folders)
  right before the swap, and the folder holding it is flushed after, so one build costs one
  durable swap. A build killed part-way (SIGKILL, power loss) leaves the old or the new
  folder complete in place; the next build removes its
  temp folders (and, after an interrupted two-rename swap, moves the old folder back first).
- Ownership: `.manifest` in the output folder lists the files lisboa-rules wrote. Only those are
  ever pruned. Other files ("strays", e.g. a user's notes) are kept and reported as warnings.
- `check`/`diff` write nothing and report what would change. Every output, the manifest
  included, is compared byte for byte: there is no stamp that could vouch for a folder.
- Safety: a build never removes or moves a file it did not write. It refuses (unsafe-output)
  an output folder that is the root of the file system, the home folder, the rules folder or
  an ancestor of one of these, or (when writing) the current directory or one of its
  ancestors, which the swap would leave the caller standing in a deleted folder; and one that
  holds an entry it cannot carry over into the new tree (a folder it cannot list, a file it
  cannot read, a FIFO, socket or device). An output folder that is a symlink (to a folder, or
  dangling) is replaced by the new folder, never written through: nothing where it points is
  read, copied or changed (`check`/`diff` read through it). The new tree is staged in a 0700
  folder, each file made with O_EXCL | O_NOFOLLOW (outputs/files.py), and given the output
  folder's mode on its descriptor just before the swap.
- Temp folders: `.NAME.new-TOKEN` / `.NAME.old-TOKEN`, each build holding an advisory lock
  (flock) on `.NAME.lock-TOKEN` for as long as it runs. Crash recovery only touches the temp
  folders whose lock it can take, i.e. whose build is gone, whatever process or PID namespace
  it ran in; a temp folder without a lock file is never touched.
"""

from __future__ import annotations

import contextlib
import ctypes
import difflib
import errno
import fcntl
import functools
import os
import re
import shutil
import stat
import sys
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from lisboa_rules.core.diagnostics import Diagnostic, has_errors
from lisboa_rules.core.source import Span, display_path
from lisboa_rules.outputs import files, pycode

MANIFEST = ".manifest"
_MANIFEST_HEADER = (
    "# Files written by lisboa-rules; only these are pruned. Do not edit.\n"
    "# Other files in this folder are left alone and reported as strays.\n"
)
_TOKEN = re.compile(r"[0-9a-f]{32}")  # the id of one build's temp folders and lock file


@dataclass
class WriteResult:
    """What `write_outputs` did (or, in check mode, would do); paths relative to `display`."""

    display: str
    written: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    strays: list[str] = field(default_factory=list)
    diff_text: str = ""
    diagnostics: list[Diagnostic] = field(default_factory=list)
    reasons: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """Return True when no error diagnostic was produced."""
        return not has_errors(self.diagnostics)

    def messages(self) -> list[str]:
        """Return `would regenerate generated/x` lines for every stale output."""
        return [
            f"would {self.reasons.get(rel, 'regenerate')} {self.path(rel)}" for rel in self.stale
        ]

    def path(self, rel: str) -> str:
        """Return the display path of an output."""
        return f"{self.display}/{rel}" if self.display not in ("", ".") else rel


@dataclass
class _Plan:
    """The difference between the wanted outputs and the folder as it is."""

    wanted: dict[str, bytes]
    changed: list[str]
    unchanged: list[str]
    remove: list[str]
    strays: list[str]
    old: dict[str, bytes | None]


class UnsafeOutput(Exception):
    """The output folder is one a build must not replace (see the module's Safety note)."""


def write_outputs(
    out_dir: Path,
    files: Mapping[str, str],
    *,
    check: bool = False,
    diff: bool = False,
    prune: bool = True,
    protect: Iterable[Path] = (),
) -> WriteResult:
    """Bring `out_dir` up to date with `files` atomically; `check`/`diff` only report.

    `protect`: folders (e.g. the rules folder) that `out_dir` must not be, nor contain.
    """
    for rel in files:
        _check_rel(rel)
    result = WriteResult(display=display_dir(out_dir))
    result.diagnostics = compile_check(files, result.display)
    if result.diagnostics:
        return result
    if out_dir.exists() and not out_dir.is_dir():
        return _failed(result, f"'{result.display}' exists and is not a directory")
    writing = not (check or diff)
    link = writing and _replaced_link(out_dir)  # check and diff only read, through it
    try:
        _refuse_unsafe_target(out_dir, result.display, protect, writing)
        if writing:
            _recover(out_dir)
        plan = _make_plan(out_dir, files, prune, fresh=link)
    except UnsafeOutput as exc:
        result.diagnostics.append(Diagnostic("unsafe-output", str(exc), None))
        return result
    except OSError as exc:
        return _failed(result, f"cannot read '{result.display}': {_reason(exc)}")
    _fill_result(result, plan)
    if diff:
        result.diff_text = _diff(plan, result)
    if not writing or not plan.changed:
        return result
    try:
        target = out_dir.parent.resolve() / out_dir.name if link else out_dir.resolve()
        kept = _rebuild(target, plan, fresh=link)
    except Exception as exc:
        return _failed(result, f"cannot update '{result.display}' (left unchanged): {_reason(exc)}")
    result.written = [r for r in plan.changed if r != MANIFEST]
    result.removed = list(plan.remove)
    if kept is not None:
        msg = (f"files appeared in '{result.display}' while it was rebuilt; the old folder "
               f"is kept as '{display_dir(kept)}': move them back and delete it")
        result.diagnostics.append(Diagnostic("stray-output", msg, None))
    return result


def _replaced_link(out_dir: Path) -> bool:
    """Whether `out_dir` is a symlink the build replaces with the new folder rather than
    writing through it: one to a folder, or a dangling one (a symlink planted in a shared
    folder must not send the build into someone else's folder). A symlink loop is left to
    fail as any unreadable folder; a symlink to a file fails as any file does."""
    if not out_dir.is_symlink():
        return False
    try:
        return stat.S_ISDIR(os.stat(out_dir).st_mode)
    except FileNotFoundError:
        return True
    except (OSError, RuntimeError):
        return False


def _manifest_bytes(listed: Sequence[str]) -> bytes:
    """The manifest a build writes for these files (sorted)."""
    return (_MANIFEST_HEADER + "".join(f"{r}\n" for r in listed)).encode("utf-8")


def _refuse_unsafe_target(out_dir: Path, display: str, protect: Iterable[Path],
                          writing: bool) -> None:
    """Raise UnsafeOutput for an output folder a build must not replace (or, for `/` and the
    home folder, even walk): the root of the file system; the home folder, a protected folder
    (the rules), or, when writing, the current directory, or an ancestor of any of them."""
    try:
        target = out_dir.resolve()
    except (OSError, RuntimeError):
        return  # a symlink loop and the like: reading the folder reports it
    if target.parent == target:
        raise UnsafeOutput(f"refusing to use '{display}' as the output folder: it is the root "
                           "of the file system; give a folder of its own (default: generated)")
    guarded: list[tuple[Path, str]] = []
    home = os.path.expanduser("~")
    if home != "~":
        guarded.append((Path(home), "your home folder"))
    guarded.extend((Path(p), f"the rules folder '{display_dir(Path(p))}'") for p in protect)
    if writing:
        with contextlib.suppress(OSError):
            guarded.append((Path.cwd(), "the current directory"))
    for path, what in guarded:
        try:
            real = path.resolve()
        except (OSError, RuntimeError):
            continue
        if real == target:
            relation = "it is"
        elif target in real.parents:
            relation = "it contains"
        else:
            continue
        hint = ("the build replaces the whole folder, which would leave you in a deleted "
                "directory: run it from outside" if "current" in what
                else "give a folder of its own (default: generated)")
        raise UnsafeOutput(f"refusing to use '{display}' as the output folder: {relation} "
                           f"{what}; {hint}")


def display_dir(out_dir: Path) -> str:
    """The output folder as shown in messages (a symlink loop cannot be made relative)."""
    try:
        return display_path(out_dir)
    except (RuntimeError, OSError):
        return out_dir.as_posix()


def compile_check(files: Mapping[str, str], display: str) -> list[Diagnostic]:
    """Return a generated-invalid diagnostic for every `*.py` output that does not compile."""
    diags: list[Diagnostic] = []
    for rel in sorted(files):
        if not rel.endswith(".py"):
            continue
        shown = f"{display}/{rel}" if display not in ("", ".") else rel
        if pycode.known_to_compile(files[rel]):
            continue  # compiled earlier in this run (the reference ran it)
        try:
            pycode.compile_module(files[rel], shown)
        except SyntaxError as exc:
            line, col = exc.lineno or 1, exc.offset or 1
            span = Span(shown, line, col, exc.end_lineno or line, exc.end_offset or col)
            msg = f"generated code does not compile: {exc.msg}"
            diags.append(Diagnostic("generated-invalid", msg, span))
        except ValueError as exc:  # e.g. a NUL character in the source
            msg = f"generated code does not compile: {exc}"
            diags.append(Diagnostic("generated-invalid", msg, Span.point(shown)))
    return diags


def _check_rel(rel: str) -> None:
    """Refuse output paths that could escape the folder or clash with the manifest."""
    if not _is_safe_rel(rel) or rel == MANIFEST:
        raise ValueError(f"invalid output path {rel!r}: need a relative POSIX path")


def _is_safe_rel(rel: str) -> bool:
    """Return True for a normalised relative POSIX path without `..`."""
    pure = PurePosixPath(rel)
    return (
        bool(rel)
        and "\\" not in rel
        and not pure.is_absolute()
        and pure.as_posix() == rel
        and all(part not in ("", ".", "..") for part in pure.parts)
    )


def _failed(result: WriteResult, message: str) -> WriteResult:
    """Attach a write-failed diagnostic to `result`."""
    result.diagnostics.append(Diagnostic("write-failed", message, None))
    return result


def _reason(exc: BaseException) -> str:
    """Return a short description of an exception."""
    if isinstance(exc, OSError) and exc.strerror:
        where = f": {exc.filename}" if exc.filename else ""
        return f"{exc.strerror}{where}"
    return f"{type(exc).__name__}: {exc}"


# --- planning ------------------------------------------------------------------------------


def _make_plan(
    out_dir: Path, files: Mapping[str, str], prune: bool, fresh: bool = False
) -> _Plan:
    """Compare the wanted outputs with the folder's current files (`fresh`: with none, for a
    symlink the new folder replaces: nothing is read through it)."""
    if fresh:
        wanted = {rel: files[rel].encode("utf-8") for rel in sorted(files)}
        wanted[MANIFEST] = _manifest_bytes(sorted(files))
        return _Plan(wanted, list(wanted), [], [], [], dict.fromkeys(wanted))
    existing = _survey(out_dir)
    owned = _read_manifest(out_dir) & existing
    gone = sorted(owned - set(files))
    remove = gone if prune else []
    listed = sorted(set(files) | (set() if prune else set(gone)))
    wanted = {rel: files[rel].encode("utf-8") for rel in sorted(files)}
    wanted[MANIFEST] = _manifest_bytes(listed)
    old = {rel: _read_output(out_dir, rel) for rel in wanted}
    changed = [rel for rel, data in wanted.items() if old[rel] != data]
    unchanged = [rel for rel in wanted if rel not in changed and rel != MANIFEST]
    strays = sorted(existing - set(wanted) - owned)
    for rel in remove:
        old[rel] = _read_output(out_dir, rel)
    return _Plan(wanted, changed, unchanged, remove, strays, old)


def _survey(out_dir: Path) -> set[str]:
    """The relative POSIX paths of all files (and symlinks) under `out_dir`. Raises
    UnsafeOutput when an entry could not be carried over into the new tree: a folder that
    cannot be listed or entered, a file that cannot be read, anything that is not a folder,
    a regular file or a symlink (a FIFO, a socket, a device). A symlink is a leaf: never
    followed. Raises OSError when the folder itself cannot be read."""
    if not out_dir.is_dir():
        return set()
    found: set[str] = set()
    problems: list[str] = []

    def walk(folder: Path, prefix: str) -> None:
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            if not prefix:
                raise
            problems.append(f"{prefix.rstrip('/')}/ (cannot list it: {_reason(exc)})")
            return
        for e in entries:
            rel = prefix + e.name
            try:
                mode = e.stat(follow_symlinks=False).st_mode
            except OSError as exc:
                problems.append(f"{rel} ({_reason(exc)})")
                continue
            if stat.S_ISLNK(mode):
                found.add(rel)
            elif stat.S_ISDIR(mode):
                if os.access(e.path, os.R_OK | os.X_OK, follow_symlinks=False):
                    walk(Path(e.path), rel + "/")
                else:
                    problems.append(f"{rel}/ (permission denied)")
            elif stat.S_ISREG(mode):
                found.add(rel)
                if not os.access(e.path, os.R_OK, follow_symlinks=False):
                    problems.append(f"{rel} (permission denied)")
            else:
                problems.append(f"{rel} (a {_kind(mode)}, which is never moved)")

    walk(out_dir, "")
    if problems:
        display = display_dir(out_dir)
        shown = ", ".join(f"{display}/{p}" for p in problems[:5])
        more = f" and {len(problems) - 5} more" if len(problems) > 5 else ""
        raise UnsafeOutput(f"refusing to update '{display}': it holds entries a build cannot "
                           f"carry over into the new folder: {shown}{more}; move them out of "
                           "the output folder (or make them readable)")
    return found


def _kind(mode: int) -> str:
    """The kind of a special file, in words."""
    if stat.S_ISFIFO(mode):
        return "FIFO"
    if stat.S_ISSOCK(mode):
        return "socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "device file"
    return "special file"


def _read_manifest(out_dir: Path) -> set[str]:
    """Return the outputs the previous build claimed (ignoring anything unsafe)."""
    data = _read_output(out_dir, MANIFEST)
    if data is None:
        return set()
    lines = data.decode("utf-8", "replace").splitlines()
    return {ln for ln in lines if ln and not ln.startswith("#") and _is_safe_rel(ln)}


def _read_output(out_dir: Path, rel: str) -> bytes | None:
    """The bytes of the output `rel` as it is in `out_dir`, or None when it is missing or not
    a regular file reached without a symlink inside the folder (a symlink, even to a file
    with the right bytes, is not an output the build wrote). Never blocks on a FIFO."""
    folder = out_dir
    for part in PurePosixPath(rel).parts[:-1]:
        folder = folder / part
        try:
            if not stat.S_ISDIR(os.lstat(folder).st_mode):
                return None
        except FileNotFoundError:
            return None
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK
    try:
        fd = os.open(out_dir / rel, flags)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # a symlink
            return None
        raise
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _fill_result(result: WriteResult, plan: _Plan) -> None:
    """Record the plan in the result and report strays."""
    result.unchanged = list(plan.unchanged)
    result.strays = list(plan.strays)
    result.stale = sorted([*plan.changed, *plan.remove])
    for rel in plan.changed:
        result.reasons[rel] = "create" if plan.old[rel] is None else "regenerate"
    for rel in plan.remove:
        result.reasons[rel] = "remove"
    for rel in plan.strays:
        msg = f"not written by lisboa-rules (not in {MANIFEST}); left alone"
        result.diagnostics.append(Diagnostic("stray-output", msg, Span.point(result.path(rel))))


def _diff(plan: _Plan, result: WriteResult) -> str:
    """Return unified diffs (a/ -> b/) for every stale output."""
    chunks: list[str] = []
    for rel in result.stale:
        before = _lines(plan.old.get(rel))
        after = _lines(plan.wanted.get(rel))
        name = result.path(rel)
        chunks.extend(difflib.unified_diff(before, after, f"a/{name}", f"b/{name}"))
    return "".join(chunks)


def _lines(data: bytes | None) -> list[str]:
    """Split file bytes into diff lines, marking a missing final newline like git does."""
    if not data:
        return []
    lines = data.decode("utf-8", "replace").splitlines(keepends=True)
    if not lines[-1].endswith("\n"):
        lines[-1] += "\n\\ No newline at end of file\n"
    return lines


# --- writing -------------------------------------------------------------------------------


def _rebuild(target: Path, plan: _Plan, fresh: bool = False) -> Path | None:
    """Build the new tree next to `target`, then swap it in; clean up on any failure. Returns
    None, or the old folder when it could not be deleted because files appeared in it that
    the new tree does not hold (kept as `.NAME.kept-TOKEN`, never touched by recovery).
    `fresh`: `target` is a symlink, replaced by the new tree (nothing of where it points is
    read, copied or changed)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with _BuildLock(target) as lock:
        staging = lock.path("new")
        staging.mkdir(0o700)
        try:
            # The staging folder stays 0700 (only this user can plant anything in it) until
            # the tree is complete; it gets the target's mode just before the swap.
            mode = _dir_mode(None if fresh else target)
            if not fresh and target.is_dir():
                _replicate(target, staging, skip={*plan.changed, *plan.remove})
            written: list[Path] = []
            for rel in plan.changed:
                dest = staging / rel
                dest.parent.mkdir(parents=True, exist_ok=True)
                _write_bytes(dest, plan.wanted[rel])
                written.append(dest)
            _remove_emptied_dirs(staging, plan.remove)
            _set_dir_mode(staging, mode)
            _sync(staging, written)  # one pass: the whole new tree on disk before the swap
            old = _swap(staging, target, lock)
            files.sync_folder(target.parent)  # the swap itself on disk
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        if old is not None and old.is_symlink():  # the replaced symlink: only the link goes
            os.unlink(old)
            return None
        return None if old is None else _discard_old(old, target, plan)


def _discard_old(old: Path, new: Path, plan: _Plan) -> Path | None:
    """Delete the old tree (moved aside by the swap) when every file in it is one this build
    replaced or pruned, or is also in the new tree (the same inode: a hard link). Otherwise a
    file appeared in the output folder while the new tree was made: keep the old tree under a
    name crash recovery never touches, and return that name."""
    for root, dirs, names in os.walk(old):
        base = Path(root)
        for name in [*names, *(d for d in dirs if (base / d).is_symlink())]:
            rel = (base / name).relative_to(old).as_posix()
            if rel in plan.changed or rel in plan.remove:
                continue
            if not _same_entry(base / name, new / rel):
                return _keep(old, new)
    shutil.rmtree(old, ignore_errors=True)
    return None


def _same_entry(a: Path, b: Path) -> bool:
    """Whether two paths are the same file (a hard link), or symlinks with the same target."""
    try:
        sa, sb = os.lstat(a), os.lstat(b)
        if stat.S_ISLNK(sa.st_mode):
            return stat.S_ISLNK(sb.st_mode) and os.readlink(a) == os.readlink(b)
        return os.path.samestat(sa, sb)
    except OSError:
        return False


def _keep(old: Path, target: Path) -> Path:
    """Move the old tree to a name that crash recovery never touches."""
    kept = target.with_name(f".{target.name}.kept-{uuid.uuid4().hex}")
    _rename(old, kept)
    return kept


class _BuildLock:
    """The advisory lock that marks this build's temp folders as live: an flock on
    `.NAME.lock-TOKEN`, held from before the first temp folder exists until after the last
    one is gone. The lock file is made with O_EXCL and, once locked, checked to still be the
    file at its path (a recovery that took it first would have unlinked it); then it is ours.
    On a file system without flock the file stays unlocked and recovery, which cannot take
    the lock either, leaves the folders alone."""

    def __init__(self, target: Path) -> None:
        self.target = target
        self.token = ""
        self.fd = -1

    def path(self, kind: str) -> Path:
        return self.target.with_name(f".{self.target.name}.{kind}-{self.token}")

    def __enter__(self) -> _BuildLock:
        for _ in range(100):
            self.token = uuid.uuid4().hex
            lock = self.path("lock")
            fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            # Without flock here nobody can take the lock, so nobody recovers our folders.
            with contextlib.suppress(OSError):
                fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                if os.path.samestat(os.fstat(fd), os.lstat(lock)):
                    self.fd = fd
                    return self
            except FileNotFoundError:
                pass
            os.close(fd)
        raise OSError(errno.EAGAIN, "cannot create a lock file", str(self.target.parent))

    def __exit__(self, *exc: object) -> None:
        with contextlib.suppress(OSError):
            os.unlink(self.path("lock"))
        os.close(self.fd)


def _dir_mode(target: Path | None) -> int:
    """The mode the new output folder gets: the target's, or a new folder's (0777 less the
    umask)."""
    if target is not None and target.is_dir():
        return stat.S_IMODE(os.stat(target).st_mode)
    umask = os.umask(0)
    os.umask(umask)
    return 0o777 & ~umask


def _set_dir_mode(staging: Path, mode: int) -> None:
    """Give the staging folder `mode` on its own descriptor (it was made 0700), never through
    a path that could have become a symlink."""
    fd = os.open(staging, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        os.fchmod(fd, mode)
    finally:
        os.close(fd)


def _replicate(src: Path, dst: Path, skip: set[str]) -> None:
    """Recreate `src` under `dst`: dirs copied, files hard-linked (or copied), `skip` left out."""
    for root, dirs, names in os.walk(src, onerror=_raise):
        base = Path(root)
        rel_dir = base.relative_to(src)
        for d in dirs:
            if (base / d).is_symlink():
                names.append(d)
            else:
                (dst / rel_dir / d).mkdir()
                shutil.copymode(base / d, dst / rel_dir / d)
        dirs[:] = [d for d in dirs if not (base / d).is_symlink()]
        for name in names:
            rel = (rel_dir / name).as_posix()
            if rel not in skip:
                _link_or_copy(base / name, dst / rel_dir / name)


def _raise(exc: OSError) -> None:
    """os.walk's error handler: a folder that cannot be listed fails the build (nothing may be
    left behind in the old tree)."""
    raise exc


def _link_or_copy(src: Path, dst: Path) -> None:
    """Hard-link a file (same inode, same mtime); copy when links are not possible."""
    if src.is_symlink():
        os.symlink(os.readlink(src), dst)
        return
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def _write_bytes(path: Path, data: bytes) -> None:
    """Write one staged file (exact bytes: UTF-8 with `\\n`, no newline translation), as a new
    file (O_EXCL | O_NOFOLLOW: nothing at its name is opened or followed), not flushed yet:
    `_sync` makes the whole staged tree durable in one pass before the swap."""
    files.write_new_file(path, data, sync=False)


def _sync(staging: Path, written: list[Path]) -> None:
    """The staged tree on disk before it is swapped in (a seam for tests): every file written,
    then every folder, in one pass, so a crash after the swap finds the new tree whole."""
    files.sync_tree(staging, written)


def _remove_emptied_dirs(root: Path, removed: list[str]) -> None:
    """Delete folders that only held pruned outputs (deepest first)."""
    parents = {p for rel in removed for p in PurePosixPath(rel).parents if str(p) != "."}
    for rel in sorted(parents, key=lambda p: len(p.parts), reverse=True):
        folder = root / rel
        if folder.is_dir() and not folder.is_symlink() and not any(folder.iterdir()):
            folder.rmdir()


def _swap(staging: Path, target: Path, lock: _BuildLock) -> Path | None:
    """Put `staging` in place of `target`; return where the old tree now is (None when there
    was none).

    Where the system can (Linux renameat2 RENAME_EXCHANGE), the two folders trade places in
    one atomic step: even a SIGKILL leaves either the old or the new folder complete in place.
    Elsewhere two renames are used, and `target` is restored if the second one fails; a kill
    between them leaves the old folder as `.NAME.old-TOKEN`, which the next build puts back
    (`_recover`).
    """
    if not target.exists() and not target.is_symlink():
        _rename(staging, target)
        return None
    if _exchange(staging, target):
        return staging  # it now holds the old tree
    backup = lock.path("old")
    _rename(target, backup)
    try:
        _rename(staging, target)
    except BaseException:
        _rename(backup, target)
        raise
    return backup


def _rename(src: Path, dst: Path) -> None:
    """Rename a folder (a seam for failure-injection tests)."""
    os.rename(src, dst)


_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


@functools.cache
def _renameat2() -> Callable[..., int] | None:
    """libc's renameat2, or None where there is none (not Linux, old C library)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        fn = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return None
    fn.argtypes = (ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint)
    fn.restype = ctypes.c_int
    return fn


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two existing paths; False when this system or file system cannot."""
    fn = _renameat2()
    if fn is None:
        return False
    if fn(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP, errno.ENOTSUP):
        return False
    raise OSError(code, os.strerror(code), str(b))


def _recover(target: Path) -> None:
    """Clean up after builds that were killed: put back a folder left moved aside, and delete
    the temp folders of builds that are gone. A build is gone when its lock can be taken
    (`_BuildLock`); a live build's folders, in whatever process or PID namespace it runs, and
    folders without a lock file are left alone."""
    if not target.parent.is_dir():
        return
    lock_prefix = f".{target.name}.lock-"
    for entry in sorted(target.parent.iterdir()):
        token = entry.name[len(lock_prefix):]
        if entry.name.startswith(lock_prefix) and _TOKEN.fullmatch(token):
            _recover_one(target, entry, token)


def _recover_one(target: Path, lock: Path, token: str) -> None:
    """Recover the temp folders of one build if its lock can be taken."""
    try:
        fd = os.open(lock, os.O_RDWR | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return  # held: a live build (or no flock on this file system: cannot tell)
        if not os.path.samestat(os.fstat(fd), os.lstat(lock)):
            return
        new, old = (target.with_name(f".{target.name}.{k}-{token}") for k in ("new", "old"))
        if not target.exists() and old.is_dir() and not old.is_symlink():
            _rename(old, target)  # killed between the two renames of a swap
        for path in (new, old):
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path, ignore_errors=True)
        if not new.exists() and not old.exists():
            os.unlink(lock)
    except OSError:
        return
    finally:
        os.close(fd)
