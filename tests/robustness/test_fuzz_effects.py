"""The effect-language fuzzer (`python3 -m tools.fuzz --effects N`, tools/fuzz_effects.py):
house rules written in the effect language, built with rules/ and their engines played.

Each case ends in one of five categories: (a) refused with located errors, (b) built and its
engine played seeded games to the end with its invariants: both fine; (c) built with exit 0
and an engine that fails, (d) a crash of the compiler, (e) a hang: findings. A test fails on a
finding, except where it is one of the known-open kinds of issue 33 listed in KNOWN_OPEN (each
fixed in parallel): those are expected failures (`xfail`, not strict), so the suite stays green
while the fixes land and an XPASS says one has landed. Remove an entry when its fix is in.

The default run builds and plays a handful of house rules (a few seconds each: `sampled`); the
complete suite (--slow) runs every issue-33 case and LISBOA_EFFECTS_CASES (default 100) random
cases of seed LISBOA_EFFECTS_SEED (default 0).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from typing import Any

import pytest
import yaml
from conftest import sized

from lisboa_rules.front.loader import load_text
from lisboa_rules.front.validate import validate
from tools import fuzz_effects as fe

TIMEOUT = 30.0  # seconds a case may take here before it counts as a hang (a loaded machine)
CASES = int(os.environ.get("LISBOA_EFFECTS_CASES", str(sized(3, 100))))
SEED = int(os.environ.get("LISBOA_EFFECTS_SEED", "0"))
BATCHES = 10

# The known-open findings of issue 33 (seen on this tree by `python3 -m tools.fuzz --effects
# 300 --seed 1` and `--effects-known`), each a pattern over a finding's signature
# (`CATEGORY STAGE: DETAIL`, EffectOutcome.signature) and what is open. A finding matching one
# is an expected failure; any other finding fails the test.
# The known-open findings (seen on this tree by `python3 -m tools.fuzz --effects 150 --seed 1`
# and `--effects-known`), each a pattern over a finding's signature (`CATEGORY STAGE: DETAIL`,
# EffectOutcome.signature) and what is open. A finding matching one is an expected failure;
# any other finding fails the test. Every case issue 33 measured is refused or plays now.
INVARIANT = r"^c .*invariant fails"
KNOWN_OPEN: dict[str, str] = {
    INVARIANT: "c: a step that breaks a declared invariant the static checks do not read "
               "(step-breaks-law reads a `set:`, gains that do not cancel in a sum, a new "
               "player's constants) builds with --play 0, and the invariant fails in play; the "
               "backstop, on by default, refuses it",
}


def _open(outcomes: Sequence[fe.EffectOutcome]) -> tuple[list[str], set[str]]:
    """The findings no KNOWN_OPEN pattern names (with a replay line), and the known ones hit."""
    unexpected: list[str] = []
    known: set[str] = set()
    for o in outcomes:
        if o.ok:
            continue
        why = [w for pattern, w in KNOWN_OPEN.items() if re.search(pattern, o.signature)]
        if why:
            known.update(why)
            continue
        tail = "".join(f"    | {ln}\n" for ln in (o.stderr + o.traceback).splitlines()[-10:])
        unexpected.append(f"{o.case.label}: {o.signature}\n{tail}{o.case.text}")
    return unexpected, known


def _judge(outcomes: Sequence[fe.EffectOutcome], replay: str) -> None:
    unexpected, known = _open(outcomes)
    assert not unexpected, f"{len(unexpected)} findings ({replay}):\n" + "\n".join(unexpected)
    if known:
        pytest.xfail("known open (issue 33): " + "; ".join(sorted(known)))


@pytest.fixture(scope="module")
def warm() -> None:
    """The unchanged rules built once in this process: every forked case inherits the imports
    and the compiled templates."""
    fe.warm_up()


# --- the cases issue 33 measured --------------------------------------------------------------

# What each issue-33 case gives on this tree, when it is a finding: the KNOWN_OPEN entry it is.
# A case not listed here must be refused (a) or play (b).
ISSUE_33_OPEN: dict[str, str] = {}
HEAVY = {"repeat-huge", "len-range-huge", "choose-up-to-40"}  # a hang or a memory limit


class KnownOpen(AssertionError):
    """The finding a case's xfail mark expects (any other failure fails the test)."""


def _issue_param(name: str) -> Any:
    marks: list[Any] = []
    if name in ISSUE_33_OPEN:
        marks.append(pytest.mark.xfail(strict=False, raises=KnownOpen,
                                       reason=KNOWN_OPEN[ISSUE_33_OPEN[name]]))
    if name in HEAVY:
        marks.append(pytest.mark.slow)
    return pytest.param(name, marks=marks, id=name)


@pytest.mark.sampled(1)
@pytest.mark.parametrize("name", [_issue_param(n) for n in fe.ISSUE_33])
def test_an_issue_33_house_rule_is_refused_or_plays(name: str) -> None:
    """Each one-step house rule issue 33 measured: a located error, or an engine that plays
    seeded games at every player count to the end with its invariants."""
    outcome = fe.run_effect_case(fe.known_case(name), TIMEOUT)
    if outcome.ok:
        return
    said = f"{outcome.signature}\n{outcome.traceback[-2000:]}\n{outcome.case.text}"
    if name in ISSUE_33_OPEN and re.search(ISSUE_33_OPEN[name], outcome.signature):
        raise KnownOpen(said)
    pytest.fail(said)


