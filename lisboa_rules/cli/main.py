"""The `lisboa-rules` command line: argparse subcommands around `pipeline` and `writer`.

Exit codes (the ruff convention): 0 ok and up to date; 1 rule errors or stale outputs;
2 usage errors, internal errors and failures to write. Diagnostics go to stderr; diffs, JSON and
listings go to stdout. An unexpected exception prints one line, never a traceback, unless
LISBOA_RULES_DEBUG=1.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import gc
import json
import os
import re
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import Any

import lisboa_rules
from lisboa_rules.cli.common import (
    DEBUG_ENV,
    EXIT_ERROR,
    EXIT_FINDINGS,
    EXIT_OK,
    Command,
    add_house_option,
    add_rules_options,
    err,
    out,
    report,
)
from lisboa_rules.core import codes
from lisboa_rules.core.diagnostics import (
    PROG,
    Diagnostic,
    has_errors,
    suggest,
)
from lisboa_rules.core.inputs import VERSION_DIGITS
from lisboa_rules.core.source import Span
from lisboa_rules.outputs import cache, reuse, writer

# --- build -------------------------------------------------------------------------------


def _configure_build(p: argparse.ArgumentParser) -> None:
    """Add the build options."""
    add_rules_options(p)
    p.add_argument(
        "--out",
        type=Path,
        default=Path("generated"),
        metavar="DIR",
        help="output directory (default: generated/)",
    )
    p.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 if any output is stale"
    )
    p.add_argument(
        "--diff",
        action="store_true",
        help="write nothing; print unified diffs of stale outputs (implies --check)",
    )
    add_variant_option(p)
    add_house_option(p)
    add_play_option(p)
    p.add_argument(
        "--watch",
        action="store_true",
        help="keep running: build, then build again whenever a rules file (or a --house file) "
        "is saved, printing diagnostics as they are found; Ctrl-C stops",
    )
    p.add_argument(
        "--max-builds",
        type=int,
        default=None,
        metavar="N",
        help="with --watch: stop after N builds (for scripts and tests; exit code of the last)",
    )
    p.add_argument(
        "--no-cache",
        action="store_true",
        help="reuse nothing: no compiled template and no result of an earlier build's "
        f"passes (--check never reuses those anyway; ${cache.ENV}=off does the same)",
    )


def run_build(args: argparse.Namespace) -> int:
    """Compile the rules and bring the output folder up to date (or check it).

    A build reuses the results of passes whose inputs did not change (outputs/reuse.py: in
    the private cache folder, by the digest of what each reads). `--check` and `--diff` reuse
    nothing: they run the whole pipeline and compare the bytes they computed with the folder,
    so nothing is called up to date on the word of a cache or a stamp.
    """
    if args.diff and args.format == "json":
        err(f"{PROG}: error: --diff cannot be combined with --format json\n")
        return EXIT_ERROR
    if args.watch and (args.check or args.diff):
        err(f"{PROG}: error: --watch cannot be combined with --check or --diff\n")
        return EXIT_ERROR
    if args.max_builds is not None and (not args.watch or args.max_builds < 1):
        err(f"{PROG}: error: --max-builds needs --watch and a count of at least 1\n")
        return EXIT_ERROR
    with cache.turned_off(args.no_cache):
        if args.watch:
            from lisboa_rules.cli.watch import watch

            return watch(args, _build)
        # --check and --diff never reuse a result: every pass runs and the bytes are compared
        store = None if args.check or args.diff else reuse.Store()
        with reuse.active(store):
            return _build(args)


def _build(args: argparse.Namespace) -> int:
    from lisboa_rules import pipeline

    with _EarlyGames(args.play) as early:  # its worker, if any, is stopped on the way out
        result = _played(pipeline.compile_rules(args.rules, tuple(args.variant),
                                                extra=tuple(args.house),
                                                on_engine=early.begin), args.play, early)
    if has_errors(result.diagnostics):
        report(result.diagnostics, args.format)
        # A template that fails is the compiler's fault, not the rules': exit as internal.
        internal = any(d.is_error and codes.get(d.code).category in ("emit", "write")
                       for d in result.diagnostics)
        return EXIT_ERROR if internal else EXIT_FINDINGS
    written = writer.write_outputs(
        args.out, result.files, check=args.check, diff=args.diff, protect=(args.rules,)
    )
    # Text lists the stale files below ("would regenerate ..."); JSON lists them as diagnostics.
    json_check = args.check and args.format == "json" and written.ok
    stale = stale_diagnostics(written) if json_check else []
    report([*result.diagnostics, *written.diagnostics, *stale], args.format)
    if not written.ok:
        return EXIT_ERROR
    if args.check or args.diff:
        return _report_check(written)
    _report_written(written)
    return EXIT_OK


def stale_diagnostics(result: writer.WriteResult) -> list[Diagnostic]:
    """One stale-output error per output `--check` found out of date (so that `--format json`
    lists them too), at the output's path."""
    return [
        Diagnostic(
            "stale-output",
            f"{result.path(rel)} is out of date (would {result.reasons.get(rel, 'regenerate')}); "
            f"run {PROG} build",
            Span.point(result.path(rel)),
        )
        for rel in result.stale
    ]


