"""generated/ is an installable package of the engine (issue 37): `build` writes its
pyproject.toml (the DO-NOT-EDIT header, the version of the engine, no dependencies) and the
py.typed marker; the wheel pip builds from it holds the engine as the package `lisboa_engine`
and nothing else, and imports in a fresh interpreter that sees only it (no site-packages)."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
from conftest import ROOT

from lisboa_rules.core.encode import toml_str
from lisboa_rules.emit.package import DISTRIBUTION, MODULE

GENERATED = ROOT / "generated"
FILES = ("lisboa_engine.py", "py.typed", "pyproject.toml")


def test_the_pyproject_is_generated_with_the_header_and_no_dependencies() -> None:
    text = (GENERATED / "pyproject.toml").read_text(encoding="utf-8")
    engine = (GENERATED / "lisboa_engine.py").read_text(encoding="utf-8")
    lines = engine.splitlines()
    head = lines[: next(i for i, line in enumerate(lines) if not line.startswith("#"))]
    assert text.startswith("\n".join(head) + "\n#\n")  # the engine's DO-NOT-EDIT header
    assert "DO NOT EDIT" in text.splitlines()[0]
    data = tomllib.loads(text)
    project = data["project"]
    assert project["name"] == DISTRIBUTION == "lisboa-engine"
    assert project["dependencies"] == []
    assert project["version"].startswith(__import__("lisboa_rules").__version__ + "+rules")
    assert data["build-system"]["build-backend"] == "hatchling.build"
    force = data["tool"]["hatch"]["build"]["targets"]["wheel"]["force-include"]
    assert force == {"lisboa_engine.py": f"{MODULE}/__init__.py", "py.typed": f"{MODULE}/py.typed"}
    assert (GENERATED / "py.typed").read_bytes() == b""


@pytest.mark.parametrize(
    "value", ["Lisboa", 'a "quoted" \\ title', "tab\there", "line\nbreak", "\x00\x7f\u202e", "é 🎲"]
)
def test_a_toml_string_reads_back_as_its_value(value: str) -> None:
    assert tomllib.loads(f"k = {toml_str(value)}")["k"] == value


def test_the_wheel_installs_the_engine_alone(tmp_path: Path) -> None:
    """`pip wheel` of generated/ (offline: the build backend installed, no isolation) gives a
    wheel with the engine as `lisboa_engine/__init__.py` and the py.typed marker; unpacked
    (a pure wheel's install) it imports in `python -I -S`, which sees neither the project nor
    site-packages, and plays a game with its bots."""
    if importlib.util.find_spec("hatchling") is None:
        pytest.skip("building the wheel offline needs hatchling (pip install hatchling)")
    src = tmp_path / "src"
    src.mkdir()
    for name in FILES:
        shutil.copyfile(GENERATED / name, src / name)
    dist = tmp_path / "dist"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--no-cache-dir",
            "--no-index",
            "-q",
            "-w",
            str(dist),
            str(src),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    (wheel,) = dist.glob("*.whl")
    version = tomllib.loads((GENERATED / "pyproject.toml").read_text("utf-8"))["project"]["version"]
    assert wheel.name == f"lisboa_engine-{version}-py3-none-any.whl"
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        assert sorted(n for n in names if ".dist-info/" not in n) == [
            f"{MODULE}/__init__.py",
            f"{MODULE}/py.typed",
        ]
        meta = zf.read(f"lisboa_engine-{version}.dist-info/METADATA").decode()
        assert "Requires-Dist" not in meta
        assert zf.read(f"{MODULE}/__init__.py") == (GENERATED / "lisboa_engine.py").read_bytes()
        zf.extractall(site)
    code = (
        "import sys; sys.path.insert(0, sys.argv[1])\n"
        "import lisboa_engine as L\n"
        "assert L.__file__.startswith(sys.argv[1]), L.__file__\n"
        "g = L.new_game(2, seed=3)\n"
        "bots = [L.RandomBot(0), L.GreedyBot(1)]\n"
        "while g.phase != 'over':\n"
        "    g = L.apply_move(g, bots[g.actor].choose(g, g.actor))\n"
        "assert not [m for m in sys.modules if m.startswith(('lisboa_rules', 'yaml', 'jinja2'))]\n"
        "print(L.VERSION, L.ranking(g).places)\n"
    )
    ran = subprocess.run(
        [sys.executable, "-I", "-S", "-c", code, str(site)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=tmp_path,
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.startswith(version + " ")
