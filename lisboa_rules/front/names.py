"""Every name a rules document binds or declares, checked against the names' one grammar
(core/names.py) at load, where it is written.

The places a name is given: in any list of steps, the keys of `let:`, `with:` and `apply:`
(and the choices an `apply:` renames), the `as:` of `for_each:` and `choose:`; anywhere, the
keys of `params:`; in the vocabulary, its names, its queries and their arguments; in the
state, the fields of a player and of the game; in the effects, the measures. A variant's
changes are walked the same way, under the kind each changes (its merged documents are
checked again by `validate`, at the same positions). Each refused name is one `bad-name`
error at the name, with the grammar and a name of it to use instead.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from lisboa_rules.core import names
from lisboa_rules.core.diagnostics import Diagnostic
from lisboa_rules.core.source import PathTuple
from lisboa_rules.front.loader import LoadedDoc

# Keys whose mapping's keys are names the rules give.
_NAMED_KEYS = ("let", "with", "params")
# Keys of an `apply:` that are not the names of parameters.
_APPLY_OWN = ("effects", "choices")
# By document kind: the lists whose items declare a name, the key holding it (a list of keys
# is a list nested in the items: `queries[*].args[*].name`), and how the engine writes it
# (`bare`: as it is, at the top level or as a parameter; or as a field of a class that has
# `members` of its own).
_Declared = tuple[tuple[str, ...], str, bool, frozenset[str], frozenset[str] | None]
_NONE: frozenset[str] = frozenset()
_DECLARED: dict[str, tuple[_Declared, ...]] = {
    "vocabulary": ((("names",), "name", False, _NONE, _NONE),
                   (("queries",), "name", True, _NONE, _NONE),
                   (("queries", "args"), "name", True, _NONE, _NONE)),
    "state": ((("player",), "id", False, names.STATE_MEMBERS, _NONE),
              (("game",), "id", False, names.STATE_MEMBERS, _NONE),
              # the public function listing a conserved kind's ids (None: it may take the
              # runtime's placeholders, read when first needed)
              (("invariants",), "function", True, _NONE, None)),
    "effects": ((("measures",), "id", False, _NONE, _NONE),),
}
# A name given under `root`: its path, the name, whether the name is a key, whether it is bare,
# the members of the class it becomes a field of and the runtime's names it may take.
_Given = tuple[PathTuple, object, bool, bool, frozenset[str], frozenset[str]]


def check_names(doc: LoadedDoc) -> list[Diagnostic]:
    """The `bad-name` errors of one (schema-valid) document."""
    data = doc.data
    if not isinstance(data, Mapping):
        return []
    roots: list[tuple[str, Any, PathTuple]] = []
    if data.get("kind") == "variant":
        changes = data.get("changes")
        if isinstance(changes, Mapping):
            roots = [(str(k), v, ("changes", k)) for k, v in changes.items()]
    else:
        roots = [(str(data.get("kind")), data, ())]
    out: list[Diagnostic] = []
    seen: set[tuple[PathTuple, bool]] = set()
    for kind, root, at in roots:
        for path, name, is_key, bare, members, own in _names(kind, root, at):
            if (path, is_key) in seen:
                continue
            seen.add((path, is_key))
            why = names.problem(name, bare=bare, members=members, own=own)
            if why is None:
                continue
            span = doc.span_for(path, key=is_key)
            out.append(Diagnostic("bad-name", f"'{name}' {why}", span,
                                  suggestion=names.suggestion(name, bare=bare,
                                                                members=members, own=own)))
    return out


def _names(kind: str, root: Any, at: PathTuple) -> Iterator[_Given]:
    """Every name given under `root`, a document (or a variant's changes) of `kind`."""
    for lists, key, bare, members, own in _DECLARED.get(kind, ()):
        for path, name in _declared(root, at, lists, key):
            yield path, name, False, bare, members, names.placeholders() if own is None else own
    yield from _walk(root, at)


def _declared(node: Any, at: PathTuple, lists: tuple[str, ...], key: str
              ) -> Iterator[tuple[PathTuple, object]]:
    if not isinstance(node, Mapping) or not isinstance(node.get(lists[0]), list):
        return
    for i, item in enumerate(node[lists[0]]):
        here = (*at, lists[0], i)
        if len(lists) > 1:
            yield from _declared(item, here, lists[1:], key)
        elif isinstance(item, Mapping) and key in item:
            name, deeper = _given(item[key])
            if name is not None and not _directive(name):
                yield (*here, key, *deeper), name


def _directive(name: object) -> bool:
    """A variant's own word among the names it changes (`$add`, `$remove`, `$after`, ...): the
    names it adds are checked again in the merged document."""
    return isinstance(name, str) and name.startswith("$")


def _given(value: Any) -> tuple[Any, PathTuple]:
    """What a value gives, and the path from the value to it: what a variant's `KEY: {$add:
    VALUE}` adds; nothing for its other words (`$remove: true`); the value itself elsewhere."""
    if isinstance(value, Mapping) and any(_directive(k) for k in value):
        if len(value) == 1 and "$add" in value:
            return value["$add"], ("$add",)
        return None, ()
    return value, ()


def _walk(node: Any, at: PathTuple) -> Iterator[_Given]:
    """The names of steps and parameters anywhere under `node` (a choice is a field of a
    move)."""
    if isinstance(node, list):
        for i, item in enumerate(node):
            yield from _walk(item, (*at, i))
        return
    if not isinstance(node, Mapping):
        return
    for key in _NAMED_KEYS:
        given, deeper = _given(node.get(key))
        if isinstance(given, Mapping):
            for name in given:
                if not _directive(name):
                    yield (*at, key, *deeper, name), name, True, False, _NONE, _NONE
    for key, members in (("for_each", _NONE), ("choose", names.MOVE_MEMBERS)):
        given, deeper = _given(node.get(key))
        if isinstance(given, Mapping) and "as" in given:
            name, more = _given(given["as"])
            if name is not None and not _directive(name):
                yield (*at, key, *deeper, "as", *more), name, False, False, members, _NONE
    given, deeper = _given(node.get("apply"))
    if isinstance(given, Mapping):
        at_apply = (*at, "apply", *deeper)
        for name in given:
            if name not in _APPLY_OWN and not _directive(name):
                yield (*at_apply, name), name, True, False, _NONE, _NONE
        renamed, more = _given(given.get("choices"))
        if isinstance(renamed, Mapping):
            at_choices = (*at_apply, "choices", *more)
            for name, new in renamed.items():
                if _directive(name) or _directive(new) or isinstance(new, Mapping):
                    continue
                yield (*at_choices, name), name, True, False, names.MOVE_MEMBERS, _NONE
                yield (*at_choices, name), new, False, False, names.MOVE_MEMBERS, _NONE
    for key, value in node.items():
        if isinstance(value, Mapping | list):
            yield from _walk(value, (*at, key))
