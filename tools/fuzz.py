"""Seeded mutation fuzzing of the whole build: hostile `rules/` in, a clean verdict out.

Every case copies the real rules files, applies one to three mutations (chosen from the seed,
so a case is fully reproducible from `(seed, index)`), and runs the complete command line
in-process (`cli.main(["build", "--rules", ..., "--out", ...])`) against an output folder that
already holds a build. The verdict of a case is a list of problems; an empty list means the
build behaved:

- exit 0 (the mutation was harmless), or exit 1 with at least one error;
- stderr holds only diagnostics in the documented format, `PATH:LINE:COL: error[CODE]: message`
  (or `lisboa-rules: error[CODE]: message` for the few problems that have no file), notes and
  the count line; every CODE is registered in `lisboa_rules.core.codes`; every PATH names an input
  file and LINE:COL lies inside it; no traceback, no "internal error";
- on exit 1 the output folder is byte-identical to what it was, with no temp folders left;
- the case finishes within the time limit (a hang is a problem too).

Exit 2 is always a bug. The runner then re-runs the case with `LISBOA_RULES_DEBUG=1` to capture
the traceback, and groups problems by a signature (exception type and innermost
`lisboa_rules` frame) so that one bug hit a hundred times is reported once.

Usage (a long run; `--help` for all options):

    python3 -m tools.fuzz --cases 20000 --seed 7
    python3 -m tools.fuzz --seed 7 --case 123 --save /tmp/case123   # replay one case
    python3 -m tools.fuzz --effects 300 --seed 1    # house rules in the effect language, played
    python3 -m tools.fuzz --effects-known           # the cases issue 33 measured
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import io
import json
import os
import random
import re
import shutil
import signal
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

import yaml

from lisboa_rules.cli import main as cli
from lisboa_rules.cli.common import DEBUG_ENV
from lisboa_rules.core import codes
from lisboa_rules.core.diagnostics import one_line
from lisboa_rules.front.loader import LoadedDoc, StrictLoader
from lisboa_rules.front.validate import validate
from lisboa_rules.lang import steps as steps_lang

Files = dict[str, bytes]  # relative POSIX path under the rules folder -> content
Mutator = Callable[[random.Random, Files], str]  # mutates in place, returns a description

DEFAULT_TIMEOUT = 30.0  # seconds per case before it counts as a hang
_Dumper: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

# Codes that may be reported without a file position (`lisboa-rules: error[CODE]: ...`):
# problems of the folder or the command line, not of a place in a file. (A template-error is
# not one of them: bad data must be caught, with its position, before the back ends run.)
FILELESS_CODES = frozenset(
    {"missing-kind", "no-rules-files", "unreadable-file", "unknown-variant", "write-failed"}
)

_LOCATED = re.compile(
    r"(?P<path>.+?):(?P<line>\d+):(?P<col>\d+): (?P<sev>error|warning)\[(?P<code>[^\]]*)\]: \S"
)
_LOCATED_NOTE = re.compile(r"(?P<path>.+?):(?P<line>\d+):(?P<col>\d+): note: \S")
_FILELESS = re.compile(r"lisboa-rules: (?P<sev>error|warning)\[(?P<code>[^\]]*)\]: \S")
_PLAIN = re.compile(
    r"lisboa-rules: (note: \S.*"
    r"|found \d+ errors?( and \d+ warnings?)?"
    r"|found \d+ warnings?"
    r"|no problems found"
    r"|wrote \d+, removed \d+, kept \d+ unchanged in .+/"
    r"|.+/ is up to date)"
)

# --- mutation helpers ------------------------------------------------------------------------

HUGE_NUMBERS = (
    "1000000000000000000000000000000",  # 10**30
    "-1000000000000000000000000000000",
    "1e308",
    "-1e308",
    "1.0e+309",  # overflows to inf
    ".inf",
    "-.inf",
    ".nan",
    "9223372036854775808",  # 2**63
    "-9223372036854775809",
    "0x7fffffffffffffffffffffff",
    "0o777777777777777777777",
    "1" * 5000,  # longer than Python's int-to-str digit limit
    "1e-400",
    "-0",
    "007",
)
FORMULA_GARBAGE = (
    "__import__('os')",
    "__import__('os').system('touch /tmp/pwned')",
    "1/0",
    "1 // 0",
    "a.b.c",
    "lambda: 0",
    "lambda x: x",
    "(lambda: 1)()",
    "[x for x in ()]",
    "open('/etc/passwd').read()",
    "eval('1')",
    "exec('x=1')",
    "().__class__.__bases__[0].__subclasses__()",
    "reis.__class__",
    "reis if reis else 0",
    "reis ** 999999",
    "-" * 500 + "1",
    "(" * 300 + "1" + ")" * 300,
    "not " * 200 + "true",
    "1 +",
    "",
    " ",
    "'text'",
    "1.5",
    "1e308",
    "10 ** 30",
    "1" * 5000,
    "max(1)",
    "max()",
    "max(reis, key=1)",
    "min(reis, 1, *x)",
    "reis < 1 < influence",
    "reis == True",
    "stores.nowhere",
    "stores",
    "x := 1",
    "reis; import os",
    "reis\nimport os",
    "{reis}",
    "{{ 7*7 }}",
    '"""',
    "\\",
    "\x00",
    "reis @ reis",
    "~reis",
    "+reis",
    "reis & 1",
    "reis is 1",
    "reis in (1, 2)",
    "f'{reis}'",
    "b'x'",
    "...",
    "None",
    "True + 1",
)
PLACEHOLDER_GARBAGE = (
    "{",
    "}",
    "{}",
    "{|}",
    "{.}",
    "{..}",
    "{a.b.c}",
    "{game}",
    "{game.title|bogus}",
    "{game.players|ordinal}",
    "{game.players.min|count}",
    "{game.businesses|chain}",
    "{game.businesses.0.name}",
    "{game.businesses.99.name}",
    "{game.years|ordinal}",
    "{{x}}",
    "{{ 7*7 }}",
    "{% raw %}",
    "{#",
    "[[nowhere]]",
    "[[]]",
    "TODO",
    "???",
    "{params}",
    "{params.nothing}",
    "{effects|count}",
    "{__class__}",
    "{__import__('os')}",
    "{game.__class__.__mro__}",
    "{0}",
    "{-1}",
    "{game.start.hand|ordinal|count}",
    "\\{game.title\\}",
)
STRING_GARBAGE = (
    "",
    " ",
    "x" * 5000,
    "\"'\\\n\t",
    '"""',
    "'''",
    "</script><script>alert(1)</script>",
    "{{ 7*7 }}",
    "a | b | c",
    "__import__('os').system('touch /tmp/pwned')",
    "\u202e\u2028\u2029\ufeff",
    "\x00",
    "\x1b[31m",
    "é" * 300,
    "🎲" * 10,
)
TEXT_KEYS = ("text", "intro", "short", "title", "name")
FORMULA_KEYS = ("formula", "land_price", "condition", "measure", "eligible", "per_color",
                "require", "if", "repeat", "value")


def _lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")


def _pick_file(rng: random.Random, files: Files, yaml_only: bool = True) -> str:
    names = sorted(n for n in files if not yaml_only or n.endswith((".yaml", ".yml")))
    return rng.choice(names or sorted(files))


def _content_lines(lines: list[bytes]) -> list[int]:
    """Indexes of lines that hold data (not blank, not a comment)."""
    return [i for i, ln in enumerate(lines) if ln.strip() and not ln.lstrip().startswith(b"#")]


# --- text mutators (bytes level) ---------------------------------------------------------------


def m_delete_lines(rng: random.Random, files: Files) -> str:
    name = _pick_file(rng, files)
    lines = _lines(files[name])
    idx = _content_lines(lines)
    if not idx:
        return "delete-lines: nothing to delete"
    start = rng.choice(idx)
    count = rng.choice((1, 1, 1, 2, 3, 8))
    del lines[start : start + count]
    files[name] = b"\n".join(lines)
    return f"delete-lines {name}:{start + 1} x{count}"


def m_duplicate_lines(rng: random.Random, files: Files) -> str:
    name = _pick_file(rng, files)
    lines = _lines(files[name])
    idx = _content_lines(lines)
    if not idx:
        return "duplicate-lines: nothing to duplicate"
    start = rng.choice(idx)
    count = rng.choice((1, 1, 1, 2, 4))
    lines[start:start] = lines[start : start + count]
    files[name] = b"\n".join(lines)
    return f"duplicate-lines {name}:{start + 1} x{count}"


def m_swap_lines(rng: random.Random, files: Files) -> str:
    name = _pick_file(rng, files)
    lines = _lines(files[name])
    idx = _content_lines(lines)
    if len(idx) < 2:
        return "swap-lines: too short"
    a, b = sorted(rng.sample(idx, 2)) if rng.random() < 0.5 else (idx[0], idx[0])
    if a == b:
        a = rng.choice(idx[:-1])
        b = a + 1
    lines[a], lines[b] = lines[b], lines[a]
    files[name] = b"\n".join(lines)
    return f"swap-lines {name}:{a + 1}<->{b + 1}"


def m_indent(rng: random.Random, files: Files) -> str:
    name = _pick_file(rng, files)
    lines = _lines(files[name])
    idx = _content_lines(lines)
    if not idx:
        return "indent: nothing"
    i = rng.choice(idx)
    shift = rng.choice((-4, -2, -1, 1, 2, 3, 4))
    ln = lines[i]
    lines[i] = b" " * shift + ln if shift > 0 else ln[min(-shift, len(ln) - len(ln.lstrip())) :]
    files[name] = b"\n".join(lines)
    return f"indent {name}:{i + 1} {shift:+d}"


