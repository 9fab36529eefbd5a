"""The README is the short way in: what it is, the picture, the two commands, a tour and links
into the docs. Its links point at files that exist (MkDocs checks the site's own links; the
README is no page of the site), and it stays short: the rest lives in docs/."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_every_link_of_the_readme_is_a_file_of_the_repository() -> None:
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", README)
    assert len(links) >= 10
    missing = [x for x in links if "://" not in x and not (ROOT / x).is_file()]
    assert missing == []


def test_the_readme_links_every_tutorial_and_how_to() -> None:
    for page in [*ROOT.glob("docs/tutorials/*.md"), *ROOT.glob("docs/how-to/*.md")]:
        assert f"]({page.relative_to(ROOT).as_posix()})" in README, page


def test_the_readme_is_short_and_has_the_two_commands() -> None:
    assert len(README.encode("utf-8")) < 8_000
    commands = README.split("## The two commands", 1)[1]
    assert "lisboa-rules build" in commands and "python3 -m pytest" in commands
