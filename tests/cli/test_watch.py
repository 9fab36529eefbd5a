"""`lisboa-rules build --watch` (issue 36): a warm process that builds again on every save,
prints the located diagnostics of a broken save, keeps running, and stops cleanly.

The waits are bounded (a failing test ends), and nothing is timed."""

from __future__ import annotations

import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from lisboa_rules.cli.main import main
from lisboa_rules.cli.watch import snapshot
from lisboa_rules.outputs import cache

ROOT = Path(__file__).resolve().parents[2]
WAIT = 180.0  # seconds: the longest any step may take before the test fails


class Watch:
    """A `build --watch` process on a copy of rules/, its stderr read line by line."""

    def __init__(self, project: Path, *args: str) -> None:
        env = {
            **os.environ,
            "PYTHONPATH": str(ROOT),
            cache.ENV: str(project / "cache"),
            "LISBOA_PLAY": "0",
        }
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "lisboa_rules", "build", "--watch", "--out", "out", *args],
            cwd=project,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.put(line)

    def wait_line(self, pattern: str) -> str:
        """The next stderr line matching `pattern` (earlier lines are kept in `seen`)."""
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=1)
            except queue.Empty:
                assert self.proc.poll() is None, f"watch ended: {''.join(self.seen)}"
                continue
            self.seen.append(line)
            if re.search(pattern, line):
                return line
        raise AssertionError(f"no line like {pattern!r} in: {''.join(self.seen)}")

    def stop(self, sig: int = signal.SIGINT) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout=WAIT)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()


def wait_for(check: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "rules", tmp_path / "rules")
    return tmp_path


def set_reis(game: Path, value: str) -> None:
    text = game.read_text(encoding="utf-8")
    new = re.sub(r"\n  reis: -?\d+\n", f"\n  reis: {value}\n", text, count=1)
    assert new != text
    game.write_text(new, encoding="utf-8")


def test_watch_rebuilds_on_save_reports_errors_and_stops(project: Path) -> None:
    watch = Watch(project)
    try:
        engine = project / "out" / "lisboa_engine.py"
        watch.wait_line(r"watching rules/")
        first = engine.read_bytes()
        assert first == (ROOT / "generated" / "lisboa_engine.py").read_bytes()
        game = project / "rules" / "game.yaml"

        set_reis(game, "12")  # a number: the engine is written again
        wait_for(lambda: engine.read_bytes() != first, "the engine to be rebuilt")
        second = engine.read_bytes()
        watch.wait_line(r"watching rules/")

        set_reis(game, "-3")  # a broken save: its located diagnostic, the folder left alone
        line = watch.wait_line(r"error\[")
        assert re.match(r"rules/game\.yaml:\d+:\d+: error\[schema-range\]: ", line), line
        watch.wait_line(r"built in .* \(exit 1\); watching")
        assert engine.read_bytes() == second
        assert watch.proc.poll() is None, "an error does not stop the watch"

        set_reis(game, "10")  # fixed: the outputs are back to the golden ones
        wait_for(lambda: engine.read_bytes() == first, "the engine to be rebuilt again")
        watch.wait_line(r"built in .* \(exit 0\); watching")
    finally:
        code = watch.stop()
    assert code == 0
    assert watch.wait_line(r"stopped watching after 4 builds")
    out = project / "out"
    golden = ROOT / "generated"
    assert {
        p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*") if p.is_file()
    } == {
        p.relative_to(golden).as_posix(): p.read_bytes() for p in golden.rglob("*") if p.is_file()
    }


def test_sigterm_stops_the_watch_too(project: Path) -> None:
    watch = Watch(project, "--no-cache")
    try:
        watch.wait_line(r"watching rules/")
    finally:
        code = watch.stop(signal.SIGTERM)
    assert code == 0
    watch.wait_line(r"stopped watching after 1 build\b")


def test_max_builds_ends_the_watch(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(project)
    assert main(["build", "--watch", "--max-builds", "1", "--out", "out"]) == 0
    assert "watching rules/" in capsys.readouterr().err
    assert (project / "out" / "lisboa_engine.py").exists()


@pytest.mark.parametrize(
    "argv", [["--check"], ["--diff"], ["--max-builds", "2"], ["--watch", "--max-builds", "0"]]
)
def test_watch_refuses_what_it_cannot_do(
    argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    extra = [] if "--watch" in argv or "--max-builds" in argv else ["--watch"]
    assert main(["build", *extra, *argv]) == 2


def test_a_save_changes_the_snapshot(project: Path) -> None:
    rules = project / "rules"
    before = snapshot(rules, [])
    assert before == snapshot(rules, [])
    game = rules / "game.yaml"
    text = game.read_text(encoding="utf-8")
    game.write_text(text.replace("reis: 10", "reis: 11", 1), encoding="utf-8")
    st = game.stat()
    os.utime(game, ns=(st.st_atime_ns, st.st_mtime_ns))  # the same size; another ctime
    assert snapshot(rules, []) != before
    (rules / "variants" / "new.yaml").write_text("kind: variant\n", encoding="utf-8")
    after_add = snapshot(rules, [])
    assert len(after_add) == len(before) + 1
    (rules / "variants" / "new.yaml").unlink()
    house = project / "house.yaml"
    house.write_text("x\n", encoding="utf-8")
    assert snapshot(rules, [house])[-1][0] == str(house)
