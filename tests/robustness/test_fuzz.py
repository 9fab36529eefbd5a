"""Fuzzing: hostile rules files through the whole build, hostile moves and saved games
through the generated engine.

Build fuzzing (`tools.fuzz`): each case mutates a copy of the real rules/ and runs
`cli.main(["build", ...])` in-process against an output folder that already holds a build.
A case passes when the build exits 0, or exits 1 with located diagnostics in the documented
format (known codes, positions inside the files), no traceback, and the output folder
untouched. The complete suite (--slow, CI) runs LISBOA_FUZZ_CASES (default 500; 50 in the
default run) cases of seed LISBOA_FUZZ_SEED (default
0) in batches; a long run is `python3 -m tools.fuzz --cases 20000 --seed 1`.

Engine fuzzing: random illegal moves leave the state unchanged and raise only IllegalMove;
saved states broken against the state schema raise only StateError, with a path.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import os
import random
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from conftest import sized

from lisboa_rules.core.diagnostics import Diagnostic, render_text
from lisboa_rules.core.source import Span
from lisboa_rules.front.loader import load_text
from lisboa_rules.front.validate import validate
from tools import fuzz

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "rules"
ENGINE = ROOT / "generated" / "lisboa_engine.py"

CASES = int(os.environ.get("LISBOA_FUZZ_CASES", str(sized(50, 500))))  # 500: --slow
SEED = int(os.environ.get("LISBOA_FUZZ_SEED", "0"))
BATCHES = 10

# Problems found by the fuzzer in files this suite's owner does not maintain, each with the
# bug it shows. A failing case with a problem matching one of these is an expected failure.
# Remove an entry when the bug is fixed: the test then fails loudly if it comes back.
KNOWN_BUGS: dict[str, str] = {}  # pattern -> the bug it names; empty: none known


# --- build fuzzing ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def runner(tmp_path_factory: pytest.TempPathFactory) -> Iterator[fuzz.Runner]:
    old = os.environ.pop("LISBOA_RULES_DEBUG", None)
    yield fuzz.Runner(RULES, tmp_path_factory.mktemp("fuzz"))
    if old is not None:
        os.environ["LISBOA_RULES_DEBUG"] = old


SUMMARY = fuzz.Summary()


def judge(outcomes: list[fuzz.Outcome], replay: str) -> None:
    """Fail on any problem that is not a known bug; xfail naming the known bugs hit."""
    unexpected: list[str] = []
    known: set[str] = set()
    for outcome in outcomes:
        if outcome.ok:
            continue
        text = "\n".join([*outcome.signatures, outcome.stderr])
        bugs = [why for pattern, why in KNOWN_BUGS.items() if re.search(pattern, text)]
        if bugs:
            known.update(bugs)
            continue
        tail = (outcome.stderr + outcome.traceback).splitlines()[-12:]
        unexpected.append(f"{outcome.case.label}\n" + "".join(
            f"    {sig}\n" for sig in outcome.signatures) + "".join(f"    | {ln}\n" for ln in tail))
    assert not unexpected, f"{len(unexpected)} problems ({replay}):\n" + "\n".join(unexpected)
    if known:
        pytest.xfail("known bugs: " + "; ".join(sorted(known)))


@pytest.mark.parametrize("batch", range(BATCHES))
def test_fuzzed_rules_build_or_fail_cleanly(runner: fuzz.Runner, batch: int) -> None:
    size = -(-CASES // BATCHES)
    outcomes = []
    for index in range(batch * size, min(CASES, (batch + 1) * size)):
        outcome = runner.run(runner.case(SEED, index))
        SUMMARY.add(outcome)
        outcomes.append(outcome)
    judge(outcomes, f"replay: python3 -m tools.fuzz --seed {SEED} --case INDEX")


def test_minimal_rules_files_build_or_fail_cleanly(runner: fuzz.Runner) -> None:
    """Each rules file with every key its schema lets one leave out left out (the sweep
    `python3 -m tools.fuzz --sweep` also leaves each one out on its own)."""
    cases = fuzz.sweep_cases(runner.base, singles=False)
    assert len(cases) >= 5
    judge([runner.run(case) for case in cases], "replay: python3 -m tools.fuzz --sweep")


@pytest.mark.slow  # with the complete run's 500 cases, in one worker
def test_the_fuzzer_reaches_every_stage() -> None:
    """Over the whole run the mutations got past loading into schema, model and check errors,
    and some mutated rules still built (otherwise the fuzzer would only test the loader)."""
    if SUMMARY.cases < CASES:
        pytest.skip("needs the whole fuzz run (run the module, not one test)")
    by_stage = {
        "load": {"yaml-syntax", "duplicate-key", "not-utf8", "yaml-alias", "nesting-too-deep"},
        "schema": {"schema-type", "schema-required", "schema-unknown-key", "schema-pattern"},
        "model": {"unknown-reference", "expr-syntax", "unknown-name", "duplicate-id"},
    }
    for stage, wanted in by_stage.items():
        assert wanted & set(SUMMARY.codes), f"no {stage} errors in {CASES} cases"
    assert SUMMARY.built >= CASES // 20, "hardly any mutated rules built"
    assert SUMMARY.rejected >= CASES // 2
    assert set(SUMMARY.mutations) == set(fuzz.MUTATORS), "some mutators never ran"


@pytest.mark.parametrize("name", sorted(fuzz.MUTATORS))
def test_every_mutator_changes_the_rules(name: str) -> None:
    base = fuzz.read_rules(RULES)
    changed = sum(fuzz.make_case(base, 1, i, only=[name]).files != base for i in range(12))
    assert changed >= 9, f"{name} changed the rules in only {changed} of 12 cases"


@pytest.mark.sampled(1)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_param_edge_values_build_or_fail_cleanly(runner: fuzz.Runner, seed: int) -> None:
    """Params, cost examples and declared ranges at 0, negative, huge, the schema's limits and
    at and just past their declared ranges: located errors (the range checks), never a crash."""
    outcomes = [runner.run(runner.case(seed, i, only=["param-edges"])) for i in range(15)]
    judge(outcomes, f"replay: python3 -m tools.fuzz --seed {seed} --only param-edges")
    assert sum(o.exit_code == 1 for o in outcomes) >= 3


def test_param_edges_try_zero_negative_huge_and_the_declared_ranges() -> None:
    base = fuzz.read_rules(RULES)
    said = " ".join(
        m for i in range(sized(80, 300))
        for m in fuzz.make_case(base, 5, i, only=["param-edges"]).mutations
    )
    for value in ("-> 0", "-> -1", "-> 1000000000000", "-> -1001", "-> 1001"):
        assert value in said, value
    # The triggers' `sets` are declared [1, game.rubble.max_sets] (5): the values at and just
    # past that range, which are not among the fixed edge values, are tried.
    sets = set(re.findall(r"triggers\.\d\.params\.sets -> (-?\d+)", said))
    assert {"4", "5", "6"} & sets, sets
    assert "ranges." in said and "range ->" in said  # the declared ranges are mutated too


@pytest.mark.sampled(6)
@pytest.mark.parametrize("hostile", fuzz.HOSTILE_FILE_NAMES)
@pytest.mark.parametrize("target", ["scoring.yaml", "variants/queen.yaml"])
def test_hostile_file_names_build_or_fail_cleanly(
    runner: fuzz.Runner, hostile: str, target: str
) -> None:
    """A rules file named with quotes, newlines, comment closers, markup, bidi controls, unicode
    or a very long name: the build succeeds or fails with located diagnostics, runs nothing
    (no `pwned` file appears) and leaves the output alone on failure."""
    files = dict(runner.base)
    folder = target.rpartition("/")[0]
    files[f"{folder}/{hostile}" if folder else hostile] = files.pop(target)
    case = fuzz.Case(0, 0, (f"rename {target} -> {hostile!r}",), files, ("file-names",))
    judge([runner.run(case)], f"rename {target} to {hostile!r}")


def test_cases_are_reproducible() -> None:
    base = fuzz.read_rules(RULES)
    for i in range(20):
        a, b = fuzz.make_case(base, 7, i), fuzz.make_case(base, 7, i)
        assert (a.mutations, dict(a.files)) == (b.mutations, dict(b.files))
    assert fuzz.make_case(base, 7, 0).files != fuzz.make_case(base, 8, 0).files


def test_the_checker_catches_what_it_should(tmp_path: Path) -> None:
    """The verdict itself: a traceback, an unknown code, a position outside the file, a
    multi-line message and a silent exit 1 are all problems."""
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "a.yaml").write_text("a: 1\nb: 2\n", encoding="utf-8")

    def verdict(code: int, err: str, out: str = "") -> list[str]:
        return fuzz.check_output(code, out, err, tmp_path)

    ok = "rules/a.yaml:2:1: error[duplicate-key]: x\nlisboa-rules: found 1 error\n"
    assert verdict(1, ok) == []
    assert verdict(0, "lisboa-rules: out/ is up to date\n") == []
    assert verdict(2, "lisboa-rules: internal error: KeyError: 'x'\n")
    assert verdict(1, "Traceback (most recent call last):\n")
    assert verdict(1, "rules/a.yaml:2:1: error[no-such-code]: x\n")
    assert verdict(1, "rules/a.yaml:9:1: error[duplicate-key]: x\n")
    assert verdict(1, "rules/a.yaml:2:9: error[duplicate-key]: x\n")
    assert verdict(1, "rules/nope.yaml:1:1: error[duplicate-key]: x\n")
    assert verdict(1, "rules/a.yaml:1:1: error[duplicate-key]: x\nsecond line\n")
    assert verdict(1, "lisboa-rules: error[duplicate-key]: x\n")  # needs a position
    assert verdict(1, "lisboa-rules: found 1 error\n")  # exit 1 without an error
    assert verdict(0, "rules/a.yaml:1:1: error[duplicate-key]: x\n")


def test_a_hang_is_a_problem(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from lisboa_rules import pipeline

    def forever(*args: Any, **kwargs: Any) -> Any:
        while True:
            pass

    monkeypatch.setattr(pipeline, "compile_rules", forever)
    code, _, _, tb = fuzz.run_build(["build", "--rules", str(tmp_path)], timeout=0.2)
    assert code is None and tb.startswith("hang")


# --- special files in the rules folder -----------------------------------------------------------


@pytest.mark.skipif(sys.platform == "win32", reason="FIFOs and symlinks")
def test_special_files_named_yaml_are_refused_not_followed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    rules = tmp_path / "rules"
    import shutil

    shutil.copytree(RULES, rules)
    os.mkfifo(rules / "fifo.yaml")  # opening it without O_NONBLOCK would wait forever
    (rules / "zero.yaml").symlink_to("/dev/zero")  # endless bytes
    (rules / "loop.yaml").symlink_to("loop.yaml")  # ELOOP (crashed display_path before)
    (rules / "broken.yaml").symlink_to("nowhere.yaml")
    (rules / "dir.yaml").mkdir()  # a folder is not a rules file
    monkeypatch.chdir(tmp_path)
    code, out, err, tb = fuzz.run_build(["build", "--rules", "rules", "--out", "out"], timeout=20)
    assert (code, tb) == (1, "")
    assert fuzz.check_output(1, out, err, tmp_path) == []
    assert sorted(re.findall(r"^rules/(\w+)\.yaml:1:1: error\[unreadable-file\]", err, re.M)) == [
        "broken", "fifo", "loop", "zero"]
    assert not (tmp_path / "out").exists()


# --- regressions: the problems the fuzzer found, as minimal cases --------------------------------


def test_syntax_error_at_the_end_of_a_file_without_final_newline_points_inside_it() -> None:
    """libyaml puts the end-of-stream error on a line that does not exist."""
    _, diags = load_text("a: [1, 2", "x.yaml")
    assert [(d.code, d.span.line, d.span.col) for d in diags if d.span] == [("yaml-syntax", 1, 9)]
    assert all(r.span is None or r.span.line == 1 for d in diags for r in d.related)


@pytest.mark.parametrize("brk", ["\r", "\x85", "\u2028", "\u2029"])
def test_positions_count_lines_like_editors_with_odd_line_breaks(brk: str) -> None:
    """PyYAML breaks lines at CR, NEL, LS and PS; editors and `grep -n` count LF only."""
    text = f"a: [1,{brk}2]\nb: 2\nb: 3\n"
    _, diags = load_text(text, "x.yaml")
    assert [(d.code, d.span.line, d.span.col) for d in diags if d.span] == [
        ("duplicate-key", 3, 1)]


def test_a_leading_bom_does_not_shift_columns() -> None:
    _, diags = load_text("\ufeffa: &x 1\n", "x.yaml")
    assert [(d.code, d.span.line, d.span.col) for d in diags if d.span] == [("yaml-alias", 1, 4)]


@pytest.mark.parametrize("number", ["1" * 5000, "0x" + "f" * 5000, "-" + "9" * 4400])
def test_integers_too_long_for_python_are_a_located_error(number: str) -> None:
    _, diags = load_text(f"kind: game\nperiods: {number}\n", "x.yaml")
    assert [(d.code, d.span.line, d.span.col) for d in diags if d.span] == [("yaml-syntax", 2, 10)]


@pytest.mark.parametrize(
    ("value", "shown"),
    [("2.0", "number 2.0"), ("1e308", "number 1e+308"), (".inf", "infinite number .inf"),
     (".nan", "not-a-number .nan"), ("true", "boolean true")],
)
def test_floats_are_not_integers(value: str, shown: str) -> None:
    """JSON Schema's `integer` accepts 2.0 and 1e308; they then crashed the engine back end."""
    doc, _ = load_text(f"kind: game\nperiods: {value}\n", "x.yaml")
    assert doc is not None
    found = [d for d in validate(doc) if d.code == "schema-type"]
    assert [(d.span.line if d.span else 0, d.message) for d in found] == [
        (2, f"expected an integer, got {shown} at periods")]


