"""The printable rules reference: Markdown and HTML pages built from the compiled rules. Pure.

`render(compiled, engine_source)` returns `{relative path: text}` for:

- `reference/rules.md`, `reference/rules.html`: the players' edition: the rules for the standard
  game without rule ids or source lines, assumptions as numbered notes listed at the end (what
  each assumes, why, where, the sources to check), each variant's page as rules text with a
  word-level redline;
- `reference/rules-annotated.md`, `reference/rules-annotated.html`: the same document with every
  rule id, source line and assumption mark, the steps as the engine runs them, the variants'
  full change tables and an appendix of assumptions, seed/rulebook differences, sources and
  every rule id (`edition` picks the blocks of each);
- `reference/variant-<id>.md`, `reference/variant-<id>.html`: a one-page handout per variant,
  only what it changes, word by word (`word_redline`);
- `reference/player-aid.md`, `reference/player-aid.html`: a double-sided sheet read at a
  glance: the icons of rules/vocabulary.yaml (drawn by `emit.reference.icons`) with their key,
  the turn and the actions with their costs, the Nobles, the ends as trigger rows, the scoring;
  each side's type sized to fill its columns (`_fit`).

Everything printed comes from the model: rule prose (placeholders filled by `emit.words`),
formulas in words, tables from the data (column headings are the data's own keys). The worked
examples are scored at build time by the generated engine, executed in memory, so they can never
disagree with it. This module builds a format-neutral view (dataclasses of `Piece`s); the
templates in `templates/reference/` lay it out, and the `html`/`md` filters escape every piece
of data for their format.
"""

from __future__ import annotations

import ast
import dataclasses
import difflib
import functools
import json
import re
import sys
import types
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, assert_never

import jinja2
from markupsafe import Markup

from lisboa_rules.core import encode
from lisboa_rules.core.encode import html_text, ml_comment
from lisboa_rules.core.inputs import (
    AID_HTML,
    AID_MD,
    ENGINE,
    FIGURES,
    RULES_ANNOTATED_HTML,
    RULES_ANNOTATED_MD,
    RULES_HTML,
    RULES_MD,
    variant_handout,
)
from lisboa_rules.core.pyexpr import parse_expr
from lisboa_rules.emit.env import doc_env
from lisboa_rules.emit.header import header_lines
from lisboa_rules.emit.reference import diagrams, icons, words
from lisboa_rules.lang import text as rtext
from lisboa_rules.lang.tree import (
    Apply,
    Choose,
    Do,
    Drop,
    ForEach,
    Gain,
    If,
    Let,
    Move,
    New,
    Raise,
    Repeat,
    Require,
    Set,
    Shuffle,
    Step,
    branches,
)
from lisboa_rules.lang.typed import data_lookup
from lisboa_rules.model.checks import CROSS_REF, is_citation
from lisboa_rules.model.conservation import constant_condition
from lisboa_rules.model.types import Model, Rule, Trigger, VariantInfo, find_owner
from lisboa_rules.outputs import pycode

if TYPE_CHECKING:
    from lisboa_rules.model.compiled import Compiled



class ReferenceError(jinja2.TemplateRuntimeError):
    """Data the reference cannot print (becomes a template-error diagnostic, no traceback)."""


# --- the view: pieces of text ----------------------------------------------------------------


@dataclass(frozen=True)
class Mark:
    """An assumption a value rests on: its number in the appendix, id and stated value."""

    n: int
    id: str
    value: str


@dataclass(frozen=True)
class Piece:
    """Inline text: plain words, a value bound from the data, a link, or an identifier."""

    text: str
    kind: str = "text"  # text | value | link | code
    href: str = ""
    marks: tuple[Mark, ...] = ()


Rich = tuple[Piece, ...]


def plain(text: str) -> Rich:
    return (Piece(text),)


def link(text: str, href: str) -> Piece:
    return Piece(text, "link", href)


def join(parts: Sequence[Rich], sep: str = ", ") -> Rich:
    out: list[Piece] = []
    for i, p in enumerate(parts):
        if i:
            out.append(Piece(sep))
        out.extend(p)
    return tuple(out)


@dataclass(frozen=True)
class Table:
    head: tuple[str, ...]
    rows: tuple[tuple[Rich, ...], ...]
    caption: Rich = ()
    row_ids: tuple[str, ...] = ()
    numeric: tuple[int, ...] = ()  # columns aligned right
    side: bool = False  # the first column holds row headings (a transposed record table)
    kind: str = "table"
    only: str = ""  # "annotated" or "players": printed in that edition only

    @property
    def wide(self) -> bool:
        """Tables with prose in them take the full width; number grids stay compact."""
        return any(len("".join(p.text for p in cell)) > 24 for row in self.rows for cell in row)


@dataclass(frozen=True)
class Fact:
    label: str
    value: Rich
    # the player aid: the variant callouts at the rule it states, printed after it
    callouts: tuple[CalloutView, ...] = ()


@dataclass(frozen=True)
class StepView:
    text: Rich
    id: str = ""
    title: str = ""
    marks: tuple[Mark, ...] = ()


@dataclass(frozen=True)
class ProcStep:
    """One step of a procedure as printed: its own words (`text`), or the condition of a
    `require` (kind "condition", its `reason`), or the `else` of an `if` (kind "otherwise");
    the steps nested under it, and the procedure a `do` step carries out (a link)."""

    text: Rich
    kind: str = "step"  # step | condition | otherwise | if (the players' edition)
    children: tuple[ProcStep, ...] = ()
    ref: str = ""  # anchor of the procedure a `do` step carries out
    ref_title: str = ""
    # the players' edition's one-line branch "If <text>, <then>; otherwise <orelse>"
    then: Rich = ()
    orelse: Rich = ()


@dataclass(frozen=True)
class StepLine:
    """A line of a procedure's redline: its depth, what it is and whether the variant adds it,
    removes it or keeps it."""

    depth: int
    kind: str
    text: Rich
    status: str  # same | added | removed | changed (`words` says how, word by word)
    ref: str = ""
    ref_title: str = ""
    words: tuple[tuple[str, str], ...] = ()
    title: str = ""  # a step of a sequence with a name of its own ("Rubble wigs")
    then: Rich = ()  # (a one-line branch is said whole in `text`: see `_said_lines`)
    orelse: Rich = ()
    n: int = 0  # its number among its siblings in the variant's sequence (0: a struck line)


@dataclass(frozen=True)
class StepRedline:
    """A procedure whose steps read differently with a variant, base -> variant."""

    id: str  # the anchor of the procedure's card
    title: str
    lines: tuple[StepLine, ...]


@dataclass(frozen=True)
class CalloutView:
    variant: str
    variant_title: str
    variant_index: int
    rule: str
    rule_title: str
    text: Rich
    marks: tuple[Mark, ...]
    sources: tuple[str, ...]
    folded: bool = False  # of a variant built into the base game: no page of changes to link


@dataclass(frozen=True)
class PlayerSetup:
    color: str
    given: Rich


@dataclass(frozen=True)
class ExampleView:
    id: str
    title: str
    rule: str
    rule_title: str
    text: Rich
    players: tuple[PlayerSetup, ...]
    colors: tuple[str, ...]
    rows: tuple[tuple[str, str, tuple[int, ...]], ...]  # (source id, name, wigs per player)
    explanations: tuple[tuple[str, tuple[str, ...]], ...]  # (color, engine explanations)
    variants: tuple[tuple[str, str], ...]  # (id, title) of the variants the engine applied
    marks: tuple[Mark, ...]
    sources: tuple[str, ...]
    refused: str = ""  # why the engine would not set the example up under these rules


@dataclass(frozen=True)
class RuleCard:
    """One rule: its id is the anchor; text, facts, steps, tables, callouts and examples."""

    id: str
    title: str
    body: tuple[Rich, ...]
    label: str = ""
    facts: tuple[Fact, ...] = ()
    steps: tuple[StepView, ...] = ()
    tables: tuple[Table, ...] = ()
    children: tuple[RuleCard, ...] = ()
    callouts: tuple[CalloutView, ...] = ()
    examples: tuple[ExampleView, ...] = ()
    marks: tuple[Mark, ...] = ()
    sources: tuple[str, ...] = ()
    procedure: bool = False
    proc: tuple[ProcStep, ...] = ()  # the steps the engine runs, in their own words
    proc_players: tuple[ProcStep, ...] = ()  # the same steps as the players' edition says them
    proc_code: tuple[str, ...] = ()  # the same steps as the rules write them (every number)
    event: str = ""  # a hook's event, in words
    fired_by: tuple[tuple[str, str], ...] = ()  # (anchor, title) of the rules that raise it
    kind: str = "card"

    @property
    def long(self) -> bool:
        """Cards that may be split across pages: with examples, sub-rules or long tables."""
        return bool(self.examples or self.children
                    or any(len(t.rows) > 8 for t in self.tables))


@dataclass(frozen=True)
class Heading:
    id: str
    title: str
    kind: str = "heading"
    only: str = ""  # "annotated" or "players": printed in that edition only


@dataclass(frozen=True)
class Para:
    text: Rich
    kind: str = "para"


@dataclass(frozen=True)
class FlowNode:
    id: str
    title: str
    detail: Rich = ()


@dataclass(frozen=True)
class FlowEnd:
    id: str
    title: str
    ends: str
    when: tuple[FlowNode, ...]
    steps: tuple[FlowNode, ...]
    then_id: str
    then_title: str
    summary: str


@dataclass(frozen=True)
class Flow:
    turn: tuple[FlowNode, ...]
    ends: tuple[FlowEnd, ...]
    kind: str = "flow"


@dataclass(frozen=True)
class ChangeRow:
    what: Rich
    before: str
    after: str
    rule: str
    rule_title: str
    structural: bool = False  # a record or a step was added or replaced (not one value)
    # the players' label after the rule's title: the path below the rule's own record, in
    # words ("Lots › Gold"); `what` (the whole data path) is the annotated edition's
    below: str = ""

    @property
    def words(self) -> tuple[tuple[str, str], ...]:
        """The change word by word (see `word_redline`)."""
        return word_redline(self.before if self.before != "—" else "", self.after)


@dataclass(frozen=True)
class TextChange:
    rule: str
    rule_title: str
    before: str
    after: str

    @property
    def words(self) -> tuple[tuple[str, str], ...]:
        """The change word by word: (status, text) runs, status same | removed | added."""
        return word_redline(self.before, self.after)


Runs = tuple[tuple[str, str], ...]  # words with their redline status (see `word_redline`)


@dataclass(frozen=True)
class CardChange:
    """A card of the rules as a variant makes it, for its handout: printed whole, the change
    marked in place (a new step among the steps of its sequence, words struck and inserted in
    its text); a card the variant adds (a new Noble, a new action) whole, with where it
    stands; a table row the variant adds or changes as a card of its own."""

    id: str  # the card's anchor in the rules (empty: the rules of the base game lack it)
    title: str
    status: str  # added | changed | removed
    where: tuple[str, ...]  # the chapter and section it stands in
    after: str = ""  # the card it follows in that section (an added card)
    label: str = ""
    title_words: Runs = ()  # a changed title, word by word
    body: tuple[Runs, ...] = ()
    event: str = ""
    fired_by: tuple[tuple[str, str], ...] = ()
    lines: tuple[StepLine, ...] = ()
    facts: tuple[tuple[str, Runs], ...] = ()
    rows: tuple[CardChange, ...] = ()  # the rows of its tables the variant adds or changes
    cells: tuple[str, ...] = ()  # a row's cells, as words
    # several rows of one table: printed as that table (`head`), each row's cells word by word
    head: tuple[str, ...] = ()
    grid: tuple[Runs, ...] = ()  # a row's cells under `head`
    children: tuple[CardChange, ...] = ()
    kind: str = "card-change"


@dataclass(frozen=True)
class VariantView:
    id: str
    title: str
    index: int
    applies: tuple[int, ...]
    text: Rich
    changes: tuple[ChangeRow, ...]
    text_changes: tuple[TextChange, ...]
    callouts: tuple[CalloutView, ...]
    marks: tuple[Mark, ...]
    sources: tuple[str, ...]
    step_changes: tuple[StepRedline, ...] = ()
    kind: str = "variant"
    official: bool = False  # a variant of the published game (`official: true`), not a house rule
    in_place: tuple[CardChange, ...] = ()  # the handout: each changed card whole, marked
    # the players' edition's steps that read differently: the steps of `in_place`'s cards (as
    # the players' edition says them) that the variant adds, removes or rewords; `step_changes`
    # are the annotated edition's, the steps as written
    said_step_changes: tuple[StepRedline, ...] = ()

    @property
    def value_changes(self) -> tuple[ChangeRow, ...]:
        """The changes that are one value for another (a number, a list of names): what a
        players' page prints as a table; the rest shows in the rules' and steps' words."""
        return tuple(c for c in self.changes if c.before != "—" and c.before != c.after
                     and not c.structural)


@dataclass(frozen=True)
class Index:
    """Every rule id with its title, in id order (links into the page)."""

    items: tuple[tuple[str, str], ...]
    kind: str = "index"
    only: str = ""  # "annotated" or "players": printed in that edition only


@dataclass(frozen=True)
class Figure:
    """An SVG diagram drawn from the data (emit.reference.diagrams); `file` is its path under
    generated/reference/, which rules.md links to and rules.html draws inline."""

    id: str
    title: str
    svg: Markup
    file: str
    kind: str = "figure"


@dataclass(frozen=True)
class GlossaryEntry:
    id: str  # the anchor of its definition
    term: str
    text: Rich
    see: tuple[tuple[str, str], ...] = ()  # (anchor, term) of related terms
    rules: tuple[tuple[str, str], ...] = ()  # (rule id, title) of the rules that explain it
    marks: tuple[Mark, ...] = ()


@dataclass(frozen=True)
class Glossary:
    entries: tuple[GlossaryEntry, ...]
    kind: str = "glossary"


@dataclass(frozen=True)
class TermIndex:
    """The index of the glossary's terms: each term with the anchors it points at (its
    definition, then the rules that explain it). The printed page numbers are filled in by the
    `pdf` command (emit.reference.pageindex), which prints twice."""

    items: tuple[tuple[str, tuple[tuple[str, str], ...]], ...]  # (term, ((anchor, label), ...))
    kind: str = "terms"


Block = RuleCard | Heading | Para | Table | Flow | VariantView | Index | Figure | Glossary | \
    TermIndex


@dataclass(frozen=True)
class Chapter:
    id: str
    title: str
    blocks: tuple[Block, ...]
    page_break: bool = True
    only: str = ""  # "annotated" or "players": printed in that edition only


@dataclass(frozen=True)
class AidIcon:
    """An icon on the aid: what it means and its SVG (emit.reference.icons draws it)."""

    id: str
    term: str
    svg: Markup


@dataclass(frozen=True)
class AidLine:
    """A row of the aid: the icons of what it speaks of, a label, its words and a tag (the
    periods a trigger fires in)."""

    icons: tuple[AidIcon, ...]
    label: str
    text: Rich
    tag: str = ""


@dataclass(frozen=True)
class AidCard:
    """One box of the player aid: an action or a Noble, its icons, its costs (each once) and
    its words, the first sentence as the lead and the rest as points."""

    title: str
    sub: str
    text: Rich
    facts: tuple[Fact, ...] = ()
    icons: tuple[AidIcon, ...] = ()  # before the title: the Noble's
    costs: tuple[AidLine, ...] = ()
    points: tuple[Rich, ...] = ()
    right: tuple[AidIcon, ...] = ()  # at the right: the cards an action plays, trade goods
    aside: str = ""  # words at the right: what an action plays
    note: Rich = ()  # after the title: the marks of what its rule assumes
    callouts: tuple[CalloutView, ...] = ()


@dataclass(frozen=True)
class AidTable:
    """A table of the aid whose first cell of each row may hold icons; `runs` side-by-side runs
    of rows keep a long table short."""

    head: tuple[str, ...]
    rows: tuple[AidLine, ...]  # icons, the row heading (label) and its cells (text: one each)
    cells: tuple[tuple[Rich, ...], ...]
    caption: Rich = ()
    runs: int = 1
    numeric: tuple[int, ...] = ()  # the cells (0: the first after the row heading) of numbers
    inline: bool = False  # the icons in the first cell, before its words (a short heading)

    @property
    def split(self) -> tuple[tuple[int, ...], ...]:
        """The row indexes of each run, in order, each run about as long as the others (by
        the length of its rows' words)."""
        runs = max(1, min(self.runs, len(self.rows)))
        weight = [len(r.label) + sum(len(p.text) for c in cells for p in c) + 12
                  for r, cells in zip(self.rows, self.cells, strict=True)]
        out: list[list[int]] = [[]]
        total, done = sum(weight), 0
        for k, w in enumerate(weight):
            if out[-1] and len(out) < runs and done + w / 2 > total * len(out) / runs:
                out.append([])
            out[-1].append(k)
            done += w
        return tuple(tuple(r) for r in out)


@dataclass(frozen=True)
class AidSection:
    title: str
    id: str
    lead: Rich = ()  # the sentence before the rows (an end: when it comes)
    rows: tuple[AidLine, ...] = ()  # trigger rows, joined by `joiner`
    joiner: str = ""
    then: Rich = ()  # the sentence after the rows
    steps: tuple[StepView, ...] = ()  # numbered steps
    cards: tuple[AidCard, ...] = ()
    tables: tuple[AidTable, ...] = ()
    lines: tuple[Rich, ...] = ()
    callouts: tuple[CalloutView, ...] = ()
    icons: tuple[AidIcon, ...] = ()  # the key
    notes: tuple[NoteView, ...] = ()  # the assumed values marked on the sheet
    wide: bool = False  # across both columns
    side: int = 1  # the side of the sheet it is printed on (1 or 2)
    size: float = 0.0  # the type size of its side, in points on A4 (`_fit`)


@dataclass(frozen=True)
class Document:
    title: str
    subtitle: Rich
    chapters: tuple[Chapter, ...]
    aid: tuple[AidSection, ...]
    variants: tuple[tuple[str, str, int], ...]  # (id, title, index) for the legend
    header: str
    footer: str
    edition: str = "standard game"  # or the house rules built in (build --variant)
    house_rules: str = ""  # "with <title>, ..." when variants are built in, else empty
    figures: tuple[Figure, ...] = ()  # every diagram, also written as figures/<id>.svg
    annotated: bool = True  # rule ids, sources and assumption marks (False: players' edition)
    notes: tuple[NoteView, ...] = ()  # the assumptions, as the players' edition's notes
    variant_pages: tuple[VariantView, ...] = ()  # for the one-page house-rules handouts


@dataclass(frozen=True)
class NoteView:
    """An assumption as a players' note: its number, what it assumes, why, where it stands."""

    n: int
    id: str
    value: str
    reason: str
    where: Rich
    sources: tuple[str, ...]  # the titles of the sources of the rules it stands at


# --- escaping filters --------------------------------------------------------------------------

_guard_start = encode.md_guard_start
md_text = encode.md_text


