"""`lisboa-rules balance` (lisboa_rules/cli/balance.py) end to end, and its executors."""

from __future__ import annotations

import io
import json
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import optional
import pytest
from conftest import ENGINE_PATH, ROOT, run_cli

from lisboa_rules.cli import main as cli
from lisboa_rules.sim import executors, html, runner
from lisboa_rules.sim.runner import Options

HOUSE = ROOT / "examples" / "house-rules"
NOTHING = (
    "kind: variant\nid: {id}\ntitle: Nothing\napplies: chosen\ntext: Nothing changes.\n"
    "source: [seed:000#endgame-scoring]\nchanges: {{}}\n"
)


def _json(capsys: Any, monkeypatch: Any, *args: str) -> dict[str, Any]:
    code, out, err = run_cli(["balance", "--format", "json", *args], capsys, monkeypatch)
    assert code == 0, err
    data: dict[str, Any] = json.loads(out)
    return data


RUN = ("--games", "4", "--seed", "11", "--players", "2", "--agents", "greedy,random")


def test_json_shape(engine: Any, capsys: Any, monkeypatch: Any) -> None:
    d = _json(capsys, monkeypatch, *RUN)
    assert list(d) == ["run", "rule_sets", "compare"] and d["compare"] is None
    assert d["run"] == {
        "games": 4,
        "players": 2,
        "seed": 11,
        "agents": ["greedy", "random"],
        "iterations": None,
        "horizon": None,
    }
    rs = d["rule_sets"]["base"]
    assert list(rs) == [
        "games",
        "players",
        "variants",
        "seats",
        "balance",
        "agents",
        "versus",
        "length",
        "score",
        "sources",
        "margin",
        "lead_changes",
        "triggers",
        "never_reached",
        "rare",
    ]
    assert rs["games"] == 4 and rs["variants"] == ["two-player"]
    fig = ["mean", "sd", "q05", "q50", "q95"]
    for seat in rs["seats"]:
        assert list(seat) == ["seat", "color", "wins", "shared", "win_rate", "ci95"]
        assert 0 <= seat["ci95"][0] <= seat["win_rate"] <= seat["ci95"][1] <= 1
    for agent in rs["agents"].values():
        assert list(agent) == ["games", "wins", "win_rate", "ci95"] and agent["games"] == 4
    assert set(rs["versus"]) == {"greedy", "random"}
    key = engine.variants_for(2, ())
    ruleset = engine.RULESETS[key]
    assert list(rs["sources"]) == [s.id for s in ruleset.scoring]
    assert all(list(s) == ["name", *fig] for s in rs["sources"].values())
    assert all(
        list(f) == fig
        for f in [*rs["length"].values(), *rs["score"].values(), rs["margin"], rs["lead_changes"]]
    )
    fired = {t.id: t.ends for t in ruleset.triggers}
    assert {t for kind in rs["triggers"].values() for t in kind} == set(fired)
    for kind, row in rs["triggers"].items():
        assert all(fired[t] == kind for t in row)
    assert rs["balance"] == pytest.approx(
        1 - (max(s["win_rate"] for s in rs["seats"]) - min(s["win_rate"] for s in rs["seats"])),
        abs=1e-4,
    )


@pytest.mark.parametrize(
    ("agents", "players", "games"),
    [
        (("greedy", "random"), 2, 4),
        (("random", "greedy"), 3, 2),
        (("random", "greedy", "mcts"), 3, 3),
    ],
)
def test_seats_rotate(agents: tuple[str, ...], players: int, games: int) -> None:
    """Over len(agents) games each agent sits in each seat equally often."""
    lineups = [runner.lineup(agents, players, i) for i in range(games)]
    for seat in range(players):
        seen = [lineup[seat] for lineup in lineups]
        counts = {a: seen.count(a) for a in agents}
        assert len(set(counts.values())) == 1, (seat, counts)
    assert lineups[0] != lineups[1]


def test_every_agent_sits_in_every_seat_of_the_report(capsys: Any, monkeypatch: Any) -> None:
    d = _json(
        capsys,
        monkeypatch,
        "--games",
        "4",
        "--seed",
        "2",
        "--players",
        "2",
        "--agents",
        "random,greedy",
    )
    assert {a: s["games"] for a, s in d["rule_sets"]["base"]["agents"].items()} == {
        "random": 4,
        "greedy": 4,
    }


