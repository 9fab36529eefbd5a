"""The CLI plumbing: exit codes, streams, formats, check/diff, explain/codes/schema, crash safety.

`pipeline.compile_rules` is replaced by fakes here; the real pipeline has its own tests.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from lisboa_rules import pipeline
from lisboa_rules.cli.main import main
from lisboa_rules.core import codes
from lisboa_rules.core.diagnostics import Diagnostic
from lisboa_rules.core.source import Span
from lisboa_rules.front import schema
from lisboa_rules.front.loader import load_dir
from lisboa_rules.front.validate import validate
from lisboa_rules.pipeline import CompileResult

FILES = {"lisboa_engine.py": "RULES = 1\n", "rules_reference.md": "# Lisboa\n"}
ERROR = Diagnostic("duplicate-id", "duplicate id 'cathedral'", Span("rules/a.yaml", 7, 3, 7, 12))
WARNING = Diagnostic("unused-value", "value 'bonus' is never used", Span.point("rules/a.yaml", 2))

Fake = Callable[[Path, Sequence[str]], CompileResult]


@pytest.fixture
def cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run in an empty project folder with a rules/ directory."""
    (tmp_path / "rules").mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("LISBOA_RULES_DEBUG", raising=False)
    return tmp_path


def fake(
    monkeypatch: pytest.MonkeyPatch,
    files: dict[str, str] | None = None,
    diags: Sequence[Diagnostic] = (),
) -> list[tuple[Path, tuple[str, ...]]]:
    """Replace compile_rules; return the list of calls it receives."""
    calls: list[tuple[Path, tuple[str, ...]]] = []

    def compile_rules(
        rules_dir: Path,
        variants: Sequence[str] = (),
        extra: Sequence[Path] = (),
        on_engine: Any = None,
    ) -> CompileResult:
        calls.append((rules_dir, tuple(variants)))
        return CompileResult(files=dict(FILES if files is None else files), diagnostics=list(diags))

    monkeypatch.setattr(pipeline, "compile_rules", compile_rules)
    monkeypatch.setattr(pipeline, "check_rules",  # validate's passes
                        lambda rules_dir, variants=(), extra=(), engine=False:
                        compile_rules(rules_dir, variants, extra))
    return calls


