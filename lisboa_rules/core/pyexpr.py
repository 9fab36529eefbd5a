"""Python expressions parsed once per process.

The compiler parses the same few hundred expressions thousands of times in a build (every
rule set checks and compiles the same steps, and several passes read the code they wrote).
`parse_expr` keeps each tree: callers read it (ast.walk, isinstance, offsets) and never change
it. A text that does not parse raises as ast.parse does, every time.
"""

from __future__ import annotations

import ast

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
