"""Results of the build's pure passes, reused by the digest of what they read (issue 36).

A pass whose inputs did not change since a build that ran it need not run again: its result is
filed under a key, the SHA-256 of the compiler fingerprint (outputs/stamp.py: this package's
files, Python's and the libraries' versions), the kind of result and exactly what the pass
reads. What is kept (see pipeline.py and cli/main.py for the keys):

- `valid`: a rules document (or a merged one) that its JSON Schema accepted, by its text;
- `emit`: every output file of a build, by the loaded rules files (their paths, digests and
  the variants folded in): the lower and emit passes, the engine's text and the reference;
- `played`: the backstop's games that found nothing, by the engine's text and their number;
- `compiles`: a generated module that compile()s, by its text.

An entry is plain data: JSON holding its kind, its key, its payload and the SHA-256 of the
payload, all checked when read; nothing is unpickled or unmarshalled. Entries live in the
`passes/` folder of the private cache folder (outputs/cache.py), read and written under the
same rules as the compiled templates: the folder is the user's own, mode 0700, opened without
following a symlink and checked on its descriptor, every file opened relative to it, never
blocking, never followed, at most `MAX_ENTRY` bytes. An entry that is missing, damaged,
foreign (another key or kind, a bad digest, the wrong shape) or unreadable only costs a
recompute. A `--watch` process also keeps entries in memory (`Store(memory=True)`), and the
rules files it loaded, parsed (by their bytes: an unchanged file is not parsed again). The folder
keeps the most recent `KEEP` entries of each kind (older ones go when a build files its
outputs), so it stays a few tens of MB however many edits are built.

Who trusts them: `build` only. `build --check` never reads them (cli/main.py passes no store:
it recomputes every pass and compares bytes), and `--no-cache` or LISBOA_RULES_CACHE_DIR=off
turns them off with the templates. Standard library only.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import stat
from collections import OrderedDict
from collections.abc import Iterator
from typing import Any

from lisboa_rules.outputs import cache, stamp

FOLDER = "passes"  # inside the cache folder
FORMAT = 1
MAX_ENTRY = 32 << 20  # bytes; the largest, a build's outputs, is about 2 MB
MEMORY_ENTRIES = 64  # what a --watch process keeps in memory (the most recently used)
# The entries of each kind kept on disk, the most recently written: older ones are removed
# when a build files its outputs (an `emit` entry is a build's outputs, about 2 MB).
KEEP = {"emit": 8, "played": 64, "compiles": 16, "valid": 1024}
_ENTRY = re.compile(r"(?P<kind>[a-z]+)-[0-9a-f]{64}\.json")

_CURRENT: list[Store | None] = [None]  # the store of the build running now (see `active`)


@contextlib.contextmanager
def active(store: Store | None) -> Iterator[None]:
    """Within the block, the passes find and file their results in `store` (None: nowhere,
    every pass runs: what `build --check` and `--no-cache` do)."""
    before = _CURRENT[0]
    _CURRENT[0] = store
    try:
        yield
    finally:
        _CURRENT[0] = before


def current() -> Store | None:
    """The store of the build running now, or None (see `active`); none while the cache is
    turned off (cache.turned_off)."""
    return None if cache.is_off() else _CURRENT[0]


def key(kind: str, *parts: Any) -> str:
    """The key of a result of `kind` computed from `parts` (JSON data) by this compiler."""
    record = [FORMAT, stamp.compiler_fingerprint(), kind, parts]
    text = json.dumps(record, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def text_digest(text: str) -> str:
    """The SHA-256 of a text (UTF-8), the way keys name the texts they read."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class Store:
    """Where a build finds and files the results of its passes: the private cache folder
    (when caching is on and the folder passes its checks) and, for a process that builds
    again and again (`--watch`), memory."""

    def __init__(self, memory: bool = False, disk: bool = True) -> None:
        self.memory: OrderedDict[str, Any] | None = OrderedDict() if memory else None
        # a process that builds again and again: the rules files it loaded, parsed, by path
        # (front/loader.py `load_file`'s memo: a file with the same bytes is not parsed again)
        self.loaded: dict[str, Any] | None = {} if memory else None
        self.disk = disk
        self.hits = 0
        self.misses = 0

    def get(self, kind: str, k: str) -> Any | None:
        """The payload filed under `k` for `kind`, or None (missing, damaged or foreign)."""
        if self.memory is not None and k in self.memory:
            self.memory.move_to_end(k)
            self.hits += 1
            return self.memory[k]
        found = self._read(kind, k) if self.disk else None
        if found is None:
            self.misses += 1
            return None
        self.hits += 1
        self._remember(k, found)
        return found

    def put(self, kind: str, k: str, payload: Any) -> None:
        """File `payload` (JSON data) under `k`; best effort: a failure is ignored."""
        self._remember(k, payload)
        if self.disk:
            self._write(kind, k, payload)

    def _remember(self, k: str, payload: Any) -> None:
        if self.memory is None:
            return
        self.memory[k] = payload
        self.memory.move_to_end(k)
        while len(self.memory) > MEMORY_ENTRIES:
            self.memory.popitem(last=False)

    def _read(self, kind: str, k: str) -> Any | None:
        fd = _open()
        if fd is None:
            return None
        try:
            data = cache.read_private(fd, _name(kind, k), MAX_ENTRY)
        finally:
            os.close(fd)
        return None if data is None else decode(kind, k, data)

    def _write(self, kind: str, k: str, payload: Any) -> None:
        try:
            data = encode(kind, k, payload)
        except (ValueError, TypeError):
            return
        if len(data) > MAX_ENTRY:
            return  # it would never be read
        fd = _open()
        if fd is None:
            return
        try:
            cache.write_private(fd, _name(kind, k), data)
            if kind == "emit":  # once per build: the folder is trimmed to KEEP of each kind
                prune(fd)
        finally:
            os.close(fd)


