"""Every operation total (issue 33): `first`, `min` and `max` of a list that may be empty, a
list's item past its end and a division by a value that can be 0 built, and the engine then
failed in play (a bare StopIteration out of apply_move). Each use is proven safe on the
checked IR (lang/total.py) or refused where it is written; the total forms build."""

from __future__ import annotations

from typing import Any

import pytest

from lisboa_rules.ir import expr as ir
from lisboa_rules.ir.bounds import INF
from lisboa_rules.lang import steps as st
from lisboa_rules.lang import typed
from lisboa_rules.lang.total import Totality
from lisboa_rules.lang.typed import INT, Name, Scope, VType, list_of

CARDS = list_of(INT)


def _scope() -> Scope:
    def player(f: str, t: VType, lo: int | None = None, hi: int | None = None) -> Name:
        return Name(t, ir.PlayerField(f, ir.Me()), lo, hi, f"player.{f}")

    def game(f: str, t: VType) -> Name:
        return Name(t, ir.GameField(f), None, None, f"game.{f}")

    return Scope(player={"hand": player("hand", CARDS), "reis": player("reis", INT, 0),
                         "influence": player("influence", INT, 0, 10)},
                 game={"court": game("court", CARDS), "players": game("players",
                                                                       list_of(VType("player")))},
                 kinds=frozenset({"noble"}),
                 kind_ids={"noble": frozenset({"king", "marquis"})},
                 data=lambda path: _DATA[path])


_DATA: dict[tuple[str, ...], Any] = {("colors",): ["red", "blue"], ("empty",): [],
                                     ("steps",): [1, 2, 3],
                                     ("nobles",): ["king", "marquis"]}


def _problems(raw: list[Any], params: tuple[st.Param, ...] = (), setup: bool = False
              ) -> list[tuple[str, str]]:
    problems: list[st.StepProblem] = []
    where = ("flow", "setup", "steps") if setup else ("effects", "x", "steps")
    steps = st.parse_steps(raw, where, problems)
    checker = st.StepChecker(_scope(), {}, {})
    proc = checker.check(st.Procedure("x", params, steps, "rule.x"))
    assert problems + checker.problems == [], problems + checker.problems
    proof = Totality({"player.reis": (0, INF), "player.influence": (0, 10)},
                     lambda kind, col: None, {"noble": frozenset({"king", "marquis"})},
                     (2, 4), "x" if setup else None, max_items={"game.players": 4})
    proof.proc(proc)
    return [(p.code, p.message) for p in proof.problems]


@pytest.mark.parametrize(("raw", "code", "words"), [
    ([{"let": {"x": "first(hand)"}}], "partial-operation", "first() of 'hand', which may be"),
    ([{"let": {"x": "max([c for c in hand if c > 3])"}}], "partial-operation", "max() of"),
    ([{"let": {"x": "min(rules.empty)"}}], "partial-operation", "that list is empty"),
    ([{"let": {"x": "hand[2]"}}], "partial-operation", "'hand[2]' may be past the end"),
    ([{"let": {"x": "game.court[-1]"}}], "partial-operation", "past the end of 'game.court'"),
    ([{"let": {"x": "rules.steps[reis]"}}], "partial-operation", "its index can be 0.."),
    ([{"let": {"x": "reis // len(hand)"}}], "divisor-zero", "can be 0 (it can be 0..)"),
    ([{"let": {"x": "reis % (influence - 1)"}}], "divisor-zero", "(it can be -1..9)"),
    # what was known of the state is forgotten once a step changes it
    ([{"require": "len(hand) > 0", "reason": "r"}, {"move": {"all": True, "from": "hand",
                                                             "to": "game.court"}},
      {"let": {"x": "first(hand)"}}], "partial-operation", "first() of 'hand'"),
    # the other branch of an if does not know what its test says
    ([{"if": "len(hand) > 0", "then": [{"let": {"y": 1}}],
       "else": [{"let": {"x": "first(hand)"}}]}], "partial-operation", "first() of 'hand'"),
])
def test_an_operation_that_may_fail_is_refused(raw: list[Any], code: str, words: str) -> None:
    found = _problems(raw)
    assert [c for c, _m in found] == [code], found
    assert words in found[0][1]


