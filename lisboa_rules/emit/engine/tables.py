"""The shapes of the generated engine's rule tables: the record classes the rule sets are made of
and the RuleSet itself. The runtime is generic, so it declares (between its `# <generated>`
markers) only the RuleSet fields its machinery reads; the engine gets the whole classes from
here, next to the values `view.ruleset_fields` gives them (`check_fields` proves the two name
the same fields)."""

from __future__ import annotations

import textwrap
from collections.abc import Iterable
from dataclasses import dataclass

from lisboa_rules.core.encode import py_comment, py_docstring


@dataclass(frozen=True)
class Record:
    """A frozen dataclass of the engine: its name, docstring and fields (name, annotation,
    default code or None, comment)."""

    name: str
    doc: str
    fields: tuple[tuple[str, str, str | None, str], ...]

    def code(self) -> str:
        lines = [
            "@_dataclass(frozen=True)",
            f"class {self.name}:",
            f'    """{py_docstring(self.doc)}"""',
            "",
        ]
        for name, annotation, default, comment in self.fields:
            tail = f" = {default}" if default is not None else ""
            for line in textwrap.wrap(comment, 94):
                lines.append(f"    # {py_comment(line)}")
            lines.append(f"    {name}: {annotation}{tail}")
        return "\n".join(lines)


RECORDS: tuple[Record, ...] = (
    Record(
        "NobleDef",
        "A Noble: his State actions, his Noble action and who may take his seat.",
        (
            ("id", "str", None, ""),
            ("name", "str", None, ""),
            ("state_actions", "tuple[str, ...]", None, ""),
            ("noble_action", "str", None, ""),
            ("trade_goods", "tuple[str, ...]", None, ""),
            ("reign_flag", "str | None", "None", ""),
            ("reign_name", "str", '""', ""),
            ("reign_action", "str | None", "None", ""),
        ),
    ),
    Record(
        "StateActionDef",
        "A State action and its effects.",
        (
            ("id", "str", None, ""),
            ("name", "str", None, ""),
            ("effects", "tuple[tuple[str, int], ...]", None, ""),
        ),
    ),
    Record(
        "NobleActionDef",
        "A Noble action: one of the engine's procedures with its parameters.",
        (
            ("id", "str", None, ""),
            ("name", "str", None, ""),
            ("procedure", "str", None, ""),
            ("land_price", "IntFn | None", None, ""),
            ("rubble", "int", None, ""),
            ("lots", "tuple[tuple[str, int], ...]", None, ""),
            ("extra_marker_on", "str | None", None, ""),
            ("extra_max", "int", None, ""),
            ("wigs_per_official", "int", None, ""),
            ("forbidden_flag", "str | None", None, ""),
        ),
    ),
    Record(
        "ActionDef",
        "One of the turn's actions (or follow / pass).",
        (
            ("id", "str", None, ""),
            ("name", "str", None, ""),
            ("procedure", "str", None, ""),
            ("cost", "str | None", None, ""),
            ("followable", "bool", None, ""),
            ("reward", "tuple[tuple[str, int], ...]", None, ""),
            (
                "number",
                "int | None",
                "None",
                "the action's number in the rules (1 to 4), if it has one",
            ),
        ),
    ),
    Record(
        "CardDef",
        "A Political card.",
        (
            ("number", "int", None, ""),
            ("deck", "str", None, ""),
            ("type", "str", None, ""),
            ("influence", "int", None, ""),
            ("reward", "tuple[tuple[str, int], ...]", None, ""),
            ("penalty", "tuple[tuple[str, int], ...]", None, ""),
            ("event_action", "str | None", None, ""),
            ("event_effects", "tuple[tuple[str, int], ...]", None, ""),
            ("set_flag", "str | None", None, ""),
        ),
    ),
)

