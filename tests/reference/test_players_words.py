"""The players' edition tells the engine's steps in a rulebook's words (issue 34).

Every generated page a player reads (rules.md/.html, player-aid.*, variant-*.*) is read as
committed: no "…" standing for a value the rule computes, no "→" link to an engine procedure's
or effect's card (`#procedure-…`, `#effect-…`), no "Otherwise:" in a list of steps without an
"If" before it in the same list, and no "//" of code in a score's explanation. The annotated
edition keeps its links to the procedures' cards, but never names one by its id, and holds no
"…", bare "Otherwise:" or "//" either; and the handout of each house rule of
examples/house-rules/ (built as `--house` builds it) passes the same checks as the players'
pages.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import ROOT, run_cli

from lisboa_rules.core.inputs import (
    AID_HTML,
    AID_MD,
    RULES_ANNOTATED_HTML,
    RULES_ANNOTATED_MD,
    RULES_HTML,
    RULES_MD,
    variant_handout,
)
from lisboa_rules.pipeline import compile_rules

GENERATED = Path(__file__).resolve().parents[2] / "generated"
PAGES = sorted({RULES_MD, RULES_HTML, AID_MD, AID_HTML} | {
    str(p.relative_to(GENERATED)) for p in (GENERATED / "reference").glob("variant-*.*")})

ARROW_MD = re.compile(r"→ \[[^\]]*\]\([^)]*#(procedure|effect)-")
ARROW_HTML = re.compile(r"→ <a href=\"[^\"]*#(procedure|effect)-")
URL = re.compile(r"\b[a-z][a-z0-9+.-]*://")
MD_ITEM = re.compile(r"^( *)(\d+)\. (.*)$")
# a handout's line of a sequence: "- **3.** words", "- **3. New:** words", "- ~~words~~"
HANDOUT_ITEM = re.compile(r"^( *)- \*\*(\d+)\.(?: New:)?\*\* (.*)$")
HANDOUT_LINE = re.compile(r'<li class="(?:same|added|changed|removed) [a-z]+" '
                          r'style="margin-left: (\d+)mm">(?:<span class="n">(\d+)\.</span> )?'
                          r'(?:<span class="badge new">New</span> )?(?:<ins>|<del>)?'
                          r'((?:(?!</li>).){0,60})')
ANNOTATED = (RULES_ANNOTATED_MD, RULES_ANNOTATED_HTML)
EXAMPLES = ROOT / "examples" / "house-rules"
HOUSE_RULES = sorted(p.stem for p in EXAMPLES.glob("*.yaml"))
HTML_TOKEN = re.compile(r"<ol\b[^>]*>|</ol>|<li\b[^>]*>")


def page(name: str) -> str:
    return (GENERATED / name).read_text(encoding="utf-8")


def bare_otherwise_md(text: str) -> list[str]:
    """The items of a numbered list that say "Otherwise:" with no "If" item before them in
    the same list (a list is the items at one indent; item 1 starts a new one)."""
    seen: dict[int, bool] = {}
    bad: list[str] = []
    for line in text.splitlines():
        item = MD_ITEM.match(line) or HANDOUT_ITEM.match(line)
        if item is None:
            if line.strip() and not line.startswith(" "):
                seen.clear()  # a paragraph ends every list
            continue
        indent, number, words = len(item.group(1)), int(item.group(2)), item.group(3)
        seen = {k: v for k, v in seen.items() if k <= indent}
        if number == 1:
            seen[indent] = False
        if words.startswith(("*If*", "If ")):
            seen[indent] = True
        elif words.startswith("*Otherwise:*") and not seen.get(indent):
            bad.append(line.strip())
    return bad


def bare_otherwise_lines(text: str) -> list[str]:
    """As `bare_otherwise_md`, for a handout's lines of a sequence (one `<li>` each, its depth
    its margin)."""
    seen: dict[int, bool] = {}
    bad: list[str] = []
    for found in HANDOUT_LINE.finditer(text):
        depth, number, words = int(found.group(1)), found.group(2), found.group(3)
        seen = {k: v for k, v in seen.items() if k <= depth}
        if number == "1":
            seen[depth] = False
        if words.startswith(("If ", "<em>If</em>")):
            seen[depth] = True
        elif words.startswith("<em>Otherwise:</em>") and not seen.get(depth):
            bad.append(words)
    return bad


def problems(name: str, text: str) -> list[str]:
    """What a page must not hold (see the module's docstring), one line each."""
    html = name.endswith(".html")
    found = [f"a value said as '…': {x}" for x in text.splitlines() if "…" in x]
    words = CODE.sub("", text)  # the rules as written (the annotated edition's code) aside
    found += [f"'//' of code: {x}" for x in words.splitlines() if "//" in URL.sub("", x)]
    bare = (bare_otherwise_html(text) + bare_otherwise_lines(text)) if html \
        else bare_otherwise_md(text)
    found += [f"'Otherwise:' without an 'If': {x}" for x in bare]
    if name not in ANNOTATED:
        pattern = ARROW_HTML if html else ARROW_MD
        found += [f"an arrow to an engine procedure: {x}" for x in text.splitlines()
                  if pattern.search(x)]
    found += [f"an arrow to an id: {x}" for x in text.splitlines() if ARROW_ID.search(x)]
    return found


CODE = re.compile(r"<pre\b.*?</pre>|<code\b.*?</code>|`[^`\n]*`", re.S)
# "→ " then a link whose words are an id (`pay-reis`, `effects.rubble`), not a title
ARROW_ID = re.compile(r"→ (?:\[|<a [^>]*>)?[a-z][a-z0-9]*(?:[-_.][a-z0-9]+)+(?:\]|</a>|\b)")


def bare_otherwise_html(text: str) -> list[str]:
    """As `bare_otherwise_md`, for `<ol>` lists of steps."""
    stack: list[bool] = []
    bad: list[str] = []
    for tok in HTML_TOKEN.finditer(text):
        tag = tok.group(0)
        if tag.startswith("<ol"):
            stack.append(False)
        elif tag == "</ol>":
            if stack:
                stack.pop()
        elif stack:
            after = text[tok.end():tok.end() + 80]
            if after.startswith("<em>If</em>"):
                stack[-1] = True
            elif after.startswith("<em>Otherwise:</em>") and not stack[-1]:
                bad.append(after)
    return bad


@pytest.mark.parametrize("name", PAGES)
def test_no_missing_value(name: str) -> None:
    lines = [x for x in page(name).splitlines() if "…" in x]
    assert not lines, f"{name}: a value said as '…':\n" + "\n".join(lines[:10])


@pytest.mark.parametrize("name", PAGES)
def test_no_arrow_to_engine_procedures(name: str) -> None:
    pattern = ARROW_HTML if name.endswith(".html") else ARROW_MD
    lines = [x for x in page(name).splitlines() if pattern.search(x)]
    assert not lines, f"{name}: an arrow to an engine procedure:\n" + "\n".join(lines[:10])


@pytest.mark.parametrize("name", PAGES)
def test_no_otherwise_without_if(name: str) -> None:
    text = page(name)
    bad = bare_otherwise_html(text) if name.endswith(".html") else bare_otherwise_md(text)
    assert not bad, f"{name}: 'Otherwise:' without an 'If' before it:\n" + "\n".join(bad[:10])


@pytest.mark.parametrize("name", PAGES)
def test_no_code_division(name: str) -> None:
    lines = [x for x in page(name).splitlines() if "//" in URL.sub("", x)]
    assert not lines, f"{name}: '//' of code:\n" + "\n".join(lines[:10])


def test_the_checks_see_what_they_look_for() -> None:
    """Each check finds its fault in a small page (so a pass means the pages are clean)."""
    assert bare_otherwise_md("1. Pay it.\n2. *Otherwise:* Take the réis.\n")
    assert not bare_otherwise_md("1. *If* you owe:\n   1. Pay.\n2. *Otherwise:* Take it.\n")
    assert bare_otherwise_html('<ol><li>Pay.</li><li class="otherwise"><em>Otherwise:</em> '
                               "Take.</li></ol>")
    assert not bare_otherwise_html('<ol><li class="if"><em>If</em> you owe:<ol><li>Pay.</li>'
                                   '</ol></li><li class="otherwise"><em>Otherwise:</em> '
                                   "Take.</li></ol>")
    assert ARROW_MD.search("1. Pay. → [Pay reis](#procedure-pay-reis)")
    assert ARROW_HTML.search('Pay. → <a href="#effect-rubble">Rubble</a>')


def test_a_house_rule_without_words_of_play_is_refused_where_it_lacks_them(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A require with no `text:` whose reason names a value of play (`{price}`, a let) has no
    words for the players' page: the build refuses it (text-missing) at that reason, and says
    which key to add. Given its `text:`, the house rule builds, and an `if` with an `else` and
    no `text:` says its condition in the vocabulary's words."""
    house = ROOT / "tests" / "cases" / "words" / "words-of-play.yaml"
    source = house.read_text(encoding="utf-8")
    reason = "            reason: it costs {price} réis and you have {reis}"
    line = source.splitlines().index(reason)
    out = tmp_path / "out"
    code, _out, err = run_cli(["build", "--house", str(house), "--variant", "words-of-play",
                               "--out", str(out), "--play", "0"], capsys, monkeypatch)
    assert code == 1
    assert re.search(rf"words-of-play\.yaml:{line + 1}:\d+: error\[text-missing\]: .*"
                     r"'\{price\}'.*add the key `text:`", err), err
    assert not out.exists()
    worded = tmp_path / "words-of-play.yaml"
    worded.write_text(source.replace(
        "            reason: it costs {price} réis and you have {reis}\n",
        "            reason: it costs {price} réis and you have {reis}\n"
        "            text: you cannot pay the tithe\n"), encoding="utf-8")
    code, _out, err = run_cli(["build", "--house", str(worded), "--variant", "words-of-play",
                               "--out", str(out), "--play", "0"], capsys, monkeypatch)
    assert code == 0, err
    text = (out / RULES_MD).read_text(encoding="utf-8")
    assert "*Not possible when:* you cannot pay the tithe" in text
    assert "*If* you have more than 10 réis, score a wig; otherwise take a real." in text
    assert "{price}" not in text and "…" not in text


@pytest.mark.parametrize("name", ANNOTATED)
def test_the_annotated_edition_names_no_value_or_procedure_by_a_blank_or_an_id(
        name: str) -> None:
    found = problems(name, page(name))
    assert not found, f"{name}:\n" + "\n".join(found[:10])


@pytest.mark.sampled(3)
@pytest.mark.parametrize("house", HOUSE_RULES)
def test_each_house_rule_handout_reads_as_the_players_pages(house: str) -> None:
    result = compile_rules(ROOT / "rules", extra=(EXAMPLES / f"{house}.yaml",))
    assert result.ok, [d.message for d in result.diagnostics]
    for fmt in ("md", "html"):
        name = variant_handout(house, fmt)
        found = problems(name, result.files[name])
        assert not found, f"{house} ({fmt}):\n" + "\n".join(found[:10])


def test_the_handout_checks_see_what_they_look_for() -> None:
    """Each check finds its fault in a handout's lines and a link (so a pass means clean)."""
    assert bare_otherwise_md("- **1.** Pay it.\n- **2.** *Otherwise:* Take the réis.\n")
    assert not bare_otherwise_md("- **1.** If you owe:\n    - **1.** Pay.\n"
                                 "- **2.** *Otherwise:* Take it.\n")
    line = '<li class="{} {}" style="margin-left: {}mm"><span class="n">{}.</span> {}</li>'
    assert bare_otherwise_lines(line.format("same", "step", 0, 1, "Pay.")
                                + line.format("same", "otherwise", 0, 2,
                                              "<em>Otherwise:</em> Take."))
    assert not bare_otherwise_lines(line.format("same", "step", 0, 1, "If you owe:")
                                    + line.format("same", "step", 5, 1, "Pay.")
                                    + line.format("same", "otherwise", 0, 2,
                                                  "<em>Otherwise:</em> Take."))
    assert ARROW_ID.search("1. Pay. → [pay-reis](#procedure-pay-reis)")
    assert ARROW_ID.search('Pay. → <a href="#effect-rubble">effects.rubble</a>')
    assert not ARROW_ID.search("1. Pay. → [Pay réis](#procedure-pay-reis)")
    assert problems("x.md", "The land price is … réis.")