@pytest.mark.parametrize("raw", [
    [{"let": {"x": "first(hand, 0) + max(hand, 0) + min(hand, default=0)"}}],
    [{"let": {"x": "first(rules.steps) + max(rules.steps)"}}],
    [{"let": {"x": "reis // max(1, len(hand)) + reis % 3"}}],
    [{"require": "len(hand) > 0", "reason": "r"}, {"let": {"x": "first(hand) + hand[0]"}}],
    [{"require": "len(hand) >= 2", "reason": "r"}, {"let": {"x": "hand[1] + hand[-2]"}}],
    [{"require": "influence > 0", "reason": "r"}, {"let": {"x": "reis // influence"}}],
    [{"let": {"x": "hand[0] if len(hand) > 0 else 0"}}],
    [{"let": {"x": "len(hand) > 0 and first(hand) > 3"}}],
    [{"let": {"x": "len(hand) == 0 or first(hand) > 3"}}],
    [{"if": "len(hand) == 0", "then": [], "else": [{"let": {"x": "first(hand)"}}]}],
    [{"choose": {"as": "c", "from": "hand"}, "reason": "r"}, {"let": {"x": "max(hand)"}}],
    [{"for_each": {"as": "c", "in": "hand"},
      "do": [{"let": {"x": "first([d for d in hand if d == c])"}}]}],
    [{"let": {"x": "[hand[i] for i in range(len(hand))]"}}],
    # a loop over a list, a choice from it: it holds an item, its length is not 0
    [{"for_each": {"as": "c", "in": "hand"}, "do": [{"let": {"x": "10 // len(hand)"}}]}],
    [{"choose": {"as": "c", "from": "hand"}, "reason": "r"},
     {"let": {"x": "reis % len(hand) + reis // (len(hand) + 1)"}}],
    [{"let": {"x": "[reis // len(hand) for c in hand]"}}],
    [{"let": {"n": "len(game.players)"}},
     {"let": {"x": "[game.players[(k + 1) % n] for k in range(6)]"}}],
    [{"require": "reis <= 0 or len(hand) > 0", "reason": "r"},
     {"require": "reis <= 0 or first(hand) > 2", "reason": "r"}],
    [{"let": {"x": "rules.steps[influence // 4]"}}],
])
def test_an_operation_proven_safe_builds(raw: list[Any]) -> None:
    assert _problems(raw) == []


@pytest.mark.parametrize("raw", [
    # an index that is not a constant, tested against the list's length before it
    [{"let": {"i": "reis % 5"}}, {"if": "len(hand) > i", "then": [{"let": {"x": "hand[i]"}}]}],
    [{"let": {"i": "reis % 5"}}, {"require": "len(hand) > i", "reason": "r"},
     {"let": {"x": "hand[i]"}}],
    [{"let": {"i": "reis % 5"}}, {"let": {"x": "hand[i] if len(hand) > i else 0"}}],
    [{"let": {"i": "reis % 5"}}, {"let": {"x": "hand[i] if i < len(hand) else 0"}}],
    [{"let": {"i": "reis % 5"}}, {"let": {"x": "hand[i] if len(hand) >= i + 1 else 0"}}],
    [{"let": {"x": "hand[reis] if len(hand) > reis else 0"}}],
    # an index of any sign, tested on both sides (the advice for one)
    [{"let": {"x": "hand[reis - 3] if 0 <= reis - 3 < len(hand) else 0"}}],
    # counted from the end by the list's length
    [{"require": "len(hand) > 0", "reason": "r"}, {"let": {"x": "hand[len(hand) - 1]"}}],
    [{"require": "len(hand) >= 2", "reason": "r"}, {"let": {"x": "hand[len(hand) - 2]"}}],
    [{"let": {"x": "hand[len(hand) - 1] if len(hand) >= 1 else 0"}}],
])
def test_an_index_tested_against_the_length_builds(raw: list[Any]) -> None:
    assert _problems(raw) == []


