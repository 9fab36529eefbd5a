"""The compiled rules: every rule set's model and the inputs they came from, what the back ends
read. Below the pipeline that makes it and the emitters that read it."""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field

from lisboa_rules.core.source import Span
from lisboa_rules.front.overlay import Change
from lisboa_rules.model import types as m
from lisboa_rules.model.checked import CheckedSteps


@dataclass
class CompiledRuleSet:
    """One complete rule set: the base (with folded variants) plus a combination of variants;
    `steps`: its procedures, actions and phases checked into the IR (the check pass's)."""

    key: tuple[str, ...]
    model: m.Model
    changes: list[Change]
    steps: CheckedSteps | None = None


@dataclass
class Compiled:
    """Everything the emitters need."""

    base: CompiledRuleSet
    rulesets: list[CompiledRuleSet]
    variants: list[m.VariantInfo]
    # (path inside the rules folder, sha256) of every file as the loader read it, in discovery
    # order: what the DO-NOT-EDIT headers show, whatever happens on disk while the build runs.
    digests: list[tuple[str, str]]
    # display path (diagnostics, relative to the CWD) -> stable name for generated files
    # ("rules/<path inside the rules folder>"): the same from every checkout and directory.
    names: dict[str, str] = field(default_factory=dict)

    folded: tuple[str, ...] = ()  # variants built into the base game (build --variant)
    folded_titles: tuple[tuple[str, str], ...] = ()  # (id, title) of those, in `folded` order
    # those variants' descriptions (their callouts are printed at their rules, as the rules')
    folded_infos: tuple[m.VariantInfo, ...] = ()

    @property
    def inputs(self) -> list[tuple[str, str]]:
        """(stable name "rules/<path>", sha256) of every input file, sorted."""
        return sorted((f"rules/{rel}", h) for rel, h in self.digests)

    @functools.cached_property
    def digest(self) -> str:
        """One hash over all inputs (the DO-NOT-EDIT headers show it)."""
        lines = "\n".join(f"{p} {h}" for p, h in self.inputs)
        return hashlib.sha256(lines.encode()).hexdigest()

    def name_of(self, display: str) -> str:
        """The stable name generated files use for a rules file."""
        return self.names.get(display, display)

    def game_ends(self, ends: str = "game") -> dict[tuple[str, ...], Span]:
        """Where what ends the game of each rule set is written (by its key): the first change
        a variant makes to a trigger that ends the game (one added, removed or changed), else
        its first trigger that ends the game, else its list of triggers (`ends`: "period",
        the same of what ends a period)."""
        ending = {t.id for rs in self.rulesets for t in rs.model.triggers if t.ends == ends}
        out: dict[tuple[str, ...], Span] = {}
        for rs in self.rulesets:
            own = [t.span for t in rs.model.triggers if t.ends == ends]
            out[rs.key] = (self._first_change(rs, lambda c: c.path[:1] == ("triggers",)
                                              and _ends_game(c, ending, ends))
                           or (own[0] if own else rs.model.span_of("flow", "triggers")))
        return out

    def period_ends(self) -> dict[tuple[str, ...], Span]:
        """Where what ends a period of each rule set is written (by its key), for a game that
        stayed in a period: as `game_ends`, of the triggers that end a period."""
        return self.game_ends("period")

    def round_ends(self) -> dict[tuple[str, ...], Span]:
        """Where what ends a round of each rule set is written (by its key), for a game whose
        end was triggered and that waits for its round to end: the first change a variant
        makes to the turn order or to the game end (`flow.turn_order`, `flow.game_end`), else
        the game end's rule."""
        return {rs.key: self._first_change(
                    rs, lambda c: c.path[:1] in (("turn_order",), ("game_end",)))
                or rs.model.span_of("flow", "game_end") for rs in self.rulesets}

    def removals(self) -> dict[tuple[str, ...], Span]:
        """Where the first removal (`$remove`) of a variant of each rule set is written (by
        its key), for the rule sets a variant removes a rule of."""
        out: dict[tuple[str, ...], Span] = {}
        for rs in self.rulesets:
            found = self._first_change(rs, lambda c: c.after is None and c.before is not None,
                                       None)
            if found is not None:
                out[rs.key] = found
        return out

    def _first_change(self, rs: CompiledRuleSet, which: Callable[[Change], bool],
                      kind: str | None = "flow") -> Span | None:
        """Where the first change of a rules file (`kind`: rules/flow.yaml; None: any) that
        `which` picks is written, of the variants of rule set `rs` (the variants folded into
        the base game change every rule set); None when no variant makes one."""
        changes = rs.changes if rs is self.base else [*self.base.changes, *rs.changes]
        found = [c.span for c in changes if (kind is None or c.kind == kind) and which(c)]
        return min(found, key=lambda s: (s.file, s.line, s.col)) if found else None


def _ends_game(change: Change, ending: set[str], ends: str = "game") -> bool:
    """Whether a change of flow.yaml's triggers is one of a trigger that ends the game (or
    what `ends` names; `ending`: the ids of those of every rule set): added or removed whole,
    or changed inside (its item named by its id in the change's key)."""
    for item in (change.before, change.after):
        if isinstance(item, dict) and "id" in item and len(change.path) == 2:
            return item.get("ends") == ends
    named = change.key[1] if len(change.key) > 1 else None
    return isinstance(named, str) and named.startswith("[") and named[1:-1] in ending
