"""Injection: rules data that looks like code, markup or template syntax stays data.

A copy of rules/ gets hostile names, titles, terms and rule text (quotes, backslashes,
newlines, triple quotes, `__import__('os').system(...)`, Jinja, `</script>`, Markdown pipes).
Then:

- the build succeeds, or refuses with located diagnostics (ids must match a strict pattern);
- the generated engine holds exactly the data as literals: importing it runs nothing hostile,
  its tables equal the input to the character, its AST calls and defines nothing a clean build
  does not, and every identifier matches `pyfmt.IDENTIFIER`;
- the HTML reference has no `<script>` from data, and Markdown table cells escape pipes.
"""

from __future__ import annotations

import ast
import html.parser
import importlib.util
import re
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from lisboa_rules.emit.engine.pyfmt import IDENTIFIER
from tools import fuzz

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "rules"

PWNED = "PWNED-by-lisboa-injection-test"
HOSTILE = (
    'double "quotes" and \'single\' quotes',
    "back\\slash \\n \\x00 \\u0041 \\",
    "a newline\nin the middle",
    "triple ''' and \"\"\" quotes",
    f"__import__('os').system('touch {PWNED}')",
    "'); __import__('os').system('touch " + PWNED + "'); ('",
    '"""; import os; os.system("touch ' + PWNED + '"); """',
    "{{ 7*7 }} {% raw %} {# c #}",
    "</script><script>alert(1)</script>",
    "a | b | c",
    "<b>bold</b> &amp; <!-- comment",
    "`code` *stars* _under_ [link](javascript:alert(1))",
    "%s %(x)s {0} ${x}",
    "\u202eevil\u202c and \u2028 separators",
    "control \x00 nul \r cr \x1b[31m esc \x0c ff \x85 nel",
)
NAME_FIELDS = ("name", "title", "short", "plays", "unit", "designer", "publisher", "words",
               "money", "money_one", "score", "score_one", "years", "column_names")


def hostile(n: int) -> str:
    """The n-th hostile value, tagged so that each field's value is unique."""
    return f"{HOSTILE[n % len(HOSTILE)]} #{n}"


