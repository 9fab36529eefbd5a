"""`pdf --house FILE`: a house rule kept outside rules/ prints without being copied in, as
`build` and `validate` take it. The printer is a fake (no WeasyPrint or Chromium needed): the
test reads the HTML each PDF would be printed from."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from lisboa_rules.cli import reference as reference_cli
from lisboa_rules.cli.main import build_parser, main

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "rules"
HOUSE = ROOT / "examples" / "house-rules" / "rubble-bounty.yaml"


@pytest.fixture
def printed(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    pages: dict[str, str] = {}

    def fake(html: str, work: Path, target: Path) -> None:
        pages[target.name] = html
        target.write_bytes(b"%PDF-1.4 fake")

    pick: Callable[[str], tuple[str, Any]] = lambda backend: ("fake", fake)  # noqa: E731
    monkeypatch.setattr(reference_cli, "choose_printer", pick)
    return pages


def test_pdf_takes_house_files_like_build() -> None:
    args = build_parser().parse_args(["pdf", "--house", "a.yaml", "--house", "b.yaml",
                                      "--variant", "a"])
    assert args.house == [Path("a.yaml"), Path("b.yaml")] and args.variant == ["a"]


def test_pdf_prints_the_handout_of_a_house_file(tmp_path: Path,
                                                 printed: dict[str, str]) -> None:
    out = tmp_path / "dist"
    assert main(["pdf", "--rules", str(RULES), "--out", str(out), "--house", str(HOUSE)]) == 0
    # an option: the rules print as the base game, with the house rule's handout beside them
    assert sorted(p.name for p in out.iterdir()) == [
        "player-aid.pdf", "rules.pdf", "variant-rubble-bounty.pdf"]
    page = printed["variant-rubble-bounty.pdf"]
    assert 'class="handout"' in page
    title = re.search(r"<title>(.*?)</title>", page, re.S)
    assert title is not None and "The rubble bounty" in title.group(1)
    assert "(rubble-bounty)" not in title.group(1)
    assert not (RULES / "variants" / "rubble-bounty.yaml").exists()  # nothing copied in