def test_jobs_and_executors_give_identical_json(capsys: Any, monkeypatch: Any) -> None:
    args = (
        "--games",
        "6",
        "--seed",
        "5",
        "--players",
        "3",
        "--agents",
        "random,greedy",
        "--compare",
        "queen",
    )
    one = _json(capsys, monkeypatch, *args)
    two = _json(capsys, monkeypatch, *args, "--jobs", "2")
    assert one == two
    assert one["compare"]["base"] == "base" and one["compare"]["other"] == "queen"


def test_the_dask_executor_gives_the_same_records(engine: Any) -> None:
    distributed = optional.module("distributed", "dask")
    jobs = runner.chunks(str(ENGINE_PATH), 2, (), 3, 5, ("greedy", "random"), Options(), 2)
    here = executors.run_serial(engine, jobs)
    cluster = distributed.LocalCluster(
        processes=False, n_workers=2, threads_per_worker=1, dashboard_address=None
    )
    try:
        with distributed.Client(cluster) as client:
            there = executors.run_dask(jobs, client=client)
    finally:
        cluster.close()
    assert there == here
    assert [r.index for r in there] == list(range(5))


def test_the_cli_on_a_local_dask_cluster(capsys: Any, monkeypatch: Any) -> None:
    optional.module("distributed", "dask")
    args = ("--games", "3", "--seed", "9", "--players", "2", "--agents", "random")
    assert _json(capsys, monkeypatch, *args, "--dask", "local", "--jobs", "2") == _json(
        capsys, monkeypatch, *args
    )


def test_text_report(capsys: Any, monkeypatch: Any) -> None:
    code, out, err = run_cli(["balance", *RUN], capsys, monkeypatch)
    assert code == 0, err
    for words in (
        "Win rate per seat (95% Wilson interval); balance",
        "Agents:",
        "greedy above random",
        "Game length:",
        "Score per player:",
        "Winning margin",
        "Lead changes",
        "End of a period triggered by",
        "End of the game",
    ):
        assert words in out


def test_html_report(tmp_path: Path, capsys: Any, monkeypatch: Any) -> None:
    target = tmp_path / "report.html"
    code, out, err = run_cli(
        ["balance", *RUN, "--compare", "queen", "--format", "html", "--out", str(target)],
        capsys,
        monkeypatch,
    )
    assert code == 0 and out == "" and "wrote" in err
    page = target.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and "@media print" in page
    assert "queen against base" in page and "<table>" in page
    # it loads nothing: no script, link, import, or a source or link to another address
    assert "<script" not in page and "<link" not in page and "@import" not in page
    assert all(u.startswith("#") for u in re.findall(r"url\(([^)]*)\)", page))
    for ref in re.findall(r'(?:src|href)\s*=\s*"([^"]*)"', page):
        assert ref.startswith("#"), ref
    if _has_matplotlib():
        assert page.count("<svg") == 3 and "<figcaption>Win rate per seat" in page
    else:
        assert "The plots need the report extra" in page


def _has_matplotlib() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.mark.parametrize("name", ["<b>bold</b>", "a & b", "\u202eevil"])
def test_html_escapes_the_data(engine: Any, name: str, monkeypatch: Any) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # the tables-only page
    from lisboa_rules.sim import report

    records = [runner.play_game(engine, 2, (), 1, 0, ("random",))]
    info = report.info_of(engine, name, engine.variants_for(2, ()))
    data = {
        "run": {"games": 1, "players": 2, "seed": 1, "agents": ["random"]},
        "rule_sets": {name: report.rule_set_data(info, records, ["random"])},
        "compare": None,
    }
    page = html.page(data, {name: records})
    assert name not in page and "The plots need the report extra" in page
    assert "&lt;b&gt;" in page or "&amp;" in page or "\\u202e" in page


def _triggers_named(rs: dict[str, Any]) -> None:
    for row in rs["triggers"].values():
        for t, count in row.items():
            assert count >= 0.01 * rs["games"] or t in rs["never_reached"] or t in rs["rare"]
            assert (t in rs["never_reached"]) == (count == 0)


