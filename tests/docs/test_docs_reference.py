"""The generated reference pages (tools/docs_reference.py) name everything the compiler reads:
every key of every JSON schema, every kind of step with its keys, every function of the three
expression languages, every diagnostic code and every command and option of the CLI. Each check
is a function of the page's text, so the test of the test removes an entry and sees it fail."""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import docs_reference  # noqa: E402

from lisboa_rules.cli import main as cli  # noqa: E402
from lisboa_rules.core import codes  # noqa: E402
from lisboa_rules.lang import expr, tree, typed, vocab  # noqa: E402

PAGES = docs_reference.pages()
ROW = re.compile(r"^\| `([^`]+)` \|", re.MULTILINE)


def schema_keys() -> set[str]:
    """Every key any schema declares under `properties`, read here independently of the
    generator's own walk."""
    found: set[str] = set()

    def walk(node: object) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("properties"), dict):
                found.update(node["properties"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    for path in (ROOT / "lisboa_rules" / "front" / "schema").glob("*.schema.json"):
        walk(json.loads(path.read_text(encoding="utf-8")))
    return found


def missing_keys(page: str) -> set[str]:
    listed = {
        re.split(r"\.", path.replace("\\|", "|"))[-1].removesuffix("[]")
        for path in ROW.findall(page)
    }
    return schema_keys() - listed


def missing_steps(page: str) -> set[str]:
    gone = set()
    for cls in tree.STEP_CLASSES:
        section = page.split(f"## `{cls.KIND}` ", 1)
        if len(section) < 2:
            gone.add(cls.KIND)
            continue
        body = section[1].split("\n## ", 1)[0]
        gone |= {f"{cls.KIND}.{k}" for k in (*tree.COMMON, *cls.KEYS) if f"`{k}`" not in body}
    return gone


def missing_codes(page: str) -> set[str]:
    return {
        name
        for name, c in codes.CODES.items()
        if f"### `{name}` " not in page
        or c.summary.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace("|", "\\|")
        not in page
    }


def missing_functions(page: str) -> set[str]:
    names = {*expr.FUNCTIONS, *typed.FUNCTIONS, *vocab.DATA_FUNCTIONS, "cost"}
    return {n for n in names if f"`{n}`" not in page and f"`{n}(" not in page}


def missing_options(page: str) -> set[str]:
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    gone = set()
    for name, p in sub.choices.items():
        section = page.split(f"## `{name}` ", 1)
        if len(section) < 2:
            gone.add(name)
            continue
        body = section[1].split("\n## ", 1)[0]
        for action in p._actions:
            gone |= {f"{name} {o}" for o in action.option_strings if o not in body}
    return gone


def test_every_schema_key_is_on_the_keys_page() -> None:
    assert len(schema_keys()) > 100
    assert missing_keys(PAGES["reference/keys.md"]) == set()


def test_every_step_kind_and_its_keys_are_on_the_steps_page() -> None:
    assert missing_steps(PAGES["reference/steps.md"]) == set()
    # the schema's step (what an editor completes) takes the same keys the classes read
    common = json.loads((ROOT / "lisboa_rules/front/schema/common.schema.json").read_text())
    step_keys = set(common["$defs"]["step"]["properties"])
    assert set(tree.KINDS) <= step_keys
    assert {k for k in step_keys if f"`{k}`" not in PAGES["reference/steps.md"]} == set()


def test_every_code_is_on_the_codes_page() -> None:
    assert len(codes.CODES) > 50
    assert missing_codes(PAGES["reference/codes.md"]) == set()


def test_every_function_is_on_the_expressions_page() -> None:
    assert missing_functions(PAGES["reference/expressions.md"]) == set()


def missing_names(page: str) -> set[str]:
    model = docs_reference._base_model()
    wanted = {f"`{f.id}`" for f in model.state.player}
    wanted |= {f"`game.{f.id}`" for f in model.state.game}
    wanted |= {f"`{k.id}`" for k in model.state.kinds}
    wanted |= {f"`{v.name}`" for v in model.vocabulary}
    return {w for w in wanted if f"| {w} |" not in page}


def test_every_field_kind_and_name_of_the_rules_is_on_the_names_page() -> None:
    assert missing_names(PAGES["reference/names.md"]) == set()


def test_every_command_and_option_is_on_the_cli_page() -> None:
    assert missing_options(PAGES["reference/cli.md"]) == set()


@pytest.mark.parametrize(
    ("page", "check", "entry"),
    [
        ("reference/keys.md", missing_keys, "| `triggers[].ends` |"),
        ("reference/steps.md", missing_steps, "## `shuffle` "),
        ("reference/codes.md", missing_codes, "### `duplicate-key` "),
        ("reference/expressions.md", missing_functions, "`reversed`"),
        ("reference/cli.md", missing_options, "--max-builds"),
        ("reference/names.md", missing_names, "| `reis` |"),
    ],
)
def test_a_page_without_an_entry_fails_its_check(page: str, check: object, entry: str) -> None:
    """The checks above can fail: the page with one entry taken out is missing something."""
    text = PAGES[page]
    assert entry in text
    assert callable(check)
    assert check(text.replace(entry, "")) != set()


def test_the_pages_are_the_same_on_every_run() -> None:
    assert docs_reference.pages() == PAGES
