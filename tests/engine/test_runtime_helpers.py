"""The runtime's choice helpers against their definitions: `_subsets` (every set of at most N
items, in counting order) and `_led` (the ways to list chosen items so one of each group
leads), written here the plain way."""

from __future__ import annotations

import random
from typing import Any


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
