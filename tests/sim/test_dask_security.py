"""`balance --dask local` (issue 30): the local cluster listens on the loopback address only and
speaks TLS with credentials made for the run, both ways; a process without them (another
account that found the port) is refused at every port of the cluster, and the HTTP servers
beside them serve nothing. `--dask ADDRESS` must be a tls:// address unless --dask-insecure.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import ssl
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import optional
import pytest
from conftest import ENGINE_PATH, ROOT

from lisboa_rules.cli import main as cli
from lisboa_rules.sim import executors, runner

distributed = optional.module("distributed", "dask")
optional.module("cryptography", "dask")
psutil = optional.module("psutil", "dask")  # a dependency of distributed

from distributed.comm import connect  # noqa: E402
from distributed.comm.core import CommClosedError  # noqa: E402


def _identity(address: str, **connection_args: Any) -> dict[str, Any]:
    """Ask a Dask server who it is (the first message any client sends)."""

    async def ask() -> dict[str, Any]:
        comm = await connect(address, timeout=10, **connection_args)
        try:
            await comm.write({"op": "identity", "reply": True})
            answer: dict[str, Any] = await comm.read()
            return answer
        finally:
            await comm.close()

    return asyncio.run(ask())


REFUSED = (OSError, CommClosedError, TypeError, ssl.SSLError, asyncio.TimeoutError)


def _refused_without_credentials(address: str) -> None:
    """No one without the run's credentials gets an answer: not over plain TCP, not over TLS
    without a client certificate, not with credentials of their own."""
    assert address.startswith("tls://127.0.0.1:"), address
    port = int(address.rsplit(":", 1)[1])
    with pytest.raises(REFUSED):
        _identity(f"tcp://127.0.0.1:{port}")
    with pytest.raises(REFUSED):  # TLS, not checking the server, no certificate of one's own
        anyone = ssl.create_default_context()
        anyone.check_hostname = False
        anyone.verify_mode = ssl.CERT_NONE
        _identity(address, ssl_context=anyone)
    with pytest.raises(REFUSED):  # a certificate of one's own
        theirs = distributed.Security.temporary()
        _identity(address, **theirs.get_connection_args("client"))


def _listening_ports() -> set[int]:
    me = psutil.Process()
    found = set()
    for proc in [me, *me.children(recursive=True)]:
        with contextlib.suppress(psutil.Error):
            for c in proc.net_connections(kind="inet"):
                if c.status == psutil.CONN_LISTEN:
                    assert c.laddr.ip == "127.0.0.1", f"listening on {c.laddr}"
                    found.add(c.laddr.port)
    return found


def test_the_local_cluster_refuses_whoever_lacks_the_runs_credentials() -> None:
    before = _listening_ports()
    with executors.local_cluster(2) as (cluster, client):
        security = cluster.security
        ours = security.get_connection_args("client")
        assert _identity(cluster.scheduler_address, **ours)["type"] == "Scheduler"
        workers = list(client.scheduler_info()["workers"])
        nannies = [n.address for n in cluster.workers.values()]
        assert len(workers) == len(nannies) == 2
        dask_ports = set()
        for address in [cluster.scheduler_address, *workers, *nannies]:
            _refused_without_credentials(address)
            dask_ports.add(int(address.rsplit(":", 1)[1]))
        # the HTTP servers beside them (status pages, call stacks, logs, metrics): nothing
        http = _listening_ports() - before - dask_ports
        assert http, "no HTTP server found: the test would prove nothing"
        for port in http:
            for path in ("/health", "/info/main/workers.html", "/json/identity.json",
                         "/metrics", "/statics/"):
                with pytest.raises(urllib.error.HTTPError) as got:
                    urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10)
                assert got.value.code == 404, (port, path)
        # and the cluster does play, for whoever holds the credentials
        jobs = runner.chunks(str(ENGINE_PATH), 2, (), 3, 2, ("random",), runner.Options(), 2)
        assert [r.index for r in executors.run_dask(jobs, client=client)] == [0, 1]


def test_balance_dask_local_plays_on_a_cluster_closed_to_others(
    capsys: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The CLI's own run: while its cluster is up, a connection without the credentials is
    refused."""
    real = executors.local_cluster
    seen: list[str] = []

    @contextlib.contextmanager
    def probed(workers: int) -> Iterator[tuple[Any, Any]]:
        with real(workers) as (cluster, client):
            _refused_without_credentials(cluster.scheduler_address)
            seen.append(cluster.scheduler_address)
            yield cluster, client

    monkeypatch.setattr(executors, "local_cluster", probed)
    monkeypatch.chdir(ROOT)
    capsys.readouterr()
    code = cli.main(["balance", "--games", "2", "--seed", "5", "--players", "2", "--agents",
                     "random", "--format", "json", "--dask", "local", "--jobs", "2"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert len(seen) == 1 and json.loads(out)["run"]["games"] == 2


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.mark.parametrize("address", ["tcp://127.0.0.1:{port}", "127.0.0.1:{port}",
                                     "ws://127.0.0.1:{port}", "inproc://x"])
def test_a_dask_address_without_tls_is_refused(
    address: str, capsys: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Refused before anything is played or any connection made (the port is free: had it
    connected, the error would be another)."""
    address = address.format(port=_free_port())
    monkeypatch.setattr(distributed, "Client", None)  # any attempt to connect fails loudly
    monkeypatch.chdir(ROOT)
    capsys.readouterr()
    code = cli.main(["balance", "--games", "1", "--seed", "1", "--players", "2", "--agents",
                     "random", "--dask", address])
    out, err = capsys.readouterr()
    assert code == 2 and out == "", err
    assert err.startswith(f"lisboa-rules: error: --dask {address!r}"), err
    assert "tls://" in err and "internal error" not in err, err


def test_dask_insecure_lets_a_tcp_address_through(
    capsys: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With --dask-insecure a tcp:// address is tried (nobody answers on a free port: the
    error is then the scheduler's, not the refusal of the address)."""
    address = f"tcp://127.0.0.1:{_free_port()}"
    monkeypatch.setattr(distributed.Client, "__init__", _no_scheduler)
    monkeypatch.chdir(ROOT)
    capsys.readouterr()
    code = cli.main(["balance", "--games", "1", "--seed", "1", "--players", "2", "--agents",
                     "random", "--dask", address, "--dask-insecure"])
    _, err = capsys.readouterr()
    assert code == 2 and f"cannot use the Dask scheduler at {address!r}" in err, err


def test_a_tls_address_without_credentials_says_how_to_give_them(
    capsys: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    address = f"tls://127.0.0.1:{_free_port()}"
    monkeypatch.chdir(ROOT)
    capsys.readouterr()
    code = cli.main(["balance", "--games", "1", "--seed", "1", "--players", "2", "--agents",
                     "random", "--dask", address])
    _, err = capsys.readouterr()
    assert code == 2 and f"cannot use the Dask scheduler at {address!r}" in err, err
    assert "DASK_DISTRIBUTED__COMM__TLS__CA_FILE" in err, err


def _no_scheduler(self: Any, address: str, *args: Any, **kwargs: Any) -> None:
    raise OSError(f"nobody answers at {address}")