def test_triggers_never_reached_are_named(capsys: Any, monkeypatch: Any) -> None:
    d = _json(capsys, monkeypatch, "--games", "5", "--seed", "1", "--players", "3")
    _triggers_named(d["rule_sets"]["base"])
    code, out, _ = run_cli(
        ["balance", "--games", "3", "--seed", "1", "--players", "3", "--agents", "random"],
        capsys,
        monkeypatch,
    )
    assert code == 0 and "Never reached:" in out  # random games never reach some triggers


@pytest.mark.slow
def test_every_trigger_fires_in_1_percent_of_greedy_games_or_is_named(
    capsys: Any, monkeypatch: Any
) -> None:
    d = _json(capsys, monkeypatch, "--games", "300", "--seed", "1", "--players", "3", "--jobs", "2")
    _triggers_named(d["rule_sets"]["base"])


def _compare_rubble_bounty(capsys: Any, monkeypatch: Any, games: int) -> dict[str, Any]:
    d = _json(
        capsys,
        monkeypatch,
        "--games",
        str(games),
        "--seed",
        "3",
        "--players",
        "3",
        "--compare",
        str(HOUSE / "rubble-bounty.yaml"),
        "--jobs",
        "2",
    )
    c: dict[str, Any] = d["compare"]
    assert c["base"] == "base" and c["other"] == "rubble-bounty"
    return c


def test_a_paired_comparison_detects_the_rubble_bounty(capsys: Any, monkeypatch: Any) -> None:
    """A wig per completed rubble set: the points on the score track go up, and the interval
    of the paired difference leaves out 0, in a few three-player games. (With two players the
    greedy agents play otherwise under the house rule and the track's mean does not move in
    a few games: the agents complete their sets at other times.)"""
    c = _compare_rubble_bounty(capsys, monkeypatch, 8)
    assert c["score"]["track"]["diff"] > 0 and c["score"]["track"]["significant"]


@pytest.mark.slow
def test_the_rubble_bounty_is_detected_within_1000_games(capsys: Any, monkeypatch: Any) -> None:
    c = _compare_rubble_bounty(capsys, monkeypatch, 1000)
    assert c["score"]["track"]["ci95"][0] > 0


def _nothing(tmp_path: Path, form: str) -> Path:
    folder = tmp_path / "house"
    folder.mkdir()
    (folder / "nothing.yaml").write_text(NOTHING.format(id="nothing"), encoding="utf-8")
    if form == "folder":
        (folder / "nothing-either.yaml").write_text(
            NOTHING.format(id="nothing-either"), encoding="utf-8"
        )
        return folder
    return folder / "nothing.yaml"


def _all_diffs(c: dict[str, Any]) -> list[dict[str, Any]]:
    out = [
        *c["seats"],
        *c["agents"].values(),
        *c["length"].values(),
        *c["score"].values(),
        *c["sources"].values(),
        c["margin"],
        c["lead_changes"],
    ]
    out += [d for row in c["triggers"].values() for d in row.values()]
    return out


@pytest.mark.sampled(1)
@pytest.mark.parametrize("form", ["file", "folder"])
def test_a_house_rule_that_changes_nothing_gives_intervals_around_0(
    form: str, tmp_path: Path, capsys: Any, monkeypatch: Any
) -> None:
    path = _nothing(tmp_path, form)
    d = _json(
        capsys,
        monkeypatch,
        "--games",
        "4",
        "--seed",
        "2",
        "--players",
        "3",
        "--agents",
        "greedy,random",
        "--compare",
        str(path),
    )
    c = d["compare"]
    assert c["other"] == ("nothing" if form == "file" else "nothing-either+nothing")
    for diff in _all_diffs(c):
        assert diff["ci95"][0] <= 0 <= diff["ci95"][1] and not diff["significant"], diff


def test_a_house_rule_as_the_variant_and_the_base_as_the_comparison(
    capsys: Any, monkeypatch: Any
) -> None:
    d = _json(
        capsys,
        monkeypatch,
        "--games",
        "2",
        "--seed",
        "2",
        "--players",
        "2",
        "--variant",
        str(HOUSE / "rubble-bounty.yaml"),
        "--compare",
        "base",
    )
    assert list(d["rule_sets"]) == ["rubble-bounty", "base"]
    assert "rubble-bounty" in d["rule_sets"]["rubble-bounty"]["variants"]


