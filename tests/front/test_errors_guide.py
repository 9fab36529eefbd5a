"""Errors that guide a designer writing a house rule (issue 37): each mistake answered with a
located error that names the fix, in the designer's words and the designer's file."""

from __future__ import annotations

import json
import re
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lisboa_rules import pipeline
from lisboa_rules.core.diagnostics import Diagnostic
from lisboa_rules.front import schema
from lisboa_rules.front.loader import load_text
from lisboa_rules.front.validate import PATTERN_WORDS, validate

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "rules"
SCHEMAS = ROOT / "lisboa_rules" / "front" / "schema"

HEAD = """\
kind: variant
id: my-house
title: My house rule
applies: chosen
text: Some house rule.
"""
TRIGGER = """\
changes:
  flow:
    triggers:
      - $add: true
        id: game-end.wigs
        ends: game
        period: 2
        scope: any-player
        condition: wigs >= target
        params: {target: 40}
        ranges: {target: [1, null]}
        text: >-
          The end of the game is also triggered as soon as a player has {params.target|score}.
"""

# What a regular expression looks like in a message: anchors, classes, groups, escapes.
REGEX = re.compile(
    r"\^\[|\[0-9|\[a-z|\(\?[!:=]|\\[sSdDwWn]|\]\*|\)\*|\]\+|\{[0-9],?[0-9]*\}|"
    r"\[\^"
)


def errors(
    tmp_path: Path, text: str, name: str = "house.yaml", rules: Path = RULES
) -> list[Diagnostic]:
    """The errors of the rules with `text` as a house-rule file (given with --house)."""
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    _, diags = pipeline.analyse(rules, extra=(path,))
    return [d for d in diags if d.is_error]


def shown(diags: list[Diagnostic]) -> list[str]:
    return [f"{d.code}: {d.full_message}" for d in diags]


# --- 1. a house rule's source: optional, or free text ---------------------------------------


def test_a_house_rule_may_omit_its_source(tmp_path: Path) -> None:
    assert errors(tmp_path, HEAD + TRIGGER) == []


@pytest.mark.parametrize("source", ["my friend Bob", "[an idea of our table, 'Bob, 2026']"])
def test_a_house_rule_may_give_its_source_in_free_text(tmp_path: Path, source: str) -> None:
    text = (
        HEAD
        + f"source: {source}\n"
        + TRIGGER.replace("        period: 2\n", f"        period: 2\n        source: {source}\n")
    )
    assert errors(tmp_path, text) == []


def test_a_variant_in_rules_still_cites_its_sources(tmp_path: Path) -> None:
    """Copied into rules/variants/, the same free text is refused: there the citation is
    checked (and said in words)."""
    import shutil

    rules = tmp_path / "rules"
    shutil.copytree(RULES, rules)
    (rules / "variants" / "mine.yaml").write_text(
        HEAD + "source: [my friend Bob]\n" + TRIGGER, encoding="utf-8"
    )
    _, diags = pipeline.analyse(rules)
    found = [d for d in diags if d.is_error]
    assert [d.code for d in found] == ["schema-pattern"], shown(found)
    assert "'my friend Bob' is not a citation of the rules' sources: 'seed:'" in found[0].message
    (rules / "variants" / "mine.yaml").write_text(HEAD + TRIGGER, encoding="utf-8")
    _, diags = pipeline.analyse(rules)
    found = [d for d in diags if d.is_error]
    assert [d.code for d in found] == ["schema-required"], shown(found)
    assert all("'source'" in d.message for d in found), shown(found)


def test_a_house_rule_citing_an_unknown_section_is_told(tmp_path: Path) -> None:
    """A citation in a house rule is still checked: only free text is the designer's own."""
    found = errors(
        tmp_path,
        HEAD
        + TRIGGER.replace(
            "        period: 2\n", "        period: 2\n        source: [seed:000#no-such-section]\n"
        ),
    )
    assert [d.code for d in found] == ["unknown-source"], shown(found)


