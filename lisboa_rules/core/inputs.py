"""Which files are inputs, and the names of the files the build writes.

Standard library only.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

SUFFIXES = (".yaml", ".yml")
MAX_FILE_BYTES = 1 << 20  # 1 MiB: rules files are a few KiB; anything bigger is a mistake

# The outputs, relative to the output folder.
ENGINE = "lisboa_engine.py"
STATE_SCHEMA = "state.schema.json"
VIEW_SCHEMA = "view.schema.json"  # what one seat may see of a state (`view(game, seat)`)
# What makes the output folder an installable package of the engine (`pip install ./generated`)
PYPROJECT = "pyproject.toml"
PY_TYPED = "py.typed"  # PEP 561: the engine's annotations are its types
# hex digits of the inputs' digest in the engine package's version (`X.Y.Z+rules<digits>`)
VERSION_DIGITS = 12
RULES_MD = "reference/rules.md"
RULES_HTML = "reference/rules.html"
AID_MD = "reference/player-aid.md"
AID_HTML = "reference/player-aid.html"
FIGURES = "figures"  # the diagrams, as reference/figures/<name>.svg
# The annotated edition: the rules with every rule id, source and assumption mark.
RULES_ANNOTATED_MD = "reference/rules-annotated.md"
RULES_ANNOTATED_HTML = "reference/rules-annotated.html"


def variant_handout(variant: str, fmt: str) -> str:
    """The one-page house-rules handout of a variant: `reference/variant-<id>.<md|html>`."""
    return f"reference/variant-{variant}.{fmt}"


def discover(rules_dir: Path) -> list[Path]:
    """Return every *.yaml/*.yml under `rules_dir`, sorted by POSIX relative path."""
    found: list[Path] = []
    for root, dirs, names in os.walk(rules_dir):
        # Hidden entries (.git, editor backups like .#a.yaml) are never rules.
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        found.extend(Path(root, n) for n in names if n.endswith(SUFFIXES) and not n.startswith("."))
    return sorted(found, key=lambda p: p.relative_to(rules_dir).as_posix())


def read_regular(path: Path, max_bytes: int = MAX_FILE_BYTES) -> bytes | None:
    """At most `max_bytes` + 1 bytes of a regular file (one more than allowed tells the caller
    it is too large, without trusting stat()); None when it is not a regular file. A FIFO must
    not block (O_NONBLOCK) and /dev/zero must not fill the memory. Raises OSError."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            return None
        return fh.read(max_bytes + 1)
