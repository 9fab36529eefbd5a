"""Smoke test of the benchmark harness: it runs end to end at tiny sizes and writes a
well-formed table. Timings are never asserted (they depend on the machine); only the shape of
the result, the agreement checks the harness makes before timing, and the rules scaler."""

from __future__ import annotations

import importlib.util
import json
import math
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "benchmarks"

EXPECTED_ROWS = {
    "build.full",
    "build.check",
    "build.noop",
    "build.edit_one_number",
    "build.full_no_cache",
    "build.first_on_machine",
    "build.floor",
    "scoring.vs_handwritten",
    "scoring.vs_handwritten_numbers",
    "scoring.vs_interp",
    "playout.engine",
    "playout.vs_interp",
    "moves.playout_vs_main",
    "compiled.playout",
    "compiled.scoring",
    "compiled.peak_memory",
    "scaling.build_x1",
    "scaling.build_x2",
    "simulate.jobs",
    "simulate.control",
    "balance.greedy_10k",
    "balance.mcts_move",
    "balance.greedy_candidate",
    "build.watch_edit",
    "speed.pure_playout",
    "speed.engine_playout",
    "speed.compiled_playout",
    "speed.compiled_scoring",
    "speed.compiled_engine_playout",
}
TARGETS = {
    "build.full": ("<=", 2.0),
    "build.check": ("<=", 2.0),
    "build.noop": ("<=", 2.0),
    "build.edit_one_number": ("<=", 3.0),  # issue 36's fresh-process build after an edit
    "build.watch_edit": ("<=", 1.0),
    "build.first_on_machine": ("<=", 2.0),
    "scoring.vs_handwritten": ("<=", 1.25),
    "scoring.vs_interp": (">=", 5.0),
    "playout.vs_interp": (">=", 3.0),
    "simulate.jobs": (">=", 1.7),
    "balance.greedy_10k": ("<=", 1.0),
    "balance.mcts_move": ("<=", 1.0),
    "speed.pure_playout": (">=", 1.3),
    "speed.engine_playout": (">=", 1.3),
    "speed.compiled_playout": (">=", 6.0),
    "speed.compiled_scoring": (">=", 6.0),
    "speed.compiled_engine_playout": (">=", 6.0),
}


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while it executes
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], str]:
    out = tmp_path_factory.mktemp("bench") / "results.json"
    done = subprocess.run(
        [sys.executable, str(BENCH / "run.py"), "--tiny", "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    data: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return data, done.stdout


def _positive(x: Any) -> bool:
    return isinstance(x, int | float) and math.isfinite(x) and x > 0


@pytest.mark.slow  # the complete suite (--slow)
def test_result_has_machine_and_settings(run: tuple[dict[str, Any], str]) -> None:
    data, _ = run
    assert data["schema"] == "lisboa-rules-benchmarks/1"
    assert data["mode"] == "tiny"
    m = data["machine"]
    assert isinstance(m["nproc"], int) and m["nproc"] >= 1
    assert m["cpu_model"]
    assert re.fullmatch(r"\d+\.\d+\.\d+.*", m["python"])
    assert data["settings"]["scales"] == [1, 2]


@pytest.mark.slow  # the complete suite (--slow)
def test_every_row_is_well_formed(run: tuple[dict[str, Any], str]) -> None:
    data, stdout = run
    rows = {r["id"]: r for r in data["rows"]}
    assert set(rows) >= EXPECTED_ROWS
    assert len(rows) == len(data["rows"])  # ids are unique
    for rid, r in rows.items():
        # every row measures: the interpreter is in tools/ (a row left "pending" hid that the
        # harness looked for it at its old path)
        assert r["status"] == "ok", (rid, r["status"], r["note"])
        assert rid in stdout  # the printed table has the row
        for side in ("a", "b"):
            assert r[side]["label"]
            assert r[side]["unit"] in ("s", "/s", "B")
        for side in ("a", "b"):
            s = r[side]
            assert s["samples"] and all(_positive(x) for x in s["samples"]), (rid, side)
            assert min(s["samples"]) <= s["median"] <= max(s["samples"])
        assert _positive(r["ratio"]), rid
        if r["target"] is None:
            assert r["met"] is None
        else:
            op, value = r["target"]["op"], r["target"]["value"]
            assert r["met"] is (r["ratio"] <= value if op == "<=" else r["ratio"] >= value)
    for rid, (op, value) in TARGETS.items():
        assert rows[rid]["target"] == {"op": op, "value": value}, rid


@pytest.mark.slow  # the complete suite (--slow)
def test_ratios_follow_their_definition(run: tuple[dict[str, Any], str]) -> None:
    data, _ = run
    rows = {r["id"]: r for r in data["rows"]}
    for rid, r in rows.items():
        if r["status"] != "ok":
            continue
        a, b = r["a"]["median"], r["b"]["median"]
        expected = b / a if r["ratio_means"].startswith("B / A") else a / b
        assert r["ratio"] == pytest.approx(expected), rid


@pytest.mark.slow  # the complete suite (--slow)
def test_implementations_agree_before_timing(run: tuple[dict[str, Any], str]) -> None:
    data, _ = run
    checks = data["checks"]
    assert checks["states"] >= 1
    # The hand-written baseline computes the engine's numbers (and, today, its sheet).
    assert checks["handwritten_numbers_equal"] is True
    if "interp_totals_equal" in checks:  # the interpreter is there
        assert checks["interp_totals_equal"] is True
        assert checks["interp_places_equal"] is True


@pytest.mark.slow  # the complete suite (--slow)
def test_scaling_summary(run: tuple[dict[str, Any], str]) -> None:
    data, _ = run
    s = data["scaling"]
    assert s["sizes"]["2"]["cards"] == 2 * s["sizes"]["1"]["cards"]
    assert s["sizes"]["2"]["decrees"] == 2 * s["sizes"]["1"]["decrees"]
    assert s["status"] == {"1": "ok", "2": "ok"}
    assert len(s["steps"]) == 1


def test_scaler_keeps_numbers_unique_and_piles_balanced() -> None:
    scale = _load("scale_rules")
    text = (ROOT / "rules" / "components.yaml").read_text(encoding="utf-8")
    card = re.compile(r"^\s*- \{number: (\d+), deck: ([a-z-]+), type: ([a-z-]+)")
    decree = re.compile(r"^\s*- \{id: (decree-[a-z0-9-]+),")

    def census(t: str) -> tuple[list[int], Counter[tuple[str, str]], list[str]]:
        numbers, piles, decrees = [], Counter[tuple[str, str]](), []
        for line in t.splitlines():
            if m := card.match(line):
                numbers.append(int(m.group(1)))
                piles[(m.group(2), m.group(3))] += 1
            elif m := decree.match(line):
                decrees.append(m.group(1))
        return numbers, piles, decrees

    n1, p1, d1 = census(text)
    n3, p3, d3 = census(scale.scale_components(text, 3))
    assert n1 and d1
    assert len(n3) == 3 * len(n1) and len(set(n3)) == len(n3)
    assert set(n1) <= set(n3)  # the original cards keep their numbers (variants name them)
    assert p3 == Counter({k: 3 * v for k, v in p1.items()})
    assert len(d3) == 3 * len(d1) and len(set(d3)) == len(d3)
    assert scale.count_items(scale.scale_components(text, 3)) == (3 * len(n1), 3 * len(d1))
    assert scale.scale_components(text, 1) == text
    with pytest.raises(ValueError):
        scale.scale_components(text, 0)


def test_readme_performance_table_is_the_committed_results() -> None:
    """The docs' Performance table (docs/explanation/performance.md) is the output of
    benchmarks/run.py (issue 17): the committed results.json rendered by `run.py --readme`,
    not numbers typed by hand."""
    bench = _load("run")
    result = json.loads((BENCH / "results.json").read_text(encoding="utf-8"))
    assert bench.PERFORMANCE_PAGE == ROOT / "docs" / "explanation" / "performance.md"
    table = bench.readme_table(bench.PERFORMANCE_PAGE)
    assert table, "docs/explanation/performance.md lacks the benchmark table's markers"
    assert table == bench.markdown(result)
    # every row of the results is a row of the table, with its ratio and its verdict
    for row in result["rows"]:
        line = next(x for x in table.splitlines() if x.startswith(f"| `{row['id']}` |"))
        if row["ratio"] is not None:
            assert f"| {row['ratio']:.2f}x |" in line
        if row["met"] is False:
            assert line.endswith("| **no** |")


def test_markdown_cells_cannot_break_the_table(tmp_path: Path) -> None:
    bench = _load("run")
    result = json.loads((BENCH / "results.json").read_text(encoding="utf-8"))
    row = dict(result["rows"][0])
    row["title"] = "a | b\nc \\ d"
    text = bench.markdown({**result, "rows": [row]})
    line = text.splitlines()[-1]
    assert "a \\| b c \\\\ d" in line
    # the row still has its seven cells: the unescaped pipes are the eight borders
    assert len(re.findall(r"(?<!\\)\|", line.replace("\\\\", ""))) == 8
    readme = tmp_path / "README.md"
    readme.write_text(f"intro\n{bench.README_BEGIN}\nold\n{bench.README_END}\nrest\n", "utf-8")
    assert bench.update_readme(readme, result)
    assert bench.readme_table(readme) == bench.markdown(result)
    assert not bench.update_readme(readme, result)  # a second run changes nothing
    assert readme.read_text("utf-8").startswith("intro\n") and "rest\n" in readme.read_text("utf-8")