def prune(dir_fd: int) -> None:
    """Remove the oldest entries of each kind beyond KEEP (by mtime) from the folder `dir_fd`:
    only regular files named as entries, never followed; best effort."""
    found: dict[str, list[tuple[int, str]]] = {}
    try:
        names = os.listdir(dir_fd)
    except OSError:
        return
    for name in names:
        match = _ENTRY.fullmatch(name)
        if match is None:
            continue
        try:
            st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode):
            found.setdefault(match["kind"], []).append((st.st_mtime_ns, name))
    for kind, entries in found.items():
        entries.sort(reverse=True)
        for _, name in entries[KEEP.get(kind, 0) :]:
            with contextlib.suppress(OSError):
                os.unlink(name, dir_fd=dir_fd)


def encode(kind: str, k: str, payload: Any) -> bytes:
    """An entry's bytes: its kind, key, payload and the payload's digest, as JSON."""
    body = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    entry = {"format": FORMAT, "kind": kind, "key": k, "sha256": text_digest(body), "payload": body}
    return json.dumps(entry, ensure_ascii=False).encode("utf-8", "surrogatepass")


def decode(kind: str, k: str, data: bytes) -> Any | None:
    """The payload of an entry's bytes when it is one of `kind` filed under `k` whose payload
    has the digest it states; else None."""
    try:
        entry = json.loads(data.decode("utf-8", "surrogatepass"))
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    if not isinstance(entry, dict) or entry.get("format") != FORMAT:
        return None
    body = entry.get("payload")
    if entry.get("kind") != kind or entry.get("key") != k or not isinstance(body, str):
        return None
    if entry.get("sha256") != text_digest(body):
        return None
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        return None


def _name(kind: str, k: str) -> str:
    return f"{kind}-{k}.json"


def _open() -> int | None:
    """A descriptor of the private `passes/` folder, or None (caching off, or the cache folder
    or this folder fails the checks of cache.open_folder). The folder is made and opened
    relative to the cache folder's own descriptor, never through a path that could change."""
    root = cache.cache_dir()
    if root is None:
        return None
    parent = cache.open_folder(root)
    if parent is None:
        return None
    try:
        with contextlib.suppress(FileExistsError, OSError):
            os.mkdir(FOLDER, 0o700, dir_fd=parent)
        flags = os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_NOFOLLOW", 0)
        try:
            fd = os.open(FOLDER, flags, dir_fd=parent)
        except OSError:
            return None
        try:
            if cache.private(os.fstat(fd)):
                return fd
        except OSError:
            pass
        os.close(fd)
        return None
    finally:
        os.close(parent)
