"""House-rules handouts: one page per variant with what it changes, redlined word by word.

`word_redline` strikes and inserts only the changed words (a "1" changed to "2" strikes "1",
not the paragraph); every variant of rules/ and every house rule of examples/house-rules/
(copied into rules/variants/ as tests/model/test_house_rule_examples.py does) gets
`reference/variant-NAME.md/.html`, which lists only what changes; `pdf --variant NAME` prints
the folded rules and that handout.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from html import unescape
from pathlib import Path
from typing import Any

import pytest
from conftest import compiled_with

from lisboa_rules.cli import reference as reference_cli
from lisboa_rules.cli.main import main
from lisboa_rules.core.inputs import RULES_ANNOTATED_MD, RULES_HTML, RULES_MD, variant_handout
from lisboa_rules.emit.reference.render import word_redline
from lisboa_rules.pipeline import CompileResult, compile_rules

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "rules"
EXAMPLES = ROOT / "examples" / "house-rules"
NAMES = sorted(p.stem for p in EXAMPLES.glob("*.yaml"))


@pytest.mark.parametrize(("before", "after", "runs"), [
    ("Each set scores 1 wig.", "Each set scores 2 wig.",
     (("same", "Each set scores"), ("removed", "1"), ("added", "2"), ("same", "wig."))),
    ("Most, 2nd-most, 3rd-most", "Most, 3rd-most",
     (("same", "Most,"), ("removed", "2nd-most,"), ("same", "3rd-most"))),
    ("pay the land price", "pay the full land price",
     (("same", "pay the"), ("added", "full"), ("same", "land price"))),
    ("", "Score a wig.", (("added", "Score a wig."),)),
    ("Score a wig.", "", (("removed", "Score a wig."),)),
    ("same words", "same words", (("same", "same words"),)),
    # a changed word's stop is kept as it was: ~~8~~ **6**.
    ("until it shows 8.", "until it shows 6.",
     (("same", "until it shows"), ("removed", "8"), ("added", "6"), ("same", "."))),
    ("shows 8, then", "shows 6, then",
     (("same", "shows"), ("removed", "8"), ("added", "6"), ("same", ", then"))),
])
def test_word_redline_changes_only_the_changed_words(
        before: str, after: str, runs: tuple[tuple[str, str], ...]) -> None:
    assert word_redline(before, after) == runs


def _compiled(tmp: Path, variant: str, text: str) -> CompileResult:
    """The rules with a house-rule file beside them (`extra`: nothing is copied)."""
    house = tmp / f"{variant}.yaml"
    house.write_text(text, encoding="utf-8")
    return compile_rules(RULES, extra=(house,))


def _visible(page: str) -> str:
    return " ".join(unescape(re.sub(r"<[^>]+>", "", page)).split())


HANDOUT_RULE = """\
kind: variant
id: house-rubble
title: Richer rubble
applies: chosen
text: With Richer rubble, each completed rubble set scores more.
source: [seed:000#endgame-scoring]
changes:
  scoring:
    sources:
      - id: score.rubble
        params: {{wigs_per_set: {n}}}
"""


@pytest.mark.parametrize("n", [4, 5, 9])
def test_a_changed_number_is_struck_and_inserted_alone(tmp_path: Path, n: int) -> None:
    files = _compiled(tmp_path, "house-rubble", HANDOUT_RULE.format(n=n)).files
    md = files[variant_handout("house-rubble", "md")]
    page = files[variant_handout("house-rubble", "html")]
    # the rule text: only the number changes
    assert f"Each completed rubble set scores ~~3~~ **{n}** wigs." in md
    assert f"Each completed rubble set scores <del>3</del> <ins>{n}</ins> wigs." in page
    assert "<del>Each" not in page and "~~Each" not in md
    # the rules' own links point into the players' rules
    for href in re.findall(r'href="([^"#]*)#', page):
        assert href == "rules.html"
    # a handout: what changes only (no other rule's text)
    assert "Each Ship in your portfolio scores its hull size" not in md
    assert md.count("\n") < 60


@pytest.mark.parametrize("variant", ["queen", "two-player"])
def test_the_variants_of_rules_have_handouts(variant: str) -> None:
    files = compile_rules(RULES).files
    md, html = files[variant_handout(variant, "md")], files[variant_handout(variant, "html")]
    assert "Id:" not in md and "Forbidden by flag" not in md  # rules text, not a field dump
    assert "<ins>" in html or "<del>" in html
    assert 'class="handout"' in html
    if variant == "two-player":
        # the changed step in its sequence: the setup printed whole, the change in place (the
        # neutral Officials' step is said where its condition of the rules' data holds: with
        # two players only, so it is new there)
        assert "- **8. New:** Then put 1 neutral Official in each office." in md
        assert "- **1.** Shuffle each deck of Political cards." in md
        assert "Most, ~~2nd-most,~~ 3rd-most" in md
    else:
        assert md.count("With the Queen") >= 1


@pytest.mark.sampled(3)
@pytest.mark.parametrize("name", NAMES)
def test_every_house_rule_example_gets_a_handout(tmp_path: Path, name: str) -> None:
    text = (EXAMPLES / f"{name}.yaml").read_text(encoding="utf-8")
    result = _compiled(tmp_path, name, text)
    assert result.ok, [f"{d.code}: {d.message}" for d in result.diagnostics]
    md = result.files[variant_handout(name, "md")]
    html = result.files[variant_handout(name, "html")]
    title = re.search(r"^title: (.+)$", text, re.M)
    assert title is not None
    assert title.group(1).strip().strip("'\"") in _visible(html)
    # something is marked: inserted (or struck) words, a changed step or rule text, or a card
    # the house rule adds, whole, under its "New" badge
    assert re.search(r'<ins>|<del>|<span class="badge new">New</span>', html), name
    assert re.search(r"\*\*[^*]+\*\*|~~[^~]+~~|^#+ New: ", md, re.M), name
    # every link of the handout lands in the players' rules
    anchors = set(re.findall(r'id="([^"]+)"', result.files[RULES_HTML]))
    for anchor in re.findall(r'href="rules\.html#([^"]+)"', html):
        assert anchor in anchors, (name, anchor)
    assert "Id:" not in md and "Forbidden by flag" not in md


def test_pdf_refuses_to_fold_a_variant_that_applies_by_player_count(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Folded, the 2-player rules would print (and play) for every player count."""
    printed: list[str] = []
    monkeypatch.setattr(reference_cli, "choose_printer",
                        lambda backend: ("fake", lambda html, work, target: printed.append(html)))
    out = tmp_path / "dist"
    assert main(["pdf", "--rules", str(RULES), "--out", str(out), "--variant", "two-player"]) == 1
    err = capsys.readouterr().err
    assert "error[fold-by-players]" in err and "two-player.yaml:" in err, err
    assert printed == [] and not out.exists()


@pytest.mark.parametrize("name", ["queen"])
def test_pdf_with_a_variant_prints_the_folded_rules_and_the_handout(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    printed: dict[str, str] = {}

    def fake(html: str, work: Path, target: Path) -> None:
        printed[target.name.lstrip(".").removesuffix(".partial")] = html
        target.write_bytes(b"%PDF-1.4 fake")

    pick: Callable[[str], tuple[str, Any]] = lambda backend: ("fake", fake)  # noqa: E731
    monkeypatch.setattr(reference_cli, "choose_printer", pick)
    out = tmp_path / "dist"
    assert main(["pdf", "--rules", str(RULES), "--out", str(out), "--variant", name]) == 0
    assert sorted(printed) == [f"player-aid-{name}.pdf", f"rules-{name}.pdf",
                               f"variant-{name}.pdf"]
    assert 'class="handout"' in printed[f"variant-{name}.pdf"]
    title = re.search(r"<title>(.*?)</title>", printed[f"rules-{name}.pdf"], re.S)
    assert title is not None
    assert "with The Queen" in title.group(1)  # the variant's title, not its file id
    assert f"({name})" not in title.group(1)
    # the annotated edition instead of the players'
    printed.clear()
    assert main(["pdf", "--rules", str(RULES), "--out", str(tmp_path / "a"),
                 "--edition", "annotated"]) == 0
    assert sorted(printed) == ["player-aid.pdf", "rules-annotated.pdf"]
    assert 'class="tag"' in printed["rules-annotated.pdf"]


@pytest.mark.parametrize(("variant", "heading"), [
    ("queen", "Official variant: The Queen"), ("two-player", "Official variant: Two players")])
def test_an_official_variant_is_headed_as_such(variant: str, heading: str) -> None:
    """The variants of the published game (`official: true`) are not house rules."""
    files = compile_rules(RULES).files
    md, html = files[variant_handout(variant, "md")], files[variant_handout(variant, "html")]
    assert f"# {heading}\n" in md and f"<h1>{heading}</h1>" in html
    assert re.search(r"<title>[^<]*" + re.escape(heading) + "</title>", html)
    assert "house rule" not in (md + html).lower()
    assert f"({variant})" not in md and f"({variant})" not in html


def test_a_house_rule_is_headed_with_its_own_title(tmp_path: Path) -> None:
    files = _compiled(tmp_path, "house-rubble", HANDOUT_RULE.format(n=4)).files
    md, html = files[variant_handout("house-rubble", "md")], files[variant_handout(
        "house-rubble", "html")]
    assert "# House rule: Richer rubble\n" in md
    assert "<h1>House rule: Richer rubble</h1>" in html
    assert "Official variant" not in md + html and "(house-rubble)" not in md + html


def test_a_change_is_labelled_by_its_rule_not_its_data_path() -> None:
    """The players' pages name a changed number by the rule it belongs to (and the words below
    it); the whole data path stays in the annotated edition."""
    files = compile_rules(RULES).files
    md = files[variant_handout("two-player", "md")]
    assert "[Ties in majorities](rules.md#score.ties) › Columns: Most, ~~2nd-most,~~" in md
    # a value a card shows is redlined on that card, in place
    assert "- **Lots:** Books ~~6~~ **5**, Cloth ~~6~~ **5**," in md
    assert "[Build a Store](#build-store) › Lots › Gold: ~~6~~ **5**" in files[RULES_MD]
    assert "Scoring › Majority" not in md and "Nobles › Noble actions" not in md
    assert "Scoring › Majority › Columns" not in files[RULES_MD]
    assert "Scoring › Majority › Columns" in files[RULES_ANNOTATED_MD]


def test_an_action_a_variant_adds_is_headed_by_its_name() -> None:
    """A new action's steps are headed with its name (its rule's title), not its id."""
    house = ROOT / "tests" / "cases" / "house-qa" / "petition.yaml"
    files = compile_rules(RULES, extra=(house,)).files
    md, html = files[variant_handout("petition", "md")], files[variant_handout("petition", "html")]
    assert "\n### New: Petition a Noble\n" in md  # a card of its own, whole
    assert "\npetition:\n" not in md and ">petition<" not in html
    assert "Petition a Noble" in _visible(html)


def _house(name: str) -> tuple[str, str]:
    result = compile_rules(RULES, extra=(EXAMPLES / f"{name}.yaml",))
    assert result.ok, [d.message for d in result.diagnostics]
    return (result.files[variant_handout(name, "md")],
            result.files[variant_handout(name, "html")])


def test_a_new_step_shows_in_its_sequence() -> None:
    """A period-end step a house rule adds prints inside the whole end of the period, numbered
    where it falls, marked new; the steps around it stay as they read."""
    md, html = _house("period-tax")
    section = md[md.index("[End of the period](rules.md#period-end)"):]
    steps = re.findall(r"^- \*\*(\d+)\.( New:)?\*\* \*\*([^*]+)\*\*", section, re.M)
    assert [(n, new.strip(), title) for n, new, title in steps][:4] == [
        ("1", "", "Discard display"), ("2", "", "Rubble wigs"), ("3", "New:", "Tax"),
        ("4", "", "New ships")]
    assert re.search(r'<span class="n">3\.</span> <span class="badge new">New</span> <ins>'
                     r"<strong>Tax</strong>: The Crown", html)


def test_a_new_noble_and_his_action_are_cards() -> None:
    md, html = _house("fourth-noble")
    noble = md[md.index("#### New: Cardinal Saldanha"):]
    for fact in ("- **Title:** the Patriarch", "- **State actions:** Plan · Ship",
                 "- **Noble action:** Endow a church", "- **Trade goods:** Books, Cloth"):
        assert fact in noble[:400], fact
    action = md[md.index("### New: Endow a church"):]
    assert action.startswith("### New: Endow a church\n*The Royal Court › Noble actions, "
                             "after Open a Public Building*")
    assert "- **2.** Pay the endowment, with Influence for what your réis lack..." in action
    assert '<span class="badge new">New</span> Cardinal Saldanha' in html
    assert "endow-church" not in _visible(html) and "patriarch" not in _visible(html)


def test_a_hook_is_titled_by_its_house_rule_and_says_where_it_fires() -> None:
    md, html = _house("guild-purse")
    assert "### New: The guild's purse\n" in md
    assert "*When a store is built, in [Build a Store](rules.md#build-store):*" in md
    assert "Guild purse on store" not in md and "guild-purse-on-store" not in _visible(html)
    # and in place, where Build a Store raises its event: new lines of that card
    card = md[md.index("### [Build a Store](rules.md#build-store)"):md.index("### New:")]
    assert "- **7. New:** The guild's purse: take 2 réis for the new store." in card


def test_a_removed_step_is_struck_in_its_sequence() -> None:
    md, _html = _house("cheap-follow")
    card = md[md.index("### [Follow a Visit](rules.md#follow)"):]
    assert "    - ~~Spend Influence for the visit, as for a visit.~~" in card
    assert "    - **3. New:** The cheap follow: pay 1 real for the follow" in card
    assert "    - **4.** Take one of the three actions of that Noble" in card


def test_a_step_whose_condition_reads_only_the_rules_data_is_said_where_it_holds() -> None:
    """The setup places neutral Officials only when the rules give some
    (`if: rules.game.start.neutral_officials_per_office > 0`): the players' rules of the base
    game (none) leave the step out and number the next one in its place, the two-player rule
    set's (one) say it; the annotated edition, which shows the rules as written, keeps it."""
    files = compile_rules(RULES).files
    base = _setup_of(files[RULES_MD])
    assert "neutral Officials in each office" not in base
    assert re.search(r"^7\. Every Noble's office and plaza start empty\.\n"
                     r"8\. Deal each player \d+ cards", base, re.M)
    assert "Then put 0 neutral Officials in each office." in files[RULES_ANNOTATED_MD]
    # the two-player rule set's (its handout: the setup as it reads there, the step new)
    two = files[variant_handout("two-player", "md")]
    assert "- **8. New:** Then put 1 neutral Official in each office.\n" in two


def _setup_of(md: str) -> str:
    """The setup's chapter of a players' rules page."""
    text = md[md.index('<a id="setup"></a>'):]
    return text[:text.index("\n## ")]


def test_a_variant_for_one_player_count_says_a_count_formula_as_its_value(
        tmp_path: Path) -> None:
    """Two-player variant: the shipyard's count is the base game's formula (the number of
    players minus 1), which the variant does not change: its handout says the count with two
    players (the engine's), not the formula as if it were a change. A variant for one number
    of players says such a formula as its value then; a chosen one keeps the words."""
    files = compile_rules(RULES).files
    md = files[variant_handout("two-player", "md")]
    assert "fewer ships" not in md and "the number of players minus" not in md
    assert re.search(r"^- \[The shipyard\]\(rules\.md#components\.shipyard\): As in every "
                     r"game, the shipyard's count follows the number of players: with 2, it "
                     r"holds 1 ship of each colour\.$", md, re.M)
    assert "The shipyard holds 1 ship of each colour: as in every game" in md
    note = ("callouts:\n  - rule: components.shipyard\n    text: 'Ships per colour: "
            "{components.shipyard.per_color}.'\n    source: [facts:§23]\nchanges:\n")
    for applies, said in (("applies: {players: [3]}", "2"),
                          ("applies: chosen", "the number of players minus 1")):
        house = tmp_path / applies.split()[-1].strip("[]}") / "house-ships.yaml"
        house.parent.mkdir()
        house.write_text(HANDOUT_RULE.format(n=4).replace("house-rubble", "house-ships")
                         .replace("applies: chosen", applies).replace("changes:\n", note, 1),
                         encoding="utf-8")
        result = compile_rules(RULES, extra=(house,))
        assert result.ok, [d.message for d in result.diagnostics]
        assert f"Ships per colour: {said}." in result.files[variant_handout("house-ships", "md")]


def test_the_queen_handout_defines_her_reign_and_names_it_as_the_condition() -> None:
    """The Queen's hook has one step, which says what her reign is ("When card 57 is turned
    face up, the Queen reigns: from then on ..."). Take a Decree's new condition names the
    flag that forbids it by its name in the data ("the Queen reigns"), the words that step
    defines, not the engine's refusal ("nobody can take this action any more")."""
    result = compile_rules(RULES)
    assert result.compiled is not None
    m = next(rs.model for rs in result.compiled.rulesets if rs.key == ("queen",))
    flag = next(f for f in m.data["game"]["flags"] if f["id"] == "queen")
    said = flag["name"][:1].lower() + flag["name"][1:]
    hook = next(h for h in m.data["effects"]["hooks"] if h["id"] == "queen-reigns")
    step = " ".join(hook["steps"][0]["then"][0]["text"].split())
    assert said in step and step.index(said) + len(said) < len(step) - 1  # it goes on: what
    md = result.files[variant_handout("queen", "md")]
    assert step in md
    assert f"- **1. New:** *Not possible when:* {said}\n" in md
    assert "nobody can take this action any more" not in md
    # the engine still refuses with its own words (rules/nobles.yaml forbidden_reason)
    assert m.data["nobles"]["forbidden_reason"] in result.files["lisboa_engine.py"]


def test_a_new_hook_said_in_place_by_a_procedure_of_no_steps_is_printed_once() -> None:
    """The Queen's hook has one step; the procedure that raises its event (Reveal the top
    card) has no steps of its own, so under the Queen its only line is that step said in place. The
    handout prints the step once, on the hook's card, which says where it fires; a card with
    steps of its own keeps a hook's lines among them (guild-purse's Build a Store)."""
    result = compile_rules(RULES)
    assert result.compiled is not None
    queen = next(v for v in result.compiled.variants if v.id == "queen")
    m = next(rs.model for rs in result.compiled.rulesets if rs.key == ("queen",))
    hook = next(h for h in m.data["effects"]["hooks"] if h["id"] == "queen-reigns")
    step = " ".join(hook["steps"][0]["then"][0]["text"].split())
    md = result.files[variant_handout("queen", "md")]
    html = _visible(result.files[variant_handout("queen", "html")])
    assert md.count(step) == 1 and html.count(step) == 1
    card = md[md.index(f"### New: {queen.title}\n"):]
    assert ("*When a card of the display is turned face up, in [Reveal the top card]"
            "(rules.md#procedure-reveal-top):*") in card
    assert f"- **1.** {step}" in card
    assert "### [Reveal the top card]" not in md


def test_the_players_variant_pages_redline_the_steps_as_the_players_edition_says_them(
        ) -> None:
    """rules.md's page of a variant lists the steps that read differently as the players'
    edition says them, the same lines its handout marks: the neutral Officials' step, which
    the base game's players' setup does not say (its condition of the rules' data does not
    hold there), is new with two players, not "Then put ~~0~~ **1** neutral Officials";
    the annotated edition redlines the steps as written."""
    result = compile_rules(RULES)
    assert result.compiled is not None
    md, annotated = result.files[RULES_MD], result.files[RULES_ANNOTATED_MD]
    for v in result.compiled.variants:
        page = md[md.index(f'<a id="variant-{v.id}"></a>'):]
        page = page[:page.index("\n<a id=", 1)]
        steps = page[page.index("Steps that read differently"):]
        listed = re.findall(r"^ *- (?:\*\*|~~)?(.+?)(?:\*\*|~~)?$", steps, re.M)
        handout = result.files[variant_handout(v.id, "md")]
        marked = re.findall(r"^ *- (?:~~|\*\*\d+\. New:\*\* |\*\*\d+\.\*\* )(.+?)(?:~~)?$",
                            handout, re.M)
        assert listed and all(x in marked for x in listed), (v.id, listed, marked)
    two = md[md.index('<a id="variant-two-player"></a>'):]
    assert "- **Then put 1 neutral Official in each office.**" in two
    assert "~~0~~ **1** neutral Officials" not in two
    assert ("- Then put ~~0~~ **1** neutral ~~Officials~~ **Official** in each office."
            in annotated)


SIX_DECREES = """\
kind: variant
id: decree-six
title: Six Decrees
applies: chosen
text: The Decree display shows 6 Decrees.
source: [seed:001#take-a-decree]
changes:
  components:
    decree_display:
      size: 6
"""


def test_a_handout_names_every_card_and_the_edition_it_changes(tmp_path: Path) -> None:
    # the turn's steps print under the section heading "Turn order" in the rules, with no
    # title of their own: the handout's card is named by that heading, not "### []"
    chosen = compiled_with(SIX_DECREES, tmp_path)
    md = chosen.files["reference/variant-decree-six.md"]
    assert "### [](" not in md and "### [Turn order](rules.md#turn)" in md
    assert "<a href=\"rules.html#turn\"></a>" not in chosen.files[
        "reference/variant-decree-six.html"]
    assert "changes to the standard game" in md
    # folded in, the rules are "the game with Six Decrees": each handout says so
    folded = compiled_with(SIX_DECREES, tmp_path, fold=True)
    queen = folded.files["reference/variant-queen.md"]
    assert "changes to the game with Six Decrees ·" in queen
    assert "changes to the with" not in folded.files["reference/variant-queen.html"]


def test_a_chosen_house_rule_says_which_note_of_another_variant_it_drops() -> None:
    # examples/house-rules/stores-by-count.yaml drops the two-player note on the stores'
    # columns (`$remove: true`): where both are in force, that note does not hold, and the
    # rules say so at the rule, in the house rule's callout, with the note's words
    house = EXAMPLES / "stores-by-count.yaml"
    assert "{of: two-player, id: two-player.stores-columns, $remove: true}" in house.read_text(
        encoding="utf-8")
    built = compile_rules(RULES, (), extra=[house])
    assert built.ok, [d.message for d in built.diagnostics]
    said = ("**◆ Stores by count:** Where Two players applies too, its note does not hold: "
            "With 2 players, only the most and 3rd-most columns are used.")
    assert said in built.files[RULES_MD]
    assert said in built.files["reference/player-aid.md"]


def test_a_new_titled_step_is_bold_once_in_the_rules_variant_page() -> None:
    # examples/house-rules/period-tax.yaml adds a titled step to the end of the period: the
    # rules' page of the variant sets its title and its words in bold each, not the whole
    # line around the bold title ("****Tax**: ...**", Markdown shown raw)
    built = compile_rules(RULES, (), extra=[EXAMPLES / "period-tax.yaml"])
    assert built.ok, [d.message for d in built.diagnostics]
    md = built.files[RULES_MD]
    page = md[md.index('<a id="variant-period-tax"></a>'):]
    steps = page[page.index("Steps that read differently"):page.index("\n<a id=", 1)]
    assert "- **Tax**: **The Crown's tax:" in steps
    assert "***" not in steps


def test_a_changed_cost_of_an_action_is_named_not_shown_as_its_id() -> None:
    # examples/house-rules/cheap-follow.yaml drops the Follow's lacking cost: the rules' page
    # of the variant names the cost it drops, as the handout does, not its id
    built = compile_rules(RULES, (), extra=[EXAMPLES / "cheap-follow.yaml"])
    assert built.ok, [d.message for d in built.diagnostics]
    md = built.files[RULES_MD]
    page = md[md.index('<a id="variant-cheap-follow"></a>'):]
    page = page[:page.index("\n<a id=", 1)]
    assert "Lacking cost: ~~Paying Influence with wigs~~" in page
    assert "~~wigs-for-influence~~" not in page


def test_the_queen_page_says_what_a_visit_to_her_gives() -> None:
    # the Visit rule says you must take the Noble action and cannot visit a Noble whose action
    # you cannot carry out; the Queen has none, yet the engine lets you visit her for a State
    # action: the page did not say so, and a player concluded she could not be visited
    files = compile_rules(RULES).files
    for page in (files[RULES_MD], files[variant_handout("queen", "md")]):
        assert "once the Queen reigns you may still visit her" in page
