"""The package's structure: no import cycles, a runtime that is real Python, templates that
template, a wheel without development tools or tests."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import optional
import pytest
from pkg_imports import import_graph

ROOT = Path(__file__).resolve().parents[2]
PKG = ROOT / "lisboa_rules"


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), where a package and a
    module inside it do not count as a cycle (a package's face may re-export its parts)."""

    def related(a: str, b: str) -> bool:
        return a.startswith(b + ".") or b.startswith(a + ".")

    pruned = {a: {b for b in bs if not related(a, b)} for a, bs in graph.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(pruned[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(pruned):
        if v not in index:
            visit(v)
    return out


def test_the_package_has_no_import_cycle() -> None:
    found = cycles(import_graph(ROOT, "lisboa_rules"))
    assert not found, f"import cycles: {found}"


def test_the_cycle_finder_finds_cycles(tmp_path: Path) -> None:
    # The check itself must be able to fail: a planted two- and three-module cycle.
    pkg = tmp_path / "p"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("from p.sub import x\n")  # package face: fine
    (pkg / "a.py").write_text("from p import b\n")
    (pkg / "b.py").write_text("import p.a\n")
    (pkg / "sub" / "x.py").write_text("from p.sub import y\n")
    (pkg / "sub" / "y.py").write_text("def f():\n    from ..c import z\n")
    (pkg / "c.py").write_text("from p.sub.x import q\nz = 1\n")
    found = cycles(import_graph(tmp_path, "p"))
    assert ["p.a", "p.b"] in found
    assert ["p.c", "p.sub.x", "p.sub.y"] in found
    assert len(found) == 2


def test_no_cli_module_loads_another_by_name() -> None:
    # A hidden cycle: importlib loading a module that imports its loader back.
    for path in (PKG / "cli").glob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert "import_module(" not in text.replace('import_module("weasyprint")', ""), path


@pytest.mark.parametrize(
    "cmd",
    [
        ["ruff", "check", "--config", "pyproject.toml", "lisboa_rules", "tools"],
        ["mypy", "--strict", "lisboa_rules/runtime"],
    ],
    ids=["ruff", "mypy-runtime"],
)
def test_the_package_is_lint_and_type_clean_before_anything_is_rendered(cmd: list[str]) -> None:
    proc = subprocess.run([optional.tool(cmd[0]), *cmd[1:]], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_runtime_is_python_and_stdlib_only() -> None:
    runtime = PKG / "runtime"
    stdlib = set(sys.stdlib_module_names) | {"__future__"}
    for path in runtime.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            for n in names:
                assert n.split(".")[0] in stdlib, f"{path}: imports {n}"


def test_no_big_template_is_plain_text() -> None:
    tag = re.compile(r"\{\{|\{%|\{#")
    for path in (PKG / "templates").rglob("*.jinja"):
        lines = path.read_text(encoding="utf-8").splitlines()
        tagged = sum(1 for line in lines if tag.search(line))
        if len(lines) > 300:
            assert tagged >= 0.05 * len(lines), f"{path}: {tagged} of {len(lines)} lines templated"


def test_the_wheel_holds_no_tools_or_tests(tmp_path: Path) -> None:
    builders = optional.module("hatchling.builders.wheel", "dev")
    builder = builders.WheelBuilder(str(ROOT))
    (wheel,) = builder.build(directory=str(tmp_path), versions=["standard"])
    names = zipfile.ZipFile(wheel).namelist()
    top = {n.split("/")[0] for n in names}
    assert "lisboa_rules" in top
    assert not {"tools", "tests", "benchmarks", "generated", "rules"} & top, sorted(top)
    assert not [n for n in names if re.search(r"(^|/)(fuzz|interp)\.py$", n)]
    assert "lisboa_rules/runtime/engine.py" in names  # read as text by the emitter
    assert any(n.endswith(".schema.json") for n in names)
    assert any(n.endswith(".jinja") for n in names)