def _report_check(result: writer.WriteResult) -> int:
    """Print what is stale (and diffs); return 1 when anything is."""
    if result.diff_text:
        out(result.diff_text)
    for line in result.messages():
        err(line + "\n")
    if result.stale:
        n = len(result.stale)
        err(f"{PROG}: {n} output file{'s' if n != 1 else ''} out of date in {result.display}/\n")
        return EXIT_FINDINGS
    err(f"{PROG}: {result.display}/ is up to date\n")
    return EXIT_OK


def _report_written(result: writer.WriteResult) -> None:
    """Print a one-line summary of a successful write."""
    if not result.written and not result.removed and not result.stale:
        err(f"{PROG}: {result.display}/ is up to date\n")
        return
    err(
        f"{PROG}: wrote {len(result.written)}, removed {len(result.removed)}, "
        f"kept {len(result.unchanged)} unchanged in {result.display}/\n"
    )


# --- validate ----------------------------------------------------------------------------


def run_validate(args: argparse.Namespace) -> int:
    """Run every pass up to lower for diagnostics only, and no emit (pipeline.check_rules):
    only the engine's text is made, when the backstop's games play it (--play)."""
    from lisboa_rules import pipeline

    with reuse.active(reuse.Store()):
        return _validate(args, pipeline)


def _validate(args: argparse.Namespace, pipeline: ModuleType) -> int:
    result = _played(pipeline.check_rules(args.rules, tuple(args.variant),
                                          extra=tuple(args.house), engine=args.play > 0),
                     args.play)
    report(result.diagnostics, args.format)
    if has_errors(result.diagnostics):
        return EXIT_FINDINGS
    if args.format == "text" and not result.diagnostics:
        err(f"{PROG}: no problems found\n")
    return EXIT_OK


def _configure_validate(p: argparse.ArgumentParser) -> None:
    add_rules_options(p)
    add_variant_option(p)
    add_house_option(p)
    add_play_option(p)


def add_play_option(p: argparse.ArgumentParser) -> None:
    """--play N (build, validate): the seeded games of every rule set played before anything
    is written (sim/backstop.py)."""
    from lisboa_rules.core.limits import PLAY_GAMES as DEFAULT_GAMES

    # $LISBOA_PLAY sets the default (the test suite's builds, which test other things, play none)
    default = os.environ.get("LISBOA_PLAY", "")
    p.add_argument(
        "--play",
        type=int,
        default=int(default) if default.isdigit() else DEFAULT_GAMES,
        metavar="N",
        help="play N seeded games (random, then greedy) of every rule set at every player "
        f"count on the engine built, and report a failure at its rule (default {DEFAULT_GAMES}; "
        "0: none)",
    )


