"""Diagnostics as values: every stage returns `Diagnostic`s; this module sorts and renders them.

Text form (GNU style, clickable in editors and terminals):
    rules/actions.yaml:14:7: error[unknown-reference]: unknown action 'biuld'; did you mean 'build'?
    rules/actions.yaml:3:3: note: 'build' is defined here
Messages start lower case and have no trailing period.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from lisboa_rules.core.codes import CODES, Severity
from lisboa_rules.core.source import Span

PROG = "lisboa-rules"

# Characters that would break the one-line-per-diagnostic format or hide what a line says:
# line breaks, C0/C1 controls (terminal escapes), bidi overrides ("Trojan Source") and BOMs.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]")
_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


@dataclass(frozen=True)
class Related:
    """A secondary location with a note, such as the first of two duplicate keys."""

    message: str
    span: Span | None


@dataclass(frozen=True)
class Diagnostic:
    """One finding: a registered code, a message and its primary location."""

    code: str
    message: str
    span: Span | None
    related: tuple[Related, ...] = ()
    suggestion: str | None = None
    # what it is about, for the passes that weigh one finding against another: `ID.KEY` of a
    # key of a rule's item (an `unread-key`, the keys a `text-stale` says changed); not printed
    subject: tuple[str, ...] = field(default=(), compare=False, repr=False, kw_only=True)

    @property
    def severity(self) -> Severity:
        """Return the code's registered severity (unknown codes count as errors)."""
        entry = CODES.get(self.code)
        return entry.severity if entry is not None else "error"

    @property
    def is_error(self) -> bool:
        """Return True when this diagnostic makes the run fail."""
        return self.severity == "error"

    @property
    def sort_key(self) -> tuple[int, str, int, int, str, str]:
        """Order by position (spanless diagnostics last), then code and message."""
        if self.span is None:
            return (1, "", 0, 0, self.code, self.message)
        s = self.span
        return (0, s.file, s.line, s.col, self.code, self.message)

    @property
    def full_message(self) -> str:
        """Return the message with its did-you-mean suffix."""
        if self.suggestion is None:
            return self.message
        return f"{self.message}; did you mean '{self.suggestion}'?"


def sort_diagnostics(diags: Iterable[Diagnostic]) -> list[Diagnostic]:
    """Return the diagnostics in rendering order without duplicates."""
    return sorted(dict.fromkeys(diags), key=lambda d: d.sort_key)


def has_errors(diags: Iterable[Diagnostic]) -> bool:
    """Return True when any diagnostic is an error."""
    return any(d.is_error for d in diags)


def suggest(word: str, candidates: Iterable[str]) -> str | None:
    """Return the closest candidate to `word`, or None when nothing is close enough."""
    pool = sorted({c for c in candidates if c != word})
    matches = difflib.get_close_matches(word, pool, n=1, cutoff=0.6)
    return matches[0] if matches else None


def one_line(text: str) -> str:
    """Escape line breaks, control and bidi characters so that text stays on one visible line."""

    def escape(m: re.Match[str]) -> str:
        ch = m.group()
        if ch in _ESCAPES:
            return _ESCAPES[ch]
        return f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}"

    return _UNSAFE.sub(escape, text)


def _prefix(span: Span | None) -> str:
    """Return `PATH:LINE:COL` or the program name for spanless lines."""
    return PROG if span is None else f"{one_line(span.file)}:{span.line}:{span.col}"


def render_one(diag: Diagnostic) -> str:
    """Render one diagnostic and its notes as text lines (with trailing newline).

    Messages quote rules data, which may hold newlines or terminal escapes: those are shown
    escaped, so every diagnostic is exactly one line (plus one line per note).
    """
    head = f"{_prefix(diag.span)}: {diag.severity}[{diag.code}]: {one_line(diag.full_message)}"
    lines = [head]
    lines.extend(f"{_prefix(r.span)}: note: {one_line(r.message)}" for r in diag.related)
    return "\n".join(lines) + "\n"


def render_text(diags: Iterable[Diagnostic]) -> str:
    """Render diagnostics in sorted order as GNU-style lines."""
    return "".join(render_one(d) for d in sort_diagnostics(diags))


def _span_json(span: Span | None) -> dict[str, Any]:
    """Return the position fields of the JSON form (null when spanless)."""
    if span is None:
        return {"file": None, "line": None, "column": None, "end_line": None, "end_column": None}
    return {
        "file": span.file,
        "line": span.line,
        "column": span.col,
        "end_line": span.end_line,
        "end_column": span.end_col,
    }


def to_json(diag: Diagnostic) -> dict[str, Any]:
    """Return the JSON-compatible object for one diagnostic."""
    return {
        **_span_json(diag.span),
        "severity": diag.severity,
        "code": diag.code,
        "message": diag.message,
        "suggestion": diag.suggestion,
        "related": [{**_span_json(r.span), "message": r.message} for r in diag.related],
    }


def render_json(diags: Iterable[Diagnostic]) -> str:
    """Render diagnostics in sorted order as a JSON list (with trailing newline)."""
    items = [to_json(d) for d in sort_diagnostics(diags)]
    # ASCII with \u escapes: the same JSON, and it survives a stdout that is not UTF-8.
    return json.dumps(items, indent=2, ensure_ascii=True) + "\n"


def summary(diags: Sequence[Diagnostic]) -> str:
    """Return a count line like `found 2 errors and 1 warning`."""
    errors = sum(1 for d in diags if d.is_error)
    warnings = len(diags) - errors
    parts = [_plural(errors, "error")] if errors else []
    if warnings:
        parts.append(_plural(warnings, "warning"))
    return "found " + " and ".join(parts) if parts else "no problems found"


def _plural(n: int, word: str) -> str:
    """Return `n word(s)`."""
    return f"{n} {word}" if n == 1 else f"{n} {word}s"
