"""Today's engine against the engine of the commit before issue 36's engine work: the same games.

Issue 36 reshaped the engine for speed (moves listed as codes, the move generators' tries on the
state itself, the agents' loops inside the engine, saves by their declared shapes, moves tried
in place and taken back) without changing a rule. The engine of the commit before that work
(`ISSUE36_BASE`, as the speed rows of benchmarks/run.py compare against) and today's play the
same seeded random games in lockstep: at every state the same legal moves, in the same order
(as JSON), and the same state (its save); at the end the same totals, score sheet (a held
item named as since, a line of one held item without its sum: `_named`) and ranking.

- The base rules: the engine of that commit is `git show` of its generated/lisboa_engine.py.
- House rules: each house rule of examples/house-rules/ and tests/cases/house-more/ is built
  by the compiler of that commit (its lisboa_rules/ and rules/, from `git archive`) and by
  today's compiler with today's rules; their two engines play in lockstep. The rules of that
  commit differ from today's in words only (rules/vocabulary.yaml), which no game reads.

The default run plays a few games of each rule set and one house rule; the complete suite
(`--slow`) at least 2,000 games per rule set and every house rule. The test needs the project's
git history (it skips, saying so, in a copy without it).
"""

from __future__ import annotations

import io
import random
import subprocess
import sys
import tarfile
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from conftest import ROOT, items_named, load_engine, setups, sized
from test_differential import engine_from_text

from lisboa_rules import pipeline

ISSUE36_BASE = "08590d2"  # benchmarks/run.py's: the last commit before issue 36's engine work
HOUSE = sorted([*(ROOT / "examples" / "house-rules").glob("*.yaml"),
                *(ROOT / "tests" / "cases" / "house-more").glob("*.yaml")])


def _git(*args: str) -> bytes | None:
    try:
        return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True,
                              check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None


@pytest.fixture(scope="module")
def before(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The lisboa_rules/, rules/ and generated engine of ISSUE36_BASE, in a folder."""
    tar = _git("archive", "--format=tar", ISSUE36_BASE, "lisboa_rules", "rules",
               "generated/lisboa_engine.py")
    if tar is None:
        pytest.skip(f"no git history with commit {ISSUE36_BASE} (a copy of the project without "
                    "its history): the engine before issue 36 cannot be had")
    out = tmp_path_factory.mktemp("before-issue-36")
    with tarfile.open(fileobj=io.BytesIO(tar)) as archive:
        archive.extractall(out, filter="data")
    return out


@pytest.fixture(scope="module")
def old_engine(before: Path) -> ModuleType:
    return load_engine(before / "generated" / "lisboa_engine.py", "lisboa_engine_before_36")


def lockstep(old: Any, new: Any, players: int, variants: tuple[str, ...], seed: int) -> int:
    """Play one seeded random game on both engines at once; the moves played."""
    a, b = old.new_game(players, variants, seed), new.new_game(players, variants, seed)
    rng = random.Random(seed)
    where = f"{players} players, variants {variants}, seed {seed}"
    played = 0
    while True:
        assert new.to_json(b) == old.to_json(a), f"{where}: the states differ after {played} moves"
        listed_a, listed_b = old.legal_moves(a), new.legal_moves(b)
        assert [m.to_json() for m in listed_b] == [m.to_json() for m in listed_a], (
            f"{where}: the legal moves differ after {played} moves")
        if not listed_a:
            break
        i = rng.randrange(len(listed_a))
        a, b = old.apply_move(a, listed_a[i]), new.apply_move(b, listed_b[i])
        played += 1
    assert a.phase == b.phase == "over", where
    assert new.final_totals(b) == old.final_totals(a), where
    assert new.final_scores(b).to_json() == _named(old.final_scores(a).to_json()), where
    rank_a, rank_b = old.ranking(a), new.ranking(b)
    assert (rank_b.places, rank_b.keys) == (rank_a.places, rank_a.keys), where
    return played


def _named(sheet: Any) -> Any:
    """The old engine's score sheet with a held item (a Decree) named as since: "Decree 01",
    not its id "decree-01", and a line of one held item without its sum of one number (both
    changed on purpose after issue 36's engine work)."""
    if isinstance(sheet, dict):
        return {k: _named(v) for k, v in sheet.items()}
    if isinstance(sheet, list):
        return [_named(v) for v in sheet]
    return items_named(sheet) if isinstance(sheet, str) else sheet


def _seeds(setups_of_rule_set: int, complete: int) -> range:
    """Seeds enough for `complete` games per rule set in the complete suite, 2 per setup else."""
    return range(sized(2, -(-complete // setups_of_rule_set)))


def test_todays_engine_plays_the_base_games_of_the_engine_before_issue_36(
    old_engine: ModuleType, engine: ModuleType
) -> None:
    all_setups = setups(engine)
    assert setups(old_engine) == all_setups
    played = 0
    for players, variants in all_setups:
        same_set = sum(1 for _n, v in all_setups if v == variants)
        for seed in _seeds(same_set, 2000):
            played += lockstep(old_engine, engine, players, variants, 9000 + seed)
    assert played > 1000  # every rule set reached its end, more than once


class _Swapped:
    """An engine whose first two legal moves of every listing are swapped."""

    def __init__(self, engine: ModuleType) -> None:
        self.engine = engine

    def __getattr__(self, name: str) -> Any:
        return getattr(self.engine, name)

    def legal_moves(self, g: Any) -> list[Any]:
        moves: list[Any] = self.engine.legal_moves(g)
        return [*moves[1::-1], *moves[2:]]


def test_the_lockstep_sees_a_difference(old_engine: ModuleType, engine: ModuleType) -> None:
    with pytest.raises(AssertionError, match="the legal moves differ after 0 moves"):
        lockstep(old_engine, _Swapped(engine), 3, (), 9000)


def _built_before(before: Path, house: Path, fold: bool, out: Path) -> ModuleType:
    """The engine the compiler of ISSUE36_BASE builds from its rules with `house`."""
    args = [sys.executable, "-m", "lisboa_rules", "build", "--no-cache", "--rules",
            str(before / "rules"), "--house", str(house), "--out", str(out)]
    if fold:
        args += ["--variant", house.stem]
    done = subprocess.run(args, cwd=before, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    return load_engine(out / "lisboa_engine.py", f"lisboa_engine_before_36_{house.stem}")


@pytest.mark.sampled(1)
@pytest.mark.parametrize("house", HOUSE, ids=[p.stem for p in HOUSE])
def test_todays_compiler_builds_house_rules_that_play_as_before_issue_36(
    before: Path, house: Path, tmp_path: Path
) -> None:
    chosen: tuple[str, ...] = (house.stem,)
    result = pipeline.compile_rules(ROOT / "rules", chosen, extra=[house])
    if any(d.code == "fold-by-players" for d in result.diagnostics):
        chosen = ()  # a variant of a player count: built beside the base game, not folded
        result = pipeline.compile_rules(ROOT / "rules", chosen, extra=[house])
    assert result.ok, [d.message for d in result.diagnostics]
    new: Any = engine_from_text(result.files["lisboa_engine.py"], f"lisboa_engine_36_{house.stem}")
    old: Any = _built_before(before, house, bool(chosen), tmp_path / "g")
    assert setups(old) == setups(new)
    played = 0
    for players, variants in setups(new):  # folded in, the house rule is in every rule set
        for seed in range(sized(1, 12)):
            played += lockstep(old, new, players, variants, 9100 + seed)
    assert played > 500
