"""A backstop that points at the rule (issue 33): a few seeded games of every rule set a build
compiles, played on the engine it generated, before anything is written.

The static checks (lang/total.py, ir/cost.py, the checks of the model) are the guarantee that
an engine the compiler accepts plays; this only catches what they miss. Every rule set (the
base game and each chosen variant, at every player count the rules allow) plays `games` games
from seeds 0, 1, ...: a random player on even seeds, a greedy one on odd seeds, each move
listed, played and its state's invariants checked (and a save of it loaded again every
`SAVE_EVERY` moves and at the end: the saved-game checks of rules/state.yaml hold), up to
`MOVE_LIMIT` moves (a greedy game `GREEDY_MOVE_LIMIT`) and `PLAY_SECONDS`
of CPU time (core/limits.py; where a timer can be set: the main thread of a Unix process). An
exception, a failed invariant, a state with no legal move, a game that does not end or one that
runs out of time (a step that loops for long: stopped where it runs) is an
`engine-failed` error at the rule the failing step is written at (the engine's faults name it:
`StateError.at`, read from the comment the generated code keeps above each step), with the
seed, the player count and the moves that reproduce it. A game that does not end is put at the
act a variant wrote that its last moves made most often, else, when no trigger that ends the
game fired, where the caller says those triggers are written, and when one fired, where what
ends a round is (`places`: model/compiled.py `game_ends`, `round_ends`, from the model's
spans).

The games are shared by two processes where a process can be forked (`Games`): a worker
forked once the engine's text exists (a build forks it before the reference is rendered, so
the games play on the second core meanwhile) claims games one at a time from a queue the
process that forked it claims from too, once it is done with the rest of the build. Each game
is the same game whoever plays it (its seed, its agent, its checks), and the results are put
together in the order of the games, so the diagnostics are those of playing them one after the
other here; a game the worker did not report (it died, or could not fork) is played here.
Where no fork is possible (no `os.fork`, macOS, one CPU, or threads running) every game is
played here, one after the other.
"""

from __future__ import annotations

import contextlib
import linecache
import os
import pickle
import signal
import sys
import threading
import types
from collections.abc import Iterator, Mapping
from dataclasses import replace
from typing import Any

from lisboa_rules.core.diagnostics import Diagnostic, Related
from lisboa_rules.core.limits import PLAY_GAMES, PLAY_SECONDS
from lisboa_rules.core.source import Span
from lisboa_rules.outputs import pycode
from lisboa_rules.sim.agents import make_agent

DEFAULT_GAMES = PLAY_GAMES  # games of each rule set at each player count: random, greedy
MOVE_LIMIT = 5_000  # a game longer than this does not end (the base game's take about 100)
# a greedy game longer than this does not end: each of its moves tries every legal move, so a
# house rule that loops (a house act greedy always prefers, that never brings the end closer)
# took 5,000 moves of up to 10 ms each to find, and 1,000 moves of 15 ms each where the act
# chooses 2 of the discard pile (hundreds of moves to try). The greedy games of the base game
# and of the 34 house rules of examples/ and tests/ take 94-136 moves at 2 to 4 players (seeds
# 1 and 3 of every rule set): this is nearly four times the longest.
GREEDY_MOVE_LIMIT = 500
SAVE_EVERY = 25  # a save of the state is loaded again after every this many moves, and at the end
SOURCE = "<generated lisboa_engine.py>"
# the subject of a game that did not end because no trigger ended it (`_Game.unended`)
UNENDED = "no-end"
# a game whose end was triggered but whose round never ended: at what ends a round
UNROUNDED = "no-round-end"
# a game that stayed in a period no trigger ended (before the triggers that end the game can
# fire): at what ends a period
UNPERIODED = "no-period-end"
# not a problem's subject: where a variant of the game removes a rule (`$remove`), noted at
# every problem of its games (what the game lacks may be what it removed, which never runs
# and so is never the step a problem is placed at)
REMOVED = "removed"


