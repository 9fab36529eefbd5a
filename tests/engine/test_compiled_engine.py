"""The engine compiled with mypyc (`lisboa-rules compile`) against the pure-Python one.

generated/lisboa_engine.py is compiled once (the `compiled_engine` fixture of tests/conftest.py:
kept in the user's cache folder, ~/.cache/lisboa-rules/mypyc, keyed by the engine's source:
see lisboa_rules/cli/compile.py) and both engines play the same seeded random games in
lockstep: at every state the same legal moves in the same order (as JSON), the same state
after each move (`to_json`), the same refusal of a move made for another player, and at the
end the same score sheet and ranking. The default run plays 72 games over every player count
with and without the chosen variants; `--slow` plays 4,200. House rules' engines, compiled:
test_compiled_house_rules.py.

Without a C compiler, Python's headers or mypyc the tests skip and say what is missing; with
LISBOA_REQUIRE_COMPILED=1 (set by .ci/run) they fail instead.
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path
from types import ModuleType
from typing import Any

import optional
import pytest
from conftest import ENGINE_PATH, setups

from lisboa_rules.cli import compile as compile_cli


@pytest.fixture(scope="module")
def compiled(compiled_engine: ModuleType) -> ModuleType:
    """The compiled engine (tests/conftest.py), by the name this module's tests use."""
    return compiled_engine


def _moves(E: Any, g: Any) -> list[str]:
    return [json.dumps(m.to_json(), sort_keys=True) for m in E.legal_moves(g)]


def play_both(pure: Any, fast: Any, players: int, chosen: tuple[str, ...], seed: int) -> int:
    """One seeded game in both engines; the number of moves. Fails at the first difference."""
    a = pure.new_game(players, variants=chosen, seed=seed)
    b = fast.new_game(players, variants=chosen, seed=seed)
    rng = random.Random(f"compiled/{players}/{chosen}/{seed}")
    where = f"{players} players {chosen} seed {seed}"
    assert pure.to_json(a) == fast.to_json(b), f"{where}: the new games differ"
    moves = 0
    while a.phase != "over":
        legal_a, legal_b = _moves(pure, a), _moves(fast, b)
        assert legal_a == legal_b, f"{where}, move {moves}: the legal moves differ"
        i = rng.randrange(len(legal_a))
        if moves % 7 == 0:  # a move of this state, made for another player: refused alike
            wrong = {**json.loads(legal_a[i]), "player": (a.actor + 1) % players}
            why_a = pure.explain_move(a, pure.Move.from_json(wrong))
            why_b = fast.explain_move(b, fast.Move.from_json(wrong))
            assert (why_a is None) == (why_b is None), where
            if why_a is not None and why_b is not None:
                assert (why_a.rule, why_a.reason) == (why_b.rule, why_b.reason), where
        a = pure.apply_move(a, pure.legal_moves(a)[i])
        b = fast.apply_move(b, fast.legal_moves(b)[i])
        moves += 1
        assert pure.to_json(a) == fast.to_json(b), f"{where}, after move {moves}"
    assert b.phase == "over"
    sheet_a, sheet_b = pure.final_scores(a), fast.final_scores(b)
    assert sheet_a.to_json() == sheet_b.to_json(), where
    rank_a, rank_b = pure.ranking(a, sheet_a), fast.ranking(b, sheet_b)
    assert (rank_a.places, rank_a.keys) == (rank_b.places, rank_b.keys), where
    return moves


def test_the_compiled_engine_is_compiled_code(compiled: ModuleType, engine: ModuleType) -> None:
    # The test must compare two different implementations: the compiled classes are not the
    # pure engine's, and a state of one is refused by the other's checks.
    assert compiled is not engine
    assert compiled.Game is not engine.Game
    assert type(compiled.legal_moves).__name__ != "function"  # a native function
    assert set(compiled.__all__) == set(engine.__all__)


def test_a_difference_is_found(compiled: ModuleType, engine: ModuleType) -> None:
    # The harness must be able to fail: an engine whose moves differ from the compiled one's.
    class Twisted:
        def __getattr__(self, name: str) -> Any:
            return getattr(engine, name)

        @staticmethod
        def legal_moves(g: Any) -> list[Any]:
            return engine.legal_moves(g)[::-1]

    with pytest.raises(AssertionError, match="legal moves differ"):
        play_both(Twisted(), compiled, 3, (), 0)


def test_a_saved_game_moves_between_the_engines(compiled: ModuleType, engine: ModuleType) -> None:
    for players, chosen in setups(engine):
        g = engine.new_game(players, variants=chosen, seed=7)
        rng = random.Random(7)
        for _ in range(30):
            g = engine.apply_move(g, rng.choice(engine.legal_moves(g)))
        h = compiled.from_json(engine.to_json(g))
        assert compiled.to_json(h) == engine.to_json(g)
        assert _moves(compiled, h) == _moves(engine, g)


@pytest.mark.parametrize("seed", range(12))
def test_the_compiled_engine_plays_as_the_pure_one(
    compiled: ModuleType, engine: ModuleType, seed: int
) -> None:
    for players, chosen in setups(engine):
        play_both(engine, compiled, players, chosen, seed)


@pytest.mark.slow
def test_the_compiled_engine_plays_as_the_pure_one_long(
    compiled: ModuleType, engine: ModuleType
) -> None:
    for players, chosen in setups(engine):
        for seed in range(1000, 1700):
            play_both(engine, compiled, players, chosen, seed)


# --- the compile command, without a C compiler (mypyc replaced where it would run) ---------------


