"""The private cache folder: Jinja's compiled templates, and the results of the build's pure
passes (outputs/reuse.py, its `passes/` folder: plain JSON checked by digest, never code).

`build --check` trusts neither for what it certifies: it runs the whole pipeline and compares
the bytes it computed with the output folder. (An earlier outputs cache could be planted by
anyone able to write its folder, which was not checked: every file here is read only from a
folder that passes the checks below, and the results of passes only by `build`.)

Compiled templates are Python code objects (marshal), so they are only ever read from a folder
that cannot hold anyone else's files: a real directory (not a symlink), owned by the effective
user, mode 0700 (no group or other bits). The folder is opened once, without following
symlinks, and checked on the open descriptor (fstat), and every cache file is opened relative
to that descriptor (`open_folder`), so swapping the folder or a path for a symlink after the
check changes nothing. A folder that fails the check is not used (and not repaired: templates
are then compiled at each run, which costs about a tenth of a second). A damaged cache file
(a FIFO, a symlink, a device, an empty or garbage file, one owned by someone else) only costs
a recompile.

Where: $LISBOA_RULES_CACHE_DIR, else $XDG_CACHE_HOME/lisboa-rules, else ~/.cache/lisboa-rules;
the compiled templates go in its `jinja/` folder, the passes' results in `passes/` (both
created 0700).
Off: `build --no-cache`, or LISBOA_RULES_CACHE_DIR set to "off" (or empty).
Standard library only.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path

ENV = "LISBOA_RULES_CACHE_DIR"
TEMPLATES = "jinja"  # the folder of compiled templates inside the cache folder
MAX_CACHE_FILE = 4 << 20  # bytes; a compiled template is a few KiB

_OFF: list[bool] = [False]  # set while a `--no-cache` build runs (see `turned_off`)


@contextlib.contextmanager
def turned_off(off: bool = True) -> Iterator[None]:
    """Within the block, no compiled template is read or written."""
    before = _OFF[0]
    _OFF[0] = before or off
    try:
        yield
    finally:
        _OFF[0] = before


def is_off() -> bool:
    """Whether caching is off right now (`turned_off`)."""
    return _OFF[0]


def cache_dir() -> Path | None:
    """The cache folder (not created here), or None when caching is off."""
    if _OFF[0]:
        return None
    value = os.environ.get(ENV)
    if value is not None:
        return None if value.strip().lower() in ("", "off", "0", "no", "false") else Path(value)
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg and os.path.isabs(xdg):
        return Path(xdg) / "lisboa-rules"
    home = os.path.expanduser("~")
    return None if home == "~" else Path(home) / ".cache" / "lisboa-rules"


def template_cache_dir() -> Path | None:
    """Where compiled templates are kept (None when caching is off)."""
    root = cache_dir()
    return None if root is None else root / TEMPLATES


def private(st: os.stat_result) -> bool:
    """Whether a stat result is a directory of the effective user that only they can use."""
    return (stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid()
            and stat.S_IMODE(st.st_mode) & 0o077 == 0)  # fmt: skip


def open_folder(folder: Path) -> int | None:
    """A descriptor of `folder` (created 0700 if missing) when it is private (see `private`),
    else None. The folder itself must not be a symlink (O_NOFOLLOW); the check is made on the
    open descriptor, so it holds for every file later opened relative to it."""
    with contextlib.suppress(OSError):
        folder.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(FileExistsError, OSError):
        os.mkdir(folder, 0o700)
    flags = os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(folder, flags)
    except OSError:
        return None
    try:
        if private(os.lstat(folder)) and private(os.fstat(fd)):
            return fd
    except OSError:
        pass
    os.close(fd)
    return None


def read_private(dir_fd: int, name: str, limit: int = MAX_CACHE_FILE) -> bytes | None:
    """The bytes of the regular file `name` in the folder `dir_fd`, when it is the effective
    user's own, not a symlink, and at most `limit` bytes; else None. Never blocks (a FIFO is
    opened O_NONBLOCK and refused) and never follows a symlink."""
    if not _plain_name(name):
        return None
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(name, flags, dir_fd=dir_fd)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if (not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid()
                or st.st_size > limit):  # fmt: skip
            return None
        chunks: list[bytes] = []
        size = 0
        while size <= limit:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError:
        return None
    finally:
        os.close(fd)
    return b"".join(chunks) if size <= limit else None


def write_private(dir_fd: int, name: str, data: bytes) -> None:
    """Write `name` in the folder `dir_fd` atomically (a temp file, then a rename), mode 0600;
    best effort: any failure leaves no file behind and is ignored."""
    if not _plain_name(name):
        return
    tmp = f".tmp-{os.getpid()}-{os.urandom(6).hex()}-{name}"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(tmp, flags, 0o600, dir_fd=dir_fd)
    except OSError:
        return
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dir_fd)


def _plain_name(name: str) -> bool:
    """A single file name: no folder part, no `..`, no line break, no NUL."""
    return (bool(name) and name not in (".", "..") and "/" not in name and "\0" not in name
            and "\n" not in name and "\r" not in name)  # fmt: skip
