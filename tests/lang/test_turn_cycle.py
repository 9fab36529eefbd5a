"""The turn order's seats computed where the rules are compiled (lang/phases.py
`check_turn_cycle`): `next` (and a constant `first`) evaluated on the checked IR for every seat
at every player count, refused when the turn does not go through every seat and back to the
start player, and left to the build's games when `next` reads the state."""

from __future__ import annotations

import math
from typing import Any

import pytest

from lisboa_rules.ir import expr as ir
from lisboa_rules.ir.types import INT
from lisboa_rules.lang.phases import PLAYER_COUNT, CheckedTurnOrder, check_turn_cycle

SEAT = ir.Local("seat")


def _after(step: ir.Expr) -> ir.Expr:
    """`(seat + step) % len(game.players)`."""
    return ir.BinOp("%", ir.BinOp("+", SEAT, step), PLAYER_COUNT)


def _no_table(kind: str, col: str, key: Any) -> Any:
    raise KeyError(col)


@pytest.mark.parametrize("step", range(7))
def test_seats_on_by_a_step_go_round_when_it_is_prime_to_the_count(step: int) -> None:
    """`(seat + k) % n` visits every seat exactly when k and n have no common divisor."""
    found = check_turn_cycle(CheckedTurnOrder(next=_after(ir.Lit(step))), range(1, 9),
                             _no_table)
    broken = [int(p.message.split()[1]) for p in found]
    assert broken == [n for n in range(1, 9) if math.gcd(step, n) != 1]
    assert all(p.code == "turn-order-skips" and p.path == ("flow", "turn_order", "next")
               for p in found)


def test_the_constants_of_the_rules_and_their_tables_are_read() -> None:
    """A step read from the rules data (`rules.X`) or a column of a table, as the engine
    reads them: 2 seats on skips seats at 2 and 4 players."""
    for step in (ir.Data(2), ir.Column("pace", "step", ir.Lit("fast"))):
        found = check_turn_cycle(CheckedTurnOrder(next=_after(step)), (2, 3, 4),
                                 lambda kind, col, key: {"fast": 2}[key])
        assert [p.message.split(",")[0] for p in found] == ["with 2 players", "with 4 players"]
        assert "the turn goes 0 -> 2 -> 0: seats 1 and 3 never play" in found[1].message


def test_a_measure_of_the_number_of_players_is_read() -> None:
    """A measure of the rules (rules/vocabulary.yaml) that counts the players: its body is
    read with the count given."""
    count = ir.Measure("players", PLAYER_COUNT, INT)
    order = CheckedTurnOrder(next=ir.BinOp("%", ir.BinOp("+", SEAT, ir.Lit(2)), count))
    found = check_turn_cycle(order, (3, 4), _no_table)
    assert [p.message.split(",")[0] for p in found] == ["with 4 players"]


def test_the_first_player_starts_the_walk() -> None:
    """With a constant `first`, the turn is followed from that seat: a `next` that sends
    every seat to the last one never comes back to seat 1."""
    last = ir.BinOp("-", PLAYER_COUNT, ir.Lit(1))
    order = CheckedTurnOrder(first=ir.Lit(1), next=last)
    (found,) = check_turn_cycle(order, (3,), _no_table)
    assert found.message.startswith(
        "with 3 players, starting at seat 1 (the first player), the turn goes 1 -> 2 -> 2: "
        "seat 0 never plays and the turn never comes back to seat 1, the start player, so a "
        "round never ends;"), found.message


def test_counter_clockwise_from_the_last_seat_goes_round() -> None:
    """examples/house-rules/widdershins.yaml's turn order."""
    order = CheckedTurnOrder(first=ir.BinOp("-", PLAYER_COUNT, ir.Lit(1)),
                             next=ir.BinOp("%", ir.BinOp("-", SEAT, ir.Lit(1)), PLAYER_COUNT))
    assert check_turn_cycle(order, range(1, 9), _no_table) == []


@pytest.mark.parametrize("reads", [
    ir.GameField("round"),  # the state
    ir.PlayerField("wigs", ir.Me()),  # the acting player
    ir.Column("pace", "step", ir.Lit("slow")),  # an id the table does not hold (it fails)
])
def test_a_next_that_reads_more_is_left_to_the_games(reads: ir.Expr) -> None:
    order = CheckedTurnOrder(next=_after(ir.BinOp("*", ir.Lit(2), reads)))
    assert check_turn_cycle(order, (2, 3, 4), lambda kind, col, key: {"fast": 2}[key]) == []


def test_no_next_is_seat_order() -> None:
    assert check_turn_cycle(CheckedTurnOrder(), (2, 3, 4), _no_table) == []
