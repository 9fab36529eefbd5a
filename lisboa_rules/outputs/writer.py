"""Last stage, write: `{relative path: text}` -> the output folder, all at once or not at all.

Contract:
- Every `*.py` output must `compile()` first; otherwise nothing is written (generated-invalid).
- Nothing is touched when every output is already up to date (mtimes stay put).
- Otherwise the complete new tree is built in a sibling temp folder (unchanged files are hard
  links, so they keep their inode and mtime) and swapped in: in one atomic exchange where the
  system has one (Linux renameat2), else with two renames. Any failure leaves the folder
  exactly as it was and becomes a write-failed diagnostic. A build killed part-way (SIGKILL,
  power loss) leaves the old or the new folder complete in place; the next build removes its
  temp folders (and, after an interrupted two-rename swap, moves the old folder back first).
- Ownership: `.manifest` in the output folder lists the files lisboa-rules wrote. Only those are
  ever pruned. Other files ("strays", e.g. a user's notes) are kept and reported as warnings.
- `check`/`diff` write nothing and report what would change.
- Stamp: `.manifest` also records one sha256 of all the outputs, so `stamp_matches` can tell
  without building that a folder holds exactly a known set of outputs (the build cache knows
  which set a build key produces). The line is bookkeeping: a folder whose files are all up
  to date is up to date whatever that line says (a build then rewrites it quietly), and the
  manifest is only reported stale when its list of files changes.
"""

from __future__ import annotations

import ctypes
import difflib
import errno
import functools
import hashlib
import os
import shutil
import sys
import tempfile
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from lisboa_rules.core.diagnostics import Diagnostic, has_errors
from lisboa_rules.core.source import Span, display_path
from lisboa_rules.outputs import pycode

MANIFEST = ".manifest"
_MANIFEST_HEADER = (
    "# Files written by lisboa-rules; only these are pruned. Do not edit.\n"
    "# Other files in this folder are left alone and reported as strays.\n"
)
_OUTPUTS = "# outputs-sha256: "


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
    quiet: bool = False  # the manifest differs in comment lines only: rewrite, do not report


def _bookkeeping_only(old: bytes | None, body: str) -> bool:
    """Whether an old manifest lists the same files (its comment lines may differ)."""
    if old is None:
        return False
    lines = old.decode("utf-8", "replace").splitlines(keepends=True)
    return "".join(ln for ln in lines if not ln.startswith("#")) == body


def write_outputs(
    out_dir: Path,
    files: Mapping[str, str],
    *,
    check: bool = False,
    diff: bool = False,
    prune: bool = True,
    trusted: bool = False,
) -> WriteResult:
    """Bring `out_dir` up to date with `files` atomically; `check`/`diff` only report.

    `trusted` skips the compile check for outputs that already passed it (the build cache
    keeps only builds that did).
    """
    for rel in files:
        _check_rel(rel)
    result = WriteResult(display=display_dir(out_dir))
    result.diagnostics = [] if trusted else compile_check(files, result.display)
    if result.diagnostics:
        return result
    if out_dir.exists() and not out_dir.is_dir():
        return _failed(result, f"'{result.display}' exists and is not a directory")
    try:
        if not (check or diff):
            _recover(out_dir)
        plan = _make_plan(out_dir, files, prune)
    except OSError as exc:
        return _failed(result, f"cannot read '{result.display}': {_reason(exc)}")
    _fill_result(result, plan)
    if diff:
        result.diff_text = _diff(plan, result)
    if check or diff or not plan.changed:
        return result
    try:
        _rebuild(out_dir.resolve(), plan)
    except Exception as exc:
        return _failed(result, f"cannot update '{result.display}' (left unchanged): {_reason(exc)}")
    result.written = [r for r in plan.changed if r != MANIFEST]
    result.removed = list(plan.remove)
    return result