@pytest.mark.parametrize(("raw", "test"), [
    # the advice a refused index gets is a test that proves it, never one of the list's
    # length against an expression of its length
    ([{"let": {"x": "hand[len(hand) - 1]"}}], "test len(hand) >= 1 first"),
    ([{"require": "len(hand) > 0", "reason": "r"}, {"let": {"x": "hand[len(hand) - 2]"}}],
     "test len(hand) >= 2 first"),
    ([{"let": {"x": "game.court[-1]"}}], "test len(game.court) >= 1 first"),
    ([{"let": {"x": "hand[reis - 3]"}}], "test 0 <= reis - 3 < len(hand) first"),
    ([{"let": {"i": "reis % 5"}}, {"let": {"x": "hand[i]"}}], "test len(hand) > i first"),
    ([{"let": {"x": "hand[len(hand) - reis]"}}], "test 1 <= reis <= len(hand) first"),
    ([{"let": {"x": "hand[len(hand) // 2]"}}], "test 0 <= len(hand) // 2 < len(hand) first"),
    # a test that does not prove it (the index may be negative)
    ([{"let": {"x": "hand[reis - 3] if len(hand) > reis - 3 else 0"}}],
     "test 0 <= reis - 3 < len(hand) first"),
])
def test_a_refused_index_is_given_a_test_that_proves_it(raw: list[Any], test: str) -> None:
    found = _problems(raw)
    assert [c for c, _m in found] == ["partial-operation"], found
    assert test in found[0][1], found
    assert "len(hand) > len(hand)" not in found[0][1]
    # the advice, followed, builds
    shown = found[0][1].split("'")[1]
    cond = test.removeprefix("test ").removesuffix(" first")
    fixed = [*raw[:-1], {"let": {"x": f"{shown} if {cond} else 0"}}]
    assert _problems(fixed) == [], (fixed, _problems(fixed))


def test_a_local_of_a_kind_is_proven_for_each_of_its_values() -> None:
    """A constant of the rules read for each value a local can take (`noble` is `king` or
    `marquis`): safe when none gives an empty list, refused when one does."""
    noble = (st.Param("n", VType("noble")),)
    assert _problems([{"let": {"x": "first([c for c in rules.nobles if c != n])"}}], noble) == []
    found = _problems(
        [{"let": {"x": "first([c for c in rules.nobles if c == n and c != 'king'])"}}],
                      noble)
    assert [c for c, _m in found] == ["partial-operation"]
    assert "that list is empty for some of the values it reads" in found[0][1]


def test_the_setup_reads_no_player_before_one_exists() -> None:
    """In the setup, the players are made by its steps: reading one before is refused; after
    a `new:`, the one made is there; elsewhere every game has the players the rules allow."""
    early = _problems([{"let": {"x": "game.players[0]"}}], setup=True)
    assert [c for c, _m in early] == ["partial-operation"]
    assert _problems([{"let": {"x": "game.players[1]"}}]) == []
    assert [c for c, _m in _problems([{"let": {"x": "game.players[2]"}}])] == \
        ["partial-operation"]


SEATS = (st.Param("seats", INT),)
SEATED = {"for_each": {"as": "k", "in": "range(seats)"}, "do": [{"new": "game.players"}]}


@pytest.mark.parametrize("raw", [
    [SEATED, {"let": {"x": "100 // len(game.players) + game.players[1].reis"}}],
    [SEATED, {"let": {"y": "1"}}, {"if": "True", "then": [{"let": {"x": "game.players[0]"}}]}],
    [{"repeat": "seats", "do": [{"new": "game.players"}, {"let": {"y": "1"}}]},
     {"let": {"x": "100 // len(game.players)"}}],
])
def test_the_setup_knows_the_players_its_loop_seated(raw: list[Any]) -> None:
    """A loop of the setup that makes a player each time round (as many times as the game
    has players, 2 to 4 here): after it, the game has at least as many players as the loop
    went round at least."""
    assert _problems(raw, SEATS, setup=True) == []


