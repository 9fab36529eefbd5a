"""Shared fixtures: the generated engine as a module, and helpers to build game states.

The helpers move components from wherever they are (decks, display, supply) instead of
creating them, so a constructed state still passes the engine's invariants (cards, Decrees,
Plans, Royal Favor tiles and Officials are conserved).
"""

from __future__ import annotations

import fcntl
import importlib.util
import json
import os
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import build_memo
import pytest

# Importing generated/lisboa_engine.py must not leave __pycache__/ in the golden record.
sys.dont_write_bytecode = True
# No test reads or writes compiled templates in ~/.cache (lisboa_rules/outputs/cache.py): the
# cache is off unless a test turns it on for a folder of its own
# (tests/outputs/test_build_cache.py).
# Subprocesses inherit it.
os.environ["LISBOA_RULES_CACHE_DIR"] = "off"
# the CLI's builds in tests check other things than play: the backstop's games (--play) are
# tested by tests/cli/test_backstop.py, which asks for them
os.environ.setdefault("LISBOA_PLAY", "0")

ROOT = Path(__file__).resolve().parent.parent
ENGINE_PATH = ROOT / "generated" / "lisboa_engine.py"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--slow", action="store_true", default=False,
        help="the complete suite: every case of every test, the long runs and the compiled "
             "engine (CI runs it; LISBOA_SLOW=1 does the same)",
    )
    parser.addoption(
        "--record-durations", action="store_true", default=False,
        help="write each test's time to tests/durations.json, from which the default run "
             "keeps each file's quickest cases: with --slow the complete run's times, "
             "without it what each test of the default run took there",
    )
    parser.addoption(
        "--no-build-memo", action="store_true", default=False,
        help="compile the rules for every test that builds them, as the complete suite does "
             "(tests/build_memo.py; LISBOA_BUILD_MEMO=off does the same)",
    )


# The default run answers in minutes: a test marked `slow` runs only in the complete suite, a
# parametrized test marked `sampled(n)` runs n of its cases (spread over its list: the first,
# the last, evenly between), and a seeded test sizes its runs with `sized(quick, complete)`.
# The complete suite (`--slow`) runs every case of every test at its complete size.
COMPLETE = os.environ.get("LISBOA_SLOW") == "1"


def pytest_configure(config: pytest.Config) -> None:
    global COMPLETE
    COMPLETE = bool(config.getoption("--slow")) or os.environ.get("LISBOA_SLOW") == "1"
    # The memo serves the default run; the complete suite compiles every time, so CI shows
    # that no test depends on it.
    if not (COMPLETE or config.getoption("--no-build-memo")
            or os.environ.get("LISBOA_BUILD_MEMO") == "off"):
        from lisboa_rules import pipeline
        from lisboa_rules.outputs import cache

        build_memo.install(pipeline, cache, pytest.MonkeyPatch)


def pytest_sessionfinish(session: pytest.Session) -> None:
    out = getattr(session.config, "workeroutput", None)  # an xdist worker: tell the controller
    if out is not None:
        out["build_memo"] = dict(build_memo.STATS)
    _write_durations(session.config)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    for k, v in getattr(node, "workeroutput", {}).get("build_memo", {}).items():
        build_memo.STATS[k] += v


def pytest_terminal_summary(terminalreporter: Any) -> None:
    s = build_memo.STATS
    if s["hits"] or s["misses"]:
        terminalreporter.write_line(
            f"build memo: {s['hits']} compiles remembered, {s['misses']} made, "
            f"{s['bypassed']} not memoized")


def sized(quick: int, complete: int) -> int:
    """How many games, cases or states a seeded test runs: `complete` in the complete suite,
    `quick` in the default run (each still proves what the test is for, on fewer of them)."""
    return complete if COMPLETE else quick


def _spread(count: int, keep: int) -> set[int]:
    """`keep` indices of `count`, the first and the last among them, evenly spaced."""
    if keep >= count:
        return set(range(count))
    if keep <= 1:
        return {0}
    return {round(i * (count - 1) / (keep - 1)) for i in range(keep)}


