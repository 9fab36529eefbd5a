"""An id written in the rules must name a row (issue 33): `noble('kingg')` built, and every
state then failed on it; it is refused where it is written, with the ids there are and the
closest. A value computed in play (`noble(card.type)`) is read as it is."""

from __future__ import annotations

import pytest

from lisboa_rules.ir import expr as ir
from lisboa_rules.lang import typed
from lisboa_rules.lang.typed import Name, Scope, VType


def _scope() -> Scope:
    return Scope(locals={"t": Name(typed.TEXT, ir.Local("t"))},
                 kinds=frozenset({"noble"}),
                 kind_ids={"noble": frozenset({"king", "manuel", "marquis"})})


def test_a_written_id_no_row_has_is_refused_with_the_closest() -> None:
    with pytest.raises(typed.ExprError) as err:
        typed.check("noble('kingg')", _scope())
    assert err.value.code == "unknown-reference"
    assert "'kingg' is no noble of the rules (they are king, manuel, marquis)" in \
        err.value.message
    assert err.value.suggestion == "king"
    assert err.value.col == len("noble(")


@pytest.mark.parametrize("source", ["noble('king')", "noble(t)"])
def test_a_known_id_or_a_value_of_play_is_read(source: str) -> None:
    got = typed.check(source, _scope())
    assert got.type == VType("noble")
