"""What a test needs beyond the `test` extra (pytest, pytest-xdist, hypothesis).

`pip install -e '.[test]'` runs the suite's core. A test that needs a package of another extra
(`report`: matplotlib, `dask`: distributed, `pdf`: WeasyPrint) or a contributor's tool (ruff,
mypy, playwright, hatchling: the `dev` extra) asks for it here and skips, saying what to
install, when it is missing. In CI (env CI set) `.ci/run` installs `.[dev]`: there a missing
one fails the test instead, as the browser tests and the seed coverage do, so CI never passes by
skipping.
"""

from __future__ import annotations

import importlib
import os
import shutil
from types import ModuleType
from typing import NoReturn

import pytest


def missing(why: str) -> NoReturn:
    """Skip the test (or the module, when called at import) with `why`; fail it in CI."""
    __tracebackhide__ = True  # the skip is reported at the test that asked
    if os.environ.get("CI"):
        pytest.fail(f"{why}; CI installs '.[dev]' and must run this test", pytrace=False)
    pytest.skip(why, allow_module_level=True)


def module(name: str, extra: str) -> ModuleType:
    """The module `name` of the `extra`; a test without it skips (fails in CI)."""
    __tracebackhide__ = True  # the skip is reported at the test that asked
    try:
        return importlib.import_module(name)
    except ImportError:
        missing(f"{name.split('.')[0]} is not installed (pip install -e '.[{extra}]')")


def tool(name: str) -> str:
    """The path of the command-line tool `name` of the `dev` extra (ruff, mypy)."""
    __tracebackhide__ = True  # the skip is reported at the test that asked
    path = shutil.which(name)
    if path is None:
        missing(f"{name} is not installed (pip install -e '.[dev]')")
    return path