@pytest.mark.parametrize(("raw", "words"), [
    # seated only if a condition holds: not known
    ([{"for_each": {"as": "k", "in": "range(seats)"},
       "do": [{"if": "k > 0", "then": [{"new": "game.players"}]}]},
      {"let": {"x": "game.players[0]"}}], "past the end of 'game.players'"),
    # round fewer times than there are seats: only as many as it went round
    ([{"for_each": {"as": "k", "in": "range(seats - 2)"}, "do": [{"new": "game.players"}]},
      {"let": {"x": "100 // len(game.players)"}}], "divisor-zero"),
])
def test_the_setup_knows_no_player_it_may_not_have_seated(raw: list[Any], words: str) -> None:
    found = _problems(raw, SEATS, setup=True)
    assert len(found) == 1 and words in " ".join(found[0]), found


@pytest.mark.parametrize("raw", [
    [{"gain": {"reis": 1}}],
    [{"let": {"x": "reis + 1"}}],
    [{"if": "influence > 2", "then": [{"let": {"y": "1"}}]}],
    [{"for_each": {"as": "k", "in": "range(seats)"},
      "do": [{"gain": {"reis": 1}}, {"new": "game.players"}]}],
])
def test_the_setup_reads_no_field_of_the_acting_player_before_one_exists(raw: list[Any]
                                                                         ) -> None:
    """The setup has no acting player: a step of its own that reads or changes a field of the
    acting player is refused where it is written (the engine failed on it as the game was
    made), with how to write it for each player or for one."""
    found = _problems(raw, SEATS, setup=True)
    assert [c for c, _m in found] == ["partial-operation"], found
    assert "the setup has no acting player" in found[0][1], found
    assert "for_each: {as: q, in: game.players}" in found[0][1], found


@pytest.mark.parametrize(("raw", "steps"), [
    ([SEATED, {"gain": {"reis": 1}}, {"let": {"x": "reis + influence"}}], 2),
    ([{"for_each": {"as": "k", "in": "range(seats)"},
       "do": [{"new": "game.players"}, {"gain": {"reis": 1}}]}], 1),
])
def test_the_setup_reads_no_field_of_the_acting_player_once_one_exists_either(
        raw: list[Any], steps: int) -> None:
    """Once the players are made too: the setup's code reads its acting player as it begins,
    before any exists (a fuzzing helper followed the advice to move such a step after the
    players, and every game failed)."""
    found = _problems(raw, SEATS, setup=True)
    assert [c for c, _m in found] == ["partial-operation"] * steps, found
    assert all("the setup has no acting player" in m for _c, m in found), found


@pytest.mark.parametrize(("source", "empty", "full"), [
    ("first([x for x in xs if x > n], n)", 5, 7),
    ("min([x for x in xs if x > n], n)", 5, 7),
    ("max([x for x in xs if x > n], default=n)", 5, 9),
    ("first(xs, 0)", 0, 3),
    ("max(xs, -1)", -1, 9),
])
def test_a_total_form_prints_code_that_gives_its_default(source: str, empty: int,
                                                         full: int) -> None:
    """The back end prints each total form as Python that runs (a generator among other
    arguments is parenthesized), giving the default for an empty list."""
    from lisboa_rules.pyprint import expr as pe

    scope = Scope(locals={"xs": Name(CARDS, ir.Local("xs")), "n": Name(INT, ir.Local("n"))})
    code = pe.expr(typed.check(source, scope).node, pe.PLAIN)
    run = compile(code, "<printed>", "eval")
    assert eval(run, {"v_xs": [], "v_n": 5}) == empty
    assert eval(run, {"v_xs": [3, 7, 9], "v_n": 5}) == full
