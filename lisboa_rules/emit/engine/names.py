"""How the Python engine names what the rules name once: the rules' tables of values, long
constants and long measures (the printer's `pyprint.Names` of a scope, `names`).

The check pass gives each table of values a neutral id (model/procs.py `Tables`: `kind.column`,
and `kind.column.2` for another table of the same column in another rule set); here it becomes
the engine's `_T_kind_column` (`_T_kind_column_2`). A long constant of the rules data is named
`_K1`, `_K2`, … in the order printed; a long measure is a function of its own, `_m_ID`
(`_m_ID_2` for another body of the same measure in another rule set). The tables the move
generators make while printing (`_T_x_by_choice`, a bundle of a row's own `_T_const1`) are kept
here too (`values`: every table of the engine by its name, in the order made).
"""

from __future__ import annotations

from typing import Any

from lisboa_rules.core import names as grammar
from lisboa_rules.lang.typed import Scope
from lisboa_rules.model.procs import Tables
from lisboa_rules.pyprint import expr as pyprint


class EngineNames:
    """The names of one build's engine (shared by its rule sets)."""

    def __init__(self, tables: Tables) -> None:
        self.tables = tables
        self.values: dict[str, Any] = {}  # the engine's tables, by name
        self.constants: dict[str, tuple[str, Any]] = {}  # a constant's code -> (name, value)
        self.measures: dict[str, tuple[str, str]] = {}  # name -> (annotation, code)
        self._by_scope: dict[int, tuple[Any, pyprint.Names]] = {}

    def table(self, tid: str) -> str:
        """The engine's name of a table of values of the rules (by its id)."""
        kind, col, n = self.tables.refs[tid]
        name = "_T_" + grammar.stem(kind) + "_" + grammar.stem(col) + (f"_{n}" if n > 1 else "")
        self.values.setdefault(name, self.tables.values[tid])
        return name

    def constant(self, code: str, value: Any) -> str:
        """A long constant of the rules data (its code, and what it is), named once."""
        found = self.constants.get(code)
        if found is None:
            found = self.constants[code] = (f"_K{len(self.constants) + 1}", value)
        return found[0]

    def measure(self, mid: str, returns: str, code: str) -> str:
        """A measure as a function of the game and the acting player, shared by rule sets
        where its code is the same."""
        stem = "_m_" + grammar.stem(mid)
        name = stem
        n = 1
        while name in self.measures and self.measures[name] != (returns, code):
            n += 1
            name = f"{stem}_{n}"
        self.measures[name] = (returns, code)
        return name

    def names(self, scope: Scope) -> pyprint.Names:
        """How the engine names the tables, constants and measures a scope's expressions read
        (one `Names`, with its memo of printed nodes, per table of columns: the scopes of a
        rule set's procedures share it)."""
        key = id(scope.tables)
        found = self._by_scope.get(key)
        if found is not None and found[0] is scope.tables:
            return found[1]
        columns = scope.tables

        def table(kind: str, col: str) -> str:
            return self.table(columns[kind][col][1])

        made = pyprint.Names(self.constant, table, self.measure, scope.int_kinds, scope.kinds,
                             memo={})
        self._by_scope[key] = (columns, made)
        return made


class _Alone(EngineNames):
    """The names of a scope printed alone, whose tables' ids are their engine names."""

    def table(self, tid: str) -> str:
        return super().table(tid) if tid in self.tables.refs else tid


def names_of(scope: Scope, tables: Tables | None = None) -> pyprint.Names:
    """A scope's names in an engine of its own (tests, tools: one scope printed alone, its
    tables' ids given by `tables`; a table id they do not know is the table's name)."""
    return _Alone(tables or Tables()).names(scope)
