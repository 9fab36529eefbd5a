"""What the build keeps per process to go faster (issue 17), and that it changes no output.

Nothing here caches an output: each memo is a pure function of its text (a long generated line's
wrapping, a negated condition), or a quicker way to the same value
(comparing two rule sets' fields by structure before formatting them, copying loaded data
without deepcopy's memo, `Scope.with_locals` without dataclasses.replace). Every test compares
the quick way with the plain one; `tests/outputs/test_golden.py` compares the whole build.
"""

from __future__ import annotations

import copy
import dataclasses
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from markupsafe import Markup

from lisboa_rules.core.encode import visible
from lisboa_rules.emit.engine import pyfmt
from lisboa_rules.emit.engine.pyfmt import Call, Raw, Update, fmt, identical, wrap_line
from lisboa_rules.front.overlay import copy_data
from lisboa_rules.ir import expr as ir
from lisboa_rules.lang import typed
from lisboa_rules.model.procs import state_scope

ROOT = Path(__file__).resolve().parents[2]

# -- pyfmt.identical: a True is a promise that fmt writes the same text ---------------------

SAME = [
    1, "a", True, None, (1, 2), [1, "x"], {"a": 1, "b": [1, 2]}, Raw("x"),
    Call("ProcDef", ("a", Raw("_opts_a")), (("k", 1),)), Update("_RS0.x", {"a": (1,)}),
    {"deep": [{"k": (Raw("y"), Call("f"))}]},
]


@pytest.mark.parametrize("value", SAME, ids=repr)
def test_identical_values_format_the_same(value: Any) -> None:
    other = copy.deepcopy(value)
    assert identical(value, other)
    assert fmt(value) == fmt(other)


@pytest.mark.parametrize(("a", "b"), [
    (True, 1), (1, True), (0, False), ((1, 2), [1, 2]), ({"a": 1, "b": 2}, {"b": 2, "a": 1}),
    (Raw("x"), "x"), (Call("f", (1,)), Call("f", (True,))), ([1], [1, 2]), (0.0, -0.0),
    (Update("a", {}), Update("b", {})),
], ids=repr)
def test_identical_refuses_what_might_format_otherwise(a: Any, b: Any) -> None:
    # bools are not ints, tuples not lists, the order of a dict is written: never "identical"
    # (a float is not one of the types it knows: the build compares fmt then)
    assert not identical(a, b)


def test_the_variant_rule_sets_fields_are_compared_as_formatted(compiled: Any) -> None:
    """The comparison build_view makes: every pair of fields identical() calls the same is the
    same to fmt too."""
    from lisboa_rules.emit.engine.procs import lower, procedure_view
    from lisboa_rules.emit.engine.view import _Functions, ruleset_fields

    models = [rs.model for rs in compiled.rulesets]
    fns = _Functions(compiled.names)
    pv = procedure_view(models, lower(models, compiled.names))
    fields = []
    for i, m in enumerate(models):
        fns.vocab = pv.vocab[i]
        fields.append(ruleset_fields(m, fns, pv.by_ruleset[i], pv.moves[i], pv.fx[i],
                                     pv.phases[i]))
    said_same = 0
    for other in fields[1:]:
        for k, v in other.items():
            if identical(v, fields[0][k]):
                said_same += 1
                assert fmt(v) == fmt(fields[0][k]), k
    assert said_same > 0  # the variants change few fields


# -- wrap_line: kept per process, a function of its text ------------------------------------

LONG = [
    "    if " + " and ".join(f"v_{i} == {i}" for i in range(20)) + ":",
    "    return " + " + ".join(f"len(g.players[{i}].hand)" for i in range(12)),
    "def _run_x(g: Game, seat: int, " + ", ".join(f"v_{i}: int" for i in range(12)) + ") -> None:",
    "        problems.append(" + ", ".join(f'"word {i}"' for i in range(15)) + ")",
]


@pytest.mark.parametrize("line", LONG)
def test_a_wrapped_line_is_what_wrapping_it_again_gives(line: str) -> None:
    first = wrap_line(line)
    assert first == pyfmt._wrapped(line, 100)
    assert len(first) > 1
    first.append("changed by the caller")
    assert wrap_line(line) == pyfmt._wrapped(line, 100)  # the kept copy is not the caller's
    assert wrap_line(line, 60) == pyfmt._wrapped(line, 60)  # the width is part of the key


def test_wrap_line_starts_again_when_full(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pyfmt, "_WRAPPED_MAX", 2)
    monkeypatch.setattr(pyfmt, "_WRAPPED", {})
    for line in LONG:
        assert wrap_line(line) == pyfmt._wrapped(line, 100)
    assert len(pyfmt._WRAPPED) <= 2


# -- the scope and the errors of the expression checker --------------------------------------