def m_tabs(rng: random.Random, files: Files) -> str:
    name = _pick_file(rng, files)
    lines = _lines(files[name])
    idx = [i for i in _content_lines(lines) if lines[i].startswith(b" ")] or _content_lines(lines)
    if not idx:
        return "tabs: nothing"
    i = rng.choice(idx)
    ln = lines[i]
    body = ln.lstrip(b" ")
    how = rng.choice(("indent", "after-colon", "trailing"))
    if how == "indent":
        lines[i] = b"\t" * max(1, (len(ln) - len(body)) // 2) + body
    elif how == "after-colon" and b": " in ln:
        lines[i] = ln.replace(b": ", b":\t", 1)
    else:
        lines[i] = ln + b"\t"
    files[name] = b"\n".join(lines)
    return f"tabs {name}:{i + 1} ({how})"


def m_truncate(rng: random.Random, files: Files) -> str:
    name = _pick_file(rng, files)
    data = files[name]
    cut = rng.randrange(0, max(1, len(data)))
    files[name] = data[:cut]
    return f"truncate {name} at byte {cut}"


def m_random_bytes(rng: random.Random, files: Files) -> str:
    name = _pick_file(rng, files)
    data = bytearray(files[name])
    pos = rng.randrange(0, len(data) + 1)
    junk = bytes(rng.randrange(256) for _ in range(rng.choice((1, 2, 4, 16))))
    if rng.random() < 0.5 and pos < len(data):
        data[pos : pos + len(junk)] = junk
        how = "overwrite"
    else:
        data[pos:pos] = junk
        how = "insert"
    files[name] = bytes(data)
    return f"random-bytes {name} {how} {junk.hex()} at {pos}"


def m_encoding(rng: random.Random, files: Files) -> str:
    name = _pick_file(rng, files)
    text = files[name].decode("utf-8", "replace")
    how = rng.choice(
        ("latin-1", "cp1252", "utf-16", "utf-16-le", "bom", "bom-middle", "lone-byte",
         "surrogate", "overlong", "nul", "control", "line-separator")
    )
    lines = text.split("\n")
    i = rng.randrange(len(lines))
    if how in ("latin-1", "cp1252"):
        data = text.replace("🎲", "?").encode(how, "replace")
    elif how in ("utf-16", "utf-16-le"):
        data = text.encode(how)
    elif how == "bom":
        data = b"\xef\xbb\xbf" + files[name]
    elif how == "bom-middle":
        lines[i] = "\ufeff" + lines[i]
        data = "\n".join(lines).encode()
    elif how == "lone-byte":
        data = files[name].replace(b"\n", b"\n\xc3", 1) if b"\n" in files[name] else b"\xff"
    elif how == "surrogate":
        lines[i] += "\ud800"
        data = "\n".join(lines).encode("utf-8", "surrogatepass")
    elif how == "overlong":
        data = b"\n".join([*(ln.encode() for ln in lines[:i]), b"a: \xc0\xaf", *(
            ln.encode() for ln in lines[i:])])
    elif how == "nul":
        lines[i] += "\x00"
        data = "\n".join(lines).encode()
    elif how == "control":
        lines[i] += rng.choice(("\x1b[2J", "\x7f", "\x08", "\x0c", "\x85", "\x0b"))
        data = "\n".join(lines).encode()
    else:
        lines[i] += "\u2028x\u2029"
        data = "\n".join(lines).encode()
    files[name] = data
    return f"encoding {name} {how} (line {i + 1})"


def m_empty(rng: random.Random, files: Files) -> str:
    name = _pick_file(rng, files)
    files[name] = rng.choice(
        (b"", b"\n", b"   \n\n", b"# only a comment\n", b"---\n", b"...\n", b"null\n", b"~\n",
         b"[]\n", b"{}\n", b"42\n", b"kind\n", b"- kind: game\n", b"\"kind: game\"\n",
         b"kind: game\n", b"kind:\n", b"kind: [game]\n", b"--- |\n  text\n")
    )
    return f"empty {name}"


def m_huge_number_text(rng: random.Random, files: Files) -> str:
    name = _pick_file(rng, files)
    text = files[name].decode("utf-8", "replace")
    spots = list(re.finditer(r"(?<=[:\[,] )-?\d+\b", text))
    value = rng.choice(HUGE_NUMBERS)
    if not spots:
        return "huge-number: no number"
    spot = rng.choice(spots)
    files[name] = (text[: spot.start()] + value + text[spot.end() :]).encode()
    line = text.count("\n", 0, spot.start()) + 1
    return f"huge-number {name}:{line} {spot.group()} -> {value[:40]}"


def m_deep_nesting(rng: random.Random, files: Files) -> str:
    name = _pick_file(rng, files)
    depth = rng.choice((20, 63, 64, 65, 100, 1000, 5000, 50000))
    style = rng.choice(("flow-list", "flow-map", "block-list", "block-map", "unclosed"))
    if style == "flow-list":
        value = "[" * depth + "1" + "]" * depth
    elif style == "flow-map":
        value = "{a: " * depth + "1" + "}" * depth
    elif style == "unclosed":
        value = "[" * depth
    elif style == "block-list":
        depth = min(depth, 300)
        value = "\n" + "".join("  " * (k + 1) + "-\n" for k in range(depth)) + "  " * depth + "  1"
    else:
        depth = min(depth, 300)
        value = "\n" + "".join("  " * (k + 1) + "a:\n" for k in range(depth)) + \
            "  " * (depth + 1) + "b: 1"
    text = files[name].decode("utf-8", "replace")
    files[name] = (text.rstrip("\n") + f"\ndeep: {value}\n").encode()
    return f"deep-nesting {name} {style} depth {depth}"


def m_alias_bomb(rng: random.Random, files: Files) -> str:
    name = _pick_file(rng, files)
    style = rng.choice(("laughs", "self", "anchor-only", "alias-only", "merge"))
    if style == "laughs":
        rows = ["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
        for k in range(1, 10):
            refs = ", ".join([f"*a{k - 1}"] * 9)
            rows.append(f"a{k}: &a{k} [{refs}]")
        bomb = "\n".join(rows) + "\n"
    elif style == "self":
        bomb = "loop: &loop [*loop]\n"
    elif style == "anchor-only":
        bomb = "anchored: &x 1\n"
    elif style == "alias-only":
        bomb = "aliased: *missing\n"
    else:
        bomb = "base: &b {x: 1}\nderived:\n  <<: *b\n  y: 2\n"
    text = files[name].decode("utf-8", "replace")
    files[name] = (text.rstrip("\n") + "\n" + bomb).encode()
    return f"alias-bomb {name} {style}"


def m_yaml_exotica(rng: random.Random, files: Files) -> str:
    name = _pick_file(rng, files)
    extra = rng.choice(
        (
            "evil: !!python/object/apply:os.system ['touch /tmp/pwned']\n",
            "evil: !!python/name:os.system\n",
            "b: !!binary aGVsbG8=\n",
            "s: !!set {a, b}\n",
            "t: !!timestamp 2001-12-14\n",
            "d: 2001-12-14\n",
            "c: !custom x\n",
            "o: !!omap [a: 1]\n",
            "i: !!int '12'\n",
            "i2: !!int 'twelve'\n",
            "f: !!float 'x'\n",
            "bo: !!bool 'yes'\n",
            "n: !!null 'x'\n",
            "? [complex, key]\n: 1\n",
            "? {a: 1}\n: 1\n",
            "1: one\n",
            "null: nothing\n",
            "true: yes\n",
            "1.5: x\n",
            "<<: {x: 1}\n",
            "---\nkind: game\n",
            "--- !!str\n",
            "%YAML 1.1\n---\n",
            "%TAG ! tag:evil.com,2000:\n",
            "&anchor\n",
            "key: 'unterminated\n",
            'key: "bad escape \\q"\n',
            "key: [1, 2\n",
            "key: {a: 1\n",
            "- item at top\n",
            "key: |\n bad\n  indent\n",
            "@reserved: 1\n",
            "`tick: 1\n",
            "on: yes\n",
            "dup: 1\ndup: 2\n",
            "\"quoted\nkey\": 1\n",
        )
    )
    text = files[name].decode("utf-8", "replace")
    where = rng.choice(("end", "start"))
    files[name] = ((text.rstrip("\n") + "\n" + extra) if where == "end" else extra + text).encode()
    return f"yaml-exotica {name} {where}: {extra.strip()[:40]!r}"


def m_unknown_key_text(rng: random.Random, files: Files) -> str:
    name = _pick_file(rng, files)
    lines = _lines(files[name])
    keyed = [i for i in _content_lines(lines) if re.match(rb"\s*(- )?[a-z_]+:", lines[i])]
    if not keyed:
        return "unknown-key: no key line"
    i = rng.choice(keyed)
    m = re.match(rb"(\s*)(- )?", lines[i])
    assert m is not None
    indent = m.group(1) + (b"  " if m.group(2) else b"")
    key = rng.choice((b"bogus", b"nmae", b"txet", b"kind", b"id", b"$remove", b"source"))
    lines.insert(i + 1, indent + key + b": 1")
    files[name] = b"\n".join(lines)
    return f"unknown-key-text {name}:{i + 2} {key.decode()}"


def m_value_type_text(rng: random.Random, files: Files) -> str:
    name = _pick_file(rng, files)
    lines = _lines(files[name])
    keyed = [i for i in _content_lines(lines) if re.match(rb"\s*(- )?[a-z_]+: \S", lines[i])]
    if not keyed:
        return "value-type: no value line"
    i = rng.choice(keyed)
    m = re.match(rb"(\s*(- )?[a-z_]+: )", lines[i])
    assert m is not None
    new = rng.choice((b"[1, 2]", b"{a: 1}", b"\"text\"", b"42", b"-1", b"0", b"true", b"null",
                      b"", b"[]", b"{}", b"1.5", b"'1'", b"[[]]", b"|", b">-"))
    lines[i] = m.group(1) + new
    files[name] = b"\n".join(lines)
    return f"value-type-text {name}:{i + 1} -> {new.decode()!r}"


# --- file-level mutators -----------------------------------------------------------------------


def m_files(rng: random.Random, files: Files) -> str:
    name = _pick_file(rng, files)
    how = rng.choice(("delete", "copy", "rename-yml", "rename-txt", "hidden", "nested", "huge",
                      "long-line"))
    if how == "delete":
        del files[name]
    elif how == "copy":
        files["copy-of-" + name.replace("/", "-")] = files[name]
    elif how == "rename-yml":
        files[name.rsplit(".", 1)[0] + ".yml"] = files.pop(name)
    elif how == "rename-txt":
        files[name + ".txt"] = files.pop(name)
    elif how == "hidden":
        files[".hidden-" + name.replace("/", "-")] = files.pop(name)
    elif how == "nested":
        files["deep/er/" + name.replace("/", "-")] = files[name]
    elif how == "huge":
        files[name] = files[name] + b"\n# " + b"x" * (1 << 20) + b"\n"
    else:
        files[name] = files[name].rstrip(b"\n") + b"\nlong: " + b"y" * 300_000 + b"\n"
    return f"files {how} {name}"


# --- structural mutators (parse, change the data, dump again) -----------------------------------


def _parse(data: bytes) -> Any:
    """The data of a YAML file, read the way the rules loader reads scalars (YAML 1.2)."""
    try:
        return yaml.load(data.decode("utf-8"), Loader=StrictLoader)
    except (yaml.YAMLError, UnicodeDecodeError, RecursionError, ValueError):
        return None


def _dump(data: Any) -> bytes:
    text: str = yaml.dump(
        data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100,
        default_flow_style=None,
    )
    return text.encode("utf-8")


def _nodes(data: Any, limit: int = 20_000) -> Iterator[tuple[tuple[Any, ...], Any]]:
    """Every (path, value) of a document, breadth-first; bounded (earlier mutations may have
    made it very deep or, through aliases, very large)."""
    queue: list[tuple[tuple[Any, ...], Any]] = [((), data)]
    for path, value in queue:
        yield path, value
        if len(queue) > limit or len(path) > 100:
            continue
        if isinstance(value, dict):
            queue.extend(((*path, k), v) for k, v in value.items())
        elif isinstance(value, list):
            queue.extend(((*path, i), v) for i, v in enumerate(value))


def _set(data: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    parent = data
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = value
    return data


def _structural(change: Callable[[random.Random, Any], tuple[Any, str] | None]) -> Mutator:
    """Wrap a data-level change into a mutator of one YAML file."""

    def mutate(rng: random.Random, files: Files) -> str:
        names = sorted(n for n in files if n.endswith((".yaml", ".yml")))
        rng.shuffle(names)
        for name in names[:4]:
            data = _parse(files[name])
            if not isinstance(data, dict | list):
                continue
            try:
                done = change(rng, data)
            except RecursionError:
                continue
            if done is None:
                continue
            new, what = done
            try:
                files[name] = _dump(new)
            except (yaml.YAMLError, RecursionError, ValueError):
                continue
            return f"{change.__name__.lstrip('_')} {name}: {what}"
        return f"{change.__name__.lstrip('_')}: no target"

    mutate.__name__ = "m" + change.__name__
    mutate.__doc__ = change.__doc__
    return mutate


def _other_type(rng: random.Random, value: Any) -> Any:
    if isinstance(value, bool):
        return rng.choice((1, "true", [value], None))
    if isinstance(value, int | float):
        return rng.choice((str(value), [value], {"value": value}, True, None, float(value) + 0.5))
    if isinstance(value, str):
        return rng.choice((len(value), [value], {"text": value}, None, False, 1.5))
    if isinstance(value, list):
        return rng.choice(({"items": value}, "list", len(value), None, value[:1] if value else 0))
    if isinstance(value, dict):
        return rng.choice((list(value.values()), list(value), "map", 0, None))
    return rng.choice((0, "x", [], {}))


def _swap_type(rng: random.Random, data: Any) -> tuple[Any, str] | None:
    nodes = [(p, v) for p, v in _nodes(data) if p and p[-1] != "kind"]
    if not nodes:
        return None
    path, value = rng.choice(nodes)
    new = _other_type(rng, value)
    return _set(data, path, new), f"{_addr(path)} {type(value).__name__} -> {_short(new)}"


def _swap_kind(rng: random.Random, data: Any) -> tuple[Any, str] | None:
    if not isinstance(data, dict):
        return None
    new = rng.choice(("game", "nobles", "variant", "examples", "gmae", 1, None, ["game"], "",
                      "effects", "state", "efects"))
    data["kind"] = new
    return data, f"kind -> {new!r}"


def _number(rng: random.Random, data: Any) -> tuple[Any, str] | None:
    nodes = [(p, v) for p, v in _nodes(data) if isinstance(v, int) and not isinstance(v, bool)]
    if not nodes:
        return None
    path, value = rng.choice(nodes)
    new = rng.choice(
        (10**30, -(10**30), 1e308, -1e308, float("inf"), float("nan"), 2**63, -1, 0,
         value + 1, value - 1, -value, value * 1000, rng.randint(-3, 12), rng.randint(-3, 12))
    )
    return _set(data, path, new), f"{_addr(path)} {value} -> {_short(new)}"


def _small_list(rng: random.Random, data: Any) -> tuple[Any, str] | None:
    nodes = [(p, v) for p, v in _nodes(data) if isinstance(v, list) and p]
    if not nodes:
        return None
    path, value = rng.choice(nodes)
    how = rng.choice(("empty", "one", "dup-item", "reverse", "drop-item", "shuffle"))
    new = list(value)
    if how == "empty":
        new = []
    elif how == "one":
        new = new[:1]
    elif how == "dup-item" and new:
        k = rng.randrange(len(new))
        new.insert(k, copy.deepcopy(new[k]))
    elif how == "reverse":
        new.reverse()
    elif how == "drop-item" and new:
        del new[rng.randrange(len(new))]
    else:
        rng.shuffle(new)
    return _set(data, path, new), f"{_addr(path)} list {how}"


def _drop_key(rng: random.Random, data: Any) -> tuple[Any, str] | None:
    nodes = [(p, k) for p, v in _nodes(data) if isinstance(v, dict) for k in v if p or k != "kind"]
    if not nodes:
        return None
    path, key = rng.choice(nodes)
    parent = data
    for part in path:
        parent = parent[part]
    del parent[key]
    return data, f"drop {_addr((*path, key))}"


def _add_key(rng: random.Random, data: Any) -> tuple[Any, str] | None:
    nodes = [p for p, v in _nodes(data) if isinstance(v, dict)]
    if not nodes:
        return None
    path = rng.choice(nodes)
    parent = data
    for part in path:
        parent = parent[part]
    key = rng.choice(("bogus", "nmae", "tetx", "Name", "$remove", "__class__", "id ", "a.b",
                      "x" * 300, "with space", "ключ", "", "<script>", "'", "\n"))
    parent[key] = rng.choice((1, "x", True, [], {}))
    return data, f"add key {key!r} in {_addr(path)}"


def _id_typo(rng: random.Random, data: Any) -> tuple[Any, str] | None:
    nodes = [(p, v) for p, v in _nodes(data)
             if isinstance(v, str) and p and p[-1] not in (*TEXT_KEYS, "kind") and len(v) < 40]
    if not nodes:
        return None
    path, value = rng.choice(nodes)
    how = rng.choice(("drop", "swap", "case", "hyphen", "dot", "space", "unicode", "empty"))
    chars = list(value)
    if how == "drop" and chars:
        del chars[rng.randrange(len(chars))]
    elif how == "swap" and len(chars) > 1:
        k = rng.randrange(len(chars) - 1)
        chars[k], chars[k + 1] = chars[k + 1], chars[k]
    elif how == "case":
        chars = list(value.upper())
    elif how == "hyphen":
        chars = list(value.replace("-", "_") if "-" in value else value + "-")
    elif how == "dot":
        chars = list(value + ".x")
    elif how == "space":
        chars = list(" " + value)
    elif how == "unicode":
        chars = list(value.replace("e", "е"))  # Cyrillic e
    else:
        chars = []
    new = "".join(chars)
    return _set(data, path, new), f"{_addr(path)} {value!r} -> {new!r} ({how})"


def _formula(rng: random.Random, data: Any) -> tuple[Any, str] | None:
    nodes = [(p, v) for p, v in _nodes(data) if p and p[-1] in FORMULA_KEYS]
    if not nodes:
        return None
    path, value = rng.choice(nodes)
    garbage = rng.choice(FORMULA_GARBAGE)
    if isinstance(value, str) and rng.random() < 0.3:
        garbage = f"{value} {rng.choice(('+', 'and', '<', '//', '*'))} {garbage}"
    return _set(data, path, garbage), f"{_addr(path)} -> {_short(garbage)}"


def _placeholder(rng: random.Random, data: Any) -> tuple[Any, str] | None:
    nodes = [(p, v) for p, v in _nodes(data)
             if p and p[-1] in TEXT_KEYS and isinstance(v, str)]
    if not nodes:
        return None
    path, value = rng.choice(nodes)
    garbage = rng.choice(PLACEHOLDER_GARBAGE + STRING_GARBAGE)
    cut = rng.randrange(len(value) + 1)
    new = value[:cut] + garbage + value[cut:] if rng.random() < 0.7 else garbage
    return _set(data, path, new), f"{_addr(path)} += {_short(garbage)}"


def _hostile_text(rng: random.Random, data: Any) -> tuple[Any, str] | None:
    """Prose, names and titles that are valid but hostile to code generators and documents
    (quotes, backslashes, newlines, `</script>`, Markdown pipes, Jinja, bidi controls)."""
    nodes = [(p, v) for p, v in _nodes(data)
             if p and p[-1] in TEXT_KEYS and isinstance(v, str)]
    if not nodes:
        return None
    path, value = rng.choice(nodes)
    hostile = rng.choice([s for s in STRING_GARBAGE if 0 < len(s) < 100 and s.strip()])
    new = rng.choice((hostile, f"{value} {hostile}", f"{hostile} {value}"))
    return _set(data, path, new), f"{_addr(path)} -> {_short(new)}"


def _nest(rng: random.Random, data: Any) -> tuple[Any, str] | None:
    nodes = [p for p, _ in _nodes(data) if p]
    if not nodes:
        return None
    path = rng.choice(nodes)
    depth = rng.choice((3, 30, 63, 64, 65, 200))
    value: Any = 1
    for _ in range(depth):
        value = [value] if rng.random() < 0.5 else {"a": value}
    return _set(data, path, value), f"{_addr(path)} nested {depth} deep"


def _swap_siblings(rng: random.Random, data: Any) -> tuple[Any, str] | None:
    nodes = [(p, v) for p, v in _nodes(data) if isinstance(v, dict) and len(v) > 1]
    if not nodes:
        return None
    path, value = rng.choice(nodes)
    a, b = rng.sample(sorted(value), 2)
    value[a], value[b] = value[b], value[a]
    return data, f"swap {_addr((*path, a))} <-> {b}"


def _remove_marker(rng: random.Random, data: Any) -> tuple[Any, str] | None:
    """Overlay syntax where it does not belong (or does): `$remove` on a random node."""
    nodes = [p for p, v in _nodes(data) if p and isinstance(v, dict | list)]
    if not nodes:
        return None
    path = rng.choice(nodes)
    marker: Any = rng.choice(({"$remove": True}, {"$remove": False}, {"$remove": "yes"},
                              [{"id": "nowhere", "$remove": True}]))
    return _set(data, path, marker), f"{_addr(path)} -> {marker!r}"


# --- parameter edge values and hostile file names (issue 11) -------------------------------------

# Values at the edges of what the schema lets through (params are -1000..1000): zero, negative,
# the schema's limits and just past them, and far past them.
EDGE_NUMBERS = (0, -1, 1, 2, -2, 1000, 1001, -1000, -1001, 10**12, -(10**12), 2**63)


def _data_by_kind(files: Files) -> dict[str, Any]:
    """The parsed base documents by kind (for bounds such as game.tracks.influence.max)."""
    out: dict[str, Any] = {}
    for name in sorted(files):
        if name.endswith((".yaml", ".yml")) and not name.startswith("variants/"):
            data = _parse(files[name])
            if isinstance(data, dict) and isinstance(data.get("kind"), str):
                out.setdefault(data["kind"], data)
    return out


def _range_edges(raw: Any, data: Mapping[str, Any]) -> list[int]:
    """A declared range's ends and the numbers just past them (none if it does not resolve)."""
    from lisboa_rules.lang.vocab import BoundError, resolve_range

    try:
        lo, hi = resolve_range(raw, data)
    except (BoundError, RecursionError, TypeError, ValueError, AttributeError, KeyError):
        return []
    return [int(b) + d for b in (lo, hi) if abs(b) != float("inf") for d in (-1, 0, 1)]


def m_param_edges(rng: random.Random, files: Files) -> str:
    """A param (or a cost example's value, or a declared range) set to an edge value: 0,
    negative, huge, the schema's limits, at and just past the range declared for it."""
    data = _data_by_kind(files)
    targets: list[tuple[str, tuple[Any, ...], list[int]]] = []
    for name in sorted(files):
        if not name.endswith((".yaml", ".yml")):
            continue
        doc = _parse(files[name])
        for path, value in _nodes(doc):
            if not (path and isinstance(value, dict)) or path[-1] not in ("params", "example"):
                continue
            parent: Any = doc
            for part in path[:-1]:
                parent = parent[part]
            ranges = parent.get("ranges", {}) if isinstance(parent, dict) else {}
            for key in value:
                edges = _range_edges(ranges.get(key), data) if isinstance(ranges, dict) else []
                targets.append((name, (*path, key), edges))
            if isinstance(ranges, dict):
                targets.extend((name, (*path[:-1], "ranges", k), []) for k in ranges)
        targets.extend((name, p, []) for p, v in _nodes(doc) if p and p[-1] == "range")
    if not targets:
        return "param-edges: no target"
    name, path, edges = rng.choice(targets)
    doc = _parse(files[name])
    new: Any
    if path[-1] == "range" or (len(path) > 1 and path[-2] == "ranges"):
        new = rng.choice(([0, 0], [-1, None], [None, None], [1, 0], [0, 10**12], [0, "game.nope"],
                          [0, "count(game)"], ["-game.players.max", 0], [0], "0..1"))
    else:
        new = rng.choice([*EDGE_NUMBERS, *edges] if edges else EDGE_NUMBERS)
    files[name] = _dump(_set(doc, path, new))
    return f"param-edges {name}: {_addr(path)} -> {_short(new)}"


# --- the steps of procedures (issue 14) -----------------------------------------------------------

STEP_KINDS = steps_lang.KINDS  # every kind of step the language has, a new one too
STEP_LISTS = ("steps", "then", "else", "do")
STEP_EXPRESSIONS = ("require", "if", "repeat")


def _is_step(value: Any) -> bool:
    return isinstance(value, dict) and any(k in value for k in STEP_KINDS)


def _step_lists(doc: Any) -> list[tuple[Any, ...]]:
    """The paths of the lists of steps of a document (a procedure's, an if's, a loop's)."""
    return [p for p, v in _nodes(doc) if p and p[-1] in STEP_LISTS and isinstance(v, list)
            and v and all(_is_step(x) for x in v)]


def _table(data: Mapping[str, Any], key: str) -> dict[str, Any]:
    """`data[key]` when it is a table, else an empty one (a fuzzed document may have anything)."""
    found = data.get(key)
    return found if isinstance(found, dict) else {}


def _state_names(data: Mapping[str, Any]) -> list[str]:
    """What a step may read or write: the fields of rules/state.yaml (`game.` for the game's),
    the measures and params of rules/effects.yaml; and a few names that are none of these."""
    state = _table(data, "state")
    effects = _table(data, "effects")
    names = ["nothing", "reiss", "game.nothing", "rules.game.nope", "seat", "amount", "noble"]
    for scope, prefix in (("player", ""), ("game", "game.")):
        names += [prefix + str(f["id"]) for f in state.get(scope) or []
                  if isinstance(f, dict) and "id" in f]
    names += [str(m["id"]) for m in effects.get("measures") or [] if isinstance(m, dict)
              and "id" in m]
    return names


def _procedure_ids(data: Mapping[str, Any]) -> list[str]:
    effects = _table(data, "effects")
    nobles = _table(data, "nobles")
    out = [str(e.get("id")) for part in ("effects", "procedures", "hooks")
           for e in effects.get(part) or [] if isinstance(e, dict)]
    out += [str(n.get("id")) for n in nobles.get("noble_actions") or [] if isinstance(n, dict)]
    return [*out, "pay-ries", "nowhere"]


def m_steps(rng: random.Random, files: Files) -> str:
    """A list of steps (of an effect, a procedure, a hook, a Noble action, an if or a loop)
    changed the way a designer gets it wrong: two steps swapped (a require after an effect), a
    step dropped or duplicated, a step of another kind, an expression or a place replaced by
    another state field (or by a name that is none), a `do` of another procedure (a cycle, an
    unknown one), a key of another kind of step added, a step moved into another list."""
    data = _data_by_kind(files)
    names = _state_names(data)
    targets = []
    for name in sorted(files):
        if name.endswith((".yaml", ".yml")):
            doc = _parse(files[name])
            targets += [(name, p) for p in _step_lists(doc)]
    if not targets:
        return "steps: no target"
    name, path = rng.choice(targets)
    doc = _parse(files[name])
    steps: list[Any] = doc
    for part in path:
        steps = steps[part]
    k = rng.randrange(len(steps))
    step = steps[k]
    kind = next(x for x in STEP_KINDS if x in step)
    how = rng.choice(("swap", "drop", "duplicate", "kind", "expression", "place", "do", "key",
                      "move", "empty"))
    what = how
    if how == "swap" and len(steps) > 1:
        j = rng.randrange(len(steps))
        steps[k], steps[j] = steps[j], steps[k]
        what = f"swap {k} <-> {j}"
    elif how == "drop":
        del steps[k]
    elif how == "duplicate":
        steps.insert(rng.randrange(len(steps) + 1), copy.deepcopy(step))
    elif how == "kind":
        other = rng.choice([x for x in STEP_KINDS if x != kind])
        step[other] = step.pop(kind)
        what = f"{kind} -> {other}"
    elif how == "expression" and kind in STEP_EXPRESSIONS:
        new = rng.choice(names)
        new = rng.choice((new, f"{new} > 0", f"{step[kind]} and {new}", f"{new} + 1", f"not {new}"))
        step[kind] = new
        what = f"{kind}: {_short(new)}"
    elif how in ("expression", "place") and kind in ("gain", "set", "let") and \
            isinstance(step[kind], dict) and step[kind]:
        key = rng.choice(sorted(step[kind]))
        new = rng.choice(names)
        if how == "place":
            step[kind][new] = step[kind].pop(key)
        else:
            step[kind][key] = rng.choice((new, f"{new} - 1", f"-{new}", f"len({new})"))
        what = f"{kind} {key!r}: {how} -> {_short(new)}"
    elif how == "place" and kind in ("move", "for_each", "choose") and isinstance(step[kind], dict):
        slot = rng.choice({"move": ("from", "to", "item"), "for_each": ("in",),
                           "choose": ("from", "where", "max")}[kind])
        step[kind][slot] = rng.choice(names)
        what = f"{kind}.{slot} -> {step[kind][slot]!r}"
    elif how == "do":
        step.clear()
        step["do"] = rng.choice(_procedure_ids(data))
        if rng.random() < 0.5:
            step["with"] = rng.choice(({}, {"amount": rng.choice(names)}, {"amont": 1},
                                       {"amount": 1, "noble": None}, {"noble": "reis > 0"}))
        what = f"do {step['do']!r} with {step.get('with')!r}"
    elif how == "key":
        key = rng.choice(("then", "else", "do", "reason", "with", "count_rule", "reqiure", "txt"))
        step[key] = rng.choice(([{"gain": {"reis": 1}}], "a reason", {"amount": 1}, "x"))
        what = f"{kind} step + {key}"
    elif how == "move":
        others = [p for n, p in targets if n == name and p != path]
        if others:
            dest = doc
            for part in rng.choice(others):
                dest = dest[part]
            dest.insert(rng.randrange(len(dest) + 1), steps.pop(k))
            what = "moved into another list"
    elif how == "empty" or what == how:  # the change chosen does not apply: empty the list
        steps.clear()
        steps.append(rng.choice(({}, {"text": "a step of words only"}, {"gain": {}},
                                 {"if": "reis > 0"}, {"repeat": 2}, {"raise": "no-such-event"})))
        what = f"replaced by {steps[0]!r}"
    files[name] = _dump(doc)
    return f"steps {name}: {_addr(path)}.{k} {what}"


HOSTILE_FILE_NAMES = (
    "'''.yaml",
    '"""; import os; os.system("touch pwned"); """.yaml',
    "a'''\n__import__('os').system('touch pwned')\n'''.yaml",
    "line\nbreak.yaml",
    "cr\rreturn.yaml",
    "--->.yaml",
    "--!>.yaml",
    "<!-- -->.yaml",
    "<img src=x onerror=alert(1)>.yaml",
    "</script><script>alert(1)</script>.yaml",
    "a|b|c `code` *em* [link](x).yaml",
    "{{ 7*7 }}.yaml",
    "ünïcødé-ρυθμοί-規則.yaml",
    "\u202egnp.yaml",  # right-to-left override
    "\u2028\u2029.yaml",
    "🎲🎲.yaml",
    "-rf.yaml",
    " leading space.yaml",
    "x" * 240 + ".yaml",
    "é" * 120 + ".yaml",  # 245 bytes: near the 255-byte limit of one name
    "$(touch pwned).yaml",
    "%s%n%x.yaml",
    "\\backslash\\.yaml",
)


def m_file_names(rng: random.Random, files: Files) -> str:
    """A rules file renamed (or a variant copied) to a name that is hostile to generated
    Python, Markdown and HTML: quotes, newlines, comment closers, markup, unicode, long."""
    name = _pick_file(rng, files)
    folder, _, _ = name.rpartition("/")
    hostile = rng.choice(HOSTILE_FILE_NAMES)
    target = f"{folder}/{hostile}" if folder else hostile
    if rng.random() < 0.3 and name.startswith("variants/"):
        files[target] = files[name]  # the copy is a second variant with the same id
        return f"file-names copy {name} -> {target!r}"
    files[target] = files.pop(name)
    return f"file-names {name} -> {target!r}"


MUTATORS: dict[str, tuple[Mutator, float]] = {
    "delete-lines": (m_delete_lines, 1.0),
    "duplicate-lines": (m_duplicate_lines, 1.0),
    "swap-lines": (m_swap_lines, 0.5),
    "indent": (m_indent, 0.8),
    "tabs": (m_tabs, 0.4),
    "truncate": (m_truncate, 0.6),
    "random-bytes": (m_random_bytes, 0.6),
    "encoding": (m_encoding, 0.6),
    "empty": (m_empty, 0.3),
    "huge-number-text": (m_huge_number_text, 0.6),
    "deep-nesting": (m_deep_nesting, 0.4),
    "alias-bomb": (m_alias_bomb, 0.4),
    "yaml-exotica": (m_yaml_exotica, 0.6),
    "unknown-key-text": (m_unknown_key_text, 0.5),
    "value-type-text": (m_value_type_text, 0.6),
    "files": (m_files, 0.4),
    "swap-type": (_structural(_swap_type), 1.5),
    "swap-kind": (_structural(_swap_kind), 0.2),
    "number": (_structural(_number), 2.0),
    "list": (_structural(_small_list), 1.5),
    "drop-key": (_structural(_drop_key), 1.2),
    "add-key": (_structural(_add_key), 0.6),
    "id-typo": (_structural(_id_typo), 1.5),
    "formula": (_structural(_formula), 1.2),
    "placeholder": (_structural(_placeholder), 1.2),
    "hostile-text": (_structural(_hostile_text), 1.5),
    "nest": (_structural(_nest), 0.3),
    "swap-siblings": (_structural(_swap_siblings), 0.5),
    "remove-marker": (_structural(_remove_marker), 0.4),
    "param-edges": (m_param_edges, 1.5),
    "file-names": (m_file_names, 0.8),
    "steps": (m_steps, 2.0),
}


def _addr(path: Sequence[Any]) -> str:
    return ".".join(str(p) for p in path) or "<top>"


def _short(value: Any, limit: int = 50) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


# --- cases ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """One fuzz input: the mutated rules files and how they were made."""

    seed: int
    index: int
    mutations: tuple[str, ...]  # what each mutation did, in words
    files: Mapping[str, bytes] = field(repr=False)
    kinds: tuple[str, ...] = ()  # the MUTATORS names used

    @property
    def label(self) -> str:
        return f"seed {self.seed} case {self.index}: " + "; ".join(self.mutations)


def read_rules(rules_dir: Path) -> Files:
    """Every regular file under `rules_dir` (relative POSIX path -> bytes), sorted."""
    out: Files = {}
    for p in sorted(rules_dir.rglob("*")):
        if p.is_file():
            out[p.relative_to(rules_dir).as_posix()] = p.read_bytes()
    return out


def make_case(base: Mapping[str, bytes], seed: int, index: int,
              only: Sequence[str] = ()) -> Case:
    """Case `index` of the run `seed`: 1-3 mutations of `base` (deterministic)."""
    rng = random.Random(f"lisboa-fuzz:{seed}:{index}")
    names = sorted(only or MUTATORS)
    weights = [MUTATORS[n][1] for n in names]
    count = rng.choices((1, 2, 3), (7, 2, 1))[0]
    files = dict(base)
    done = []
    kinds = rng.choices(names, weights, k=count)
    for name in kinds:
        done.append(MUTATORS[name][0](rng, files))
    return Case(seed, index, tuple(done), files, tuple(kinds))


# --- systematic sweeps: every optional key -------------------------------------------------------


def _schema_valid(name: str, data: Any) -> bool:
    """Whether one rules file's data still passes its schema (no build: fast)."""
    doc = LoadedDoc(Path(name), name, "", data, {}, {})
    return not any(d.is_error for d in validate(doc))


def _without(data: Any, path: tuple[Any, ...], key: str) -> Any:
    out = copy.deepcopy(data)
    node = out
    for part in path:
        node = node[part]
    del node[key]
    return out


def optional_keys(base: Mapping[str, bytes]) -> Iterator[tuple[str, tuple[Any, ...], str]]:
    """(file, path, key) for every key the schema lets one leave out: the first place each
    key occurs at each schema position (list indexes count as one position)."""
    for name, raw in sorted(base.items()):
        data = _parse(raw)
        if not isinstance(data, dict):
            continue
        seen: set[tuple[Any, ...]] = set()
        for path, value in list(_nodes(data)):
            if not isinstance(value, dict):
                continue
            for key in list(value):
                pattern = (*("*" if isinstance(p, int) else p for p in path), key)
                if pattern in seen or (not path and key == "kind"):
                    continue
                seen.add(pattern)
                if _schema_valid(name, _without(data, path, key)):
                    yield name, path, key


def sweep_cases(base: Mapping[str, bytes], singles: bool = True) -> list[Case]:
    """One case per optional key left out (unless not `singles`), plus per file one "minimal"
    document with every optional key left out at once (while the file stays schema-valid)."""
    cases: list[Case] = []
    minimal: dict[str, Any] = {}
    parsed = {name: _parse(raw) for name, raw in base.items()}
    for name, path, key in optional_keys(base):
        data = parsed[name]
        if singles:
            files = dict(base)
            files[name] = _dump(_without(data, path, key))
            where = ".".join(str(p) for p in (*path, key))
            cases.append(Case(-1, len(cases), (f"leave out {name}: {where}",), files,
                              ("optional-key",)))
        current = minimal.get(name, data)
        try:
            smaller = _without(current, path, key)
        except (KeyError, IndexError, TypeError):
            continue
        if _schema_valid(name, smaller):
            minimal[name] = smaller
    for name, data in sorted(minimal.items()):
        files = dict(base)
        files[name] = _dump(data)
        cases.append(Case(-1, len(cases), (f"minimal {name}: every optional key left out",),
                          files, ("minimal",)))
    return cases


def write_rules(files: Mapping[str, bytes], rules_dir: Path) -> None:
    """Write a case's files into an empty `rules_dir`."""
    rules_dir.mkdir(parents=True)
    for rel, data in sorted(files.items()):
        path = rules_dir / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


# --- checking one run ----------------------------------------------------------------------------


def snapshot(root: Path) -> dict[str, tuple[bytes, int, int]]:
    """Every file (and symlink) under `root`: bytes, mode and modification time."""
    out: dict[str, tuple[bytes, int, int]] = {}
    if not root.exists():
        return out
    for p in sorted(root.rglob("*")):
        st = p.stat()
        if p.is_file() or p.is_symlink():
            out[p.relative_to(root).as_posix()] = (p.read_bytes(), st.st_mode, st.st_mtime_ns)
        elif p.is_dir():
            out[p.relative_to(root).as_posix() + "/"] = (b"", st.st_mode, 0)
    return out


def check_output(code: int, stdout: str, stderr: str, workdir: Path) -> list[str]:
    """Problems with one build's exit code and streams (an empty list when it behaved)."""
    problems: list[str] = []
    if code not in (0, 1):
        first = next((ln for ln in stderr.splitlines()
                      if "internal error" in ln or "error[" in ln), "")
        problems.append(f"exit {code}" + (f": {first}" if first else ""))
    for stream, text in (("stderr", stderr), ("stdout", stdout)):
        if "Traceback (most recent call last)" in text:
            problems.append(f"traceback on {stream}")
    if stdout:
        problems.append(f"unexpected stdout: {_short(stdout, 80)}")
    errors = 0
    for line in stderr.splitlines():
        problem, is_error = _check_line(line, workdir)
        if problem:
            problems.append(problem)
        errors += is_error
    if code == 1 and errors == 0:
        problems.append("exit 1 without any error diagnostic")
    if code == 0 and errors:
        problems.append("exit 0 with error diagnostics")
    return problems


def _check_line(line: str, workdir: Path) -> tuple[str | None, bool]:
    """One stderr line: (problem or None, whether it is an error diagnostic)."""
    m = _LOCATED.match(line)
    if m:
        code = m.group("code")
        if code not in codes.CODES:
            return f"unknown code {code!r}: {_short(line, 120)}", m.group("sev") == "error"
        where = _check_position(m.group("path"), int(m.group("line")), int(m.group("col")),
                                workdir, exists_only=code == "unreadable-file")
        problem = f"bad position ({where}) [{code}]: {_short(line, 120)}" if where else None
        return problem, m.group("sev") == "error"
    m = _FILELESS.match(line)
    if m:
        code = m.group("code")
        if code not in codes.CODES:
            return f"unknown code {code!r}: {_short(line, 120)}", True
        if code not in FILELESS_CODES:
            return f"no position for [{code}]: {_short(line, 120)}", m.group("sev") == "error"
        return None, m.group("sev") == "error"
    m = _LOCATED_NOTE.match(line)
    if m:
        where = _check_position(m.group("path"), int(m.group("line")), int(m.group("col")),
                                workdir)
        return (f"bad note position ({where}): {_short(line, 120)}" if where else None), False
    if _PLAIN.fullmatch(line):
        return None, False
    return f"line not in the diagnostic format: {_short(line, 120)}", False


def _check_position(path: str, line: int, col: int, workdir: Path,
                    exists_only: bool = False) -> str | None:
    """Why `path:line:col` does not point into an existing file, or None when it does (for a
    file that cannot be read, `exists_only`: that something of that name is there)."""
    file = Path(path) if Path(path).is_absolute() else workdir / path
    if exists_only and (line, col) == (1, 1):
        # The name may be shown escaped (a line break in a file name prints as `\n`).
        parent = file.parent
        if os.path.lexists(file) or (parent.is_dir() and any(
                one_line(entry.name) == file.name for entry in parent.iterdir())):
            return None
    if not file.is_file() and file.parent.is_dir():
        # The name may be shown escaped (a line break or a bidi control prints as `\n`, `\u202e`).
        file = next((e for e in sorted(file.parent.iterdir()) if one_line(e.name) == file.name),
                    file)
    if not file.is_file():
        return f"{path} is not a file"
    if line < 1 or col < 1:
        return "line and column start at 1"
    lines = file.read_bytes().decode("utf-8", "replace").split("\n")
    if line > len(lines):
        return f"line {line} is past the end ({len(lines)} lines)"
    if col > len(lines[line - 1]) + 1:
        return f"column {col} is past the end of line {line} ({len(lines[line - 1])} chars)"
    return None


# --- running ------------------------------------------------------------------------------------


class _Timeout(BaseException):
    """Raised by the alarm when a case runs too long (BaseException: cli.main cannot eat it)."""


@contextlib.contextmanager
def _time_limit(seconds: float) -> Iterator[None]:
    if seconds <= 0 or not hasattr(signal, "setitimer"):
        yield
        return

    def alarm(signum: int, frame: FrameType | None) -> None:
        raise _Timeout

    old = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


@contextlib.contextmanager
def _in_dir(path: Path) -> Iterator[None]:
    old = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


def run_build(argv: list[str], debug: bool = False,
              timeout: float = DEFAULT_TIMEOUT) -> tuple[int | None, str, str, str]:
    """Run `cli.main(argv)` capturing both streams: (exit code or None on a hang/crash, stdout,
    stderr, traceback text when `debug` let an exception through)."""
    out, err = io.StringIO(), io.StringIO()
    old_env = os.environ.get(DEBUG_ENV)
    if debug:
        os.environ[DEBUG_ENV] = "1"
    else:
        os.environ.pop(DEBUG_ENV, None)
    tb = ""
    code: int | None = None
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), \
                _time_limit(timeout):
            code = cli.main(argv)
    except _Timeout:
        tb = f"hang: no result after {timeout:g} s\n" + "".join(traceback.format_stack(limit=8))
    except Exception:
        tb = traceback.format_exc()
    finally:
        if old_env is None:
            os.environ.pop(DEBUG_ENV, None)
        else:
            os.environ[DEBUG_ENV] = old_env
    return code, out.getvalue(), err.getvalue(), tb


def signature(tb: str) -> str:
    """A short name for a crash: exception type and the innermost lisboa_rules frame."""
    if tb.startswith("hang"):
        return "hang"
    frames = re.findall(r'File "([^"]*lisboa_rules[^"]*)", line (\d+), in (\S+)', tb)
    last = tb.strip().splitlines()[-1] if tb.strip() else "?"
    exc = last.split(":", 1)[0]
    if frames:
        file, line, fn = frames[-1]
        return f"{exc} at {Path(file).name}:{line} in {fn}"
    return exc


@dataclass
class Outcome:
    """The verdict on one case."""

    case: Case
    exit_code: int | None
    stderr: str
    problems: list[str]
    seconds: float
    traceback: str = ""

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def signatures(self) -> list[str]:
        """One line per distinct problem, with crash signatures instead of messages."""
        if self.traceback:
            rest = [p for p in self.problems if not p.startswith(("exit 2", "exit None"))]
            return [signature(self.traceback), *rest]
        return list(self.problems)


class Runner:
    """Runs cases in one scratch folder: `rules/` is rewritten per case, `out/` is a prior build."""

    def __init__(self, rules_dir: Path, scratch: Path, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.base = read_rules(rules_dir)
        self.scratch = scratch
        self.timeout = timeout
        self.rules = scratch / "rules"
        self.out = scratch / "out"
        self.golden = scratch / ".golden-out"
        write_rules(self.base, self.rules)
        with _in_dir(scratch):
            code, _, err, tb = run_build(self._argv(), timeout=0)
        if code != 0:
            raise RuntimeError(f"the unmutated rules do not build (exit {code}):\n{err}{tb}")
        (self.out / "notes.txt").write_text("a file the user keeps here\n", encoding="utf-8")
        shutil.copytree(self.out, self.golden, symlinks=True)
        self.before = snapshot(self.out)

    def _argv(self) -> list[str]:
        return ["build", "--rules", "rules", "--out", "out"]

    def case(self, seed: int, index: int, only: Sequence[str] = ()) -> Case:
        return make_case(self.base, seed, index, only)

    def run(self, case: Case) -> Outcome:
        """Build `case` and judge it; the scratch folder is reset afterwards."""
        shutil.rmtree(self.rules)
        write_rules(case.files, self.rules)
        start = time.perf_counter()
        with _in_dir(self.scratch):
            code, stdout, stderr, tb = run_build(self._argv(), timeout=self.timeout)
            seconds = time.perf_counter() - start
            problems = check_output(code if code is not None else -1, stdout, stderr,
                                    self.scratch)
            if code is None:
                problems = [f"exit None: {tb.splitlines()[0] if tb else 'no result'}", *problems]
            after = snapshot(self.out)
            leftovers = sorted(p.name for p in self.scratch.iterdir()
                               if p.name not in ("rules", "out", ".golden-out"))
            if leftovers:
                problems.append(f"temp folders left next to the output: {leftovers}")
                for name in leftovers:  # files too (a `touch pwned` run by an injection)
                    left = self.scratch / name
                    if left.is_dir() and not left.is_symlink():
                        shutil.rmtree(left, ignore_errors=True)
                    else:
                        left.unlink(missing_ok=True)
            if code != 0 and after != self.before:
                problems.append("output folder changed by a failed build: "
                                + _tree_diff(self.before, after))
            if code == 2 and not tb:
                _, _, _, tb = run_build(self._argv(), debug=True, timeout=self.timeout)
                after = snapshot(self.out)
        if after != self.before:
            shutil.rmtree(self.out)
            shutil.copytree(self.golden, self.out, symlinks=True)
        return Outcome(case, code, stderr, problems, seconds, tb)


def _tree_diff(before: Mapping[str, Any], after: Mapping[str, Any]) -> str:
    changed = sorted(k for k in {*before, *after} if before.get(k) != after.get(k))
    return ", ".join(changed[:5]) + (" ..." if len(changed) > 5 else "")


@dataclass
class Summary:
    """Counts over a run."""

    cases: int = 0
    built: int = 0
    rejected: int = 0
    failed: list[Outcome] = field(default_factory=list)
    seconds: float = 0.0
    codes: Counter[str] = field(default_factory=Counter)
    mutations: Counter[str] = field(default_factory=Counter)

    def add(self, outcome: Outcome) -> None:
        self.cases += 1
        self.seconds += outcome.seconds
        if outcome.exit_code == 0:
            self.built += 1
        elif outcome.exit_code == 1:
            self.rejected += 1
        if not outcome.ok:
            self.failed.append(outcome)
        self.codes.update(set(re.findall(r"(?:error|warning)\[([^\]]*)\]", outcome.stderr)))
        self.mutations.update(outcome.case.kinds)

    def by_signature(self) -> dict[str, list[Outcome]]:
        groups: dict[str, list[Outcome]] = {}
        for o in self.failed:
            for sig in dict.fromkeys(o.signatures):
                groups.setdefault(sig, []).append(o)
        return groups

    def render(self) -> str:
        lines = [
            f"fuzzed {self.cases} inputs in {self.seconds:.1f} s: {self.built} built (exit 0), "
            f"{self.rejected} rejected with diagnostics (exit 1), {len(self.failed)} with problems",
        ]
        groups = self.by_signature()
        if groups:
            lines.append(f"{len(groups)} distinct problems:")
            for sig, outcomes in sorted(groups.items(), key=lambda kv: -len(kv[1])):
                lines.append(f"  [{len(outcomes)}x] {sig}")
                lines.append(f"        e.g. {outcomes[0].case.label}")
        lines.append("diagnostic codes seen: " + ", ".join(
            f"{c} {n}" for c, n in sorted(self.codes.items())))
        return "\n".join(lines)


def run_many(rules_dir: Path, seed: int, cases: Sequence[int], *, timeout: float = DEFAULT_TIMEOUT,
             only: Sequence[str] = (), progress: Callable[[Outcome], None] | None = None,
             scratch: Path | None = None, sweep: bool = False) -> Summary:
    """Run the given case indexes of one seed (or, with `sweep`, the optional-key sweep) and
    summarise them."""
    summary = Summary()
    with contextlib.ExitStack() as stack:
        if scratch is None:
            scratch = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="lisboa-fuzz-")))
        runner = Runner(rules_dir.resolve(), scratch, timeout)
        todo: Iterator[Case] = (iter(sweep_cases(runner.base)) if sweep else
                                (runner.case(seed, index, only) for index in cases))
        for case in todo:
            outcome = runner.run(case)
            summary.add(outcome)
            if progress is not None:
                progress(outcome)
    return summary