@pytest.mark.parametrize(
    ("source", "md", "html"),
    [
        (
            '"our table, <b>2026</b>"',
            "<sub>our table, \\<b\\>2026\\</b\\></sub>",
            '<p class="prov">our table, &lt;b&gt;2026&lt;/b&gt;</p>',
        ),
        (None, "<sub>house rule</sub>", '<p class="prov">house rule</p>'),
    ],
)
def test_the_reference_prints_a_house_rules_source_as_text(
    tmp_path: Path, source: str | None, md: str, html: str
) -> None:
    """Its free text (or "house rule") goes through the encoders as every data string does,
    and is no link to the Sources table (which lists the rules' citations only)."""
    path = tmp_path / "house.yaml"
    path.write_text(HEAD + (f"source: {source}\n" if source else "") + TRIGGER, encoding="utf-8")
    result = pipeline.compile_rules(RULES, (), extra=(path,))
    assert result.ok, shown(list(result.diagnostics))
    assert md in result.files["reference/rules-annotated.md"]
    assert html in result.files["reference/rules-annotated.html"]
    assert "#source-our-table" not in result.files["reference/rules-annotated.html"]


# --- 2. no message prints a regular expression ----------------------------------------------


def _patterns(node: Any, at: str = "") -> Iterator[tuple[str, str, str]]:
    """(where, how the pattern is used, pattern) of every pattern of a schema."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "pattern" and isinstance(value, str):
                yield at, "value", value
            elif key == "patternProperties" and isinstance(value, dict):
                for p in value:
                    yield at, "key", p
            elif key == "propertyNames" and isinstance(value, dict) and "pattern" in value:
                yield at, "name", value["pattern"]
                continue
            yield from _patterns(value, f"{at}/{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _patterns(value, f"{at}/{i}")


PATTERNS = sorted(
    {
        (f.name, *p)
        for f in SCHEMAS.glob("*.schema.json")
        for p in _patterns(json.loads(f.read_text(encoding="utf-8")))
    }
)


def test_the_schemas_have_patterns() -> None:
    assert len(PATTERNS) > 20 and {how for *_, how, _ in PATTERNS} >= {"value", "key"}


# A value that breaks a pattern "! Bad value" keeps (words: anything but spaces only)
BREAKS = {"^[\\s\\S]*\\S[\\s\\S]*(?![\\s\\S])": "   "}


@pytest.mark.parametrize(("file", "at", "how", "pattern"), PATTERNS)
def test_a_value_breaking_a_pattern_is_told_in_words(
    monkeypatch: pytest.MonkeyPatch, file: str, at: str, how: str, pattern: str
) -> None:
    """Each pattern of the schemas, broken where it stands (a value, a key of a mapping, a
    property's name): the message says what is expected in words, never the expression."""
    assert pattern in PATTERN_WORDS, f"{file}{at}: say in words what {pattern!r} expects"
    bad = BREAKS.get(pattern, "! Bad value")
    assert not re.search(pattern, bad)
    if how == "value":
        probe: dict[str, Any] = {"type": "string", "pattern": pattern}
        body = f"v: '{bad}'\n"
    elif how == "key":
        probe = {
            "type": "object",
            "additionalProperties": False,
            "patternProperties": {pattern: {}},
        }
        body = f"v: {{'{bad}': 1}}\n"
    else:
        probe = {"type": "object", "propertyNames": {"pattern": pattern}}
        body = f"v: {{'{bad}': 1}}\n"
    sset = schema.SchemaSet.from_schemas(
        {
            "probe.schema.json": {
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "$id": "https://lisboa-rules.invalid/schema/probe.schema.json",
                "type": "object",
                "properties": {"kind": {"const": "probe"}, "v": probe},
            }
        }
    )
    monkeypatch.setattr(schema, "override", sset)
    doc, diags = load_text("kind: probe\n" + body, "probe.yaml")
    assert doc is not None and not diags
    (d,) = validate(doc)
    assert PATTERN_WORDS[pattern] in d.full_message, d.full_message
    assert not REGEX.search(d.full_message), d.full_message
    assert pattern not in d.full_message


def test_a_bad_id_in_a_house_rule_is_told_in_words(tmp_path: Path) -> None:
    (d,) = errors(tmp_path, HEAD.replace("id: my-house", "id: My_House") + TRIGGER)
    assert d.code == "schema-pattern"
    assert "string 'My_House' is not an id: lower-case letters" in d.message
    assert not REGEX.search(d.message), d.message


def test_a_bad_param_name_is_told_in_words(tmp_path: Path) -> None:
    (d,) = errors(tmp_path, HEAD + TRIGGER.replace("params: {target: 40}", "params: {Target: 40}"))
    assert d.code == "bad-name" and d.suggestion == "target"
    assert "'Target' is not a name: a name is a lower-case letter" in d.message
    assert not REGEX.search(d.message), d.message


# --- 3. a key error lists the keys allowed there ---------------------------------------------


def test_an_unknown_key_lists_the_keys_allowed_and_suggests_the_closest(tmp_path: Path) -> None:
    (d,) = errors(
        tmp_path, HEAD + TRIGGER.replace("        scope:", "        scpoe: x\n        scope:")
    )
    assert d.code == "schema-unknown-key"
    assert (
        "unknown key 'scpoe' in changes.flow.triggers[0]; the keys allowed here are: " in d.message
    )
    assert "condition, params, ranges, text, source" in d.message
    assert d.suggestion is None  # `scope` is given already


def test_a_misspelt_key_of_a_step_suggests_the_key(tmp_path: Path) -> None:
    text = (
        HEAD
        + """\
changes:
  flow:
    period_end:
      steps:
        - $add: true
          $after: period-end.rubble-wigs
          id: period-end.tax
          stpes:
            - for_each: {as: q, in: game.players}
              do:
                - gain: {q.reis: -1}
          text: Every player pays 1 real.
"""
    )
    found = errors(tmp_path, text)
    (d,) = [d for d in found if d.code == "schema-unknown-key"]
    assert d.suggestion == "steps", shown(found)
    assert "the keys allowed here are: " in d.message and ", steps" in d.message


def test_an_action_given_params_is_told_what_an_action_takes(tmp_path: Path) -> None:
    text = (
        HEAD
        + """\
changes:
  court:
    actions:
      - id: visit
        params: {$add: {x: 1}}
"""
    )
    found = errors(tmp_path, text)
    assert len(found) == 1, shown(found)
    (d,) = found
    assert d.span is not None and d.span.file.endswith("house.yaml") and d.span.line == 10
    assert "'params'" in d.message and "the keys allowed here are: id," in d.message
    assert "changes.court.actions[0]" in d.message, d.message


def test_a_key_an_item_cannot_take_is_not_told_to_be_added(tmp_path: Path) -> None:
    """`params:` on an action the base has: not "written `params: {$add: VALUE}`" (an action
    takes no params), but the keys an action takes."""
    text = (
        HEAD
        + """\
changes:
  court:
    actions:
      - id: visit
        params: {x: 1}
"""
    )
    (d,) = errors(tmp_path, text)
    assert d.code == "overlay-unknown-key"
    assert "$add" not in d.message, d.message
    assert "takes no key 'params'" in d.message and "the keys allowed here are: id," in d.message


# --- 4. positions and key paths in the file the user wrote -----------------------------------


def test_a_house_rules_error_names_its_own_key_path(tmp_path: Path) -> None:
    (d,) = errors(tmp_path, HEAD + TRIGGER.replace("period: 2", "period: two"))
    assert d.code == "schema-type"
    assert d.span is not None and d.span.file.endswith("house.yaml")
    assert (d.span.line, d.span.col) == (12, 17)
    assert d.message == ("expected an integer, got string 'two' at changes.flow.triggers[0].period")


def test_a_changed_item_is_named_by_the_house_rules_path(tmp_path: Path) -> None:
    text = (
        HEAD
        + """\
changes:
  scoring:
    sources:
      - id: score.favors
        params: {wigs_per_favor: two}
"""
    )
    (d,) = errors(tmp_path, text)
    assert d.span is not None and d.span.file.endswith("house.yaml") and d.span.line == 10
    assert "at changes.scoring.sources[0].params.wigs_per_favor" in d.message, d.message


# --- 5. `=` in a condition, and other slips ---------------------------------------------------


@pytest.mark.parametrize(
    ("condition", "words", "col"),
    [
        ("game.period = 1", "write `==` to test equality", 21),
        ("wigs >= target && game.period == 2", "write `and` for both conditions (not `&&`)", 24),
        ("wigs >= target || game.period == 2", "write `or` for either condition (not `||`)", 24),
        ('"!(wigs < target)"', "write `not` to negate a condition (not `!`)", 10),
        ("game.period <> 1", "write `!=` for not equal (not `<>`)", 21),
    ],
)
def test_a_slip_in_a_condition_names_what_to_write(
    tmp_path: Path, condition: str, words: str, col: int
) -> None:
    (d,) = errors(
        tmp_path, HEAD + TRIGGER.replace("condition: wigs >= target", f"condition: {condition}")
    )
    assert d.code == "expr-syntax" and words in d.message, d.message
    assert d.span is not None and (d.span.line, d.span.col) == (14, col + 11)


def test_an_equals_sign_in_a_step_suggests_two(tmp_path: Path) -> None:
    text = (
        HEAD
        + """\
changes:
  flow:
    period_end:
      steps:
        - $add: true
          $after: period-end.rubble-wigs
          id: period-end.tax
          steps:
            - for_each: {as: q, in: game.players}
              do:
                - if: q.reis = 0
                  then:
                    - gain: {q.wigs: -1}
          text: Every player without réis loses a wig.
"""
    )
    (d,) = errors(tmp_path, text)
    assert d.code == "expr-syntax" and "write `==`" in d.message, d.message


def test_a_comparison_inside_quotes_is_no_slip() -> None:
    from lisboa_rules.core.pyexpr import syntax_slip

    assert syntax_slip("x == 'a = b' and") is None
    assert syntax_slip("x <= 1 and y >= 2 and z != 3 and") is None


# --- 6. a field named by another word ---------------------------------------------------------


def test_an_unknown_name_suggests_the_name_it_may_mean(tmp_path: Path) -> None:
    (d,) = errors(
        tmp_path, HEAD + TRIGGER.replace("condition: wigs >= target", "condition: money >= target")
    )
    assert (d.code, d.suggestion) == ("unknown-name", "reis"), d.full_message


def test_a_player_field_named_by_another_word_suggests_it(tmp_path: Path) -> None:
    text = (
        HEAD
        + """\
changes:
  flow:
    period_end:
      steps:
        - $add: true
          $after: period-end.rubble-wigs
          id: period-end.tax
          steps:
            - for_each: {as: q, in: game.players}
              do:
                - gain: {q.money: -1}
          text: Every player pays 1 real.
"""
    )
    (d,) = errors(tmp_path, text)
    assert d.code == "unknown-name" and "a player has no field 'money'" in d.message
    assert d.suggestion == "reis"
    (d,) = errors(tmp_path, text.replace("q.money", "q.reiss"))
    assert d.suggestion == "reis"  # and by spelling


def test_the_other_words_are_rules_data(tmp_path: Path) -> None:
    """The synonyms are `aka:` of rules/vocabulary.yaml: without them, `money` is not `reis`."""
    import shutil

    rules = tmp_path / "rules"
    shutil.copytree(RULES, rules)
    vocab = rules / "vocabulary.yaml"
    text = vocab.read_text(encoding="utf-8")
    assert "aka: [money," in text
    vocab.write_text(re.sub(r"aka: \[[^\]]*\], ", "", text), encoding="utf-8")
    (d,) = errors(
        tmp_path,
        HEAD + TRIGGER.replace("condition: wigs >= target", "condition: money >= target"),
        rules=rules,
    )
    assert d.code == "unknown-name" and d.suggestion is None
    vocab.write_text(text.replace("aka: [money,", "aka: [Money,"), encoding="utf-8")
    _, diags = pipeline.analyse(rules)
    assert [d.code for d in diags if d.is_error] == ["schema-pattern"]


# --- 7. YAML syntax errors in words -----------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "at", "words"),
    [
        (
            "kind: variant\nid: x\n  title: bad indent\n",
            (3, 8),
            "this line is indented further than the key above it",
        ),
        ("kind: variant\nid: x\ntitle:\n\t- tab\n", (4, 1), "a tab character"),
        (
            'kind: variant\nid: x\ntitle: "unclosed\ntext: y\n',
            (5, 1),
            "a quoted text opened at line 3 is never closed",
        ),
        (
            "kind: variant\nid: x\nid: y\n",
            (3, 1),
            "duplicate key 'id' (first defined at line 2): a key is written once",
        ),
        (
            "kind: variant\nid: x\nlist: [a, b\ntext: c\n",
            (4, 5),
            "a list in brackets opened at line 3 is not closed: end it with ']'",
        ),
        (
            "kind: variant\nid: x\nchanges:\n  flow:\n    triggers:\n      - id: a\n"
            "        period: 2\n     text: b\n",
            (8, 6),
            "this line is indented unlike the keys of the mapping that starts at line 5",
        ),
        ("kind: variant\nid: x\ntitle\ntext: y\n", (4, 1), "a line without ':' at line 3"),
        ("kind: variant\nid: x\ntext: a: b\n", (3, 8), "quote a text that holds ': '"),
    ],
)
def test_a_yaml_mistake_is_located_and_said_in_words(
    tmp_path: Path, text: str, at: tuple[int, int], words: str
) -> None:
    (d,) = errors(tmp_path, text)
    assert d.code in ("yaml-syntax", "duplicate-key")
    assert d.span is not None and (d.span.line, d.span.col) == at
    assert words in d.message, d.message
    for raw in (
        "mapping values are not allowed",
        "could not find expected",
        "did not find",
        "end of stream",
        "cannot start any token",
    ):
        assert raw not in d.message, d.message


