"""House-rule files kept outside the rules folder: `pipeline.compile_rules(..., extra=...)`,
`build/validate --house FILE` and `balance --compare FILE` add them to the rules as if they were
in rules/variants/, without copying the rules folder; their diagnostics name their own paths."""

from __future__ import annotations

import importlib.util
import re
import shutil
import sys
from pathlib import Path
from types import ModuleType

import pytest

from lisboa_rules import pipeline
from lisboa_rules.cli.main import main
from lisboa_rules.core.inputs import ENGINE
from lisboa_rules.front.loader import load_dir

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "rules"
EXAMPLE = ROOT / "examples" / "house-rules" / "wig-race.yaml"

HEAD = """\
kind: variant
id: house-x
title: A house rule
applies: chosen
text: The Books majority pays more.
source: [seed:000#store-majorities]
changes:
  scoring:
    sources:
      - id: score.stores
"""


def _engine(text: str, name: str, tmp: Path) -> ModuleType:
    path = tmp / f"{name}.py"
    path.write_text(text, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[name]
    return module


@pytest.fixture(scope="module")
def with_extra() -> pipeline.CompileResult:
    result = pipeline.compile_rules(RULES, (), extra=(EXAMPLE,))
    assert result.ok, [d.message for d in result.diagnostics]
    return result


def test_a_house_rule_from_an_extra_file_takes_effect(
    with_extra: pipeline.CompileResult, tmp_path: Path
) -> None:
    E = _engine(with_extra.files[ENGINE], "extra_file_engine", tmp_path)
    assert "wig-race" in E.VARIANTS
    assert "game-end.wigs" in [t.id for t in E.new_game(3, ("wig-race",), 1).rs.triggers]
    assert "game-end.wigs" not in [t.id for t in E.new_game(3, (), 1).rs.triggers]


def test_an_extra_file_builds_what_the_same_file_in_rules_variants_builds(
    with_extra: pipeline.CompileResult, tmp_path: Path
) -> None:
    """The generated files name it rules/variants/<name> (no path of this machine), so they are
    byte for byte those of the copy the balance command used to make."""
    shutil.copytree(RULES, tmp_path / "rules")
    shutil.copy(EXAMPLE, tmp_path / "rules" / "variants" / EXAMPLE.name)
    copied = pipeline.compile_rules(tmp_path / "rules", ())
    assert copied.files == with_extra.files
    assert str(EXAMPLE.parent) not in with_extra.files[ENGINE]
    assert "rules/variants/wig-race.yaml" in with_extra.files[ENGINE]


def test_the_extra_file_is_among_the_inputs_the_engine_records(
    with_extra: pipeline.CompileResult, tmp_path: Path
) -> None:
    """The engine's `Inputs (sha256)` line (and so the compile command's cache key, a hash of
    the engine's source) changes with the extra file's bytes."""

    def inputs(text: str) -> str:
        found = re.search(r"^# Inputs \(sha256\): (\w+)$", text, re.MULTILINE)
        assert found is not None
        return found.group(1)

    plain = pipeline.compile_rules(RULES, ())
    edited = tmp_path / EXAMPLE.name
    edited.write_text(EXAMPLE.read_text(encoding="utf-8").replace("40", "41"), encoding="utf-8")
    other = pipeline.compile_rules(RULES, (), extra=(edited,))
    assert other.ok
    digests = {inputs(r.files[ENGINE]) for r in (plain, with_extra, other)}
    assert len(digests) == 3


def _house(tmp_path: Path, body: str, name: str = "house-x.yaml") -> Path:
    path = tmp_path / name
    path.write_text(HEAD + body, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("body", "line", "col", "code"),
    [
        # an unknown key is refused where it stands: in the file, and in what it changes
        ("tittle: x\n", 11, 1, "schema-unknown-key"),
        ("        tabel: [12, 8, 4]\n", 11, 9, "overlay-unknown-key"),
        # a YAML error
        ("        groups: [{id: books, table: [12, 8, 4]}\n", 12, 1, "yaml-syntax"),
        # an item the rules do not have
        ("        groups:\n          - {id: bookz, table: [12, 8, 4]}\n", 12, 18,
         "overlay-unknown-item"),
    ],
)
def test_an_error_in_an_extra_file_is_reported_at_its_own_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], body: str, line: int, col: int,
    code: str
) -> None:
    path = _house(tmp_path, body)
    capsys.readouterr()
    out = tmp_path / "out"
    assert main(["build", "--rules", str(RULES), "--house", str(path), "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert f"{path}:{line}:{col}: error[{code}]" in err, err
    assert not out.exists()  # nothing is written on error
    assert main(["validate", "--rules", str(RULES), "--house", str(path)]) == 1
    assert f"{path}:{line}:{col}: error[{code}]" in capsys.readouterr().err


def test_a_house_value_beyond_64_bits_is_refused_at_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # one error, at the value in the house file: not engine-failed at the steps that read it
    path = tmp_path / "huge-purse.yaml"
    path.write_text("kind: variant\nid: huge-purse\ntitle: A huge purse\napplies: chosen\n"
                    "text: Every player starts rich.\nchanges:\n  game:\n    start:\n"
                    f"      reis: {10**29}\n", encoding="utf-8")
    capsys.readouterr()
    out = tmp_path / "out"
    assert main(["build", "--rules", str(RULES), "--house", str(path), "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.count("error[") == 1, err
    assert f"{path}:9:13: error[schema-range]: {10**29} at changes.game.start.reis" in err, err
    assert not out.exists()


def test_a_house_rule_over_another_house_rule_says_how_to_build_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a step only another house rule adds: named as that variant's, not a guess at a near id
    tax = ROOT / "examples" / "house-rules" / "period-tax.yaml"
    assert "id: period-end.tax" in tax.read_text(encoding="utf-8")
    heavier = tmp_path / "heavier-tax.yaml"
    heavier.write_text(
        "kind: variant\nid: heavier-tax\ntitle: The heavier tax\napplies: chosen\n"
        "text: The Crown's tax is 2 réis.\nsource: our group\nchanges:\n  flow:\n"
        "    period_end:\n      steps:\n        - id: period-end.tax\n"
        "          text: \"The Crown's tax: every player pays 2 réis to the bank.\"\n",
        encoding="utf-8")
    capsys.readouterr()
    assert main(["validate", "--rules", str(RULES), "--house", str(tax), "--house",
                 str(heavier)]) == 1
    err = capsys.readouterr().err
    assert (f"{heavier}:11:15: error[overlay-unknown-item]: no step 'period-end.tax' in "
            "flow.period_end.steps: variant 'period-tax' adds it") in err, err
    assert "--variant period-tax" in err and "did you mean" not in err


def test_validate_and_build_with_a_house_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _house(tmp_path, "        groups:\n          - {id: books, table: [12, 8, 4]}\n")
    capsys.readouterr()
    assert main(["validate", "--rules", str(RULES), "--house", str(path)]) == 0
    out = tmp_path / "out"
    assert main(["build", "--no-cache", "--rules", str(RULES), "--house", str(path),
                 "--variant", "house-x", "--out", str(out)]) == 0
    E = _engine((out / ENGINE).read_text(encoding="utf-8"), "extra_folded", tmp_path)
    assert [v["id"] for v in E.GAME_INFO["folded_variants"]] == ["house-x"]
    assert not (RULES / "variants" / "house-x.yaml").exists()


def test_an_extra_file_must_be_a_variant(tmp_path: Path) -> None:
    path = tmp_path / "scoring.yaml"
    shutil.copy(RULES / "scoring.yaml", path)
    result = pipeline.compile_rules(RULES, (), extra=(path,))
    assert not result.ok and not result.files
    bad = [d for d in result.diagnostics if d.is_error]
    assert [d.code for d in bad] == ["schema-enum"]
    assert bad[0].span is not None and bad[0].span.file == str(path)
    assert "must be a 'variant'" in bad[0].message


def test_an_extra_file_named_like_a_rules_variant_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "queen.yaml"
    path.write_text(HEAD, encoding="utf-8")
    docs, diags = load_dir(RULES, extra=(path,))
    assert [d.code for d in diags] == ["duplicate-id"]
    assert diags[0].span is not None and diags[0].span.file == str(path)
    assert str(path) not in [d.display for d in docs]
    # the rules' own file given again is just the rules' own file
    again, diags = load_dir(RULES, extra=(RULES / "variants" / "queen.yaml",))
    assert diags == [] and len(again) == len(docs)
    assert not any(d.extra for d in again)


def test_an_extra_file_loads_with_its_own_display_and_a_rules_source(tmp_path: Path) -> None:
    path = _house(tmp_path, "")
    docs, diags = load_dir(RULES, extra=(path,))
    assert diags == []
    extra = [d for d in docs if d.extra]
    assert [(d.display, d.source) for d in extra] == [(str(path), "variants/house-x.yaml")]
