"""Fixtures shared by the reference tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from lisboa_rules.model.compiled import Compiled
from lisboa_rules.pipeline import analyse

RULES = Path(__file__).resolve().parents[2] / "rules"


@pytest.fixture(scope="module")
def compiled() -> Compiled:
    """The shipped rules, analysed (every stage up to emit), once per test module."""
    c, diags = analyse(RULES)
    assert c is not None, [d.message for d in diags]
    return c
