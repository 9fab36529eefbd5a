"""What a screen shows of the rules' components and of a move, as the engine's tables.

`component(g, kind, id)` reads, for every kind of rules/state.yaml whose rows the rules list
(`kinds:` with `from:`: a deck's cards, a table's rows, ...), each id's name, its
one line of words and its row as plain data; `move_words(g, move)` reads each kind of move's
name (its action's `name:`, else the title of the rule it names) and each move field's label
and the kind of the ids it holds. The words are the reference's (`emit/reference/words.py`
`DataWords`): the engine says a component as the appendix prints it. Every rule set has its own
rows (a house rule that changes a row changes what `component` says in its games): the base
game's tables are written whole, the other rule sets' as what their variants change.
"""

from __future__ import annotations

import keyword
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from lisboa_rules.core.encode import py_comment, py_str
from lisboa_rules.core.source import Span
from lisboa_rules.emit.engine.pyfmt import Update, fmt, identical, identifier
from lisboa_rules.emit.reference.words import DataWords, humanize
from lisboa_rules.ir.types import VType
from lisboa_rules.model.state import StateKind
from lisboa_rules.model.types import Model

# a row's keys its plain data leaves out: where the row comes from in the sources
_PROVENANCE = ("source", "assumptions")

Entry = tuple[str, str, Any]  # an id's (name, words, row)


@dataclass
class WordsView:
    """The template's words and components: each table as its lines of code, and the public
    function of each conserved kind listed by a function of its own (`all_cards` -> `card`):
    (its name, the kind's literal, the id's annotation, the kind's words)."""

    tables: list[str] = field(default_factory=list)
    functions: list[tuple[str, str, str, str]] = field(default_factory=list)


def _rows(m: Model, kind: StateKind) -> tuple[tuple[str, ...], dict[Any, Any]] | None:
    """The data path of a kind's rows and its rows by id, or None when the rules list none
    (a kind of open ids, a kind read from elsewhere than the rules' data)."""
    if kind.source is None:
        return None
    path = tuple(kind.source.split("."))
    node: Any = m.data
    for part in path:
        node = node.get(part) if isinstance(node, dict) else None
    if not isinstance(node, list):
        return None
    out: dict[Any, Any] = {}
    for row in node:
        ident = row.get(kind.key) if isinstance(row, dict) and kind.key else row
        if isinstance(ident, bool) or not isinstance(ident, int | str) or ident in out:
            continue
        out[ident] = ({k: v for k, v in row.items() if k not in _PROVENANCE}
                      if isinstance(row, dict) else row)
    return path, out


def noun(text: str) -> str:
    """A kind's words without their article: `a red token` -> `red token`."""
    for article in ("a ", "an ", "the "):
        if text.startswith(article):
            return text[len(article):]
    return text


def entries(m: Model) -> dict[str, tuple[tuple[str, ...], dict[Any, Entry]]]:
    """Every kind of a rule set whose rows the rules list: its rows' data path and each id's
    (name, words, row)."""
    said = DataWords(m)
    out: dict[str, tuple[tuple[str, ...], dict[Any, Entry]]] = {}
    for kind in m.state.kinds:
        found = _rows(m, kind)
        if found is None:
            continue
        path, rows = found
        what = noun(kind.text)
        out[kind.id] = (path, {
            ident: (said.row_name(row, kind.key, ident, what),
                    said.row_words(row, kind.key, ident, what), row)
            for ident, row in rows.items()})
    return out


def move_names(m: Model) -> dict[str, str]:
    """Each kind of move of a rule set by its name: its `name:` (an action's, a move's of the
    flow), else the title of the rule its refusals name, else its id humanized."""
    titles = {r.id: r.title for r in m.rules}
    out: dict[str, str] = {}
    ps = m.procs
    if ps is None:
        return out
    for kind, action in ps.actions.items():
        name = ps.action_rows.get(kind, {}).get("name")
        out[kind] = name if isinstance(name, str) and name else titles.get(
            action.rule, humanize(kind))
    return out


def move_labels(models: Sequence[Model], types: Mapping[str, VType]) -> dict[str, tuple[str, str]]:
    """Each move field's label and the kind of the ids it holds: a field named after its kind
    (`state_action`) is labelled by the kind's words (`State action`), any other by its name
    (`good`); a seat's kind is `seat` (said by its colour), a number's or a yes's none."""
    kinds: dict[str, StateKind] = {}
    for m in models:
        for k in m.state.kinds:
            kinds.setdefault(k.id, k)
    out: dict[str, tuple[str, str]] = {}
    for name, t in types.items():
        item = t.args[0] if t.name == "list" and t.args else t
        label = name.replace("_", " ")
        if item.name in kinds:
            kind = kinds[item.name]
            if name.replace("_", "-") == kind.id.replace("_", "-"):
                label = noun(kind.text)
            out[name] = (label, kind.id)
        else:
            out[name] = (label, "seat" if item.name == "seat" else "")
    return out


