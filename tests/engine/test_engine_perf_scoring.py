"""The generated straight-line scorers compute what the rule tables say.

`final_scores` runs one generated function per rule set (`_SCORERS`) with every scoring
formula compiled inline; the rule sets keep their formula functions (`RULESETS[key].scoring`,
what the rest of the engine and the tools read). These tests score random states of every rule
set both ways: the wigs of every line from the tables (per-player formulas, `majority_awards`
on the group measures with the eligibility formula, the Decrees' conditions), and the
explanation of every per-player line from the source's `show` formula. No timing is asserted.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from conftest import setups


def _table_lines(E: Any, g: Any) -> list[list[tuple[str, int, str | None]]]:
    """Per player, per source: (source id, wigs, the per-player explanation or None)."""
    rs = g.rs
    players = g.players
    out: list[list[tuple[str, int, str | None]]] = [[] for _ in players]
    for src in rs.scoring:
        if src.kind == "per-player" and src.formula is not None:
            tail = f" ({src.words})" if src.words else ""
            for p, lines in zip(players, out, strict=True):
                wigs = src.formula(g, p, E.Ctx())
                shown = src.show(g, p, E.Ctx()) if src.show is not None else ""
                text = (
                    f"{src.name}: {shown} = {wigs}{tail}"
                    if shown
                    else (f"{src.name}: {wigs}{tail}")
                )
                lines.append((src.id, wigs, text))
        elif src.kind == "majority":
            total = [0] * len(players)
            for group in src.groups:
                measures = [group.measure(g, p, E.Ctx()) for p in players]
                eligible = [
                    src.eligible is None or src.eligible(g, p, E.Ctx(measure=m))
                    for p, m in zip(players, measures, strict=True)
                ]
                awards = E.majority_awards(measures, eligible, group.table, rs.majority_columns)
                for i, (wigs, _, _) in enumerate(awards):
                    total[i] += wigs
            for wigs, lines in zip(total, out, strict=True):
                lines.append((src.id, wigs, None))
        elif src.kind == "held":
            items = {it.id: it for it in src.items}
            for p, lines in zip(players, out, strict=True):
                wigs = sum(
                    items[d].points
                    for d in getattr(p, src.held)
                    if items[d].condition is None or items[d].condition(g, p, E.Ctx())
                )
                lines.append((src.id, wigs, None))
    return out


def _check(E: Any, g: Any) -> None:
    sheet = E.final_scores(g)
    expected = _table_lines(E, g)
    for seat, (lines, want) in enumerate(zip(sheet.lines, expected, strict=True)):
        assert [(ln.source, ln.points) for ln in lines] == [(s, w) for s, w, _ in want], seat
        for ln, (_, _, text) in zip(lines, want, strict=True):
            assert type(ln) is E.ScoreLine
            assert ln == E.ScoreLine(ln.source, ln.points, ln.explanation)
            if text is not None:
                assert ln.explanation == text
        assert sheet.totals[seat] == g.players[seat].wigs + sum(w for _, w, _ in want)


def test_every_rule_set_has_a_scorer(engine: Any) -> None:
    E = engine
    assert set(E._SCORERS) == set(E.RULESETS)


@pytest.mark.parametrize("seed", range(2))
def test_generated_scorer_agrees_with_the_rule_tables(engine: Any, seed: int) -> None:
    E = engine
    checked = 0
    for players, key in setups(E):
        g = E.new_game(players, key, seed)
        rng = random.Random(f"perf-score:{seed}:{players}:{key}")
        step = 0
        while g.phase != "over":
            if step % 9 == 0:
                _check(E, g)
                checked += 1
            g = E.apply_move(g, rng.choice(E.legal_moves(g)))
            step += 1
        _check(E, g)
        checked += 1
    assert checked > 50


def test_generated_scorer_at_the_edges(engine: Any) -> None:
    """Hand-made end states: ties for a place, nobody eligible, more players than prizes."""
    E = engine
    for key in E.RULESETS:
        rs = E.RULESETS[key]
        players = max(rs.players_min, min(4, rs.players_max))
        try:
            g = E.new_game(players, key, 5)
        except ValueError:
            continue
        b0, b1 = rs.businesses[0], rs.businesses[1]
        for i, p in enumerate(g.players):
            p.stores[b0] = 2  # everyone tied
            p.stores[b1] = i  # one player not eligible, the others in order
            p.reis = 7 * i
            p.influence = min(rs.influence_max, 3 * i)
            p.royal_favors = []
        _check(E, g)
