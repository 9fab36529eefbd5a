"""Writing one file without following a symlink anyone could have planted.

Every file lisboa-rules writes goes through here (the build's output folder through the writer,
which stages its tree with `write_new_file`):

- `write_file_atomic(path, data, mode)`: a new file with a random name in the target's folder,
  created with O_CREAT | O_EXCL | O_NOFOLLOW (so nothing that was there, a symlink included, is
  opened), written, given its mode on the open descriptor (fchmod, never by path), fsynced,
  then renamed over `path` (os.replace: a symlink at `path` is replaced, not written through).
  Readers see the old file or the new one, never half of it.
- `write_new_file(path, data, mode, sync=True)`: a file that must not exist yet (in a folder
  only this process writes, such as a private temporary folder), created the same way, no
  rename; `sync=False` leaves the flush to the caller, who makes a whole folder durable at
  once (`sync_tree`: the writer's staging folder, one pass before its swap).

The folder part of `path` is followed as the user gave it (an output folder may be a symlink
to a folder of theirs); its last part never is. The folder is opened once and the temporary
file and the rename are made relative to that descriptor, so renaming or replacing the folder
meanwhile cannot send them elsewhere. Standard library only.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC
DEFAULT_MODE = 0o666  # as open() makes a file: less the umask
_TRIES = 100


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _finish(fd: int, data: bytes, mode: int | None, sync: bool = True) -> None:
    """Write, set the mode on the descriptor (when asked: the file was made 0600 for it), and
    flush to disk (unless `sync` is False)."""
    _write_all(fd, data)
    if mode is not None:
        os.fchmod(fd, mode)
    if sync:
        os.fsync(fd)


def _name_of(path: Path) -> str:
    name = path.name
    if not name or name in (".", ".."):
        raise IsADirectoryError(f"{path}: not a file name")
    return name


def write_new_file(path: Path, data: bytes, mode: int | None = None, sync: bool = True) -> None:
    """Create `path`, which must not exist (FileExistsError otherwise, even for a dangling
    symlink), with `data`: mode `mode` if given (set with fchmod, not limited by the umask),
    else 0666 less the umask; fsynced unless `sync` is False (then `sync_tree` of its folder
    makes it durable)."""
    _name_of(path)
    fd = os.open(path, _CREATE, DEFAULT_MODE if mode is None else 0o600)
    try:
        _finish(fd, data, mode, sync)
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(path)
        raise
    os.close(fd)


def temporary_name(name: str) -> str:
    """A fresh name for the temporary file of `name`: hidden, and unpredictable (64 random
    bits), so nobody can plant anything at it beforehand."""
    return f".{name[:80]}.{secrets.token_hex(8)}.tmp"


def write_file_atomic(path: Path, data: bytes, mode: int | None = None) -> None:
    """Replace `path` with a file holding `data`, atomically (see the module's words): mode
    `mode` if given (fchmod on the descriptor, not limited by the umask), else 0666 less the
    umask. A symlink at `path` is replaced by the file, its target left alone; a folder at
    `path` is an error (IsADirectoryError), and the folder is left as it was. Raises OSError;
    no temporary file is left behind."""
    name = _name_of(path)
    dir_fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | _CLOEXEC)
    try:
        for _ in range(_TRIES):
            tmp = temporary_name(name)
            try:
                fd = os.open(tmp, _CREATE, DEFAULT_MODE if mode is None else 0o600,
                             dir_fd=dir_fd)
                break
            except FileExistsError:
                continue
        else:  # pragma: no cover - 100 collisions of 64 random bits
            raise FileExistsError(f"{path.parent}: cannot make a temporary file")
        try:
            try:
                _finish(fd, data, mode)
            finally:
                os.close(fd)
            os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=dir_fd)
            raise
        with contextlib.suppress(OSError):  # the rename itself on disk (best effort)
            os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def sync_tree(root: Path, written: list[Path]) -> None:
    """Make a folder this process built durable in one pass: each of `written` (files made
    with `write_new_file(..., sync=False)`) fsynced, then every folder under `root` (their
    entries: new files, hard links, subfolders), `root` last. Opened without following a
    symlink (O_NOFOLLOW), so nothing planted in the folder is flushed in its place. Raises
    OSError."""
    for path in written:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _CLOEXEC)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    folders = [Path(here) for here, _, _ in os.walk(root)]
    for folder in reversed(folders):  # the deepest first, the root last
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | _NOFOLLOW | _CLOEXEC)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def sync_folder(folder: Path) -> None:
    """fsync a folder (a rename in it made durable); best effort: an error is ignored."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | _CLOEXEC)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