def _walk(data: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    yield path, data
    if isinstance(data, dict):
        for k, v in list(data.items()):
            yield from _walk(v, (*path, k))
    elif isinstance(data, list):
        for i, v in enumerate(data):
            yield from _walk(v, (*path, i))


def _set(data: Any, path: tuple[Any, ...], value: Any) -> None:
    for key in path[:-1]:
        data = data[key]
    data[path[-1]] = value


def poison(rules: Path, *, names: bool = True, texts: bool = False,
           text_values: tuple[str, ...] = ()) -> dict[str, dict[tuple[Any, ...], str]]:
    """Rewrite every rules file with hostile names (and rule texts); return what was set."""
    done: dict[str, dict[tuple[Any, ...], str]] = {}
    n = 0
    for file in sorted(rules.rglob("*.yaml")):
        rel = file.relative_to(rules).as_posix()
        data = fuzz._parse(file.read_bytes())
        assert isinstance(data, dict), rel
        changed: dict[tuple[Any, ...], str] = {}
        for path, value in list(_walk(data)):
            if not path or not isinstance(value, str):
                continue
            key = path[-1] if isinstance(path[-1], str) else path[-2]
            # the vocabulary's names and queries are identifiers, in rules/vocabulary.yaml and in
            # a variant's changes to it
            vocabulary_name = key == "name" and (
                data.get("kind") == "vocabulary" or "vocabulary" in path)
            if names and key in NAME_FIELDS and data.get("kind") != "examples" and \
                    not vocabulary_name:
                new = hostile(n)
                # Printed names are checked for {placeholders} like rule text: braces in them
                # are refused with a located error (tested on their own below).
                new = new.replace("{", "(").replace("}", ")")
            elif texts and key == "text" and "{" not in value and "[[" not in value:
                new = text_values[n % len(text_values)] + f" #{n}" if text_values else hostile(n)
            else:
                continue
            n += 1
            _set(data, path, new)
            changed[path] = new
        file.write_bytes(fuzz._dump(data))
        done[rel] = changed
    return done


def build(project: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[int, str]:
    monkeypatch.chdir(project)
    monkeypatch.delenv("LISBOA_RULES_DEBUG", raising=False)
    code, out, err, tb = fuzz.run_build(["build", "--rules", "rules", "--out", "out"])
    assert tb == "" and out == ""
    assert fuzz.check_output(code if code is not None else -1, out, err, project) == []
    return code if code is not None else -1, err


def load_engine(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A build of the unchanged rules, to compare the hostile one with."""
    project = tmp_path_factory.mktemp("clean")
    shutil.copytree(RULES, project / "rules")
    with pytest.MonkeyPatch.context() as mp:
        code, err = build(project, mp)
    assert code == 0, err
    return project


@pytest.fixture(scope="module")
def poisoned(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """A build of rules whose names, titles and rule texts are all hostile."""
    project = tmp_path_factory.mktemp("hostile")
    shutil.copytree(RULES, project / "rules")
    safe_text = tuple(h for h in HOSTILE if "{" not in h)  # braces are placeholders
    done = poison(project / "rules", texts=True, text_values=safe_text)
    with pytest.MonkeyPatch.context() as mp:
        code, err = build(project, mp)
    assert code == 0, err
    return project, done


# --- the generated Python ------------------------------------------------------------------------


def test_importing_and_running_the_hostile_engine_runs_nothing_hostile(
    poisoned: tuple[Path, dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    project, _ = poisoned
    monkeypatch.chdir(project)
    engine = load_engine(project / "out" / "lisboa_engine.py", "lisboa_engine_hostile")
    for players in (2, 3, 4):
        game = engine.new_game(players)
        for _ in range(30):
            moves = engine.legal_moves(game)
            if not moves:
                break
            game = engine.apply_move(game, moves[0])
        engine.final_scores(game)
    for rule_id in engine.RULE_TEXT:
        engine.rule_text(rule_id)
    assert not list(project.rglob(f"*{PWNED}*"))
    assert not list(Path.cwd().glob(f"*{PWNED}*"))


def test_the_engine_holds_exactly_the_hostile_data(
    poisoned: tuple[Path, dict[str, Any]],
) -> None:
    project, done = poisoned
    engine = load_engine(project / "out" / "lisboa_engine.py", "lisboa_engine_hostile2")
    rs = engine.RULESETS[()]
    game = done["game.yaml"]
    nobles = done["nobles.yaml"]
    assert rs.business_names == tuple(v for p, v in game.items() if p[0] == "businesses")
    assert tuple(n.name for n in rs.nobles) == tuple(
        v for p, v in nobles.items() if p[0] == "nobles" and p[-1] == "name")
    assert rs.term_money == game[("terms", "money")]
    assert rs.column_names == tuple(done["scoring.yaml"][("majority", "column_names", i)]
                                    for i in range(len(rs.column_names)))
    # Rule titles and texts, through RULE_TEXT (the engine's refusal messages).
    compared = 0
    for rel, changed in done.items():
        for path, value in changed.items():
            if path[-1] == "text" and len(path) >= 2:
                owner = path[:-1]
                data = fuzz._parse((project / "rules" / rel).read_bytes())
                node = data
                for key in owner:
                    node = node[key]
                rule_id = node.get("id") if isinstance(node, dict) else None
                if rule_id in engine.RULE_TEXT and "title" in node:
                    assert engine.RULE_TEXT[rule_id] == (node["title"], value), rule_id
                    compared += 1
    assert compared >= 3
    texts = {v for changed in done.values() for p, v in changed.items() if p[-1] == "text"}
    shown = [text for _, text in engine.RULE_TEXT.values()]
    assert sum(text in texts for text in shown) >= 10, "hardly any hostile text reached RULE_TEXT"


def _calls(tree: ast.AST) -> set[str]:
    """Every called name or attribute (`f`, `x.attr`) in a module."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name):
                found.add(func.id)
            elif isinstance(func, ast.Attribute):
                found.add("." + func.attr)
            else:
                found.add(type(func).__name__)
    return found


def _identifiers(tree: ast.AST) -> Iterator[str]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            yield node.id
        elif isinstance(node, ast.Attribute):
            yield node.attr
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            yield node.name
        elif isinstance(node, ast.arg):
            yield node.arg
        elif isinstance(node, ast.keyword):
            if node.arg is not None:
                yield node.arg
        elif isinstance(node, ast.alias):
            yield from (part for part in (node.asname or node.name).split("."))


def _strings(tree: ast.AST) -> set[str]:
    return {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)
            and isinstance(n.value, str)}


def _defined(tree: ast.Module) -> set[str]:
    """Top-level names the module defines."""
    out: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            out.add(node.name)
        elif isinstance(node, ast.Assign):
            out.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out.add(node.target.id)
    return out


def test_the_hostile_engine_has_no_new_code(
    poisoned: tuple[Path, dict[str, Any]], clean: Path
) -> None:
    project, done = poisoned
    bad = ast.parse((project / "out" / "lisboa_engine.py").read_text(encoding="utf-8"))
    good = ast.parse((clean / "out" / "lisboa_engine.py").read_text(encoding="utf-8"))
    assert _calls(bad) <= _calls(good), _calls(bad) - _calls(good)
    assert _defined(bad) == _defined(good)
    assert "__import__" not in _calls(bad) and ".system" not in _calls(bad)
    wrong = sorted({i for i in _identifiers(bad) if not IDENTIFIER.match(i)})
    assert wrong == []
    assert set(_identifiers(bad)) <= set(_identifiers(good))
    # The hostile engine is the clean one with only string literals changed.
    assert ast.dump(_blank_strings(bad)) == ast.dump(_blank_strings(good))
    strings = _strings(bad)
    shown = [v for changed in done.values() for v in changed.values() if v in strings]
    assert len(shown) >= 20, "hardly any hostile value reached the engine"
    assert any(HOSTILE[4] in v for v in shown)  # __import__('os').system(...) as a literal


class _Blank(ast.NodeTransformer):
    def visit_Constant(self, node: ast.Constant) -> ast.Constant:
        return ast.Constant("") if isinstance(node.value, str) else node


def _blank_strings(tree: ast.Module) -> ast.AST:
    """The module with every string literal emptied (positions dropped by ast.dump)."""
    import copy

    blank: ast.AST = _Blank().visit(copy.deepcopy(tree))
    return blank


# --- ids: the schema allows no hostile characters ------------------------------------------------


@pytest.mark.parametrize(
    ("file", "old", "new"),
    [
        ("game.yaml", "{id: gold, name: Gold}", "{id: \"gold'); import os; ('\", name: Gold}"),
        ("game.yaml", "  - id: frame.years\n", "  - id: \"frame.years\\n__import__('os')\"\n"),
        ("nobles.yaml", "  - id: manuel\n", "  - id: \"</script><script>alert(1)\"\n"),
        ("variants/queen.yaml", "\nid: queen\n", "\nid: \"{{ 7*7 }}\"\n"),
        ("scoring.yaml", "  - id: score.ships\n", "  - id: \"score | ships\"\n"),
    ],
    ids=["business-id", "rule-id", "noble-id", "variant-id", "source-id"],
)
def test_hostile_ids_are_refused_at_their_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, file: str, old: str, new: str
) -> None:
    shutil.copytree(RULES, tmp_path / "rules")
    target = tmp_path / "rules" / file
    text = target.read_text(encoding="utf-8")
    assert old in text, f"test fixture: {file} no longer contains {old!r}"
    line = text[: text.index(old) + len(old.split("id:")[0])].count("\n") + 1
    target.write_text(text.replace(old, new, 1), encoding="utf-8")
    code, err = build(tmp_path, monkeypatch)
    assert code == 1
    where = rf"^rules/{re.escape(file)}:{line}:\d+: error\[schema-pattern\]"
    assert re.search(where, err, re.M), err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("Pay {{ 7*7 }} réis.", "missing-text"),
        ("Pay {__import__} réis.", "unknown-placeholder"),
        ("Pay {game.__class__} réis.", "unknown-placeholder"),
        ("See [[__import__('os')]].", "unknown-reference"),
    ],
)
def test_template_syntax_in_rule_text_is_a_located_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, code: str
) -> None:
    shutil.copytree(RULES, tmp_path / "rules")
    target = tmp_path / "rules" / "nobles.yaml"
    data = fuzz._parse(target.read_bytes())
    data["state_actions"][1]["text"] = text  # the Plan State action: a text without placeholders
    target.write_bytes(fuzz._dump(data))
    lines = target.read_text(encoding="utf-8").splitlines()
    start = lines.index("- id: plan")  # the rule's first line (0-based)
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("  text:"))
    result, err = build(tmp_path, monkeypatch)
    assert result == 1
    found = re.findall(rf"^rules/nobles\.yaml:(\d+):\d+: error\[{code}\]", err, re.M)
    assert found and all(start < int(n) <= end + 1 for n in found), err