def _md_piece(p: Piece, base: str, annotated: bool = True) -> str:
    if p.kind == "link":
        return f"[{md_text(p.text)}]({base}#{_slug(p.href)})"
    if p.kind == "code":
        return encode.md_code(p.text)
    text = encode.md_inline(" ".join(p.text.split()) if p.text.strip() else " ")
    if p.text[:1].isspace() and not text.startswith(" "):
        text = " " + text
    if p.text[-1:].isspace() and not text.endswith(" "):
        text += " "
    if not annotated:  # the players' edition: a numbered note (several: 1, 2)
        return text + "<sup>,</sup>".join(f"<sup>[{m.n}]({base}#note-{m.n})</sup>"
                                          for m in p.marks)
    marks = "".join(f"<sup>[†{m.n}]({base}#assumption-{_slug(m.id)})</sup>" for m in p.marks)
    return text + marks


def md_rich(value: Rich | str, base: str = "", annotated: bool = True) -> str:
    """A Rich text (or a plain string) as one line of escaped Markdown; links into `base`.
    Assumption marks are `†n` links into the appendix, or (not `annotated`) numbered notes."""
    if isinstance(value, str):
        return md_text(value)
    out = "".join(_md_piece(p, base, annotated) for p in value)
    out = re.sub(r" {2,}", " ", out).strip()
    return _guard_start(out)


def _html_piece(p: Piece, base: str, annotated: bool = True) -> str:
    t = html_text(p.text)
    if p.kind == "link":
        return f'<a href="{html_text(base)}#{html_text(_slug(p.href))}">{t}</a>'
    if p.kind == "code":
        return f"<code>{t}</code>"
    marks = "".join(
        f'<sup class="as"><a href="{html_text(base)}#assumption-{html_text(_slug(m.id))}" '
        f'title="{html_text(m.id)}: {html_text(m.value)}">†{m.n}</a></sup>' for m in p.marks) \
        if annotated else '<sup class="note">,</sup>'.join(
        f'<sup class="note"><a href="{html_text(base)}#note-{m.n}" '
        f'title="{html_text(m.value)}">{m.n}</a></sup>' for m in p.marks)
    if p.kind == "value":
        return f'<span class="v">{t}</span>{marks}'
    return str(t) + marks


def html_rich(value: Rich | str, base: str = "", annotated: bool = True) -> Markup:
    """A Rich text (or plain string) as escaped HTML; links point into `base` (another page).
    Assumption marks are `†n` links into the appendix, or (not `annotated`) numbered notes."""
    if isinstance(value, str):
        return html_text(value)
    return Markup("".join(_html_piece(p, base, annotated) for p in value).strip())


css_string = encode.css_string
mermaid_text = encode.mermaid_label
_slug = encode.slug


def _node_id(text: str) -> str:
    return "n_" + re.sub(r"[^a-z0-9]+", "_", text.lower())


def when_words(periods: tuple[int, ...]) -> str:
    """The periods a trigger fires in, as a heading: `Period 1`, `Periods 1, 2`, `Any period`."""
    if not periods:
        return f"Any {humanize('period').lower()}"
    if len(periods) == 1:
        return f"{humanize('period')} {periods[0]}"
    return f"{humanize('periods')} {', '.join(str(p) for p in periods)}"


# Who sees a field (rules/state.yaml `see:`), in words; everything else everyone sees.
SEES_WORDS: dict[str, str] = {
    "owner": "its player; the others see how many",
    "count": "everyone sees how many, nobody which",
    "top": "everyone sees how many and the top one",
    "none": "nobody",
}


humanize = words.humanize  # a data key as a heading: `trade_goods` -> `Trade goods`


# --- building the view -------------------------------------------------------------------------


