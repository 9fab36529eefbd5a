"""Two editions from one document: the players' rules (rules.md/.html) and the annotated one.

The annotated edition keeps every rule id, example id, step id, source line and assumption mark
the reference has; the players' edition prints none of them: assumptions are numbered notes
listed at the end with what they assume, why, where they stand and the sources to check. Both
editions say the same rules (the same text for every rule), and the players' one has no
engine-speak: what the rules ask of a player, not what a program does.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from lisboa_rules.core.inputs import (
    RULES_ANNOTATED_HTML,
    RULES_ANNOTATED_MD,
    RULES_HTML,
    RULES_MD,
)
from lisboa_rules.emit.reference.words import plain_text
from lisboa_rules.model.compiled import Compiled
from lisboa_rules.pipeline import compile_rules

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "rules"


@pytest.fixture(scope="module")
def files() -> dict[str, str]:
    result = compile_rules(RULES)
    assert result.ok
    return result.files


class _Text(HTMLParser):
    """The visible text of a page (no comments, no style, no attributes)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("style", "script", "title"):
            self.skip += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in ("style", "script", "title"):
            self.skip -= 1

    def handle_data(self, data: str) -> None:
        if not self.skip:
            self.parts.append(data)


def visible(html: str) -> str:
    p = _Text()
    p.feed(html)
    return " ".join("".join(p.parts).split())


def md_visible(md: str) -> str:
    return re.sub(r"<!--.*?-->", "", md, flags=re.S)


def _tokens(compiled: Compiled) -> dict[str, list[str]]:
    """Every id and source token the annotated reference prints, from the data: (Markdown,
    HTML) needles per kind."""
    m = compiled.base.model
    rule_ids = [r.id for r in m.rules]
    example_ids = [e.id for e in m.examples]
    steps = [s.id for s in m.period_end]
    # the rules printed as cards carry a source line: `[facts:§6](#source-facts-6) · assumed:
    # [†5 reis-before-influence](#assumption-...)`; those printed as a step of a list (the turn,
    # the end of the period) their marks only
    listed = {t["id"] for t in m.value("flow", "turn")} | set(steps)
    carded = [r for r in m.rules if r.id not in listed]
    slug = lambda s: re.sub(r"[^a-z0-9.]+", "-", s.lower()).strip("-")  # noqa: E731
    sources = sorted({s for r in carded for s in r.provenance.sources})
    marks = {a.id: i + 1 for i, a in enumerate(m.assumptions)}
    lines = sorted({a for r in carded for a in r.provenance.assumptions})
    used = sorted({a for r in m.rules for a in r.provenance.assumptions})
    return {
        "md": [f"`{i}`" for i in rule_ids + example_ids + steps]
        + [f"[{s}](#source-{slug(s)})" for s in sources]
        + [f"[†{marks[a]} {a}](#assumption-{a})" for a in lines]
        + [f"[†{marks[a]}](#assumption-{a})" for a in used]
        + [f'<a id="source-{slug(s)}"></a>' for s, _ in m.sources]
        + [f'<a id="assumption-{a.id}"></a>' for a in m.assumptions]
        + [f'<a id="difference-{d.id}"></a>' for d in m.differences],
        "html": [f'<a class="tag" href="#{i}">{i}</a>' for i in rule_ids + example_ids + steps]
        + [f'<a href="#source-{slug(s)}">{s}</a>' for s in sources]
        + [f">†{marks[a]} {a}</a>" for a in lines]
        + [f'#assumption-{a}" title="{a}: ' for a in used]
        + [f'id="source-{slug(s)}"' for s, _ in m.sources]
        + [f'id="assumption-{a.id}"' for a in m.assumptions]
        + ['class="prov"'],
    }


def test_the_annotated_edition_keeps_every_id_source_and_mark(
        compiled: Compiled, files: dict[str, str]) -> None:
    tokens = _tokens(compiled)
    assert len(tokens["md"]) > 100
    for page, fmt in ((RULES_ANNOTATED_MD, "md"), (RULES_ANNOTATED_HTML, "html")):
        missing = [t for t in tokens[fmt] if t not in files[page]]
        assert not missing, (page, missing[:10])
    # and the steps as the engine runs them, for rules lawyers
    assert "*As the engine runs it:*" in files[RULES_ANNOTATED_MD]
    assert "As the engine runs it" in files[RULES_ANNOTATED_HTML]


def test_the_annotated_edition_has_every_anchor_of_the_players_edition(
        files: dict[str, str]) -> None:
    players = set(re.findall(r'<a id="([^"]+)"></a>', files[RULES_MD])) - {
        a for a in re.findall(r'<a id="([^"]+)"></a>', files[RULES_MD]) if a.startswith("note")}
    annotated = set(re.findall(r'<a id="([^"]+)"></a>', files[RULES_ANNOTATED_MD]))
    assert players and players <= annotated, sorted(players - annotated)[:10]


