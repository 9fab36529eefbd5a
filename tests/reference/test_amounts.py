"""Amounts of a counted term are said by their size: a negative amount (a penalty, a payment
written as a loss) reads as the rulebook writes it, `pay 3 réis`, never `pay -3 réis`, and one
of it takes the singular (`1 real`, not `-1 réis`), for every term of `game.terms` with a
singular and for every amount of a vocabulary name the reference prints."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from lisboa_rules.core.inputs import RULES_MD
from lisboa_rules.emit.reference import words
from lisboa_rules.lang import text as rtext
from lisboa_rules.model.types import Model
from lisboa_rules.pipeline import analyse, compile_rules

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "rules"


@pytest.fixture(scope="module")
def m() -> Model:
    c, diags = analyse(RULES)
    assert c is not None, [d.message for d in diags]
    return c.base.model


def _terms(m: Model) -> dict[str, tuple[str, str]]:
    return rtext.unit_filters(m.data["game"]["terms"])


@pytest.mark.parametrize("n", [-7, -3, -1, 1, 3])
def test_a_negative_amount_reads_as_its_size(m: Model, n: int) -> None:
    terms = _terms(m)
    assert terms, "the game names no counted term"
    for filt, (one, many) in terms.items():
        said = words.plain(m, f"pay {{reward.reis|{filt}}}", {"reward": {"reis": n}})
        assert said == f"pay {abs(n)} {one if abs(n) == 1 else many}", (filt, said)
        assert "-" not in said


def test_the_cards_penalties_read_as_amounts(m: Model) -> None:
    """The cards table prints a penalty of `reis: -1` as the singular amount."""
    md = compile_rules(RULES).files[RULES_MD]
    rows = [line for line in md.splitlines() if line.startswith("| <a id=\"card-")]
    assert rows
    assert not [r for r in rows if re.search(r"\| \\?-\d", r)], "a signed amount in the cards"
    one, _ = _terms(m)["money"]
    penalties = {c.number: dict(c.penalty) for c in m.cards}
    single = [n for n, p in penalties.items() if p.get("reis") == -1]
    assert single, "no card with a penalty of one real in the rules"
    row = next(r for r in rows if f'id="card-{single[0]}"' in r)
    assert f"| 1 {one} |" in row