# --- 8. text-stale in plain words; 9. one mistake, one error ----------------------------------


SCORING = (
    HEAD
    + """\
changes:
  scoring:
    sources:
      - id: score.rubble
        formula: {formula}
"""
)


def test_text_stale_names_the_texts_quotes_them_and_says_what_to_change(tmp_path: Path) -> None:
    found = errors(tmp_path, SCORING.replace("{formula}", "wigs_per_set * rubble_sets + 1"))
    (d,) = found
    assert d.code == "text-stale"
    assert (
        "changes `formula:` of 'score.rubble' (now `wigs_per_set * rubble_sets + 1`)" in d.message
    )
    assert 'its `short:` still reads "{params.wigs_per_set} each"' in d.message
    assert (
        'its `text:` still reads "Each completed rubble set scores '
        '{params.wigs_per_set|score}."' in d.message
    )
    assert (
        "give `short:` and `text:` anew under `id: score.rubble` in the same variant" in d.message
        or "give `text:` and `short:` anew" in d.message
    )
    # the old advice, false for a text that prints through a placeholder already
    assert "print the value through a placeholder" not in d.message
    assert " short still reads" not in d.message  # a key as written, not jargon
    assert {r.message for r in d.related} == {
        "the `short:` of 'score.rubble'",
        "the `text:` of 'score.rubble'",
    }


