"""BASELINE, WRITTEN BY HAND: the final scoring of the current rules as straight-line Python.

This file is the yardstick of the "generated engine vs hand-written code" benchmark rows. It
is deliberately NOT generated and NOT table-driven: every number, name and sentence of
rules/scoring.yaml and of the Decrees and Plans of rules/components.yaml (as of this writing;
base rule set, 3 or 4 players, majority columns 1, 2, 3) is typed in below, the way a
programmer would write the scorer for one fixed edition of the game. It reads the same fields of
the generated engine's `Game` / `Player` that the engine's `final_scores` reads.

Two entry points:

- `score_sheet(E, g)`: the same result as `E.final_scores(g)` -- a `ScoreSheet` with one
  `ScoreLine` per source and player, explanations included -- so the comparison is like for
  like. The harness checks that the sheets are equal before timing and reports it.
- `score_totals(g)`: numbers only (wigs per source and totals, no explanations): what a
  minimal hand-written scorer costs; it shows how much of the engine's time is the prose.

When the rules change, these functions go stale; the harness then reports
`"agrees": false` for the affected comparisons (the smoke test checks the numbers).
"""

from __future__ import annotations

from typing import Any

# rules/game.yaml: the Influence track's spaces that show a real icon. Paying moves the marker
# left onto the next icon, so the marker is worth the icons below it.
REIS_ICONS = (1, 3, 5, 7, 8, 9)
# rules/components.yaml: Officials shown on each Plan.
PLAN_OFFICIALS = {
    "plan-01": 3, "plan-02": 2, "plan-03": 1, "plan-04": 3, "plan-05": 2,
    "plan-06": 1, "plan-07": 3, "plan-08": 2, "plan-09": 1, "plan-10": 3,
    "plan-11": 2, "plan-12": 1, "plan-13": 3, "plan-14": 2, "plan-15": 1,
    "plan-16": 3, "plan-17": 2, "plan-18": 1, "plan-19": 3, "plan-20": 2,
}  # fmt: skip
BUSINESSES = (("gold", "Gold", (3, 2, 1)), ("tools", "Tools", (6, 3, 1)),
              ("books", "Books", (9, 6, 3)), ("cloth", "Cloth", (9, 6, 3)))  # fmt: skip
OFFICIALS_TABLE = (15, 10, 5)
ORDINALS = ("1st", "2nd", "3rd", "4th", "5th", "6th")
STORES_NOT_ELIGIBLE = " stores, no wigs (only when the count: more than 0)"
INFLUENCE_WORDS = " ((your réis plus the réis your Influence cashes into) ÷ (rounded down) 5)"


def _decree(p: Any, d: str) -> tuple[bool, int, str]:
    """(fulfilled, wigs, words) of one Decree for player p: the 24 Decrees, one branch each."""
    s = p.stores
    if d == "decree-01":
        return s["books"] >= 2, 2, "your Books stores: at least 2"
    if d == "decree-02":
        return s["gold"] + s["tools"] + s["books"] + s["cloth"] >= 5, 6, "your stores: at least 5"
    if d == "decree-03":
        return s["gold"] >= 2, 2, "your Gold stores: at least 2"
    if d == "decree-04":
        return s["tools"] >= 2, 3, "your Tools stores: at least 2"
    if d == "decree-05":
        return s["cloth"] >= 2, 3, "your Cloth stores: at least 2"
    if d == "decree-06":
        return p.rubble_sets >= 3, 6, "your completed rubble sets: at least 3"
    if d == "decree-07":
        return p.rubble_sets >= 2, 3, "your completed rubble sets: at least 2"
    if d == "decree-08":
        return len(p.completed_plans) >= 2, 5, "your completed Plans: at least 2"
    if d == "decree-09":
        return len(p.completed_plans) >= 1, 2, "your completed Plans: at least 1"
    if d == "decree-10":
        return len(p.ships) >= 2, 4, "your Ships: at least 2"
    if d == "decree-11":
        return len(p.royal_favors) >= 2, 3, "your Royal Favor tiles: at least 2"
    if d == "decree-12":
        return p.reis >= 10, 2, "your réis: at least 10"
    if d == "decree-13":
        return p.influence >= 7, 3, "your Influence: at least 7"
    if d == "decree-14":
        officials = sum(PLAN_OFFICIALS[x] for x in p.completed_plans)
        return officials >= 4, 5, "the Officials shown on your completed Plans: at least 4"
    if d == "decree-15":
        return sum(p.ships) >= 5, 4, "the total hull size of your Ships: at least 5"
    if d == "decree-16":
        return (
            s["books"] + s["cloth"] >= 3,
            4,
            "(your Books stores plus your Cloth stores): at least 3",
        )
    if d == "decree-17":
        return len(p.decrees) >= 4, 4, "your Decrees: at least 4"
    if d == "decree-18":
        return s["gold"] + s["tools"] + s["books"] + s["cloth"] >= 3, 3, "your stores: at least 3"
    if d == "decree-19":
        return p.wigs >= 30, 5, "your wigs: at least 30"
    if d == "decree-20":
        return (
            s["gold"] + s["tools"] >= 3,
            4,
            "(your Gold stores plus your Tools stores): at least 3",
        )
    if d == "decree-21":
        return len(p.royal_favors) >= 1, 1, "your Royal Favor tiles: at least 1"
    if d == "decree-22":
        return p.rubble_sets >= 1, 1, "your completed rubble sets: at least 1"
    if d == "decree-23":
        return len(p.ships) >= 1, 1, "your Ships: at least 1"
    if d == "decree-24":
        return p.reis >= 20, 4, "your réis: at least 20"
    raise KeyError(d)