def _played(result: Any, games: int, early: _EarlyGames | None = None) -> Any:
    """`result` with what the backstop's games found (when it built without an error);
    `early`: the games begun while the rest of the outputs were made, joined here."""
    from lisboa_rules.emit import ENGINE

    if has_errors(result.diagnostics) or games <= 0 or ENGINE not in result.files:
        return result
    from lisboa_rules.sim.backstop import (
        REMOVED,
        UNENDED,
        UNPERIODED,
        UNROUNDED,
        play_check,
    )

    names = {stable: shown for shown, stable in result.compiled.names.items()} \
        if result.compiled is not None else {}
    store = reuse.current()  # games that found nothing in this engine are not played again
    k = _played_key(result.files[ENGINE], games) if store else ""
    if store is not None and store.get("played", k) is True:
        return result
    begun = early.begun if early is not None else None
    c = result.compiled
    places = None if c is None else {UNENDED: c.game_ends(), UNPERIODED: c.period_ends(),
                                     UNROUNDED: c.round_ends(), REMOVED: c.removals()}
    found = play_check(result.files[ENGINE], games, names, begun=begun, places=places)
    if not found:
        if store is not None:
            store.put("played", k, True)
        return result
    return replace(result, diagnostics=[*result.diagnostics, *found], files={})


def _played_key(engine: str, games: int) -> str:
    """The key of the backstop's verdict on `engine` (outputs/reuse.py `played`)."""
    from lisboa_rules.sim import backstop

    limits = (backstop.MOVE_LIMIT, backstop.GREEDY_MOVE_LIMIT, backstop.SAVE_EVERY,
              getattr(backstop, "PLAY_SECONDS", None))
    return _played_key_of(engine, games, limits)


@functools.lru_cache(maxsize=2)  # asked when the games begin, and again when they end
def _played_key_of(engine: str, games: int, limits: tuple[Any, ...]) -> str:
    return reuse.key("played", reuse.text_digest(_played_text(engine)), games, limits)


class _EarlyGames:
    """The backstop's games started as soon as a build has the engine's text (`begin`, the
    pipeline's `on_engine`): a worker process plays them on the second core while the
    reference and the other outputs are made (sim/backstop.py `Games`), and `_played` joins
    it. Nothing is begun when no game is to be played, or the store already holds that these
    games found nothing in this engine; a failure to begin only leaves the games to `_played`.
    """

    def __init__(self, games: int) -> None:
        self.games = games
        self.begun: Any = None

    def __enter__(self) -> _EarlyGames:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.begun is not None:
            self.begun.close()

    def begin(self, engine: str) -> None:
        if self.games <= 0 or self.begun is not None:
            return
        store = reuse.current()
        if store is not None and store.get("played", _played_key(engine, self.games)) is True:
            return
        from lisboa_rules.sim import backstop

        games = backstop.Games(engine, self.games)
        try:
            games.start()
        except Exception:  # `_played` plays them (and reports what fails)
            games.close()
            return
        self.begun = games


# Where the engine's text names the digest of the rules files it was built from: its header
# comment and the `$comment` of its state schemas. No game reads them, so an edit that changes
# only what the engine does not say (a glossary entry, an example, a source) plays no game again.
# The digest is in the engine package's version too (`X.Y.Z+rules<digest>`: emit/package.py).
# One pattern each: a pattern that starts with its own words is found by a fast scan for them
# (one pattern of three alternatives tried each at every position of the 440 KB: twice as long).
_INPUTS_DIGEST = (re.compile(r"(?m)^(# Inputs \(sha256\): )[0-9a-f]{64}$"),
                  re.compile(r"(\(inputs sha256:)[0-9a-f]{16}\)"),
                  re.compile(rf"(\+rules)[0-9a-f]{{{VERSION_DIGITS}}}\b"))