def test_balance_with_an_engine_folder(tmp_path: Path, capsys: Any, monkeypatch: Any) -> None:
    folder = tmp_path / "out"
    folder.mkdir()
    shutil.copy(ENGINE_PATH, folder / "lisboa_engine.py")
    args = ("--games", "2", "--seed", "4", "--players", "2", "--agents", "random")
    assert _json(capsys, monkeypatch, *args, "--engine", str(folder)) == _json(
        capsys, monkeypatch, *args
    )


@pytest.mark.parametrize(
    ("extra", "code", "words"),
    [
        (("--agents", "gredy"), 2, "did you mean 'greedy'"),
        (("--agents", ","), 2, "at least one agent"),
        (("--variant", "nope"), 2, "unknown variant"),
        (("--compare", "nope"), 2, "unknown variant"),
        (("--players", "9"), 2, "players"),
        (("--compare", "no/such/house-rule.yaml"), 2, "no such file"),
        (
            ("--compare", str(HOUSE / "rubble-bounty.yaml"), "--engine", str(ENGINE_PATH)),
            2,
            "not --engine",
        ),
        (("--games", "0"), 2, ""),
        # an empty value is no folder of house rules (it was read as the current folder)
        (("--compare", ""), 2, "--compare needs a variant's name or a house rule's path"),
        (("--variant", " "), 2, "--variant needs a variant's name or a house rule's path"),
    ],
)
def test_usage_errors(
    extra: tuple[str, ...], code: int, words: str, capsys: Any, monkeypatch: Any
) -> None:
    base = {"--games": "1", "--seed": "1"}
    argv = ["balance"]
    for k, v in base.items():
        if k not in extra:
            argv += [k, v]
    got, _, err = run_cli([*argv, *extra], capsys, monkeypatch)
    assert got == code and words in err, err


@pytest.mark.parametrize(
    "text",
    [
        "kind: variant\nid: broken\ntitle: Broken\napplies: chosen\ntext: x\n"
        "source: [seed:000#endgame-scoring]\nchanges: {nope: {}}\n",
        "kind: variant\nid: broken\n: : :\n",
    ],
)
def test_a_house_rule_with_errors(text: str, tmp_path: Path, capsys: Any, monkeypatch: Any) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text(text, encoding="utf-8")
    code, out, err = run_cli(
        ["balance", "--games", "1", "--seed", "1", "--compare", str(path)], capsys, monkeypatch
    )
    assert code == 1 and "error" in err and out == ""
    # at the file the designer wrote, line and column
    assert re.search(rf"^{re.escape(str(path))}:\d+:\d+: error\[", err, re.MULTILINE), err
    assert "lisboa-balance-" not in err and "/tmp/lisboa-" not in err


@pytest.mark.parametrize(
    "extra, words",
    [
        (["--players", "0", "--seed", "1"], "0 players"),  # not "the most players"
        (["--seed", str(2**63 - 1)], "64-bit"),  # the last game's seed, before any game
    ],
)
def test_balance_refuses_what_the_engine_cannot_play(
    extra: list[str], words: str, capsys: Any, monkeypatch: Any
) -> None:
    code, out, err = run_cli(["balance", "--games", "2", "--agents", "random", *extra], capsys,
                          monkeypatch)
    assert code == 2 and out == ""
    assert err.startswith("lisboa-rules: error: ") and words in err, err
    assert "internal error" not in err


def test_a_house_rule_with_the_id_of_a_variant_of_the_rules(
    tmp_path: Path, capsys: Any, monkeypatch: Any
) -> None:
    path = tmp_path / "my-queen.yaml"
    path.write_text(NOTHING.format(id="queen"), encoding="utf-8")
    code, _, err = run_cli(
        ["balance", "--games", "1", "--seed", "1", "--compare", str(path)], capsys, monkeypatch
    )
    assert code == 1
    assert re.search(rf"^{re.escape(str(path))}:2:5: error\[duplicate-id\]", err, re.MULTILINE), err


