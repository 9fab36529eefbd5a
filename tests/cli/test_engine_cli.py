"""`lisboa-rules score` and `lisboa-rules simulate` (lisboa_rules/cli/engine.py)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import ENGINE_PATH, ROOT

from lisboa_rules.cli import engine as engine_cli
from lisboa_rules.cli import main as cli
from lisboa_rules.sim import runner

# the games `simulate` plays: random moves, one generator per game
SIMULATED = runner.Options(one_generator=True, leads=False)


def _finished_game(engine: Any, players: int = 3, seed: int = 4) -> Any:
    g = engine.new_game(players, (), seed)
    rng = random.Random(seed)
    while g.phase != "over":
        g = engine.apply_move(g, rng.choice(engine.legal_moves(g)))
    return g


@pytest.fixture()
def saved(engine: Any, tmp_path: Path) -> tuple[Path, Any]:
    g = _finished_game(engine)
    path = tmp_path / "game.json"
    path.write_text(engine.dumps(g))
    return path, g


def _run(argv: list[str], capsys: Any, monkeypatch: Any) -> tuple[int, str, str]:
    monkeypatch.chdir(ROOT)
    code = cli.main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# --- score ----------------------------------------------------------------------------------


def test_score_text(engine: Any, saved: Any, capsys: Any, monkeypatch: Any) -> None:
    path, g = saved
    code, out, err = _run(["score", str(path)], capsys, monkeypatch)
    assert code == 0, err
    sheet = engine.final_scores(g)
    for color, total in zip(sheet.colors, sheet.totals, strict=True):
        assert f"{color}: {total} wigs" in out
    for line in sheet.lines[0]:
        assert line.explanation in out
    assert "Ranking (most wigs, then most rubble sets" in out
    assert "note:" not in out  # the game is over
    winner = engine.ranking(g, sheet).places[0][0]
    assert f"1st  {sheet.colors[winner]}" in out


def test_score_json(engine: Any, saved: Any, capsys: Any, monkeypatch: Any) -> None:
    path, g = saved
    code, out, _ = _run(["score", str(path), "--format", "json"], capsys, monkeypatch)
    assert code == 0
    data = json.loads(out)
    sheet = engine.final_scores(g)
    assert data["over"] is True
    assert [p["total"] for p in data["players"]] == list(sheet.totals)
    assert data["players"][1]["sources"][0]["explanation"] == sheet.lines[1][0].explanation
    order = [r["color"] for r in data["ranking"]["order"]]
    assert sorted(order) == sorted(sheet.colors)
    assert data["ranking"]["order"][0]["place"] == 1


def test_score_of_a_game_in_progress_says_so(
    engine: Any, tmp_path: Path, capsys: Any, monkeypatch: Any
) -> None:
    path = tmp_path / "new.json"
    path.write_text(engine.dumps(engine.new_game(2, (), 1)))
    code, out, _ = _run(["score", str(path)], capsys, monkeypatch)
    assert code == 0
    assert out.startswith("note: the game is not over")


def test_shared_places(engine: Any) -> None:
    class R:
        places = ((2, 0), (1,))

    assert engine_cli.places_of(R()) == [1, 3, 1]


def test_score_bad_state_names_the_path(
    engine: Any, saved: Any, capsys: Any, monkeypatch: Any
) -> None:
    path, _ = saved
    data = json.loads(path.read_text())
    data["players"][1]["reis"] = -4
    path.write_text(json.dumps(data))
    code, out, err = _run(["score", str(path)], capsys, monkeypatch)
    assert code == 1 and out == ""
    assert "$.players[1].reis" in err and "Traceback" not in err
    path.write_text("{")
    code, _, err = _run(["score", str(path)], capsys, monkeypatch)
    assert code == 1 and "not JSON" in err


def test_score_missing_files(tmp_path: Path, saved: Any, capsys: Any, monkeypatch: Any) -> None:
    code, _, err = _run(["score", str(tmp_path / "nope.json")], capsys, monkeypatch)
    assert code == 2 and "cannot read" in err
    path, _ = saved
    code, _, err = _run(["score", str(path), "--engine", str(tmp_path / "x.py")], capsys,
                        monkeypatch)
    assert code == 2 and "no engine at" in err and "build" in err


def test_score_with_an_engine_compiled_from_rules(
    saved: Any, capsys: Any, monkeypatch: Any
) -> None:
    path, _ = saved
    code, out, err = _run(["score", str(path), "--rules", "rules", "--format", "json"], capsys,
                          monkeypatch)
    assert code == 0, err
    _, out2, _ = _run(["score", str(path), "--format", "json"], capsys, monkeypatch)
    fresh, generated = json.loads(out), json.loads(out2)
    assert fresh["ranking"] == generated["ranking"]
    assert [p["total"] for p in fresh["players"]] == [p["total"] for p in generated["players"]]


def test_score_with_rules_that_have_errors(
    saved: Any, tmp_path: Path, capsys: Any, monkeypatch: Any
) -> None:
    path, _ = saved
    bad = tmp_path / "rules"
    bad.mkdir()
    (bad / "game.yaml").write_text("kind: game\n")
    code, _, err = _run(["score", str(path), "--rules", str(bad)], capsys, monkeypatch)
    assert code == 1 and "have errors" in err


# --- simulate -------------------------------------------------------------------------------


def _simulate(capsys: Any, monkeypatch: Any, *extra: str) -> dict[str, Any]:
    code, out, err = _run(["simulate", "--format", "json", *extra], capsys, monkeypatch)
    assert code == 0, err
    assert err == ""  # no progress bar when stderr is not a terminal
    data: dict[str, Any] = json.loads(out)
    return data


def test_simulate_json_summary(engine: Any, capsys: Any, monkeypatch: Any) -> None:
    d = _simulate(capsys, monkeypatch, "--games", "6", "--seed", "3", "--players", "3")
    assert (d["games"], d["players"], d["variants"], d["seed"]) == (6, 3, [], 3)
    # the summary agrees with playing the same games directly
    turns = []
    for seed in range(3, 9):
        rec = runner.play_game(engine, 3, (), seed, seed - 3, ("random",), SIMULATED)
        turns.append(rec.turns)
    assert d["length"]["turns"]["min"] == min(turns)
    assert d["length"]["turns"]["max"] == max(turns)
    assert sum(d["triggers"]["period"].values()) == 6
    assert sum(d["triggers"]["game"].values()) == 6
    assert set(d["triggers"]["period"]) <= {"period-end.rubble", "period-end.display"}
    wins = d["wins"]
    assert [w["color"] for w in wins] == ["Yellow", "Green", "Orange"]
    assert sum(w["wins"] for w in wins) >= 6
    assert sum(w["wins"] for w in wins) - sum(w["shared"] for w in wins) <= 6
    sources = d["score_per_player"]["sources"]
    assert len(sources) == 7
    total = d["score_per_player"]["track"] + sum(s["mean"] for s in sources.values())
    assert abs(total - d["score_per_player"]["total"]) < 0.05


def test_simulate_plays_one_generator_per_game(engine: Any) -> None:
    """Every move of a simulated game is drawn by one generator, seeded `moves:SEED`, among
    the legal moves, whoever moves (the games `simulate` has always played: the same seeds
    give the same summaries)."""
    for seed in (1, 2, -7):
        g = engine.new_game(3, (), seed)
        rng = random.Random(f"moves:{seed}")
        moves = 0
        while g.phase != "over":
            g = engine.apply_move(g, rng.choice(engine.legal_moves(g)))
            moves += 1
        rec = runner.play_game(engine, 3, (), seed, 0, ("random",), SIMULATED)
        sheet = engine.final_scores(g)
        assert (rec.moves, rec.turns, rec.rounds, rec.fired) == (moves, g.turns, g.round,
                                                               list(g.fired))
        assert rec.totals == list(sheet.totals) and rec.lead_changes == 0
        assert rec.first == list(engine.ranking(g, sheet).places[0])
    with pytest.raises(ValueError, match="'random' only"):
        runner.play_game(engine, 2, (), 1, 0, ("random", "greedy"), SIMULATED)


@pytest.mark.parametrize(
    "extra, words",
    [
        # 0 was taken for "not given" and played the most players (review)
        (["--players", "0", "--games", "1", "--seed", "1"], "0 players"),
        # the last game's seed is past the engine's 64-bit seeds: refused before any game,
        # not an internal error at the second game
        (["--games", "2", "--seed", str(2**63 - 1)], "64-bit"),
    ],
)
def test_simulate_refuses_what_the_engine_cannot_play(
    extra: list[str], words: str, capsys: Any, monkeypatch: Any
) -> None:
    code, out, err = _run(["simulate", *extra], capsys, monkeypatch)
    assert code == 2 and out == ""
    assert err.startswith("lisboa-rules: error: ") and words in err, err
    assert "internal error" not in err and "Traceback" not in err


def test_simulate_jobs_give_identical_results(capsys: Any, monkeypatch: Any) -> None:
    args = ["--games", "8", "--seed", "40", "--players", "2", "--variant", "queen"]
    one = _simulate(capsys, monkeypatch, *args)
    two = _simulate(capsys, monkeypatch, *args, "--jobs", "2")
    assert one == two
    assert one["variants"] == ["queen", "two-player"]


def test_simulate_text(capsys: Any, monkeypatch: Any) -> None:
    code, out, _ = _run(["simulate", "--games", "2", "--seed", "1", "--players", "4"], capsys,
                        monkeypatch)
    assert code == 0
    for heading in ("Game length:", "Average wigs per player:", "End of the period",
                    "End of the game", "Wins by seat"):
        assert heading in out
    assert "seat 3 Blue" in out


def test_simulate_progress_bar_only_on_a_terminal(
    engine: Any, capsys: Any, monkeypatch: Any
) -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    tty = Tty()
    monkeypatch.setattr("sys.stderr", tty)
    summary = engine_cli.simulate(engine, ENGINE_PATH, 3, (), 1, 3, 1)
    assert summary.games == 3
    shown = tty.getvalue()
    assert "3/3" in shown and "game/s" in shown and "100%" in shown  # tqdm's bar, with a rate
    assert capsys.readouterr().out == ""


def test_simulate_no_progress_bar_off_a_terminal(engine: Any, capsys: Any) -> None:
    summary = engine_cli.simulate(engine, ENGINE_PATH, 3, (), 1, 3, 1)
    assert summary.games == 3
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("form", ["file", "folder"])
def test_simulate_engine_from_a_file_or_a_folder(
    form: str, tmp_path: Path, capsys: Any, monkeypatch: Any
) -> None:
    """`--engine` takes the engine file or a folder that holds lisboa_engine (as `compile
    --out DIR` writes it); the games are the same."""
    folder = tmp_path / "engine-out"
    folder.mkdir()
    shutil.copy(ENGINE_PATH, folder / "lisboa_engine.py")
    where = folder / "lisboa_engine.py" if form == "file" else folder
    args = ("--games", "3", "--seed", "2", "--players", "2")
    assert _simulate(capsys, monkeypatch, *args, "--engine", str(where)) == _simulate(
        capsys, monkeypatch, *args)


def test_an_engine_folder_without_an_engine(tmp_path: Path, capsys: Any, monkeypatch: Any) -> None:
    code, _, err = _run(["simulate", "--games", "1", "--seed", "1", "--engine", str(tmp_path)],
                        capsys, monkeypatch)
    assert code == 2 and "no lisboa_engine module in" in err


def test_simulate_usage_errors(capsys: Any, monkeypatch: Any) -> None:
    code, _, err = _run(["simulate", "--games", "2", "--seed", "1", "--variant", "nope"], capsys,
                        monkeypatch)
    assert code == 2 and "unknown variant" in err
    code, _, err = _run(["simulate", "--games", "0", "--seed", "1"], capsys, monkeypatch)
    assert code == 2
    code, _, err = _run(["simulate", "--games", "1", "--seed", "1", "--players", "9"], capsys,
                        monkeypatch)
    assert code == 2 and "players" in err


# --- a stale engine -------------------------------------------------------------------------

STALE = "generated/ is older than rules/: run lisboa-rules build"


def _edit_value(rules: Path) -> None:
    p = rules / "court.yaml"
    p.write_text(p.read_text(encoding="utf-8").replace("per_official: 1", "per_official: 2"),
                 encoding="utf-8")


def _new_variant(rules: Path) -> None:
    (rules / "variants" / "mine.yaml").write_text(
        "kind: variant\nid: mine\ntitle: Mine\napplies: chosen\ntext: Mine.\n"
        "source: [seed:000#endgame-scoring]\nchanges: {}\n", encoding="utf-8")


def _comment_only(rules: Path) -> None:
    p = rules / "scoring.yaml"
    p.write_text(p.read_text(encoding="utf-8") + "# a note\n", encoding="utf-8")


def _removed_file(rules: Path) -> None:
    (rules / "variants" / "queen.yaml").unlink()


@pytest.fixture()
def project(tmp_path: Path, monkeypatch: Any) -> Path:
    """A copy of the rules and of the engine built from them, as the working directory."""
    shutil.copytree(ROOT / "rules", tmp_path / "rules")
    (tmp_path / "generated").mkdir()
    shutil.copy(ENGINE_PATH, tmp_path / "generated" / "lisboa_engine.py")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _in(project: Path, argv: list[str], capsys: Any) -> tuple[int, str, str]:
    code = cli.main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _commands(project: Path, engine: Any) -> list[list[str]]:
    state = project / "game.json"
    state.write_text(engine.dumps(_finished_game(engine)), encoding="utf-8")
    return [["score", str(state)], ["simulate", "--games", "1", "--seed", "1"]]


@pytest.mark.parametrize("edit", [_edit_value, _new_variant, _comment_only, _removed_file])
def test_stale_engine_is_an_error(project: Path, engine: Any, capsys: Any, edit: Any) -> None:
    """After editing rules/ without a rebuild, `score` and `simulate` refuse the old engine."""
    commands = _commands(project, engine)
    for argv in commands:  # built from exactly these rules: no word about it
        code, _, err = _in(project, argv, capsys)
        assert code == 0 and "older" not in err, (argv, err)
    edit(project / "rules")
    for argv in commands:
        code, out, err = _in(project, argv, capsys)
        assert code == 1, (argv, err)
        assert STALE in err and not out, (argv, err)


@pytest.mark.parametrize("edit", [_edit_value, _new_variant])
def test_stale_engine_given_explicitly_is_a_warning(project: Path, engine: Any, capsys: Any,
                                                    edit: Any) -> None:
    commands = _commands(project, engine)
    edit(project / "rules")
    for argv in commands:
        code, out, err = _in(project, [*argv, "--engine", "generated/lisboa_engine.py"], capsys)
        assert code == 0, (argv, err)
        assert f"warning: {STALE}" in err and out, (argv, err)


def _children(pid: int) -> list[int]:
    """Every live descendant of `pid`, from /proc."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if fields[0] != "Z":
            parents[int(entry.name)] = int(fields[1])
    found, todo = [], [pid]
    while todo:
        here = todo.pop()
        kids = [p for p, pp in parents.items() if pp == here]
        found += kids
        todo += kids
    return found


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc (Linux)")
@pytest.mark.parametrize("jobs", ["2", "3"])
def test_sigterm_ends_simulate_workers(jobs: str) -> None:
    """SIGTERM to `simulate --jobs J` ends its workers too, and the command itself (J
    workers, or one per CPU when there are fewer)."""
    expected = min(int(jobs), engine_cli.available_cpus())
    proc = subprocess.Popen(
        [sys.executable, "-m", "lisboa_rules", "simulate", "--games", "100000", "--seed", "1",
         "--jobs", jobs], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        deadline = time.monotonic() + 120
        while len(_children(proc.pid)) < expected and time.monotonic() < deadline:
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            time.sleep(0.1)
        workers = _children(proc.pid)
        assert len(workers) >= expected
        time.sleep(0.5)  # let the workers play
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)
        assert proc.returncode == -signal.SIGTERM
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and any(Path(f"/proc/{w}").exists() and
                                                  "Z" not in _state(w) for w in workers):
            time.sleep(0.1)
        alive = [w for w in workers if Path(f"/proc/{w}").exists() and "Z" not in _state(w)]
        assert not alive, f"workers still running after SIGTERM: {alive}"
    finally:
        for w in _children(proc.pid):
            with contextlib.suppress(OSError):
                os.kill(w, signal.SIGKILL)
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _state(pid: int) -> str:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return "Z"
    return stat[stat.rindex(")") + 2:].split()[0]


