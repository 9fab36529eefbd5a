"""The import graph of a package, read from its source: what tests/project/test_layout.py
(no cycles) and test_layers.py (no import upward) both check."""

from __future__ import annotations

import ast
from pathlib import Path


def module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(root: Path, package: str) -> dict[str, set[str]]:
    """Module -> the package modules it imports (every import, TYPE_CHECKING and lazy ones
    included: a cycle through a function-level import is still a cycle of the design)."""
    mods = {module_name(p, root): p for p in (root / package).rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in mods.items():
        base = name if path.name == "__init__.py" else name.rpartition(".")[0]
        deps: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                deps |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom):
                mod = node.module or ""
                if node.level:
                    up = base.split(".")[: len(base.split(".")) - node.level + 1]
                    mod = ".".join(up + ([mod] if mod else []))
                deps |= {mod} | {f"{mod}.{a.name}" for a in node.names}
        graph[name] = {d for d in deps if d in mods and d != name}
    return graph