def _changed_span(m: Model, base: Model, path: tuple[str, ...]) -> Span:
    """Where a rule set changes what lies under a data path: its first span that the base
    game does not have (the base's span of the path when none)."""
    spans = base.spans
    moved = [sp for key, sp in m.spans.items()
             if key[:len(path)] == path and (was := spans.get(key)) is not sp and was != sp]
    if moved:
        return min(moved, key=lambda sp: (sp.file, sp.line, sp.col))
    return m.span_of(path[0], *path[1:])


ANNOTATION = "dict[str, dict[Any, tuple[str, str, Any]]]"


def _assign(head: str, value: Any) -> str:
    """`head = value`, the value laid out as ruff formats it."""
    return f"{head} = {fmt(value, 0, '', len(head) + 3)}"


def words_view(models: Sequence[Model], types: Mapping[str, VType], listers: Sequence[
        tuple[str, str, str]], taken: set[str], loc: Callable[[Span], str]) -> WordsView:
    """The tables of `component` and `move_words` for every rule set (`models`, the base game
    first), with `types` the move fields' types, `listers` the public functions listing a
    conserved kind's ids (name, kind, annotation) and `taken` the engine's public names (a
    kind's own function is not written over one of them)."""
    view = WordsView()
    base = models[0]
    mine = [entries(m) for m in models]
    kinds = mine[0]
    lines = ["# Every id of a kind of rules/state.yaml whose rows the rules list, by kind: its "
             "name, its words",
             "# and its row as plain data (`component`).",
             f"_COMPONENTS: Final[{ANNOTATION}] = {{"]
    for kind, (path, rows) in kinds.items():
        lines.append(f"    # {py_comment(loc(base.span_of(path[0], *path[1:])))} "
                     f"{py_comment('.'.join(path))}")
        head = f"    {py_str(kind)}: "
        lines.append(head + fmt(rows, 4, ",", len(head)) + ",")
    lines.append("}")
    view.tables.append("\n".join(lines))
    lines = []
    first: dict[str, str] = {}  # a rule set's changes as written -> the first key with them
    same: list[str] = []  # the rule sets whose changes an earlier one has: the same table
    for m, found in zip(models[1:], mine[1:], strict=True):
        changes: list[str] = []
        for kind, (path, rows) in found.items():
            was = kinds.get(kind)
            diff: dict[Any, Entry] | Update = rows
            if was is not None and all(k in rows for k in was[1]):  # no row dropped
                new = {k: v for k, v in rows.items()
                       if k not in was[1] or not identical(v, was[1][k])}
                if not new:
                    continue
                diff = Update(f"_COMPONENTS[{py_str(kind)}]", new)
            changes.append(f"        # {py_comment(loc(_changed_span(m, base, path)))} "
                           f"{py_comment('.'.join(path))}")
            head = f"        {py_str(kind)}: "
            changes.append(head + fmt(diff, 8, ",", len(head)) + ",")
        key, text = fmt(tuple(m.variants)), "\n".join(changes)
        if changes and text in first:
            same.append(f"_COMPONENTS_OF[{key}] = _COMPONENTS_OF[{first[text]}]")
        elif changes:
            first[text] = key
            lines += [f"    {key}: {{", *changes, "    },"]
    view.tables.append("\n".join([
        "# What the rule sets whose variants change some rows change (by the key of RULESETS;",
        "# a rule set whose changes are another's shares its table).",
        f"_COMPONENTS_OF: Final[dict[tuple[str, ...], {ANNOTATION}]] = "
        + ("{" if lines else "{}"), *lines, *(["}"] if lines else []), *same]))
    names = [move_names(m) for m in models]
    view.tables.append(
        "# Each kind of move by its name: its `name:` (rules/court.yaml `actions:`, "
        "rules/flow.yaml\n# `moves:`), else the title of the rule it names.\n"
        + _assign("_MOVE_NAMES: Final[dict[str, str]]", names[0]))
    own = {tuple(m.variants): {k: v for k, v in n.items() if names[0].get(k) != v}
           for m, n in zip(models[1:], names[1:], strict=True)}
    own = {k: v for k, v in own.items() if v}
    view.tables.append(
        "# The names of the rule sets whose variants add or rename some (by the key of "
        "RULESETS).\n"
        + _assign("_MOVE_NAMES_OF: Final[dict[tuple[str, ...], dict[str, str]]]", own))
    view.tables.append(
        "# Each move field's label and the kind of the ids it holds: a field named after its "
        "kind\n# is said in its kind's words (rules/state.yaml `kinds:`), any other by its "
        "name; `seat`:\n# a seat, said by its player's colour; \"\": a number or a yes.\n"
        + _assign("_MOVE_LABELS: Final[dict[str, tuple[str, str]]]",
                  move_labels(models, types)))
    by_kind = {k.id: k for k in base.state.kinds}
    for _, kind, of in listers:
        name = kind.replace("-", "_")
        if (kind not in kinds or name in taken or keyword.iskeyword(name)
                or not name.isidentifier()):
            continue
        item = of.removeprefix("list[").removesuffix("]")
        view.functions.append((identifier(name), py_str(kind), item,
                               by_kind[kind].text if kind in by_kind else kind))
        taken.add(name)
    return view
