"""Source positions: a 1-based `Span` into a rules file, plus display-path and address helpers.

Positions are converted from PyYAML's 0-based marks exactly once, in the loader; everything
downstream (validation, model, checks, diagnostics) only carries `Span` values around.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

PathTuple = tuple[str | int, ...]

_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]*\Z")


@dataclass(frozen=True, order=True)
class Span:
    """A 1-based region of the file shown as `file`: its start and the position just past it."""

    file: str
    line: int
    col: int
    end_line: int
    end_col: int

    @classmethod
    def point(cls, file: str, line: int = 1, col: int = 1) -> Span:
        """Return an empty span at one position."""
        return cls(file, line, col, line, col)

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


def nearest(spans: Mapping[PathTuple, Span], path: PathTuple) -> Span | None:
    """The span at `path`, else at its nearest enclosing path; None when no prefix has one.
    The one lookup the loader, the overlays and the model share."""
    for i in range(len(path), -1, -1):
        span = spans.get(path[:i])
        if span is not None:
            return span
    return None


def display_path(path: Path) -> str:
    """Return `path` relative to the CWD when it lies under it, else as given (POSIX form)."""
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except (ValueError, OSError, RuntimeError):  # RuntimeError: a symlink loop
        return path.as_posix()


def format_address(path: PathTuple) -> str:
    """Render a data path as a readable address such as `scoring.sources[2].table`."""
    out: list[str] = []
    for part in path:
        if isinstance(part, int):
            out.append(f"[{part}]")
        elif _PLAIN_KEY.match(part):
            out.append(f".{part}" if out else part)
        else:
            # Keys with spaces or dots would make the dotted form ambiguous.
            out.append(f"[{json.dumps(part, ensure_ascii=False)}]")
    return "".join(out)