def play_check(engine_source: str, games: int = DEFAULT_GAMES,
               names: Mapping[str, str] | None = None, *,
               begun: Games | None = None,
               places: Mapping[str, Mapping[tuple[str, ...], Span]] | None = None
               ) -> list[Diagnostic]:
    """The problems `games` seeded games of every rule set find in the engine `engine_source`
    (the generated module's text); none when it plays them all to their end. `names`: the
    files' display paths by the stable names the engine's comments use ("rules/x.yaml").
    `begun`: the games of this engine already started (`Games.start`, with a worker playing
    them), joined here; else they are started now. `places`: for a problem the games cannot
    place by a step (its subject: `UNENDED`, a game no trigger ended; `UNPERIODED`, one that
    stayed in a period no trigger ended; `UNROUNDED`, one whose round never ended), where it
    is written in each rule set (by its key: model/compiled.py `game_ends`, `period_ends`,
    `round_ends`)."""
    if games <= 0:
        return []
    if begun is not None and begun.source == engine_source and begun.games == games:
        return begun.finish(names, places)
    with Games(engine_source, games) as run:
        run.start()
        return run.finish(names, places)


_SKIPPED = "skipped"  # a game not played: an earlier seed of its rule set and count failed


class Games:
    """The backstop's games of one engine: started (`start`: the engine loaded and, where a
    process can be forked, a worker playing games from a shared queue), then finished here
    (`finish`: the games left in the queue played, the worker's results read). Used as a
    context manager, its worker is stopped on the way out whatever happened."""

    def __init__(self, engine_source: str, games: int, *, worker: bool = True) -> None:
        self.source, self.games, self.worker = engine_source, games, worker
        self.started = False
        self.engine: Any = None
        self.jobs: list[tuple[tuple[str, ...], int, int]] = []  # (chosen, players, seed)
        self.results: dict[int, Diagnostic | str | None] = {}
        self.pid: int | None = None  # the worker's
        self._claims: int | None = None  # the read end of the queue of games
        self._replies: int | None = None  # the read end of the worker's results
        self.from_worker = 0  # the games whose results the worker reported
        self._parent: int | None = None  # in the worker: the process that forked it

    def __enter__(self) -> Games:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> None:
        """Load the engine and, where it can, fork the worker that starts playing."""
        if self.started:
            return
        self.started = True
        if self.games <= 0:
            return
        try:
            self.engine = _load(self.source)
        except (SyntaxError, ValueError):
            return  # code that does not compile: the writer refuses it (generated-invalid)
        self.jobs = [(chosen, players, seed) for chosen, players in _tables(self.engine)
                     for seed in range(self.games)]
        if self.worker and len(self.jobs) > 1 and can_fork():
            self._fork()

    def _fork(self) -> None:
        # The queue: every game's index, 4 bytes each, written before the fork; each process
        # claims the next game with one read of 4 bytes (a pipe's reads do not interleave).
        # The games of more players first (they take longer), so that the last games either
        # process plays are short, and the seeds of a rule set at a player count in their
        # order (a failure of one leaves the next unplayed, as here); which process plays a
        # game, and when, changes nothing of its result.
        order = sorted(range(len(self.jobs)), key=lambda i: (-self.jobs[i][1], i))
        claims_r, claims_w = os.pipe()
        replies_r, replies_w = os.pipe()
        try:
            data = b"".join(i.to_bytes(4, "big") for i in order)
            if len(data) > 65536:  # more than a pipe holds before its reader reads
                raise OSError("too many games to queue")
            os.write(claims_w, data)
            os.close(claims_w)
            claims_w = -1
            for stream in (sys.stdout, sys.stderr):
                with contextlib.suppress(Exception):
                    stream.flush()
            parent = os.getpid()
            pid = os.fork()
        except OSError:
            for fd in (claims_r, claims_w, replies_r, replies_w):
                if fd >= 0:
                    with contextlib.suppress(OSError):
                        os.close(fd)
            return
        if pid == 0:  # the worker: plays, reports, and ends without running anything else
            code = 1
            try:
                os.close(replies_r)
                self._claims, self._parent = claims_r, parent
                _die_with_parent()
                self._play_claimed()
                data = pickle.dumps(self.results, protocol=pickle.HIGHEST_PROTOCOL)
                with os.fdopen(replies_w, "wb") as reply:
                    reply.write(data)
                code = 0
            except BaseException:  # anything: the parent plays what is missing
                pass
            finally:
                os._exit(code)
        os.close(replies_w)
        self.pid, self._claims, self._replies = pid, claims_r, replies_r

    def _play_claimed(self) -> None:
        """Play the games claimed from the queue, one at a time, until it is empty."""
        assert self._claims is not None
        while True:
            if self._parent is not None and os.getppid() != self._parent:
                return  # the build that forked this worker is gone: nobody reads its results
            got = os.read(self._claims, 4)
            if len(got) < 4:
                return  # the queue is empty (a torn read: the games it loses are played here)
            i = int.from_bytes(got, "big")
            if not 0 <= i < len(self.jobs):
                continue
            chosen, players, seed = self.jobs[i]
            # the games of a rule set at a player count are the indices i - seed ... i
            if any(isinstance(self.results.get(j), Diagnostic) for j in range(i - seed, i)):
                self.results[i] = _SKIPPED  # an earlier seed failed: it says enough
                continue
            self.results[i] = _play(self.engine, chosen, players, seed)

    def finish(self, names: Mapping[str, str] | None = None,
               places: Mapping[str, Mapping[tuple[str, ...], Span]] | None = None
               ) -> list[Diagnostic]:
        """Every game played (here: those the worker did not), their problems in the order of
        the games: one error for each rule that fails, one problem of a rule set at a player
        count. A problem no step places (`UNENDED`, `UNROUNDED`) is put where `places` says
        its rule set writes what it is about."""
        self.start()
        if self.engine is None:
            return []
        if self._claims is not None:
            try:
                self._play_claimed()
            except BaseException:  # interrupted (Ctrl-C): the worker is stopped, not waited for
                self.close()
                raise
            self._join()
        out: list[Diagnostic] = []
        where: set[Span | None] = set()
        failed = False
        for i, (chosen, players, seed) in enumerate(self.jobs):
            if seed == 0:
                failed = False
            if failed:
                continue
            found = self.results.get(i, _SKIPPED)
            if isinstance(found, str):  # not played by the worker (or skipped there): here
                found = self.results[i] = _play(self.engine, chosen, players, seed)
            if not isinstance(found, Diagnostic):
                continue
            failed = True  # one problem of a rule set at a player count says enough
            placed = [places[x] for x in found.subject if places and x in places]
            key = tuple(self.engine.variants_for(players, list(chosen)))
            if found.span is None and placed:
                found = replace(found, span=placed[0].get(key))
            elif found.span is not None and names:
                found = replace(found, span=replace(
                    found.span, file=names.get(found.span.file, found.span.file)))
            removal = places.get(REMOVED, {}).get(key) if places else None
            if removal is not None and removal != found.span:
                found = replace(found, related=(*found.related, Related(
                    "a variant of this game removes a rule here: what the game lacked may "
                    "be what it removed", removal)))
            if found.span not in where:  # one error for each rule that fails
                where.add(found.span)
                out.append(found)
        return out

    def _join(self) -> None:
        """The worker's results read (whatever it reported) and the worker waited for."""
        data = bytearray()
        if self._replies is not None:
            with contextlib.suppress(OSError):
                while chunk := os.read(self._replies, 1 << 16):
                    data += chunk
        if self.pid is not None:  # its end of the pipe is closed: it has ended, or is ending
            pid, self.pid = self.pid, None
            with contextlib.suppress(OSError):
                os.waitpid(pid, 0)
        self.close()
        try:  # the bytes of the worker this process forked, through a pipe only the two hold
            theirs = pickle.loads(bytes(data)) if data else {}
        except Exception:  # a worker that died while writing: played here
            theirs = {}
        if isinstance(theirs, dict):
            for i, found in theirs.items():
                if (isinstance(i, int) and i not in self.results
                        and (found is None or isinstance(found, Diagnostic))):
                    self.results[i] = found
                    self.from_worker += 1

    def close(self) -> None:
        """Stop the worker (if it still runs) and close the pipes; idempotent."""
        for name in ("_claims", "_replies"):
            fd = getattr(self, name)
            if fd is not None:
                setattr(self, name, None)
                with contextlib.suppress(OSError):
                    os.close(fd)
        if self.pid is not None:  # not joined (the build stopped before): stopped now
            pid, self.pid = self.pid, None
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
            with contextlib.suppress(OSError):
                os.waitpid(pid, 0)


