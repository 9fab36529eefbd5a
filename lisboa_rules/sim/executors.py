"""Where the games are played: in this process, in worker processes, or on a Dask cluster.

Every executor plays the same `Job`s and returns their records in the jobs' order, so the
results are the same whatever the executor and the number of workers (each game depends only
on its seed: runner.py). A worker loads the engine from the job's path once per process (a
forked worker inherits the parent's copy); Dask workers must see that path (a shared file
system, or the same machine).
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from types import FrameType, ModuleType
from typing import Any

from lisboa_rules.sim.engine import load_engine
from lisboa_rules.sim.runner import GameRecord, Job, run_job

Progress = Callable[[int], None]  # told how many games each finished chunk played
Sink = Callable[[list[GameRecord]], None]  # given each chunk's records, in the jobs' order

_ENGINES: dict[str, Any] = {}


def _engine(path: str) -> Any:
    engine = _ENGINES.get(path)
    if engine is None:
        engine = _ENGINES[path] = load_engine(Path(path))
    return engine


def _init_process(paths: Sequence[str]) -> None:
    # A forked worker inherits the parent's SIGTERM handler: it must simply end.
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    for path in paths:
        _engine(path)


Engines = ModuleType | Any | Mapping[str, Any]
"""The engine every job plays (a module), or each job's engine by its path (`Job.engine`)."""


def _register(engine: Engines, jobs: Sequence[Job]) -> None:
    """Make `engine` the module of the jobs' engine paths (given modules win over any loaded
    before under the same path: a temporary engine's path may be reused)."""
    if isinstance(engine, Mapping):
        _ENGINES.update(engine)
        return
    for path in {job.engine for job in jobs}:
        _ENGINES[path] = engine


def _run(job: Job) -> list[GameRecord]:
    return run_job(_engine(job.engine), job)


def _collector(out: list[GameRecord], progress: Progress | None) -> Sink:
    """A sink that keeps every record in `out` and tells `progress` of each chunk."""

    def take(records: list[GameRecord]) -> None:
        out.extend(records)
        if progress is not None:
            progress(len(records))

    return take


def play_serial(engine: Engines, jobs: Sequence[Job], sink: Sink) -> None:
    """Play every job here, in order, handing each job's records to `sink` as it ends (a run
    that only sums its games up keeps none of them)."""
    _register(engine, jobs)
    for job in jobs:
        sink(_run(job))


def play_processes(engine: Engines, jobs: Sequence[Job], workers: int, sink: Sink) -> None:
    """Play the jobs in `workers` processes, handing each job's records to `sink` in the jobs'
    order. A forked worker inherits the engines; a spawned one loads each from its path. On
    SIGTERM (or any exception, in `sink` too) the workers are ended before this returns
    (`ending_workers_on_sigterm`)."""
    if workers <= 1 or len(jobs) <= 1:
        play_serial(engine, jobs, sink)
        return
    from concurrent.futures import ProcessPoolExecutor

    _register(engine, jobs)  # forked workers inherit them: no second import
    paths = sorted({job.engine for job in jobs})
    pool = ProcessPoolExecutor(workers, initializer=_init_process, initargs=(paths,))
    with ending_workers_on_sigterm(pool):
        for records in pool.map(_run, jobs):  # in order: the same results as one process
            sink(records)


def run_serial(
    engine: Engines, jobs: Sequence[Job], progress: Progress | None = None
) -> list[GameRecord]:
    """Play every job here, in order."""
    out: list[GameRecord] = []
    play_serial(engine, jobs, _collector(out, progress))
    return out


def run_processes(
    engine: Engines, jobs: Sequence[Job], workers: int, progress: Progress | None = None
) -> list[GameRecord]:
    """Play the jobs in `workers` processes; the records come back in the jobs' order. A
    forked worker inherits the engines; a spawned one loads each from its path."""
    out: list[GameRecord] = []
    play_processes(engine, jobs, workers, _collector(out, progress))
    return out


class _Terminated(BaseException):
    """SIGTERM arrived while workers were running."""


def _raise_terminated(signum: int, frame: FrameType | None) -> None:
    raise _Terminated