def test_text_stale_names_a_param_the_new_formula_no_longer_reads(tmp_path: Path) -> None:
    (d,) = errors(tmp_path, SCORING.replace("{formula}", "4 * rubble_sets"))
    assert "({params.wigs_per_set} prints a value the new formula no longer reads)" in d.message


def test_a_formula_that_does_not_parse_gives_one_error(tmp_path: Path) -> None:
    found = errors(tmp_path, SCORING.replace("{formula}", '"wigs_per_set * (rubble_sets"'))
    assert [d.code for d in found] == ["expr-syntax"], shown(found)
    assert "'(' was never closed" in found[0].message


def test_a_refused_key_gives_one_error_not_stale_texts(tmp_path: Path) -> None:
    text = (
        HEAD + "changes:\n  court:\n    actions:\n      - id: visit\n"
        "        params: {$add: {x: 1}}\n"
    )
    found = errors(tmp_path, text)
    assert [d.code for d in found] == ["schema-unknown-key"], shown(found)


def test_a_stale_text_of_a_change_that_is_fine_is_still_told(tmp_path: Path) -> None:
    """The cascade rule keeps a text-stale of its own: another error elsewhere does not hide
    it."""
    text = (
        SCORING.replace("{formula}", "4 * rubble_sets")
        + "      - {id: score.favors, params: {wigs_per_favor: two}}\n"
    )
    assert sorted(d.code for d in errors(tmp_path, text)) == ["schema-type", "text-stale"]
