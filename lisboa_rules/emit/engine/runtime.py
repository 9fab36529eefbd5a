"""The engine's runtime (`lisboa_rules/runtime/engine.py`) as text, cut where the engine
template puts the definitions it generates."""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass
from importlib import resources
from typing import Any

EMIT = ("# <emit>\n", "# </emit>\n")
GENERATED = ("# <generated>\n", "# </generated>\n")


@dataclass(frozen=True)
class RuntimeText:
    head: str  # the imports, __all__ and the rule tables' shapes
    tail: str  # the machinery that reads the generated tables
    # the names the runtime imports for the generated code alone (its `_USED_BY_GENERATED`)
    for_generated: tuple[str, ...] = ()

    def unused_dropped(self, engine: str) -> str:
        """The engine's text without the head's imports of a name for the generated code
        that nothing else in it names (a rule set whose measures count no long list bisects
        nothing): a line that imports that name alone."""
        for name in self.for_generated:
            line = next((x for x in self.head.splitlines(keepends=True)
                         if x.startswith(("from ", "import ")) and x.endswith(f" {name}\n")),
                        None)
            # the name once in the whole text is its import alone (a count, not a regex over
            # the engine's 0.8 MB: this runs in every build)
            if line is not None and "," not in line and engine.count(name) == 1:
                engine = engine.replace(line, "", 1)
        return engine

    def exports(self) -> list[str]:
        """The public names of the runtime (its `__all__`)."""
        start = self.head.index("__all__ = [\n")
        end = self.head.index("\n]\n", start)
        body = self.head[start + len("__all__ = [\n") : end]
        return [line.strip().rstrip(",").strip('"') for line in body.split("\n") if line.strip()]

    def bound(self) -> set[str]:
        """Every name the runtime binds at the module's level (its imports, functions, classes
        and tables), which the generated code must not bind again."""
        out: set[str] = set()
        for node in _parsed(self.head + self.tail).body:
            if isinstance(node, ast.FunctionDef | ast.ClassDef):
                out.add(node.name)
            elif isinstance(node, ast.Import | ast.ImportFrom):
                out |= {(a.asname or a.name).split(".")[0] for a in node.names}
            elif isinstance(node, ast.Assign | ast.AnnAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                out |= {t.id for t in targets if isinstance(t, ast.Name)}
        return out

    def constant(self, name: str) -> Any:
        """The value of the runtime's module-level constant `name` (`_NESTING: Final = 32`)."""
        for node in _parsed(self.head + self.tail).body:
            if isinstance(node, ast.AnnAssign | ast.Assign) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                    return ast.literal_eval(node.value)
        raise KeyError(f"the runtime has no constant {name}")

    def head_with(self, names: list[str]) -> str:
        """The head with the generated public names in its `__all__` too (sorted as ruff
        keeps it)."""
        from lisboa_rules.emit.engine.queries import sorted_exports

        start = self.head.index("__all__ = [\n")
        end = self.head.index("\n]\n", start)
        listed = "".join(f'    "{n}",\n' for n in sorted_exports([*self.exports(), *names]))
        return self.head[:start] + "__all__ = [\n" + listed + self.head[end + 1 :]


@functools.lru_cache(maxsize=2)
def _parsed(text: str) -> ast.Module:
    """The runtime's syntax tree, parsed once per process for `bound` and `constant` (the
    tree is only read)."""
    return ast.parse(text)


def _between(text: str, marks: tuple[str, str], where: str) -> tuple[str, str, str]:
    start, end = marks
    a = text.find(start)
    b = text.find(end, a + len(start))
    if a < 0 or b < 0 or text.count(start) != 1 or text.count(end) != 1:
        raise RuntimeError(f"{where}: expected one {start.strip()} ... {end.strip()} block")
    return text[:a], text[a + len(start) : b], text[b + len(end) :]


@functools.cache
def runtime_text() -> RuntimeText:
    """The emitted part of the runtime, without its declarations of the generated names."""
    where = "lisboa_rules/runtime/engine.py"
    source = resources.files("lisboa_rules.runtime").joinpath("engine.py").read_text("utf-8")
    _, emitted, _ = _between(source, EMIT, where)
    head, declared, tail = _between(emitted, GENERATED, where)
    found = re.search(r"^_USED_BY_GENERATED = \(([^)]*)\)$", declared, re.M)
    used = tuple(n.strip() for n in found.group(1).split(",") if n.strip()) if found else ()
    # the blank lines around the block belong to the module's layout, not to the engine's
    return RuntimeText(head=head.rstrip("\n") + "\n", tail=tail.strip("\n") + "\n",
                       for_generated=used)


@functools.cache
def runtime_constant(name: str) -> Any:
    """The value of the runtime's constant `name`, read once."""
    return runtime_text().constant(name)
