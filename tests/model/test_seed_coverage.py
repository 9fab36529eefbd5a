"""Seed coverage: every rule sentence of both seed documents maps to rule ids that exist.

The seeds are split into units here (the same way docs/seed-coverage.yaml was written): each
paragraph line into sentences, each list item (`1.`, `•`) into sentences without its marker,
each table row (a line with tabs) as one unit; a line without closing punctuation is a heading
and is skipped. The table must have exactly one entry per unit, with its exact text.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from lisboa_rules.pipeline import analyse

ROOT = Path(__file__).resolve().parents[2]
# The seed documents: in shared/ beside the clone (CI), or where LISBOA_SEEDS_DIR says.
SEEDS = Path(os.environ.get("LISBOA_SEEDS_DIR")
             or Path(__file__).resolve().parents[3] / "shared" / "seeds")
TABLE = ROOT / "docs" / "seed-coverage.yaml"
SEED_FILES = ("000_*.txt", "001_*.txt")

LIST_ITEM = re.compile(r"^(?:\d+\.|•|-)\s+")
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z\[(“\"])")
CLOSES = re.compile(r"[.!?:;)]$")


def split_units(text: str) -> list[str]:
    """The rule units of one seed document, in order."""
    units: list[str] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        if "\t" in line:
            units.append(line)
            continue
        item = LIST_ITEM.match(line)
        if item:
            units.extend(SENTENCE_END.split(line[item.end():]))
        elif CLOSES.search(line):
            units.extend(SENTENCE_END.split(line))
    return units


def seed_paths() -> list[Path]:
    """The seed documents; outside CI (env CI unset) a clone without them skips the test."""
    found = [p for pattern in SEED_FILES for p in sorted(SEEDS.glob(pattern))]
    if len(found) != len(SEED_FILES):
        why = (f"the seed documents are not at {SEEDS} (the shared/ folder must sit beside the "
               "clone, or set LISBOA_SEEDS_DIR)")
        if os.environ.get("CI"):
            pytest.fail(f"{why}; CI must run the seed coverage tests")
        pytest.skip(why)
    return found


@pytest.fixture(scope="module")
def table() -> dict[str, list[dict[str, Any]]]:
    data = yaml.safe_load(TABLE.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def known_ids() -> set[str]:
    """Every id the compiled rules define: rules, and the identified things rules talk about."""
    compiled, diags = analyse(ROOT / "rules")
    assert compiled is not None, [d.message for d in diags]
    ids = {v.id for v in compiled.variants}
    for rs in compiled.rulesets:
        m = rs.model
        ids |= {r.id for r in m.rules}
        for group in (m.nobles, m.state_actions, m.noble_actions, m.costs, m.actions,
                      m.triggers, m.scoring, m.period_end, m.examples):
            ids |= {x.id for x in group}
    return ids


def test_splitting_finds_the_rules() -> None:
    """The splitter is not vacuous: known sentences come out whole, headings do not."""
    units = split_units((seed_paths()[0]).read_text(encoding="utf-8"))
    assert len(units) > 40
    assert "No completed Plan, no wigs." in units
    assert "Books\t9\t6\t3" in units
    assert "Tiebreakers" not in units


@pytest.mark.parametrize("pattern", SEED_FILES)
def test_every_unit_of_a_seed_is_mapped(pattern: str,
                                        table: dict[str, list[dict[str, Any]]]) -> None:
    path = next(p for p in seed_paths() if p.match(pattern))
    units = split_units(path.read_text(encoding="utf-8"))
    entries = table.get(path.name)
    assert entries, f"{TABLE.name} has no section for {path.name}"
    texts = [e["text"] for e in entries]
    missing = [u for u in units if u not in texts]
    assert not missing, f"{path.name}: sentences without an entry:\n" + "\n".join(missing)
    stale = [t for t in texts if t not in units]
    assert not stale, f"{path.name}: entries that match no sentence:\n" + "\n".join(stale)
    assert len(texts) == len(set(texts)), "an entry is listed twice"
    for e in entries:
        rules, reason = e.get("rules"), e.get("not_a_rule")
        assert bool(rules) != bool(reason), f"{e['text']!r}: give rules or not_a_rule, one"
        assert set(e) <= {"text", "rules", "not_a_rule", "assumptions"}, e


def test_named_assumptions_are_printed_with_the_unit_rules(
        table: dict[str, list[dict[str, Any]]]) -> None:
    """A unit played only through an assumption names it, and one of the unit's rules carries
    it (so the reference prints the assumption where the rule stands)."""
    compiled, diags = analyse(ROOT / "rules")
    assert compiled is not None, [d.message for d in diags]
    carried: dict[str, set[str]] = {}
    known: set[str] = set()
    for rs in compiled.rulesets:
        known |= {a.id for a in rs.model.assumptions}
        for r in rs.model.rules:
            carried.setdefault(r.id, set()).update(r.provenance.assumptions)
    named = [(e, a) for entries in table.values() for e in entries
             for a in e.get("assumptions", ())]
    assert named, "no unit names an assumption"
    for e, a in named:
        assert a in known, f"{e['text']!r}: no assumption {a!r} in provenance.yaml"
        assert any(a in carried.get(r, ()) for r in e["rules"]), (
            f"{e['text']!r}: none of {e['rules']} carries the assumption {a!r}")


def test_mapped_ids_exist(table: dict[str, list[dict[str, Any]]]) -> None:
    ids = known_ids()
    unknown = sorted({(rule, e["text"]) for entries in table.values() for e in entries
                      for rule in e.get("rules", ()) if rule not in ids})
    assert not unknown, "rule ids that the compiled rules do not define:\n" + "\n".join(
        f"  {rule}: {text}" for rule, text in unknown)
    assert set(table) == {p.name for p in seed_paths()}


@pytest.mark.parametrize(("ci", "outcome"), [(None, "skipped"), ("true", "failed"),
                                             ("1", "failed")])
def test_missing_seeds_skip_locally_and_fail_in_ci(tmp_path: Path, ci: str | None,
                                                   outcome: str) -> None:
    """A fresh clone without shared/ skips the seed tests with the reason; CI fails them."""
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["LISBOA_SEEDS_DIR"] = str(tmp_path / "no-seeds")
    if ci is not None:
        env["CI"] = ci
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "-n", "0",
         __file__,
         "-k", "splitting_finds or every_unit"],
        capture_output=True, text=True, env=env, cwd=ROOT, check=False)
    summary = run.stdout.strip().splitlines()[-1]
    assert f"3 {outcome}" in summary, run.stdout
    assert "seed documents are not at" in run.stdout