def _die_with_parent() -> None:
    """In the worker, on Linux: be killed when the process that forked it ends (a build
    killed in the middle of a long game leaves no worker playing on); elsewhere the worker
    looks for its parent between two games."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def can_fork() -> bool:
    """Whether the games can be shared with a forked worker: `os.fork` exists, the system is
    not macOS (where a forked child may not use the system's libraries), this process runs
    no other thread (a fork copies only the calling one), and there is a second CPU."""
    if not hasattr(os, "fork") or sys.platform == "darwin":
        return False
    if threading.active_count() != 1:
        return False
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return cpus > 1


def _load(source: str) -> types.ModuleType:
    """The engine executed in memory, its lines known to `linecache` under its own name so
    that a fault names the rule (the runtime's `_rule_at` reads them)."""
    code = pycode.compile_module(source, SOURCE)
    lines = source.splitlines(keepends=True)
    linecache.cache[SOURCE] = (len(source), None, lines, SOURCE)
    name = "_generated_backstop_engine"
    module = types.ModuleType(name)
    module.__file__ = SOURCE
    sys.modules[name] = module  # dataclasses look their module up while being created
    try:
        exec(code, module.__dict__)
    finally:
        sys.modules.pop(name, None)
    # its searches check that each move they try on a state and take back leaves it exactly
    # as it was (a field a house rule's steps write that the compiler missed fails the build)
    module._TRY_CHECKED[0] = True
    return module


def _tables(engine: Any) -> Iterator[tuple[tuple[str, ...], int]]:
    """Each chosen set of variants with each player count it is played at, once per rule
    set the engine holds."""
    chosen = sorted({tuple(v for v in key if not engine.VARIANTS[v].players)
                     for key in engine.RULESETS})
    lo = min(rs.players_min for rs in engine.RULESETS.values())
    hi = max(rs.players_max for rs in engine.RULESETS.values())
    seen: set[tuple[tuple[str, ...], int]] = set()
    for variants in chosen:
        for players in range(lo, hi + 1):
            try:
                key = tuple(engine.variants_for(players, variants))
            except (ValueError, KeyError):
                continue
            rs = engine.RULESETS.get(key)
            if rs is None or not rs.players_min <= players <= rs.players_max:
                continue
            if (key, players) not in seen:
                seen.add((key, players))
                yield variants, players


class _OutOfTime(BaseException):
    """A game's time is up. Not an `Exception`, so the engine's own fault handling (which
    turns an `Exception` into a `StateError`) lets it through to the backstop."""


@contextlib.contextmanager
def _time_limit(seconds: float) -> Iterator[None]:
    """Raise `_OutOfTime` where the code runs once it has used `seconds` of CPU time; no
    limit where no timer can be set (not the main thread, or no `setitimer`)."""
    if (not hasattr(signal, "setitimer") or not hasattr(signal, "SIGVTALRM")
            or threading.current_thread() is not threading.main_thread()):
        yield
        return

    def out(signum: int, frame: Any) -> None:
        raise _OutOfTime

    before = signal.signal(signal.SIGVTALRM, out)
    signal.setitimer(signal.ITIMER_VIRTUAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_VIRTUAL, 0)
        signal.signal(signal.SIGVTALRM, before)


def _play(engine: Any, chosen: tuple[str, ...], players: int, seed: int) -> Diagnostic | None:
    game = _Game(engine, chosen, players, seed)
    try:
        with _time_limit(PLAY_SECONDS):
            return game.play()
    except _OutOfTime as exc:
        return game.failed(f"the game did not finish in {PLAY_SECONDS} s of CPU time (a step "
                           "that loops for long: bound its counts and ranges)",
                           engine._rule_at(exc) or game.last_action())


class _Game:
    """One seeded game of the backstop: a random player on even seeds, a greedy one on odd."""

    def __init__(self, engine: Any, chosen: tuple[str, ...], players: int, seed: int) -> None:
        self.engine, self.chosen, self.players, self.seed = engine, chosen, players, seed
        self.agent_name = "random" if seed % 2 == 0 else "greedy"
        self.move_limit = MOVE_LIMIT if seed % 2 == 0 else GREEDY_MOVE_LIMIT
        self.moves: list[Any] = []
        self.g: Any = None

    def play(self) -> Diagnostic | None:
        """The game played move by move, its first failure or None."""
        engine, moves = self.engine, self.moves
        try:
            self.g = engine.new_game(self.players, list(self.chosen), self.seed)
            broken = engine.check_invariants(self.g)
            if broken:  # the setup made a state its own invariants refuse
                return self.failed(f"an invariant fails after the setup: {broken[0]}",
                                   self.setup_at())
            step = make_agent(self.agent_name, engine, self.seed)
            while self.g.phase != "over":
                if len(moves) >= self.move_limit:
                    return self.unended()
                if not engine.legal_moves(self.g):
                    return self.failed(f"no legal move in the {self.g.phase} phase, and the "
                                       "game is not over", self.last_action())
                move = step(self.g)
                try:
                    self.g = engine.apply_move(self.g, move)
                except engine.IllegalMove as exc:
                    # an agent chooses on a game dealt from its player's view: a move it
                    # chose that the game does not list says the legal moves show more
                    # than the player sees
                    moves.append(move)
                    return self.failed(
                        f"IllegalMove: {exc}: the {self.agent_name} agent chose "
                        f"{move.to_json()} on a game dealt from what its player sees, and "
                        "the game does not list it: the moves of this action depend on what "
                        "the player does not see", self.action_at(move.kind))
                moves.append(move)
                broken = engine.check_invariants(self.g)
                if broken:
                    index = len(moves) - 1
                    return self.failed(f"an invariant fails after the move: {broken[0]}",
                                       self.culprit(self.replay(index), moves[index]))
                if len(moves) % SAVE_EVERY == 0 or self.g.phase == "over":
                    try:  # a state the engine made is one its own saves load
                        engine.loads(engine.dumps(self.g))
                    except engine.StateError as exc:
                        before, move = self.first_unsaved()
                        return self.failed(f"a save of a state the game reached does not "
                                           f"load: {exc}", self.culprit(before, move))
        except engine.StateError as exc:
            # a state the engine refuses to play (a value none of its kind's) was made by the
            # move before it: at its rule when no step is named
            return self.failed(str(exc), exc.at or (self.setup_at() if not moves else
                                                    self.culprit(self.replay(len(moves) - 1),
                                                                 moves[-1])))
        except Exception as exc:  # the backstop reports anything the engine raises
            # at the step that raised; else the setup's (no game yet) or the last action's
            at = engine._rule_at(exc) or (self.setup_at() if self.g is None
                                          else self.last_action())
            return self.failed(f"{type(exc).__name__}: {exc}", at)
        return None

    def unended(self) -> Diagnostic:
        """The game past its limit of moves: at the act a variant wrote that the last moves
        made most often; else, when a trigger that ends the game fired, at what ends a round
        (marked `UNROUNDED`), and when none fired, at the triggers (marked `UNENDED`; those
        that end the period the game stayed in, `UNPERIODED`, when none of those that end the
        game can fire in it): `Games.finish` puts each where it is written."""
        said = f"the game did not end in {self.move_limit:,} moves"
        at = self.looping()
        ending = [t.id for t in self.g.rs.triggers if t.ends == "game"]
        fired = [t for t in ending if t in self.g.fired]
        if at is not None:
            return self.failed(said, at)
        if fired:  # its end came, and the round it waits for did not end
            return replace(self.failed(
                f"{said}: {', '.join(fired)} fired, and the round the game ends with never "
                "ended (does the turn come back to the start player?)", None),
                subject=(UNROUNDED,))
        period = self.g.period
        if ending and not any(not t.periods or period in t.periods for t in self.g.rs.triggers
                              if t.ends == "game"):  # none of them can fire in this period
            closing = [t.id for t in self.g.rs.triggers
                       if t.ends == "period" and (not t.periods or period in t.periods)]
            why = (f"it stayed in period {period}: no trigger that ends it fired "
                   f"({', '.join(closing)}), and {', '.join(ending)} end the game only in "
                   "a later period" if closing else
                   f"it stayed in period {period}: no trigger ends it, and {', '.join(ending)}"
                   " end the game only in another period")
            return replace(self.failed(f"{said}: {why}", None), subject=(UNPERIODED,))
        why = (f"no trigger that ends the game fired ({', '.join(ending)})" if ending
               else "no trigger ends the game")
        return replace(self.failed(f"{said}: {why}", None), subject=(UNENDED,))

    def replay(self, upto: int) -> Any:
        """The state before move `upto` (0-based), played again from the start."""
        g = self.engine.new_game(self.players, list(self.chosen), self.seed)
        for move in self.moves[:upto]:
            g = self.engine.apply_move(g, move)
        return g

    def first_unsaved(self) -> tuple[Any, Any]:
        """The state and the move that broke a saved-game check: the first move played after
        which the state breaks one (the engine's `_check_shape`: what a load checks of the
        state itself), else the first legal move that breaks the game from the first state
        whose save does not load (a load plays each legal move on a copy), else the last
        move played."""
        engine = self.engine
        g = engine.new_game(self.players, list(self.chosen), self.seed)
        for move in self.moves:
            before, g = g, engine.apply_move(g, move)
            try:
                engine._check_shape(g, g.rs)
            except engine.StateError:
                return before, move
            try:
                engine.loads(engine.dumps(g))
            except engine.StateError:
                for legal in engine.legal_moves(g):
                    try:
                        after = engine.apply_move(g, legal)
                        if engine.check_invariants(after):
                            return g, legal
                        engine._check_shape(after, after.rs)
                    except Exception:  # refused by the checks, or a fault of its own
                        return g, legal
        return self.replay(len(self.moves) - 1), self.moves[-1]

    def culprit(self, before: Any, move: Any) -> str | None:
        """Where the rule is written that most likely broke the state with `move` played on
        `before`: the move's action when a variant wrote it, else the last step of a variant
        the move ran (the engine traced while it plays the move again), else the action."""
        action = self.action_at(move.kind)
        if action is not None and "/variants/" in action:
            return action
        ran = _rules_run(self.engine, before, move)
        house = [at for at in ran if "/variants/" in at]
        return house[-1] if house else action

    def looping(self) -> str | None:
        """Where the game that does not end most likely loops: the action a variant wrote
        that the last moves made most often (the first such among them on a tie), else
        nowhere (the base game's own actions are not blamed)."""
        counts: dict[str, int] = {}
        for move in self.moves[-100:]:
            counts[move.kind] = counts.get(move.kind, 0) + 1
        for kind, _n in sorted(counts.items(), key=lambda kv: -kv[1]):
            at = self.action_at(kind)
            if at is not None and "/variants/" in at:
                return at
        return None

    def last_action(self) -> str | None:
        """Where the action of the last move is written (a failure that no step names)."""
        return self.action_at(self.moves[-1].kind) if self.moves else None

    def action_at(self, kind: str) -> str | None:
        """Where the action of a move of `kind` is written."""
        if self.g is None:
            return None
        md = self.g.rs.moves.get(kind)
        if md is None:
            return None
        line = md.moves.__code__.co_firstlineno - 1  # the comment above its generator
        found = self.engine._AT_RULE.search(linecache.getline(SOURCE, line))  # the runtime's
        return found.group(1) if found is not None else None

    def setup_at(self) -> str | None:
        """Where the setup's steps are written (its procedure's rule comments): the first step
        a variant wrote, the likeliest cause, else the setup's first step."""
        try:  # the rule set of the game (made or not: the setup may be what failed)
            rs = self.engine.RULESETS[self.engine.variants_for(self.players, self.chosen)]
            code = rs.procs[self.engine._SETUP].run.__code__
        except (AttributeError, KeyError, ValueError):
            return None
        found: list[str] = []
        for text in linecache.getlines(SOURCE)[code.co_firstlineno:]:
            if text.startswith(("def ", "class ")):
                break
            got = self.engine._AT_RULE.search(text)
            if got is not None:
                found.append(str(got.group(1)))
        house = [at for at in found if "/variants/" in at or not at.startswith("rules/")]
        return (house or found)[0] if found else None

    def failed(self, message: str, at: str | None) -> Diagnostic:
        what = (f"a {self.agent_name} game of {self.players} players, seed {self.seed}"
                + (f", variants {', '.join(self.chosen)}" if self.chosen else ""))
        shown = ", ".join(str(m.to_json()) for m in self.moves[-3:])
        replay = (f" (reproduce: new_game({self.players}, {list(self.chosen)!r}, "
                  f"seed={self.seed}) and the {self.agent_name} agent of seed {self.seed}; "
                  f"{len(self.moves)} moves played"
                  + (f", the last: {shown}" if self.moves else "") + ")")
        return Diagnostic("engine-failed", f"{what}: {message}{replay}", _span(at))


def _rules_run(engine: Any, g: Any, move: Any) -> list[str]:
    """The rule positions (`rules/FILE:LINE`) of the generated steps `move` runs on `g`, in
    the order they first run: each line of the engine run is read back to the comment above
    its step by the runtime's `_rule_at_line`, as the runtime does for a fault."""
    lines: dict[int, None] = {}

    def trace(frame: Any, event: str, arg: Any) -> Any:
        if frame.f_code.co_filename != SOURCE:
            return None
        if event == "line":
            lines.setdefault(frame.f_lineno, None)
        return trace

    before = sys.gettrace()
    sys.settrace(trace)
    try:
        engine.apply_move(g, move)
    except Exception:  # what it ran is what is wanted
        pass
    finally:
        sys.settrace(before)
    out: dict[str, None] = {}
    for line in lines:
        found = engine._rule_at_line(line)
        if found is not None:
            out.setdefault(str(found), None)
    return list(out)


def _span(at: str | None) -> Span | None:
    """`rules/FILE:LINE` as a span at the line's start (None: no rule named)."""
    if at is None:
        return None
    path, _, line = at.rpartition(":")
    if not path or not line.isdigit():
        return None
    return Span(path, int(line), 1, int(line), 1)