@pytest.mark.parametrize(
    "missing", [["a C compiler (cc)"], ["Python's headers"], ["mypyc", "a C compiler (cc)"]]
)
def test_compile_says_what_is_missing_and_writes_nothing(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    missing: list[str],
) -> None:
    from lisboa_rules.cli.main import main

    monkeypatch.setattr(compile_cli, "missing_tools", lambda: missing)
    monkeypatch.setenv("LISBOA_RULES_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "out"
    assert (
        main(["compile", "--out", str(out), "--rules", str(ENGINE_PATH.parents[1] / "rules")]) == 2
    )
    err = capsys.readouterr().err
    assert "error: compiling the engine needs" in err and all(m in err for m in missing)
    assert not out.exists() or not any(out.iterdir())


def _fake_mypyc(calls: list[int]) -> Any:
    def run(source: bytes, opt_level: int) -> bytes:
        calls.append(opt_level)
        return b"compiled:" + bytes([opt_level]) + source[:20]

    return run


@pytest.mark.parametrize("opt_level", [0, 3])
def test_compile_keeps_the_extension_by_source_and_level(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, opt_level: int
) -> None:
    optional.module("mypy.version", "dev")  # the cache key holds mypy's version
    calls: list[int] = []
    monkeypatch.setattr(compile_cli, "run_mypyc", _fake_mypyc(calls))
    monkeypatch.setenv("LISBOA_RULES_CACHE_DIR", str(tmp_path / "cache"))
    first = compile_cli.compile_engine(b"source one", tmp_path / "a", opt_level)
    again = compile_cli.compile_engine(b"source one", tmp_path / "b", opt_level)
    other = compile_cli.compile_engine(b"source two", tmp_path / "c", opt_level)
    level = compile_cli.compile_engine(b"source one", tmp_path / "d", 1 if opt_level != 1 else 2)
    assert (first.cached, again.cached, other.cached, level.cached) == (False, True, False, False)
    assert len(calls) == 3
    assert first.path.read_bytes() == again.path.read_bytes() != other.path.read_bytes()
    assert first.path.name == compile_cli.MODULE + compile_cli.extension_suffix()
    uncached = compile_cli.compile_engine(b"source one", tmp_path / "e", opt_level, False)
    assert not uncached.cached and len(calls) == 4


def test_the_cache_keeps_the_most_recently_used_engines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    optional.module("mypy.version", "dev")  # the cache key holds mypy's version
    # Each edit of the rules compiled is a new engine of 5-10 MiB: the cache keeps KEEP_CACHED
    # of them, the most recently written or read, and leaves files that are not its own alone.
    calls: list[int] = []
    monkeypatch.setattr(compile_cli, "run_mypyc", _fake_mypyc(calls))
    cache = tmp_path / "cache"
    monkeypatch.setenv("LISBOA_RULES_CACHE_DIR", str(cache))
    keep = compile_cli.KEEP_CACHED
    folder = cache / compile_cli.CACHE_FOLDER
    sources = [f"source {n}".encode() for n in range(keep)]
    for n, source in enumerate(sources):
        compile_cli.compile_engine(source, tmp_path / "out", 3)
        os.utime(folder / compile_cli.cache_key(source, 3), (1_000_000 + n, 1_000_000 + n))
    (folder / "notes.txt").write_text("mine")
    os.utime(folder / "notes.txt", (1, 1))
    assert {p.name for p in folder.iterdir()} == {
        *(compile_cli.cache_key(s, 3) for s in sources), "notes.txt"
    }
    # the oldest is read again: used now, so it stays and the next oldest two go
    assert compile_cli.compile_engine(sources[0], tmp_path / "out", 3).cached
    newer = [b"one more", b"and another"]
    for source in newer:
        assert not compile_cli.compile_engine(source, tmp_path / "out", 3).cached
    kept = {compile_cli.cache_key(s, 3) for s in [sources[0], *sources[3:], *newer]}
    assert len(kept) == keep
    assert {p.name for p in folder.iterdir()} == kept | {"notes.txt"}
    assert compile_cli.compile_engine(sources[-1], tmp_path / "out", 3).cached
    assert not compile_cli.compile_engine(sources[1], tmp_path / "out", 3).cached  # evicted


@pytest.mark.parametrize("plant", ["symlink", "fifo", "folder open to others"])
def test_compile_never_loads_a_planted_extension(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, plant: str
) -> None:
    optional.module("mypy.version", "dev")  # the cache key holds mypy's version
    # An extension is code the process runs: one the user did not write, through a symlink, a
    # FIFO or in a folder others can write, is compiled again instead.
    calls: list[int] = []
    monkeypatch.setattr(compile_cli, "run_mypyc", _fake_mypyc(calls))
    cache = tmp_path / "cache"
    monkeypatch.setenv("LISBOA_RULES_CACHE_DIR", str(cache))
    folder = cache / compile_cli.CACHE_FOLDER
    folder.mkdir(parents=True, mode=0o700)
    folder.chmod(0o700)
    name = compile_cli.cache_key(b"source", 3)
    evil = tmp_path / "evil.so"
    evil.write_bytes(b"planted")
    if plant == "symlink":
        (folder / name).symlink_to(evil)
    elif plant == "fifo":
        os.mkfifo(folder / name)
    else:
        (folder / name).write_bytes(b"planted")
        folder.chmod(0o777)
    done = compile_cli.compile_engine(b"source", tmp_path / "out", 3)
    assert not done.cached and calls == [3]
    assert done.path.read_bytes().startswith(b"compiled:")


def test_mypyc_without_mypy_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    """A mypyc folder without mypy's (a broken or partial install) is said to be missing, as
    mypyc is: compiling imports mypy (it failed as an internal error)."""
    import importlib.util

    real = importlib.util.find_spec

    def find(name: str, *args: Any) -> Any:
        return None if name == "mypy" else real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", find)
    assert any(m.startswith("mypyc") for m in compile_cli.missing_tools())
