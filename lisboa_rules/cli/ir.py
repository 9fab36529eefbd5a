"""`lisboa-rules ir`: the checked IR of a rule set's procedures and actions, for people
debugging a rule (as mypyc dumps its IR): each expression of each step, where it is written,
its type and its IR; with `--statements`, each procedure and action as the statements the
back ends print (ir/stmt.py)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from lisboa_rules.cli.common import (
    EXIT_FINDINGS,
    EXIT_OK,
    Command,
    add_house_option,
    add_rules_options,
    err,
    out,
    report,
)
from lisboa_rules.core.diagnostics import has_errors
from lisboa_rules.lang.typed import closest


def _configure(p: argparse.ArgumentParser) -> None:
    add_rules_options(p)
    add_house_option(p)
    p.add_argument("--variant", action="append", default=[], metavar="NAME",
                   help="fold a variant of rules/variants/ (or a --house file) into the base "
                   "game first (repeatable)")
    p.add_argument("--statements", action="store_true",
                   help="print the statements of each procedure and action (what the back "
                   "ends print) rather than each expression")
    p.add_argument("--procedure", metavar="ID",
                   help="only this procedure (an id of rules/effects.yaml, a Noble action) or "
                   "action of a turn (action:KIND, as `action:visit`)")


def run_ir(args: argparse.Namespace) -> int:
    """Print the IR; exit 1 when the rules have errors or the procedure is unknown."""
    from lisboa_rules import pipeline
    from lisboa_rules.ir.show import show
    from lisboa_rules.model.procs import checked_expressions

    compiled, diags = pipeline.analyse(args.rules, tuple(args.variant), extra=tuple(args.house))
    if compiled is None or has_errors(diags):
        report(diags, args.format)
        return EXIT_FINDINGS
    m = compiled.base.model
    if m.procs is None:  # a model without procedures has errors, reported above
        report(diags, args.format)
        return EXIT_FINDINGS
    found = checked_expressions(m.procs, m.state, m.data)
    if args.statements:
        return _statements(compiled.base.steps, args)
    if not _known(args.procedure, found):
        return EXIT_FINDINGS
    if args.procedure is not None:
        found = {args.procedure: found[args.procedure]}

    def where(path: tuple[str | int, ...]) -> str:
        span = m.span_of(str(path[0]), *path[1:])
        return f"{compiled.names.get(span.file, span.file)}:{span.line}"

    if args.format == "json":
        rows: list[dict[str, Any]] = [
            {"procedure": pid, "at": where(c.path), "key": c.key, "source": c.source,
             "type": str(c.typed.type), "ir": show(c.typed.node)}
            for pid, checked in found.items() for c in checked]
        out(json.dumps(rows, indent=2, ensure_ascii=False) + "\n")
        return EXIT_OK
    lines: list[str] = []
    for pid, checked in found.items():
        lines.append(f"{pid}:")
        for c in checked:
            lines.append(f"  {where(c.path)} {c.key}: {c.source}")
            lines.append(f"    {show(c.typed.node)} : {c.typed.type}")
        if not checked:
            lines.append("  (no expression)")
    out("\n".join(lines) + "\n")
    return EXIT_OK


COMMANDS: dict[str, Command] = {
    "ir": Command("print the checked IR of the rules' procedures and actions (for debugging a "
                  "rule)", _configure, run_ir),
}


def _statements(steps: Any, args: argparse.Namespace) -> int:
    """Each procedure and action of the base rule set as IR statements (`--procedure`: one)."""
    from lisboa_rules.ir import show

    blocks: dict[str, list[str]] = {pid: show.proc(p) for pid, p in steps.procs.items()}
    blocks |= {f"action:{k}": show.action(a) for k, a in steps.actions.items()}
    if not _known(args.procedure, blocks):
        return EXIT_FINDINGS
    if args.procedure is not None:
        blocks = {args.procedure: blocks[args.procedure]}
    if args.format == "json":
        out(json.dumps([{"procedure": k, "ir": v} for k, v in blocks.items()], indent=2,
                       ensure_ascii=False) + "\n")
        return EXIT_OK
    out("\n".join(line for b in blocks.values() for line in b) + "\n")
    return EXIT_OK


def _known(procedure: str | None, found: dict[str, Any]) -> bool:
    """Whether `--procedure` (if given) names one of `found`; else says so, with the closest."""
    if procedure is None or procedure in found:
        return True
    near = closest(procedure, sorted(found))
    hint = f"; did you mean '{near}'?" if near else ""
    err(f"lisboa-rules ir: no procedure or action '{procedure}'{hint}\n")
    return False