def test_the_docs_show_the_picture_and_its_command() -> None:
    """The docs' page on the balance report shows docs/balance-report.png with the command
    tools/balance_picture.py runs to make it."""
    sys.path.insert(0, str(ROOT / "tools"))
    import balance_picture

    readme = (ROOT / "docs" / "reference" / "balance.md").read_text(encoding="utf-8")
    assert "](../balance-report.png)" in readme
    assert balance_picture.COMMAND in " ".join(readme.replace("\\\n", " ").split())
    picture = ROOT / "docs" / "balance-report.png"
    assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert picture.stat().st_size < 400_000  # a small file in the repository


def test_dask_missing_is_a_usage_error(capsys: Any, monkeypatch: Any) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "distributed" else real(name, *a),
    )
    code, _, err = run_cli(
        ["balance", "--games", "1", "--seed", "1", "--dask", "local"], capsys, monkeypatch
    )
    assert code == 2 and "--dask needs dask[distributed]" in err


def test_progress_bar_only_on_a_terminal(capsys: Any, monkeypatch: Any) -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    args = [
        "balance",
        "--games",
        "3",
        "--seed",
        "1",
        "--players",
        "2",
        "--agents",
        "random",
        "--compare",
        "queen",
    ]
    code, _, err = run_cli(args, capsys, monkeypatch)
    assert code == 0 and err == ""
    tty = Tty()
    monkeypatch.setattr("sys.stderr", tty)
    assert cli.main(args) == 0
    shown = tty.getvalue()
    assert "6/6" in shown and "game/s" in shown and "100%" in shown


@pytest.mark.parametrize(
    ("house", "source", "trigger"),
    [("goods-scoring", "score.goods", None), ("wig-race", None, "game-end.wigs")],
)
def test_a_house_rule_that_adds_a_source_or_a_trigger(
    house: str, source: str | None, trigger: str | None, capsys: Any, monkeypatch: Any
) -> None:
    """What a house rule adds is reported on its side and compared (0 on the base side)."""
    d = _json(
        capsys,
        monkeypatch,
        "--games",
        "2",
        "--seed",
        "1",
        "--players",
        "3",
        "--agents",
        "random",
        "--compare",
        str(HOUSE / f"{house}.yaml"),
    )
    base, other, c = d["rule_sets"]["base"], d["rule_sets"][house], d["compare"]
    if source is not None:
        assert source in other["sources"] and source not in base["sources"]
        assert c["sources"][source]["base"] == 0
    if trigger is not None:
        assert trigger in other["triggers"]["game"] and trigger not in base["triggers"]["game"]
        assert trigger in c["triggers"]["game"]


def test_the_report_does_not_depend_on_the_hash_seed(tmp_path: Path) -> None:
    """Workers on other machines (Dask) hash strings otherwise: the games must not care."""
    import os
    import subprocess

    outs = []
    for hash_seed in ("1", "2"):
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "lisboa_rules",
                "balance",
                "--games",
                "2",
                "--seed",
                "3",
                "--players",
                "3",
                "--agents",
                "greedy,random,mcts",
                "--iterations",
                "8",
                "--format",
                "json",
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=False,
            timeout=600,
            env={**os.environ, "PYTHONPATH": str(ROOT), "PYTHONHASHSEED": hash_seed},
        )
        assert done.returncode == 0, done.stderr
        outs.append(done.stdout)
    assert outs[0] == outs[1]


PACE = ROOT / "tests" / "cases" / "house-more" / "four-player-pace.yaml"  # applies: {players: [4]}


def test_a_house_rule_by_player_count_is_not_played_on_the_base_side(
    capsys: Any, monkeypatch: Any
) -> None:
    """A house rule that applies by itself at 4 players must not join the base rule set it is
    compared with: the base side plays the rules alone."""
    d = _json(
        capsys, monkeypatch, "--games", "2", "--seed", "1", "--players", "4", "--agents",
        "random", "--compare", str(PACE),
    )
    assert d["rule_sets"]["base"]["variants"] == []
    assert d["rule_sets"]["four-player-pace"]["variants"] == ["four-player-pace"]
    # the house rule starts everyone with 12 réis and ends the game sooner: the games differ
    c = d["compare"]
    assert any(c["length"][k]["diff"] != 0 for k in ("turns", "moves")), c["length"]


