"""The runtime's choice helpers against their definitions: `_subsets` (every set of at most N
items, in counting order) and `_led` (the ways to list chosen items so one of each group
leads), written here the plain way."""

from __future__ import annotations

import random
from typing import Any

import pytest


def _subsets_by_mask(items: list[Any], most: int) -> list[tuple[Any, ...]]:
    out = []
    for mask in range(1 << len(items)):
        if bin(mask).count("1") <= most:
            out.append(tuple(x for i, x in enumerate(items) if mask >> i & 1))
    return out


def _led_plain(chosen: tuple[Any, ...], groups: list[Any]) -> list[tuple[Any, ...]]:
    by: dict[Any, list[Any]] = {}
    for x, key in zip(chosen, groups, strict=True):
        if key is not None:
            by.setdefault(key, []).append(x)
    picks: list[list[Any]] = [[]]
    for xs in by.values():
        picks = [[*pick, x] for pick in picks for x in xs]
    return [(*sorted(pick), *[x for x in chosen if x not in pick]) for pick in picks]


def test_subsets_in_counting_order(engine: Any) -> None:
    for n in range(9):
        items = [10 * i + 3 for i in range(n)]
        for most in range(n + 2):
            assert engine._subsets(items, most) == _subsets_by_mask(items, most), (n, most)


def test_led_as_defined(engine: Any) -> None:
    rng = random.Random(17)
    seen_none = seen_groups = 0
    for _ in range(3000):
        chosen = tuple(rng.sample(range(30), rng.randrange(7)))
        groups = [rng.choice([None, None, "a", "b", "c"]) for _ in chosen]
        got = engine._led(chosen, groups)
        assert got == _led_plain(chosen, groups), (chosen, groups)
        if any(k is not None for k in groups):
            seen_groups += 1
        else:
            seen_none += 1
    assert seen_none > 100 and seen_groups > 100


def test_retag_changes_one_field_of_a_code(engine: Any) -> None:
    """`_retag` (the move generators' memo of one card's moves, made again for another card of
    the same Noble) is the same code with one choice changed, every other place kept."""
    fields = engine._MOVE_FIELDS
    code = tuple(f"v{i}" for i in range(len(fields)))
    for at, name in enumerate(fields):
        got = engine._retag(code, name, 99)
        assert type(got) is tuple and len(got) == len(code)
        assert got == (*code[:at], 99, *code[at + 1 :]), name


def test_choice_draws_as_random_choice(engine: Any) -> None:
    """`_choice` (the agents' draw, looped in the engine so that it runs compiled) draws what
    `random.Random.choice` draws from the same generator state and leaves the generator in
    the same state, for counts on both sides of powers of two; another generator draws
    itself; nothing to draw from is an IndexError."""
    for n in [*range(1, 70), 127, 128, 129, 1000, 4097, 65536, 65537]:
        items = list(range(n))
        for seed in range(3):
            a, b = random.Random(seed), random.Random(seed)
            for _ in range(10):
                assert engine._choice(a, items) == b.choice(items)
            assert engine._choice(a, range(n)) == b.choice(range(n))
            assert a.getstate() == b.getstate()

    class Other(random.Random):
        def choice(self, seq: Any) -> Any:
            return seq[-1]

    assert engine._choice(Other(1), [1, 2, 3]) == 3
    with pytest.raises(IndexError):
        engine._choice(random.Random(1), [])


def test_an_import_for_the_generated_code_alone_is_dropped_when_nothing_names_it() -> None:
    """The runtime imports some names for the generated code alone (`_USED_BY_GENERATED`):
    an engine whose code names one of them keeps its import, one that names none loses it
    (ruff would find it unused), and a line importing several names is never cut."""
    from lisboa_rules.emit.engine.runtime import runtime_text

    runtime = runtime_text()
    assert "_bisect_left" in runtime.for_generated
    line = "from bisect import bisect_left as _bisect_left\n"
    assert line in runtime.head
    engine = runtime.head + "\ndef f() -> int:\n    return 1\n"
    assert line not in runtime.unused_dropped(engine)
    used = engine + "\n\ndef g(x: int) -> int:\n    return _bisect_left((1, 2), x)\n"
    assert line in runtime.unused_dropped(used)
    shared = runtime.head.split("\n")
    several = next(x for x in shared if x.startswith("from collections.abc import"))
    assert "Sequence" in runtime.for_generated and "," in several
    assert several in runtime.unused_dropped(engine)


def test_greedy_margin_is_the_seat_s_total_less_the_best_other(engine: Any) -> None:
    """`_Scorer.margin` (what greedy maximises): the seat's total as if the game ended now,
    less the best total of the other seats (their totals from `final_totals`)."""
    rng = random.Random(5)
    for players in (2, 3, 4):
        g = engine.new_game(players, (), players)
        scorer = engine._Scorer(g.rs)
        for _ in range(60):
            totals = engine.final_totals(g)
            for seat in range(players):
                others = [t for i, t in enumerate(totals) if i != seat]
                assert scorer.margin(g, seat) == totals[seat] - max(others)
            if g.phase == "over":
                break
            g = engine.apply_move(g, rng.choice(engine.legal_moves(g)))
