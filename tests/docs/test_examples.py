"""The docs' examples run: each tutorial and how-to guide is replayed in a fresh copy of the
repository, its marked blocks in the order the page gives them, as a reader would.

A fenced block preceded by `<!-- run -->` runs:

- a block with a title (```yaml title="my-rule.yaml"```) is a file the reader saves: it is
  written at that path, relative to the repository's root;
- a `console` block is commands (`$ COMMAND`, a line ending in `\\` goes on) and what they
  print: each command must exit 0 (`<!-- run: exit=1 -->`: 1), and the lines shown after it must
  be lines of its output, in order (`...` stands for any text; a line of `...` alone for lines
  left out);
- a `python` block runs in one Python process per page (its names stay for the next block),
  with `generated/` on the path (`import lisboa_engine`); a `text` block preceded by
  `<!-- output -->` right after it is what it prints, matched the same way.

`lisboa-rules` is the copy's own command line (`python3 -m lisboa_rules`). A page whose first
line is `<!-- test: slow -->` runs only in the complete suite (`--slow`): it compiles or plays
for minutes.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PAGES = sorted([*DOCS.glob("tutorials/*.md"), *DOCS.glob("how-to/*.md")])
# pages that show no command a test can run here (the test suite cannot run itself)
NOTHING_TO_RUN = {"how-to/run-the-tests.md"}
TIMEOUT = 1800  # seconds of one command: a first mypyc compile on a busy machine takes minutes

FENCE = re.compile(
    r"(?P<marks>(?:^<!-- (?:run|output)(?::[^>]*)? -->\n)*)"
    r"^```(?P<lang>[a-z]*)(?P<info>[^\n]*)\n(?P<body>.*?)^```$",
    re.MULTILINE | re.DOTALL,
)


@dataclass
class Block:
    lang: str
    title: str | None
    body: str
    run: bool
    output: bool
    exit: int
    line: int


def blocks(page: Path) -> list[Block]:
    text = page.read_text(encoding="utf-8")
    found = []
    for m in FENCE.finditer(text):
        marks = m.group("marks")
        title = re.search(r'title="([^"]+)"', m.group("info"))
        code = re.search(r"<!-- run: exit=(\d+) -->", marks)
        found.append(
            Block(
                m.group("lang"),
                title.group(1) if title else None,
                m.group("body"),
                "<!-- run" in marks,
                "<!-- output -->" in marks,
                int(code.group(1)) if code else 0,
                text.count("\n", 0, m.start("lang")) + 1,
            )
        )
    return found


def commands(body: str) -> list[tuple[str, list[str]]]:
    """(command, the lines shown as its output) of a console block."""
    out: list[tuple[str, list[str]]] = []
    lines = body.rstrip("\n").split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.startswith("$ "):
            assert out, f"output before any command: {line!r}"
            out[-1][1].append(line)
            i += 1
            continue
        command = line[2:]
        while command.endswith("\\") and i + 1 < len(lines):
            i += 1
            command = command[:-1] + " " + lines[i].strip()
        out.append((command, []))
        i += 1
    return out


def matches(shown: list[str], actual: str) -> str | None:
    """None when each line shown is a line of `actual`, in order; else what is missing."""
    lines = [x.rstrip() for x in actual.splitlines()]
    at = 0
    for want in shown:
        if want.strip() in ("", "..."):
            continue
        pattern = re.compile(".*".join(re.escape(p) for p in want.rstrip().split("...")))
        while at < len(lines) and not pattern.fullmatch(lines[at]):
            at += 1
        if at == len(lines):
            return f"the line {want!r} is not in the output (in order):\n{actual}"
        at += 1
    return None


RUNNER = r"""
import contextlib, io, json, sys, traceback
ns = {"__name__": "__main__"}
for line in sys.stdin:
    code = json.loads(line)
    buf = io.StringIO()
    error = None
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
        try:
            exec(compile(code, "<docs block>", "exec"), ns)
        except BaseException:
            error = traceback.format_exc()
    sys.__stdout__.write(json.dumps({"out": buf.getvalue(), "error": error}) + "\n")
    sys.__stdout__.flush()
