"""The compiler fingerprint: one hash of this package's files, the Python version and the
versions of the libraries the pipeline runs on.

Compiled templates (emit/env.py, cache.py) and the results of the build's passes (reuse.py:
every key holds it) are filed under it, so nothing made by another version of the compiler, of
Jinja or of Python is ever used.

Standard library only.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import sys
from pathlib import Path

# Distributions whose code runs in the pipeline (project names, normalised), with the
# dependencies of referencing that take part in validation.
LIBRARIES = ("attrs", "jinja2", "jsonschema", "jsonschema-specifications", "markupsafe", "pyyaml",
             "referencing", "rpds-py")  # fmt: skip

_SKIP_DIRS = {"__pycache__"}
_SKIP_SUFFIXES = (".pyc", ".pyo")


@functools.cache
def compiler_fingerprint() -> str:
    """One hash of this package's files (every file of lisboa_rules/: its code, templates,
    schemas and runtime), its version (which the engine's package carries: a release's bump
    in pyproject.toml changes no file of the package), the Python version and the library
    versions."""
    from lisboa_rules import version

    root = package_root()
    record = {
        "version": version(),
        "python": [sys.implementation.name, *sys.version_info[:3]],
        "libraries": library_versions(),
        "sources": [
            [p.relative_to(root).as_posix(), hashlib.sha256(p.read_bytes()).hexdigest()]
            for p in _package_files(root)
        ],
    }
    return hashlib.sha256(json.dumps(record, sort_keys=True).encode("utf-8")).hexdigest()


def package_root() -> Path:
    """The lisboa_rules package folder (this module is in its `outputs/`)."""
    return Path(__file__).resolve().parent.parent


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