class _Builder:
    def __init__(self, compiled: Compiled, engine_source: str) -> None:
        self.c = compiled
        self.engine_source = engine_source  # the generated engine, rendered by emit first
        self.m = compiled.base.model
        self.names = words.names_of(self.m)
        self.data_words = words.DataWords(self.m)
        self.rules = {r.id: r for r in self.m.rules}
        self.placed: list[str] = []
        # An assumption's stated value prints the data it restates through placeholders, so a
        # folded house rule that changes that data changes the words too.
        self.assumptions = {
            a.id: Mark(i + 1, a.id, "".join(s.text for s in words.segments(self.m, a.value, None)))
            for i, a in enumerate(self.m.assumptions)}
        self.variant_index = {v.id: i for i, v in enumerate(compiled.variants)}
        self.callouts: dict[str, list[CalloutView]] = {}
        # a folded house rule's changes to another variant's callouts are the rules': they
        # stand in for those callouts; an option's new texts are its own callouts
        amended = {(a.of, a.id): a for v in compiled.folded_infos for a in v.amends}
        for v in compiled.variants:
            vm = self.model_for(v.id)
            count = _one_count(v)
            for c in v.callouts:
                a = amended.get((v.id, c.id)) if c.id is not None else None
                if a is not None:
                    if a.text is None:
                        continue
                    c = replace(c, text=a.text, provenance=a.provenance)
                rule = self.rules.get(c.rule)
                view = CalloutView(
                    v.id, v.title, self.variant_index[v.id], c.rule,
                    rule.title if rule else c.rule,
                    self.rich(c.text, {}, vm, c.provenance.assumptions, players=count),
                    self.marks(c.provenance.assumptions), c.provenance.sources)
                self.callouts.setdefault(c.rule, []).append(view)
            for a in v.amends:  # chosen with the other variant: its note, as this one's
                others = [o for o in compiled.variants if o.id == a.of]
                theirs = {c.id: c for o in others for c in o.callouts if c.id is not None}
                if a.id not in theirs:
                    continue
                rule_id = theirs[a.id].rule
                rule = self.rules.get(rule_id)
                if a.text is None:  # dropped: said, where both are in force, with its words
                    gone = theirs[a.id]
                    said: Rich = (
                        Piece(f"Where {others[0].title} applies too, its note does not "
                              "hold: "),
                        *self.rich(gone.text, {}, self.model_for(a.of),
                                   gone.provenance.assumptions))
                else:
                    said = self.rich(a.text, {}, vm, a.provenance.assumptions, players=count)
                self.callouts.setdefault(rule_id, []).append(CalloutView(
                    v.id, v.title, self.variant_index[v.id], rule_id,
                    rule.title if rule else rule_id, said,
                    self.marks(a.provenance.assumptions), a.provenance.sources))
        for v in compiled.folded_infos:  # the words of a folded house rule are the rules'
            for c in v.callouts:
                a = amended.get((v.id, c.id)) if c.id is not None else None
                if a is not None:
                    if a.text is None:
                        continue
                    c = replace(c, text=a.text, provenance=a.provenance)
                rule = self.rules.get(c.rule)
                view = CalloutView(
                    v.id, v.title, 0, c.rule, rule.title if rule else c.rule,
                    self.rich(c.text, {}, self.m, c.provenance.assumptions),
                    self.marks(c.provenance.assumptions), c.provenance.sources, folded=True)
                self.callouts.setdefault(c.rule, []).append(view)
        self.engine: types.ModuleType | None = None
        self.engine_problem = ""
        # the printed steps of a procedure in a model (the chapters and every variant's
        # redlines ask for the base's again): (pid, the model, declared, players) -> its steps
        self._proc_views: dict[tuple[str, int, tuple[str, ...], bool],
                               tuple[Model, tuple[ProcStep, ...]]] = {}
        self._saying: list[str] = []  # the procedures the players' words are being said for
        self.row_anchors: dict[str, str] = {}  # table rows that are link targets -> label
        self.examples: tuple[ExampleView, ...] = ()
        self.figs: tuple[Figure, ...] = ()
        # where each assumption's mark prints in the players' edition (its id -> (anchor,
        # title) of each section), found by `ch_appendix` in the pages built before its notes
        self.mark_sites: dict[str, list[tuple[str, str]]] = {}

    # -- helpers ------------------------------------------------------------------------------

    def model_for(self, variant: str) -> Model:
        for rs in self.c.rulesets:
            if rs.key == (variant,):
                return rs.model
        return self.m

    def marks(self, ids: Iterable[str]) -> tuple[Mark, ...]:
        out: list[Mark] = []
        for a in ids:
            mark = self.assumptions.get(a, Mark(0, a, ""))
            if mark not in out:
                out.append(mark)
        return tuple(out)

    def _about(self, assumption: str, path: tuple[str, ...]) -> bool:
        """Whether an assumption inherited by a bound value is about that value.

        The data states assumptions per object (e.g. all of `game.start`), so a value bound from
        elsewhere inherits every assumption of its object. Only those whose id or stated value
        names the value's key are marked at the value; the rest stay with the rule they belong to.
        """
        mark = self.assumptions.get(assumption)
        if mark is None or not path:
            return True
        hay = f"{mark.id} {mark.value}".lower().replace("-", " ")
        stems = [w[:4] for w in re.split(r"[_\-]", path[-1].lower()) if len(w) >= 4]
        return any(re.search(rf"\b{re.escape(st)}", hay) for st in stems)

    def title_of(self, rule_id: str) -> str:
        r = self.rules.get(rule_id)
        return r.title if r else rule_id

    def rich(self, text: str, local: Any, m: Model | None = None,
             declared: Iterable[str] = (), missing: Callable[[str], str] | None = None,
             players: int | None = None) -> Rich:
        """Text with placeholders filled; values keep the assumptions not already declared.
        A placeholder the data cannot fill is an error, unless `missing` says what to print
        for it (steps' words name values that exist only during play). A text for one number
        of `players` says a formula of that number as its value (`words.segments`)."""
        model = m or self.m
        known = set(declared)
        out: list[Piece] = []
        for seg in words.segments(model, text, local, players):
            if seg.value:
                extra = [a for a in seg.assumptions
                         if a not in known and self._about(a, seg.path)]
                known.update(extra)
                out.append(Piece(seg.text, "value", marks=self.marks(extra)))
            elif any(True for _ in rtext.placeholders(seg.text)):
                if missing is None:
                    raise ReferenceError(f"unresolved placeholder in text: {seg.text!r}")
                out.append(Piece(missing(seg.text)))
            else:
                out.extend(self._refs(seg.text, strict=missing is None))
        return _strip(out)

    def _refs(self, text: str, strict: bool = True) -> list[Piece]:
        """Text with its rule references as links; one to no rule is an error, or printed as
        written when not `strict` (steps' words, which the model does not check yet)."""
        out: list[Piece] = []
        pos = 0
        for ref in CROSS_REF.finditer(text):
            if ref.start() > pos:
                out.append(Piece(text[pos:ref.start()]))
            rid = ref.group(1)
            if rid not in self.rules and not strict:
                out.append(Piece(ref.group(0)))
            elif rid not in self.rules:
                raise ReferenceError(f"text names rule '{rid}', which does not exist")
            else:
                out.append(link(self.title_of(rid), rid))
            pos = ref.end()
        if pos < len(text):
            out.append(Piece(text[pos:]))
        return out

    def rule_text(self, r: Rule, m: Model | None = None) -> Rich:
        model = m or self.m
        rule = model.rule(r.id) or r
        local, _ = find_owner(model, rule)
        return self.rich(rule.text, local, model, r.provenance.assumptions)

    def words(self, source: str, params: Mapping[str, int], unit: str | None = None) -> str:
        return words.formula_words(self.m, source, dict(params), unit)

    def trigger_words(self, t: Trigger) -> str:
        """A trigger's condition in words: of any player ("a player has ..."), when every
        player's state is tested (`scope: any-player`), not of the reader."""
        return words.formula_words(self.m, t.condition.source, dict(t.params),
                                   anyone=t.scope == "any-player")

    def term(self, key: str) -> str | None:
        """One of the game's terms (`money`, `score`): the unit a price or a score counts."""
        value = self.m.data["game"].get("terms", {}).get(key)
        return value if isinstance(value, str) else None

    def card(self, r: Rule, title: str = "", **kw: Any) -> RuleCard:
        """A rule's card, with the callouts and examples that stand at it; marks it placed."""
        self.placed.append(r.id)

        if not title and r.section == "flow" and r.owner[:1] == ("triggers",):
            # a trigger that ends nothing has no title of its own: a house rule's is its title
            t = find_owner(self.m, r)[0]
            if isinstance(t, Mapping) and not t.get("ends"):
                title = self.variant_title(r.span.file)
        return RuleCard(
            id=r.id, title=title or r.title,
            body=(self.rule_text(r),) if r.text.strip() else (),
            callouts=tuple(self.callouts.get(r.id, ())),
            examples=tuple(e for e in self.examples if e.rule == r.id),
            marks=self.marks(r.provenance.assumptions), sources=r.provenance.sources, **kw)

    # -- procedures: the steps the engine runs, in their own words ----------------------------

    def proc_groups(self, m: Model | None = None) -> dict[str, str]:
        """Every procedure id of a model with the group it is printed in: `noble_actions`
        (on their rule cards), `effects`, `hooks` or `procedures` (the Effects chapter)."""
        ps = (m or self.m).procs
        if ps is None:
            return {}
        hooks = {h for ids in ps.hooks.values() for h in ids}
        out: dict[str, str] = {}
        for pid in ps.procs:
            out[pid] = ("noble_actions" if pid in ps.this else "effects" if pid in ps.effects
                        else "hooks" if pid in hooks else "procedures")
        return out

    def proc_anchor(self, pid: str, m: Model | None = None) -> tuple[str, str]:
        """The anchor and title of a procedure's card."""
        model = m or self.m
        group = self.proc_groups(model).get(pid, "procedures")
        if group == "noble_actions":
            na = next((a for a in model.noble_actions if a.id == pid), None)
            if na is not None:
                return pid, na.name
            # a procedure of the flow (the setup, the end of the turn, a period-end step): the
            # card of its rule
            return pid, self.title_of(pid) if pid in self.rules else humanize(pid)
        prefix = {"effects": "effect", "hooks": "hook"}.get(group, "procedure")
        if group == "hooks":
            return f"{prefix}-{pid}", self.hook_title(pid, model)
        if group == "effects":  # named as a reward names it ("Réis: 3"): the vocabulary's words
            return f"{prefix}-{pid}", self.data_words.effect_label(pid)
        name = self.proc_row(pid, model).get("name")
        return f"{prefix}-{pid}", name if isinstance(name, str) and name else humanize(pid)

    def hook_title(self, pid: str, m: Model) -> str:
        """A hook's title: the title of the rule it names (`rule:`), else the title of the
        variant (a house rule) whose file adds it; a hook of the base game with neither is
        named by its id in words."""
        row = self.proc_row(pid, m)
        name = row.get("name")
        if isinstance(name, str) and name:
            return name
        rule = row.get("rule")
        if isinstance(rule, str) and rule:
            found = m.rule(rule)
            if found is not None:
                return found.title
        ps = m.procs
        proc = ps.procs.get(pid) if ps is not None else None
        if proc is not None and proc.path:
            title = self.variant_title(m.span_of(str(proc.path[0]), *proc.path[1:]).file)
            if title:
                return title
        return humanize(pid)

    def variant_title(self, file: str) -> str:
        """The title of the variant whose file is `file` (empty: none, a file of the rules)."""
        for v in (*self.c.variants, *self.c.folded_infos):
            if file and v.span.file == file:
                return v.title
        return ""

    def raised_by(self, event: str, m: Model) -> tuple[tuple[str, str], ...]:
        """(anchor, title) of the procedures and actions whose steps raise `event`: where the
        hooks of that event are carried out."""
        ps = m.procs
        if ps is None:
            return ()

        def raises(steps: Iterable[Step]) -> bool:
            for s in steps:
                if isinstance(s, Raise) and s.event == event:
                    return True
                then, orelse = branches(s)
                if raises(then) or raises(orelse):
                    return True
            return False

        out: list[tuple[str, str]] = []
        for pid, proc in ps.procs.items():
            if raises(proc.steps):
                out.append(self.proc_anchor(pid, m))
        cards = {kind: (anchor, title) for kind, anchor, title in self.action_cards(m)}
        for kind, act in ps.actions.items():
            if raises(act.steps) and kind in cards:
                out.append(cards[kind])
        return tuple(dict.fromkeys(out))

    def proc_local(self, pid: str, m: Model) -> Any:
        """What a procedure's words read placeholders from: its own row (also as `this`)."""
        ps = m.procs
        row = ps.this.get(pid) if ps is not None else None
        if row is None:
            row = self.proc_row(pid, m)
        return {**row, "this": row} if isinstance(row, Mapping) else {}

    def proc_row(self, pid: str, m: Model) -> Mapping[str, Any]:
        """A procedure's own entry in the effects document (its `text`, `on`, ...)."""
        doc = m.data.get("effects")
        if isinstance(doc, Mapping):
            for key in ("effects", "procedures", "hooks"):
                for row in doc.get(key) or ():
                    if isinstance(row, Mapping) and str(row.get("id")) == pid:
                        return row
        return {}

    def proc_view(self, pid: str, m: Model | None = None,
                  declared: Iterable[str] = (), players: bool = False) -> tuple[ProcStep, ...]:
        """The steps of procedure `pid` as printed (none when the model has no such one): as
        the annotated edition writes them, or as the players' edition says them (`players`)."""
        model = m or self.m
        key = (pid, id(model), tuple(declared), players)
        known = self._proc_views.get(key)
        if known is not None and known[0] is model:
            return known[1]
        ps = model.procs
        proc = ps.procs.get(pid) if ps is not None else None
        if proc is None:
            return ()
        local = self.proc_local(pid, model)
        if players:
            self._saying.append(pid)
            try:
                shown = self._say(proc.steps, local, model, tuple(declared))
            finally:
                self._saying.pop()
        else:
            shown = self._steps(proc.steps, local, model, tuple(declared))
        self._proc_views[key] = (model, shown)
        return shown

    def proc_code(self, pid: str, m: Model | None = None) -> tuple[str, ...]:
        """The steps of procedure `pid` as the rules write them, one line each, nested steps
        indented: every number and expression the engine compiles, for the annotated look."""
        model = m or self.m
        ps = model.procs
        proc = ps.procs.get(pid) if ps is not None else None
        if proc is None:
            return ()
        return self.steps_code(proc.steps)

    def steps_code(self, steps: Iterable[Step]) -> tuple[str, ...]:
        """Steps as the rules write them, one line each (see `proc_code`)."""
        out: list[str] = []

        def walk(steps: Iterable[Step], depth: int) -> None:
            for s in steps:
                arg = s.written
                shown = arg if isinstance(arg, str) else json.dumps(arg, ensure_ascii=False)
                extra = "".join(f", {k}: {v if isinstance(v, str) else json.dumps(v)}"
                                for k, v in _code_keys(s))
                out.append("· " * depth + f"{s.kind}: {shown}{extra}")
                then, orelse = branches(s)
                walk(then, depth + 1)
                if orelse:
                    out.append("· " * depth + "else:")
                    walk(orelse, depth + 1)

        walk(steps, 0)
        return tuple(out)

    def _steps(self, steps: Iterable[Step], local: Any, m: Model,
               declared: tuple[str, ...]) -> tuple[ProcStep, ...]:
        """Steps with words of their own; a step without them is left out, its nested steps
        taking its place; a `require` without them prints its reason as a condition."""
        out: list[ProcStep] = []
        for s in steps:
            then, orelse = branches(s)
            kids = list(self._steps(then, local, m, declared))
            other = self._steps(orelse, local, m, declared)
            if isinstance(s, If) and other:  # "If <condition>:" and its "Otherwise:" beside it
                words_of = s.text if isinstance(s.text, str) and s.text.strip() else ""
                cond = self.rich(words_of, local, m, declared, missing=lambda raw: raw) \
                    if words_of else plain(self._cond_words(s.cond))
                out.append(ProcStep(cond, "if", tuple(kids)))
                out.append(replace(other[0], kind="otherwise")
                           if len(other) == 1 and other[0].kind == "step" and not other[0].children
                           else ProcStep((), "otherwise", other))
                continue
            text = s.text
            kind = "step"
            if isinstance(s, Require) and (text or s.reason is not None):
                text, kind = text or s.reason, "condition"
            if not isinstance(text, str) or not text.strip():
                out.extend(kids)
                continue
            # a require's reason names values that exist only during play ({price}): the
            # annotated edition shows them as the rules write them
            shown = self.rich(text, local, m, declared, missing=lambda raw: raw)
            ref = title = ""
            if isinstance(s, Do) and m.procs is not None and s.proc in m.procs.procs:
                ref, title = self.proc_anchor(s.proc, m)
            out.append(ProcStep(shown, kind, tuple(kids), ref, title))
        return tuple(out)

    def _say(self, steps: Iterable[Step], local: Any, m: Model,
             declared: tuple[str, ...]) -> tuple[ProcStep, ...]:
        """Steps as the players' edition says them: a `require` is a condition of the steps
        it guards (its `text`, or its `reason` when that names no value of play); an `if` with
        an `else` reads "If <its text>, ...; otherwise ..."; a `do` step says the procedure it
        carries out in place (that procedure's steps' words), never a link to it. The model's
        checks (`missing-text`) refuse the data that has no words for these. A `require` right
        after a choice with words, that tests what was chosen, is a condition of that choice:
        said at its end, "(not possible when ...)", not as a step of its own."""
        out: list[ProcStep] = []
        chose: tuple[str, int] | None = None  # the name just chosen, and the step saying it
        for s in steps:
            just, chose = chose, None
            then, orelse = branches(s)
            if isinstance(s, If):  # a condition of the rules' data alone: only its branch
                holds = constant_condition(s.cond, data_lookup(m.data))
                if holds is False:
                    out.extend(self._say(orelse, local, m, declared))
                    continue
                if holds:
                    orelse = ()
            kids = list(self._say(then, local, m, declared))
            other = self._say(orelse, local, m, declared)
            text = s.text if isinstance(s.text, str) and s.text.strip() else ""
            if isinstance(s, Raise) and m.procs is not None:
                # the hooks of the event, said in place: what happens at this point of play
                kids = [said for hid in m.procs.hooks.get(s.event, ()) if hid not in self._saying
                        for said in self.proc_view(hid, m, players=True)]
            if isinstance(s, If) and other:  # (an `if` with words and no `else` is a step)
                cond = self.rich(text, local, m, declared, missing=self._play_words) if text \
                    else _lower_first(plain(self._cond_words(s.cond)))
                single = len(kids) == 1 and len(other) == 1 and all(
                    k.kind == "step" and not k.children for k in (kids[0], other[0]))
                if single:
                    out.append(ProcStep(cond, "if", then=_lower_first(kids[0].text),
                                        orelse=_lower_first(other[0].text)))
                    continue
                out.append(ProcStep(cond, "if", tuple(kids)))
                out.append(ProcStep((), "otherwise", other))
                continue
            kind = "step"
            if isinstance(s, Require):
                kind = "condition"
                text = text or (s.reason or "")
            if not text:
                out.extend(kids)
                continue
            play = self._play_words if kind == "condition" else (lambda raw: raw)
            shown = self.rich(text, local, m, declared, missing=play)
            if isinstance(s, Require) and just is not None and not kids \
                    and just[0] in _names_read(s.cond):
                at = out[just[1]]
                out[just[1]] = replace(at, text=_unless(at.text, shown))
                continue
            if isinstance(s, Do) and not kids and m.procs is not None \
                    and s.proc in m.procs.procs and s.proc not in self._saying:
                said = self.proc_view(s.proc, m, players=True)
                if said and _same_words(said[0].text, shown):
                    said = (*said[0].children, *said[1:])  # the step already says it
                kids = list(said)
            if isinstance(s, Choose) and not kids:
                chose = (s.as_, len(out))
            out.append(ProcStep(shown, kind, tuple(kids)))
        return tuple(out)

    def _play_words(self, raw: str) -> str:
        """A value that exists only during play, named in words where a condition's words
        print it (`{price}`: "the price"; a name of the vocabulary, its words: "your réis")."""
        name = raw.strip("{} ").split("|")[0].split(".")[-1]
        vocab = words.Sayer(self.m, {}).vocab
        said = vocab.get(name)
        if isinstance(said, str) and "{" not in said:
            return said
        return "the " + humanize(name).lower()

    def _cond_words(self, cond: Any) -> str:
        """The words of an `if`'s condition that has no `text:` (the formula words of the
        vocabulary; a condition they cannot say is named as a condition of play)."""
        try:
            said = self.words(str(cond), {})
        except Exception:  # words for what the vocabulary says, else the condition as written
            said = ""
        return said or str(cond)

    def step_redlines(self, after: Model) -> tuple[StepRedline, ...]:
        """The procedures whose steps read differently in `after`, each as a redline: every
        line of the variant's list, with the base's lines it drops struck through."""
        base_ids = list(self.proc_groups(self.m))
        ids = base_ids + [p for p in self.proc_groups(after) if p not in base_ids]
        out: list[StepRedline] = []
        for pid in ids:
            before = _flatten(self.proc_view(pid, self.m))
            now = _flatten(self.proc_view(pid, after))
            keys_b = [_line_key(x) for x in before]
            keys_a = [_line_key(x) for x in now]
            if keys_b == keys_a:
                continue
            lines = _diff_lines(before, now)
            # the page shows the base game: a procedure only the variant has has no card there
            known = {self.proc_anchor(p, self.m)[0] for p in base_ids}
            lines = [x if not x.ref or x.ref in known else replace(x, ref="") for x in lines]
            anchor, title = self.proc_anchor(pid, after if pid not in base_ids else self.m)
            out.append(StepRedline(anchor if pid in base_ids else "", title, tuple(lines)))
        # the actions' own steps (rules/court.yaml, flow moves): their cards' anchors
        for kind, anchor, title in self.action_cards(after):
            before = _flatten(self.action_view(kind, self.m))
            now = _flatten(self.action_view(kind, after))
            if [_line_key(x) for x in before] != [_line_key(x) for x in now]:
                known = {self.proc_anchor(p, self.m)[0] for p in base_ids}
                out.append(StepRedline(anchor, title, tuple(
                    x if not x.ref or x.ref in known else replace(x, ref="")
                    for x in _diff_lines(before, now))))
        return tuple(out)

    def action_cards(self, after: Model) -> list[tuple[str, str, str]]:
        """(move kind, card anchor, title) of every action with steps, base's then variant's."""
        out: list[tuple[str, str, str]] = []
        for model in (self.m, after):
            ps = model.procs
            for kind, act in (ps.actions.items() if ps is not None else ()):
                if any(k == kind for k, _, _ in out):
                    continue
                moved = act.path[:2] == ("flow", "moves")
                anchor = f"move-{act.id}" if moved else act.rule
                # an action a variant adds: the title of its own rule (its name), not its id
                own = model.rule(act.rule) if act.rule not in self.rules else None
                title = own.title if own is not None else self.title_of(act.rule)
                out.append((kind, anchor if model is self.m else "", title))
        return out

    def action_view(self, kind: str, m: Model) -> tuple[ProcStep, ...]:
        """An action's steps as printed on its card (none when `m` has no such action)."""
        ps = m.procs
        act = ps.actions.get(kind) if ps is not None else None
        if act is None or ps is None:
            return ()
        row = ps.action_rows.get(act.id, {})
        return self._steps(act.steps, {**row, "this": row}, m, ())

    def value_name(self, value: Any, named: bool = True) -> str:
        """A data value in words; ids become names when `named` (references, not colours)."""
        return self.data_words.value_name(value, named)

    def counted(self, value: Mapping[str, Any]) -> str:
        """Amounts of things the vocabulary names, as a rulebook writes them (`words.DataWords`)."""
        return self.data_words.counted(value)

    def key_label(self, key: str) -> str:
        """A data key as words: the vocabulary's words for it, else the key humanized."""
        return self.data_words.key_label(key)

    def side_table(self, items: Sequence[Mapping[str, Any]], keys: Sequence[str],
                   caption: Rich = ()) -> Table:
        """Records as columns, one row per key: compact for short lists such as track spaces."""
        head = (humanize(keys[0]), *(self.value_name(it.get(keys[0]), named=False)
                                     for it in items))
        rows = tuple((plain(humanize(k)), *(plain(self.value_name(it.get(k), named=False))
                                           for it in items)) for k in keys[1:])
        return Table(head, rows, caption, numeric=tuple(range(1, len(head))), side=True)

    def record_table(self, items: Sequence[Mapping[str, Any]], keys: Sequence[str],
                     caption: Rich = ()) -> Table:
        """Records as rows, the data's keys as column headings."""
        # a column of enum ids (`starting-hand`) prints them as words (`Starting hand`)
        enums = {k for k in keys if items and all(
            isinstance(it.get(k), str) and _ENUM_ID.fullmatch(str(it.get(k)))
            for it in items if it.get(k) is not None)
            and any(it.get(k) is not None for it in items)}
        rows = tuple(tuple(plain(humanize(str(item[k])) if k in enums and item.get(k) is not None
                                 else self.value_name(item.get(k), named=False)) for k in keys)
                     for item in items)
        numeric = tuple(i for i, k in enumerate(keys)
                        if items and all(isinstance(it.get(k), int) for it in items))
        return Table(tuple(humanize(k) for k in keys), rows, caption, numeric=numeric)

    # -- examples -------------------------------------------------------------------------------

    def run_examples(self) -> tuple[ExampleView, ...]:
        m = self.m
        if not m.examples:
            return ()
        engine = self._engine()
        sources = {s.id: s for s in m.scoring}
        out = []
        ids = {r.id for r in m.rules}
        for ex in m.examples:
            if ex.id in ids:
                raise ReferenceError(f"example id '{ex.id}' is also a rule id; anchors must be "
                                     "unique")
            setups = tuple(PlayerSetup(str(dict(g)["color"]), self._given(dict(g)))
                           for g in ex.players)
            text = self.rich(ex.text, {}, m, ex.provenance.assumptions)
            marks = self.marks(ex.provenance.assumptions)
            refused = self.engine_problem
            game: Any = None
            sheet: Any = None
            if engine is not None:
                players = [self._player(engine, ex.id, dict(given)) for given in ex.players]
                try:
                    game = engine.new_game(len(players))
                    game.players = players
                    sheet = engine.final_scores(game)
                except ValueError as exc:  # the rules no longer allow this set-up: say so
                    refused = str(exc)
                except Exception as exc:  # an engine bug: shown here, caught by the tests
                    refused = f"{type(exc).__name__}: {exc}"
            if sheet is None or refused:
                out.append(ExampleView(
                    ex.id, ex.title, ex.rule, self.title_of(ex.rule), text, setups,
                    tuple(str(dict(g)["color"]) for g in ex.players), (), (), (), marks,
                    ex.provenance.sources, refused=refused))
                continue
            rows = []
            for sid in ex.show:
                if sid not in sources:
                    raise ReferenceError(f"example '{ex.id}' shows unknown source '{sid}'")
                wigs = tuple(next(ln.points for ln in lines if ln.source == sid)
                             for lines in sheet.lines)
                rows.append((sid, sources[sid].name, wigs))
            explanations = tuple(
                (color, tuple(ln.explanation for ln in lines if ln.source in ex.show))
                for color, lines in zip(sheet.colors, sheet.lines, strict=True))
            applied = tuple((v, next((i.title for i in self.c.variants if i.id == v), v))
                            for v in game.variants)
            out.append(ExampleView(
                ex.id, ex.title, ex.rule, self.title_of(ex.rule), text, setups,
                tuple(sheet.colors), tuple(rows), explanations, applied, marks,
                ex.provenance.sources))
        return tuple(out)

    def _engine(self) -> types.ModuleType | None:
        """The generated engine, rendered and executed in memory (never from disk).

        None when the generated source does not compile: the writer then reports
        generated-invalid at the offending line and writes nothing, so the examples only
        need to say why they have no numbers.
        """
        if self.engine is None and not self.engine_problem:
            try:
                code = pycode.compile_module(self.engine_source, f"<generated {ENGINE}>")
            except (SyntaxError, ValueError) as exc:
                self.engine_problem = f"the generated engine does not compile: {exc}"
                return None
            name = f"_lisboa_reference_engine_{self.c.digest[:16]}"
            module = types.ModuleType(name)
            sys.modules[name] = module  # dataclasses look their module up while being created
            try:
                exec(code, module.__dict__)
            except Exception as exc:
                raise ReferenceError(f"the generated engine fails to load: "
                                     f"{type(exc).__name__}: {exc}") from None
            finally:
                sys.modules.pop(name, None)
            self.engine = module
        return self.engine

    def _player(self, engine: types.ModuleType, example: str, given: dict[str, Any]) -> Any:
        p = engine.Player(color=str(given["color"]))
        blank = {b.id: 0 for b in self.m.businesses}
        p.stores, p.goods = dict(blank), dict(blank)
        for key, value in given.items():
            if key == "color":
                continue
            if not hasattr(p, key):
                raise ReferenceError(f"example '{example}': players have no field '{key}'")
            current = getattr(p, key)
            if isinstance(current, dict) and isinstance(value, dict):
                current.update(value)
            else:
                setattr(p, key, list(value) if isinstance(value, list) else value)
        return p

    def _given(self, given: dict[str, Any]) -> Rich:
        vocab = {v.name: v for v in self.m.vocabulary}
        decrees = {d.id: d for d in self.m.decrees}
        parts: list[Rich] = []
        for key, value in given.items():
            if key == "color":
                continue
            v = vocab.get(key)
            if isinstance(value, dict):
                for item, n in value.items():
                    name = str(self.names.get(str(item), item))
                    label = v.words.replace("{item}", name) if v else f"{humanize(key)} {name}"
                    parts.append(plain(f"{_bare(label)} {n}"))
                continue
            label = _bare(v.words) if v else humanize(key)
            if key == "decrees" and isinstance(value, list):
                shown = []
                for d in value:
                    dec = decrees.get(d)
                    detail = (f" ({self.words(dec.condition.source, {})}: {dec.wigs})"
                              if dec else "")
                    shown.append((link(humanize(d), f"decree-{d}"), Piece(detail)))
                parts.append((Piece(label + " "), *join([tuple(x) for x in shown], "; ")))
                continue
            if isinstance(value, list) and all(
                    isinstance(v, str) and v not in self.names and _ENUM_ID.fullmatch(v)
                    for v in value):  # ids of things without names: `plan-01` -> `Plan 01`
                value = [humanize(v) for v in value]
            parts.append(plain(f"{label} {self.value_name(value)}"))
        return join(parts, "; ") if parts else plain("—")

    # -- chapters -------------------------------------------------------------------------------

    def build(self) -> Document:
        m = self.m
        self.examples = self.run_examples()
        self.figs = tuple(
            Figure(f"figure-{d.name}", d.title, Markup(diagrams.render(d)),
                   f"{FIGURES}/{d.name}.svg") for d in self.diagrams())
        chapters = self.rule_chapters()
        variants = self.ch_variants(tuple(chapters))
        chapters.append(variants)
        chapters.append(self.ch_appendix(tuple(chapters)))
        found = self.ch_find()
        if found.blocks:
            chapters.append(found)
        game = m.data["game"]
        players = game["players"]
        subtitle = (Piece(f"{game.get('designer', '')} · {game.get('publisher', '')} · "
                          f"{game.get('published', '')} · {players['min']}–{players['max']} "
                          "players"),)
        return Document(
            title=str(game["title"]), subtitle=subtitle, chapters=tuple(chapters),
            aid=self.aid(), variants=tuple((v.id, v.title, self.variant_index[v.id])
                                           for v in self.c.variants),
            header=_comment_header(self.c), footer=str(game["title"]),
            edition=_edition(self.c) or "standard game",
            house_rules=_edition(self.c),
            figures=self.figs,
            notes=self.notes(), variant_pages=tuple(
                b for b in variants.blocks if isinstance(b, VariantView)))

    def rule_chapters(self) -> list[Chapter]:
        """The chapters of the rules themselves (not the variants, appendix and index): what a
        variant's handout compares, card by card, with the same chapters under the variant."""
        chapters = [self.ch_game(), self.ch_turn(), self.ch_court(), self.ch_costs(),
                    self.ch_end(), self.ch_scoring()]
        chapters = _beside_their_rules(chapters, self.move_cards())
        rest = [r for r in self.m.rules if r.id not in self.placed]
        if rest:  # a rule with steps of its own (a trigger that does them) says them
            chapters.append(Chapter("chap-other", "Other rules", tuple(
                self.card(r, proc=self.proc_view(r.id), procedure=bool(self.proc_view(r.id)),
                          proc_players=self.proc_view(r.id, players=True))
                for r in rest)))
        effects = self.ch_effects()
        if effects.blocks:
            chapters.append(effects)
        return chapters

    def move_cards(self) -> list[tuple[str, RuleCard]]:
        """The moves of the flow that are no action (drawing a card, placing a marker, the
        period end's discard), each with the rule it belongs to: `rule_chapters` prints each
        card after the card that holds that rule."""
        m = self.m
        ps = m.procs
        out: list[tuple[str, RuleCard]] = []
        for move in (ps.actions.values() if ps is not None else ()):
            if move.path[:2] != ("flow", "moves"):
                continue  # the actions have cards of their own
            row = ps.action_rows[move.id] if ps is not None else {}
            name = row.get("name")
            rule_title = self.title_of(move.rule)
            move_title = name if isinstance(name, str) and name else humanize(move.id)
            out.append((move.rule, RuleCard(
                f"move-{move.id}", rule_title if rule_title == move_title
                else f"{rule_title}: {move_title}", (),
                proc=self._steps(move.steps, {**row, "this": row}, m, ()),
                proc_players=self._say(move.steps, {**row, "this": row}, m, ()),
                proc_code=self.steps_code(move.steps), procedure=True, kind="procedure")))
        return out

    def ch_game(self) -> Chapter:
        m = self.m
        blocks: list[Block] = []
        tracks = m.data["game"].get("tracks", {})
        for r in (r for r in m.rules if r.section == "game"):
            tables: list[Table] = []
            # A track laid out space by space gets its spaces printed at the rule about it.
            for name, track in tracks.items():
                spaces = track.get("spaces") if isinstance(track, dict) else None
                if spaces and isinstance(spaces[0], dict) and \
                        _mentions(r.text, f"tracks.{name}"):
                    tables.append(self.side_table(
                        spaces, list(spaces[0]), caption=(
                            Piece(humanize("spaces")),
                            Piece("", "value", marks=self.marks(track.get("assumptions", ()))))))
            blocks.append(self.card(r, tables=tuple(tables)))
        setup = m.data["flow"].get("setup")
        rule = self.rules.get(str(setup.get("id"))) if isinstance(setup, Mapping) else None
        if rule is not None:  # the setup: the steps new_game runs, in their words
            proc = self.proc_view(rule.id, m, rule.provenance.assumptions)
            said = self.proc_view(rule.id, m, rule.provenance.assumptions, players=True)
            blocks.append(self.card(rule, procedure=bool(proc), proc=proc, proc_players=said,
                                    proc_code=self.proc_code(rule.id, m)))
        comp = m.data["components"]
        listed = [x["id"] for x in comp.get("rules", ())]
        for r in (r for r in m.rules if r.section == "components"):
            local, _ = find_owner(m, r)
            extra: list[Table] = []
            if local is comp.get("shipyard") and comp.get("ships"):
                extra.append(self.side_table(
                    comp["ships"], list(comp["ships"][0]),
                    caption=(Piece(humanize("ships")), Piece(
                        "", "value", marks=self.marks(comp.get("ships_assumptions", ()))))))
            if listed and r.id == listed[0] and comp.get("decks"):
                extra.append(self.record_table(comp["decks"], ["name", "years", "role", "period"],
                                               caption=plain(humanize("decks"))))
            blocks.append(self.card(r, tables=tuple(extra)))
        return Chapter("chap-game", "The game", tuple(blocks), False)

    def ch_turn(self) -> Chapter:
        m = self.m
        blocks: list[Block] = [Heading("turn-order", "Turn order")]
        turn = [self.rules[t["id"]] for t in m.data["flow"]["turn"]]
        steps = []
        for r in turn:
            self.placed.append(r.id)
            steps.append(StepView(self.rule_text(r), r.id, r.title,
                              self.marks(r.provenance.assumptions)))
        blocks.append(RuleCard("turn", "", (), steps=tuple(steps), procedure=True,
                           kind="procedure"))
        turn_end = m.data["flow"].get("turn_end")
        rule = self.rules.get(str(turn_end.get("id"))) if isinstance(turn_end, Mapping) else None
        if rule is not None:  # the end of the turn: the steps the engine runs, in their words
            proc = self.proc_view(rule.id, m, rule.provenance.assumptions)
            said = self.proc_view(rule.id, m, rule.provenance.assumptions, players=True)
            blocks.append(self.card(rule, procedure=bool(proc), proc=proc, proc_players=said,
                                    proc_code=self.proc_code(rule.id, m)))
        blocks.append(Heading("game-flow", "Game flow"))
        blocks.append(self.flow())
        phases = [ph for ph in m.data["flow"].get("phases", ()) if isinstance(ph, Mapping)]
        if phases:  # the states the engine waits in, with whose decision each waits for
            blocks.append(Heading("phases", humanize("phases"), only="annotated"))
            blocks.append(Table(
                (humanize("id"), humanize("text")),
                tuple(((Piece(str(ph.get("id", "")), "code"),),
                       self.rich(str(ph.get("text", "")), {})) for ph in phases),
                row_ids=tuple(f"phase-{ph.get('id', '')}" for ph in phases), only="annotated"))
        blocks.extend(f for f in (self.figure("turn"),) if f is not None)
        blocks.append(Heading("actions", "Actions"))
        overview = []
        for a in m.actions:
            overview.append((plain(str(a.number) if a.number is not None else ""),
                             (link(a.name, a.id),), plain(a.plays or "")))
        blocks.append(Table(("#", humanize("name"), humanize("plays")), tuple(overview),
                            numeric=(0,)))
        for a in m.actions:
            if a.cost is None:
                blocks.append(self.action_card(a))
        return Chapter("chap-turn", "The turn", tuple(blocks))

    def action_card(self, a: Any) -> RuleCard:
        facts = []
        if a.plays:
            facts.append(Fact(humanize("plays"), plain(a.plays)))
        if a.cost:
            facts.append(Fact(humanize("cost"), (link(self.title_of(a.cost), a.cost),)))
        if a.lacking_cost:
            facts.append(Fact(humanize("lacking_cost"),
                              (link(self.title_of(a.lacking_cost), a.lacking_cost),)))
        if not a.followable:
            facts.append(Fact(humanize("followable"), plain(self.value_name(False))))
        if a.reward:
            facts.append(Fact(humanize("reward"), plain(self.value_name(dict(a.reward)))))
        label = f"{humanize('action')} {a.number}" if a.number is not None else ""
        ps = self.m.procs
        action = next((x for x in ps.actions.values() if x.rule == a.id), None) \
            if ps is not None else None
        if action is not None:  # the steps the engine runs, in their words and as written
            row = ps.action_rows[action.id] if ps is not None else {}
            proc = self._steps(action.steps, {**row, "this": row}, self.m,
                               tuple(a.rule.provenance.assumptions))
            said = self._say(action.steps, {**row, "this": row}, self.m,
                             tuple(a.rule.provenance.assumptions))
            return self.card(a.rule, facts=tuple(facts), label=label, procedure=bool(proc),
                             proc=proc, proc_players=said,
                             proc_code=self.steps_code(action.steps))
        local, _ = find_owner(self.m, a.rule)
        steps = tuple(StepView(self.rich(s, local, declared=a.rule.provenance.assumptions))
                      for s in a.steps)
        return self.card(a.rule, facts=tuple(facts), steps=steps, label=label,
                         procedure=bool(steps))

    def flow(self) -> Flow:
        m = self.m
        flow = m.data["flow"]
        turn = tuple(FlowNode(t["id"], self.title_of(t["id"])) for t in flow["turn"])
        ends: list[FlowEnd] = []
        procs = {"period": flow.get("period_end", {}), "game": flow.get("game_end", {})}
        order: list[str] = []
        for t in m.triggers:
            if t.ends not in order:
                order.append(t.ends)
        for i, kind in enumerate(order):
            proc = procs.get(kind, {})
            when = tuple(
                FlowNode(t.id, when_words(t.periods),
                         plain(self.trigger_words(t)))
                for t in m.triggers if t.ends == kind)
            steps = tuple(FlowNode(s.id, s.rule.title) for s in m.period_end) \
                if proc is flow.get("period_end") else ()
            last = i == len(order) - 1
            ends.append(FlowEnd(
                str(proc.get("id", kind)), self.title_of(str(proc.get("id", kind))), kind, when,
                steps, "chap-scoring" if last else turn[0].id,
                humanize("scoring") if last else turn[0].title,
                _when_label(when)))
        return Flow(turn, tuple(ends))

    # -- diagrams (emit.reference.diagrams lays them out) ---------------------------------------

    def diagrams(self) -> tuple[diagrams.Diagram, ...]:
        """The turn, the period end and the game end as diagrams, from the model: the turn's
        steps and phases of rules/flow.yaml, the actions of rules/court.yaml, the end triggers,
        the period end's steps and the game end's rounds."""
        m = self.m
        flow = m.data["flow"]
        D, N, S = diagrams.Diagram, diagrams.Node, diagrams.Stage
        phase_text = {str(p.get("rule")): str(p.get("text", "")) for p in flow.get("phases", ())
                      if isinstance(p, Mapping) and p.get("rule")}
        turn_steps = [t for t in flow.get("turn", ()) if isinstance(t, Mapping)]
        stages: list[diagrams.Stage] = []
        numbered = [a for a in m.actions if a.number is not None] or list(m.actions)
        for i, t in enumerate(turn_steps):
            rule = self.rules.get(str(t["id"]))
            sub = "".join(p.text for p in self.rule_text(rule)) if rule is not None else ""
            stages.append(S((N(f"{i + 1}. {self.title_of(str(t['id']))}",
                               phase_text.get(str(t["id"]), sub)),)))
            if i == 0 and numbered:  # the card played takes one of the actions
                stages.append(S(tuple(
                    N(f"{a.number}. {a.name}" if a.number is not None else a.name, a.plays or "",
                      self.icon_art(a.id))
                    for a in numbered), caption=f"{humanize('action')}: one of {len(numbered)}"))
        interrupts = [str(p.get("text", "")) for p in flow.get("phases", ())
                      if isinstance(p, Mapping) and p.get("interrupts")]
        out = [D("turn", humanize("turn"), tuple(stages), loop=humanize("next player"),
                 note=" ".join(interrupts))]
        for kind, key in (("period", "period_end"), ("game", "game_end")):
            proc = flow.get(key)
            if not isinstance(proc, Mapping):
                continue
            when = tuple(N(self.trigger_words(t),
                           when_words(t.periods), self.icon_art(t.condition.source))
                         for t in m.triggers if t.ends == kind)
            st: list[diagrams.Stage] = []
            title = self.title_of(str(proc.get("id", key)))
            if when:
                st.append(S(when, caption=" / ".join(dict.fromkeys(
                    t.rule.title for t in m.triggers if t.ends == kind and t.rule.title != title))))
            if proc.get("finish"):
                st.append(S((N(f"{humanize('finish')} the {proc['finish']}"),)))
            if key == "period_end":
                steps = [N(f"{i + 1}. {s.rule.title}") for i, s in enumerate(m.period_end)]
                for k in range(0, len(steps), 4):
                    st.append(S(tuple(steps[k:k + 4]), sequence=True))
                then = self.title_of(str(turn_steps[0]["id"])) if turn_steps else ""
                if then:
                    st.append(S((N(f"\u2192 {then}"),)))
            else:
                extra = proc.get("extra_rounds")
                follows = humanize("follows_allowed") if proc.get("follows_allowed") else ""
                for k in range(int(extra) if isinstance(extra, int) else 0):
                    st.append(S((N(f"{humanize('extra_rounds')} ({k + 1} of {extra})", follows),)))
                firsts = [self.icon_art(s.formula.source if s.formula else "", s.held,
                                        *(g.measure.source for g in s.groups))[:1]
                          for s in m.scoring]
                st.append(S((N(humanize("scoring"), " · ".join(s.name for s in m.scoring),
                               tuple(dict.fromkeys(i for f in firsts for i in f))),)))
            out.append(D(str(proc.get("id", key)), title, tuple(st)))
        return tuple(out)

    def figure(self, name: str) -> Figure | None:
        return next((f for f in self.figs if f.id == f"figure-{name}"), None)

    def ch_court(self) -> Chapter:
        m = self.m
        blocks: list[Block] = []
        nobles_rules = [r for r in m.rules if r.section == "nobles"
                        and r.id in [x["id"] for x in m.data["nobles"].get("rules", ())]]
        title = nobles_rules[0].title if nobles_rules else humanize("nobles")
        if nobles_rules:
            blocks.append(self.card(nobles_rules[0], tables=(self.nobles_table(),)))
        else:
            blocks.append(self.nobles_table())
        for a in m.actions:
            if a.cost is not None:
                blocks.append(self.action_card(a))
        for r in nobles_rules[1:]:
            blocks.append(self.card(r))
        blocks.append(Heading("state-actions", humanize("state_actions")))
        for sa in m.state_actions:
            effects = [Fact(humanize("effects"), plain(self.value_name(dict(sa.effects))))] \
                if sa.effects else []
            blocks.append(self.card(sa.rule, facts=tuple(effects)))
        blocks.append(Heading("noble-actions", humanize("noble_actions")))
        for na in m.noble_actions:
            facts: list[Fact] = []
            if na.land_price is not None:
                facts.append(Fact(humanize("land_price"),
                                  plain(self.words(na.land_price.source, dict(na.params),
                                                   self.term("money")))))
            if na.lots:
                facts.append(Fact(humanize("lots"), plain(", ".join(
                    f"{self.names.get(b, b)} {n}" for b, n in na.lots))))
            plans: tuple[Table, ...] = ()
            if na.wigs_per_official and m.plans:
                plans = (self.plans_table(),)
            children = []
            if na.extra_pick is not None:
                extra = next((r for r in m.rules if r.section == "nobles"
                              and r.text == na.extra_pick.text and r.id != na.id), None)
                if extra is not None:
                    children.append(self.card(extra))
            blocks.append(self.card(na.rule, facts=tuple(facts), children=tuple(children),
                                    tables=plans,
                                    proc_code=self.proc_code(na.id),
                                    proc=self.proc_view(na.id, declared=(
                                        na.rule.provenance.assumptions)),
                                    proc_players=self.proc_view(na.id, declared=(
                                        na.rule.provenance.assumptions), players=True)))
        return Chapter("chap-court", title, tuple(blocks))

    def plans_table(self) -> Table:
        """The Plans counted by the Officials they show (not one id per Plan)."""
        counts: dict[int, int] = {}
        for p in self.m.plans:
            counts[p.officials] = counts.get(p.officials, 0) + 1
        rows = tuple((plain(str(k)), plain(str(n)))
                     for k, n in sorted(counts.items(), reverse=True))
        caption = (Piece(humanize("plans")), Piece("", "value", marks=self.marks(
            self.m.data["components"].get("plans_assumptions", ()))))
        return Table((humanize("officials"), humanize("plans")), rows, caption, numeric=(0, 1))

    def nobles_table(self) -> Table:
        m = self.m
        sa_names = {a.id: a.name for a in m.state_actions}
        na_names = {a.id: a.name for a in m.noble_actions}
        rows = []
        ids = []
        for n in m.nobles:
            rows.append((
                (Piece(n.name, "value"),),
                plain(n.title),
                join([(link(sa_names.get(s, s), f"state-action.{s}"),) for s in n.state_actions],
                     " · "),
                (link(na_names.get(n.noble_action, n.noble_action), n.noble_action),),
                (Piece(", ".join(self.names.get(g, g) for g in n.trade_goods), "value",
                       marks=self.marks(n.provenance.assumptions)),),
            ))
            ids.append(f"nobles-{n.id}")
            self.row_anchors[f"nobles-{n.id}"] = n.name
        head = tuple(humanize(k) for k in ("name", "title", "state_actions", "noble_action",
                                           "trade_goods"))
        return Table(head, tuple(rows), row_ids=tuple(ids))

    def ch_costs(self) -> Chapter:
        m = self.m
        blocks: list[Block] = []
        for c in m.costs:
            params = dict(c.params)
            facts = [Fact(humanize("formula"), plain(self.words(c.formula.source, params)))]
            if c.example:
                values = {**params, **dict(c.example)}
                missing = [n for n in c.formula.names if n not in values]
                if missing:
                    raise ReferenceError(f"cost '{c.id}': the example gives no value for "
                                         f"{', '.join(missing)}")
                vocab = {v.name: v.words for v in m.vocabulary}
                # the arithmetic with the example's values; none when there is nothing to
                # compute (a formula that is one name: "4 = 4" shows nothing)
                sums = words.formula_steps(m, c.formula.source, params, dict(c.example))
                given = ", ".join(f"{words.bare(vocab.get(k, k))} {v}" for k, v in c.example)
                if sums:
                    facts.append(Fact(humanize("example"), (
                        Piece(f"{given[:1].upper()}{given[1:]}: "), Piece(sums, "value"))))
            blocks.append(self.card(c.rule, facts=tuple(facts)))
        for na in m.noble_actions:
            if na.land_price is not None:  # a card of its own, beside the other costs
                blocks.append(RuleCard(
                    f"{na.id}-land-price", f"{humanize('land_price')}: {na.name}",
                    ((Piece(f"{humanize('land_price')} ("), link(na.name, na.id),
                      Piece("): "),
                      Piece(self.words(na.land_price.source, dict(na.params), self.term("money")),
                            "value")),)))
        return Chapter("chap-costs", humanize("costs"), tuple(blocks))

    def ch_end(self) -> Chapter:
        m = self.m
        flow = m.data["flow"]
        blocks: list[Block] = []
        for kind, key in (("period", "period_end"), ("game", "game_end")):
            proc = flow.get(key)
            if not isinstance(proc, dict):
                continue
            rule = self.rules.get(proc["id"])
            blocks.append(Heading(f"{proc['id']}-section", self.title_of(proc["id"])))
            for t in m.triggers:
                if t.ends == kind:
                    said = self.trigger_words(t)
                    facts = (Fact(humanize("condition"), plain(said)),
                             Fact(humanize("period"), plain(
                                 ", ".join(str(p) for p in t.periods) or "any")))
                    # titled by what triggers it: cards in a row never share one title
                    blocks.append(self.card(t.rule, title=f"{when_words(t.periods)}: "
                                            f"when {said}", facts=facts))
            if rule is None:
                continue
            facts_l = [Fact(humanize(k), plain(self.value_name(v))) for k, v in proc.items()
                       if k in ("finish", "extra_rounds", "follows_allowed")]
            steps = tuple(StepView(self.rule_text(s.rule), s.id, s.rule.title,
                               self.marks(s.rule.provenance.assumptions))
                          for s in m.period_end) if key == "period_end" else ()
            self.placed.extend(s.id for s in m.period_end if key == "period_end")
            blocks.append(self.card(rule, facts=tuple(facts_l), steps=steps,
                                    procedure=True))
            blocks.extend(f for f in (self.figure(str(proc["id"])),) if f is not None)
        return Chapter("chap-end", " · ".join(
            self.title_of(str(flow[k]["id"])) for k in ("period_end", "game_end") if k in flow),
            tuple(blocks))

    def ch_scoring(self) -> Chapter:
        m = self.m
        sc = m.data["scoring"]
        blocks: list[Block] = []
        if sc.get("intro"):
            blocks.append(Para(self.rich(sc["intro"], sc)))
        blocks.append(self.scoring_table())
        for s in m.scoring:
            facts = []
            tables: list[Table] = []
            if s.formula is not None:
                facts.append(Fact(humanize("formula"), plain(self.words(
                    s.formula.source, dict(s.params), self.score_term()))))
            if s.eligible is not None:
                facts.append(Fact(humanize("eligible"),
                                  plain(self.words(s.eligible.source, dict(s.params)))))
            if s.groups:
                tables.append(self.majority_table(s))
            # a held source of the items the components' table lists: that table
            if s.kind == "held" and m.decrees and [it.id for it in s.items] == [
                    d.id for d in m.decrees]:
                tables.append(self.decree_table())
            blocks.append(self.card(s.rule, facts=tuple(facts), tables=tuple(tables)))
        ties = next((r for r in m.rules if r.section == "scoring"
                     and r.text == sc.get("majority", {}).get("text")), None)
        if ties is not None:
            blocks.append(self.card(ties))
        tb = sc.get("tiebreakers")
        if isinstance(tb, dict) and tb.get("id") in self.rules:
            steps = tuple(StepView(plain(t.name)) for t in m.tiebreakers)
            blocks.append(self.card(self.rules[tb["id"]], steps=steps, procedure=True))
        return Chapter("chap-scoring", humanize("scoring"), tuple(blocks))

    def scoring_table(self) -> Table:
        m = self.m
        rows = []
        for i, s in enumerate(m.scoring, start=1):
            local, _ = find_owner(m, s.rule)
            rows.append((plain(str(i)), (link(s.name, s.id),),
                         self.rich(s.short, local, declared=())
                         + ((Piece("", "value", marks=self.marks(s.rule.provenance.assumptions)),)
                            if s.rule.provenance.assumptions else ())))
        return Table(("#", humanize("source"), humanize(self.score_term())), tuple(rows),
                     numeric=(0,))

    def score_term(self) -> str:
        return str(self.m.data["game"].get("terms", {}).get("score", "score"))

    def majority_table(self, s: Any, m: Model | None = None) -> Table:
        model = m or self.m
        maj = model.data["scoring"]["majority"]
        cols = list(maj["columns"])
        names = list(maj.get("column_names", ()))
        head = ("", *(names[c - 1] if c - 1 < len(names) else str(c) for c in cols))
        rows = tuple((plain(g.name), *(plain(str(g.table[c - 1])) for c in cols))
                     for g in s.groups)
        caption = (Piece(s.name),
                   Piece("", "value", marks=self.marks(s.rule.provenance.assumptions)))
        return Table(tuple(head), rows, caption, numeric=tuple(range(1, len(head))))

    def decree_table(self) -> Table:
        comp = self.m.data["components"]
        rows = tuple((plain(humanize(d.id)), plain(self.words(d.condition.source, {})),
                      plain(str(d.wigs))) for d in self.m.decrees)
        keys = list(comp["decrees"][0])  # the id's column headed by what a row is: "Decree"
        return Table(tuple(self.data_words.row_noun("decrees") if k == "id" else humanize(k)
                           for k in keys), rows, (
            Piece(humanize("decrees")),
            Piece("", "value", marks=self.marks(comp.get("decrees_assumptions", ())))),
            row_ids=tuple(f"decree-{d.id}" for d in self.m.decrees), numeric=(2,))

    # -- effects ---------------------------------------------------------------------------------

    def ch_effects(self) -> Chapter:
        """The effects named on cards and actions, the procedures they share, the hooks on
        events and the measures, each printed from the very steps the engine runs."""
        m = self.m
        groups = self.proc_groups(m)
        ps = m.procs
        blocks: list[Block] = []
        # each event in words (rules/effects.yaml `events:`), to head the hooks on it
        said = {str(e.get("id")): str(e.get("text")) for e in
                (m.data.get("effects") or {}).get("events") or () if isinstance(e, Mapping)}
        for group in ("effects", "procedures", "hooks"):
            ids = [pid for pid, g in groups.items() if g == group]
            if not ids:
                continue
            if blocks or group != "effects":
                blocks.append(Heading(f"{group}-list", humanize(group)))
            for pid in ids:
                anchor, title = self.proc_anchor(pid, m)
                row = self.proc_row(pid, m)
                local = self.proc_local(pid, m)
                text = row.get("text")
                body = (self.rich(text, local, m, missing=lambda raw: raw),) \
                    if isinstance(text, str) and text.strip() else ()
                event = ""
                fired: tuple[tuple[str, str], ...] = ()
                if group == "hooks" and ps is not None:
                    events = [e for e, hs in ps.hooks.items() if pid in hs]
                    event = " · ".join(said.get(e) or _event_words(e) for e in events)
                    fired = tuple(x for e in events for x in self.raised_by(e, m))
                blocks.append(RuleCard(anchor, title, body, proc=self.proc_view(pid, m),
                                       proc_players=self.proc_view(pid, m, players=True),
                                       proc_code=self.proc_code(pid, m),
                                       event=event, fired_by=fired, procedure=True))
        # the measures the steps read, with their words (rules/vocabulary.yaml)
        vocab = {v.name: v.words for v in m.vocabulary}
        measures = [mid for mid, _ in ps.measures] if ps is not None else []
        if measures:  # names of the engine's: the annotated edition's
            blocks.append(Heading("measures-list", humanize("measures"), only="annotated"))
            blocks.append(Table(
                (humanize("name"), humanize("words")),
                tuple(((Piece(mid, "code"),),
                       self.rich(vocab[mid], {}, m, missing=lambda raw: raw)
                       if mid in vocab else plain("")) for mid in measures),
                row_ids=tuple(f"measure-{mid}" for mid in measures), only="annotated"))
        return Chapter("chap-effects", humanize("effects"), tuple(blocks))

    # -- variants and appendix -------------------------------------------------------------------

    def folded_builder(self, v: VariantInfo) -> _Builder | None:
        """A builder of the rules as variant `v` makes them (as `build --variant` folds it):
        the chapters a handout compares with the base game's; none when the engine builds no
        rule set of `v` alone."""
        rs = next((r for r in self.c.rulesets if r.key == (v.id,)), None)
        if rs is None:
            return None
        return _Builder(replace(self.c, base=rs, rulesets=[rs], variants=[],
                                folded=(*self.c.folded, v.id),
                                folded_titles=(*self.c.folded_titles, (v.id, v.title)),
                                folded_infos=(*self.c.folded_infos, v)), self.engine_source)

    def in_place(self, v: VariantInfo, base: Sequence[Chapter]) -> tuple[CardChange, ...]:
        """Every card of the rules that variant `v` changes, whole, the change marked."""
        folded = self.folded_builder(v)
        if folded is None:
            return ()
        # the chapters of the rules, and the Political cards (a variant may change a card)
        cards = (Chapter("chap-cards", self.cards_title(), (self.cards_table(),)),)
        after = (*folded.rule_chapters(), Chapter("chap-cards", folded.cards_title(),
                                                  (folded.cards_table(),)))
        return _chapter_changes((*base, *cards), after)

    def ch_variants(self, base: Sequence[Chapter] = ()) -> Chapter:
        blocks: list[Block] = []
        for v in self.c.variants:
            vm = self.model_for(v.id)
            in_place = self.in_place(v, base) if base else ()
            rs = next((r for r in self.c.rulesets if r.key == (v.id,)), None)
            rows = tuple(self.change_row(ch, vm) for ch in (rs.changes if rs else ()))
            text_changes = []
            for r in self.m.rules:
                after_rule = vm.rule(r.id)
                if after_rule is None:
                    continue
                before = words.plain_text(self.m, r)
                after = words.plain_text(vm, after_rule)
                if before != after:
                    text_changes.append(TextChange(r.id, r.title, before, after))
            # the rules the variant adds: all their words are new (no card in the base game)
            known = {r.id for r in self.m.rules}
            for r in vm.rules:
                if r.id not in known and r.text.strip():
                    text_changes.append(TextChange("", r.title, "", words.plain_text(vm, r)))
            callouts = tuple(c for cs in self.callouts.values() for c in cs if c.variant == v.id)
            blocks.append(VariantView(
                v.id, v.title, self.variant_index[v.id], v.applies_players,
                self.rich(v.text, {}, vm, v.provenance.assumptions, players=_one_count(v)),
                rows, tuple(text_changes),
                callouts, self.marks(v.provenance.assumptions), v.provenance.sources,
                self.step_redlines(vm), official=v.official, in_place=in_place,
                said_step_changes=_said_step_changes(in_place)))
        return Chapter("chap-variants", humanize("variants"), tuple(blocks))

    def change_row(self, ch: Any, after: Model) -> ChangeRow:
        """One overlay change in words: the path through the data by names, before -> after."""
        node: Any = after.data.get(ch.kind)
        base: Any = self.m.data.get(ch.kind)
        parts = [humanize(ch.kind)]
        rule = ""
        rule_title = ""
        at = len(parts)  # the parts up to the record the rule was found at
        parent: Any = None
        for key in ch.path:
            parent = node
            node, base = _step(node, key), _step(base, key)
            here = node if node is not None else base
            if isinstance(key, int):
                label = None
                if isinstance(here, dict):
                    label = here.get("name", here.get("title", here.get("id", here.get("number"))))
                parts.append(str(label if label is not None else key))
                anchor = f"{ch.path[ch.path.index(key) - 1]}-{here.get('id')}" \
                    if isinstance(here, dict) and ch.path.index(key) > 0 else ""
                if anchor in self.row_anchors:
                    rule, rule_title = anchor, self.row_anchors[anchor]
                    at = len(parts)
            else:  # a key by its name, else the vocabulary's words ("Réis", not "Reis")
                parts.append(self.key_label(str(key)))
            if isinstance(here, dict) and isinstance(here.get("text"), str):
                found = next((r for r in self.m.rules
                              if r.section == ch.kind and r.text == here["text"]), None)
                # a record whose text the variant changes: its rule by its id
                found = found or next((r for r in self.m.rules if r.section == ch.kind
                                       and r.id == here.get("id")), None)
                if found is not None:
                    rule, rule_title = found.id, found.title
                    at = len(parts)
        if not rule and all(isinstance(k, str) for k in ch.path):
            # a value no record's rule holds: the rule whose words print it
            found_at = self.rule_saying(".".join((ch.kind, *(str(k) for k in ch.path))), after)
            if found_at:
                rule, rule_title = found_at, self.title_of(found_at)
                at = len(parts) - 1
        before, after_v = ch.before, ch.after
        key = ch.path[-1] if ch.path else ""
        if isinstance(key, str) and isinstance(parent, dict) and key.endswith("s"):
            names = parent.get(f"{key[:-1]}_names")
            if isinstance(names, list):
                before, after_v = _named(before, names), _named(after_v, names)
        if "steps" in ch.path:  # a step is shown by its words (its redline is below)
            before, after_v = _step_words(before), _step_words(after_v)
        structural = "steps" in ch.path or any(_CODE.search(v) is not None for v in (
            ch.before, ch.after) if isinstance(v, str)) or any(
            isinstance(v, Mapping) or (isinstance(v, list) and any(isinstance(i, Mapping)
                                                                   for i in v))
            for v in (ch.before, ch.after))
        return ChangeRow(plain(" › ".join(parts)), self.value_name(before),
                         self.value_name(after_v), rule, rule_title, structural,
                         " › ".join(parts[at:]) if rule else "")

    def rule_saying(self, path: str, m: Model) -> str:
        """The id of the rule whose words print the value at `path` (`game.start.x`): a rule
        text, else a step of the procedure of a rule; empty when no words print it."""
        for r in self.m.rules:
            if _mentions(r.text, path):
                return r.id
        ps = m.procs

        def says(steps: Iterable[Step]) -> bool:
            for s in steps:
                if isinstance(s.text, str) and _mentions(s.text, path):
                    return True
                then, orelse = branches(s)
                if says(then) or says(orelse):
                    return True
            return False

        for pid, proc in (ps.procs.items() if ps is not None else ()):
            anchor = self.proc_anchor(pid, m)[0]
            if anchor in self.rules and says(proc.steps):
                return anchor
        return ""

    def cards_title(self) -> str:
        return humanize("cards")

    def cards_table(self) -> Table:
        """Every Political card: deck, pile, Influence, reward, penalty and event."""
        m = self.m
        comp = m.data["components"]
        na = {a.id: a.name for a in m.noble_actions}
        rows = []
        for c in m.cards:
            event: Rich = ()
            if c.event_action:
                event = (link(na.get(c.event_action, c.event_action), c.event_action),)
            elif c.event_effects:
                event = plain(self.value_name(dict(c.event_effects)))
            rows.append((plain(str(c.number)), plain(self.value_name(c.deck)),
                         plain(self.names.get(c.type, humanize(c.type))),
                         plain(str(c.influence) if c.influence else ""),
                         plain(self.value_name(dict(c.reward)) if c.reward else ""),
                         plain(self.value_name(dict(c.penalty)) if c.penalty else ""),
                         event))
        head = tuple(humanize(k) for k in ("number", "deck", "type", "influence", "reward",
                                           "penalty", "event"))
        caption = (Piece(humanize("cards")), Piece("", "value", marks=self.marks(
            comp.get("cards_assumptions", ()))))
        return Table(head, tuple(rows), caption, numeric=(0, 3),
                     row_ids=tuple(f"card-{c.number}" for c in m.cards))

    def reward_tables(self) -> list[tuple[str, Table]]:
        """Every other list of components whose rows give a reward (clergy tiles, say), as a
        table of each row's id and reward, marked with its `X_assumptions`: the reference
        prints every value the engine plays (the cards have a table of their own)."""
        m = self.m
        comp = m.data.get("components") or {}
        out: list[tuple[str, Table]] = []
        for kind in m.state.kinds:
            src = kind.source or ""
            key = src.removeprefix("components.")
            rows = comp.get(key) if src.startswith("components.") and key != "cards" else None
            if not (isinstance(rows, list) and rows and all(
                    isinstance(r, dict) and isinstance(r.get("reward"), dict) for r in rows)):
                continue
            marks = list(comp.get(f"{key}_assumptions", ()))
            # an id in words, as the Decrees' ("Clergy 01", not "clergy-01")
            body = tuple((plain(humanize(str(r.get(kind.key or "id", "")))),
                          plain(self.value_name(dict(r["reward"])) if r["reward"] else ""))
                         for r in rows)
            caption = (Piece(humanize(key)), Piece("", "value", marks=self.marks(marks)))
            head = self.data_words.row_noun(key) if (kind.key or "id") == "id" \
                else humanize(kind.key or "id")
            out.append((key, Table((head, humanize("reward")), body,
                                   caption, row_ids=tuple(f"{kind.id}-{r.get(kind.key or 'id')}"
                                                          for r in rows))))
        return out

    def ch_appendix(self, before: Sequence[Chapter] = ()) -> Chapter:
        """The cards, the other tables of components and the notes (the players' edition) or
        the assumptions, sources and rule index (the annotated one); `before` are the chapters
        it follows, whose marks the notes say the places of."""
        m = self.m
        blocks: list[Block] = []
        if m.cards:
            blocks.append(Heading("cards", self.cards_title()))
            blocks.append(self.cards_table())
        for key, table in self.reward_tables():
            blocks.append(Heading(f"components-{key}", humanize(key)))
            blocks.append(table)
        self.mark_sites = _mark_sites((*before, Chapter("chap-appendix", "", tuple(blocks))))
        blocks.append(Heading("notes", humanize("notes"), only="players"))
        blocks.append(self.notes_table())
        blocks.append(Heading("assumptions", humanize("assumptions"), only="annotated"))
        used: dict[str, list[Rich]] = {a.id: [] for a in m.assumptions}
        for r in m.rules:
            for a in r.provenance.assumptions:
                used.setdefault(a, []).append((link(r.id, r.id),))
        for v in self.c.variants:
            for a in v.provenance.assumptions:
                used.setdefault(a, []).append((link(v.title, f"variant-{v.id}"),))
            for c in v.callouts:
                for a in c.provenance.assumptions:
                    used.setdefault(a, []).append((link(f"{v.title} › {c.rule}", c.rule),))
        for a_id, where in _data_assumptions(m):
            if a_id in used and where not in used[a_id]:
                used[a_id].append(where)
        rows = tuple(((Piece(f"†{self.assumptions[a.id].n} "), Piece(a.id, "code")),
                      plain(self.assumptions[a.id].value), plain(a.reason),
                      join(used.get(a.id, []), ", "))
                     for a in m.assumptions)
        blocks.append(Table((humanize("id"), humanize("value"), humanize("reason"),
                             "Used by"), rows,
                            row_ids=tuple(f"assumption-{a.id}" for a in m.assumptions),
                            only="annotated"))
        blocks.append(Heading("differences", humanize("differences"), only="annotated"))
        blocks.append(Table(
            (humanize("id"), humanize("text"), humanize("source")),
            tuple(((Piece(d.id, "code"),), self.rich(d.text, {}),
                   join([(link(s, f"source-{s}"),) for s in d.sources], ", "))
                  for d in m.differences),
            row_ids=tuple(f"difference-{d.id}" for d in m.differences), only="annotated"))
        hidden = [f for f in (*m.state.player, *m.state.game) if f.see != "all"]
        if hidden:  # what a view leaves out (rules/state.yaml `see:`)
            blocks.append(Heading("hidden", "What each player sees", only="annotated"))
            blocks.append(Table(
                ("Field", "What it holds", "Who sees it"),
                tuple(((Piece(f"{f.scope}.{f.id}", "code"),), plain(f.text),
                       plain(SEES_WORDS[f.see] + (f", each of one {f.by}"
                                                  if f.by else "")))
                      for f in hidden),
                row_ids=tuple(f"hidden-{f.scope}-{f.id}" for f in hidden), only="annotated"))
        blocks.append(Heading("sources", humanize("sources"), only="annotated"))
        cited: dict[str, list[Rich]] = {s: [] for s, _ in m.sources}
        for r in m.rules:
            for s in r.provenance.sources:
                cited.setdefault(s, []).append((link(r.id, r.id),))
        for v in self.c.variants:
            for s in v.provenance.sources:
                cited.setdefault(s, []).append((link(v.title, f"variant-{v.id}"),))
            for c in v.callouts:
                for s in c.provenance.sources:
                    cited.setdefault(s, []).append((link(f"{v.title} › {c.rule}", c.rule),))
        for s, where in _data_sources(m):
            if s in cited and where not in cited[s]:
                cited[s].append(where)
        blocks.append(Table((humanize("id"), humanize("title"), "Cited by"),
                            tuple(((Piece(s, "code"),), plain(t), join(cited.get(s, []), ", "))
                                  for s, t in m.sources),
                            row_ids=tuple(f"source-{s}" for s, _ in m.sources),
                            only="annotated"))
        blocks.append(Heading("rule-index", "Rule index", only="annotated"))
        blocks.append(Index(tuple((r.id, r.title) for r in sorted(m.rules, key=lambda r: r.id)),
                            only="annotated"))
        return Chapter("chap-appendix", "Appendix", tuple(blocks))

    # -- glossary and index -------------------------------------------------------------------

    def glossary(self) -> Glossary:
        """The glossary of rules/vocabulary.yaml, in alphabetical order of the terms."""
        m = self.m
        data = [e for e in m.data["vocabulary"].get("glossary", ()) if isinstance(e, Mapping)]
        anchor = {str(e["term"]).casefold(): _term_anchor(str(e["term"])) for e in data}
        by_case = {str(e["term"]).casefold(): str(e["term"]) for e in data}
        entries = []
        for e in sorted(data, key=lambda e: _sort_key(str(e["term"]))):
            declared = tuple(e.get("assumptions", ()))
            entries.append(GlossaryEntry(
                _term_anchor(str(e["term"])), str(e["term"]),
                self.rich(str(e["text"]), e, m, declared),
                tuple((anchor[str(t).casefold()], by_case[str(t).casefold()])
                      for t in e.get("see", ()) if str(t).casefold() in anchor),
                tuple((str(r), self.title_of(str(r))) for r in e.get("rules", ())
                      if str(r) in self.rules),
                self.marks(declared)))
        return Glossary(tuple(entries))

    def ch_find(self) -> Chapter:
        """The glossary and the index of its terms (the pages are the `pdf` command's)."""
        g = self.glossary()
        if not g.entries:
            return Chapter("chap-find", humanize("glossary"), ())
        index = TermIndex(tuple((e.term, ((e.id, humanize("glossary")), *e.rules))
                                for e in g.entries))
        return Chapter("chap-find", f"{humanize('glossary')} · {humanize('index')}", (
            Heading("glossary", humanize("glossary")), g,
            Heading("index", humanize("index")), index))

    def notes(self) -> tuple[NoteView, ...]:
        """The assumptions as the players' edition prints them: what each assumes, why, the
        rules it stands at and their sources' titles (so a reader with the rulebook can check
        and correct it)."""
        m = self.m
        titles = dict(m.sources)
        at: dict[str, list[Rule]] = {}
        for r in m.rules:
            for aid in r.provenance.assumptions:
                at.setdefault(aid, []).append(r)
        # the callouts, variants and tables of data (not rules) that rest on an assumption:
        # their sources are where to check it too
        cited: dict[str, list[str]] = {}
        for c in (c for cs in self.callouts.values() for c in cs):
            for aid in (mk.id for mk in c.marks):
                cited.setdefault(aid, []).extend(c.sources)
        for v in self.c.variants:
            for aid in v.provenance.assumptions:
                cited.setdefault(aid, []).extend(v.provenance.sources)
        comp = m.data.get("components") or {}
        for key, ids in comp.items():
            if key.endswith("_assumptions") and isinstance(ids, list):
                found = comp.get(key.removesuffix("_assumptions") + "_source") or ()
                for aid in ids:
                    cited.setdefault(str(aid), []).extend(str(s) for s in found)
        out = []
        for a in m.assumptions:
            rules = at.get(a.id, [])
            sources: list[str] = []
            for src in [s for r in rules for s in r.provenance.sources] + cited.get(a.id, []):
                if titles.get(src, src) not in sources:
                    sources.append(titles.get(src, src))
            # the rules that declare it, then every other place its mark prints (a table, a
            # callout, a variant, a value bound into another rule's words)
            places = [(r.id, r.title) for r in rules]
            places += [s for s in self.mark_sites.get(a.id, ()) if s[0] not in
                       {p for p, _ in places}]
            where = join([(link(title, anchor),) for anchor, title in places], ", ")
            out.append(NoteView(self.assumptions[a.id].n, a.id, self.assumptions[a.id].value,
                                a.reason, where, tuple(sources)))
        return tuple(out)

    def notes_table(self) -> Table:
        """The players' notes: number, what is assumed, why, where and the sources to check."""
        rows = tuple((plain(str(n.n)), plain(n.value), plain(n.reason), n.where,
                      plain("; ".join(n.sources)))
                     for n in self.notes())
        return Table(("", humanize("assumed"), humanize("why"), humanize("where"),
                      humanize("check_in")), rows, numeric=(0,),
                     row_ids=tuple(f"note-{n.n}" for n in self.notes()), only="players")

    # -- player aid -------------------------------------------------------------------------------

    def aid_callouts(self, rule_ids: Iterable[str]) -> tuple[CalloutView, ...]:
        """The variant callouts at these rules, each text once."""
        out: list[CalloutView] = []
        for rid in rule_ids:
            for c in self.callouts.get(rid, ()):
                if all((o.variant, o.text) != (c.variant, c.text) for o in out):
                    out.append(c)
        return tuple(out)

    # -- icons: rules/vocabulary.yaml `icons:`, drawn by emit.reference.icons ---------------------

    @functools.cached_property
    def icon_of(self) -> dict[str, tuple[icons.Icon, ...]]:
        """Each thing icons stand for (a name of the vocabulary, a Noble, a business, an action:
        the cards it may play) -> its icons; a Noble or a business without one gets the generic
        default (`icons.default`)."""
        m = self.m
        named = {n.id: n.name for n in m.nobles} | {b.id: b.name for b in m.businesses}
        out: dict[str, tuple[icons.Icon, ...]] = {}
        for e in m.data["vocabulary"].get("icons", ()):
            refs = [str(r) for r in e.get("of", ())]
            term = e.get("term") or next((named[r] for r in refs if r in named), str(e["id"]))
            icon = icons.Icon(str(e["id"]), str(term), str(e["shape"]), str(e["fill"]),
                              str(e["stroke"]), str(e.get("ink", "")), str(e.get("glyph", "")))
            for r in refs:
                out[r] = (*out.get(r, ()), icon)
        for ref, name in named.items():
            if ref not in out:
                out[ref] = (replace(icons.default(name), id=f"default-{ref}"),)
        return out

    def aid_icon(self, ref: str) -> AidIcon | None:
        found = self.icon_of.get(ref)
        return _aid_icon(found[0]) if found else None

    def assumed(self, rule: Rule, text: Rich = ()) -> Rich:
        """`text` followed by the marks of what `rule` assumes that it does not carry yet."""
        have = {k.id for p in text for k in p.marks}
        marks = tuple(k for k in self.marks(rule.provenance.assumptions) if k.id not in have)
        return (*text, Piece("", "value", marks=marks)) if marks else text

    def icon_art(self, *sources: str) -> tuple[icons.Icon, ...]:
        """The icons of the names and ids these formulas (or ids) read, each once, in order."""
        out: list[icons.Icon] = []
        for source in sources:
            for word in re.findall(r"[a-z][a-z0-9_-]*", source):
                out += [i for i in self.icon_of.get(word, ()) if i not in out]
        return tuple(out)

    def icons_in(self, *sources: str) -> tuple[AidIcon, ...]:
        """The aid's icons of the names and ids a formula (or a list of them) reads."""
        return tuple(_aid_icon(i) for i in self.icon_art(*sources))

    def aid(self) -> tuple[AidSection, ...]:
        """The player aid, a sheet read at a glance, each part from the model, on two sides: how
        to play and how the game ends and scores. The icons' key;
        the turn with its steps and the four actions, each with the cards it plays and its
        costs (each cost printed once, at its action); the Nobles with their icon, trade goods,
        State and Noble actions; the two ends as trigger rows and the period end's steps; the
        scoring as an icon table, the majority tables and the Decrees in side-by-side runs.
        Every value the rules assume keeps its mark, explained in the sheet's own notes; the
        sheet links to nothing that is not on it (see `_on_sheet`)."""
        m = self.m
        flow = m.data["flow"]
        out: list[AidSection] = []
        turn_ids = [str(t["id"]) for t in flow.get("turn", ()) if str(t.get("id")) in self.rules]
        numbered = [a for a in m.actions if a.number is not None]
        costs_by_id = {c.id: c for c in m.costs}
        placed_costs: set[str] = set()
        acts = []
        for a in numbered:
            lines = []
            for key in (a.cost, a.lacking_cost):
                c = costs_by_id.get(key or "")
                if c is not None:
                    placed_costs.add(c.id)
                    lines.append(AidLine(self.icons_in(c.formula.source), c.name,
                                         plain(self.words(c.formula.source, dict(c.params)))))
            lead, points = _sentences(self.rule_text(a.rule))
            acts.append(AidCard(f"{a.number}. {a.name}", "", lead, right=self.icons_in(a.id),
                                aside=a.plays or "", costs=tuple(lines), points=points,
                                note=self.assumed(a.rule, self.rule_text(a.rule))[
                                    len(self.rule_text(a.rule)):],
                                callouts=self.aid_callouts(
                                    [a.id, a.cost or "", a.lacking_cost or ""])))
        if turn_ids:
            out.append(AidSection(
                humanize("turn"), "aid-turn",
                steps=tuple(StepView(self.assumed(self.rules[t], self.rule_text(self.rules[t])),
                                     "", self.title_of(t))
                            for t in turn_ids),
                cards=tuple(acts), callouts=self.aid_callouts(turn_ids)))
        elif acts:
            out.append(AidSection(humanize("actions"), "aid-actions", cards=tuple(acts)))
        sas = {a.id: a for a in m.state_actions}
        nas = {a.id: a for a in m.noble_actions}
        nobles = []
        for n in m.nobles:
            facts = []
            for sid in n.state_actions:
                sa = sas.get(sid)
                if sa is not None:
                    facts.append(Fact(f"{humanize('state_action')}: {sa.name}",
                                      self.assumed(sa.rule, self.rule_text(sa.rule)),
                                      self.aid_callouts([sa.rule.id])))
            na = nas.get(n.noble_action)
            if na is not None:
                said = [Fact(f"{humanize('noble_action')}: {na.name}",
                             self.assumed(na.rule, self.rule_text(na.rule)))]
                if na.land_price is not None:
                    said.append(Fact(humanize("land_price"),
                                     plain(self.words(na.land_price.source, dict(na.params),
                                                      self.term("money")))))
                # the variants' callouts at the action follow all that the card says of it
                said[-1] = replace(said[-1], callouts=self.aid_callouts([na.rule.id]))
                facts += said
            icon = self.aid_icon(n.id)
            goods = tuple(i for i in (self.aid_icon(g) for g in n.trade_goods) if i is not None)
            marks = self.marks(n.provenance.assumptions)
            nobles.append(AidCard(n.name, n.title, (), tuple(facts),
                                  icons=(icon,) if icon else (), right=goods,
                                  note=(Piece("", "value", marks=marks),) if marks else ()))
        if nobles:
            out.append(AidSection(humanize("nobles"), "aid-nobles", cards=tuple(nobles)))
        rest = [c for c in m.costs if c.id not in placed_costs]
        if rest:  # a cost no action of the turn carries: printed once, here
            out.append(AidSection(humanize("costs"), "aid-costs", rows=tuple(
                AidLine(self.icons_in(c.formula.source), c.name,
                        plain(self.words(c.formula.source, dict(c.params)))) for c in rest),
                callouts=self.aid_callouts(c.id for c in rest)))
        for kind, key in (("period", "period_end"), ("game", "game_end")):
            proc = flow.get(key)
            if not isinstance(proc, dict) or proc.get("id") not in self.rules:
                continue
            rows = tuple(AidLine(self.icons_in(t.condition.source), "",
                                 self.assumed(t.rule, plain(self.trigger_words(t))),
                                 when_words(t.periods))
                         for t in m.triggers if t.ends == kind)
            rule = self.rules[proc["id"]]
            finish = str(proc.get("finish", ""))
            extra = proc.get("extra_rounds")
            # with rounds played after the trigger (`extra_rounds`), the trigger's round is not
            # the last: the sentence after the rows (`then`) says what is still played
            lead = plain(f"The end of the {kind} is triggered in the {finish} in which"
                         if finish and isinstance(extra, int) and extra > 0 else
                         f"The {kind} ends at the end of the {finish} in which"
                         if finish else f"The {kind} ends when")
            steps = tuple(StepView(self.assumed(s.rule, self.rule_text(s.rule)), s.id,
                                   s.rule.title)
                          for s in m.period_end) if key == "period_end" else ()
            out.append(AidSection(rule.title, f"aid-{rule.id}", lead=lead, rows=rows,
                                  joiner="or", then=self.assumed(rule, self.rule_text(rule)),
                                  steps=steps, side=2,
                                  callouts=self.aid_callouts(
                                      [rule.id, *(t.id for t in m.triggers if t.ends == kind)])))
        out.append(self.aid_scoring())
        return _fit(self.aid_notes(tuple(_on_sheet(s) for s in out)))

    def aid_scoring(self) -> AidSection:
        """The scoring as an icon table (each source with the icons of what it counts), its
        majority tables (a group's icon, as a business's) and the Decrees in side-by-side runs,
        the assumptions they rest on marked."""
        m = self.m
        rows, cells = [], []
        for s in m.scoring:
            local, _ = find_owner(m, s.rule)
            reads = [s.formula.source if s.formula else "", s.held,
                     *(g.measure.source for g in s.groups)]
            rows.append(AidLine(self.icons_in(*reads), s.name, ()))
            cells.append((self.rich(s.short, local, declared=())
                          + ((Piece("", "value", marks=self.marks(s.rule.provenance.assumptions)),)
                             if s.rule.provenance.assumptions else ()),))
        tables = [AidTable((humanize("source"), humanize(self.score_term())), tuple(rows),
                           tuple(cells))]
        for s in m.scoring:
            if not s.groups:
                continue
            t = self.majority_table(s)
            groups = tuple(AidLine(self.icons_in(g.id, g.measure.source), g.name, ())
                           for g in s.groups)
            tables.append(AidTable(t.head, groups, tuple(row[1:] for row in t.rows), t.caption,
                                   numeric=tuple(range(len(t.head) - 1))))
        if m.decrees:
            t = self.decree_table()
            heads = tuple(AidLine(self.icons_in(d.condition.source), d.id.rsplit("-", 1)[-1], ())
                          for d in m.decrees)
            # its rows are numbers under the caption "Decrees": "#" heads them in the narrow
            # runs of the sheet, where the rules' "Decree" widens the column past its fit
            tables.append(AidTable(("#", *t.head[1:]), heads, tuple(row[1:] for row in t.rows),
                                   t.caption, runs=2 if len(m.decrees) > 8 else 1, numeric=(1,),
                                   inline=True))
        lines: list[Rich] = []
        ties = m.data["scoring"].get("majority", {}).get("text")
        if isinstance(ties, str):
            lines.append(self.rich(ties, m.data["scoring"]["majority"]))
        tb = m.data["scoring"].get("tiebreakers")
        if isinstance(tb, dict) and tb.get("id") in self.rules:
            lines.append(self.rule_text(self.rules[tb["id"]]))
        return AidSection(humanize("scoring"), "aid-scoring", tables=tuple(tables), side=2,
                          lines=tuple(lines), callouts=self.aid_callouts(s.id for s in m.scoring))

    def aid_notes(self, sections: tuple[AidSection, ...]) -> tuple[AidSection, ...]:
        """The sections with the key of the icons they show first and the notes of the
        assumptions they mark last (the sheet's own: its marks point there)."""
        shown: list[AidIcon] = []
        marks: set[int] = set()

        def visit(value: Any) -> None:
            if isinstance(value, AidIcon):
                if all(o.id != value.id for o in shown):
                    shown.append(value)
            elif isinstance(value, Piece):
                marks.update(k.n for k in value.marks)
            elif isinstance(value, tuple):
                for v in value:
                    visit(v)
            elif hasattr(value, "__dataclass_fields__"):
                for f in value.__dataclass_fields__:
                    visit(getattr(value, f))

        visit(sections)
        order = {str(e["id"]): i for i, e in enumerate(self.m.data["vocabulary"].get("icons", ()))}
        shown.sort(key=lambda i: order.get(i.id, len(order)))
        key = AidSection(humanize("key"), "aid-key", icons=tuple(shown), wide=True)
        notes = tuple(n for n in self.notes() if n.n in marks)
        tail = (AidSection(humanize("assumed_values"), "aid-notes", notes=notes, side=2),) \
            if notes else ()
        return (key, *sections, *tail) if shown else (*sections, *tail)


