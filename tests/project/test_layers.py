"""The direction of imports: each package of lisboa_rules/ imports only from itself and from
the packages below it in LAYERS (CONTRIBUTING.md, "The pipeline and the house"). Every import
counts, the ones inside functions and TYPE_CHECKING blocks too: a lazy import upward is still
a dependency of the design, and the cycle it allows comes later."""

from __future__ import annotations

import ast
from pathlib import Path

from pkg_imports import import_graph

ROOT = Path(__file__).resolve().parents[2]
PKG = ROOT / "lisboa_rules"

# The layers of lisboa_rules/, lowest first: a package or top-level module (by its name under
# lisboa_rules/; "__init__" is the package's own face) may import from its own layer and the
# ones before it, never from one after. A name that is not there (yet) is simply absent.
LAYERS: list[tuple[str, ...]] = [
    ("runtime",),  # the engine's runtime: real Python, imports nothing of lisboa_rules
    ("__init__",),  # the version
    ("core",),  # positions, diagnostics, codes, encoders, guarded reads
    ("ir",),  # the intermediate representation
    ("pyprint",),  # the Python back end's printer of the IR
    ("lang",),  # the small languages
    ("front",),  # loader, schemas, overlays
    ("model",),  # the typed model, its checks, the compiled rule sets
    ("outputs",),  # the writer, the template cache, the compile check of generated Python
    ("emit",),  # the pure back ends (they use the template cache and the compile check)
    ("sim",),  # playing a generated engine: loading it, agents, runs, executors, reports
    ("pipeline",),  # load -> validate -> merge -> build -> lower -> check -> emit
    ("cli",),  # parses arguments and prints
    ("__main__",),  # python -m lisboa_rules
]

# Folders of lisboa_rules/ that hold no Python (what the emitter reads as data).
NO_PYTHON = ("templates",)

RANK = {name: i for i, layer in enumerate(LAYERS) for name in layer}


def layer_of(module: str) -> str:
    """The layer name of a module of lisboa_rules: the first name under the package."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def upward(graph: dict[str, set[str]]) -> list[str]:
    """Every import of a module from a layer above its own, as a sentence."""
    found = []
    for importer in sorted(graph):
        mine = layer_of(importer)
        for imported in sorted(graph[importer]):
            theirs = layer_of(imported)
            if mine not in RANK or theirs not in RANK:
                continue  # an unplaced package: test_every_package_has_a_layer says so
            if RANK[theirs] > RANK[mine]:
                found.append(f"{importer} (layer {mine}) imports {imported} (layer {theirs}, "
                             "above it)")
    return found


def test_no_package_imports_from_a_layer_above_its_own() -> None:
    found = upward(import_graph(ROOT, "lisboa_rules"))
    assert not found, "imports upward:\n  " + "\n  ".join(found)


def test_every_package_has_a_layer() -> None:
    """A new package (or top-level module) of lisboa_rules/ must be placed in LAYERS."""
    names = {p.stem for p in PKG.glob("*.py")}
    names |= {p.name for p in PKG.iterdir() if p.is_dir() and p.name != "__pycache__"}
    unplaced = sorted(names - set(RANK) - set(NO_PYTHON))
    assert not unplaced, f"packages of lisboa_rules/ without a layer in LAYERS: {unplaced}"


def test_the_folders_without_python_hold_none() -> None:
    for name in NO_PYTHON:
        found = sorted(str(p.relative_to(ROOT)) for p in (PKG / name).rglob("*.py"))
        assert not found, f"{name}/ holds Python, so it needs a layer in LAYERS: {found}"


def test_the_layer_check_finds_imports_upward(tmp_path: Path) -> None:
    # The check itself must be able to fail: a lazy import and a TYPE_CHECKING import upward,
    # and the imports that are allowed (down, within a layer, the package's face).
    pkg = tmp_path / "p"
    for sub in ("core", "model", "emit"):
        (pkg / sub).mkdir(parents=True)
        (pkg / sub / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "core" / "a.py").write_text("def f():\n    from p.model.b import x\n")
    (pkg / "model" / "b.py").write_text(
        "from typing import TYPE_CHECKING\nfrom p.core import a\nfrom . import c\n"
        "if TYPE_CHECKING:\n    from ..emit import d\nx = 1\n")
    (pkg / "model" / "c.py").write_text("import p\n")
    (pkg / "emit" / "d.py").write_text("from p.model.b import x\nfrom p.core.a import f\n")
    found = upward(import_graph(tmp_path, "p"))
    assert found == [
        "p.core.a (layer core) imports p.model.b (layer model, above it)",
        "p.model.b (layer model) imports p.emit (layer emit, above it)",
        "p.model.b (layer model) imports p.emit.d (layer emit, above it)",
    ]



# The reference interpreter (tools/) is the generated engine's oracle: it may share the checker
# of the rules with the Python back end (lang/, model/, the IR), never the back end itself.
ORACLE = ("interp.py", "interp_steps.py", "interp_ir.py")
BACK_END = ("lisboa_rules.emit", "lisboa_rules.pyprint")


def test_the_oracle_imports_nothing_of_the_back_end() -> None:
    found = []
    for name in ORACLE:
        for node in ast.walk(ast.parse((ROOT / "tools" / name).read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                mods = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                mods = [node.module or "", *(f"{node.module}.{a.name}" for a in node.names)]
            else:
                continue
            found += [f"tools/{name} imports {m}" for m in mods
                      if any(m == b or m.startswith(b + ".") for b in BACK_END)]
    assert not found, "the oracle imports the back end:\n  " + "\n  ".join(found)