# Of what is left, the default run keeps each test file's quickest cases: by the durations of
# the last complete run (tests/durations.json, `--slow --record-durations`), quickest first,
# while they add up to QUICK_SHARE of the file's recorded time or QUICK_FLOOR seconds, whichever
# is more; the quickest one always, and every test the record does not know yet.
# A test's time in the complete run can hide what it costs alone: tests that share a build (a
# house rule built once per module) pay for it only in the first that asks, so the others read
# a few milliseconds there, and a default run that keeps them pays the build in each. So the
# record also keeps what each test took in the last recorded default run (`quick`,
# `--record-durations` without --slow), and a test costs the more of the two.
DURATIONS = Path(__file__).with_name("durations.json")
QUICK_SHARE = 0.08
QUICK_FLOOR = 2.0
# Files the default run keeps whole (but for their `slow` tests): the docs' examples, which a
# user replays from the pages, run in CI on every change.
WHOLE = frozenset({"tests/docs/test_examples.py"})


def _record() -> dict[str, dict[str, float]]:
    """The record's two maps of test ids to seconds: `items` (the complete run's) and `quick`
    (the default run's)."""
    try:
        data = json.loads(DURATIONS.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        data = {}
    out: dict[str, dict[str, float]] = {}
    for key in ("items", "quick"):
        got = data.get(key) if isinstance(data, dict) else None
        out[key] = {str(k): float(v) for k, v in got.items()} if isinstance(got, dict) else {}
    return out


def _recorded() -> dict[str, float]:
    record = _record()
    times = dict(record["items"])
    for k, v in record["quick"].items():
        times[k] = max(v, times.get(k, 0.0))
    return times


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Without --slow: tests marked `slow` skip, of a test marked `sampled(n)` only n cases
    run, and of each file only its quickest cases (the others skip, saying why)."""
    if COMPLETE:
        return
    skip = pytest.mark.skip(reason="slow: the complete suite runs it (--slow or LISBOA_SLOW=1)")
    sampled: dict[tuple[str, str], list[pytest.Item]] = {}
    left: dict[str, list[pytest.Item]] = {}
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
        elif item.get_closest_marker("sampled") is not None:
            sampled.setdefault((item.nodeid.split("::")[0], item.originalname), []).append(item)
        else:
            left.setdefault(item.nodeid.split("::")[0], []).append(item)
    for group in sampled.values():
        marker = group[0].get_closest_marker("sampled")
        assert marker is not None
        keep = _spread(len(group), int(marker.args[0]))
        why = pytest.mark.skip(reason=f"sampled: the default run keeps {len(keep)} of "
                                      f"{len(group)} cases; --slow runs them all")
        for i, item in enumerate(group):
            if i not in keep:
                item.add_marker(why)
            else:
                left.setdefault(item.nodeid.split("::")[0], []).append(item)
    recorded = _recorded()
    for path, group in left.items():
        if path in WHOLE:
            continue
        took = [recorded.get(item.nodeid, 0.0) for item in group]
        budget = max(QUICK_FLOOR, QUICK_SHARE * sum(took))
        order = sorted(range(len(group)), key=lambda i: took[i])
        spent = 0.0
        why = pytest.mark.skip(reason=f"quick: the default run keeps the quickest cases of "
                                      f"{path} (about {budget:.0f} s of {sum(took):.0f} s); "
                                      "--slow runs them all")
        for rank, i in enumerate(order):
            if rank == 0 or spent + took[i] <= budget:
                spent += took[i]
            else:
                group[i].add_marker(why)


_DURATIONS: dict[str, float] = {}
_SKIPPED: set[str] = set()


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """With --record-durations: each test's setup, call and teardown time (in the process
    that reports, the controller under xdist), and which tests were skipped."""
    _DURATIONS[report.nodeid] = _DURATIONS.get(report.nodeid, 0.0) + report.duration
    if report.skipped:
        _SKIPPED.add(report.nodeid)


def _write_durations(config: pytest.Config) -> None:
    if not config.getoption("--record-durations") or hasattr(config, "workerinput"):
        return
    record = _record()
    ran = {k: round(v, 3) for k, v in sorted(_DURATIONS.items())}
    if COMPLETE:
        record["items"] = ran
    else:  # the default run: what its tests took, over what earlier ones recorded (a skipped
        # test took nothing: its earlier time is kept)
        record["quick"].update((k, v) for k, v in ran.items() if k not in _SKIPPED)
        record["quick"] = dict(sorted(record["quick"].items()))
    data = {
        "what": "each test's seconds (setup, call, teardown): `items` in the last complete run, "
                "`quick` in the last recorded default run; the default run keeps each file's "
                "quickest cases by the more of the two (tests/conftest.py)",
        "items": record["items"],
        "quick": record["quick"],
    }
    DURATIONS.write_text(json.dumps(data, indent=0, sort_keys=True) + "\n", encoding="utf-8")


def load_engine(path: Path = ENGINE_PATH, name: str = "lisboa_engine") -> ModuleType:
    """Import a generated engine file as a module (registered in sys.modules by `name`)."""
    if name in sys.modules and getattr(sys.modules[name], "__file__", None) == str(path):
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@dataclass
class HouseBuild:
    """What a build of rules/ with one house rule file gives the house-rule tests."""

    engine: ModuleType
    md: str  # reference/rules.md
    pages: dict[str, str]  # reference/variant-*.md, by variant id


def compiled_with(text: str, folder: Path, fold: bool = False) -> Any:
    """rules/ compiled in memory (pipeline.compile_rules) with the house rule `text` (a
    variant file's YAML, written into `folder` as ID.yaml), folded in or as an option; the
    result, which must have built."""
    from lisboa_rules.pipeline import compile_rules

    found = re.search(r"^id: (\S+)$", text, re.MULTILINE)
    assert found is not None, "a house rule has an id"
    house = folder / f"{found[1]}.yaml"
    house.write_text(text, encoding="utf-8")
    result = compile_rules(ROOT / "rules", (found[1],) if fold else (), extra=[house])
    assert result.ok, [d.message for d in result.diagnostics]
    return result


def build_house(
    tmp: pytest.TempPathFactory,
    folder: Path,
    name: str | None,
    fold: bool,
    prefix: str,
    cache: dict[tuple[str, bool], HouseBuild],
) -> HouseBuild:
    """rules/ with the house rule `folder/NAME.yaml` (None: the base rules), folded in
    (`--variant NAME`) or as an option, built by the CLI once per `cache`; its engine is
    imported as `PREFIX_NAME_FOLD`."""
    from lisboa_rules.cli.main import main

    key = (name or "", fold)
    if key not in cache:
        out = tmp.mktemp(f"{name or 'base'}-{'folded' if fold else 'option'}") / "g"
        args = ["build", "--no-cache", "--rules", str(ROOT / "rules"), "--out", str(out)]
        if name is not None:
            args += ["--house", str(folder / f"{name}.yaml")]
            if fold:
                args += ["--variant", name]
        assert main(args) == 0, f"lisboa-rules {' '.join(args)} failed"
        ref = out / "reference"
        cache[key] = HouseBuild(
            load_engine(out / "lisboa_engine.py", re.sub(r"\W", "_", f"{prefix}_{name}_{fold}")),
            (ref / "rules.md").read_text(encoding="utf-8"),
            {
                p.stem.removeprefix("variant-"): p.read_text(encoding="utf-8")
                for p in ref.glob("variant-*.md")
            },
        )
    return cache[key]


def run_cli(argv: list[str], capsys: Any, monkeypatch: Any) -> tuple[int, str, str]:
    """`lisboa-rules ARGV` in-process from the project's folder: (exit code, stdout, stderr)."""
    from lisboa_rules.cli import main as cli

    monkeypatch.chdir(ROOT)
    capsys.readouterr()
    code = cli.main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture(scope="session")
def engine() -> ModuleType:
    """generated/lisboa_engine.py, imported as a module."""
    return load_engine()


# --- the engine compiled with mypyc -----------------------------------------------------------

# mypyc's level only sets the C compiler's optimisation (-O0 ... -O3) of the same C code: level 0
# compiles in about a minute where level 3 takes several, and plays the same games (benchmarks/
# measures level 3). LISBOA_COMPILED_OPT_LEVEL=3 tests the engine users get.
COMPILED_OPT_LEVEL = int(os.environ.get("LISBOA_COMPILED_OPT_LEVEL", "0"))


def load_extension(path: Path) -> ModuleType:
    """Import a compiled engine as `lisboa_engine` (its init function's name) without replacing
    the pure engine registered under that name."""
    from lisboa_rules.cli import compile as compile_cli

    saved = sys.modules.pop(compile_cli.MODULE, None)
    try:
        spec = importlib.util.spec_from_file_location(compile_cli.MODULE, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[compile_cli.MODULE] = module
        spec.loader.exec_module(module)
        return module
    finally:
        if saved is None:
            sys.modules.pop(compile_cli.MODULE, None)
        else:
            sys.modules[compile_cli.MODULE] = saved


def compile_tools_or_skip() -> None:
    """Skip (or, with LISBOA_REQUIRE_COMPILED=1 as .ci/run sets, fail) a test that needs a
    compiled engine where mypyc, a C compiler or Python's headers are missing."""
    from lisboa_rules.cli import compile as compile_cli

    missing = compile_cli.missing_tools()
    if missing:
        why = "the compiled engine needs " + ", ".join(missing)
        if os.environ.get("LISBOA_REQUIRE_COMPILED") == "1":
            pytest.fail(why)
        pytest.skip(why)


def compiled_module(source: bytes, tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    """An engine's source compiled with mypyc at COMPILED_OPT_LEVEL, imported. Kept in the
    user's cache folder keyed by the source (lisboa_rules/cli/compile.py): the xdist workers of
    one run take turns (a lock in the parent of their temporary folders), so one compiles and
    the others copy it from the cache."""
    from lisboa_rules.cli import compile as compile_cli

    out = tmp_path_factory.mktemp("compiled")
    lock = tmp_path_factory.getbasetemp().parent / "compiled-engine.lock"
    with lock.open("a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        done = compile_cli.compile_engine(
            source,
            out,
            COMPILED_OPT_LEVEL,
            cache_root=compile_cli.user_cache_root(),
        )
    module = load_extension(done.path)
    assert not str(module.__file__).endswith(".py"), module.__file__
    return module


@pytest.fixture(scope="session")
def compiled_engine(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    """generated/lisboa_engine.py compiled with mypyc (`lisboa-rules compile`), imported: once
    per session (per xdist worker), kept in the user's cache folder keyed by the engine's
    source, so only the first session after a change of the engine compiles it (see
    `compiled_module`). Without a C compiler, Python's headers or mypyc the tests that use it
    skip and say what is missing; with LISBOA_REQUIRE_COMPILED=1 (set by .ci/run) they fail
    instead."""
    from lisboa_rules.cli import compile as compile_cli

    compile_tools_or_skip()
    source = ENGINE_PATH.read_bytes()
    if not (COMPLETE or os.environ.get("LISBOA_REQUIRE_COMPILED") == "1"
            or compile_cli.is_cached(source, COMPILED_OPT_LEVEL)):
        pytest.skip("the engine of generated/ is not compiled yet (mypyc takes a minute or two):"
                    " the complete suite (--slow) compiles it, and the default run then uses it")
    return compiled_module(source, tmp_path_factory)


# The test modules of hostile input (hand-changed states, forged moves, broken saves) run on
# both engines: a module overrides `engine` with
#     @pytest.fixture(scope="module", params=ENGINES)
#     def engine(request, engine): return pure_or_compiled(request, engine)
ENGINES = ("pure", "compiled")


def pure_or_compiled(request: pytest.FixtureRequest, pure: ModuleType) -> ModuleType:
    """The engine a test runs on, for a fixture parametrized over ENGINES."""
    return pure if request.param == "pure" else request.getfixturevalue("compiled_engine")


def is_compiled(E: Any) -> bool:
    return not str(E.__file__).endswith(".py")


def set_field(E: Any, obj: Any, name: str, value: Any) -> bool:
    """`setattr(obj, name, value)` on a state or a move of engine `E`, as a game app changes
    one by hand; whether the value was set. The compiled engine's classes check an attribute's
    declared type at the assignment itself (mypyc): a value of another type is refused there
    with TypeError and the object keeps its value; and a bool set where an `int` is declared
    is kept as that int (`move.player = True` sets seat 1). The pure engine's take anything
    as it is."""
    before = getattr(obj, name)
    try:
        setattr(obj, name, value)
    except TypeError as exc:
        assert is_compiled(E), f"the pure engine refused {name} = {value!r}: {exc}"
        assert "object expected" in str(exc), exc
        assert getattr(obj, name) is before, f"{name} = {value!r}: refused, yet changed"
        return False
    got = getattr(obj, name)
    if type(value) is bool and type(got) is int:
        assert is_compiled(E) and got == value, f"{name} = {value!r} was set as {got!r}"
        return True
    assert got is value or (type(got) is type(value) and got == value), (
        f"{name} = {value!r} was set as {got!r}"
    )
    return True


def setups(E: Any) -> list[tuple[int, tuple[str, ...]]]:
    """(players, chosen variants) for every player count of every rule set of the engine; the
    variants that apply by player count are left for `new_game` to add."""
    out = []
    for key, rs in E.RULESETS.items():
        chosen = tuple(v for v in key if not E.VARIANTS[v].players)
        for n in range(rs.players_min, rs.players_max + 1):
            try:
                if E.variants_for(n, chosen) == key:
                    out.append((n, chosen))
            except ValueError:
                continue
    return out


# The fields of the Church track (issue 34) a save holds, which the frozen engine's saves
# (tests/oracle/) do not have: the game's and each player's.
CHURCH_GAME = ("church", "cardinal", "clergy_bag", "clergy_given_up")
CHURCH_PLAYER = ("clergy",)


# The words of rules/vocabulary.yaml changed since the older engines the lockstep tests play
# against (the frozen oracle, the engine before issue 36) were made: (then, now).
WORDS_CHANGED = (
    ("the Officials shown on your completed Plans",
     "the number of Officials shown on your completed Plans"),
)


def items_named(text: str) -> str:
    """A score explanation of an engine made before held items were named (`ItemDef.name`)
    and before the words of WORDS_CHANGED, in the words a later engine uses: each item's id
    as its name ("decree-01" -> "Decree 01"), each changed phrase as it reads now; and before
    a line of one held item left out its sum of one number ("...not fulfilled, 0; 0 = 0" now
    ends "...not fulfilled, 0")."""
    for then, now in WORDS_CHANGED:
        text = re.sub(rf"(?<!number of ){re.escape(then)}", now, text)
    text = re.sub(r"\b([a-z]+)-(\d+)\b", lambda m: f"{m[1].capitalize()} {m[2]}", text)
    return re.sub(r"; (-?\d+) = \1$", "", text)


def without_church(data: dict[str, Any]) -> dict[str, Any]:
    """A save (as JSON) without the Church track's fields, for the frozen engine."""
    for k in CHURCH_GAME:
        data.pop(k)
    for p in data["players"]:
        for k in CHURCH_PLAYER:
            p.pop(k)
    return data


def at_the_church(g: Any) -> Any:
    """The Cardinal on the last clergy space of its circuit: its next move of one space reaches
    the Church icon, a Church Scoring (rules: components.church)."""
    g.cardinal = len(g.church)
    return g


# --- building states ----------------------------------------------------------------------


def card_of(E: Any, g: Any, type_: str, *, exclude: tuple[int, ...] = (), **want: Any) -> int:
    """A Political card number of this type (a Noble id or the treasury pile), matching
    `want` (e.g. event_action="build-store"), preferring cards not in any hand."""
    rs = g.rs
    hands = {c for p in g.players for c in p.hand}
    found = [
        n for n, c in sorted(rs.cards.items())
        if c.type == type_ and n not in exclude
        and all(getattr(c, k) == v for k, v in want.items())
    ]
    assert found, f"no {type_} card with {want}"
    free = [n for n in found if n not in hands]
    return (free or found)[0]


def _take_card_anywhere(g: Any, number: int) -> None:
    for where in (g.discard, g.box, g.court, *g.piles.values(), *g.reserve.values()):
        if number in where:
            where.remove(number)
            return
    for p in g.players:
        for row in (p.hand, p.portfolio, p.treasury_row):
            if number in row:
                row.remove(number)
                return
    raise AssertionError(f"card {number} is nowhere")


def set_hand(g: Any, seat: int, cards: list[int]) -> None:
    """Give a player exactly these cards; the cards they held go to the discard pile."""
    p = g.players[seat]
    g.discard.extend(p.hand)
    p.hand = []
    for c in cards:
        _take_card_anywhere(g, c)
        p.hand.append(c)


def move_card(g: Any, number: int, where: list[int]) -> None:
    """Move a card to the end of a list (a pile's top, a portfolio row, the discard...)."""
    _take_card_anywhere(g, number)
    where.append(number)


def give_decree(g: Any, seat: int, decree: str) -> None:
    """Give a player a Decree from the display or the deck."""
    for where in (g.decree_display, g.decree_deck):
        if decree in where:
            where.remove(decree)
            g.players[seat].decrees.append(decree)
            return
    raise AssertionError(f"Decree {decree} is not available")


def complete_plan(g: Any, seat: int, plan: str) -> None:
    """Give a player a completed Plan from the supply (or from the Plans a player holds: each
    player starts with one)."""
    for where in (g.plan_supply, *(p.plans for p in g.players)):
        if plan in where:
            where.remove(plan)
            g.players[seat].completed_plans.append(plan)
            return
    raise AssertionError(f"Plan {plan} is not available")


def give_favor(g: Any, seat: int, noble: str) -> None:
    """Give a player a Royal Favor tile of a Noble from the supply."""
    assert g.favors[noble] > 0
    g.favors[noble] -= 1
    g.players[seat].royal_favors.append(noble)


def drop_favors(g: Any, seat: int) -> None:
    """Return all of a player's Royal Favor tiles to the supply."""
    for noble in g.players[seat].royal_favors:
        g.favors[noble] += 1
    g.players[seat].royal_favors = []


def place_officials(g: Any, seat: int, noble: str, n: int, where: str = "offices") -> None:
    """Move Officials from a player's supply to a Noble's office (or plaza)."""
    p = g.players[seat]
    assert p.officials >= n
    p.officials -= n
    spot = getattr(g, where)[noble]
    spot[p.color] = spot.get(p.color, 0) + n


def set_rubble(g: Any, seat: int, sets: int, cubes: int = 0) -> None:
    """Give a player completed rubble sets (their markers leave the board) and loose cubes."""
    rs = g.rs
    p = g.players[seat]
    p.rubble_sets = sets
    p.rubble_cubes = cubes
    p.markers_left = max(0, rs.start_markers - sets)


def empty_pile(g: Any, pile: str, keep: int = 0) -> None:
    """Discard a display pile's cards, keeping the `keep` bottom ones."""
    cards = g.piles[pile]
    g.discard.extend(cards[keep:])
    del cards[keep:]


def treasury_index(g: Any, modifier: int | None = None, value: int | None = None) -> int:
    """The first Treasury space with this modifier and/or value."""
    rs = g.rs
    for i, (v, m) in enumerate(zip(rs.treasury_values, rs.treasury_modifiers, strict=True)):
        if (modifier is None or m == modifier) and (value is None or v == value):
            return i
    raise AssertionError("no such Treasury space")


def sound(E: Any, g: Any) -> Any:
    """Assert the state passes the engine's invariants and return it."""
    assert E.check_invariants(g) == []
    return g


def play_all(E: Any, g: Any, moves: list[Any]) -> Any:
    """Apply moves one after the other."""
    for m in moves:
        g = E.apply_move(g, m)
    return g


def build_store_visit(E: Any, g: Any, seat: int) -> Any:
    """The move of a seat that visits Manuel da Maia and builds a store (one rubble cube): a
    Manuel card put in the hand, réis enough."""
    card = card_of(E, g, "manuel")
    set_hand(g, seat, [*g.players[seat].hand[:4], card])
    g.players[seat].reis = 30
    return E.Move("visit", seat, card=card, business="gold")


def period_two(E: Any, g: Any) -> Any:
    """The game played through the end of the first period: three display piles emptied, seat
    0 draws from the fourth (the display trigger), nobody discards."""
    piles = g.rs.piles
    for pile in piles[:3]:
        empty_pile(g, pile)
    set_hand(g, 0, g.players[0].hand[:4])
    g.phase = "refill"
    g = E.apply_move(g, E.Move("draw", 0, pile=piles[3]))
    while g.phase == "hand-discard":
        g = E.apply_move(g, E.Move("hand-discard", g.actor, cards=()))
    assert g.period == 2
    return g


def finish_turn(E: Any, g: Any) -> Any:
    """Decline every follow and draw from the first non-empty pile until the turn is over."""
    start_turns = g.turns
    while g.turns == start_turns and g.phase != "over":
        if g.phase == "follow":
            g = E.apply_move(g, E.Move("decline", g.actor))
        elif g.phase in ("refill", "marker"):
            g = E.apply_move(g, E.legal_moves(g)[0])
        else:
            raise AssertionError(f"finish_turn: phase {g.phase}")
    return g


@pytest.fixture()
def fresh(engine: ModuleType) -> Iterator[Any]:
    """A factory for new games: fresh(players=3, variants=(), seed=0)."""

    def make(players: int = 3, variants: tuple[str, ...] = (), seed: int = 0) -> Any:
        return engine.new_game(players, variants, seed)

    yield make


@pytest.fixture(scope="module")
def compiled() -> Any:
    """The shipped rules, analysed (every stage up to emit), once per test module that asks."""
    from lisboa_rules.pipeline import analyse

    c, diags = analyse(ROOT / "rules")
    assert c is not None, [d.message for d in diags]
    return c
