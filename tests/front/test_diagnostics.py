"""Diagnostic values, the code registry, sorting and the text/JSON renderings."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from lisboa_rules.core import codes
from lisboa_rules.core.diagnostics import (
    Diagnostic,
    Related,
    has_errors,
    render_json,
    render_text,
    sort_diagnostics,
    suggest,
    summary,
)
from lisboa_rules.core.source import Span, display_path, format_address

REQUIRED = {
    "load": "yaml-syntax duplicate-key yaml-alias yaml-merge-key yaml-tag non-string-key "
    "file-too-large nesting-too-deep not-utf8 multi-document empty-document unreadable-file",
    "schema": "schema-type schema-unknown-key schema-required schema-enum schema-range "
    "schema-pattern schema-invalid unknown-kind duplicate-kind missing-kind",
    "model/check": "duplicate-id unknown-reference unknown-name expr-syntax expr-type "
    "unknown-placeholder missing-text overlay-conflict unknown-variant overlay-unknown-target "
    "value-out-of-range unknown-source unused-value",
    "emit": "generated-invalid template-error",
    "write": "write-failed",
}


def span(line: int, col: int, file: str = "rules/a.yaml") -> Span:
    """Return a point span."""
    return Span.point(file, line, col)


# --- registry ----------------------------------------------------------------------------


@pytest.mark.parametrize("group", sorted(REQUIRED))
def test_required_codes_exist_in_their_category(group: str) -> None:
    for name in REQUIRED[group].split():
        entry = codes.get(name)
        assert entry.name == name
        assert entry.category in group.split("/")


def test_every_code_is_well_formed() -> None:
    for name, entry in codes.CODES.items():
        assert entry.name == name
        assert re.fullmatch(r"[a-z]+(-[a-z0-9]+)*", name), name
        assert entry.category in codes.CATEGORIES
        assert entry.severity in ("error", "warning")
        assert entry.summary[0].islower() and not entry.summary.endswith("."), name
        assert "bad:" in entry.explanation and "fix:" in entry.explanation, name


def test_severities() -> None:
    assert codes.get("unused-value").severity == "warning"
    assert codes.get("stray-output").severity == "warning"
    assert codes.get("duplicate-key").severity == "error"


def test_unknown_code_raises_key_error() -> None:
    with pytest.raises(KeyError):
        codes.get("no-such-code")


# --- diagnostics -------------------------------------------------------------------------


def test_severity_and_is_error_come_from_the_registry() -> None:
    warn = Diagnostic("unused-value", "value 'x' is never used", span(1, 1))
    err = Diagnostic("duplicate-id", "duplicate id 'x'", span(1, 1))
    assert warn.severity == "warning" and not warn.is_error
    assert err.severity == "error" and err.is_error
    assert has_errors([warn, err]) and not has_errors([warn])


def test_render_text_exact_format() -> None:
    d = Diagnostic(
        "unknown-reference",
        "unknown action 'biuld'",
        Span("rules/actions.yaml", 14, 7, 14, 12),
        (Related("'build' is defined here", span(3, 3, "rules/actions.yaml")),),
        suggestion="build",
    )
    assert render_text([d]) == (
        "rules/actions.yaml:14:7: error[unknown-reference]: unknown action 'biuld'; "
        "did you mean 'build'?\n"
        "rules/actions.yaml:3:3: note: 'build' is defined here\n"
    )


def test_render_text_warning_and_spanless() -> None:
    out = render_text(
        [
            Diagnostic("unused-value", "value 'x' is never used", span(2, 1)),
            Diagnostic("unknown-variant", "unknown variant 'solo'", None, suggestion="solo-mode"),
            Diagnostic(
                "duplicate-id", "duplicate id 'x'", span(1, 1), (Related("elsewhere", None),)
            ),
        ]
    )
    assert out.splitlines() == [
        "rules/a.yaml:1:1: error[duplicate-id]: duplicate id 'x'",
        "lisboa-rules: note: elsewhere",
        "rules/a.yaml:2:1: warning[unused-value]: value 'x' is never used",
        "lisboa-rules: error[unknown-variant]: unknown variant 'solo'; did you mean 'solo-mode'?",
    ]


def test_sort_key_orders_by_position_then_code_with_spanless_last() -> None:
    ds = [
        Diagnostic("write-failed", "z", None),
        Diagnostic("schema-type", "b", span(10, 1)),
        Diagnostic("schema-enum", "a", span(2, 5)),
        Diagnostic("duplicate-key", "a", span(2, 5)),
        Diagnostic("schema-type", "a", span(1, 1, "rules/b.yaml")),
        Diagnostic("schema-type", "a", span(2, 1)),
    ]
    ordered = sort_diagnostics(ds)
    assert [(d.code, d.span.line if d.span else None) for d in ordered] == [
        ("schema-type", 2),
        ("duplicate-key", 2),
        ("schema-enum", 2),
        ("schema-type", 10),
        ("schema-type", 1),
        ("write-failed", None),
    ]
    # Line 2 before line 10: numeric, not lexicographic; the order of the input never matters.
    assert render_text(ds) == render_text(list(reversed(ds)))


def test_identical_diagnostics_are_rendered_once() -> None:
    d = Diagnostic("schema-type", "x", span(1, 1))
    assert render_text([d, d]).count("\n") == 1


def test_render_json_fields() -> None:
    d = Diagnostic(
        "schema-enum",
        "'buld' is not one of 'build', 'trade'",
        Span("rules/a.yaml", 3, 8, 3, 12),
        (Related("see here", span(1, 1)),),
        suggestion="build",
    )
    items = json.loads(render_json([d, Diagnostic("write-failed", "disk full", None)]))
    assert items[0] == {
        "file": "rules/a.yaml",
        "line": 3,
        "column": 8,
        "end_line": 3,
        "end_column": 12,
        "severity": "error",
        "code": "schema-enum",
        "message": "'buld' is not one of 'build', 'trade'",
        "suggestion": "build",
        "related": [
            {
                "file": "rules/a.yaml",
                "line": 1,
                "column": 1,
                "end_line": 1,
                "end_column": 1,
                "message": "see here",
            }
        ],
    }
    assert items[1]["file"] is None and items[1]["line"] is None and items[1]["related"] == []
    assert render_json([]) == "[]\n"


def test_suggest() -> None:
    assert suggest("efects", ["effects", "cost", "text"]) == "effects"
    assert suggest("zzz", ["effects", "cost"]) is None
    assert suggest("cost", ["cost", "costs"]) == "costs"  # the word itself is never suggested
    assert suggest("x", []) is None


def test_summary() -> None:
    w = Diagnostic("unused-value", "w", None)
    e = Diagnostic("duplicate-id", "e", None)
    assert summary([e, e, w]) == "found 2 errors and 1 warning"
    assert summary([w]) == "found 1 warning"
    assert summary([]) == "no problems found"


# --- source helpers ----------------------------------------------------------------------


def test_span_point_and_ordering() -> None:
    assert Span.point("a.yaml", 3, 4) == Span("a.yaml", 3, 4, 3, 4)
    assert Span.point("a.yaml") == Span("a.yaml", 1, 1, 1, 1)
    assert Span("a", 2, 1, 2, 2) < Span("a", 10, 1, 10, 2)
    assert str(Span("a.yaml", 3, 4, 3, 9)) == "a.yaml:3:4"


def test_display_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "rules").mkdir()
    monkeypatch.chdir(tmp_path)
    assert display_path(tmp_path / "rules" / "a.yaml") == "rules/a.yaml"
    assert display_path(Path("rules/a.yaml")) == "rules/a.yaml"
    outside = tmp_path.parent / "elsewhere" / "a.yaml"
    assert display_path(outside) == outside.as_posix()


def test_format_address() -> None:
    assert format_address(()) == ""
    assert format_address(("scoring", "sources", 2, "table")) == "scoring.sources[2].table"
    assert format_address((0, "id")) == "[0].id"
    assert format_address(("a", "weird key")) == 'a["weird key"]'