def stamp_matches(out_dir: Path, expected: str) -> bool:
    """Whether `out_dir` holds exactly the outputs whose `outputs_hash` is `expected`: its
    manifest is byte for byte the one a build writes for them, every listed file is there and
    hashes to it, and nothing else is there (strays and leftovers of a killed build need the
    full path, which reports or repairs them)."""
    try:
        data = _read_or_none(out_dir / MANIFEST)
        if data is None:
            return False
        listed = sorted(_read_manifest(out_dir))
        if data != _manifest_bytes(expected, listed):
            return False
        if _list_files(out_dir) != {*listed, MANIFEST} or _leftovers(out_dir):
            return False
        found: dict[str, bytes] = {}
        for rel in listed:
            content = _read_or_none(out_dir / rel)
            if content is None:
                return False
            found[rel] = content
        return _hash_bytes(found) == expected
    except (OSError, UnicodeDecodeError, ValueError):
        return False


def _manifest_bytes(outputs_hash: str, listed: Sequence[str]) -> bytes:
    """The manifest a build writes for these files (sorted) and this outputs hash."""
    body = "".join(f"{r}\n" for r in listed)
    return (_MANIFEST_HEADER + f"{_OUTPUTS}{outputs_hash}\n" + body).encode("utf-8")


def outputs_hash(files: Mapping[str, str]) -> str:
    """One sha256 over every output's path and bytes (what the manifest records)."""
    return _hash_bytes({rel: text.encode("utf-8") for rel, text in files.items()})


def _hash_bytes(files: Mapping[str, bytes]) -> str:
    """One sha256 over every output's path and bytes, in path order."""
    h = hashlib.sha256()
    for rel in sorted(files):
        h.update(f"{rel} {len(files[rel])}\n".encode())
        h.update(files[rel])
    return h.hexdigest()


def _leftovers(target: Path) -> bool:
    """Whether temp folders of an earlier build sit next to `target`."""
    prefixes = (f".{target.name}.new-", f".{target.name}.old-")
    return any(e.name.startswith(prefixes) for e in target.parent.iterdir())


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


def _make_plan(out_dir: Path, files: Mapping[str, str], prune: bool) -> _Plan:
    """Compare the wanted outputs with the folder's current files."""
    existing = _list_files(out_dir)
    owned = _read_manifest(out_dir) & existing
    gone = sorted(owned - set(files))
    remove = gone if prune else []
    listed = sorted(set(files) | (set() if prune else set(gone)))
    wanted = {rel: files[rel].encode("utf-8") for rel in sorted(files)}
    body = "".join(f"{r}\n" for r in listed)
    wanted[MANIFEST] = _manifest_bytes(_hash_bytes(wanted), listed)
    old = {rel: _read_or_none(out_dir / rel) for rel in wanted}
    changed = [rel for rel, data in wanted.items() if old[rel] != data]
    # The manifest's comment lines (the outputs hash) are bookkeeping: rewritten with the
    # files, but a manifest is only reported stale when the list of files changes.
    quiet = MANIFEST in changed and _bookkeeping_only(old[MANIFEST], body)
    unchanged = [rel for rel in wanted if rel not in changed and rel != MANIFEST]
    strays = sorted(existing - set(wanted) - owned)
    for rel in remove:
        old[rel] = _read_or_none(out_dir / rel)
    return _Plan(wanted, changed, unchanged, remove, strays, old, quiet)


def _list_files(out_dir: Path) -> set[str]:
    """Return the relative POSIX paths of all files (and symlinks) under `out_dir`."""
    if not out_dir.is_dir():
        return set()
    found: set[str] = set()
    for root, dirs, names in os.walk(out_dir):
        base = Path(root)
        dirs.sort()
        # A symlinked directory is a leaf for us: never descend into (or prune through) it.
        names = [*names, *(d for d in dirs if (base / d).is_symlink())]
        found.update((base / n).relative_to(out_dir).as_posix() for n in names)
    return found


def _read_manifest(out_dir: Path) -> set[str]:
    """Return the outputs the previous build claimed (ignoring anything unsafe)."""
    data = _read_or_none(out_dir / MANIFEST)
    if data is None:
        return set()
    lines = data.decode("utf-8", "replace").splitlines()
    return {ln for ln in lines if ln and not ln.startswith("#") and _is_safe_rel(ln)}