# === Engine inputs: forged moves and semantically broken saved games ============================
# (`--engine moves|saves|all`). The build mutators above feed rules/ to the compiler; these feed
# the generated engine what a game app receives over a network: moves (`Move.from_json`,
# `explain_move`, `apply_move`) and saved games (`loads`). A case passes when:
#
# - only StateError (a malformed move or save) and IllegalMove (a move the rules forbid) escape;
# - a refused input leaves the game unchanged, and explain_move agrees with apply_move;
# - a move is accepted exactly when it is one of `legal_moves` (compared with the types of the
#   values: `True` is not card 1);
# - every accepted save has a legal move or is over, every legal move keeps `check_invariants`,
#   and the state after it loads again.

ENGINE_FILE = Path("generated") / "lisboa_engine.py"


def load_generated_engine(path: Path = ENGINE_FILE) -> Any:
    """The generated engine at `path`, imported as a module."""
    from lisboa_rules.sim.engine import load_engine

    return load_engine(path)


def _typed(value: Any) -> Any:
    """A comparison key that keeps the types (`True` and `1` differ; so do `1` and `1.0`)."""
    if isinstance(value, list | tuple):
        return (type(value).__name__, tuple(_typed(v) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple(sorted((str(k), _typed(v)) for k, v in value.items())))
    return (type(value).__name__, repr(value))


def _move_key(E: Any, move: Any) -> Any:
    return tuple(_typed(getattr(move, f, None)) for f in E._MOVE_FIELDS)


def engine_states(E: Any, seed: int, games: int = 8) -> list[Any]:
    """Mid-game states of seeded random games (every phase the engine reaches), for mutation."""
    rng = random.Random(f"engine-states:{seed}")
    states: list[Any] = []
    for k in range(games):
        players = 2 + k % 3
        g = E.new_game(players, ("queen",) if k % 2 else (), rng.randrange(1 << 30))
        while g.phase != "over":
            if rng.random() < 0.08 or g.phase in ("follow", "marker", "hand-discard"):
                states.append(g)
            g = E.apply_move(g, rng.choice(E.legal_moves(g)))
        states.append(g)
    return states


def _ids(E: Any, g: Any) -> list[Any]:
    """Ids of the rules, to forge plausible values with."""
    rs = g.rs
    return [
        *(n.id for n in rs.nobles),
        *rs.businesses,
        *rs.state_actions,
        *rs.decrees,
        *rs.plans,
        *rs.piles,
        *list(rs.cards)[:5],
        "cardinal",
        "",
    ]


def _json_value(rng: random.Random, ids: Sequence[Any]) -> Any:
    """A random JSON value: edge numbers, bools, ids, wrong types, nesting."""
    pool: list[Any] = [
        None, True, False, 0, 1, -1, 2, 5, 99, 2**31, 2**63, 10**40, -(10**40), 1.0, 0.5,
        float("inf"), "", "x", "1", [], [1], [True], ["x"], {}, {"a": 1}, [[1]],
    ]
    pick = rng.random()
    if pick < 0.4:
        return rng.choice(pool)
    if pick < 0.8:
        return rng.choice(list(ids))
    return [rng.choice(list(ids)) for _ in range(rng.randrange(4))]


def forge_move(rng: random.Random, E: Any, g: Any) -> tuple[Any, str]:
    """A forged move as JSON data, and what was done."""
    legal = E.legal_moves(g)
    ids = _ids(E, g)
    fields = list(E._MOVE_FIELDS)
    how = rng.random()
    if legal and how < 0.1:
        return rng.choice(legal).to_json(), "a legal move"
    if legal and how < 0.55:
        data = rng.choice(legal).to_json()
        name = rng.choice(fields)
        if rng.random() < 0.3 and isinstance(data.get(name), int) and not isinstance(
            data.get(name), bool
        ):
            value: Any = rng.choice([True, False, data[name] + 1, -data[name] - 1, 10**30])
        elif rng.random() < 0.2 and isinstance(data.get(name), list) and data[name]:
            value = list(reversed(data[name])) + rng.choice([[], data[name][:1]])
        else:
            value = _json_value(rng, ids)
        data[name] = value
        return data, f"legal move with {name} = {_short(value)}"
    if legal and how < 0.65:
        data = rng.choice(legal).to_json()
        data["player"] = rng.choice([True, -1, len(g.players), g.actor + 1, 2**64])
        return data, f"legal move with player = {_short(data['player'])}"
    if how < 0.75:
        return _json_value(rng, ids), "not a move object"
    data = {"kind": rng.choice([*g.rs.moves, "x", 1, True]), "player": g.actor}
    for name in rng.sample(fields, rng.randrange(len(fields))):
        data[name] = _json_value(rng, ids)
    if rng.random() < 0.1:
        data["extra"] = 1
    return data, "random fields"


def check_move(E: Any, g: Any, data: Any, in_place: bool = False) -> list[str]:
    """The problems of feeding one forged move to the engine (empty: it behaved). `in_place`:
    the move is one of the Move objects `legal_moves` just listed, its fields then overwritten
    with the forged ones (an app that edits the move it picked)."""
    before = E.dumps(g)
    problems: list[str] = []
    try:
        move = E.Move.from_json(data)
    except E.StateError:
        return [] if E.dumps(g) == before else ["from_json changed the game"]
    except Exception as exc:
        return [f"from_json raised {type(exc).__name__}: {exc}"]
    listed = _move_key(E, move) in {_move_key(E, m) for m in E.legal_moves(g)}
    held = E.legal_moves(g) if in_place else []
    if held:
        for name in E._MOVE_FIELDS:
            setattr(held[-1], name, getattr(move, name))
        move = held[-1]
    try:
        why = E.explain_move(g, move)
    except Exception as exc:
        problems.append(f"explain_move raised {type(exc).__name__}: {exc}")
        why = None
    try:
        after = E.apply_move(g, move)
    except E.IllegalMove as exc:
        if listed:
            problems.append(f"a legal move was refused: {exc}")
        if not exc.rule:
            problems.append("IllegalMove names no rule")
        if why is None:
            problems.append("explain_move said legal, apply_move refused")
    except Exception as exc:
        problems.append(f"apply_move raised {type(exc).__name__}: {exc}")
    else:
        if not listed:
            problems.append("apply_move accepted a move legal_moves does not list")
        if why is not None:
            problems.append("explain_move refused a move apply_move accepted")
        bad = E.check_invariants(after)
        if bad:
            problems.append(f"invariants broken after the move: {bad[0]}")
        try:
            E.loads(E.dumps(after))
        except Exception as exc:
            problems.append(f"the state after the move does not load: {exc}")
    if E.dumps(g) != before:
        problems.append("the move changed the given game")
    return problems


def _save_paths(data: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    yield path, data
    if isinstance(data, dict):
        for k, v in data.items():
            yield from _save_paths(v, (*path, k))
    elif isinstance(data, list):
        for i, v in enumerate(data):
            yield from _save_paths(v, (*path, i))


def _card_lists(data: Any) -> list[tuple[Any, ...]]:
    """Paths of the lists of card numbers in a save."""
    names = ("hand", "portfolio", "treasury_row", "discard", "box", "court")
    out = [p for p, _ in _save_paths(data) if p and p[-1] in names]
    out += [("piles", k) for k in data.get("piles", {})]
    out += [("reserve", k) for k in data.get("reserve", {})]
    return out


def _get(data: Any, path: tuple[Any, ...]) -> Any:
    for k in path:
        data = data[k]
    return data


def mutate_save(rng: random.Random, data: Any) -> str:
    """Break a save (JSON data, in place) in a way the state schema allows; what was done."""
    ints = [p for p, v in _save_paths(data) if type(v) is int and p]
    how = rng.randrange(9)
    n = len(data["players"])
    if how == 0 and ints:  # a counter off by one (or more)
        path = rng.choice(ints)
        parent = _get(data, path[:-1])
        delta = rng.choice([1, -1, 2, n])
        parent[path[-1]] = max(0, parent[path[-1]] + delta)
        return f"{_addr(path)} {delta:+d}"
    if how == 1:  # a card duplicated, removed or moved
        lists = [p for p in _card_lists(data) if _get(data, p)]
        if not lists:
            return "no card list"
        src = rng.choice(lists)
        dst = rng.choice(_card_lists(data))
        what = rng.choice(["duplicated", "removed", "moved"])
        card = _get(data, src)[-1]
        if what != "duplicated":
            _get(data, src).pop()
        if what != "removed":
            _get(data, dst).append(card)
        return f"card {card} {what} {_addr(src)} -> {_addr(dst)}"
    if how == 2:  # the phase changed
        data["phase"] = rng.choice(["action", "follow", "refill", "marker", "hand-discard", "over"])
        if rng.random() < 0.3:
            data["resume"] = rng.choice(["action", "follow", "refill", "hand-discard"])
        return f"phase {data['phase']}"
    if how == 3:  # a seat out of range, or another seat
        name = rng.choice(["actor", "current", "start_player", "courtier", "follow_next",
                           "period_end_by"])
        data[name] = rng.choice([n, n + 1, 99, 0, 1, None, (data.get(name) or 0) + 1])
        return f"{name} = {data[name]}"
    if how == 4:  # two fields swapped
        pairs = [("round", "period"), ("current", "actor"), ("game_end_round", "final_round"),
                 ("discard", "box"), ("decree_display", "decree_deck"), ("turns", "round")]
        a, b = rng.choice(pairs)
        data[a], data[b] = data[b], data[a]
        return f"{a} <-> {b}"
    if how == 5:  # two players' fields swapped
        i, j = rng.randrange(n), rng.randrange(n)
        name = rng.choice(["hand", "portfolio", "royal_favors", "color", "markers", "plans"])
        pi, pj = data["players"][i], data["players"][j]
        pi[name], pj[name] = pj[name], pi[name]
        return f"players[{i}].{name} <-> players[{j}].{name}"
    if how == 6:  # the game end half-triggered, or a trigger fired out of turn
        choice = rng.randrange(3)
        if choice == 0:
            data["game_end_round"] = data["round"]
            return "game_end_round set alone"
        if choice == 1:
            data["final_round"] = None
            return "final_round cleared"
        data["fired"] = list(reversed(data["fired"]))[:1] * 2
        return "fired changed"
    if how == 7:  # a queue or a pending list changed
        name = rng.choice(["discard_queue", "pending_markers"])
        data[name] = rng.choice([[], [0], [n - 1, n - 1], list(range(n))])
        return f"{name} = {data[name]}"
    # a hand grown past its size (cards taken from the box, kept conserved)
    hand = data["players"][rng.randrange(n)]["hand"]
    while data["box"] and len(hand) < 12:
        hand.append(data["box"].pop())
    return "a hand of 12"


EDGES = (2**63 - 1, 2**63 - 2, 2**62, 2**53)  # at and near the largest integer a save holds


def edge_counter(rng: random.Random, data: Any) -> str:
    """Set one integer of a save (not its seed) to the edge of the 64-bit range (in place): a
    save the engine accepts must play on into saves it loads."""
    # the numbers under keys (counters; not the ids that lists of cards hold)
    ints = [p for p, v in _save_paths(data)
            if type(v) is int and p and isinstance(p[-1], str) and p != ("seed",)]
    if not ints:
        return "no counter"
    path = rng.choice(ints)
    value = rng.choice(EDGES)
    _get(data, path[:-1])[path[-1]] = value
    return f"{_addr(path)} = {value}"


def check_save(E: Any, text: str, play_on: bool = False) -> tuple[bool, list[str]]:
    """Load one save: (accepted, problems). `play_on`: then play it to the end (seeded random
    moves), every state on the way saved and loaded again (a number carried past what a save
    holds shows only when it grows, maybe many moves later)."""
    try:
        g = E.loads(text)
    except E.StateError:
        return False, []
    except Exception as exc:
        return False, [f"loads raised {type(exc).__name__}: {exc}"]
    problems: list[str] = []
    if E.check_invariants(g):
        problems.append("a save that breaks the invariants loaded")
    if g.phase == "over":
        return True, problems
    try:
        moves = E.legal_moves(g)
    except Exception as exc:
        return True, [f"legal_moves raised {type(exc).__name__}: {exc}"]
    if not moves:
        problems.append(f"a loaded save has no legal move ({g.phase})")
    for move in moves:
        try:
            after = E.apply_move(g, move)
        except Exception as exc:
            problems.append(f"legal move {move.to_json()} raised {type(exc).__name__}: {exc}")
            break
        bad = E.check_invariants(after)
        if bad:
            problems.append(f"legal move {move.to_json()} breaks the invariants: {bad[0]}")
            break
        try:
            E.loads(E.dumps(after))
        except E.StateError as exc:
            problems.append(f"the state after {move.to_json()} does not load: {exc}")
            break
    if E.dumps(g) != text:
        problems.append("a loaded save does not dump back to the same text")
    if play_on and not problems:
        problems += _play_on(E, g)
    return True, problems


def _play_on(E: Any, g: Any, limit: int = 2000) -> list[str]:
    """Seeded random moves from `g` to the end; the first state that does not save and load."""
    rng = random.Random(E.dumps(g))
    for _ in range(limit):
        if g.phase == "over":
            return []
        move = rng.choice(E.legal_moves(g))
        g = E.apply_move(g, move)
        try:
            E.loads(E.dumps(g))
        except E.StateError as exc:
            return [f"played on, the state after {move.to_json()} does not load: {exc}"]
    return []


@dataclass
class EngineSummary:
    """Counts of one engine fuzz run, and the distinct problems with an example each."""

    cases: int = 0
    refused: int = 0
    accepted: int = 0
    problems: dict[str, str] = field(default_factory=dict)  # problem -> example case

    def render(self, what: str) -> str:
        lines = [
            f"{what}: {self.cases} cases, {self.accepted} accepted, {self.refused} refused, "
            f"{len(self.problems)} distinct problems"
        ]
        lines += [f"  PROBLEM {p}\n      e.g. {ex}" for p, ex in sorted(self.problems.items())]
        return "\n".join(lines)


def fuzz_moves(E: Any, seed: int, cases: int) -> EngineSummary:
    """Forged moves against mid-game states."""
    states = engine_states(E, seed)
    rng = random.Random(f"moves:{seed}")
    out = EngineSummary()
    for index in range(cases):
        g = rng.choice(states)
        data, label = forge_move(rng, E, g)
        # (its own stream: the cases of a seed stay the cases they were)
        in_place = random.Random(f"in-place:{seed}:{index}").random() < 0.3
        problems = check_move(E, g, data, in_place)
        out.cases += 1
        accepted = False
        if not problems:
            try:
                E.apply_move(g, E.Move.from_json(data))
                accepted = True
            except (E.StateError, E.IllegalMove):
                pass
        out.accepted += accepted
        out.refused += not accepted
        for p in problems:
            out.problems.setdefault(re.sub(r"\d+", "N", p)[:160], f"case {index}: {label}: {p}")
    return out


def fuzz_saves(E: Any, seed: int, cases: int) -> EngineSummary:
    """Semantically broken saved games (each from a real mid-game save, one to three changes;
    or, in about one case in seven, a valid save with one number at the edge of 64 bits, then
    played to the end)."""
    states = engine_states(E, seed)
    rng = random.Random(f"saves:{seed}")
    out = EngineSummary()
    for index in range(cases):
        data = copy.deepcopy(E.to_json(rng.choice(states)))
        # (its own stream, as in fuzz_moves: the other cases of a seed stay what they were)
        edge = random.Random(f"edge:{seed}:{index}")
        edged = edge.random() < 0.15
        broken = copy.deepcopy(data) if edged else data  # the draws are made all the same
        labels = [mutate_save(rng, broken) for _ in range(rng.choice([1, 1, 2, 3]))]
        if edged:
            labels = [edge_counter(edge, data)]
        text = json.dumps(data, sort_keys=True, ensure_ascii=False)
        accepted, problems = check_save(E, text, play_on=edged)
        out.cases += 1
        out.accepted += accepted
        out.refused += not accepted
        for p in problems:
            out.problems.setdefault(
                re.sub(r"\d+", "N", p)[:160], f"case {index}: {'; '.join(labels)}: {p}"
            )
    return out


def engine_main(which: str, seed: int, cases: int, engine: Path) -> int:
    """Run the engine fuzzers; 0 when every case behaved."""
    E = load_generated_engine(engine)
    failed = False
    for what, run in (("moves", fuzz_moves), ("saves", fuzz_saves)):
        if which in (what, "all"):
            summary = run(E, seed, cases)
            print(summary.render(f"engine {what}"))
            failed |= bool(summary.problems)
    return 1 if failed else 0


# === end of the engine fuzzers ===================================================================


def main(argv: list[str] | None = None) -> int:
    """`python3 -m tools.fuzz`: 0 when every case behaved, 1 when any had a problem."""
    # The fuzzer tests the pipeline: no build cache short cuts, and nothing in ~/.cache.
    os.environ["LISBOA_RULES_CACHE_DIR"] = "off"
    p = argparse.ArgumentParser(
        prog="python3 -m tools.fuzz",
        description=(__doc__ or "").split("\n\n")[0],
        epilog="mutators: " + ", ".join(sorted(MUTATORS)),
    )
    p.add_argument("--cases", type=int, default=500, help="number of cases (default 500)")
    p.add_argument("--seed", type=int, default=0, help="run seed (default 0)")
    p.add_argument("--start", type=int, default=0, help="first case index (default 0)")
    p.add_argument("--case", type=int, action="append", default=[],
                   help="run only this case index (repeatable); prints its details")
    p.add_argument("--rules", type=Path, default=Path("rules"), help="rules folder to mutate")
    p.add_argument("--only", action="append", default=[], choices=sorted(MUTATORS),
                   metavar="MUTATOR", help="use only these mutators (repeatable)")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT,
                   help=f"seconds per case before it counts as a hang "
                   f"(default {DEFAULT_TIMEOUT:g})")
    p.add_argument("--save", type=Path, metavar="DIR",
                   help="write the rules of every failing case to DIR/<seed>-<index>/")
    p.add_argument("--sweep", action="store_true",
                   help="instead of random cases: leave out each optional key in turn, then "
                   "every optional key of a file at once")
    p.add_argument("-v", "--verbose", action="store_true", help="print every case")
    p.add_argument("--engine", choices=("moves", "saves", "all"),
                   help="instead of rules files: fuzz the generated engine with forged moves, "
                   "broken saved games, or both")
    p.add_argument("--engine-file", type=Path, default=ENGINE_FILE, metavar="PY",
                   help=f"the engine that --engine fuzzes (default {ENGINE_FILE})")
    p.add_argument("--effects", type=int, metavar="N",
                   help="instead of mutating rules files: write N house rules in the effect "
                   "language, build each with rules/ and play its engine (tools/fuzz_effects.py);"
                   " with --case, only those indexes")
    p.add_argument("--effects-known", action="store_true",
                   help="run the effect-language house rules issue 33 measured, one per case")
    p.add_argument("--show", action="store_true",
                   help="with --effects: print each house rule, its diagnostics and traceback")
    args = p.parse_args(argv)
    if args.effects is not None or args.effects_known:
        from tools import fuzz_effects

        timeout = args.timeout if args.timeout != DEFAULT_TIMEOUT else \
            fuzz_effects.DEFAULT_TIMEOUT
        return fuzz_effects.effects_main(
            args.seed, args.case or range(args.start, args.start + (args.effects or 0)),
            known=args.effects_known, timeout=timeout, save=args.save, verbose=args.verbose,
            show=bool(args.case) or args.show)
    if args.engine:
        return engine_main(args.engine, args.seed, args.cases, args.engine_file)
    indexes = args.case or list(range(args.start, args.start + args.cases))

    done = [0, 0]  # cases, cases with problems

    def progress(o: Outcome) -> None:
        done[0] += 1
        done[1] += not o.ok
        if done[0] % 1000 == 0:
            print(f"... {done[0]} cases, {done[1]} with problems", file=sys.stderr, flush=True)
        if args.verbose or args.case or not o.ok:
            status = "ok" if o.ok else "PROBLEM"
            print(f"[{status}] exit {o.exit_code} {o.seconds:.2f}s {o.case.label}", flush=True)
            for problem in o.signatures if not o.ok else ():
                print(f"    {problem}")
            if args.case:
                print(o.stderr, end="")
                print(o.traceback, end="")
        if args.save is not None and (not o.ok or args.case):
            dest = args.save / f"{o.case.seed}-{o.case.index}"
            shutil.rmtree(dest, ignore_errors=True)
            write_rules(o.case.files, dest / "rules")
            (dest / "case.txt").write_text(
                o.case.label + "\n\n" + "\n".join(o.problems) + "\n\n" + o.stderr + o.traceback,
                encoding="utf-8")

    summary = run_many(args.rules, args.seed, indexes, timeout=args.timeout, only=args.only,
                       progress=progress, sweep=args.sweep)
    print(summary.render())
    return 0 if not summary.failed else 1


if __name__ == "__main__":
    sys.exit(main())