def test_the_issue_33_cases_are_all_there() -> None:
    """The mode reproduces each case the issue names."""
    named = {"divisor-zero", "first-empty", "max-empty", "index-past-end", "noble-unknown",
             "remove-missing", "new-outside-setup", "set-below-min", "set-past-64-bits",
             "choose-no-move", "setup-reads-players", "let-retyped", "dash-beside-underscore",
             "repeat-huge", "drop-full-map", "len-range-huge", "choose-up-to-40"}
    assert named <= set(fe.ISSUE_33)
    assert set(ISSUE_33_OPEN) <= set(fe.ISSUE_33)


# --- random house rules -------------------------------------------------------------------------


@pytest.mark.sampled(1)
@pytest.mark.parametrize("index", [16, 17, 5, 10, 2, 8])
def test_a_random_house_rule_is_refused_or_plays(index: int) -> None:
    """A few random cases of seed 0, in the default run (findings of the known-open kinds are
    expected failures)."""
    _judge([fe.run_effect_case(fe.make_effect_case(0, index), TIMEOUT)],
           f"replay: python3 -m tools.fuzz --effects 1 --seed 0 --case {index}")


@pytest.mark.slow
@pytest.mark.parametrize("batch", range(BATCHES))
def test_random_house_rules_are_refused_or_play(warm: None, batch: int) -> None:
    """LISBOA_EFFECTS_CASES random house rules of seed LISBOA_EFFECTS_SEED, in batches."""
    size = -(-CASES // BATCHES)
    indexes = range(batch * size, min(CASES, (batch + 1) * size))
    outcomes = [fe.run_effect_case(fe.make_effect_case(SEED, i), TIMEOUT) for i in indexes]
    _judge(outcomes, f"replay: python3 -m tools.fuzz --effects 1 --seed {SEED} --case INDEX")


# --- the generator and the verdict ------------------------------------------------------------


def test_cases_are_reproducible_and_valid_variant_files() -> None:
    """A case is the same for the same (seed, index); each is a variant file the strict loader
    reads (no anchors, no aliases) and that passes the variant schema nearly always."""
    schema_ok = 0
    for i in range(40):
        a, b = fe.make_effect_case(3, i), fe.make_effect_case(3, i)
        assert a.text == b.text and a.hazards == b.hazards
        doc, problems = load_text(a.text, "fuzzed.yaml")
        assert doc is not None and not problems, (a.label, problems)
        schema_ok += not validate(doc)
        assert yaml.safe_load(a.text)["id"] == fe.HOUSE_ID
    assert schema_ok >= 36, schema_ok
    assert fe.make_effect_case(3, 0).text != fe.make_effect_case(4, 0).text


def test_the_generator_probes_every_hazard_at_every_site() -> None:
    cases = [fe.make_effect_case(0, i) for i in range(sized(200, 600))]
    assert {h for c in cases for h in c.hazards} == set(fe.FRAGMENTS)
    assert {c.site for c in cases} == {*fe.SITES, "setup-early"}
    texts = "\n".join(c.text for c in cases)
    for word in ("//", "%", "first(", "max(", "min(", "noble('", "range(", " for ", "up_to",
                 "new: game.players", "repeat:", "shuffle:", "for_each:", "if:", "do:", "drop:",
                 "choose:", "require:", "922337203685477580", "$before: setup.players"):
        assert word in texts, word


def test_the_verdict_sorts_the_outcomes(monkeypatch: pytest.MonkeyPatch) -> None:
    """(a) a refusal with located errors; (d) a crash of the compiler; (e) a case past its time
    limit; and what a refusal must look like."""
    broken = fe.EffectCase(0, 0, "action", ("test",), fe.house_rule("action", [{"gain": {}}]))
    assert fe.run_effect_case(broken, TIMEOUT).category == "a"
    assert fe.run_effect_case(broken, 0.01).category == "e"

    from lisboa_rules import pipeline

    def crash(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("boom")

    monkeypatch.setattr(pipeline, "compile_rules", crash)  # the forked child inherits it
    crashed = fe.run_effect_case(broken, TIMEOUT)
    assert crashed.category == "d" and "RuntimeError: boom" in crashed.detail

    assert fe.judge_refusal("x.yaml:3:4: error[expr-type]: y\nlisboa-rules: found 1 error\n") == ""
    assert fe.judge_refusal("lisboa-rules: found 1 error\n")
    assert fe.judge_refusal("x.yaml:3:4: error[no-such-code]: y\n")
    assert fe.judge_refusal("Traceback (most recent call last):\n")


def test_the_known_open_patterns_name_real_signatures() -> None:
    """Each ISSUE_33_OPEN entry is a KNOWN_OPEN pattern, and every pattern compiles."""
    for pattern in KNOWN_OPEN:
        re.compile(pattern)
    assert set(ISSUE_33_OPEN.values()) <= set(KNOWN_OPEN)
