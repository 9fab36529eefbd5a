"""`validate` stops before emitting (issue 36): it runs every pass up to lower, reports every
diagnostic a build would, and makes only the engine's text, for the backstop's games."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from lisboa_rules import emit, pipeline
from lisboa_rules.cli.main import main
from lisboa_rules.emit.reference import render

ROOT = Path(__file__).resolve().parents[2]


def refuse(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("validate must not emit this")


@pytest.fixture
def rules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    shutil.copytree(ROOT / "rules", tmp_path / "rules")
    monkeypatch.chdir(tmp_path)
    return tmp_path / "rules"


def test_validate_renders_no_reference(
    rules: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(render, "render", refuse)
    monkeypatch.setattr(emit, "emit_schemas", refuse)
    played: list[str] = []
    from lisboa_rules.sim import backstop

    real = backstop.play_check

    def play_check(text: str, games: int, names: Any = None, **kw: Any) -> Any:
        played.append(text)
        return real(text, games, names, **kw)

    monkeypatch.setattr(backstop, "play_check", play_check)
    assert main(["validate", "--play", "1"]) == 0, capsys.readouterr().err
    assert len(played) == 1 and "def new_game(" in played[0]  # the engine, played
    assert not (rules.parent / "generated").exists()


def test_validate_without_games_emits_nothing(rules: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pipeline, "emit_engine", refuse)
    monkeypatch.setattr(pipeline, "emit_all", refuse)
    assert main(["validate", "--play", "0"]) == 0


def test_validate_reports_what_build_reports(
    rules: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An error the check pass finds and a warning: validate and build say the same lines."""
    game = rules / "game.yaml"
    text = game.read_text(encoding="utf-8")
    assert "\n  reis: 10\n" in text
    game.write_text(text.replace("\n  reis: 10\n", "\n  reis: -3\n", 1), encoding="utf-8")
    capsys.readouterr()
    assert main(["validate", "--play", "0"]) == 1
    said = capsys.readouterr().err
    assert "error[" in said
    assert main(["build", "--play", "0", "--out", "out"]) == 1
    assert capsys.readouterr().err == said


def test_check_rules_is_compile_rules_without_the_emit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lisboa_rules.outputs import cache

    monkeypatch.setenv(cache.ENV, str(tmp_path / "cache"))  # the suite's memo stands aside
    full = pipeline.compile_rules(ROOT / "rules")
    checked = pipeline.check_rules(ROOT / "rules", engine=True)
    assert checked.diagnostics == full.diagnostics
    assert checked.files == {emit.ENGINE: full.files[emit.ENGINE]}
    assert pipeline.check_rules(ROOT / "rules").files == {}
