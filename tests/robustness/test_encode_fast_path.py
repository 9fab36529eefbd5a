"""encode.py_str / py_comment take a shortcut for text with nothing to escape (issue 17: they
run some 20 000 times a build); the result is the character-by-character one, for every kind
of text."""

from __future__ import annotations

import ast

import pytest

from lisboa_rules.core import encode

TEXTS = [
    "",
    "plain",
    "réis and wigs",
    'a "quoted" word',
    "back\\slash",
    "tab\there",
    "line\nbreak",
    "\u2028separator",
    "\u202eoverride",
    "zero\u200bwidth",
    "'''",
    '"""',
    "x'''y",
    'x""y',
    "\x00nul",
    "\ud800surrogate",
    "emoji \U0001f451",
    "\U000e0001tag",
    "ends with \\",
    "a" * 500,
    "10 + 2",
    "{p}.reis",
]


def _slow_str(value: str) -> str:
    out = []
    for ch in value:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch.isprintable():
            out.append(ch)
        else:
            out.append(repr(ch)[1:-1])
    return '"' + "".join(out) + '"'


def _slow_comment(text: str) -> str:
    out = []
    for ch in text:
        if ch == "\\":
            out.append("\\\\")
        elif ch.isprintable():
            out.append(ch)
        else:
            out.append(repr(ch)[1:-1])
    return encode._QUOTE_RUN.sub(lambda m: "".join("\\" + q for q in m.group()), "".join(out))


@pytest.mark.parametrize("text", TEXTS)
def test_py_str_is_the_escaped_literal(text: str) -> None:
    assert encode.py_str(text) == _slow_str(text)
    if "\ud800" not in text:
        assert ast.literal_eval(encode.py_str(text)) == text


@pytest.mark.parametrize("text", TEXTS)
def test_py_comment_is_the_escaped_line(text: str) -> None:
    assert encode.py_comment(text) == _slow_comment(text)
    assert "\n" not in encode.py_comment(text)