def test_a_house_rule_by_player_count_at_another_count_says_which(
    capsys: Any, monkeypatch: Any
) -> None:
    code, out, err = run_cli(
        ["balance", "--games", "1", "--seed", "1", "--players", "3", "--agents", "random",
         "--compare", str(PACE)], capsys, monkeypatch,
    )
    assert code == 2 and out == ""
    assert "four-player-pace" in err and "--players 4" in err and "(4,)" not in err, err


def test_two_versions_of_a_house_rule_are_compared(
    tmp_path: Path, capsys: Any, monkeypatch: Any
) -> None:
    """The old and the new version of one house rule (the same id, the same values changed)
    are two rule sets, never played together: no conflict between them."""
    old = HOUSE / "rubble-bounty.yaml"
    new = tmp_path / "new" / "rubble-bounty.yaml"
    new.parent.mkdir()
    new.write_text(old.read_text(encoding="utf-8").replace("{gain: {wigs: 1}", "{gain: {wigs: 3}"),
                   encoding="utf-8")
    d = _json(
        capsys, monkeypatch, "--games", "2", "--seed", "1", "--players", "3", "--agents",
        "random", "--variant", str(old), "--compare", str(new),
    )
    names = list(d["rule_sets"])
    assert len(names) == 2 and names[0] == "rubble-bounty" and names[1] != names[0]
    assert str(new) in names[1]
    assert d["compare"]["score"]["track"]["diff"] > 0  # 3 wigs a set instead of 1


def test_two_house_rules_that_change_the_same_value_are_compared(
    tmp_path: Path, capsys: Any, monkeypatch: Any
) -> None:
    old = HOUSE / "rubble-bounty.yaml"
    new = tmp_path / "bigger-bounty.yaml"
    new.write_text(
        old.read_text(encoding="utf-8")
        .replace("\nid: rubble-bounty\n", "\nid: bigger-bounty\n")  # its hook keeps its id
        .replace("{gain: {wigs: 1}", "{gain: {wigs: 3}"),
        encoding="utf-8",
    )
    d = _json(
        capsys, monkeypatch, "--games", "2", "--seed", "1", "--players", "3", "--agents",
        "random", "--variant", str(old), "--compare", str(new),
    )
    assert list(d["rule_sets"]) == ["rubble-bounty", "bigger-bounty"]
    assert d["compare"]["score"]["track"]["diff"] > 0


def test_a_house_rule_named_base_is_refused(tmp_path: Path, capsys: Any, monkeypatch: Any) -> None:
    """'base' names the rules without variants: a house rule of that id would be reported as
    a second 'base'."""
    path = tmp_path / "mine.yaml"
    path.write_text(NOTHING.format(id="base"), encoding="utf-8")
    code, out, err = run_cli(
        ["balance", "--games", "1", "--seed", "1", "--compare", str(path)], capsys, monkeypatch
    )
    assert code == 2 and out == "" and "cannot be named 'base'" in err, err


def test_a_house_rule_nested_too_deeply_is_a_located_error(
    tmp_path: Path, capsys: Any, monkeypatch: Any
) -> None:
    """The file is read for its id before it is compiled: by the rules' own loader, so a
    hostile file is the compiler's located error, not a crash of that first read."""
    path = tmp_path / "deep.yaml"
    path.write_text("kind: variant\nid: deep\nx: " + "[" * 20000 + "]" * 20000 + "\n",
                    encoding="utf-8")
    code, out, err = run_cli(
        ["balance", "--games", "1", "--seed", "1", "--compare", str(path)], capsys, monkeypatch
    )
    assert code == 1 and out == "" and "internal error" not in err
    assert re.search(rf"^{re.escape(str(path))}:\d+:\d+: error\[nesting-too-deep\]", err,
                     re.MULTILINE), err