def test_the_players_edition_prints_no_ids_and_no_source_lines(
        compiled: Compiled, files: dict[str, str]) -> None:
    m = compiled.base.model
    md, html = md_visible(files[RULES_MD]), files[RULES_HTML]
    text = visible(html)
    for r in m.rules:
        assert f"`{r.id}`" not in md, r.id
        assert f'class="tag" href="#{r.id}"' not in html, r.id
    for e in m.examples:
        assert f"`{e.id}`" not in md
    for src in {s for r in m.rules for s in r.provenance.sources}:
        assert src not in text, src
        assert src not in md, src
    assert "assumed:" not in text and "assumed:" not in md
    assert "†" not in text and "†" not in md
    assert 'class="prov"' not in html and "<sub>" not in md
    assert "As the engine runs it" not in text and "As the engine runs it" not in md


def test_the_players_edition_notes_every_assumption(
        compiled: Compiled, files: dict[str, str]) -> None:
    """A mark is a number linking to its note; the note says what is assumed, why, where it
    stands and which sources to check."""
    m = compiled.base.model
    md, html = files[RULES_MD], files[RULES_HTML]
    titles = dict(m.sources)
    for n, a in enumerate(m.assumptions, start=1):
        row = next(line for line in md.splitlines() if f'<a id="note-{n}"></a>' in line)
        assert a.reason.split()[0] in row, row
        for r in m.rules:
            if a.id in r.provenance.assumptions:
                assert f"](#{r.id})" in row, (a.id, r.id)
                for s in r.provenance.sources:
                    assert titles[s].split(":")[0] in row, (a.id, s)
        assert f'id="note-{n}"' in html
    used = {a for r in m.rules for a in r.provenance.assumptions}
    numbers = {a.id: i for i, a in enumerate(m.assumptions, start=1)}
    for a in used:
        assert f"](#note-{numbers[a]})</sup>" in md, a
        assert f'href="#note-{numbers[a]}"' in html, a


def test_every_note_whose_mark_prints_says_where_and_what_to_check(
        compiled: Compiled, files: dict[str, str]) -> None:
    """A note marked at a table, a variant's callout or a variant (not a rule: the cards, the
    Decrees, the ships, the Queen, the neutral Officials) once printed empty "Where" and "Check
    in" cells: a reader with the rulebook was told a value is assumed and not where it stands
    or what to check it against."""
    m = compiled.base.model
    md = files[RULES_MD]
    notes_at = md.index('<a id="notes"></a>')
    body, notes = md[:notes_at], md[notes_at:]
    titles = dict(m.sources)
    for n, _ in enumerate(m.assumptions, start=1):
        row = next(line for line in notes.splitlines() if f'<a id="note-{n}"></a>' in line)
        where = row.split("|")[4]
        if f"](#note-{n})</sup>" in body:
            assert "](#" in where, row
            for anchor in re.findall(r"\]\(#([^)]+)\)", where):  # each place it names
                assert f'<a id="{anchor}"></a>' in body, (n, anchor)
    numbers = {a.id: i for i, a in enumerate(m.assumptions, start=1)}
    comp = m.data["components"]
    declared = {
        "ship-sizes-and-costs": ("components.shipyard", comp["ships_source"]),
        "card-contents": ("cards", ()),
        "decree-contents": ("score.decrees", ()),
        "plan-contents": ("open-building", ()),
        "clergy-contents": ("components-clergy", ()),
    }
    for v in compiled.variants:
        for a in v.provenance.assumptions:
            declared[a] = (f"variant-{v.id}", v.provenance.sources)
        for c in v.callouts:
            for a in c.provenance.assumptions:
                declared[a] = (c.rule, c.provenance.sources)
    for a, (anchor, sources) in declared.items():
        row = next(line for line in notes.splitlines()
                   if f'<a id="note-{numbers[a]}"></a>' in line)
        assert f"](#{anchor})" in row, (a, row)
        for s in sources:
            assert titles[s] in row.split("|")[5], (a, s, row)


def test_both_editions_say_the_same_rules(compiled: Compiled, files: dict[str, str]) -> None:
    m = compiled.base.model
    players, annotated = visible(files[RULES_HTML]), visible(files[RULES_ANNOTATED_HTML])
    for r in m.rules:
        if r.text.strip():
            said = " ".join(plain_text(m, r).split())
            assert said in players and said in annotated, r.id


@pytest.mark.parametrize("page", [RULES_MD, RULES_HTML])
def test_no_engine_speak_in_the_players_edition(files: dict[str, str], page: str) -> None:
    text = visible(files[page]) if page.endswith(".html") else md_visible(files[page])
    for word in ("engine", "Engine", "seeded", "Id:", "Forbidden by flag", "sorted"):
        assert word not in text, (page, word, text[max(0, text.find(word) - 80):][:160])


@pytest.mark.parametrize(("old", "new", "said"), [
    ("a player with an empty hand passes",
     "a player with an empty hand draws a card", "empty hand draws a card"),
    ("when a row is full the oldest card is discarded",
     "when a row is full the newest card is discarded", "the newest card"),
])
def test_a_changed_assumption_changes_its_note(tmp_path: Path, old: str, new: str,
                                               said: str) -> None:
    import shutil
    rules = tmp_path / "rules"
    shutil.copytree(RULES, rules)
    prov = rules / "provenance.yaml"
    text = prov.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    prov.write_text(text.replace(old, new, 1), encoding="utf-8")
    files = compile_rules(rules).files
    notes = files[RULES_MD][files[RULES_MD].index('<a id="notes"></a>'):]
    assert said in notes