# The type size of a side of the aid: its words and blocks measured, the size at which they
# fill the side's two columns (A4: 93 x 279 mm each, less the key) found by solving
# height = size * LINE * (chars * CHAR * size / COLUMN + blocks * BLOCK) for `size`; calibrated
# on the printed sheet (tests/reference/test_player_aid.py measures the fill in Chromium).
_AID_COLUMN = 263.0  # a column's width, points
_AID_HEIGHT = 2 * 790.0  # two columns' height, points
_AID_LINE = 1.22  # line height / size
_AID_CHAR = 0.47  # average glyph width / size
_AID_BLOCK = 1.25  # the lines a block costs besides its words (margins, its last line's rest)
_AID_ROW = 0.6  # the blocks a row of a table costs (its cells' rests) in its run
_AID_SMALL = 0.2  # what a note's words count for (short lines of small print under the rest of
# the side, where the columns are balanced: calibrated on the printed sheet)
_AID_FILL = 1.0  # the share of the columns the words are sized to fill (calibrated: the
# estimate counts a little more than the printed words take: this fills about 95%)
_AID_SIZES = (6.5, 12.0)  # never smaller, never larger


def _amount(value: Any) -> tuple[int, int]:
    """(characters, blocks) of a part of the aid: the words of its pieces and labels, and one
    block per row, step, fact, point, cost and card."""
    chars, blocks = 0, 0
    if isinstance(value, Piece):
        return len(value.text), 0
    if isinstance(value, str):
        return len(value), 0
    if isinstance(value, tuple):
        for v in value:
            c, b = _amount(v)
            chars, blocks = chars + c, blocks + b
        return chars, blocks
    if isinstance(value, AidIcon):
        return 3, 0
    if isinstance(value, NoteView):  # a line of small print
        return round(len(value.value) * _AID_SMALL), 1
    if isinstance(value, (AidLine, Fact, StepView, AidCard, CalloutView, NoteView)):
        blocks += 1
    if isinstance(value, AidTable):
        blocks += round(len(value.rows) / max(1, value.runs) * _AID_ROW) + 2
        chars += sum(len(h) for h in value.head)
        for row, cells in zip(value.rows, value.cells, strict=True):
            c, _ = _amount((row.label, row.icons, cells))
            chars += c
        return chars, blocks
    if isinstance(value, AidSection):
        blocks += 2
    if hasattr(value, "__dataclass_fields__"):
        for f in value.__dataclass_fields__:
            if f in ("svg", "id", "variant", "rule", "rule_title", "sources", "marks", "reason",
                     "where", "icons" if isinstance(value, AidSection) else ""):
                continue
            c, b = _amount(getattr(value, f))
            chars, blocks = chars + c, blocks + b
    return chars, blocks