def test_with_locals_is_replace(compiled: Any) -> None:
    m = compiled.base.model
    scope = state_scope(m.state, m.data, m.procs.measures)
    name = typed.Name(typed.INT, ir.Local("n"))
    quick = scope.with_locals(n=name)
    assert quick == dataclasses.replace(scope, locals={**scope.locals, "n": name})
    assert "n" not in scope.locals and quick.locals["n"] is name
    assert quick.player is scope.player  # shared as replace shares them


def test_an_unknown_names_suggestion_is_of_the_names_when_it_failed() -> None:
    scope = typed.Scope(locals={"seat": typed.Name(typed.INT, ir.Seat())},
                        measures={"rise": typed.Name(typed.INT, ir.Arg("r"))})
    with pytest.raises(typed.ExprError) as exc:
        typed.check("rice + 1", scope)
    scope.measures["rice2"] = typed.Name(typed.INT, ir.Arg("r2"))  # added after the error
    assert exc.value.code == "unknown-name"
    assert exc.value.suggestion == "rise"
    assert exc.value.suggestion == "rise"  # found once, kept
    assert typed.ExprError("expr-type", "m", 0, "given").suggestion == "given"
    assert typed.ExprError("expr-type", "m").suggestion is None


# -- loaded data and page text ----------------------------------------------------------------


def test_copy_data_is_a_deep_copy() -> None:
    data = {"a": [1, {"b": "x", "c": [True, None, 1.5]}], "d": {"e": []}, "f": {1, 2}}
    out = copy_data(data)
    assert out == copy.deepcopy(data)
    assert out["a"] is not data["a"] and out["a"][1] is not data["a"][1]
    assert out["d"]["e"] is not data["d"]["e"]
    assert out["f"] is not data["f"]  # anything else goes through deepcopy


def test_visible_returns_clean_text_as_it_is() -> None:
    plain = "Lisbon \u2014 1755"
    assert visible(plain) is plain
    marked = Markup("<b>x</b>")
    assert visible(marked) is marked and isinstance(visible(marked), Markup)
    assert visible("a\u202eb") == "a\\u202eb"
    shown = visible(Markup("<i>a\u202eb</i>"))
    assert isinstance(shown, Markup) and shown == Markup("<i>a\\u202eb</i>")


# -- the command line loads what the command runs --------------------------------------------


def test_a_build_loads_no_other_command_group(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from lisboa_rules.cli import main\n"
        f"rc = main.main(['build', '--no-cache', '--out', {str(tmp_path / 'out')!r}])\n"
        "print(rc, sorted(m for m in sys.modules if m.startswith(('lisboa_rules.sim',"
        " 'lisboa_rules.cli.balance', 'lisboa_rules.cli.engine', 'lisboa_rules.cli.diff'))))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, check=True)
    assert done.stdout.strip().splitlines()[-1] == "0 []"
    shown = subprocess.run([sys.executable, "-m", "lisboa_rules", "--help"], cwd=ROOT,
                           capture_output=True, text=True, check=True).stdout
    for command in ("build", "validate", "diff", "simulate", "score", "pdf", "balance"):
        assert command in shown


def test_the_model_builders_scope_is_made_once_per_rule_set(compiled: Any) -> None:
    m = compiled.base.model
    measures = (*m.procs.measures, ("bad-measure", "no_such_name + 1"))
    first: list[tuple[str, str, str]] = []
    scope = state_scope(m.state, m.data, measures, None, first)
    again: list[tuple[str, str, str]] = []
    assert state_scope(m.state, m.data, measures, None, again) is scope
    assert again == first and [p[:2] for p in first] == [("bad-measure", "unknown-name")]
    assert state_scope(m.state, m.data, measures) is scope  # problems not asked for
    other = compiled.rulesets[1].model  # another rule set: its own scope
    assert state_scope(other.state, other.data, measures) is not scope
    copied = dict(m.data)  # equal data, another object: made again, the same
    made = state_scope(m.state, copied, measures)
    assert made is not scope and made.tables == scope.tables
    assert state_scope(m.state, m.data, m.procs.measures) is not scope  # other measures


def test_a_procedures_printed_steps_are_made_once_per_model(compiled: Any) -> None:
    from lisboa_rules.emit.reference.render import _Builder

    b = _Builder(compiled, "")
    fresh = _Builder(compiled, "")
    for rs in compiled.rulesets:
        for pid in rs.model.procs.procs:
            shown = b.proc_view(pid, rs.model)
            assert b.proc_view(pid, rs.model) is shown  # kept
            assert fresh._steps(rs.model.procs.procs[pid].steps,
                                fresh.proc_local(pid, rs.model), rs.model, ()) == shown
    queen = next(rs.model for rs in compiled.rulesets if rs.key == ("queen",))
    visit = [pid for pid in queen.procs.procs
             if b.proc_view(pid, queen) != b.proc_view(pid, compiled.base.model)]
    assert visit  # a variant's procedures are its own, not the base's