def test_a_float_in_a_variant_overlay_is_a_diagnostic_not_a_crash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found by the fuzzer (seed 2 case 1034): `lots: {cloth: 1e308}` in a variant."""
    import shutil

    shutil.copytree(RULES, tmp_path / "rules")
    variant = tmp_path / "rules" / "variants" / "two-player.yaml"
    text = variant.read_text(encoding="utf-8")
    assert "cloth: 5}" in text
    variant.write_text(text.replace("cloth: 5}", "cloth: 1e308}"), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    code, out, err, tb = fuzz.run_build(["build", "--rules", "rules", "--out", "out"])
    assert (code, tb) == (1, "")
    assert "error[schema-type]" in err and "1e+308" in err
    assert fuzz.check_output(1, out, err, tmp_path) == []


@pytest.mark.parametrize("nasty", ["a\nb", "a\rb", "a\x1b[2Jb", "a\u202eb", "a\u2028b", "a\x00b"])
def test_diagnostics_quoting_data_stay_on_one_line(nasty: str) -> None:
    """A key or value holding a newline or a terminal escape cannot forge or hide lines."""
    diag = Diagnostic("schema-unknown-key", f"unknown key '{nasty}'", Span.point("x.yaml", 3))
    text = render_text([diag])
    assert text.count("\n") == 1 and text.startswith("x.yaml:3:1: error[schema-unknown-key]: ")
    assert not re.search("[\x00-\x1f\x7f-\x9f\u2028\u202e]", text.rstrip("\n"))


def _run_ascii(cwd: Path, *argv: str) -> subprocess.CompletedProcess[bytes]:
    """Run the CLI with a stdout that can only encode ASCII."""
    env = {**os.environ, "PYTHONIOENCODING": "ascii",
           "PYTHONPATH": os.pathsep.join([str(ROOT), *sys.path])}
    env.pop("LISBOA_RULES_DEBUG", None)
    return subprocess.run([sys.executable, "-m", "lisboa_rules", *argv], cwd=cwd, env=env,
                          capture_output=True, check=False)


def test_json_diagnostics_survive_a_stdout_that_is_not_utf8(tmp_path: Path) -> None:
    """`--format json` printed 'cl\u00e9' raw and crashed (exit 2) on an ASCII stdout."""
    import shutil

    shutil.copytree(RULES, tmp_path / "rules")
    with (tmp_path / "rules" / "game.yaml").open("a", encoding="utf-8") as fh:
        fh.write("clé: 1\n")
    proc = _run_ascii(tmp_path, "validate", "--format", "json")
    assert proc.returncode == 1, proc.stderr
    (item,) = json.loads(proc.stdout)
    assert item["code"] == "schema-unknown-key" and "clé" in item["message"]


def test_schema_and_diff_survive_a_stdout_that_is_not_utf8(tmp_path: Path) -> None:
    import shutil

    shutil.copytree(RULES, tmp_path / "rules")
    assert _run_ascii(tmp_path, "schema").returncode == 0


# --- the generated engine: illegal moves and saved games ----------------------------------------


@pytest.fixture(scope="module")
def engine() -> ModuleType:
    spec = importlib.util.spec_from_file_location("lisboa_engine_fuzzed", ENGINE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while being created
    spec.loader.exec_module(module)
    return module


def _games(engine: ModuleType, count: int, seed: int) -> Iterator[Any]:
    """Game states along random legal playouts (a few per game)."""
    rng = random.Random(seed)
    for g_index in range(count):
        players = rng.choice([2, 3, 4])
        game = engine.new_game(players, seed=g_index)
        for step in range(rng.randrange(0, 60)):
            moves = engine.legal_moves(game)
            if not moves:
                break
            game = engine.apply_move(game, rng.choice(moves))
            if step % 15 == 0:
                yield game
        yield game


def _random_move(engine: ModuleType, rng: random.Random, game: Any) -> Any:
    """A move with random, mostly wrong, fields."""
    rs = game.rs
    cards = [c for p in game.players for c in p.hand] or [1]
    kinds = ["portfolio", "trade", "visit", "sponsor", "discard", "pass", "follow", "decline",
             "draw", "marker", "hand-discard", "teleport", ""]
    nobles = [n.id for n in rs.nobles]
    return engine.Move(
        kind=rng.choice(kinds),
        player=rng.choice([game.actor, game.actor, -1, len(game.players), 99, 0]),
        card=rng.choice([None, -1, 0, 10**9, *rng.sample(cards, min(3, len(cards)))]),
        state_action=rng.choice([None, "nowhere", *rs.state_actions]),
        noble_action=rng.random() < 0.5,
        business=rng.choice([None, "nowhere", *rs.businesses]),
        decrees=tuple(rng.sample([*rs.decrees, "nowhere"], rng.randrange(3))),
        plan=rng.choice([None, "nowhere", *rs.plans]),
        favor=rng.choice([None, "nowhere", *nobles]),
        good=rng.choice([None, "nowhere", *rs.businesses]),
        pile=rng.choice([None, "nowhere", *rs.piles]),
        cards=tuple(rng.sample(cards, min(len(cards), rng.randrange(4)))),
        noble=rng.choice([None, "nowhere", *nobles]),
    )


def test_random_illegal_moves_change_nothing_and_raise_only_illegal_move(
    engine: ModuleType,
) -> None:
    rng = random.Random(6)
    tried = refused = 0
    for game in _games(engine, 12, seed=6):
        before = engine.dumps(game)
        legal = {json.dumps(m.to_json(), sort_keys=True) for m in engine.legal_moves(game)}
        for _ in range(25):
            move = _random_move(engine, rng, game)
            tried += 1
            try:
                after = engine.apply_move(game, move)
            except engine.IllegalMove as exc:
                refused += 1
                assert exc.rule in engine.RULE_TEXT, exc.rule
                assert exc.reason
            else:
                assert json.dumps(move.to_json(), sort_keys=True) in legal or \
                    engine.explain_move(game, move) is None
                assert engine.check_invariants(after) == []
            assert engine.dumps(game) == before, f"{move} changed the state it was given"
    assert tried >= 500 and refused >= tried // 2


def _saved(engine: ModuleType) -> list[dict[str, Any]]:
    return [engine.to_json(g) for g in _games(engine, 6, seed=11)]


def _paths(data: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    yield path, data
    if isinstance(data, dict):
        for k, v in data.items():
            yield from _paths(v, (*path, k))
    elif isinstance(data, list):
        for i, v in enumerate(data):
            yield from _paths(v, (*path, i))


def _break(rng: random.Random, data: Any) -> tuple[Any, str]:
    """One schema-breaking change to a saved state (or one it may survive)."""
    data = copy.deepcopy(data)
    nodes = [(p, v) for p, v in _paths(data) if p]
    path, value = rng.choice(nodes)
    parent = data
    for key in path[:-1]:
        parent = parent[key]
    how = rng.choice(["type", "missing", "unknown", "negative", "card", "huge", "null", "id"])
    if how == "missing" and isinstance(parent, dict):
        del parent[path[-1]]
    elif how == "unknown":
        target = parent if isinstance(parent, dict) else data
        target["bogus"] = 1
    elif how == "negative":
        parent[path[-1]] = -rng.randint(1, 5)
    elif how == "card":
        parent[path[-1]] = [99999] if isinstance(value, list) else 99999
    elif how == "huge":
        parent[path[-1]] = 10**30
    elif how == "null":
        parent[path[-1]] = None
    elif how == "id":
        parent[path[-1]] = "nowhere" if not isinstance(value, list) else ["nowhere"]
    else:
        parent[path[-1]] = rng.choice(["1", 1.5, [], {}, True, "x" * 3])
    return data, f"{how} at {'.'.join(map(str, path))}"


def test_broken_saved_games_raise_state_error_with_a_path(engine: ModuleType) -> None:
    rng = random.Random(12)
    saved = _saved(engine)
    errors = accepted = 0
    for _ in range(600):
        data, what = _break(rng, rng.choice(saved))
        try:
            game = engine.from_json(data)
        except engine.StateError as exc:
            errors += 1
            assert exc.path.startswith("$"), (what, exc)
            assert str(exc).startswith(exc.path)
        except Exception as exc:  # pragma: no cover - the failure message says what broke
            pytest.fail(f"{what}: {type(exc).__name__}: {exc}")
        else:
            accepted += 1
            assert engine.check_invariants(game) == [], what
            assert engine.to_json(game) == data, f"{what}: accepted but not kept as given"
    assert errors >= 400, f"only {errors} of 600 broken states were refused"


GARBAGE_JSON = {
    "empty": "",
    "open-brace": "{",
    "list": "[]",
    "null": "null",
    "number": "1",
    "string": '"game"',
    "empty-object": "{}",
    "no-players": '{"variants": []}',
    "bom": "\ufeff{}",
    "nan": "NaN",
    "infinity": '{"a": Infinity}',
    "players-not-objects": '{"players": [' + "[]," * 5 + "[]]}",
    "nul": "\x00",
    "variants-string": '{"variants": "two-player"}',
    "deep": "[" * 100_000,
}


@pytest.mark.parametrize("text", list(GARBAGE_JSON.values()), ids=list(GARBAGE_JSON))
def test_garbage_json_raises_state_error(engine: ModuleType, text: str) -> None:
    with pytest.raises(engine.StateError) as info:
        engine.loads(text)
    assert info.value.path.startswith("$")


def test_a_saved_game_survives_the_round_trip(engine: ModuleType) -> None:
    for data in _saved(engine):
        text = json.dumps(data)
        assert engine.to_json(engine.loads(text)) == data


def test_a_cost_example_missing_a_value_is_a_located_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    shutil.copytree(RULES, tmp_path / "rules")
    court = tmp_path / "rules" / "court.yaml"
    text = court.read_text(encoding="utf-8")
    assert "    example: {cost: 4, influence: 1}\n" in text
    line = text[: text.index("    example: {cost: 4, influence: 1}")].count("\n") + 1
    court.write_text(text.replace("example: {cost: 4, influence: 1}", "example: {influence: 1}"),
                     encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    code, out, err, tb = fuzz.run_build(["build", "--rules", "rules", "--out", "out"])
    assert (code, tb) == (1, "")
    assert fuzz.check_output(1, out, err, tmp_path) == []
    assert f"rules/court.yaml:{line}:" in err


def test_a_null_item_added_by_a_variant_is_a_located_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    shutil.copytree(RULES, tmp_path / "rules")
    variant = tmp_path / "rules" / "variants" / "two-player.yaml"
    text = variant.read_text(encoding="utf-8").rstrip("\n") + "\n  components:\n    cards: [~]\n"
    variant.write_text(text, encoding="utf-8")
    line = text.count("\n")
    monkeypatch.chdir(tmp_path)
    code, out, err, tb = fuzz.run_build(["build", "--rules", "rules", "--out", "out"])
    assert (code, tb) == (1, "")
    assert fuzz.check_output(1, out, err, tmp_path) == []
    assert f"rules/variants/two-player.yaml:{line}:" in err
