"""Only the Python back end writes Python: no module of lisboa_rules/ outside `pyprint/` and
`emit/engine/` (and the engine's own runtime) builds Python code in its string literals or
f-strings. The modules that still lower steps to Python text, until they lower to the IR,
are listed with why; the list only shrinks (a listed module that builds no Python any more
fails too, so that it is taken off)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

PKG = Path(__file__).resolve().parents[2] / "lisboa_rules"

# what the Python back end writes: the engine's own names (`g.players`, `p.reis`, `v_x`, the
# tables `_T_...`), definitions, returns, appends and the .get of a table entry, loops, calls
# with the game and the acting player
CODE = re.compile(
    r"\bg\.(players|rs)\b|\bg\.[a-z_]+\[|\bp\.[a-z_]+\b|\bv_[a-z{]|\b_T_|\bdef \w+\(|"
    r"\breturn [(\[]|\.append\(|\.get\(|\bfor \w+ in |\(g, (p|seat)\b"
)

BACK_END = ("pyprint/", "emit/engine/", "runtime/")

# lowered to Python text until the statement IR replaces them (issue 32)
STILL_TEXT: dict[str, str] = {}


def literals(tree: ast.AST) -> list[tuple[int, str]]:
    """The text of every string literal and f-string (holes as `{}`), docstrings left out."""
    docs = {
        id(n.body[0].value)
        for n in ast.walk(tree)
        if isinstance(n, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
        and n.body and isinstance(n.body[0], ast.Expr)
        and isinstance(n.body[0].value, ast.Constant)
    }
    inside: set[int] = set()
    out: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            inside |= {id(v) for v in node.values}
            out.append((node.lineno, "".join(
                v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and id(node) not in docs and id(node) not in inside:
            out.append((node.lineno, node.value))
    return out


def python_text() -> dict[str, list[tuple[int, str]]]:
    found: dict[str, list[tuple[int, str]]] = {}
    for path in sorted(PKG.rglob("*.py")):
        rel = path.relative_to(PKG).as_posix()
        if rel.startswith(BACK_END):
            continue
        hits = [(line, text) for line, text in literals(ast.parse(path.read_text("utf-8")))
                if CODE.search(text)]
        if hits:
            found[rel] = hits
    return found


def test_no_module_outside_the_python_back_end_writes_python() -> None:
    found = python_text()
    new = {rel: hits[:3] for rel, hits in found.items() if rel not in STILL_TEXT}
    assert not new, f"Python code built as text outside pyprint/ and emit/engine/: {new}"


def test_the_list_of_modules_still_lowering_to_text_only_shrinks() -> None:
    found = python_text()
    done = sorted(set(STILL_TEXT) - set(found))
    assert not done, f"these modules write no Python any more: take them off STILL_TEXT: {done}"


def test_the_detector_finds_python_and_not_words() -> None:
    tree = ast.parse('x = f"    p = g.players[{seat}]"\ny = "the player gains 2 real"\n'
                     'def f():\n    """return [x] for p.reis"""\n    return "v_{}".format(1)\n')
    hits = [text for _, text in literals(tree) if CODE.search(text)]
    assert hits == ["    p = g.players[{}]", "v_{}"]
