"""The printable rules reference (placeholder until the reference back end lands)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lisboa_rules.pipeline import Compiled


def render(compiled: Compiled) -> dict[str, str]:
    """Reference files by relative path."""
    return {}