RULESET = Record(
    "RuleSet",
    "Every rule the engine plays by; one per combination of variants.",
    (
        ("key", "tuple[str, ...]", None, ""),
        ("players_min", "int", None, ""),
        ("players_max", "int", None, ""),
        ("colors", "tuple[str, ...]", None, ""),
        ("periods", "int", None, ""),
        ("flags", "tuple[str, ...]", None, ""),
        ("businesses", "tuple[str, ...]", None, ""),
        ("business_names", "tuple[str, ...]", None, ""),
        ("hand_size", "int", None, ""),
        ("start_reis", "int", None, ""),
        ("start_influence", "int", None, ""),
        ("start_officials", "int", None, ""),
        ("start_stores", "int", None, ""),
        ("start_markers", "int", None, ""),
        ("neutral_officials", "int", None, ""),
        ("influence_min", "int", None, ""),
        ("influence_max", "int", None, ""),
        ("wig_at_max", "int", None, ""),
        ("reis_icons", "tuple[int, ...]", None, ""),
        ("treasury_values", "tuple[int, ...]", None, ""),
        ("treasury_modifiers", "tuple[int, ...]", None, ""),
        ("treasury_down", "int", None, ""),
        ("treasury_up", "int", None, ""),
        ("portfolio_base", "int", None, ""),
        ("portfolio_per_set", "int", None, ""),
        ("ship_influence", "int", None, ""),
        ("warehouse_base", "int", None, ""),
        ("warehouse_per_set", "int", None, ""),
        ("cubes_per_set", "int", None, ""),
        ("max_sets", "int", None, ""),
        ("period_wigs_per_set", "int", None, ""),
        ("term_money", "str", None, "the game's words for its money and its score"),
        ("term_score", "str", None, ""),
        ("nobles", "tuple[NobleDef, ...]", None, ""),
        ("state_actions", "dict[str, StateActionDef]", None, ""),
        ("noble_actions", "dict[str, NobleActionDef]", None, ""),
        ("actions", "dict[str, ActionDef]", None, ""),
        ("costs", "dict[str, IntFn]", None, ""),
        ("triggers", "tuple[TriggerDef, ...]", None, ""),
        ("period_end", "tuple[StepDef, ...]", None, ""),
        ("extra_rounds", "int", None, ""),
        ("follows_allowed", "bool", None, ""),
        ("scoring", "tuple[SourceDef, ...]", None, ""),
        ("majority_columns", "tuple[int, ...]", None, ""),
        ("column_names", "tuple[str, ...]", None, ""),
        ("tiebreakers", "tuple[tuple[str, IntFn], ...]", None, ""),
        ("piles", "tuple[str, ...]", None, ""),
        ("treasury_pile", "str", None, ""),
        ("cards", "dict[int, CardDef]", None, ""),
        ("decrees", "dict[str, ItemDef]", None, ""),
        ("decree_display", "int", None, ""),
        ("plans", "dict[str, int]", None, ""),
        ("ships", "dict[str, tuple[int, int]]", None, ""),
        ("shipyard_per_color", "IntFn", None, ""),
        ("procs", "dict[str, ProcDef]", None, ""),
        ("moves", "dict[str, MoveDef]", None, ""),
        ("phases", "dict[str, PhaseDef]", None, ""),
        ("first_seat", "Callable[[Game], int] | None", None,
         "who plays first once the setup is done (None: the setup's start player)"),
        ("next_seat", "Callable[[Game, int], int] | None", None,
         "who plays after a seat (None: the next seat in seat order)"),
        (
            "fx",
            "dict[str, dict[Any, tuple[OptsFn, WhyFn, RunFn]]]",
            None,
            "the bundles of effects of the rows of a column (`state_action.effects`): row ->"
            " (opts, why, run), the compiled functions of its bundle",
        ),
        (
            "invariants",
            "Callable[[Game], list[str]]",
            None,
            "what must hold in every state (rules/state.yaml `invariants:`): the words of"
            " each check that fails, in order; and for each conserved kind, its ids"
            " wherever they are",
        ),
        ("conserved", "dict[str, Callable[[Game], list[Any]]]", None, ""),
        (
            "state_checks",
            "Callable[[Game], tuple[str, str] | None]",
            None,
            "rules/state.yaml `checks:`",
        ),
        ("deals", "tuple[DealDef, ...]", None,
         "the conserved kinds some seat does not see all of (rules/state.yaml `see:`): how"
         " `determinize` deals their hidden ids back"),
        ("draws", "tuple[tuple[str, str, int, int], ...]", None,
         "the numbers some seat does not see: (scope, field, min, max), drawn by"
         " `determinize`"),
    ),
)


def check_fields(values: Iterable[str]) -> None:
    """The RuleSet's fields are those `view.ruleset_fields` fills (a compiler bug otherwise)."""
    declared = [f[0] for f in RULESET.fields]
    given = list(values)
    if sorted(declared) != sorted(given):
        missing = sorted(set(declared) - set(given))
        extra = sorted(set(given) - set(declared))
        raise AssertionError(f"RuleSet fields: missing {missing}, undeclared {extra}")


def classes() -> list[str]:
    """The code of every record class and of the RuleSet."""
    return [r.code() for r in (*RECORDS, RULESET)]