def _played_text(engine: str) -> str:
    """The engine's text as the backstop's games read it: without the digest of its inputs."""
    for digest in _INPUTS_DIGEST:
        engine = digest.sub(lambda m: m[1] + "-", engine)
    return engine


def add_variant_option(p: argparse.ArgumentParser) -> None:
    """--variant NAME (build, validate): a variant folded into the base game, as `build` folds
    it, so that `validate` checks the rules `build --variant` would build (a house rule that
    changes rules/state.yaml is only valid folded)."""
    p.add_argument(
        "--variant",
        action="append",
        default=[],
        metavar="NAME",
        help="fold a variant of rules/variants/ (or a --house file) into the base game "
        "(repeatable)",
    )


# --- schema ------------------------------------------------------------------------------


def _configure_schema(p: argparse.ArgumentParser) -> None:
    """Add the schema options."""
    p.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help="write one <kind>.schema.json per file into DIR instead of printing",
    )
    p.add_argument(
        "--check",
        action="store_true",
        help="with --out: write nothing; exit 1 if the exported copy is stale",
    )


def run_schema(args: argparse.Namespace) -> int:
    """Print every schema as one JSON object, or export them as files."""
    from lisboa_rules.front import schema

    exported = schema.export_schemas()
    if args.out is None:
        merged = {name: json.loads(text) for name, text in exported.items()}
        out(json.dumps(merged, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
        return EXIT_OK
    written = writer.write_outputs(args.out, exported, check=args.check)
    report(written.diagnostics, "text")
    if not written.ok:
        return EXIT_ERROR
    if args.check:
        return _report_check(written)
    _report_written(written)
    return EXIT_OK


# --- explain / codes ---------------------------------------------------------------------


def _configure_explain(p: argparse.ArgumentParser) -> None:
    """Add the explain argument."""
    p.add_argument("code", metavar="CODE", help="a diagnostic code such as duplicate-key")


def run_explain(args: argparse.Namespace) -> int:
    """Print one code's severity, summary and explanation."""
    name = str(args.code).strip().lower()
    if name not in codes.CODES:
        guess = suggest(name, codes.CODES)
        hint = f"; did you mean '{guess}'?" if guess else f" (see '{PROG} codes')"
        err(f"{PROG}: error: unknown code '{args.code}'{hint}\n")
        return EXIT_ERROR
    entry = codes.get(name)
    out(f"{entry.name} ({entry.severity}, {entry.category})\n{entry.summary}\n\n")
    out(entry.explanation + "\n")
    return EXIT_OK


def run_codes(args: argparse.Namespace) -> int:
    """List every code, grouped by stage."""
    width = max(len(name) for name in codes.CODES)
    for category in codes.CATEGORIES:
        entries = sorted(
            (c for c in codes.CODES.values() if c.category == category), key=lambda c: c.name
        )
        for c in entries:
            out(f"{c.name:<{width}}  {c.severity:<7}  {category:<6}  {c.summary}\n")
    return EXIT_OK


def _no_arguments(p: argparse.ArgumentParser) -> None:
    """Add nothing."""


# --- the command table -------------------------------------------------------------------

COMMANDS: dict[str, Command] = {
    "build": Command("compile the rules into the output folder", _configure_build, run_build),
    "validate": Command(
        "check the rules and report problems; write nothing", _configure_validate, run_validate
    ),
    "schema": Command(
        "print or export the JSON schemas of the rules files", _configure_schema, run_schema
    ),
    "explain": Command("explain a diagnostic code", _configure_explain, run_explain),
    "codes": Command("list all diagnostic codes", _no_arguments, run_codes),
}

# The other command groups, each a module of this package with its own COMMANDS table
# (`diff NAME`, `score`, `simulate`, `pdf`); none may shadow a core command. They are imported
# when the parser needs them (all_commands): a core command (`build`) never loads the simulator.


def command_groups() -> tuple[ModuleType, ...]:
    """The modules of the other command groups, imported now."""
    from lisboa_rules.cli import balance as balance_commands
    from lisboa_rules.cli import compile as compile_commands
    from lisboa_rules.cli import diff as diff_commands
    from lisboa_rules.cli import engine as engine_commands
    from lisboa_rules.cli import ir as ir_commands
    from lisboa_rules.cli import reference as reference_commands

    return (diff_commands, engine_commands, reference_commands, balance_commands,
            compile_commands, ir_commands)


def all_commands() -> dict[str, Command]:
    """Return the core commands plus those of every command group."""
    table = dict(COMMANDS)
    for group in command_groups():
        for name, command in group.COMMANDS.items():
            if name in table:
                raise ValueError(f"subcommand {name!r} from {group.__name__} is already defined")
            table[name] = command
    return table


class _Version(argparse.Action):
    """`--version`: prints `lisboa-rules VERSION` (read only when asked) and exits 0."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS,
                 default: str = argparse.SUPPRESS, help: str | None = None) -> None:
        super().__init__(option_strings=option_strings, dest=dest, default=default, nargs=0,
                         help=help)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        out(f"{PROG} {lisboa_rules.version()}\n")
        parser.exit()


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """Return the argument parser with one subparser per command; for command-line arguments
    `argv` that start with a core command, only that command's (it parses them the same)."""
    parser = argparse.ArgumentParser(
        prog=PROG, description="Compile the Lisboa rules data into an engine and a reference."
    )
    parser.add_argument("--version", action=_Version, help="print the version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    first = argv[0] if argv else None
    commands = ({first: COMMANDS[first]} if first in COMMANDS else all_commands())
    for name, command in commands.items():
        p = sub.add_parser(name, help=command.help, description=command.help)
        command.configure(p)
        p.set_defaults(handler=command.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the CLI and return the exit code (never raises, never prints a traceback)."""
    try:
        args = build_parser(sys.argv[1:] if argv is None else argv).parse_args(argv)
        handler: Callable[[argparse.Namespace], int] = args.handler
        if argv is None and args.command in _ONE_BUILD and not getattr(args, "watch", False):
            return _without_collector(handler, args)
        return handler(args)
    except SystemExit as exc:  # argparse: --help (0) and usage errors (2)
        return exc.code if isinstance(exc.code, int) else EXIT_ERROR
    except KeyboardInterrupt:
        err(f"{PROG}: interrupted\n")
        return 130
    except BrokenPipeError:
        _silence_stdout()  # `lisboa-rules schema | head`: not an error worth a message
        return EXIT_FINDINGS
    except Exception as exc:
        if os.environ.get(DEBUG_ENV) == "1":
            raise
        detail = " ".join(str(exc).split())  # keep it to one line
        what = f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__
        err(
            f"{PROG}: internal error: {what}; please report this bug "
            f"(run with {DEBUG_ENV}=1 for the traceback)\n"
        )
        return EXIT_ERROR


# The commands that build once and end: run from the command line (not main(argv) in another
# program), their process never walks its objects looking for cycles (see _without_collector)
_ONE_BUILD = frozenset({"build", "validate"})


def _without_collector(handler: Callable[[argparse.Namespace], int],
                       args: argparse.Namespace) -> int:
    """Run a command that builds once, then ends the process, with the cyclic garbage
    collector off, and leave what it built to the exit without a last collection.

    A build allocates about a million objects and frees almost none of them until the process
    ends (the pipeline pauses the collector for the same reason). With the collector back on
    afterwards, its first pass walked all of them (about 50 ms, nothing found), and so did the
    interpreter's collection at exit; gc.freeze() keeps that one off what exists now.
    Reference counting still frees everything it can, and nothing here outlives the process.
    """
    gc.disable()
    try:
        return handler(args)
    finally:
        gc.freeze()


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush cannot fail again."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