def _fit(sections: tuple[AidSection, ...]) -> tuple[AidSection, ...]:
    """Each section with the type size of its side: the size at which the side's words fill
    its columns (`_amount`); the key, across the top of the first side, takes its height."""
    sizes = {}
    for side in sorted({s.side for s in sections}):
        parts = [s for s in sections if s.side == side and not s.wide]
        chars, blocks = _amount(tuple(parts))
        keys = [s for s in sections if s.side == side and s.wide]
        key_chars = sum(len(i.term) + 4 for s in keys for i in s.icons)
        height = _AID_HEIGHT * _AID_FILL
        a = _AID_LINE * (chars * _AID_CHAR / _AID_COLUMN)
        b = _AID_LINE * blocks * _AID_BLOCK
        # the key: its lines across both columns take that height from each column
        a += 2 * _AID_LINE * key_chars * _AID_CHAR / (2 * _AID_COLUMN)
        size = (-b + (b * b + 4 * a * height) ** 0.5) / (2 * a) if a else _AID_SIZES[1]
        sizes[side] = round(min(max(size, _AID_SIZES[0]), _AID_SIZES[1]), 2)
    return tuple(replace(s, size=sizes[s.side]) for s in sections)


def _aid_icon(icon: icons.Icon) -> AidIcon:
    return AidIcon(icon.id, icon.term, Markup(icons.inline(icon)))