# --- hostile counts and seeds ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "games", "limit"),
    [("simulate", "1000001", "1,000,000"), ("simulate", "10" * 12, "1,000,000"),
     ("balance", "100001", "100,000"), ("balance", str(2**70), "100,000")],
)
def test_too_many_games_are_refused_before_anything_is_played(
    command: str, games: str, limit: str, capsys: Any, monkeypatch: Any
) -> None:
    """A huge --games listed every seed and job up front (a MemoryError reported as an internal
    error, after eating the machine's memory): it is a usage error naming the limit."""
    def no_game(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a game was started")

    monkeypatch.setattr(runner, "play_game", no_game)  # simulate's games and balance's
    code, out, err = _run([command, "--games", games, "--seed", "1", "--players", "2"], capsys,
                          monkeypatch)
    assert code == 2 and out == "" and f"at most {limit} games" in err, err
    assert "internal error" not in err


@pytest.mark.parametrize("command", ["simulate", "balance"])
def test_a_seed_range_past_64_bits_names_the_last_seed(
    command: str, capsys: Any, monkeypatch: Any
) -> None:
    """--seed 2**63 - 2 is a valid seed; with --games 3 the last game's is not: the message says
    so (it said 'the seed must be a signed 64-bit integer' of a seed that was one)."""
    seed = 2**63 - 2
    code, out, err = _run([command, "--games", "3", "--seed", str(seed), "--players", "2"],
                          capsys, monkeypatch)
    assert code == 2 and out == ""
    assert err.startswith("lisboa-rules: error: ") and "64-bit" in err, err
    assert f"the last game's seed, {seed + 2}," in err and "--games 3" in err, err


NOT_ENGINES = {
    "syntax.py": "this is not python(\n",
    "no-api.py": "x = 1\n",
    "exits.py": "raise SystemExit(0)\n",  # ended the command with exit 0 and no output
    "raises.py": "raise RuntimeError('boom')\n",
    "fake.so": "\x7fELF garbage",
    "notes.txt": "not a module\n",
}


@pytest.mark.parametrize("name", sorted(NOT_ENGINES))
@pytest.mark.parametrize("command", ["score", "simulate", "balance"])
def test_an_engine_that_is_no_engine_is_refused(
    name: str, command: str, tmp_path: Path, saved: Any, capsys: Any, monkeypatch: Any
) -> None:
    """--engine naming a file that is not a generated engine: a clear error (exit 2), never
    an internal error asking for a bug report, never a silent exit 0."""
    path = tmp_path / name
    path.write_text(NOT_ENGINES[name], encoding="utf-8")
    argv = {"score": ["score", str(saved[0])],
            "simulate": ["simulate", "--games", "1", "--seed", "1"],
            "balance": ["balance", "--games", "1", "--seed", "1", "--agents", "random"]}[command]
    code, out, err = _run([*argv, "--engine", str(path)], capsys, monkeypatch)
    assert code == 2 and out == "", err
    assert err.startswith("lisboa-rules: error: ") and "internal error" not in err, err
    assert str(path) in err and "engine" in err, err


# --- a save of other rules ---------------------------------------------------------------------

HOUSE = ROOT / "examples" / "house-rules"


@pytest.fixture(scope="module")
def folded_engine(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    """An engine with a house rule built into the base game (build --variant goods-scoring):
    another rule set whose saves list the same option variants as the base game's."""
    from lisboa_rules import pipeline
    from lisboa_rules.core.inputs import ENGINE

    result = pipeline.compile_rules(ROOT / "rules", ("goods-scoring",),
                                    extra=(HOUSE / "goods-scoring.yaml",))
    path = tmp_path_factory.mktemp("folded") / "lisboa_engine.py"
    path.write_text(result.files[ENGINE], encoding="utf-8")
    return path, engine_cli.load_engine(path)


def test_a_save_of_other_rules_is_not_scored_by_these(
    folded_engine: tuple[Path, Any], saved: Any, tmp_path: Path, capsys: Any, monkeypatch: Any
) -> None:
    """A save of the rules with goods-scoring built in was scored by the base engine with the
    base rules (exit 0, a score sheet without the house rule's source), and a base save by
    the house rule's engine: each is refused, at $.variants."""
    path, F = folded_engine
    theirs = tmp_path / "theirs.json"
    theirs.write_text(F.dumps(_finished_game(F)), encoding="utf-8")
    code, out, err = _run(["score", str(theirs)], capsys, monkeypatch)
    assert code == 1 and out == "" and "$.variants" in err and "goods-scoring" in err, err
    code, out, err = _run(["score", str(saved[0]), "--engine", str(path)], capsys, monkeypatch)
    assert code == 1 and out == "" and "$.variants" in err and "goods-scoring" in err, err
    # each engine reads its own saves, which list what is built in
    assert F.to_json(F.loads(theirs.read_text(encoding="utf-8")))["variants"] == ["goods-scoring"]
    code, out, _ = _run(["score", str(theirs), "--engine", str(path), "--format", "json"],
                        capsys, monkeypatch)
    assert code == 0
    assert any(s["source"] == "score.goods" for s in json.loads(out)["players"][0]["sources"])


def test_a_variant_at_another_player_count_says_which_count(
    capsys: Any, monkeypatch: Any
) -> None:
    """It said "variant 'two-player' is for (2,) players" (a Python tuple)."""
    code, out, err = _run(["simulate", "--games", "1", "--seed", "1", "--players", "3",
                           "--variant", "two-player"], capsys, monkeypatch)
    assert code == 2 and out == ""
    assert "'two-player' applies with 2 players only, not 3" in err and "(2,)" not in err, err


@pytest.mark.parametrize("command", ["simulate", "balance"])
def test_more_jobs_than_cpus_start_no_more_processes_than_cpus(
    command: str, capsys: Any, monkeypatch: Any
) -> None:
    """--jobs 500 forked up to 500 worker processes (one per chunk of games) on a machine of
    2 CPUs shared with others: the workers are as many as the CPUs (the results do not depend
    on it), and a note says so."""
    import concurrent.futures

    real = concurrent.futures.ProcessPoolExecutor
    asked: list[int] = []

    def pool(max_workers: int, *args: Any, **kwargs: Any) -> Any:
        asked.append(max_workers)
        return real(max_workers, *args, **kwargs)

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", pool)
    monkeypatch.setattr(engine_cli, "available_cpus", lambda: 2)
    argv = [command, "--games", "40", "--seed", "3", "--players", "2", "--format", "json"]
    if command == "balance":
        argv += ["--agents", "random"]
    code, many, err = _run([*argv, "--jobs", "500"], capsys, monkeypatch)
    assert code == 0 and asked == [2], (asked, err)
    assert "--jobs 500" in err and "2 CPUs" in err, err
    code, one, _ = _run([*argv, "--jobs", "1"], capsys, monkeypatch)
    assert code == 0 and one == many