def _majority(
    measures: list[int], eligible: list[bool], table: tuple[int, int, int]
) -> list[tuple[int, tuple[int, ...], int]]:
    """(wigs, tied seats, first place) per seat; ties share their places' prizes, rounded down."""
    n = len(measures)
    out: list[tuple[int, tuple[int, ...], int]] = [(0, (), -1)] * n
    for i in range(n):
        if not eligible[i]:
            continue
        m = measures[i]
        place = 0
        tied: tuple[int, ...] = ()
        for j in range(n):
            if eligible[j]:
                if measures[j] > m:
                    place += 1
                elif measures[j] == m:
                    tied += (j,)
        pot = sum(table[place : place + len(tied)])
        out[i] = (pot // len(tied), tied, place)
    return out


def score_totals(g: Any) -> tuple[tuple[tuple[int, ...], ...], tuple[int, ...]]:
    """Numbers only: (wigs per player per source in the rules' order, totals)."""
    players = g.players
    n = len(players)
    stores = [[0] * n for _ in range(4)]
    officials = [0] * n
    for i, p in enumerate(players):
        s = p.stores
        stores[0][i], stores[1][i], stores[2][i], stores[3][i] = (
            s["gold"], s["tools"], s["books"], s["cloth"]
        )  # fmt: skip
        officials[i] = sum(PLAN_OFFICIALS[x] for x in p.completed_plans)
    store_wigs = [0] * n
    for b in range(4):
        measures = stores[b]
        awards = _majority(measures, [m > 0 for m in measures], BUSINESSES[b][2])
        for i in range(n):
            store_wigs[i] += awards[i][0]
    off = _majority(officials, [len(p.completed_plans) > 0 for p in players], OFFICIALS_TABLE)
    rows = []
    totals = []
    for i, p in enumerate(players):
        icons = 0
        for icon in REIS_ICONS:
            if icon < p.influence:
                icons += 1
        decrees = 0
        for d in p.decrees:
            ok, wigs, _ = _decree(p, d)
            if ok:
                decrees += wigs
        row = (
            sum(p.ships),
            3 * p.rubble_sets,
            store_wigs[i],
            (p.reis + icons) // 5,
            decrees,
            off[i][0],
            2 * len(p.royal_favors),
        )
        rows.append(row)
        totals.append(p.wigs + sum(row))
    return tuple(rows), tuple(totals)


def score_sheet(E: Any, g: Any) -> Any:
    """The full sheet, explanations included, built like `E.final_scores(g)` (an E.ScoreSheet)."""
    ScoreLine = E.ScoreLine
    players = g.players
    n = len(players)
    colors = [p.color for p in players]
    lines: list[list[Any]] = [[] for _ in range(n)]
    # Store majorities, all four businesses, before the per-player loop.
    store_parts: list[list[tuple[int, str]]] = [[] for _ in range(n)]
    for key, name, table in BUSINESSES:
        measures = [p.stores[key] for p in players]
        eligible = [m > 0 for m in measures]
        awards = _majority(measures, eligible, table)
        for i in range(n):
            m = measures[i]
            wigs, tied, place = awards[i]
            if not eligible[i]:
                text = f"{name}: {m}{STORES_NOT_ELIGIBLE}"  # m is 0 here
            elif place >= 3:
                unit = "store" if m == 1 else "stores"
                text = f"{name}: {m} {unit}, {ORDINALS[place]}: no prize = 0"
            elif len(tied) > 1:
                others = ", ".join(colors[j] for j in tied if j != i)
                sums = "+".join(str(x) for x in table[place : place + len(tied)])
                text = (
                    f"{name}: {m} {'store' if m == 1 else 'stores'}, tied for {ORDINALS[place]} "
                    f"with {others}: ({sums})//{len(tied)} = {wigs}"
                )
            else:
                text = f"{name}: {m} {'store' if m == 1 else 'stores'}, {ORDINALS[place]} = {wigs}"
            store_parts[i].append((wigs, text))
    # Officials at work.
    officials = [sum(PLAN_OFFICIALS[x] for x in p.completed_plans) for p in players]
    off_ok = [len(p.completed_plans) > 0 for p in players]
    off = _majority(officials, off_ok, OFFICIALS_TABLE)
    for i, p in enumerate(players):
        row = lines[i]
        # Ships.
        ships = sum(p.ships)
        shown = " + ".join(map(str, p.ships)) or "0"
        row.append(
            ScoreLine(
                "score.ships",
                ships,
                f"Ships in your portfolio: {shown} = {ships} (the total hull size of your Ships)",
            )
        )
        # Rubble sets.
        rubble = 3 * p.rubble_sets
        row.append(
            ScoreLine(
                "score.rubble",
                rubble,
                f"Completed rubble sets: 3 × {p.rubble_sets} = {rubble} "
                "(3 × your completed rubble sets)",
            )
        )
        # Store majorities.
        parts = store_parts[i]
        total = parts[0][0] + parts[1][0] + parts[2][0] + parts[3][0]
        row.append(
            ScoreLine(
                "score.stores",
                total,
                "Store majorities: "
                + "; ".join(t for _, t in parts)
                + f" = {parts[0][0]} + {parts[1][0]} + {parts[2][0]} + {parts[3][0]} = {total}",
            )
        )
        # Influence and réis.
        icons = 0
        for icon in REIS_ICONS:
            if icon < p.influence:
                icons += 1
        cash = (p.reis + icons) // 5
        row.append(
            ScoreLine(
                "score.influence",
                cash,
                f"Influence and réis: ({p.reis} + {icons}) // 5 = {cash}{INFLUENCE_WORDS}",
            )
        )
        # Decrees.
        if p.decrees:
            texts = []
            values = []
            for d in p.decrees:
                ok, wigs, words = _decree(p, d)
                values.append(wigs if ok else 0)
                texts.append(f"{d} ({words}) {wigs if ok else 'not fulfilled, 0'}")
            dsum = sum(values)
            sums = " + ".join(str(v) for v in values)
            row.append(
                ScoreLine(
                    "score.decrees",
                    dsum,
                    "Your Decrees: " + "; ".join(texts)
                    + (f"; {sums} = {dsum}" if len(texts) > 1 else ""),
                )
            )
        else:
            row.append(ScoreLine("score.decrees", 0, "Your Decrees: none = 0"))
        # Officials at work.
        wigs, tied, place = off[i]
        o = officials[i]
        count = f"{o} Official" if o == 1 else f"{o} Officials"
        if not off_ok[i]:
            text = (
                f"Officials at work: {count}, no wigs (only when your completed Plans: more than 0)"
            )
        elif place >= 3:
            text = f"Officials at work: {count}, {ORDINALS[place]}: no prize = 0"
        elif len(tied) > 1:
            others = ", ".join(colors[j] for j in tied if j != i)
            sums = "+".join(str(x) for x in OFFICIALS_TABLE[place : place + len(tied)])
            text = (
                f"Officials at work: {count}, tied for {ORDINALS[place]} "
                f"with {others}: ({sums})//{len(tied)} = {wigs}"
            )
        else:
            text = f"Officials at work: {count}, {ORDINALS[place]} = {wigs}"
        row.append(ScoreLine("score.officials", wigs, text))
        # Royal Favors.
        favors = 2 * len(p.royal_favors)
        row.append(
            ScoreLine(
                "score.favors",
                favors,
                f"Royal Favors still on your board: 2 × {len(p.royal_favors)} = {favors} "
                "(2 × your Royal Favor tiles)",
            )
        )
    track = tuple(p.wigs for p in players)
    totals = tuple(track[i] + sum(line.points for line in lines[i]) for i in range(n))
    return E.ScoreSheet(tuple(colors), track, tuple(tuple(r) for r in lines), totals)