def test_triple_quotes_in_the_game_title_stay_data(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copytree(RULES, tmp_path / "rules")
    target = tmp_path / "rules" / "game.yaml"
    text = target.read_text(encoding="utf-8")
    assert "\ntitle: Lisboa\n" in text
    title = 'Lisboa""" \\ """ + str(__import__("os").system("touch PWNED")) + """'
    target.write_text(text.replace("\ntitle: Lisboa\n", f"\ntitle: '{title}'\n"),
                      encoding="utf-8")
    code, err = build(tmp_path, monkeypatch)
    assert code == 0, err
    engine = load_engine(tmp_path / "out" / "lisboa_engine.py", "lisboa_engine_title")
    assert engine.GAME_INFO["title"] == title
    assert not list(tmp_path.rglob("PWNED"))
    tree = ast.parse((tmp_path / "out" / "lisboa_engine.py").read_text(encoding="utf-8"))
    assert "__import__" not in _calls(tree)


def test_a_bad_placeholder_in_a_short_label_is_a_located_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copytree(RULES, tmp_path / "rules")
    target = tmp_path / "rules" / "scoring.yaml"
    text = target.read_text(encoding="utf-8")
    old = 'short: "{params.wigs_per_set} each"'
    assert old in text
    line = text[: text.index(old)].count("\n") + 1
    target.write_text(text.replace(old, 'short: "{params.nope} each"'), encoding="utf-8")
    code, err = build(tmp_path, monkeypatch)
    assert code == 1
    assert re.search(rf"^rules/scoring\.yaml:{line}:\d+: error\[unknown-placeholder\]", err,
                     re.M), err


# --- the reference: HTML and Markdown ------------------------------------------------------------


class _Html(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.scripts = 0
        self.tags: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        if tag == "script":
            self.scripts += 1

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _reference(project: Path) -> list[Path]:
    files = sorted((project / "out" / "reference").glob("*.*"))
    if not files:
        pytest.xfail("reference back end pending")
    return files


def test_html_has_no_script_from_data(
    poisoned: tuple[Path, dict[str, Any]], clean: Path
) -> None:
    project, _ = poisoned
    pages = [p for p in _reference(project) if p.suffix == ".html"]
    assert pages
    for page in pages:
        text = page.read_text(encoding="utf-8")
        bad, good = _Html(), _Html()
        bad.feed(text)
        good.feed((clean / "out" / "reference" / page.name).read_text(encoding="utf-8"))
        assert bad.scripts == good.scripts, page.name
        assert sorted(set(bad.tags)) == sorted(set(good.tags)), page.name
        assert "<script>alert(1)" not in text and "<b>bold</b>" not in text
        shown = "".join(bad.text)
        if page.name.startswith("variant-"):  # a handout shows only what its variant changes:
            # some hostile value, as text (which one depends on the order of the data's fields,
            # numbered by `hostile`; the markup of all of them is checked above)
            assert re.search(r" #\d+", shown), page.name
            continue
        assert "&lt;/script&gt;&lt;script&gt;alert(1)" in text, page.name
        # The data comes through as text, character for character (HTML collapses nothing
        # inside text nodes; the parser has undone the escaping).
        assert "</script><script>alert(1)</script>" in shown


def _tables(md: str) -> Iterator[list[str]]:
    """Blocks of consecutive Markdown table lines."""
    block: list[str] = []
    for line in [*md.splitlines(), ""]:
        if line.startswith("|"):
            block.append(line)
        elif block:
            yield block
            block = []


def _cells(line: str) -> int:
    """Number of unescaped pipes in a table line."""
    return len(re.findall(r"(?<!\\)\|", line))


def test_markdown_table_cells_escape_pipes_and_newlines(
    poisoned: tuple[Path, dict[str, Any]],
) -> None:
    project, _ = poisoned
    pages = [p for p in _reference(project) if p.suffix == ".md"]
    assert pages
    seen_pipe = False
    for page in pages:
        md = page.read_text(encoding="utf-8")
        for table in _tables(md):
            widths = {_cells(line) for line in table}
            assert len(widths) == 1, f"{page.name}: a table row is broken:\n" + "\n".join(table)
            seen_pipe |= any("a \\| b \\| c" in line for line in table)
        assert "<script>alert(1)" not in md, page.name
    assert seen_pipe, "no hostile name reached a Markdown table"


@pytest.mark.skipif(sys.platform == "win32", reason="line breaks in file names")
def test_a_line_break_in_a_rules_file_name_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Generated files name their sources in `#` comments: a newline in a file name would end
    the comment and make the rest of the name code (`x=__import__(...),#.yaml`)."""
    shutil.copytree(RULES, tmp_path / "rules")
    evil = 'n\nx=__import__("os").system("touch PWNED"),#.yaml'
    (tmp_path / "rules" / "nobles.yaml").rename(tmp_path / "rules" / evil)
    code, err = build(tmp_path, monkeypatch)
    assert code == 1
    assert 'rules/n\\nx=__import__("os").system("touch PWNED"),#.yaml:1:1: error[unreadable-file]' \
        in err
    assert not (tmp_path / "out").exists() and not list(tmp_path.rglob("PWNED"))


@pytest.mark.parametrize(
    ("value", "code"),
    [("Gold {0}", "unknown-placeholder"), ("Gold {{ 7*7 }}", "missing-text"),
     ("Gold {__class__}", "unknown-placeholder")],
)
def test_template_syntax_in_a_printed_name_is_a_located_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str, code: str
) -> None:
    shutil.copytree(RULES, tmp_path / "rules")
    target = tmp_path / "rules" / "game.yaml"
    text = target.read_text(encoding="utf-8")
    old = "{id: gold, name: Gold}"
    assert old in text
    line = text[: text.index(old)].count("\n") + 1
    target.write_text(text.replace(old, f'{{id: gold, name: "{value}"}}'), encoding="utf-8")
    result, err = build(tmp_path, monkeypatch)
    assert result == 1
    assert re.search(rf"^rules/game\.yaml:{line}:\d+: error\[{code}\]", err, re.M), err


def test_comment_wrapping_ends_on_long_words_and_keeps_every_character() -> None:
    """A parameter named with 400 letters once made the engine emitter's comment wrapper loop
    forever (found by the fuzzer: seed 11, case 1443)."""
    from lisboa_rules.emit.engine.view import _wrap

    for text in ("x" * 400, "a " + "x" * 400 + " b", "  " + "y" * 250, "w " * 300, "z"):
        with fuzz._time_limit(10):  # a loop that never ends fails here instead of hanging
            lines = _wrap(text, 96)
        assert all(len(line) <= 96 for line in lines), lines
        assert "".join(line.strip() for line in lines).replace(" ", "") == text.replace(" ", "")


def test_a_huge_parameter_name_builds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copytree(ROOT / "rules", tmp_path / "rules")
    scoring = tmp_path / "rules" / "scoring.yaml"
    text = scoring.read_text(encoding="utf-8")
    assert "params: {wigs_per_set: 3}" in text
    scoring.write_text(text.replace("params: {wigs_per_set: 3}",
                                    "params: {wigs_per_set: 3, " + "x" * 400 + ": 1}"))
    code, err = build(tmp_path, monkeypatch)
    assert code in (0, 1) and "Traceback" not in err, err


# --- one encoder: every hostile string, every target language ------------------------------------

ENCODER_INPUTS = (
    *HOSTILE,
    '"""',
    "'''",
    'ends with a quote"',
    "ends with a backslash\\",
    "\"\"\"; __import__('os').system('touch PWNED') #",
    "\n__import__('os').system('touch PWNED')",
    "\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029 line breaks Python or splitlines() see",
    "\u202a\u202b\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c bidi",
    "\ud800 lone surrogate \udcff",
    "\U000e0041 tag character, \ufeff bom, \u00ad soft hyphen",
    "--->", "--!>", "<!--", "-->", "<!-", "->", ">", "a-", "-", "--", "%2D%2D%3E",
    "<img src=x onerror=alert(1)>",
)


@pytest.mark.parametrize("value", ENCODER_INPUTS)
def test_the_python_encoders_keep_data_out_of_code(value: str) -> None:
    from lisboa_rules.core import encode

    assert ast.literal_eval(encode.py_str(value)) == value
    assert encode.py_str(value).startswith('"') and encode.py_str(value).endswith('"')
    # A comment line: the module is the same as without it, however the line is read.
    clean = ast.dump(ast.parse("x = 1\ny = 2\n"))
    line = encode.py_comment(value)
    assert ast.dump(ast.parse(f"x = 1  # {line}\ny = 2\n")) == clean
    assert len(f"# {line}".splitlines()) == 1
    assert '"""' not in line and "'''" not in line
    # A docstring holding the value.
    doc = encode.py_docstring(value)
    tree = ast.parse(f'def f() -> None:\n    """Text: {doc}."""\n')
    assert len(tree.body) == 1 and len(tree.body[0].body) == 1  # type: ignore[attr-defined]
    assert ast.get_docstring(tree.body[0], clean=False) == f"Text: {value}."  # type: ignore[arg-type]


class _Markup(html.parser.HTMLParser):
    """Tags with their attributes, and comments, of a page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, tuple[tuple[str, str | None], ...]]] = []
        self.comments: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, tuple(sorted(attrs))))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)

    def handle_comment(self, data: str) -> None:
        self.comments.append(data)


def _markup(text: str) -> _Markup:
    parser = _Markup()
    parser.feed(text)
    parser.close()
    return parser


@pytest.mark.parametrize("value", ENCODER_INPUTS)
def test_the_comment_encoder_can_neither_close_nor_open_a_comment(value: str) -> None:
    from urllib.parse import unquote

    from lisboa_rules.core import encode

    text = encode.ml_comment(value)
    page = _markup(f"<p>before</p><!--\n{text}\n--><p>after</p>")
    assert page.comments == [f"\n{text}\n"]
    assert [t for t, _ in page.tags] == ["p", "p"]
    assert "--" not in text and not {"<", ">", "!", "&"} & set(text)
    assert not text.endswith("-") and len(text.splitlines()) <= 1
    assert all(ch.isprintable() for ch in text)
    assert unquote(text, errors="surrogatepass") == value  # nothing is lost
    assert str(encode.html_text(text)) == text  # HTML templates leave it as it is


# File names are data too: the engine names its sources in comments and a docstring, the
# reference in its DO-NOT-EDIT comment. Each case renames several rules files at once.
HOSTILE_FILE_NAMES = [
    {"scoring.yaml": 's""" + str(__import__("os").system("touch PWNED")) + """.yaml',
     "nobles.yaml": "n''' + str(__import__('os').system('touch PWNED')) + '''.yaml"},
    {"scoring.yaml": "a--->b <img src=x onerror=alert(1)>.yaml",
     "court.yaml": "x--!><script>alert(1).yaml",
     "variants/queen.yaml": "variants/<!-- q.yaml"},
    {"scoring.yaml": "\u202eevil\u2066 bidi\u2069 \u200f.yaml",
     "flow.yaml": "back\\slash \\ and quote\\.yaml",
     "game.yaml": "%2D%2D%3E -- <b onmouseover=alert(1)>.yaml"},
    {"scoring.yaml": "\"; __import__('os').system('touch PWNED'); \".yaml",
     "components.yaml": "--><svg onload=alert(1)>&amp;.yaml"},
]


@pytest.fixture(scope="module")
def clean_names(tmp_path_factory: pytest.TempPathFactory) -> tuple[ast.AST, dict[str, _Markup]]:
    """The clean build's engine (string literals blanked) and reference markup."""
    project = tmp_path_factory.mktemp("clean-names")
    shutil.copytree(RULES, project / "rules")
    with pytest.MonkeyPatch.context() as mp:
        code, err = build(project, mp)
    assert code == 0, err
    tree = ast.parse((project / "out" / "lisboa_engine.py").read_text(encoding="utf-8"))
    pages = {p.name: _markup(p.read_text(encoding="utf-8"))
             for p in sorted((project / "out" / "reference").glob("*.*"))
             if p.suffix in (".md", ".html")}
    return _blank_strings(tree), pages


@pytest.mark.sampled(2)
@pytest.mark.skipif(sys.platform == "win32", reason="file names with < > \" |")
@pytest.mark.parametrize("renames", HOSTILE_FILE_NAMES, ids=lambda r: "+".join(sorted(r)))
def test_hostile_file_names_stay_data(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, renames: dict[str, str],
    clean_names: tuple[ast.AST, dict[str, _Markup]],
) -> None:
    from urllib.parse import unquote

    shutil.copytree(RULES, tmp_path / "rules")
    for old, new in renames.items():
        (tmp_path / "rules" / old).rename(tmp_path / "rules" / new)
    code, err = build(tmp_path, monkeypatch)
    assert code == 0, err
    assert not list(tmp_path.rglob("PWNED")) and not list(Path.cwd().glob("PWNED"))
    source = (tmp_path / "out" / "lisboa_engine.py").read_text(encoding="utf-8")
    tree = ast.parse(source)
    good_tree, good_pages = clean_names
    assert ast.dump(_blank_strings(tree)) == ast.dump(good_tree)
    engine = load_engine(tmp_path / "out" / "lisboa_engine.py", "lisboa_engine_names")
    game = engine.new_game(3)
    engine.final_scores(game)
    assert not list(tmp_path.rglob("PWNED"))
    # The names are still there, readable (as escapes where they are not printable).
    from lisboa_rules.core import encode

    for new in renames.values():
        assert encode.py_comment(f"rules/{new}") in source
    for page in sorted((tmp_path / "out" / "reference").glob("*.*")):
        if page.suffix not in (".md", ".html"):
            continue
        text = page.read_text(encoding="utf-8")
        bad, good = _markup(text), good_pages[page.name]
        assert bad.tags == good.tags, page.name  # the same tags with the same attributes
        assert len(bad.comments) == len(good.comments) == 1, page.name
        assert "--" not in bad.comments[0], page.name
        shown = unquote(bad.comments[0], errors="surrogatepass")
        assert all(f"rules/{new}" in shown for new in renames.values()), page.name
        assert "<img" not in text and "<script>alert" not in text
        # the only <svg> elements are the diagrams the clean build draws too
        assert text.count("<svg") == sum(1 for t, _ in good.tags if t == "svg"), page.name


# --- placeholders: a list index is ASCII digits ---------------------------------------------------


@pytest.mark.parametrize(
    "index",
    ["²", "².name", "٣.name", "３.name", "߃.name", "①.name", "1²", "٠", "9" * 30],
    ids=["superscript", "superscript-name", "arabic-indic", "fullwidth", "nko", "circled",
         "mixed", "arabic-indic-zero", "huge"],
)
def test_a_non_ascii_list_index_in_a_placeholder_is_a_located_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, index: str
) -> None:
    """`str.isdigit()` is true for '²' (then int() crashed the build) and int() reads '٣' and
    '３' as 3 (then the placeholder silently named the fourth business)."""
    shutil.copytree(RULES, tmp_path / "rules")
    target = tmp_path / "rules" / "components.yaml"
    text = target.read_text(encoding="utf-8")
    old = "{game.start.hand} cards of the blue deck"
    assert old in text
    at = text[: text.index(old)].count("\n") + 1
    new = "{game.businesses." + index + "} cards of the blue deck"
    target.write_text(text.replace(old, new, 1), encoding="utf-8")
    code, err = build(tmp_path, monkeypatch)
    assert code == 1, err
    found = re.findall(r"^rules/components\.yaml:(\d+):\d+: error\[unknown-placeholder\]", err,
                       re.M)
    assert found and all(at - 3 <= int(n) <= at for n in found), err
    assert "internal error" not in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "text",
    ["{game.businesses. 1}", "{game.businesses.1 }", "{ game.start.hand}", "{game.start.hand",
     "game.start.hand}", "{{game.start.hand}}", "{game.start.hand|ordinal }",
     "{game.start.hand\u2028}", "{game.start.\thand}", "{game.start.hand}}"],
    ids=["space-in-index", "trailing-space", "leading-space", "unclosed", "unopened",
         "doubled", "space-after-filter", "line-separator", "tab", "extra-close"],
)
def test_a_malformed_placeholder_is_a_located_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str
) -> None:
    """A brace that opens or closes no well-formed placeholder was printed as it is
    (`{game.businesses. 1}` in the reference), or `{{x}}` as `{5}` (review of item 8)."""
    shutil.copytree(RULES, tmp_path / "rules")
    target = tmp_path / "rules" / "components.yaml"
    old = "{game.start.hand} cards of the blue deck"
    data = fuzz._parse(target.read_bytes())
    [path] = [p for p, v in _walk(data) if isinstance(v, str) and old in v]
    node = data
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = node[path[-1]].replace(old, text + " cards of the blue deck", 1)
    target.write_bytes(fuzz._dump(data))
    code, err = build(tmp_path, monkeypatch)
    assert code == 1, err
    found = re.findall(r"^rules/components\.yaml:(\d+):\d+: error\[([a-z-]+)\]", err, re.M)
    assert found and {c for _, c in found} <= {"unknown-placeholder", "missing-text"}, err
    assert "internal error" not in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="file names of any bytes")
