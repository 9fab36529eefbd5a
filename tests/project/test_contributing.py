"""CONTRIBUTING.md's table of the house ("The pipeline and the house") matches the tree: a row
for every package of lisboa_rules/, naming every module in it, and no row for a package that is
gone."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PKG = ROOT / "lisboa_rules"
ROW = re.compile(r"\| `(?P<name>[a-z_]+/|pipeline\.py)` \| (?P<text>.*) \|$")


def rows(text: str) -> dict[str, str]:
    """The table's rows: a package's folder (`cli/`) or `pipeline.py`, and what its row says."""
    return {m["name"]: m["text"] for m in map(ROW.match, text.splitlines()) if m}


def stale(text: str) -> list[str]:
    """What the table says that the tree does not hold, or leaves out of it."""
    table = rows(text)
    bad = []
    packages = sorted(p for p in PKG.iterdir() if p.is_dir() and p.name != "__pycache__")
    for package in packages:
        row = table.get(f"{package.name}/")
        if row is None:
            bad.append(f"no row for {package.name}/")
            continue
        for module in sorted(package.rglob("*.py")):
            if module.name != "__init__.py" and f"{module.name}`" not in row:
                bad.append(f"the {package.name}/ row does not name {module.name}")
    bad.extend(
        f"a row for {name}, which is no package"
        for name in table
        if name.endswith("/") and not (PKG / name).is_dir()
    )
    return bad


def test_the_table_of_the_house_matches_the_tree() -> None:
    assert stale((ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")) == []


def test_a_stale_table_is_found() -> None:
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    assert "`total.py`" in text and "| `sim/` |" in text
    left_out = stale(text.replace("`total.py`", "`totals`"))
    assert left_out == ["the lang/ row does not name total.py"]
    no_row = stale(text.replace("| `sim/` |", "| `simulation/` |"))
    assert "no row for sim/" in no_row and "a row for simulation/, which is no package" in no_row
