"""The reference prints the steps the engine runs: each Noble action's card lists its steps'
words in order, the Effects chapter lists every effect, procedure and hook, and a variant's
page redlines the steps it adds. Words come through the one encoder (core/encode.py).
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lisboa_rules.core.encode import html_text, md_text, visible
from lisboa_rules.core.inputs import (
    RULES_ANNOTATED_HTML,
    RULES_ANNOTATED_MD,
    RULES_HTML,
    RULES_MD,
)
from lisboa_rules.emit import ENGINE, emit_engine
from lisboa_rules.emit.engine.procs import lower
from lisboa_rules.emit.reference import render as reference
from lisboa_rules.lang.tree import Choose, ForEach, Require, branches
from lisboa_rules.model.compiled import Compiled
from lisboa_rules.pipeline import compile_rules

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "rules"


@pytest.fixture(scope="module")
def files(compiled: Compiled) -> dict[str, str]:
    lowered = lower([rs.model for rs in compiled.rulesets], compiled.names)
    return reference.render(compiled, emit_engine(compiled, lowered)[ENGINE])


def edited(
    tmp_path: Path, edits: dict[str, list[tuple[str, str]]], extra: dict[str, str] | None = None
) -> Path:
    """A copy of rules/ with exact text replacements (each must match once) and new files."""
    target = tmp_path / "rules"
    shutil.copytree(RULES, target)
    for rel, pairs in edits.items():
        path = target / rel
        text = path.read_text(encoding="utf-8")
        for old, new in pairs:
            assert text.count(old) == 1, f"{rel}: {old!r} found {text.count(old)} times"
            text = text.replace(old, new)
        path.write_text(text, encoding="utf-8")
    for rel, text in (extra or {}).items():
        (target / rel).write_text(text, encoding="utf-8")
    return target


def build(rules: Path, variants: tuple[str, ...] = ()) -> dict[str, str]:
    result = compile_rules(rules, variants)
    assert result.ok, [f"{d.code}: {d.message}" for d in result.diagnostics]
    return result.files


def section(page: str, fmt: str, anchor: str) -> str:
    """The part of a page that belongs to one card, up to the next card (md) or section."""
    if fmt == "md":
        start = page.index(f'<a id="{anchor}"></a>')
        end = page.find('\n<a id="', start + 1)
    else:
        start = page.index(f'id="{anchor}"')
        end = page.find("<section", start + 1)
    return page[start : end if end >= 0 else len(page)]


def enc(fmt: str, text: str) -> str:
    return md_text(text) if fmt == "md" else str(html_text(text))


def assert_in_order(hay: str, needles: list[str]) -> None:
    pos = 0
    for n in needles:
        at = hay.find(n, pos)
        assert at >= 0, f"{n!r} not found after position {pos} in:\n{hay}"
        pos = at + len(n)


def expected_words(compiled: Compiled, pid: str) -> list[str]:
    """The words a procedure's card prints, in order: each step's text (the longest part
    between its placeholders), or a require's reason
    (up to its first placeholder, a value of the game in play). The players' edition may join
    a branch's steps into one sentence ("If ..., take the réis; otherwise ..."): the words are
    compared without their first letter and their final full stop."""
    ps = compiled.base.model.procs
    assert ps is not None
    out = []
    for top in ps.procs[pid].steps:
        for s in top.walk():
            if s.text:  # its longest words between placeholders (they print the values)
                out.append(max(re.split(r"\{[^{}]*\}", s.text), key=len).strip())
            elif isinstance(s, Require) and s.reason is not None:
                out.append(s.reason.split("{")[0].strip())
    return [w[1:].rstrip(".") for w in out if w]


FORMATS = {"md": RULES_MD, "html": RULES_HTML}
# the annotated edition: the measures' names and the variant pages' full redline (every step,
# the unchanged ones too); the players' edition shows the changed steps only
ANNOTATED = {"md": RULES_ANNOTATED_MD, "html": RULES_ANNOTATED_HTML}
NOBLE_ACTIONS = ("build-store", "take-decree", "open-building")


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("action", NOBLE_ACTIONS)
def test_noble_action_card_lists_its_steps_in_order(
    compiled: Compiled, files: dict[str, str], fmt: str, action: str
) -> None:
    card = section(files[FORMATS[fmt]], fmt, action)
    wanted = expected_words(compiled, action)
    assert len(wanted) >= 3
    na = next(a for a in compiled.base.model.noble_actions if a.id == action)
    prose = enc(fmt, na.rule.text.split("{")[0].strip())
    assert_in_order(card, [prose, *(enc(fmt, w) for w in wanted)])  # after the prose
    if fmt == "md":
        assert re.search(r"^1\. ", card, re.M) and re.search(rf"^{len(wanted)}\. ", card, re.M)
    else:
        assert '<ol class="steps proc">' in card


@pytest.mark.parametrize("fmt", FORMATS)
def test_require_reasons_are_conditions(files: dict[str, str], fmt: str) -> None:
    card = section(files[FORMATS[fmt]], fmt, "build-store")
    label = "*Not possible when:*" if fmt == "md" else "Not possible when:</em>"
    assert_in_order(
        card,
        [
            label,
            enc(fmt, "you have no store left to build"),
            label,
            enc(fmt, "you cannot pay the land price"),  # its `text:`, no value of play
        ],
    )
    assert "{price}" not in card


def test_a_condition_of_a_choice_is_said_with_it_not_as_a_step(
    compiled: Compiled, files: dict[str, str]
) -> None:
    """A `require` right after a choice with words, testing what was chosen (the Visit: "You
    may take one of this Noble's two State actions", then "a good sits on that State action
    this turn"), is a condition of that choice: the players' edition says it at the end of the
    choice's line, not as a numbered step of its own; the annotated edition keeps the steps
    as written."""
    ps = compiled.base.model.procs
    assert ps is not None
    pairs = [(act.rule, a, b) for act in ps.actions.values()
             for a, b in zip(act.steps, act.steps[1:], strict=False)
             if isinstance(a, Choose) and a.text and isinstance(b, Require) and b.reason
             and re.search(rf"\b{a.as_}\b", str(b.cond))]
    assert pairs  # the Visit's choice of a State action and the good that blocks it
    for card, choice, cond in pairs:
        assert cond.reason is not None and choice.text is not None
        md = section(files[RULES_MD], "md", card)
        words = md_text(choice.text.rstrip("."))
        line = next(x for x in md.splitlines() if words in x)
        assert line.endswith(f"{words} (not possible when {md_text(cond.reason)}).")
        assert md_text(cond.reason) not in md.replace(line, "")
        assert_in_order(section(files[RULES_ANNOTATED_MD], "md", card), [
            md_text(choice.text), f"*Not possible when:* {md_text(cond.reason)}"])
    visit = section(files[RULES_HTML], "html", "visit")
    assert enc("html", "without paying a good (not possible when a good sits on") in visit


def test_a_step_done_for_each_of_several_chosen_items_does_not_call_them_it(
    compiled: Compiled,
) -> None:
    """A choice of several items ("Take Decrees from the display (one, or more ...)") and
    then a step done for each of them: its words follow the choice's, so they name what is
    done with each ("Put each Decree you take face up"), not "it", which has nothing to refer
    to after a plural."""
    def lists(steps: tuple[Any, ...]) -> Iterator[tuple[Any, ...]]:  # each list of steps
        yield steps
        for s in steps:
            for nested in branches(s):
                yield from lists(nested)

    seen = 0
    for rs in compiled.rulesets:
        ps = rs.model.procs
        assert ps is not None
        for proc in (*ps.procs.values(), *ps.actions.values()):
            for steps in lists(proc.steps):
                chosen = {c.as_ for c in steps if isinstance(c, Choose) and c.several and c.text}
                for each in steps:
                    if isinstance(each, ForEach) and each.source in chosen and not each.text:
                        seen += 1
                        words = [w.text for w in each.walk() if w.text]
                        assert not any(re.search(r"\bit\b", w) for w in words), \
                            (rs.key, proc.id, words)
    assert seen  # Take a Decree takes one Decree or more


@pytest.mark.parametrize("fmt", FORMATS)
def test_effects_chapter_lists_every_effect_procedure_and_hook(
    compiled: Compiled, files: dict[str, str], fmt: str
) -> None:
    page = files[FORMATS[fmt]]
    ps = compiled.base.model.procs
    assert ps is not None
    hooks = {h for hs in ps.hooks.values() for h in hs}
    listed = [p for p in ps.procs if p not in ps.this]
    assert "rubble" in listed and "pay-reis" in listed and "rubble-marker" in hooks
    for pid in listed:
        prefix = "effect" if pid in ps.effects else "hook" if pid in hooks else "procedure"
        anchor = reference._slug(f"{prefix}-{pid}")
        assert_in_order(
            section(page, fmt, anchor), [enc(fmt, w) for w in expected_words(compiled, pid)]
        )
    hook = section(page, fmt, "hook-rubble-marker")
    assert enc(fmt, "When a rubble set is completed, in ") in hook
    # a `do` step links to the card of what it carries out in the annotated edition; the
    # players' edition says that card's words in place
    link = "](#effect-rubble)" if fmt == "md" else 'href="#effect-rubble"'
    assert link in section(files[ANNOTATED[fmt]], fmt, "open-building")
    assert link not in section(page, fmt, "open-building")
    assert enc(fmt, "Every full set of cubes completes a rubble set") in section(
        page, fmt, "open-building")
    for m in ("treasury_value", "warehouse_room"):
        assert f"measure-{m}".replace("_", "-") in files[ANNOTATED[fmt]]
        assert f"measure-{m}".replace("_", "-") not in page


# -- house rules ------------------------------------------------------------------------------

# the step of rules/nobles.yaml a house rule edits (the land price paid)
PAY_STEP = (
    "      - {id: build-store.pay, do: pay-reis, with: {amount: price, influence_part: "
    "\"price_influence if price_influence is not None else 0\"}, text: ...pay the land price...}\n"
)
NEW_STEP = PAY_STEP + """\
      - if: rubble_sets > 0
        text: "Ring the builders' bell, then:"
        then:
          - gain: {wigs: 1}
            text: "score a wig for your {game.start.hand} cards and {rubble} cube"
          - {gain: {wigs: 0}, text: "keep {nothing.here} as it is"}
"""

NEW_HOOK = """\
  - id: rubble-cheer
    on: rubble-set-completed
    steps:
      - {gain: {wigs: 1}, text: The crowd cheers and you score a wig.}
"""


@pytest.fixture(scope="module")
def house(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    rules = edited(
        tmp_path_factory.mktemp("house"),
        {
            "nobles.yaml": [
                (PAY_STEP, NEW_STEP)
            ]
        },
    )
    effects = rules / "effects.yaml"
    text = effects.read_text(encoding="utf-8")
    assert text.rstrip().splitlines()[-1].startswith("          - {move:")  # hooks come last
    effects.write_text(text + NEW_HOOK, encoding="utf-8")
    return build(rules)


@pytest.mark.parametrize("fmt", FORMATS)
def test_house_rule_step_shows_in_place(house: dict[str, str], fmt: str) -> None:
    card = section(house[FORMATS[fmt]], fmt, "build-store")
    card = re.sub(r'<span class="v">([^<]*)</span>', r"\1", card)  # a filled-in value
    assert_in_order(
        card,
        [
            enc(fmt, "...pay the land price..."),
            enc(fmt, "Ring the builders' bell, then:"),
            enc(fmt, "score a wig for your 5 cards and 1 cube"),  # filled in
            enc(fmt, "keep {nothing.here} as it is"),  # printed as written
            enc(fmt, "...and take the rubble cubes."),
        ],
    )
    if fmt == "md":  # the nested steps are a sub-list of their parent, numbered again
        assert re.search(r"^6\. Ring the builders' bell, then:\n   1\. score a wig", card, re.M)
        assert re.search(r"^   2\. keep \{nothing.here\} as it is\n7\. \.\.\.and take", card, re.M)
    else:
        assert re.search(
            r"<li>Ring the builders&#39; bell, then:\s*<ol class=\"steps proc\">"
            r"\s*<li>score a wig",
            card,
        )


@pytest.mark.parametrize("fmt", FORMATS)
def test_house_rule_hook_shows_in_place(house: dict[str, str], fmt: str) -> None:
    page = house[FORMATS[fmt]]
    hooks = page[page.index('id="hooks-list"') :]
    assert_in_order(
        hooks,
        [
            "hook-rubble-marker",
            enc(fmt, "When a rubble set is completed, in "),
            enc(fmt, "...and place it on a Noble of your choice."),
            "hook-rubble-cheer",
            enc(fmt, "When a rubble set is completed, in "),
            enc(fmt, "The crowd cheers and you score a wig."),
        ],
    )


VARIANT = """\
kind: variant
id: house-steps
title: Builders' bonus
applies: chosen
text: Building a store also scores a wig.
source: [seed:001#action-3-visit-a-noble]
changes:
  nobles:
    noble_actions:
      - id: {action}
        steps:
          - $add: true
            id: house-bonus
            gain: {{wigs: 1}}
            text: {text}
"""


@pytest.mark.parametrize(
    ("action", "text", "before"),
    [
        ("build-store", "Score a builder's wig.", "...and take the rubble cubes."),
        ("open-building", "Cheer for the {game.start.hand} builders.", "Take the rubble cubes."),
    ],
)
def test_variant_page_redlines_an_added_step(
    tmp_path: Path, action: str, text: str, before: str
) -> None:
    rules = edited(
        tmp_path,
        {},
        {"variants/house-steps.yaml": VARIANT.format(action=action, text=json.dumps(text))},
    )
    shown = text.replace("{game.start.hand}", "5")
    files = build(rules)
    for fmt, path in ANNOTATED.items():
        page = files[path]
        assert enc(fmt, shown) not in section(page, fmt, action)  # not in the base game
        redline = page[page.index("variant-house-steps") :]
        redline = redline[redline.index("Steps that read differently") :]
        redline = re.sub(r'<span class="v">([^<]*)</span>', r"\1", redline)
        if fmt == "md":
            assert_in_order(
                redline,
                [
                    f"[{md_text(_title(action))}](#{action})",
                    f"- {md_text(before)}",
                    f"- **{md_text(shown)}**",
                ],
            )
        else:
            assert_in_order(
                redline,
                [f'href="#{action}"', str(html_text(before)), f"<ins>{html_text(shown)}</ins>"],
            )
    folded = build(rules, ("house-steps",))
    for fmt, path in FORMATS.items():  # built in: the card lists it last, in place
        card = re.sub(r'<span class="v">([^<]*)</span>', r"\1", section(folded[path], fmt, action))
        assert_in_order(card, [enc(fmt, before), enc(fmt, shown)])


@pytest.mark.parametrize("action", ["build-store", "take-decree"])
def test_diff_command_lists_an_added_step(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    action: str,
) -> None:
    from lisboa_rules.cli.main import main

    rules = edited(
        tmp_path,
        {},
        {"variants/house-steps.yaml": VARIANT.format(action=action, text='"Shout hooray."')},
    )
    monkeypatch.chdir(tmp_path)
    assert main(["diff", "house-steps", "--rules", str(rules)]) == 0
    out = capsys.readouterr().out
    assert f"nobles.noble_actions[{action}].steps[house-bonus]: (absent) -> " in out
    assert "Shout hooray." in out


def _title(action: str) -> str:
    return {"build-store": "Build a Store", "open-building": "Open a Public Building"}[action]


# -- hostile words ----------------------------------------------------------------------------

HOSTILE = [
    "<script>alert(1)</script> done",
    "--> <!-- x",
    "# 1. **bold** [link](http://e.x) | cell ` tick _u_",
    "1. a list? ~strike~ &amp; \u202e",
]


@pytest.mark.sampled(4)
@pytest.mark.parametrize("where", ["noble step", "hook step", "require reason"])
@pytest.mark.parametrize("bad", HOSTILE)
def test_hostile_step_words_are_encoded(tmp_path: Path, where: str, bad: str) -> None:
    q = json.dumps(bad)
    if where == "noble step":
        edits = {"nobles.yaml": [("text: Open its Public Building.}", f"text: {q}}}")]}
        anchor = "open-building"
    elif where == "hook step":
        edits = {
            "effects.yaml": [("text: ...and place it on a Noble of your choice.}", f"text: {q}}}")]
        }
        anchor = "hook-rubble-marker"
    else:
        edits = {"effects.yaml": [("reason: the Plan supply is empty", f"reason: {q}")]}
        anchor = "effect-plan"
    files = build(edited(tmp_path, edits))
    md = section(files[RULES_MD], "md", anchor)
    html = section(files[RULES_HTML], "html", anchor)
    shown_md = visible(reference.md_rich(reference.plain(bad)))  # what the template prints
    assert shown_md in md
    assert str(html_text(bad)) in html
    for raw in ("<script", "-->", "<!--", "\u202e"):
        assert raw not in html
        assert not re.search(r"(?<!\\)" + re.escape(raw), md), raw  # only as `\<`, `\>`
    assert "[link](http" not in md and "**bold**" not in md
    for line in md.splitlines():  # nothing the data holds starts a heading or a list item
        if shown_md in line:
            rest = re.sub(r"^\s*\d+\. (\*Not possible when:\* )?", "", line)
            assert not re.match(r"\s*([#>+=-]|\d+[.)])", rest), line


@pytest.mark.parametrize(
    ("words", "md", "html"),
    [
        (
            "See [[build-store]] first.",
            "See [Build a Store](#build-store) first.",
            'See <a href="#build-store">Build a Store</a> first.',
        ),
        ("See [[nowhere]] first.", r"See \[\[nowhere\]\] first.", "See [[nowhere]] first."),
        (
            "[[score.stores]] and [[no.such]]",
            r"[Store majorities](#score.stores) and \[\[no.such\]\]",
            '<a href="#score.stores">Store majorities</a> and [[no.such]]',
        ),
    ],
)
def test_rule_references_in_step_words(tmp_path: Path, words: str, md: str, html: str) -> None:
    """A step's words link the rules they name; a name of no rule is printed as written (the
    build does not fail on the reference's side)."""
    q = json.dumps(words)
    rules = edited(tmp_path, {"effects.yaml": [("text: Take the rubble cubes.}", f"text: {q}}}")]})
    files = build(rules)
    assert md in section(files[RULES_MD], "md", "effect-rubble")
    assert html in section(files[RULES_HTML], "html", "effect-rubble")


@pytest.mark.parametrize(
    ("step", "place", "words"),
    [
        (
            "build-store.pay",
            "$after",
            ["...pay the land price...", "NEW", "...and take the rubble cubes."],
        ),
        (
            "build-store.rubble",
            "$before",
            ["...pay the land price...", "NEW", "...and take the rubble cubes."],
        ),
    ],
)
def test_variant_step_placed_by_id_shows_in_place(
    tmp_path: Path, step: str, place: str, words: list[str]
) -> None:
    """A variant that places a new step after (or before) a step of the base by its id (the
    ids rules/nobles.yaml gives the steps of a Noble action): the redline and the folded card
    show it there, not at the end."""
    new = "Ring the bell of the guild."
    variant = VARIANT.format(action="build-store", text=json.dumps(new)).replace(
        "            id: house-bonus\n",
        f"            id: house-bonus\n            {place}: {step}\n",
    )
    rules = edited(tmp_path, {}, {"variants/house-steps.yaml": variant})
    want = [new if w == "NEW" else w for w in words]
    page = build(rules)[RULES_ANNOTATED_MD]
    redline = page[page.index("variant-house-steps") :]
    redline = redline[redline.index("Steps that read differently") :]
    assert_in_order(redline, [md_text(want[0]), f"- **{md_text(new)}**", md_text(want[2])])
    folded = build(rules, ("house-steps",))
    for fmt, path in FORMATS.items():
        assert_in_order(section(folded[path], fmt, "build-store"), [enc(fmt, w) for w in want])
