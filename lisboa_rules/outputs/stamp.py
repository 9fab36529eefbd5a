"""Build keys: one hash of everything the outputs depend on, so an unchanged build is skipped.

The outputs are a deterministic function of exactly these, and the key hashes all of them:

- the key's format version;
- the compiler: every file of this package (code, templates, schemas), with its path;
- the Python version and the versions of the libraries the pipeline runs on;
- the build options that change outputs (the folded variants, in order);
- the rules: every file `inputs.discover` finds (relative path and bytes), i.e. exactly
  what the loader reads.

Equal keys therefore mean equal outputs. Two things use that, and both only skip work:

- the output folder's `.manifest` records the key of the build that wrote it and one hash of
  all the files (writer.py); `build` and `build --check` with the same key and intact files
  stop right there, without importing the pipeline (pyyaml, jsonschema and jinja2 are not even
  loaded);
- the build cache (cache.py) keeps the outputs of recent keys, so a build into an empty or
  stale folder from known inputs only writes files.

Standard library only: this runs at start-up, before anything heavy is imported.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from lisboa_rules.core.inputs import MAX_FILE_BYTES, discover, read_regular

FORMAT = "lisboa-rules build key 2"

# Distributions whose code runs in the pipeline (project names, normalised), with the
# dependencies of referencing that take part in validation.
LIBRARIES = ("attrs", "jinja2", "jsonschema", "jsonschema-specifications", "markupsafe", "pyyaml",
             "referencing", "rpds-py")  # fmt: skip

_SKIP_DIRS = {"__pycache__"}
_SKIP_SUFFIXES = (".pyc", ".pyo")


def build_key(rules_dir: Path, variants: Sequence[str] = ()) -> str | None:
    """The key of a build of `rules_dir` with `variants` folded in; None when an input is not
    a regular file of at most MAX_FILE_BYTES or cannot be read (then the pipeline runs and
    reports it)."""
    digests: list[tuple[str, str]] = []
    try:
        if not rules_dir.is_dir():
            return None
        for path in discover(rules_dir):
            data = read_regular(path)
            if data is None or len(data) > MAX_FILE_BYTES:
                return None
            rel = path.relative_to(rules_dir).as_posix()
            digests.append((rel, hashlib.sha256(data).hexdigest()))
    except (OSError, ValueError):
        return None
    return key_of(variants, digests)


def key_of(variants: Sequence[str], digests: Sequence[tuple[str, str]]) -> str:
    """The key of the outputs of these rules files ((relative path, sha256 of the bytes), in
    discovery order) with `variants` folded in. Every part is JSON-encoded, so no variant name
    or file name (spaces, line breaks) can run into the next."""
    record = {
        "format": FORMAT,
        "compiler": compiler_fingerprint(),
        "variants": list(variants),
        "files": [list(d) for d in digests],
    }
    return hashlib.sha256(json.dumps(record, sort_keys=True).encode("utf-8")).hexdigest()


@functools.cache
def compiler_fingerprint() -> str:
    """One hash of this package's files, the Python version and the library versions."""
    root = Path(__file__).resolve().parent
    record = {
        "python": [sys.implementation.name, *sys.version_info[:3]],
        "libraries": library_versions(),
        "sources": [
            [p.relative_to(root).as_posix(), hashlib.sha256(p.read_bytes()).hexdigest()]
            for p in _package_files(root)
        ],
    }
    return hashlib.sha256(json.dumps(record, sort_keys=True).encode("utf-8")).hexdigest()


def _package_files(root: Path) -> list[Path]:
    found: list[Path] = []
    for here, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d not in _SKIP_DIRS and not d.startswith(".")]
        found.extend(Path(here, n) for n in names
                     if not n.endswith(_SKIP_SUFFIXES) and not n.startswith("."))
    return sorted(found, key=lambda p: p.relative_to(root).as_posix())


def library_versions() -> dict[str, str]:
    """The installed version of each of LIBRARIES, read from the metadata folder names on
    sys.path (what importlib.metadata does, without its import cost); "?" when not found."""
    found: dict[str, str] = {}
    for entry in sys.path:
        try:
            names = sorted(os.listdir(entry or "."))
        except OSError:
            continue
        for name in names:
            for suffix in (".dist-info", ".egg-info"):
                if name.endswith(suffix):
                    project, _, version = name[: -len(suffix)].partition("-")
                    key = project.lower().replace("_", "-").replace(".", "-")
                    if key in LIBRARIES and key not in found:
                        found[key] = version.split("-")[0] or "?"
    return {name: found.get(name, "?") for name in LIBRARIES}
