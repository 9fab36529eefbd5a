"""The build cache: the outputs of recent successful builds, by build key (stamp.py).

A build whose key is here skips load, validate, model, checks and emit and only writes the
files (the writer still compares, writes atomically and keeps the manifest). Next to each
entry a small `.outputs` file holds the entry's `writer.outputs_hash`: when the output
folder's manifest records that hash and its files still match it, the folder is up to date
without reading the entry at all. Only builds with
no diagnostics at all are kept, so a hit never hides a warning. Entries carry their own hash
and are ignored when damaged; every failure of the cache (no home folder, read-only disk, a
full disk) only costs the time of a real build, never the build itself.

Where: $LISBOA_RULES_CACHE_DIR, else $XDG_CACHE_HOME/lisboa-rules, else ~/.cache/lisboa-rules.
Off: `build --no-cache`, or LISBOA_RULES_CACHE_DIR set to "off" (or empty).
The newest MAX_ENTRIES builds are kept. The folder also holds Jinja's template bytecode.
Standard library only.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

ENV = "LISBOA_RULES_CACHE_DIR"
FORMAT = 2
MAX_ENTRIES = 32
_SUFFIX = ".build.json"
_STAMP = ".outputs"


_OFF: list[bool] = [False]  # set while a `--no-cache` build runs (see `turned_off`)


@contextlib.contextmanager
def turned_off(off: bool = True) -> Iterator[None]:
    """Within the block, no cache is read or written: neither builds nor compiled templates."""
    before = _OFF[0]
    _OFF[0] = before or off
    try:
        yield
    finally:
        _OFF[0] = before


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


def _entry(root: Path, key: str) -> Path:
    return root / f"{key}{_SUFFIX}"


def _files_hash(files: Mapping[str, str]) -> str:
    return hashlib.sha256(json.dumps(files, sort_keys=True).encode("utf-8")).hexdigest()


def load(root: Path | None, key: str) -> dict[str, str] | None:
    """The outputs built for `key`, or None (no cache, no entry, or a damaged one)."""
    if root is None:
        return None
    try:
        raw = json.loads(_entry(root, key).read_text(encoding="utf-8"))
        files = raw["files"]
        if (raw.get("format") != FORMAT or raw.get("key") != key
                or not isinstance(files, dict) or raw.get("sha256") != _files_hash(files)
                or not all(isinstance(k, str) and isinstance(v, str) for k, v in files.items())):
            return None
    except (OSError, ValueError, KeyError, TypeError):
        return None
    with contextlib.suppress(OSError):
        os.utime(_entry(root, key))  # recently used: pruned last
    return files


def outputs_stamp(root: Path | None, key: str) -> str | None:
    """The outputs hash of the entry for `key` (None when there is none). The file names its
    key too, so a stamp copied under another key's name is not believed."""
    if root is None:
        return None
    try:
        named, _, value = (root / f"{key}{_STAMP}").read_text(encoding="ascii").partition(" ")
    except (OSError, ValueError):
        return None
    value = value.strip()
    ok = named == key and len(value) == 64 and _entry(root, key).is_file()
    return value if ok else None


def store(root: Path | None, key: str, files: Mapping[str, str], outputs_hash: str) -> None:
    """Keep the outputs of a successful build (best effort, atomic, then prune old entries)."""
    if root is None:
        return
    entry = {"format": FORMAT, "key": key, "sha256": _files_hash(files), "files": dict(files)}
    try:
        root.mkdir(parents=True, exist_ok=True)
        _atomic_write(root, _entry(root, key), json.dumps(entry, ensure_ascii=False))
        _atomic_write(root, root / f"{key}{_STAMP}", f"{key} {outputs_hash}\n")
        _prune(root)
    except OSError:
        pass  # a cache that cannot be written is no cache


def _atomic_write(root: Path, path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=_SUFFIX, dir=root)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _prune(root: Path) -> None:
    """Keep the MAX_ENTRIES most recently used entries; drop temp files older than an hour
    (left by a killed build)."""
    entries = []
    now = time.time()
    for p in root.glob(f"*{_SUFFIX}"):
        with contextlib.suppress(OSError):
            mtime = p.stat().st_mtime_ns
            if not p.name.startswith(".tmp-"):
                entries.append((mtime, p.name, p))
            elif now - mtime / 1e9 > 3600:
                p.unlink()
    for _, _, p in sorted(entries, reverse=True)[MAX_ENTRIES:]:
        with contextlib.suppress(OSError):
            p.unlink()
            p.with_name(p.name.removesuffix(_SUFFIX) + _STAMP).unlink()


def template_cache_dir() -> Path | None:
    """Where Jinja keeps compiled templates (None when caching is off or not possible)."""
    root = cache_dir()
    if root is None:
        return None
    folder = root / "templates"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return folder if os.access(folder, os.W_OK) else None