@pytest.mark.parametrize("raw", [b"s\xff\xfe--->.yaml", b"n\xc3(.yaml", b"v\xed\xa0\x80.yaml"],
                         ids=["ff-fe", "truncated", "encoded-surrogate"])
def test_a_file_name_that_is_not_utf8_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, raw: bytes
) -> None:
    """Such a name was an internal error (UnicodeEncodeError hashing the inputs)."""
    import os

    shutil.copytree(RULES, tmp_path / "rules")
    os.rename(tmp_path / "rules" / "scoring.yaml", os.fsencode(tmp_path / "rules") + b"/" + raw)
    code, err = build(tmp_path, monkeypatch)
    assert code == 1, err
    assert re.search(r"^rules/.+\.yaml:1:1: error\[unreadable-file\]: .*not UTF-8", err, re.M), err
    assert "internal error" not in err
    assert not (tmp_path / "out").exists()


def test_the_encoders_hold_for_random_strings_of_dangerous_characters() -> None:
    """300 seeded random strings drawn from quotes, backslashes, dashes, brackets, line breaks,
    bidi and format characters, surrogates and letters: the same properties as above."""
    import random
    from urllib.parse import unquote

    from lisboa_rules.core import encode

    pool = [
        *"\"'\\-<>!&%#{}()|`*_[] \n\r\t\x00\x0b\x0c\x1b\x7f\x85aZ0é",
        "\u2028", "\u2029", "\u202e", "\u2066", "\u200f", "\ufeff", "\ud800", "\udfff",
        "\U0001f600", "\U000e0041", "²", "٣"]
    rng = random.Random(11)
    clean = ast.dump(ast.parse("x = 1\ny = 2\n"))
    for _ in range(300):
        value = "".join(rng.choice(pool) for _ in range(rng.randint(0, 24)))
        assert ast.literal_eval(encode.py_str(value)) == value
        assert ast.dump(ast.parse(f"x = 1  # {encode.py_comment(value)}\ny = 2\n")) == clean
        doc = ast.parse(f'def f() -> None:\n    """{encode.py_docstring(value)}"""\n')
        assert ast.get_docstring(doc.body[0], clean=False) == value  # type: ignore[arg-type]
        text = encode.ml_comment(value)
        page = _markup(f"<!--\n{text}\n--><p>x</p>")
        assert page.comments == [f"\n{text}\n"] and [t for t, _ in page.tags] == ["p"]
        assert "--" not in text and unquote(text, errors="surrogatepass") == value


_INVISIBLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")


def test_no_invisible_control_of_the_data_reaches_a_page(
    poisoned: tuple[Path, dict[str, Any]], clean: Path
) -> None:
    # NUL, ESC, form feed, NEL, bidi overrides and line separators in names and texts are not
    # markup, but they change what a reader sees (a right-to-left override reverses the words
    # after it): every page shows them as their escapes instead.
    project, _ = poisoned
    pages = _reference(project)
    assert {p.suffix for p in pages} == {".md", ".html"}
    handouts_showing = 0
    for page in pages:
        text = page.read_text(encoding="utf-8")
        found = sorted({f"U+{ord(c):04X}" for c in _INVISIBLE.findall(text)})
        assert not found, f"{page.name}: {found}"
        clean_text = (clean / "out" / "reference" / page.name).read_text(encoding="utf-8")
        if page.name.startswith("variant-"):  # a handout shows only what its variant changes
            handouts_showing += any(e in text for e in ("\\u202e", "\\x1b", "\\x00"))
            continue
        assert "\\u202e" in text and "\\u202e" not in clean_text, page.name
        assert "\\x1b" in text and "\\x00" in text, page.name
    assert handouts_showing, "no handout shows a hostile control (escaped)"


@pytest.mark.parametrize(
    "value", ["a\u202eb", "x\x00y", "\x1b[31mred", "l\u2028m", "p\u2066q\u2069"]
)
def test_the_page_encoders_make_invisible_controls_visible(value: str) -> None:
    from markupsafe import Markup

    from lisboa_rules.core import encode

    for out in (encode.md_text(value), str(encode.html_text(value)), encode.visible(value)):
        assert not _INVISIBLE.search(out), repr(out)
    assert isinstance(encode.visible(Markup(value)), Markup)
    assert encode.page_value(3) == 3
