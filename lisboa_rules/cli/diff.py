"""`lisboa-rules diff NAME`: every value and rule a variant changes, base -> variant.

The values come from the overlay merge (`pipeline.variant_changes`): one line per value the
variant sets, adds or removes, addressed like `nobles.noble_actions[build-store].lots.gold`
(list items by their id), with the position in the variant file that sets it. The rules are
the rule texts that read differently once the variant applies (placeholders filled in from
each model), plus the variant's callouts, the notes it adds to base rules.
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lisboa_rules.cli.common import (
    EXIT_FINDINGS,
    EXIT_OK,
    Command,
    add_house_option,
    add_rules_options,
    out,
    report,
)
from lisboa_rules.core.diagnostics import has_errors

if TYPE_CHECKING:  # the pipeline is imported when `diff` runs, not at every start-up
    from lisboa_rules.front.overlay import Change
    from lisboa_rules.model import types as m
    from lisboa_rules.model.compiled import Compiled

ABSENT = "(absent)"
_MAX_VALUE = 160  # characters of one value shown in text form
_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]*\Z")


@dataclass(frozen=True)
class ValueChange:
    """One changed value, addressed for people."""

    address: str
    before: Any
    after: Any
    span: str  # PATH:LINE:COL in the variant file


@dataclass(frozen=True)
class RuleChange:
    """A rule whose text reads differently with the variant (None: not in that model)."""

    id: str
    before: str | None
    after: str | None


@dataclass(frozen=True)
class VariantDiff:
    """Everything `diff NAME` prints."""

    info: m.VariantInfo
    values: tuple[ValueChange, ...]
    rules: tuple[RuleChange, ...]
    callouts: tuple[tuple[str, str], ...]  # (rule id, text with placeholders filled in)


def _configure(p: argparse.ArgumentParser) -> None:
    """Add the diff arguments."""
    p.add_argument(
        "name", metavar="NAME", help="a variant in rules/variants/ or a --house file (its id)"
    )
    add_rules_options(p)
    add_house_option(p)


def run_diff(args: argparse.Namespace) -> int:
    """Print what the variant changes; exit 1 on rule errors or an unknown variant."""
    from lisboa_rules import pipeline

    name = str(args.name)
    house = tuple(args.house)
    changes, diags = pipeline.variant_changes(args.rules, name, house)
    if has_errors(diags):
        report(diags, args.format)
        return EXIT_FINDINGS
    compiled, _ = pipeline.analyse(args.rules, extra=house)
    if compiled is None:  # variant_changes compiled the same rules without errors
        report(diags, args.format)
        return EXIT_FINDINGS
    diff = variant_diff(compiled, name, changes)
    if args.format == "json":
        out(json.dumps(to_json(diff), indent=2, ensure_ascii=False) + "\n")
    else:
        report(diags, "text")  # warnings, if any, on stderr
        out(render_text(diff))
    return EXIT_OK


def variant_diff(compiled: Compiled, name: str, changes: Sequence[Change]) -> VariantDiff:
    """Collect the value, rule and callout changes of variant `name`."""
    from lisboa_rules.emit.reference import words

    info = next(v for v in compiled.variants if v.id == name)
    base = compiled.base.model
    variant = next(rs.model for rs in compiled.rulesets if rs.key == (name,))
    values = tuple(
        ValueChange(address(base.data, c), c.before, c.after, str(c.span)) for c in changes
    )
    callouts = tuple((c.rule, words.plain(variant, c.text, {})) for c in info.callouts)
    return VariantDiff(info, values, rule_changes(base, variant), callouts)


def address(base_data: dict[str, Any], change: Change) -> str:
    """`kind.path` with list items named by their id (`noble_actions[build-store]`)."""
    node: Any = base_data.get(change.kind)
    text = change.kind
    last = len(change.path) - 1
    for depth, key in enumerate(change.path):
        if isinstance(key, int):
            item = node[key] if isinstance(node, list) and 0 <= key < len(node) else None
            ident = _identity(change.after) if depth == last and change.before is None else None
            ident = ident if ident is not None else _identity(item)
            text += f"[{ident if ident is not None else key}]"
            node = item
        else:
            node = node.get(key) if isinstance(node, dict) else None
            text += "." + key if _PLAIN_KEY.match(key) else f"[{json.dumps(key)}]"
    return text


def _identity(item: Any) -> str | None:
    """The id (or number) of a list item, as text."""
    from lisboa_rules.lang.text import IDENTITY_KEYS

    if isinstance(item, dict):
        for key in IDENTITY_KEYS:
            value = item.get(key)
            if isinstance(value, str | int) and not isinstance(value, bool):
                return str(value)
    return None


def rule_changes(base: m.Model, variant: m.Model) -> tuple[RuleChange, ...]:
    """Rules added, removed or reading differently (texts with placeholders filled in)."""
    from lisboa_rules.emit.reference import words

    before = {r.id: words.plain_text(base, r) for r in base.rules}
    after = {r.id: words.plain_text(variant, r) for r in variant.rules}
    found = []
    for rule_id in sorted(before.keys() | after.keys()):
        old, new = before.get(rule_id), after.get(rule_id)
        if old != new:
            found.append(RuleChange(rule_id, old, new))
    return tuple(found)


def show(value: Any) -> str:
    """A value written the way YAML flow style would write it (shortened when long)."""
    text = ABSENT if value is None else _flow(value)
    return text if len(text) <= _MAX_VALUE else text[: _MAX_VALUE - 3] + "..."


def _flow(value: Any) -> str:
    """YAML flow style: `{gold: 5, tools: 5}`, `[1, 3]`, `true`, `null`."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    if isinstance(value, str):
        plain = value and value.strip() == value and not any(c in value for c in ",:{}[]#\n")
        return value if plain else json.dumps(value, ensure_ascii=False)
    return str(value)