def _sentences(text: Rich) -> tuple[Rich, tuple[Rich, ...]]:
    """A rule's words as its first sentence and the others, one each (a sentence ends at a
    full stop followed by a space and a capital)."""
    out: list[list[Piece]] = [[]]
    for p in text:
        parts = re.split(r"(?<=[.!?]) +(?=[A-Z\u00c0-\u00de])", p.text) if p.kind == "text" \
            else [p.text]
        for i, part in enumerate(parts):
            if i:
                out.append([])
            if part or p.kind != "text":
                out[-1].append(replace(p, text=part))
    rich = [tuple(s) for s in out if "".join(q.text for q in s).strip()]
    if not rich:
        return (), ()
    return rich[0], tuple(rich[1:])


def _sheet_rich(value: Rich) -> Rich:
    """Text for the player aid: links as their words (the sheet holds none of the pages they
    lead to); assumption marks kept, the sheet's notes explain them."""
    return tuple(Piece(p.text, "value" if p.kind == "value" else "text", marks=p.marks)
                 for p in value if p.text or p.kind != "value" or p.marks)


def _on_sheet(section: AidSection) -> AidSection:
    def fact(f: Fact) -> Fact:
        return Fact(f.label, _sheet_rich(f.value), tuple(callout(c) for c in f.callouts))

    def line(a: AidLine) -> AidLine:
        return replace(a, text=_sheet_rich(a.text))

    def table(t: AidTable) -> AidTable:
        return replace(t, caption=_sheet_rich(t.caption), rows=tuple(line(r) for r in t.rows),
                       cells=tuple(tuple(_sheet_rich(c) for c in row) for row in t.cells))

    def callout(c: CalloutView) -> CalloutView:
        return replace(c, text=_sheet_rich(c.text))

    return replace(
        section,
        lead=_sheet_rich(section.lead),
        rows=tuple(line(r) for r in section.rows),
        then=_sheet_rich(section.then),
        tables=tuple(table(t) for t in section.tables),
        steps=tuple(StepView(_sheet_rich(c.text), c.id, c.title) for c in section.steps),
        lines=tuple(_sheet_rich(x) for x in section.lines),
        callouts=tuple(callout(c) for c in section.callouts),
        cards=tuple(replace(c, text=_sheet_rich(c.text), facts=tuple(fact(f) for f in c.facts),
                            note=_sheet_rich(c.note),
                            costs=tuple(line(x) for x in c.costs),
                            points=tuple(_sheet_rich(x) for x in c.points),
                            callouts=tuple(callout(x) for x in c.callouts))
                    for c in section.cards))