"""


def copy_of_the_repository(dest: Path) -> Path:
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True)
    if files.returncode == 0 and files.stdout:
        for name in files.stdout.decode().split("\0"):
            if name and (ROOT / name).is_file():
                (dest / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(ROOT / name, dest / name)
    else:
        shutil.copytree(
            ROOT,
            dest,
            dirs_exist_ok=True,
            ignore=shutil.ignore_patterns(".git", "__pycache__", ".*_cache", "site", "*.egg-info"),
        )
    return dest


def environment(repo: Path, bin_dir: Path) -> dict[str, str]:
    bin_dir.mkdir()
    shim = bin_dir / "lisboa-rules"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m lisboa_rules "$@"\n')
    shim.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = os.pathsep.join([str(repo / "generated"), str(repo)])
    env["COLUMNS"] = "100"
    return env


def shell(command: str, cwd: Path, env: dict[str, str]) -> tuple[int, str]:
    """Run a command of a page: its exit code and what it printed (stdout, then stderr). It
    runs in a session of its own, so a command that runs too long is ended with every process
    it started (a compiler's children included)."""
    p = subprocess.Popen(
        ["bash", "-c", command],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = p.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        raise AssertionError(f"$ {command}: still running after {TIMEOUT} s") from None
    return p.returncode, out + err


def run_page(page: Path, tmp_path: Path) -> int:
    """Replay the page's marked blocks; the number of blocks run."""
    repo = copy_of_the_repository(tmp_path / "repo")
    env = environment(repo, tmp_path / "bin")
    python: subprocess.Popen[str] | None = None
    done = 0
    where = page.relative_to(DOCS)
    items = blocks(page)
    try:
        for k, block in enumerate(items):
            if not block.run:
                continue
            done += 1
            at = f"{where}:{block.line}"
            if block.title:
                target = repo / block.title
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(block.body, encoding="utf-8")
            elif block.lang == "console":
                for command, shown in commands(block.body):
                    code, out = shell(command, repo, env)
                    assert code == block.exit, f"{at}: $ {command}\n{out}"
                    problem = matches(shown, out)
                    assert problem is None, f"{at}: $ {command}\n{problem}"
            elif block.lang == "python":
                if python is None:
                    python = subprocess.Popen(
                        [sys.executable, "-c", RUNNER],
                        cwd=repo,
                        env=env,
                        stdin=subprocess.PIPE,
                        stdout=subprocess.PIPE,
                        text=True,
                    )
                assert python.stdin is not None and python.stdout is not None
                python.stdin.write(json.dumps(block.body) + "\n")
                python.stdin.flush()
                reply = json.loads(python.stdout.readline())
                assert reply["error"] is None, f"{at}:\n{reply['out']}{reply['error']}"
                after = items[k + 1] if k + 1 < len(items) else None
                if after is not None and after.output:
                    problem = matches(after.body.splitlines(), reply["out"])
                    assert problem is None, f"{at}: {problem}"
            else:
                raise AssertionError(
                    f"{at}: a ```{block.lang} block cannot run: give it a "
                    'title="FILE" to save it, or make it console or python'
                )
    finally:
        if python is not None:
            python.kill()
            python.wait()
    return done


def _param(page: Path) -> object:
    slow = page.read_text(encoding="utf-8").startswith("<!-- test: slow -->")
    return pytest.param(
        page, id=str(page.relative_to(DOCS)), marks=[pytest.mark.slow] if slow else []
    )


@pytest.mark.parametrize("page", [_param(p) for p in PAGES])
def test_the_page_runs(page: Path, tmp_path: Path) -> None:
    ran = run_page(page, tmp_path)
    if str(page.relative_to(DOCS)) not in NOTHING_TO_RUN:
        assert ran > 0, f"{page}: no block is marked <!-- run -->"


def test_every_tutorial_and_how_to_is_replayed() -> None:
    names = {str(p.relative_to(DOCS)) for p in PAGES}
    assert {"tutorials/first-house-rule.md", "tutorials/first-game.md"} <= names
    assert len(names) >= 6


def test_the_matcher_can_fail() -> None:
    assert matches(["a", "...", "c ... e"], "a\nb\nc d e\n") is None
    assert matches(["c", "a"], "a\nb\nc\n") is not None  # out of order
    assert matches(["x"], "a\n") is not None
    assert commands("$ a \\\n  b\nout\n$ c\n") == [("a  b", ["out"]), ("c", [])]
