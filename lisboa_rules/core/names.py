"""The one grammar of the names a rule binds or declares.

A name a rule gives (a `let:`, the `as:` of a `for_each` or a `choose`, a parameter, a query
and its arguments, a vocabulary name, a field of the state, a measure, an effect) is a
lower-case letter followed by lower-case letters, digits and '_', at most `MAX_LENGTH`
characters: `NAME`. The engine writes such a name into its code (a local `v_NAME`, a query's
function `NAME`, a field `p.NAME`), so a name outside the grammar could be code; and a name the
engine or Python already means something by is refused too: a keyword, `self` and `cls`, a
name of the engine's own `v_` form, a member of the class a name becomes a field of, and where
the engine writes the name bare (a query and its arguments) a Python built-in or a name of the
runtime. (Elsewhere a built-in is no clash: a field named like one is written as an attribute,
`g.NAME`, and a local as `v_NAME`.) `problem(name)` says why a name is refused, or
None; `suggestion(name)` is a name of the grammar close to it.

Standard library only: the front end checks every name with it at load (front/names.py), and
the code generator asserts it again (`lang/typed.local_code`) before any name reaches code.
"""

from __future__ import annotations

import ast
import builtins
import keyword
import re
import unicodedata
from functools import cache
from importlib import resources

MAX_LENGTH = 40
NAME = re.compile(r"[a-z][a-z0-9_]*")
FORM = (f"a lower-case letter, then lower-case letters, digits or '_' (at most {MAX_LENGTH} "
        "characters), as in 'total_left'")

# The names of a method's object and class in the generated code. (The game `g` and the acting
# player `p` are bare names only where a query's arguments are: model/queries.py refuses them
# there, but for a first argument of kind player, which is the acting player.)
CODE_NAMES = frozenset({"self", "cls"})


@cache
def runtime_names() -> frozenset[str]:
    """The names the engine's runtime defines at its top level (functions, classes, tables,
    imports)."""
    out: set[str] = set()
    for node in _runtime().body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            out.add(node.name)
        elif isinstance(node, ast.Assign):
            out |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out.add(node.target.id)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            out |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return frozenset(out)


@cache
def placeholders() -> frozenset[str]:
    """The runtime's public functions that the generated engine defines in their place
    (between its `# <generated>` markers): a name the rules declare for one of them (the
    function of a conserved kind) replaces the placeholder, as it is meant to."""
    lines = _runtime_source().split("\n")
    marks = [i + 1 for i, line in enumerate(lines) if line in ("# <generated>", "# </generated>")]
    if len(marks) != 2:
        return frozenset()
    return frozenset(node.name for node in _runtime().body
                     if isinstance(node, ast.FunctionDef) and not node.name.startswith("_")
                     and marks[0] < node.lineno < marks[1])


@cache
def _runtime_source() -> str:
    return resources.files("lisboa_rules.runtime").joinpath("engine.py").read_text("utf-8")


@cache
def _runtime() -> ast.Module:
    """The runtime's syntax tree, parsed once for both questions."""
    return ast.parse(_runtime_source())


_BUILTINS = frozenset(dir(builtins))


# The members the engine's classes have besides the fields the rules declare: a field of the
# state (of a player or of the game) or a choice of a move (a field of the Move) named as one
# would replace it (tests/project/test_names.py reads the generated classes against them).
STATE_MEMBERS = frozenset({"clone", "rs"})
MOVE_MEMBERS = frozenset({"kind", "player", "to_json", "from_json"})
# The words of each: "a name (...) has already".
OWNERS = {STATE_MEMBERS: "the engine's players and game", MOVE_MEMBERS: "the engine's moves"}


def problem(name: object, *, bare: bool = False, members: frozenset[str] = frozenset(),
            own: frozenset[str] = frozenset()) -> str | None:
    """Why `name` cannot be a name of the rules, or None when it can. The words follow the
    name, as in "'x y' is not a name: ...". `bare`: the name is written as it is at the top
    level of the engine or as a parameter (a query and its arguments), so it may not be a
    Python built-in or a name of the runtime either (elsewhere the engine writes `v_NAME` or
    an attribute). `members`: the names the class the name becomes a field of has already.
    `own`: the runtime's names this name may take (it is their definition)."""
    if not isinstance(name, str):
        return f"is not a name: a name is text, {FORM}"
    if not NAME.fullmatch(name) or not name.isascii():
        return f"is not a name: a name is {FORM}"
    if len(name) > MAX_LENGTH:
        return f"is too long for a name: at most {MAX_LENGTH} characters"
    if keyword.iskeyword(name) or keyword.issoftkeyword(name):
        return "is a keyword of Python, the engine's language: name it otherwise"
    if name in CODE_NAMES:
        return "is a name the engine's code uses for its own values: name it otherwise"
    if name.startswith("v_"):
        return "starts with 'v_', as the engine's own names of the rules' values do"
    if name in members:
        owner = OWNERS.get(members, "the engine's object it is a field of")
        return f"is a name {owner} have already ({', '.join(sorted(members))}): name it otherwise"
    if bare and name in _BUILTINS:
        return "is a built-in name of Python, the engine's language: name it otherwise"
    if bare and name in runtime_names() and name not in own:
        return "is a name of the engine's runtime: name it otherwise"
    return None


def suggestion(name: object, *, bare: bool = False, members: frozenset[str] = frozenset(),
               own: frozenset[str] = frozenset()) -> str:
    """A name of the grammar made from `name` (its letters and digits, lower-case, the rest as
    '_'), with '_value' added when that is still refused (where `problem` is given the same
    `bare` and `members`)."""
    text = unicodedata.normalize("NFKD", str(name)).encode("ascii", "ignore").decode().lower()
    text = re.sub(r"[^a-z0-9]+", "_", text).strip("_")
    text = re.sub(r"^[0-9_]+", "", text).removeprefix("v_")[:MAX_LENGTH].rstrip("_") or "value"
    if problem(text, bare=bare, members=members, own=own) is not None:
        text = (text[: MAX_LENGTH - len("_value")] + "_value").lstrip("_")
    return text if problem(text, bare=bare, members=members, own=own) is None else "value"


def check(name: str, *, bare: bool = False) -> str:
    """`name`, asserted to be a name of the grammar: the last guard before a name of the rules
    is written into code (the front end has refused any other, with its position)."""
    why = problem(name, bare=bare)
    if why is not None:
        raise ValueError(f"a name of the rules reached the code generator unchecked: "
                         f"{name!r} {why}")
    return name


def stem(ident: str) -> str:
    """A part of an engine's own name made from an id or a name of the rules (`state-action`
    -> `state_action`): letters, digits and '_' only. The engine makes such names unique by
    itself (a number after a name already taken), so two ids with one stem do not meet."""
    out = re.sub(r"[^a-z0-9_]", "_", ident.lower())
    if not out.isidentifier() or not out.isascii():
        raise ValueError(f"no name of the engine can be made from {ident!r}")
    return out