def _sort_key(term: str) -> str:
    """Alphabetical order as an index has it: case and accents aside (Réis before Royal)."""
    return "".join(c for c in unicodedata.normalize("NFKD", term.casefold())
                   if not unicodedata.combining(c))


def _term_anchor(term: str) -> str:
    return "term-" + encode.slug(term)


_ENUM_ID = re.compile(r"[a-z][a-z0-9]*(-[a-z0-9]+)*")
_CODE = re.compile(r"[\[\]()=<>]|\w\.\w|\b(if|else|not|in)\b.*\w_\w")  # an expression, not words


def _step_words(value: Any) -> Any:
    """A step (or a list of steps) as its words, where it has them."""
    if isinstance(value, Mapping) and isinstance(value.get("text"), str):
        return value["text"]
    if isinstance(value, list) and value and all(isinstance(v, Mapping) for v in value):
        return [_step_words(v) for v in value]
    return value


def _lower_first(text: Rich) -> Rich:
    """Words that go on after a comma: their first letter small (`Take the réis.` -> `take the
    réis`), without the full stop that ends them."""
    pieces = list(text)
    if pieces and pieces[0].kind == "text" and pieces[0].text[:1].isupper() \
            and not pieces[0].text[1:2].isupper():
        pieces[0] = replace(pieces[0], text=pieces[0].text[:1].lower() + pieces[0].text[1:])
    if pieces and pieces[-1].kind == "text" and pieces[-1].text.endswith("."):
        pieces[-1] = replace(pieces[-1], text=pieces[-1].text[:-1])
    return tuple(pieces)


def _one_count(v: VariantInfo) -> int | None:
    """The number of players of a variant that applies by itself with one number only (its
    words are for that game: a formula of the number of players is said as its value)."""
    return v.applies_players[0] if len(v.applies_players) == 1 else None


def _names_read(cond: Any) -> set[str]:
    """The names an expression as written reads (none when it does not parse)."""
    try:
        tree = parse_expr(str(cond).strip())
    except (SyntaxError, ValueError, RecursionError):
        return set()
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}


def _unless(step: Rich, cond: Rich) -> Rich:
    """A step's words with the condition that forbids it at their end: `Take one of them.` ->
    `Take one of them (not possible when COND).` (before the dots of words that go on)."""
    pieces = list(step)
    end = ""
    if pieces and pieces[-1].kind == "text":
        last = pieces[-1].text.rstrip()
        kept = last.rstrip(".…")
        end = last[len(kept):]
        pieces[-1] = replace(pieces[-1], text=kept)
    return (*pieces, Piece(" (not possible when "), *cond, Piece(")" + end))


def _same_words(a: Rich, b: Rich) -> bool:
    """Two texts that say the same words, dots, case and a leading "and" or "then" aside (a
    step that goes on a sentence, "...and take the rubble cubes.", says what its procedure's
    first step says, "Take the rubble cubes.")."""
    def norm(r: Rich) -> str:
        said = re.sub(r"[.…]", " ", "".join(p.text for p in r)).lower().split()
        while said and said[0] in ("and", "then"):
            said = said[1:]
        return " ".join(said)
    return norm(a) == norm(b)


def _event_words(event: str) -> str:
    """An event's id as words, for an event rules/effects.yaml `events:` does not say:
    `rubble-set-completed` -> `rubble set completed`."""
    return " ".join(event.replace("-", " ").replace("_", " ").split())


def _diff_lines(before: list[StepLine], now: list[StepLine]) -> list[StepLine]:
    """Two lists of step lines as one redline: kept lines, removed and added ones, and a line
    reworded in place as its changed words only."""
    keys_b = [_line_key(x) for x in before]
    keys_a = [_line_key(x) for x in now]
    lines: list[StepLine] = []
    matcher = difflib.SequenceMatcher(None, keys_b, keys_a, autojunk=False)
    for op, b0, b1, a0, a1 in matcher.get_opcodes():
        if op == "equal":
            lines += [replace(x, status="same") for x in now[a0:a1]]
            continue
        if op == "replace" and b1 - b0 == a1 - a0 and all(
                (x.depth, x.kind) == (y.depth, y.kind)
                for x, y in zip(before[b0:b1], now[a0:a1], strict=True)):
            lines += [replace(y, status="changed", words=word_redline(
                "".join(p.text for p in x.text), "".join(p.text for p in y.text)))
                for x, y in zip(before[b0:b1], now[a0:a1], strict=True)]
            continue
        lines += [replace(x, status="removed") for x in before[b0:b1]]
        lines += [replace(x, status="added") for x in now[a0:a1]]
    return lines


def _code_keys(s: Step) -> tuple[tuple[str, Any], ...]:
    """The keys beside a step's effect key that its line of code shows (not its words)."""
    match s:
        case Do() | New():
            return (("with", dict(s.with_)),) if s.with_ is not None else ()
        case Choose():
            return (("count_rule", s.count_rule),) if s.count_rule is not None else ()
        case (Gain() | Set() | Let() | Move() | Drop() | Require() | If() | ForEach() | Repeat()
              | Raise() | Apply() | Shuffle()):
            return ()
        case _:
            assert_never(s)


def _flatten(steps: Iterable[ProcStep], depth: int = 0) -> list[StepLine]:
    out: list[StepLine] = []
    for st in steps:
        out.append(StepLine(depth, st.kind, st.text, "same", st.ref, st.ref_title))
        out += _flatten(st.children, depth + 1)
    return out


def _line_key(line: StepLine) -> tuple[int, str, str, str, str]:
    return line.depth, line.kind, "".join(p.text for p in line.text), line.ref, line.title


# --- a handout's cards: the rules of the base game and of a variant, card by card -------------


def _text(r: Rich) -> str:
    return "".join(p.text for p in r)


def _runs(before: str | None, after: str | None) -> Runs:
    """Words of a card as its handout prints them: `before` -> `after` word by word; all kept
    when the card is new (its badge says so), all struck when it is gone."""
    if before is None:
        return (("same", after),) if after else ()
    if after is None:
        return (("removed", before),) if before else ()
    return word_redline(before, after)


def _changed(runs: Runs) -> bool:
    return any(st != "same" for st, _ in runs)


def _card_lines(c: RuleCard) -> list[StepLine]:
    """A card's steps as lines: the procedure as the players' edition says it, then the steps
    of a sequence (a period end's named steps)."""
    lines = _said_lines(c.proc_players) if c.proc_players else _flatten(c.proc)
    lines += [StepLine(0, "step", s.text, "same", title=s.title) for s in c.steps]
    return lines


def _said_lines(steps: Iterable[ProcStep], depth: int = 0) -> list[StepLine]:
    """The players' steps as lines, a branch as its sentence ("If ..., ...; otherwise ...",
    or "If ...:" before the steps it guards)."""
    out: list[StepLine] = []
    for st in steps:
        text = st.text
        if st.kind == "if" and st.then:
            text = (Piece("If "), *st.text, Piece(", "), *st.then, Piece("; otherwise "),
                    *st.orelse, Piece("."))
        elif st.kind == "if":
            text = (Piece("If "), *st.text, Piece(":"))
        kind = "step" if st.kind == "if" else st.kind
        out.append(StepLine(depth, kind, text, "same", st.ref, st.ref_title))
        out += _said_lines(st.children, depth + 1)
    return out


def _numbered(lines: list[StepLine]) -> tuple[StepLine, ...]:
    """Lines numbered among their siblings, as the variant's sequence runs (struck lines keep
    no number)."""
    counts: list[int] = []
    out: list[StepLine] = []
    for x in lines:
        del counts[x.depth + 1:]
        while len(counts) <= x.depth:
            counts.append(0)
        if x.status == "removed":
            out.append(x)
            continue
        counts[x.depth] += 1
        out.append(replace(x, n=counts[x.depth]))
    return tuple(out)


def _row_key(t: Table, i: int) -> str:
    """A row's key: its anchor, else its first cell of words (a row's number, as the scoring
    table's, moves when a row is inserted above it)."""
    if t.row_ids:
        return t.row_ids[i]
    cells = [_text(c) for c in t.rows[i]]
    return next((c for c in cells if c and not c.isdigit()), cells[0] if cells else str(i))


def _row_title(head: Sequence[str], cells: Sequence[str]) -> str:
    """A row's name: its first cell; a number with its column's heading ("Number 4")."""
    first = cells[0] if cells else ""
    return f"{head[0]} {first}" if first.isdigit() and head else first


def _row_changes(before: Table | None, after: Table | None, where: tuple[str, ...],
                 whole: bool = False) -> list[CardChange]:
    """The rows of a table that a variant adds, changes or removes, each as a card: its first
    cell the title, the other cells facts under the table's headings; several, or changed
    ones, as the table they stand in. A list of the rules (`whole`: the actions, the scoring
    sources) of a few rows is printed whole, the new row in its place."""
    rows_b = {_row_key(before, i): r for i, r in enumerate(before.rows)} if before else {}
    rows_a = {_row_key(after, i): r for i, r in enumerate(after.rows)} if after else {}
    head_b = before.head if before else ()
    head_a = after.head if after else ()
    head = (*head_b, *(h for h in head_a if h not in head_b))  # a struck column in place
    out: list[CardChange] = []
    # a first column that numbers the rows (the scoring table's #): a row inserted above
    # renumbers the rest, which is no change of theirs
    numbered = not ((before and before.row_ids) or (after and after.row_ids)) and all(
        _text(r[0]).isdigit() for t in (before, after) if t for r in t.rows if r)
    for key in [*rows_a, *(k for k in rows_b if k not in rows_a)]:
        rb, ra = rows_b.get(key), rows_a.get(key)
        cells_b = [_text(c) for c in rb] if rb is not None else None
        cells_a = [_text(c) for c in ra] if ra is not None else None
        if cells_b == cells_a or (numbered and cells_b is not None and cells_a is not None
                                  and cells_b[1:] == cells_a[1:]):
            if whole and ra is not None and len(rows_a) <= WHOLE_TABLE:
                out.append(CardChange(key, _row_title(head_a, cells_a or []), "same", where,
                                      kind="row-change", head=head, grid=tuple(
                                          _runs(None, c) for c in (cells_a or []))))
            continue
        status = "added" if rb is None else "removed" if ra is None else "changed"
        row = ra if ra is not None else rb
        assert row is not None
        by_b = dict(zip(head_b, cells_b, strict=False)) if cells_b is not None else None
        by_a = dict(zip(head_a, cells_a, strict=False)) if cells_a is not None else None
        grid = tuple(_runs(by_b.get(h, "") if by_b is not None else None,
                           by_a.get(h, "") if by_a is not None else None) for h in head)
        facts = tuple((h, grid[i]) for i, h in enumerate(head) if i > 0)
        out.append(CardChange(key if status != "added" else "",
                              _row_title(head, [_text(c) for c in row]), status, where,
                              title_words=_runs(cells_b[0] if cells_b else None,
                                                cells_a[0] if cells_a else None)
                              if status == "changed" and cells_b and cells_a
                              and cells_b[0] != cells_a[0] else (),
                              facts=tuple(f for f in facts if f[1]), kind="row-change",
                              cells=tuple(_text(c) for c in row), head=head, grid=grid))
    if not any(c.status != "same" for c in out):
        return []
    if len(out) > ROWS_AS_CARDS or any(c.status in ("changed", "same") for c in out):
        # changed rows, or many (Political cards): as the table they stand in
        return [CardChange("", _text(after.caption) if after else _text(before.caption)
                           if before else "", "changed", where, rows=tuple(out), head=head,
                           kind="table-change")]
    return out


WHOLE_TABLE = 12  # the most rows of a list of the rules printed whole around a new row
SEQUENCE_CARDS = 4  # the most cards of one section printed beside a new card of it
ROWS_AS_CARDS = 2  # new rows of one table printed as cards each (a new Noble), not a table


def _table_key(t: Table) -> str:
    return _text(t.caption) or " ".join(t.head)


def _card_change(before: RuleCard | None, after: RuleCard | None, where: tuple[str, ...],
                 prev: str = "", keep: bool = False) -> CardChange | None:
    """A card of the base game (`before`) as a variant makes it (`after`): whole, the change
    marked; None when it reads the same (status "same" when `keep`: a card printed beside a
    new one of its sequence). A card only one side has is added or removed."""
    card = after if after is not None else before
    assert card is not None
    status = "added" if before is None else "removed" if after is None else "changed"
    bodies_b = [_text(p) for p in before.body] if before else []
    bodies_a = [_text(p) for p in after.body] if after else []
    n = max(len(bodies_b), len(bodies_a))
    body = tuple(_runs(bodies_b[i] if before and i < len(bodies_b) else "" if before else None,
                       bodies_a[i] if after and i < len(bodies_a) else "" if after else None)
                 for i in range(n))
    lines_b = _card_lines(before) if before else []
    lines_a = _card_lines(after) if after else []
    if before is None:
        lines = lines_a
    elif after is None:
        lines = [replace(x, status="removed") for x in lines_b]
    else:
        lines = _diff_lines(lines_b, lines_a)
    facts_b = {f.label: _text(f.value) for f in before.facts} if before else {}
    facts_a = {f.label: _text(f.value) for f in after.facts} if after else {}
    facts = tuple((label, _runs(facts_b.get(label, "" if before else None),
                                facts_a.get(label, "" if after else None)))
                  for label in [*facts_a, *(k for k in facts_b if k not in facts_a)])
    if status == "changed":  # the data rows that read the same stay on the rules' card
        facts = tuple(f for f in facts if _changed(f[1]))
    tables_b = {_table_key(t): t for t in before.tables} if before else {}
    tables_a = {_table_key(t): t for t in after.tables} if after else {}
    rows = [replace(r, title="") if r.kind == "table-change" and r.title == card.title else r
            for k in [*tables_a, *(k for k in tables_b if k not in tables_a)]
            for r in _row_changes(tables_b.get(k), tables_a.get(k), where)]
    kids_b = {k.id: k for k in before.children} if before else {}
    kids_a = {k.id: k for k in after.children} if after else {}
    children = [x for k in [*kids_a, *(k for k in kids_b if k not in kids_a)]
                for x in (_card_change(kids_b.get(k), kids_a.get(k), where),) if x is not None]
    title_words = _runs(before.title if before else None, after.title if after else None)
    if status == "changed" and not (
            _changed(title_words) or any(_changed(b) for b in body)
            or any(x.status != "same" for x in lines) or any(_changed(f) for _, f in facts)
            or rows or children):
        if not keep:
            return None
        status = "same"
        facts = tuple((f.label, _runs(None, _text(f.value))) for f in card.facts)
    return CardChange(  # a card the rules print under its section's heading (the turn's
        # steps under "Turn order") has no title of its own: the handout names it by that
        card.id if before is not None else "", card.title or (where[-1] if where else card.id),
        status, where,
        after=prev if status == "added" else "", label=card.label,
        title_words=title_words if _changed(title_words) and status == "changed" else (),
        body=body, event=card.event, fired_by=card.fired_by, lines=_numbered(lines),
        facts=facts, rows=tuple(rows), children=tuple(children))


