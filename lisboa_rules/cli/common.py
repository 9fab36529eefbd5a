"""What every command group of the CLI shares: exit codes, the command record, output and
diagnostics printing, the options of commands that read the rules."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from lisboa_rules.core.diagnostics import (
    PROG,
    Diagnostic,
    render_json,
    render_text,
    sort_diagnostics,
    summary,
)

DEBUG_ENV = "LISBOA_RULES_DEBUG"
EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


@dataclass(frozen=True)
class Command:
    """One subcommand: its help line, how to add its arguments, and its handler."""

    help: str
    configure: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


def out(text: str) -> None:
    """Write to stdout (looked up at call time so tests can capture it); UTF-8 even when the
    terminal's encoding is not (reference text and schemas hold non-ASCII letters)."""
    encoding = (getattr(sys.stdout, "encoding", None) or "").lower().replace("-", "")
    buffer = getattr(sys.stdout, "buffer", None)
    if encoding != "utf8" and buffer is not None:
        sys.stdout.flush()
        buffer.write(text.encode("utf-8"))
        buffer.flush()
        return
    sys.stdout.write(text)


def err(text: str) -> None:
    """Write to stderr (looked up at call time so tests can capture it)."""
    sys.stderr.write(text)


def report(diags: Sequence[Diagnostic], fmt: str) -> None:
    """Print diagnostics: text to stderr with a count line, or a JSON list to stdout."""
    if fmt == "json":
        out(render_json(diags))
    elif diags:
        err(render_text(diags))
        err(f"{PROG}: {summary(sort_diagnostics(diags))}\n")


def add_rules_options(p: argparse.ArgumentParser) -> None:
    """Add the options shared by commands that read the rules (extension commands too)."""
    p.add_argument(
        "--rules",
        type=Path,
        default=Path("rules"),
        metavar="DIR",
        help="rules directory (default: rules/)",
    )
    p.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="diagnostics format (json goes to stdout)",
    )


def add_house_option(p: argparse.ArgumentParser) -> None:
    """Add --house FILE (build, validate, diff): house-rule variant files kept outside the
    rules folder, read as if they were in its variants/."""
    p.add_argument(
        "--house",
        action="append",
        type=Path,
        default=[],
        metavar="FILE",
        help="add a house-rule variant file kept outside the rules folder, as if it were in "
        "its variants/ (repeatable; fold it in with --variant ID)",
    )