@pytest.mark.parametrize("where", ["folder", "missing-folder", "empty", "file-as-folder"])
def test_an_unwritable_out_is_refused_before_the_games(
    where: str, tmp_path: Path, capsys: Any, monkeypatch: Any
) -> None:
    """--out that can never be written (a folder, a path under a missing folder or under a
    file, an empty path) was found out only after every game was played."""
    (tmp_path / "a-file").write_text("x", encoding="utf-8")
    out = {"folder": str(tmp_path), "missing-folder": str(tmp_path / "no" / "report.json"),
           "empty": "", "file-as-folder": str(tmp_path / "a-file" / "report.json")}[where]

    def no_game(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a game was played")

    monkeypatch.setattr(runner, "play_game", no_game)
    code, stdout, err = run_cli(
        ["balance", "--games", "2", "--seed", "1", "--agents", "random", "--format", "json",
         "--out", out], capsys, monkeypatch,
    )
    assert code == 2 and stdout == "" and "internal error" not in err, err
    assert re.search(r"^lisboa-rules( balance)?: error: .*--out", err, re.MULTILINE), err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file"]


def test_out_writes_the_report(tmp_path: Path, capsys: Any, monkeypatch: Any) -> None:
    out = tmp_path / "report.json"
    code, stdout, _ = run_cli(
        ["balance", "--games", "1", "--seed", "1", "--players", "2", "--agents", "random",
         "--format", "json", "--out", str(out)], capsys, monkeypatch,
    )
    assert code == 0 and stdout == "" and json.loads(out.read_text(encoding="utf-8"))["run"]


def test_a_dask_address_that_is_no_address(capsys: Any, monkeypatch: Any) -> None:
    """It was an internal error (ValueError: missing port number), after the engine was
    loaded; an unreachable scheduler the same (OSError: timed out)."""
    optional.module("distributed", "dask")
    code, out, err = run_cli(
        ["balance", "--games", "1", "--seed", "1", "--players", "2", "--agents", "random",
         "--dask", "not an address"], capsys, monkeypatch,
    )
    assert code == 2 and out == "" and "internal error" not in err, err
    assert err.startswith("lisboa-rules: error: ") and "not an address" in err, err


F_KEYS = ["mean", "sd", "q05", "q50", "q95"]
D_KEYS = ["base", "other", "diff", "ci95", "significant"]
NAMED = {"rule_sets", "agents", "versus", "versus-row", "sources", "period", "game"}


def _static_keys(value: Any, parent: str = "", out: list[str] | None = None) -> list[str]:
    """The keys of a report in the order they are written, depth first: a dict keyed by names
    or ids (NAMED: rule sets, agents, each row of `versus`, sources, triggers) shows only its
    first entry, a list its first item, and F and D figures (and a seat's D) stand as one
    value, as the docs write them."""
    out = [] if out is None else out
    if isinstance(value, list):
        if value:
            _static_keys(value[0], parent, out)
    elif isinstance(value, dict):
        keys = list(value)
        if parent in NAMED:
            if keys:
                _static_keys(value[keys[0]], "versus-row" if parent == "versus" else "", out)
        elif keys[1:] == D_KEYS:  # a seat's paired differences: {"seat": 0, D...}
            out.append(keys[0])
        elif keys not in (F_KEYS, D_KEYS):
            for k in keys:
                out.append(k)
                _static_keys(value[k], k, out)
    return out


def test_the_docs_document_the_json_report_as_it_is(capsys: Any, monkeypatch: Any) -> None:
    """The '`--format json` is stable' block of docs/reference/balance.md lists every key, in
    the order written."""
    text = (ROOT / "docs" / "reference" / "balance.md").read_text(encoding="utf-8")
    start = text.index("`--format json` is stable")
    block = text[text.index("```", start) + 3 : text.index("```", text.index("```", start) + 3)]
    documented = re.findall(r'"([a-z_0-9]+)"\s*:', block)
    d = _json(capsys, monkeypatch, "--games", "2", "--seed", "1", "--players", "2", "--agents",
              "random,greedy", "--compare", "queen")
    assert documented == _static_keys(d)


def test_comparing_a_rule_set_with_itself_under_another_name_is_noted(
    capsys: Any, monkeypatch: Any
) -> None:
    """two-player applies by itself at 2 players: '--compare two-player' there plays the base
    rule set twice, and the report (all differences 0) read as 'the variant changes nothing'."""
    code, out, err = run_cli(
        ["balance", "--games", "1", "--seed", "1", "--players", "2", "--agents", "random",
         "--format", "json", "--compare", "two-player"], capsys, monkeypatch,
    )
    assert code == 0 and json.loads(out)["compare"]["other"] == "two-player"
    assert "note:" in err and "the same rule set" in err and "two-player" in err, err