@contextlib.contextmanager
def ending_workers_on_sigterm(pool: Any) -> Iterator[None]:
    """Run a ProcessPoolExecutor's work inside; on SIGTERM (or any exception) end its
    workers before leaving, then die of the signal as the command would have without
    workers; shut the pool down (waiting for it) when the work ends."""
    main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _raise_terminated) if main else None
    try:
        yield
    except _Terminated:
        end_workers(pool)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)
        raise  # pragma: no cover - the signal ends the process
    except BaseException:
        end_workers(pool)
        raise
    else:
        pool.shutdown(wait=True)
    finally:
        if main and previous is not None:
            signal.signal(signal.SIGTERM, previous)


def end_workers(pool: Any) -> None:
    """Stop a ProcessPoolExecutor's workers now: cancel what is queued, terminate, reap."""
    procs = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in procs:
        proc.terminate()
    for proc in procs:
        proc.join(5)
        if proc.is_alive():
            proc.kill()
            proc.join(5)


class DaskUnavailable(RuntimeError):
    """The Dask scheduler given cannot be reached (or its address is none)."""


LOOPBACK = "127.0.0.1"
HTTP_ROUTES = "distributed.{}.http.routes"
TLS_HINT = (
    "a tls:// scheduler needs this client's credentials in Dask's configuration "
    "(distributed.comm.tls.ca-file, .client.cert and .client.key, e.g. the variables "
    "DASK_DISTRIBUTED__COMM__TLS__CA_FILE, DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT and "
    "DASK_DISTRIBUTED__COMM__TLS__CLIENT__KEY)"
)


@contextlib.contextmanager
def local_cluster(workers: int) -> Iterator[tuple[Any, Any]]:
    """A local Dask cluster of `workers` worker processes and a client of it, closed at the
    end. Everything in it (scheduler, nannies, workers) listens on the loopback address only
    and speaks TLS with credentials made for this run in memory (Security.temporary(): a
    self-signed key and certificate that are the cluster's only certificate authority), both
    ways: a process of another account that finds a port cannot connect, let alone send a
    task, without them. Raises DaskUnavailable when the credentials cannot be made (the
    `cryptography` package is missing)."""
    import dask
    import distributed

    dist: Any = distributed  # untyped
    try:
        security = dist.Security.temporary()
    except ImportError:
        from lisboa_rules.core.diagnostics import PROG

        raise DaskUnavailable(
            "a local Dask cluster is secured with TLS credentials made for the run, which "
            f"needs the cryptography package: pip install '{PROG}[dask]'"
        ) from None
    # The HTTP servers every scheduler and worker runs (beside its TLS port: status pages,
    # call stacks, logs, metrics) serve nothing; the nannies hand this setting to the workers.
    with dask.config.set({HTTP_ROUTES.format("scheduler"): [],
                          HTTP_ROUTES.format("worker"): []}):
        cluster = dist.LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            host=LOOPBACK,
            protocol="tls://",
            security=security,
            dashboard_address=None,
        )
    try:
        client = dist.Client(cluster, security=security)
        try:
            yield cluster, client
        finally:
            client.close()
    finally:
        cluster.close()


def run_dask(
    jobs: Sequence[Job],
    address: str | None = None,
    workers: int = 2,
    progress: Progress | None = None,
    client: Any = None,
) -> list[GameRecord]:
    """Play the jobs on a Dask cluster: `client` if given, else the scheduler at `address`
    (with the credentials of Dask's configuration, for a tls:// one), else a local cluster of
    `workers` worker processes secured for this run (`local_cluster`, closed at the end).
    Needs the `dask` extra of this package."""
    try:
        import distributed
    except ImportError as exc:  # pragma: no cover - depends on the installation
        from lisboa_rules.core.diagnostics import PROG

        raise RuntimeError(
            f"the Dask executor needs dask[distributed]: pip install '{PROG}[dask]'"
        ) from exc
    dist: Any = distributed  # untyped
    with contextlib.ExitStack() as stack:
        if client is None and address is None:
            _, client = stack.enter_context(local_cluster(workers))
        elif client is None:
            try:
                client = dist.Client(address)
            except (OSError, ValueError, TypeError) as exc:  # no address, or none answering
                detail = " ".join(str(exc).split())
                hint = f"; {TLS_HINT}" if str(address).startswith("tls://") else ""
                raise DaskUnavailable(
                    f"cannot use the Dask scheduler at {address!r}: {detail}{hint}"
                ) from None
            stack.callback(client.close)
        futures = client.map(_run, list(jobs), pure=False)
        out: list[GameRecord] = []
        take = _collector(out, progress)
        for future in futures:
            take(future.result())
        return out
    raise AssertionError("unreachable")  # pragma: no cover - mypy: ExitStack may swallow
