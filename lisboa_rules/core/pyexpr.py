"""Python expressions parsed once per process.

The compiler parses the same few hundred expressions thousands of times in a build (every
rule set checks and compiles the same steps, and several passes read the code they wrote).
`parse_expr` keeps each tree: callers read it (ast.walk, isinstance, offsets) and never change
it. A text that does not parse raises as ast.parse does, every time.
"""

from __future__ import annotations

import ast
import re

_LIMIT = 200_000  # trees kept at most (then the cache starts again empty)
_TREES: dict[str | bytes, ast.Expression] = {}


def parse_expr(text: str | bytes) -> ast.Expression:
    """`ast.parse(text, mode="eval")`, shared: never change the tree it returns."""
    tree = _TREES.get(text)
    if tree is None:
        tree = ast.parse(text, mode="eval")
        if len(_TREES) >= _LIMIT:
            _TREES.clear()
        _TREES[text] = tree
    return tree


# Slips of a designer used to other notations, found in a text that does not parse: what to
# write instead. The first slip outside a quoted text is named, at its column.
_SLIPS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"(?<![=!<>])=(?!=)"),
     "`=` assigns, it does not compare: write `==` to test equality (as in game.period == 1)"),
    (re.compile(r"&&"), "write `and` for both conditions (not `&&`)"),
    (re.compile(r"\|\|"), "write `or` for either condition (not `||`)"),
    (re.compile(r"<>"), "write `!=` for not equal (not `<>`)"),
    (re.compile(r"!(?!=)"), "write `not` to negate a condition (not `!`)"),
    (re.compile(r"(?<![\w.])(?:AND|And)(?![\w])"), "write `and` in lower case"),
    (re.compile(r"(?<![\w.])(?:OR|Or)(?![\w])"), "write `or` in lower case"),
)
_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")


def syntax_slip(text: str) -> tuple[str, int] | None:
    """What to write instead of a common slip in `text` (which does not parse), and its
    0-based column; None when none of the known slips is there."""
    bare = _QUOTED.sub(lambda m: " " * len(m.group()), text)
    found = [(m.start(), hint) for pattern, hint in _SLIPS if (m := pattern.search(bare))]
    if not found:
        return None
    col, hint = min(found)
    return hint, col
