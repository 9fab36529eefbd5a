"""Final scoring on the generated engine: the seven sources, the seed's worked examples,
majorities with shared places, the 2-player columns, Officials at work, the tie-breakers."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import complete_plan, give_decree, give_favor, set_rubble


def _line(sheet: Any, seat: int, source: str) -> Any:
    return next(ln for ln in sheet.lines[seat] if ln.source == source)


def _blank(g: Any) -> Any:
    """No wigs, money, Influence or favors for anyone: every source starts at 0."""
    for seat, p in enumerate(g.players):
        p.wigs = p.reis = p.influence = 0
        for noble in p.royal_favors:
            g.favors[noble] += 1
        p.royal_favors = []
        del seat
    return g


def test_seven_sources_in_the_rules_order(engine: Any, fresh: Any) -> None:
    g = fresh(3)
    sheet = engine.final_scores(g)
    ids = [s.id for s in g.rs.scoring]
    assert len(ids) == 7
    for lines in sheet.lines:
        assert [ln.source for ln in lines] == ids
    assert sheet.colors == ("Yellow", "Green", "Orange")
    for seat in range(3):
        assert sheet.totals[seat] == sheet.track[seat] + sum(ln.points for ln in sheet.lines[seat])


def test_worked_example_ships(engine: Any, fresh: Any) -> None:
    g = _blank(fresh(3))
    g.players[1].ships = [2, 3, 3]
    line = _line(engine.final_scores(g), 1, "score.ships")
    assert line.points == 8
    assert line.explanation.startswith("Ships in your portfolio: 2 + 3 + 3 = 8")


def test_worked_example_rubble_sets(engine: Any, fresh: Any) -> None:
    g = _blank(fresh(3))
    set_rubble(g, 2, 3)
    line = _line(engine.final_scores(g), 2, "score.rubble")
    assert line.points == 9
    assert line.explanation.startswith("Completed rubble sets: 3 × 3 = 9")


def test_worked_example_decrees(engine: Any, fresh: Any) -> None:
    g = _blank(fresh(3))
    rs = g.rs
    two = next(d for d in sorted(rs.decrees) if rs.decrees[d].points == 2 and "books" in
               rs.decrees[d].words.lower())
    six = next(d for d in sorted(rs.decrees) if rs.decrees[d].points == 6 and "stores" in
               rs.decrees[d].words)
    give_decree(g, 0, two)
    give_decree(g, 0, six)
    p = g.players[0]
    before = engine.final_scores(g)
    assert _line(before, 0, "score.decrees").points == 0  # conditions not met yet
    p.stores.update({"books": 2, "gold": 2, "cloth": 1})
    line = _line(engine.final_scores(g), 0, "score.decrees")
    assert line.points == 8
    assert line.explanation.endswith("2 + 6 = 8")
    assert "not fulfilled" in _line(before, 0, "score.decrees").explanation
    # each Decree by its name, as the reference prints it ("Decree 01"), not by its id
    for d in (two, six):
        assert rs.decrees[d].name and rs.decrees[d].name != d
        assert f"{rs.decrees[d].name} ({rs.decrees[d].words}) {rs.decrees[d].points}" \
            in line.explanation
        assert d not in line.explanation


def test_one_decree_is_explained_without_a_sum_of_one_number(engine: Any, fresh: Any) -> None:
    """A line of one held Decree says that Decree's points and stops: "...not fulfilled, 0",
    not "...not fulfilled, 0; 0 = 0" (a sum of one number says nothing); two or more end
    with their sum."""
    g = _blank(fresh(3))
    rs = g.rs
    six = next(d for d in sorted(rs.decrees) if rs.decrees[d].points == 6 and "stores" in
               rs.decrees[d].words)
    give_decree(g, 0, six)
    name = next(s.name for s in rs.scoring if s.id == "score.decrees")
    said = f"{rs.decrees[six].name} ({rs.decrees[six].words})"
    line = _line(engine.final_scores(g), 0, "score.decrees")
    assert (line.points, line.explanation) == (0, f"{name}: {said} not fulfilled, 0")
    g.players[0].stores.update({"books": 2, "gold": 2, "cloth": 1})
    line = _line(engine.final_scores(g), 0, "score.decrees")
    assert (line.points, line.explanation) == (6, f"{name}: {said} 6")


def test_worked_example_royal_favors(engine: Any, fresh: Any) -> None:
    g = _blank(fresh(3))
    give_favor(g, 1, "king")
    give_favor(g, 1, "marquis")
    line = _line(engine.final_scores(g), 1, "score.favors")
    assert line.points == 4
    assert line.explanation.startswith("Royal Favors still on your board: 2 × 2 = 4")


def test_influence_cashes_into_reis_then_one_wig_per_five(engine: Any, fresh: Any) -> None:
    g = _blank(fresh(3))
    p = g.players[0]
    icons = g.rs.reis_icons
    p.influence = icons[2]  # two real icons below the marker: it moves left onto them
    p.reis = 13
    line = _line(engine.final_scores(g), 0, "score.influence")
    assert line.points == (13 + 2) // 5
    assert f"(13 + 2) ÷ 5, rounded down = {(13 + 2) // 5}" in line.explanation
    assert p.influence == icons[2]  # the marker itself does not move


# --- majorities -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("measures", "expected"),
    [
        ([4, 4, 1], [7, 7, 3]),  # tied for 1st share (9+6)//2
        ([4, 2, 2], [9, 4, 4]),  # tied for 2nd share (6+3)//2
        ([3, 3, 3], [6, 6, 6]),  # three tied for 1st share (9+6+3)//3
        ([5, 0, 2], [9, 0, 6]),  # no stores, no wigs
        ([0, 0, 0], [0, 0, 0]),
    ],
)
def test_majority_ties_share_places_rounded_down(
    engine: Any, measures: list[int], expected: list[int]
) -> None:
    awards = engine.majority_awards(measures, [m > 0 for m in measures], (9, 6, 3), (1, 2, 3))
    assert [a[0] for a in awards] == expected


def test_four_players_three_tied_for_second(engine: Any) -> None:
    awards = engine.majority_awards([5, 2, 2, 2], [True] * 4, (9, 6, 3), (1, 2, 3))
    assert [a[0] for a in awards] == [9, 3, 3, 3]  # (6+3+0)//3


def test_store_majority_explanation(engine: Any, fresh: Any) -> None:
    g = _blank(fresh(3))
    g.players[0].stores["books"] = 4
    g.players[1].stores["books"] = 4
    g.players[2].stores["books"] = 1
    sheet = engine.final_scores(g)
    yellow = _line(sheet, 0, "score.stores")
    assert "Books: 4 stores, tied for 1st with Green: (9 + 6) ÷ 2, rounded down = 7" \
        in yellow.explanation
    assert yellow.points == 7
    assert "Books: 1 store, 3rd = 3" in _line(sheet, 2, "score.stores").explanation
    assert "Gold: 0 stores, no wigs" in yellow.explanation


def test_two_player_columns_are_first_and_third(engine: Any, fresh: Any) -> None:
    g = _blank(fresh(2))
    assert g.rs.majority_columns == (1, 3)
    g.players[0].stores["books"] = 3
    g.players[1].stores["books"] = 1
    sheet = engine.final_scores(g)
    assert [_line(sheet, s, "score.stores").points for s in (0, 1)] == [9, 3]
    assert "2nd (3rd-most prize) = 3" in _line(sheet, 1, "score.stores").explanation
    g.players[1].stores["books"] = 3
    sheet = engine.final_scores(g)
    assert [_line(sheet, s, "score.stores").points for s in (0, 1)] == [6, 6]  # (9+3)//2


def test_officials_on_completed_plans_and_no_plan_no_wigs(engine: Any, fresh: Any) -> None:
    g = _blank(fresh(3))
    plans = g.rs.plans
    big = [p for p in sorted(plans) if plans[p] == 3]
    small = [p for p in sorted(plans) if plans[p] == 1]
    complete_plan(g, 0, small[0])
    complete_plan(g, 0, small[1])  # 2 Plans showing 1 Official each: 2 Officials
    complete_plan(g, 1, big[0])  # 1 Plan showing 3 Officials: more Officials, fewer Plans
    g.players[2].officials = 0  # all Officials at work in offices, but no completed Plan
    g.offices["king"]["Orange"] = g.rs.start_officials
    sheet = engine.final_scores(g)
    wigs = [_line(sheet, s, "score.officials").points for s in range(3)]
    assert wigs == [10, 15, 0]
    orange = _line(sheet, 2, "score.officials").explanation
    assert "no wigs" in orange and "completed Plans" in orange
    assert "3 Officials, 1st = 15" in _line(sheet, 1, "score.officials").explanation


# --- ranking and tie-breakers -------------------------------------------------------------------


def test_most_wigs_wins(engine: Any, fresh: Any) -> None:
    g = _blank(fresh(3))
    g.players[1].wigs = 5
    r = engine.ranking(g)
    assert r.places[0] == (1,)
    assert r.names[0] == "most wigs"


def test_tie_breaker_chain(engine: Any, fresh: Any) -> None:
    g = _blank(fresh(4))
    for p in g.players:
        p.wigs = 20
    # Blue wins on rubble sets; Yellow and Green tie on sets, Green has more stores;
    # Orange ties Yellow on stores too but has a completed Plan
    set_rubble(g, 3, 2)
    set_rubble(g, 0, 1)
    set_rubble(g, 1, 1)
    set_rubble(g, 2, 1)
    g.players[1].stores["gold"] = 1
    sheet = engine.final_scores(g)
    # neutralise the wigs the measures themselves score
    for seat, p in enumerate(g.players):
        p.wigs = 40 - (sheet.totals[seat] - p.wigs)
    plan = sorted(g.rs.plans)[0]
    complete_plan(g, 2, plan)
    g.players[2].wigs -= engine.final_scores(g).totals[2] - 40
    sheet = engine.final_scores(g)
    assert set(sheet.totals) == {40}
    r = engine.ranking(g, sheet)
    assert r.places == ((3,), (1,), (2,), (0,))


def test_money_breaks_the_last_tie_and_players_still_tied_share(engine: Any, fresh: Any) -> None:
    g = _blank(fresh(3))
    g.players[0].reis = 4
    g.players[1].reis = 4
    g.players[2].reis = 3
    r = engine.ranking(g)
    assert r.places == ((0, 1), (2,))  # Yellow and Green share the first place
    assert r.keys[0] == r.keys[1]
