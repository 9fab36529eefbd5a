"""A variant changes a procedure of rules/ step by step: a new step placed after (or before)
a step of the base by its id, a base step changed by its id; the engine runs the new list."""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path
from types import ModuleType

import pytest

from lisboa_rules.cli.main import main

ROOT = Path(__file__).resolve().parents[2]

VARIANT = """\
kind: variant
id: bonus
title: A bonus wig for a store
applies: chosen
text: Each store built scores 1 wig at once.
source: ["seed:001#action-3-visit-a-noble"]
changes:
  nobles:
    noble_actions:
      - id: build-store
        steps:
          - {{$add: true, {where}, id: bonus-wig, gain: {{wigs: 1}}, text: Score a wig.}}
"""


def _engine(tmp: Path, where: str, capsys: pytest.CaptureFixture[str]) -> ModuleType:
    shutil.copytree(ROOT / "rules", tmp / "rules")
    (tmp / "rules" / "variants" / "bonus.yaml").write_text(VARIANT.format(where=where))
    capsys.readouterr()
    out = tmp / "g"
    code = main(["build", "--no-cache", "--rules", str(tmp / "rules"), "--variant", "bonus",
                 "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    name = f"step_overlay_{tmp.name}"
    spec = importlib.util.spec_from_file_location(name, out / "lisboa_engine.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("where", ["$after: place-store", "$before: pay-land"])
def test_a_step_placed_by_id_runs_in_place(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], where: str
) -> None:
    E = _engine(tmp_path, where, capsys)
    g = E.new_game(3, (), 0)
    p = g.players[0]
    p.reis = 20
    business = g.rs.procs["build-store"].opts(g, 0)[0][0]
    wigs, stores = p.wigs, sum(p.stores.values())
    g.rs.procs["build-store"].run(g, 0, business)
    assert (p.wigs, sum(p.stores.values())) == (wigs + 1, stores + 1)
    text = (tmp_path / "g" / "lisboa_engine.py").read_text(encoding="utf-8")
    run = text[text.index("def _run_build_store"):]
    run = run[: run.index("\ndef ")]
    order = [run.index(s) for s in ("_run_pay_reis", "p.wigs = ", "p.stores[")]
    if where.startswith("$after"):  # pay, store, then the wig
        assert order[0] < order[2] < order[1]
    else:  # the wig before paying
        assert order[1] < order[0] < order[2]


def test_an_unknown_anchor_is_a_located_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copytree(ROOT / "rules", tmp_path / "rules")
    path = tmp_path / "rules" / "variants" / "bonus.yaml"
    path.write_text(VARIANT.format(where="$after: place-stor"))
    capsys.readouterr()
    code = main(["build", "--no-cache", "--rules", str(tmp_path / "rules"), "--variant",
                 "bonus", "--out", str(tmp_path / "g")])
    err = capsys.readouterr().err
    assert code == 1
    assert "bonus.yaml:" in err and "overlay-unknown-item" in err and "place-store" in err
