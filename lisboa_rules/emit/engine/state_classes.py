"""The engine's state classes (`Player`, `Game`), generated from the declared state
(rules/state.yaml): one view per class, which the engine template lays out.

Each field becomes an annotated attribute with its default and its `text` as a comment;
`clone()` copies each mutable field in the way its type needs (`self.hand[:]`,
`{k: v.copy() for k, v in self.offices.items()}`), which is what keeps the move generator fast.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lisboa_rules.core.encode import py_comment
from lisboa_rules.emit.engine.pyfmt import fmt, identifier, literal
from lisboa_rules.model.state import StateDecl, StateField, StateType

CLASSES = {"player": "Player", "game": "Game"}
COMMENT_WIDTH = 92


@dataclass
class FieldView:
    name: str
    annotation: str
    default: str  # "" (required) or " = ..." as written after the annotation
    comments: list[str]
    copy: str | None  # the expression clone() assigns, or None: shared (immutable)


@dataclass
class ClassView:
    name: str
    fields: list[FieldView] = field(default_factory=list)

    def names(self, col: int) -> str:
        """The field names as a Python tuple literal, written from column `col`."""
        return fmt(tuple(f.name for f in self.fields), 0, col=col)


def annotation(t: StateType, decl: StateDecl) -> str:
    """The Python type of a declared type."""
    if t.name == "list":
        out = f"list[{annotation(t.args[0], decl)}]"
    elif t.name == "map":
        out = f"dict[{annotation(t.args[0], decl)}, {annotation(t.args[1], decl)}]"
    elif t.name == "player":
        out = "Player"
    elif t.name == "bool":
        out = "bool"
    elif t.name in ("int", "seat"):
        out = "int"
    elif t.name == "text":
        out = "str"
    else:
        kind = decl.kind(t.name)
        out = "int" if kind is not None and kind.of == "int" else "str"
    return f"{out} | None" if t.optional else out


def copy_code(t: StateType, code: str, depth: int = 0) -> str | None:
    """An expression that copies the value `code` of type `t` deeply, or None when the value is
    immutable (an int, a text, an id) and can be shared."""
    if t.name == "player":
        out = f"{code}.clone()"
    elif t.name == "list":
        inner = copy_code(t.args[0], f"v{depth}", depth + 1)
        out = f"{code}[:]" if inner is None else f"[{inner} for v{depth} in {code}]"
    elif t.name == "map":
        inner = copy_code(t.args[1], f"v{depth}", depth + 1)
        out = (
            f"{code}.copy()"
            if inner is None
            else f"{{k{depth}: {inner} for k{depth}, v{depth} in {code}.items()}}"
        )
    else:
        return None
    if t.optional:
        return f"None if {code} is None else {out}"
    return out


def default_code(f: StateField) -> str:
    if f.required:
        return ""
    value: Any = f.default
    if value == [] and isinstance(value, list):
        return " = field(default_factory=list)"
    if value == {} and isinstance(value, dict):
        return " = field(default_factory=dict)"
    if isinstance(value, list | dict):
        return f" = field(default_factory=lambda: {fmt(value, 4)})"
    return f" = {literal(value)}"


def _comments(text: str) -> list[str]:
    words = " ".join(text.split()).split(" ")
    lines: list[str] = []
    cur = ""
    for w in words:
        if cur and len(cur) + 1 + len(w) > COMMENT_WIDTH:
            lines.append(cur)
            cur = w
        else:
            cur = f"{cur} {w}" if cur else w
    if cur:
        lines.append(cur)
    return [py_comment(line) for line in lines]


def state_classes(decl: StateDecl) -> dict[str, ClassView]:
    """The views of `Player` and `Game`, by scope."""
    out: dict[str, ClassView] = {}
    for scope, name in CLASSES.items():
        view = ClassView(name)
        for f in decl.fields(scope):
            # the code below is written in the class, about `self`
            fid = identifier(f.id)
            view.fields.append(
                FieldView(
                    fid,
                    annotation(f.type, decl),
                    default_code(f),
                    _comments(f.text),
                    copy_code(f.type, f"self.{fid}"),
                )
            )
        out[scope] = view
    return out