def _chapter_changes(before: Sequence[Chapter], after: Sequence[Chapter]
                     ) -> tuple[CardChange, ...]:
    """The cards (and the loose tables' rows) of the rules that read differently under a
    variant, in the order of its rules, each whole with the change marked."""

    def blocks(chapters: Sequence[Chapter]) -> list[tuple[str, tuple[str, ...], str, Any]]:
        out: list[tuple[str, tuple[str, ...], str, Any]] = []
        for ch in chapters:
            section = ""
            prev = ""
            if ch.only == "annotated":
                continue
            for b in ch.blocks:
                if getattr(b, "only", "") == "annotated":  # the designer's tables
                    continue
                if isinstance(b, Heading):
                    section, prev = b.title, ""
                    continue
                where = (ch.title, section) if section else (ch.title,)
                if isinstance(b, RuleCard):
                    out.append((f"card:{b.id}", where, prev, b))
                    prev = b.title or prev
                elif isinstance(b, Table):
                    out.append((f"table:{_table_key(b)}", where, prev, b))
                elif isinstance(b, Para):
                    out.append((f"para:{ch.id}", where, prev, b))
        return out

    old = blocks(before)
    new = blocks(after)
    keys_old = [k for k, _, _, _ in old]
    keys_new = [k for k, _, _, _ in new]
    found: list[CardChange] = []
    matcher = difflib.SequenceMatcher(None, keys_old, keys_new, autojunk=False)
    by_old = {k: b for k, _, _, b in old}
    pairs: list[tuple[Any, Any, tuple[str, ...], str]] = []
    for op, b0, b1, a0, a1 in matcher.get_opcodes():
        if op == "equal":
            pairs += [(old[i][3], new[j][3], new[j][1], new[j][2])
                      for i, j in zip(range(b0, b1), range(a0, a1), strict=True)]
            continue
        pairs += [(by_old.get(new[j][0]), new[j][3], new[j][1], new[j][2])
                  for j in range(a0, a1)]
        pairs += [(old[i][3], None, old[i][1], old[i][2]) for i in range(b0, b1)
                  if old[i][0] not in keys_new]
    # a new card in a short sequence of cards without steps (a new trigger among the ends of
    # the game): that sequence printed whole, the new card in its place
    beside: set[int] = set()
    for b, a, where, _ in pairs:
        if b is None and isinstance(a, RuleCard) and len(where) > 1:  # a headed section
            others = [blk for _, w, _, blk in new
                      if w == where and isinstance(blk, RuleCard) and blk is not a]
            if 0 < len(others) <= SEQUENCE_CARDS and not any(
                    o.proc or o.proc_players or o.steps or o.tables for o in others):
                beside.update(id(o) for o in others)
    for b, a, where, prev in pairs:
        x, y = b if b is not None else a, a if a is not None else b
        if isinstance(x, RuleCard) or isinstance(y, RuleCard):
            change = _card_change(b, a, where, prev, keep=id(a) in beside)
            if change is not None:
                found.append(change)
        elif isinstance(x, Table) or isinstance(y, Table):
            found += _row_changes(b, a, where, whole=True)
        elif isinstance(x, Para) or isinstance(y, Para):
            runs = _runs(_text(b.text) if b is not None else None,
                         _text(a.text) if a is not None else None)
            if _changed(runs):
                found.append(CardChange("", where[-1], "changed", where, body=(runs,)))
    # a row of a loose table (the actions' list) that a card of its own already shows
    cards = {c.title for c in found if c.kind == "card-change"}
    found = [c for c in found if not (c.kind == "row-change" and cards & set(c.cells))]

    # a card that only carries out another changed card in place (Build a Store takes the
    # rubble cubes as the Rubble effect says): the change is shown once, where it belongs
    def marked(c: CardChange) -> tuple[set[str], int]:
        lines = [x for x in c.lines if x.status != "same"]
        return {f"{x.status}:{_text(x.text)}" for x in lines}, min(
            (x.depth for x in lines), default=0)

    def carries(c: CardChange) -> bool:
        if c.status != "changed" or any(_changed(b) for b in c.body) or c.facts or c.rows \
                or c.children or c.title_words:
            return False
        mine, depth = marked(c)
        return bool(mine) and any(
            o is not c and o.status == "changed" and marked(o)[0] == mine
            and marked(o)[1] < depth for o in found)

    found = [c for c in found if not carries(c)]
    found = [c for c in found if not _only_says_a_hook(c, found)]

    # a new shared procedure (not a hook: that one says when it runs) that the cards which
    # carry it out already say in place, as new lines
    def said_elsewhere(c: CardChange) -> bool:
        if c.status != "added" or c.event or c.body or c.facts or c.rows or not c.lines:
            return False
        shown = {_text(x.text) for o in found if o is not c for x in o.lines
                 if x.status in ("added", "changed")}
        return all(_text(x.text) in shown for x in c.lines)

    return tuple(c for c in found if not said_elsewhere(c))


def _said_step_changes(cards: Iterable[CardChange]) -> tuple[StepRedline, ...]:
    """The steps of a handout's cards that a variant adds, removes or rewords, per card, as
    the players' edition says them (its page of the variant lists these): a step the base
    game does not say (its condition of the rules' data does not hold there) and the
    variant says is new, not a number changed; a card the variant adds is all new."""
    out: list[StepRedline] = []
    for c in cards:
        if c.kind == "card-change":
            lines = [replace(x, status="added") if c.status == "added" else x for x in c.lines]
            if any(x.status != "same" for x in lines):
                out.append(StepRedline(c.id, c.title, tuple(lines)))
        out += _said_step_changes(c.children)
    return tuple(out)


def _only_says_a_hook(c: CardChange, found: Sequence[CardChange]) -> bool:
    """Whether a changed card is nothing but a new hook said in place: every line of it is new
    and is a line of a new hook's card (a procedure with no steps of its own that raises the
    hook's event). The hook's card says it once, and where it fires; a card with steps of its
    own keeps the hook's lines among them, where they fall."""
    if c.status != "changed" or not c.lines or any(x.status != "added" for x in c.lines) \
            or any(_changed(b) for b in c.body) or c.facts or c.rows or c.children \
            or c.title_words:
        return False
    mine = {_text(x.text) for x in c.lines}
    return any(h.status == "added" and h.event and mine <= {_text(x.text) for x in h.lines}
               for h in found)


def _lookup(values: Mapping[str, int]) -> Callable[[str, str | None], int | bool]:
    """A name lookup for `expr.evaluate` over plain values (the cost examples)."""

    def get(name: str, item: str | None) -> int | bool:
        return values[name]

    return get


def _step(node: Any, key: str | int) -> Any:
    if isinstance(node, dict) and isinstance(key, str):
        return node.get(key)
    if isinstance(node, list) and isinstance(key, int) and 0 <= key < len(node):
        return node[key]
    return None


def _named(value: Any, names: list[Any]) -> Any:
    """1-based indexes into a list of names (e.g. majority columns) as those names."""
    if isinstance(value, list) and all(isinstance(v, int) and 0 < v <= len(names) for v in value):
        return [str(names[v - 1]) for v in value]
    return value


def _strip(pieces: list[Piece]) -> Rich:
    while pieces and pieces[0].kind == "text" and not pieces[0].text.strip():
        pieces.pop(0)
    if pieces and pieces[0].kind == "text":
        pieces[0] = Piece(pieces[0].text.lstrip())
    while pieces and pieces[-1].kind == "text" and not pieces[-1].text.strip():
        pieces.pop()
    if pieces and pieces[-1].kind == "text":
        pieces[-1] = Piece(pieces[-1].text.rstrip())
    return tuple(pieces)


_bare = words.bare_label  # vocabulary words without the possessive: `your Ships` -> `Ships`


def _mentions(text: str, path: str) -> bool:
    return any(".".join(ph.path).startswith(path) or ".".join(ph.path[1:]).startswith(path)
               for ph in rtext.placeholders(text))


def _data_sources(m: Model) -> list[tuple[str, Rich]]:
    """The sources cited by data that is not a rule (a section of rules/game.yaml, a deck, a
    step of the turn, a glossary entry: `source:` and `*_source:`), with where they are."""
    rules = {(r.section, tuple(r.owner)) for r in m.rules}
    out: list[tuple[str, Rich]] = []

    def walk(kind: str, node: Any, raw: tuple[str | int, ...], path: tuple[str, ...]) -> None:
        if isinstance(node, dict):
            label = node.get("name", node.get("title", node.get("term", node.get("id", ""))))
            for k, v in node.items():
                if k.endswith("_source") and isinstance(v, list):
                    where = " › ".join([humanize(kind), *path, humanize(k[: -len("_source")])])
                    out.extend((str(s), plain(where)) for s in v)
                elif k == "source" and isinstance(v, list):
                    if (kind, raw) not in rules:
                        where = " › ".join([humanize(kind), *path, str(label)]).rstrip(" ›")
                        out.extend((str(s), plain(where)) for s in v)
                else:
                    walk(kind, v, (*raw, k), (*path, humanize(k)) if not isinstance(v, list)
                         else path)
        elif isinstance(node, list):
            for i, v in enumerate(node):
                walk(kind, v, (*raw, i), path)

    for kind in sorted(m.data):
        if kind not in ("provenance", "examples"):
            walk(kind, m.data[kind], (), ())
    return out


def _when_label(when: Sequence[FlowNode]) -> str:
    """The triggers of an end as one edge label: their conditions joined by "or", each
    period said once before its own ("Period 1: a player has ... or the number ...")."""
    by: dict[str, list[str]] = {}
    for w in when:
        by.setdefault(w.title, []).append("".join(p.text for p in w.detail))
    return " or ".join(f"{title}: {' or '.join(said)}" for title, said in by.items())


def _beside_their_rules(chapters: list[Chapter],
                        cards: list[tuple[str, RuleCard]]) -> list[Chapter]:
    """The chapters with each (rule id, card) placed right after the card that holds that
    rule (its own card, or a card with a step of that id: the turn's, the period end's), so a
    move is read where its rule is; a card whose rule is in no chapter goes at the end of the
    turn's chapter (`chap-turn`), before its flow."""
    def holds(b: Block, rule: str) -> bool:
        return isinstance(b, RuleCard) and (
            b.id == rule or any(s.id == rule for s in b.steps)
            or any(holds(c, rule) for c in b.children))

    out = [list(ch.blocks) for ch in chapters]
    for rule, card in cards:
        at = next(((i, j) for i, blocks in enumerate(out) for j, b in enumerate(blocks)
                   if holds(b, rule)), None)
        if at is None:
            turn = next((i for i, ch in enumerate(chapters) if ch.id == "chap-turn"), 0)
            flow = next((j for j, b in enumerate(out[turn])
                         if isinstance(b, Heading) and b.id == "game-flow"), len(out[turn]))
            out[turn].insert(flow, card)
            continue
        i, j = at
        while j + 1 < len(out[i]) and isinstance(nxt := out[i][j + 1], RuleCard) \
                and nxt.id.startswith("move-"):
            j += 1  # after the moves already placed there, in their order
        out[i].insert(j + 1, card)
    return [replace(ch, blocks=tuple(blocks)) for ch, blocks in zip(chapters, out, strict=True)]


def _mark_sites(chapters: Iterable[Chapter]) -> dict[str, list[tuple[str, str]]]:
    """Each assumption's marks as the players' edition prints them: its id -> the (anchor,
    title) of every section that shows one (a rule's card, an example, a variant, the heading
    of a table), in page order."""
    sites: dict[str, list[tuple[str, str]]] = {}

    def visit(node: Any, site: tuple[str, str]) -> None:
        if getattr(node, "only", "") == "annotated":
            return
        if isinstance(node, Mark):
            if site[0] and site not in sites.setdefault(node.id, []):
                sites[node.id].append(site)
            return
        if isinstance(node, RuleCard) and node.title:  # (the turn's card: its heading's)
            site = (node.id, node.title)
        elif isinstance(node, ExampleView):
            site = (node.id, f"{humanize('example')}: {node.title}")
        elif isinstance(node, VariantView):
            site = (f"variant-{_slug(node.id)}", node.title)
        elif isinstance(node, GlossaryEntry):
            site = (node.id, node.term)
        if dataclasses.is_dataclass(node) and not isinstance(node, type):
            for f in dataclasses.fields(node):
                if f.name not in ("proc", "proc_code", "step_changes"):  # the annotated's
                    visit(getattr(node, f.name), site)
        elif isinstance(node, (tuple, list)):
            for x in node:
                visit(x, site)

    for ch in chapters:
        if ch.only == "annotated":
            continue
        site = (ch.id, ch.title)
        for b in ch.blocks:
            if isinstance(b, Heading):
                if b.only != "annotated":
                    site = (b.id, b.title)
                continue
            visit(b, site)
    return sites


def _data_assumptions(m: Model) -> list[tuple[str, Rich]]:
    """Assumptions named by data that is not a rule (tables, lists), with where they are."""
    out: list[tuple[str, Rich]] = []

    def walk(kind: str, node: Any, path: tuple[str, ...]) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                if k.endswith("assumptions") and isinstance(v, list) and k != "assumptions":
                    where = " › ".join([humanize(kind), *path, humanize(k[: -len("_assumptions")])])
                    out.extend((str(a), plain(where)) for a in v)
                elif k != "assumptions":
                    walk(kind, v, (*path, humanize(k)) if not isinstance(v, list) else path)
                if k == "assumptions" and isinstance(v, list) and "text" not in node:
                    label = node.get("name", node.get("id", ""))
                    where = " › ".join([humanize(kind), *path, str(label)]).rstrip(" ›")
                    out.extend((str(a), plain(where)) for a in v)
        elif isinstance(node, list):
            for v in node:
                walk(kind, v, path)

    for kind in sorted(m.data):
        if kind not in ("provenance", "examples"):
            walk(kind, m.data[kind], ())
    return out


# --- rendering ---------------------------------------------------------------------------------


@functools.cache
def _env(annotated: bool = True) -> jinja2.Environment:
    """The documents environment plus the reference's escaping filters (built once per
    edition: the players' edition prints assumption marks as numbered notes)."""
    return _edition_env(doc_env(), annotated)


@functools.cache
def _edition_env(base: jinja2.Environment, annotated: bool) -> jinja2.Environment:
    """One overlay of `base` per edition, kept: the templates it loaded (the pages and the
    macros they import) are loaded once per process, not once per page."""
    env = base.overlay()
    env.filters = dict(env.filters)  # an overlay shares its base's dict: each edition its own
    env.filters["html"] = functools.partial(html_rich, annotated=annotated)
    env.filters["md"] = functools.partial(md_rich, annotated=annotated)
    env.filters["words_md"] = _words_md
    env.globals = {**env.globals, "edition_annotated": annotated}
    env.filters["words_html"] = _words_html
    env.filters["mdtext"] = md_text
    env.filters["mdcode"] = encode.md_code
    env.filters["css_string"] = css_string
    env.filters["mermaid"] = mermaid_text
    env.filters["slug"] = _slug
    env.tests["citation"] = is_citation  # a house rule's free-text source is no link
    env.filters["node"] = _node_id
    env.filters["humanize"] = humanize
    return env


def _edition(compiled: Compiled) -> str:
    """The variants built into the base game (build --variant), named by their titles (a
    title is the players' name for it; the id is the file's); empty without any."""
    if not compiled.folded_titles:
        return ""
    return "with " + ", ".join(title for _, title in compiled.folded_titles)


def _comment_header(compiled: Compiled) -> str:
    return Markup("\n").join(ml_comment(line) for line in header_lines(compiled))


def build_document(compiled: Compiled, engine_source: str) -> Document:
    """The format-neutral view of the reference (tests inspect it directly)."""
    return _Builder(compiled, engine_source).build()


def edition(doc: Document, annotated: bool) -> Document:
    """The document as one edition prints it: the players' (ids, sources and the designer's
    tables left out, assumptions as notes) or the annotated one (everything)."""
    skip = "players" if annotated else "annotated"
    chapters = tuple(
        replace(ch, blocks=tuple(b for b in ch.blocks if getattr(b, "only", "") != skip))
        for ch in doc.chapters if ch.only != skip)
    return replace(doc, chapters=chapters, annotated=annotated)


def render(compiled: Compiled, engine_source: str) -> dict[str, str]:
    """Reference files by relative path; the worked examples run `engine_source`."""
    doc = build_document(compiled, engine_source)
    out: dict[str, str] = {}
    templates: dict[str, tuple[str, bool]] = {
        RULES_MD: ("reference/rules.md.jinja", False),
        RULES_HTML: ("reference/rules.html.jinja", False),
        RULES_ANNOTATED_MD: ("reference/rules.md.jinja", True),
        RULES_ANNOTATED_HTML: ("reference/rules.html.jinja", True),
        AID_MD: ("reference/player-aid.md.jinja", False),
        AID_HTML: ("reference/player-aid.html.jinja", False),
    }
    for path, (name, annotated) in templates.items():
        text = _env(annotated).get_template(name).render(doc=edition(doc, annotated))
        out[path] = _tidy(text)
    for fig in doc.figures:  # the same picture as a file, with the build's header
        out[f"reference/{fig.file}"] = f"<!--\n{doc.header}\n-->\n{fig.svg}"
    players = edition(doc, False)
    for v in doc.variant_pages:
        for fmt in ("md", "html"):
            text = _env(False).get_template(f"reference/variant.{fmt}.jinja").render(
                doc=players, v=v)
            out[variant_handout(v.id, fmt)] = _tidy(text)
    return out


def word_redline(before: str, after: str) -> tuple[tuple[str, str], ...]:
    """`before` -> `after` word by word: runs of (status, text), status same | removed |
    added; a change of "1" to "2" strikes "1" and inserts "2", the words around it stay."""
    a, b = before.split(), after.split()
    out: list[tuple[str, str]] = []
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for op, a0, a1, b0, b1 in matcher.get_opcodes():
        if op == "equal":
            out.append(("same", " ".join(a[a0:a1])))
            continue
        if a1 > a0:
            out.append(("removed", " ".join(a[a0:a1])))
        if b1 > b0:
            out.append(("added", " ".join(b[b0:b1])))
    return _stop_kept(out)


_STOPS = ".,;:!?)"


def _stop_kept(runs: list[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    """A word changed with the stop after it the same (`8.` to `6.`) strikes and inserts the
    words only: the stop is the same text after them (`~~8~~ **6**.`)."""
    out: list[tuple[str, str]] = []
    i = 0
    while i < len(runs):
        if (i + 1 < len(runs) and runs[i][0] == "removed" and runs[i + 1][0] == "added"
                and len(runs[i][1]) > 1 and len(runs[i + 1][1]) > 1
                and runs[i][1][-1] in _STOPS and runs[i][1][-1] == runs[i + 1][1][-1]):
            stop = runs[i][1][-1]
            out += [("removed", runs[i][1][:-1]), ("added", runs[i + 1][1][:-1])]
            if i + 2 < len(runs) and runs[i + 2][0] == "same":
                out.append(("same", stop + " " + runs[i + 2][1]))
                i += 3
            else:
                out.append(("same", stop))
                i += 2
            continue
        out.append(runs[i])
        i += 1
    return tuple(out)


def _joined(parts: Iterable[tuple[str, str]]) -> str:
    """Runs of a redline, already wrapped (`(text, wrapped)`), joined by spaces, but for a run
    that begins with a stop (it follows the word before it)."""
    out = ""
    for text, wrapped in parts:
        out += wrapped if not out or text[:1] in _STOPS else " " + wrapped
    return out


def _words_md(runs: Iterable[tuple[str, str]]) -> str:
    """A word redline as Markdown: struck words ~~so~~, inserted words **so**."""
    wrap = {"same": "{}", "removed": "~~{}~~", "added": "**{}**"}
    return _guard_start(_joined((t, wrap[st].format(md_text(t))) for st, t in runs))


def _words_html(runs: Iterable[tuple[str, str]]) -> Markup:
    """A word redline as HTML: `<del>` for struck words, `<ins>` for inserted ones."""
    wrap = {"same": "{}", "removed": "<del>{}</del>", "added": "<ins>{}</ins>"}
    return Markup(_joined((t, wrap[st].format(html_text(t))) for st, t in runs))


def _tidy(text: str) -> str:
    """No trailing spaces, at most one blank line in a row, one final newline."""
    lines = [line.rstrip() for line in text.splitlines()]
    out: list[str] = []
    for line in lines:
        if not line and out and not out[-1]:
            continue
        out.append(line)
    return "\n".join(out).strip("\n") + "\n"


__all__ = ["Document", "build_document", "edition", "html_rich", "md_rich", "md_text", "render",
           "word_redline"]