def test_build_writes_outputs_and_passes_variants(
    cwd: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    calls = fake(monkeypatch)
    assert main(["build", "--variant", "queen", "--variant", "two-player"]) == 0
    assert calls == [(Path("rules"), ("queen", "two-player"))]
    assert (cwd / "generated" / "lisboa_engine.py").read_text() == "RULES = 1\n"
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "wrote 2" in captured.err


def test_build_then_check_is_clean(
    cwd: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    fake(monkeypatch)
    assert main(["build", "--out", "out"]) == 0
    assert main(["build", "--out", "out", "--check"]) == 0
    assert "up to date" in capsys.readouterr().err


def test_check_reports_stale_files_and_writes_nothing(
    cwd: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    fake(monkeypatch)
    assert main(["build"]) == 0
    fake(monkeypatch, {**FILES, "lisboa_engine.py": "RULES = 2\n"})
    capsys.readouterr()
    assert main(["build", "--check"]) == 1
    assert (cwd / "generated" / "lisboa_engine.py").read_text() == "RULES = 1\n"
    captured = capsys.readouterr()
    assert "would regenerate generated/lisboa_engine.py" in captured.err.splitlines()
    assert captured.out == ""


def test_diff_prints_to_stdout_and_exits_1(
    cwd: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    fake(monkeypatch)
    main(["build"])
    fake(monkeypatch, {**FILES, "lisboa_engine.py": "RULES = 2\n"})
    capsys.readouterr()
    assert main(["build", "--diff"]) == 1
    out = capsys.readouterr().out
    assert "--- a/generated/lisboa_engine.py\n+++ b/generated/lisboa_engine.py\n" in out
    assert "-RULES = 1\n+RULES = 2\n" in out
    assert (cwd / "generated" / "lisboa_engine.py").read_text() == "RULES = 1\n"


def test_rule_errors_exit_1_write_nothing_and_go_to_stderr(
    cwd: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    fake(monkeypatch, diags=[WARNING, ERROR])
    assert main(["build"]) == 1
    assert not (cwd / "generated").exists()
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines() == [
        "rules/a.yaml:2:1: warning[unused-value]: value 'bonus' is never used",
        "rules/a.yaml:7:3: error[duplicate-id]: duplicate id 'cathedral'",
        "lisboa-rules: found 1 error and 1 warning",
    ]


def test_warnings_alone_do_not_fail(
    cwd: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    fake(monkeypatch, diags=[WARNING])
    assert main(["build"]) == 0
    assert (cwd / "generated" / "lisboa_engine.py").exists()


def test_json_format_goes_to_stdout(
    cwd: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    fake(monkeypatch, diags=[ERROR])
    assert main(["validate", "--format", "json"]) == 1
    items = json.loads(capsys.readouterr().out)
    assert [(i["code"], i["severity"], i["line"], i["column"]) for i in items] == [
        ("duplicate-id", "error", 7, 3)
    ]


def test_json_format_when_clean_is_an_empty_list(
    cwd: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    fake(monkeypatch)
    assert main(["build", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == []


def test_validate_discards_outputs(
    cwd: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    calls = fake(monkeypatch)
    assert main(["validate", "--rules", "elsewhere"]) == 0
    assert calls == [(Path("elsewhere"), ())]
    assert not (cwd / "generated").exists()
    assert "no problems found" in capsys.readouterr().err


def test_generated_code_that_does_not_compile_exits_2(
    cwd: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    fake(monkeypatch, {"lisboa_engine.py": "def (\n"})
    assert main(["build"]) == 2
    assert "error[generated-invalid]" in capsys.readouterr().err
    assert not (cwd / "generated").exists()


def test_internal_error_is_one_line_without_traceback(
    cwd: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken(
        rules_dir: Path,
        variants: Sequence[str] = (),
        extra: Sequence[Path] = (),
        on_engine: Any = None,
    ) -> CompileResult:
        raise RuntimeError("model exploded\nsecond line")

    monkeypatch.setattr(pipeline, "compile_rules", broken)
    assert main(["build"]) == 2
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("lisboa-rules: internal error: RuntimeError: model exploded")
    assert "please report" in lines[0]
    assert "Traceback" not in captured.err + captured.out


def test_debug_env_shows_the_traceback(cwd: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(
        rules_dir: Path,
        variants: Sequence[str] = (),
        extra: Sequence[Path] = (),
        on_engine: Any = None,
    ) -> CompileResult:
        raise RuntimeError("model exploded")

    monkeypatch.setattr(pipeline, "compile_rules", broken)
    monkeypatch.setenv("LISBOA_RULES_DEBUG", "1")
    with pytest.raises(RuntimeError, match="model exploded"):
        main(["build"])


def test_garbage_rules_give_diagnostics_not_tracebacks(
    cwd: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # A stand-in pipeline made of the real loader and validator.
    def compile_rules(
        rules_dir: Path,
        variants: Sequence[str] = (),
        extra: Sequence[Path] = (),
        on_engine: Any = None,
    ) -> CompileResult:
        docs, diags = load_dir(rules_dir)
        diags += [d for doc in docs for d in validate(doc)]
        return CompileResult(diagnostics=diags)

    monkeypatch.setattr(pipeline, "check_rules",
                        lambda rules_dir, variants=(), extra=(), engine=False:
                        compile_rules(rules_dir, variants, extra))
    rules = cwd / "rules"
    (rules / "bytes.yaml").write_bytes(bytes(range(256)) * 4)
    (rules / "bomb.yaml").write_text("a: &a [1, 1]\nb: [*a, *a]\n")
    (rules / "kind.yaml").write_text("kind: nope\n")
    (rules / "deep.yaml").write_text("[" * 5000 + "\n")
    assert main(["validate"]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    for expected in (
        "rules/bytes.yaml:2:118: error[not-utf8]",
        "error[yaml-alias]",
        "rules/kind.yaml:1:7: error[unknown-kind]",
    ):
        assert expected in err
    assert "rules/deep.yaml:1:65: error[nesting-too-deep]" in err


def test_diff_and_json_cannot_be_combined(
    cwd: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    fake(monkeypatch)
    assert main(["build", "--diff", "--format", "json"]) == 2


def test_usage_errors_exit_2_and_help_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert main(["frobnicate"]) == 2
    assert main(["build", "--format", "xml"]) == 2
    assert main(["--help"]) == 0
    assert "lisboa-rules" in capsys.readouterr().out


def test_explain_known_code(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "duplicate-key"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("duplicate-key (error, load)\nthe same key appears twice")
    assert codes.get("duplicate-key").explanation in out


def test_explain_unknown_code_suggests(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "duplicate-kye"]) == 2
    assert "did you mean 'duplicate-key'?" in capsys.readouterr().err


def test_codes_lists_every_code(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["codes"]) == 0
    names = [line.split()[0] for line in capsys.readouterr().out.splitlines()]
    assert sorted(names) == sorted(codes.CODES)


def test_schema_prints_all_schemas(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == schema.all_schemas()


def test_schema_export_and_check(cwd: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema", "--out", "schemas"]) == 0
    for name, text in schema.export_schemas().items():
        assert (cwd / "schemas" / name).read_text(encoding="utf-8") == text
    assert main(["schema", "--out", "schemas", "--check"]) == 0
    next(iter((cwd / "schemas").glob("*.schema.json"))).write_text("{}\n")
    assert main(["schema", "--out", "schemas", "--check"]) == 1


def test_python_dash_m_entry_point() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "lisboa_rules", "explain", "yaml-tag"],
        capture_output=True,
        text=True,
        check=False,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("yaml-tag (error, load)")