def _read_or_none(path: Path) -> bytes | None:
    """Return a file's bytes, or None when it is missing or not a regular file."""
    try:
        return path.read_bytes() if path.is_file() else None
    except FileNotFoundError:
        return None


def _fill_result(result: WriteResult, plan: _Plan) -> None:
    """Record the plan in the result and report strays."""
    result.unchanged = list(plan.unchanged)
    result.strays = list(plan.strays)
    shown = [rel for rel in plan.changed if not (plan.quiet and rel == MANIFEST)]
    result.stale = sorted([*shown, *plan.remove])
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


def _rebuild(target: Path, plan: _Plan) -> None:
    """Build the new tree next to `target`, then swap it in; clean up on any failure."""
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.new-{os.getpid()}-",
                                    dir=target.parent))
    try:
        _fix_dir_mode(staging, target)
        if target.is_dir():
            _replicate(target, staging, skip={*plan.changed, *plan.remove})
        for rel in plan.changed:
            dest = staging / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            _write_bytes(dest, plan.wanted[rel])
        _remove_emptied_dirs(staging, plan.remove)
        _swap(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _fix_dir_mode(staging: Path, target: Path) -> None:
    """Give the staging folder the target's mode (mkdtemp makes it 0700)."""
    if target.is_dir():
        shutil.copymode(target, staging)
    else:
        umask = os.umask(0)
        os.umask(umask)
        staging.chmod(0o777 & ~umask)


def _replicate(src: Path, dst: Path, skip: set[str]) -> None:
    """Recreate `src` under `dst`: dirs copied, files hard-linked (or copied), `skip` left out."""
    for root, dirs, names in os.walk(src):
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
    """Write one staged file (exact bytes: UTF-8 with `\\n`, no newline translation)."""
    with path.open("wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())


def _remove_emptied_dirs(root: Path, removed: list[str]) -> None:
    """Delete folders that only held pruned outputs (deepest first)."""
    parents = {p for rel in removed for p in PurePosixPath(rel).parents if str(p) != "."}
    for rel in sorted(parents, key=lambda p: len(p.parts), reverse=True):
        folder = root / rel
        if folder.is_dir() and not folder.is_symlink() and not any(folder.iterdir()):
            folder.rmdir()


def _swap(staging: Path, target: Path) -> None:
    """Put `staging` in place of `target`.

    Where the system can (Linux renameat2 RENAME_EXCHANGE), the two folders trade places in
    one atomic step: even a SIGKILL leaves either the old or the new folder complete in place.
    Elsewhere two renames are used, and `target` is restored if the second one fails; a kill
    between them leaves the old folder as `.NAME.old-PID-...`, which the next build puts back
    (`_recover`).
    """
    if not target.exists():
        _rename(staging, target)
        return
    if _exchange(staging, target):
        shutil.rmtree(staging, ignore_errors=True)  # it now holds the old tree
        return
    backup = target.with_name(f".{target.name}.old-{os.getpid()}-{uuid.uuid4().hex[:12]}")
    _rename(target, backup)
    try:
        _rename(staging, target)
    except BaseException:
        _rename(backup, target)
        raise
    shutil.rmtree(backup, ignore_errors=True)


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
    """Clean up after a build that was killed: put back a folder left moved aside, and delete
    the temp folders of builds whose process is gone (a live build's folders are left alone)."""
    dead: list[tuple[str, Path]] = []
    if not target.parent.is_dir():
        return
    for entry in sorted(target.parent.iterdir()):
        for kind in ("new", "old"):
            prefix = f".{target.name}.{kind}-"
            if entry.name.startswith(prefix):
                pid = entry.name[len(prefix) :].split("-", 1)[0]
                if pid.isdigit() and not _alive(int(pid)):
                    dead.append((kind, entry))
    if not target.exists():
        backups = [p for kind, p in dead if kind == "old" and p.is_dir()]
        if backups:
            _rename(backups[0], target)
    for _, path in dead:
        if path.exists() and path != target:
            shutil.rmtree(path, ignore_errors=True)


def _alive(pid: int) -> bool:
    """Whether a process with this id exists."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # e.g. EPERM: it exists but belongs to someone else
        return True
    return True