def _applies(info: m.VariantInfo) -> str:
    """When a variant applies, in words."""
    if info.chosen:
        return "chosen at setup"
    counts = ", ".join(str(n) for n in info.applies_players)
    return f"applies with {counts} players"


def render_text(diff: VariantDiff) -> str:
    """The text report: heading, values, rules, callouts."""
    info = diff.info
    lines = [f"variant {info.id}: {info.title} ({_applies(info)})", info.text.strip(), ""]
    lines.append(f"values ({len(diff.values)}), base -> {info.id}:")
    for v in diff.values:
        lines.append(f"  {v.address}: {show(v.before)} -> {show(v.after)}  ({v.span})")
    lines.extend(() if diff.values else ["  (none)"])
    lines.append("")
    lines.append(f"rules that read differently ({len(diff.rules)}):")
    for r in diff.rules:
        lines.append(f"  {r.id}:")
        lines.append(f"    - {r.before if r.before is not None else ABSENT}")
        lines.append(f"    + {r.after if r.after is not None else ABSENT}")
    lines.extend(() if diff.rules else ["  (none)"])
    lines.append("")
    lines.append(f"callouts ({len(diff.callouts)}):")
    for rule_id, text in diff.callouts:
        lines.append(f"  {rule_id}: {text}")
    lines.extend(() if diff.callouts else ["  (none)"])
    return "\n".join(lines) + "\n"


def to_json(diff: VariantDiff) -> dict[str, Any]:
    """The JSON report (stable keys, for tools)."""
    info = diff.info
    return {
        "variant": info.id,
        "title": info.title,
        "applies": "chosen" if info.chosen else {"players": list(info.applies_players)},
        "values": [
            {"address": v.address, "before": v.before, "after": v.after, "at": v.span}
            for v in diff.values
        ],
        "rules": [{"id": r.id, "before": r.before, "after": r.after} for r in diff.rules],
        "callouts": [{"rule": rule, "text": text} for rule, text in diff.callouts],
    }


COMMANDS: dict[str, Command] = {
    "diff": Command("list every value and rule a variant changes, base -> variant",
                    _configure, run_diff),
}
