"""Stage 1, load: rules/*.yaml bytes -> `LoadedDoc` (plain JSON-like data + 1-based span tables).

The loader is strict on purpose: YAML 1.2 core scalars only, no duplicate keys, no anchors,
aliases, merge keys or exotic tags, string keys only, bounded size and depth. It never raises
for bad input: every problem, even an unexpected exception, comes back as a `Diagnostic`.
"""

from __future__ import annotations

import bisect
import dataclasses
import functools
import hashlib
import math
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from lisboa_rules.core.diagnostics import Diagnostic, Related
from lisboa_rules.core.inputs import MAX_FILE_BYTES, discover, read_regular
from lisboa_rules.core.source import PathTuple, Span, display_path, nearest

MAX_DEPTH = 64  # nesting of collections; no rule needs more and it bounds recursion

_CORE = "tag:yaml.org,2002:"
ALLOWED_TAGS = frozenset(_CORE + t for t in ("str", "int", "float", "bool", "null", "seq", "map"))

# The same set of characters PyYAML's reader refuses; checked up front for an exact position.
_NOT_PRINTABLE = re.compile(
    "[^\x09\x0a\x0d\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]"
)
_ODD_BREAKS = re.compile("[\r\x85\u2028\u2029]")  # line breaks for PyYAML, not for editors
# Control characters and line breaks, and surrogates: bytes of a file name that are not UTF-8.
_UNSAFE_NAME = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")
_INT_RE = re.compile(r"(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)\Z")
_FLOAT_RE = re.compile(
    r"(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))\Z"
)
_MAX_INT = 10 ** (sys.get_int_max_str_digits() or 4300)  # 0 means "no limit" for Python
_BOOL_VALUES = {"true": True, "True": True, "TRUE": True}
_BOOL_VALUES.update(dict.fromkeys(("false", "False", "FALSE"), False))

_Base: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class LoadError(Exception):
    """Raised inside the loader to abort one file with a ready-made diagnostic."""

    def __init__(self, diagnostic: Diagnostic) -> None:
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic


class StrictLoader(_Base):  # type: ignore[misc, valid-type]
    """A safe loader with YAML 1.2 core-schema resolution and only JSON-compatible constructors."""

    # Own dicts, so the shared SafeLoader class tables are never mutated.
    yaml_implicit_resolvers: dict[Any, Any] = {}  # noqa: RUF012 (PyYAML API: class-level table)
    yaml_constructors: dict[Any, Any] = {}  # noqa: RUF012


def _construct_null(loader: yaml.BaseLoader, node: yaml.Node) -> None:
    """Return None for a null scalar."""
    return None


def _construct_bool(loader: yaml.BaseLoader, node: yaml.Node) -> bool:
    """Return a YAML 1.2 boolean: only true/false spellings (never yes/no/on/off)."""
    value = str(node.value)
    if value not in _BOOL_VALUES:
        raise _bad_scalar(node, "bool")
    return _BOOL_VALUES[value]


def _construct_int(loader: yaml.BaseLoader, node: yaml.Node) -> int:
    """Return a YAML 1.2 integer: `010` is ten, `0o10` eight, `0x10` sixteen."""
    value = str(node.value)
    if not _INT_RE.match(value):
        raise _bad_scalar(node, "int")
    if value.startswith(("0o", "0x")):
        number = int(value[2:], 8 if value[1] == "o" else 16)
    else:
        number = int(value, 10)  # ValueError beyond Python's int-to-str digit limit
    if abs(number) >= _MAX_INT:  # the same limit for 0x/0o (and when Python has none)
        raise ValueError("too many digits")
    return number


def _construct_float(loader: yaml.BaseLoader, node: yaml.Node) -> float:
    """Return a YAML 1.2 float, including `1e3`, `.inf` and `.nan`."""
    value = str(node.value)
    if not (_FLOAT_RE.match(value) or _INT_RE.match(value)):
        raise _bad_scalar(node, "float")
    lowered = value.lower()
    if lowered.endswith(".inf"):
        return -math.inf if lowered.startswith("-") else math.inf
    if lowered == ".nan":
        return math.nan
    return float(_construct_int(loader, node)) if _INT_RE.match(value) else float(value)


def _construct_str(loader: yaml.BaseLoader, node: yaml.Node) -> str:
    """Return the scalar text."""
    return str(node.value)


def _construct_unknown(loader: yaml.BaseLoader, node: yaml.Node) -> Any:
    """Refuse every tag without a JSON-compatible constructor."""
    raise yaml.constructor.ConstructorError(
        None, None, f"tag {node.tag!r} is not allowed", node.start_mark
    )


def _bad_scalar(node: yaml.Node, tag: str) -> yaml.constructor.ConstructorError:
    """Return the error for a scalar that does not fit its explicit tag."""
    return yaml.constructor.ConstructorError(
        None, None, f"cannot read {node.value!r} as !!{tag}", node.start_mark
    )


def _setup_loader() -> None:
    """Register the YAML 1.2 core resolvers and the JSON-only constructors."""
    add = StrictLoader.add_implicit_resolver
    add(_CORE + "bool", re.compile("|".join(_BOOL_VALUES) + r"\Z"), list("tTfF"))
    # int before float: resolvers are tried in registration order.
    add(_CORE + "int", _INT_RE, list("-+0123456789"))
    add(_CORE + "float", _FLOAT_RE, list("-+0123456789."))
    add(_CORE + "null", re.compile(r"(?:~|null|Null|NULL|)\Z"), ["~", "n", "N", ""])
    for name, fn in (
        ("null", _construct_null),
        ("bool", _construct_bool),
        ("int", _construct_int),
        ("float", _construct_float),
        ("str", _construct_str),
    ):
        StrictLoader.add_constructor(_CORE + name, fn)
    # `_Builder` builds collections itself; these keep `yaml.load(text, StrictLoader)` usable.
    StrictLoader.add_constructor(_CORE + "seq", yaml.constructor.SafeConstructor.construct_yaml_seq)
    StrictLoader.add_constructor(_CORE + "map", yaml.constructor.SafeConstructor.construct_yaml_map)
    StrictLoader.add_constructor(None, _construct_unknown)


_setup_loader()


@dataclass(frozen=True, eq=False)
class LoadedDoc:
    """One loaded rules file: plain data plus 1-based spans of every value and key."""

    path: Path
    display: str
    text: str
    data: Any
    spans: dict[PathTuple, Span] = field(repr=False)
    key_spans: dict[PathTuple, Span] = field(repr=False)
    digest: str = ""
    # The path relative to the rules folder (POSIX), the same on every checkout and from every
    # working directory: what generated files may name. `display` is for diagnostics only.
    source: str = ""

    def span_for(self, path: PathTuple, key: bool = False) -> Span:
        """Return the span at `path` (its key when `key`), else the nearest ancestor's value."""
        if key and path in self.key_spans:
            return self.key_spans[path]
        return nearest(self.spans, path) or Span.point(self.display)


# --- files and directories ---------------------------------------------------------------


def load_file(
    path: Path, *, max_bytes: int = MAX_FILE_BYTES, max_depth: int = MAX_DEPTH
) -> tuple[LoadedDoc | None, list[Diagnostic]]:
    """Load one YAML file; return (None, errors) when it cannot be used."""
    display = _display(path)

    def run() -> tuple[LoadedDoc | None, list[Diagnostic]]:
        raw = _read_bytes(path, display, max_bytes)
        return _parse(path, display, raw, _decode(raw, display), max_depth)

    return _guarded(display, run)


def load_text(
    text: str, display: str = "<string>", *, max_depth: int = MAX_DEPTH
) -> tuple[LoadedDoc | None, list[Diagnostic]]:
    """Load YAML from a string (tests and tools); the same checks as `load_file` minus I/O."""

    def run() -> tuple[LoadedDoc | None, list[Diagnostic]]:
        raw = text.encode("utf-8", "surrogatepass")
        return _parse(Path(display), display, raw, _decode(raw, display), max_depth)

    return _guarded(display, run)


def _guarded(
    display: str, run: Callable[[], tuple[LoadedDoc | None, list[Diagnostic]]]
) -> tuple[LoadedDoc | None, list[Diagnostic]]:
    """Run one load and turn every failure into a diagnostic (bad input must never raise)."""
    try:
        return run()
    except LoadError as exc:
        return None, [exc.diagnostic]
    except RecursionError:
        return None, [_diag("nesting-too-deep", "the data is nested too deeply", display)]
    except Exception as exc:
        msg = f"could not load this file ({type(exc).__name__}: {_clean(str(exc))})"
        return None, [_diag("yaml-syntax", msg, display)]


def load_dir(
    rules_dir: Path, *, order: Sequence[Path] | None = None
) -> tuple[list[LoadedDoc], list[Diagnostic]]:
    """Load all rules files under `rules_dir` (or exactly `order`, relative to it, for tests)."""
    display = _display(rules_dir)
    if not rules_dir.is_dir():
        what = "does not exist" if not rules_dir.exists() else "is not a directory"
        return [], [Diagnostic("unreadable-file", f"rules directory '{display}' {what}", None)]
    paths = discover(rules_dir) if order is None else [rules_dir / p for p in order]
    if not paths:
        msg = f"no .yaml or .yml files found under '{display}'"
        return [], [Diagnostic("no-rules-files", msg, None)]
    docs: list[LoadedDoc] = []
    diags: list[Diagnostic] = []
    for p in paths:
        rel = _relative(p, rules_dir)
        if _UNSAFE_NAME.search(rel):
            # Generated files name their sources in comments; a line break in a file name
            # would end the comment and turn the rest of the name into code.
            msg = ("the file name contains a line break, a control character or bytes that are "
                   "not UTF-8; rename the file")
            diags.append(Diagnostic("unreadable-file", msg, Span.point(_display(p))))
            continue
        doc, found = load_file(p)
        if doc is not None:
            doc = dataclasses.replace(doc, source=rel)
        diags.extend(found)
        if doc is not None:
            docs.append(doc)
    return docs, diags


def _relative(path: Path, root: Path) -> str:
    """`path` relative to `root` as a POSIX string (the name itself when it is elsewhere)."""
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.name


def _display(path: Path) -> str:
    """The display path of a file without following the file itself when it is a symlink
    (a symlink loop named *.yaml must give unreadable-file, not a crash)."""
    try:
        if path.name and path.is_symlink():
            parent = display_path(path.parent)
            return path.name if parent in ("", ".") else f"{parent}/{path.name}"
        return display_path(path)
    except (RuntimeError, OSError, ValueError):  # a symlink loop further up
        return path.as_posix()


def _read_bytes(path: Path, display: str, max_bytes: int) -> bytes:
    """Read at most `max_bytes` (+1 to detect overflow) without trusting stat()."""
    try:
        raw = read_regular(path, max_bytes)
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise LoadError(
            Diagnostic("unreadable-file", f"cannot read file: {reason}", Span.point(display))
        ) from exc
    if raw is None:
        msg = "cannot read file: not a regular file"
        raise LoadError(Diagnostic("unreadable-file", msg, Span.point(display)))
    if len(raw) > max_bytes:
        msg = f"file is larger than the limit of {max_bytes} bytes"
        raise LoadError(_diag("file-too-large", msg, display))
    return raw


def _decode(raw: bytes, display: str) -> str:
    """Decode strict UTF-8; report the line:col of the first bad byte."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        before = raw[: exc.start]
        line = before.count(b"\n") + 1
        col = len(before[before.rfind(b"\n") + 1 :].decode("utf-8", "replace")) + 1
        msg = f"invalid UTF-8 byte 0x{raw[exc.start]:02x}; save the file as UTF-8"
        raise LoadError(_diag("not-utf8", msg, display, line, col)) from None
    # A leading BOM is allowed; dropped here so that both PyYAML loaders (the C one does not
    # count it, the Python one does) give the same positions, the ones editors show.
    text = text.removeprefix("\ufeff")
    bad = _NOT_PRINTABLE.search(text)
    if bad is not None:
        line, col = _line_col(text, bad.start())
        msg = f"control character U+{ord(bad.group()):04X} is not allowed in YAML"
        raise LoadError(_diag("not-utf8", msg, display, line, col))
    return text


def _line_col(text: str, index: int) -> tuple[int, int]:
    """Return the 1-based line and column of a character index."""
    line = text.count("\n", 0, index) + 1
    return line, index - (text.rfind("\n", 0, index) + 1) + 1


def _diag(code: str, message: str, display: str, line: int = 1, col: int = 1) -> Diagnostic:
    """Return a diagnostic at one point of a file."""
    return Diagnostic(code, message, Span.point(display, line, col))


# --- parsing -------------------------------------------------------------------------------


def _parse(
    path: Path, display: str, raw: bytes, text: str, max_depth: int
) -> tuple[LoadedDoc | None, list[Diagnostic]]:
    """Scan events, then compose and build data + spans from the same node tree."""
    try:
        diags = _scan_events(text, display, max_depth)
        if diags:
            return None, diags
        builder = _compose(text, display)
    except yaml.MarkedYAMLError as exc:
        return None, [_syntax_diag(exc, display, text)]
    except yaml.YAMLError as exc:
        return None, [_diag("yaml-syntax", _clean(str(exc)), display)]
    if builder.diags:
        return None, builder.diags
    if builder.data is None:
        return None, [_diag("empty-document", "the file contains no data", display)]
    doc = LoadedDoc(
        path=path.resolve(),
        display=display,
        text=text,
        data=builder.data,
        spans=builder.spans,
        key_spans=builder.key_spans,
        digest=hashlib.sha256(raw).hexdigest(),
        source=path.name,
    )
    return doc, []


def _compose(text: str, display: str) -> _Builder:
    """Compose the single document once and build its data from that same node tree."""
    loader = StrictLoader(text)
    try:
        builder = _Builder(loader, display, text)
        node = loader.get_single_node()
        if node is not None:
            builder.data = builder.build(node)
        return builder
    finally:
        loader.dispose()


def _scan_events(text: str, display: str, max_depth: int) -> list[Diagnostic]:
    """Reject anchors, aliases, foreign tags, extra documents and deep nesting before composing.

    Scanning events first means an alias bomb is refused before any node graph exists, and the
    (recursive) composer never sees more than `max_depth` levels.
    """
    try:
        return _scan(_events(text), text, display, max_depth)
    except yaml.MarkedYAMLError as exc:
        if "nesting depth" not in str(exc.problem):
            raise
        # libyaml (PyYAML >= 6.0.4) refuses nesting deeper than its own limit (1000) while it
        # reads ahead, before this scan reaches `max_depth`. The pure-Python parser yields the
        # same events without that limit, so the error is the usual one at the usual place.
        return _scan(_events(text, yaml.SafeLoader), text, display, max_depth)


def _scan(
    events: Iterator[yaml.Event], text: str, display: str, max_depth: int
) -> list[Diagnostic]:
    diags: list[Diagnostic] = []
    depth = 0
    documents = 0
    for event in events:
        span = _mark_span(display, event.start_mark, event.end_mark, text)
        if isinstance(event, yaml.DocumentStartEvent):
            documents += 1
            if documents == 2:
                msg = "the file contains more than one YAML document"
                return [Diagnostic("multi-document", msg, span)]
        elif isinstance(event, yaml.AliasEvent):
            diags.append(Diagnostic("yaml-alias", f"alias '*{event.anchor}' is not allowed", span))
        elif isinstance(event, yaml.NodeEvent):
            diags.extend(_check_node_event(event, span))
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > max_depth:
                    msg = f"the data is nested more than {max_depth} levels deep"
                    return [*diags, Diagnostic("nesting-too-deep", msg, span)]
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1
    return diags


def _events(text: str, parser: type[yaml.SafeLoader] | None = None) -> Iterator[yaml.Event]:
    """Yield parser events of `text` with the strict loader's parser (or `parser`)."""
    loader = (parser or StrictLoader)(text)
    try:
        while loader.check_event():
            yield loader.get_event()
    finally:
        loader.dispose()


def _check_node_event(event: yaml.NodeEvent, span: Span) -> list[Diagnostic]:
    """Return diagnostics for an anchor or a non-core tag on one node event."""
    found: list[Diagnostic] = []
    if event.anchor is not None:
        found.append(Diagnostic("yaml-alias", f"anchor '&{event.anchor}' is not allowed", span))
    tag = getattr(event, "tag", None)
    if tag is not None and tag not in ALLOWED_TAGS:
        shown = "!!" + tag[len(_CORE) :] if tag.startswith(_CORE) else tag
        found.append(Diagnostic("yaml-tag", f"tag '{shown}' is not allowed", span))
    return found


def _mark_span(display: str, start: Any, end: Any, text: str = "") -> Span:
    """Convert PyYAML's 0-based marks to a 1-based span (the one place this happens).

    PyYAML also breaks lines at a lone CR, NEL, U+2028 and U+2029; editors and `grep -n` count
    only LF. When the text holds any of those, positions come from the marks' character index.
    """
    starts = _line_starts(text)
    if starts is None:
        return Span(display, start.line + 1, start.column + 1, end.line + 1, end.column + 1)
    return Span(display, *_index_pos(starts, start.index), *_index_pos(starts, end.index))


@functools.lru_cache(maxsize=4)
def _line_starts(text: str) -> tuple[int, ...] | None:
    """Offsets of LF-separated line starts, or None when PyYAML's line numbers already fit."""
    if not _ODD_BREAKS.search(text):
        return None
    return (0, *(m.end() for m in re.finditer("\n", text)))


def _index_pos(starts: tuple[int, ...], index: int) -> tuple[int, int]:
    """The 1-based LF line and column of a character index."""
    line = bisect.bisect_right(starts, index)
    return line, index - starts[line - 1] + 1


def _syntax_diag(exc: yaml.MarkedYAMLError, display: str, text: str) -> Diagnostic:
    """Turn a PyYAML error with marks into a yaml-syntax (or yaml-tag) diagnostic."""
    mark = exc.problem_mark or exc.context_mark
    span = _clamp(_mark_span(display, mark, mark, text), text) if mark is not None else \
        Span.point(display)
    code = "yaml-tag" if isinstance(exc, yaml.constructor.ConstructorError) else "yaml-syntax"
    message = _clean(exc.problem or exc.context or "invalid YAML")
    if _char_at(text, span) == "\t":
        # libyaml's wording does not name the culprit; tabs are the classic beginner trap.
        message += " (a tab: YAML indentation must use spaces)"
    related: tuple[Related, ...] = ()
    if exc.context and exc.problem:
        ctx = exc.context_mark
        ctx_span = _clamp(_mark_span(display, ctx, ctx, text), text) if ctx is not None else None
        related = (Related(_clean(exc.context), ctx_span),)
    return Diagnostic(code, message, span, related)


def _clamp(span: Span, text: str) -> Span:
    """Keep a span inside the text: libyaml puts end-of-stream errors of a file without a final
    newline on a line that does not exist."""
    lines = text.split("\n")

    def fit(line: int, col: int) -> tuple[int, int]:
        if line > len(lines):
            return len(lines), len(lines[-1]) + 1
        line = max(line, 1)
        return line, max(1, min(col, len(lines[line - 1]) + 1))

    (line, col), (end_line, end_col) = fit(span.line, span.col), fit(span.end_line, span.end_col)
    return Span(span.file, line, col, end_line, end_col)


def _char_at(text: str, span: Span) -> str:
    """Return the character at a span's start, or '' past the end."""
    lines = text.split("\n")
    if span.line > len(lines):
        return ""
    line = lines[span.line - 1]
    return line[span.col - 1] if span.col <= len(line) else ""


def _shorten(text: str, limit: int = 20) -> str:
    """Cut a long value for a message."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _clean(message: str) -> str:
    """Normalise a library message to our style: lower-case start, no trailing period."""
    message = message.strip().rstrip(".")
    return message[:1].lower() + message[1:] if message else "invalid YAML"


class _Builder:
    """Walk one composed node tree into plain data, span tables and structural diagnostics."""

    def __init__(self, loader: StrictLoader, display: str, text: str = "") -> None:
        self.loader = loader
        self.display = display
        self.text = text
        self.spans: dict[PathTuple, Span] = {}
        self.key_spans: dict[PathTuple, Span] = {}
        self.diags: list[Diagnostic] = []
        self.data: Any = None

    def span(self, node: yaml.Node) -> Span:
        """Return the 1-based span of a node."""
        return _mark_span(self.display, node.start_mark, node.end_mark, self.text)

    def build(self, node: yaml.Node, path: PathTuple = ()) -> Any:
        """Return the plain value of `node`, recording spans under `path`."""
        self.spans[path] = self.span(node)
        if isinstance(node, yaml.MappingNode):
            return self._mapping(node, path)
        if isinstance(node, yaml.SequenceNode):
            return [self.build(item, (*path, i)) for i, item in enumerate(node.value)]
        try:
            return self.loader.construct_object(node, deep=True)
        except ValueError:  # an integer beyond Python's int-to-str digit limit (4300)
            msg = f"the number {_shorten(str(node.value))} has too many digits"
            self.diags.append(Diagnostic("yaml-syntax", msg, self.span(node)))
            return None

    def _mapping(self, node: yaml.MappingNode, path: PathTuple) -> dict[str, Any]:
        """Return a dict, reporting merge, non-string and duplicate keys."""
        out: dict[str, Any] = {}
        first: dict[str, yaml.Node] = {}
        for key_node, value_node in node.value:
            key = self._key(key_node)
            if key is None:
                continue
            if key in first:
                self._duplicate(key, first[key], key_node)
                continue
            first[key] = key_node
            self.key_spans[(*path, key)] = self.span(key_node)
            out[key] = self.build(value_node, (*path, key))
        return out

    def _key(self, node: yaml.Node) -> str | None:
        """Return a string key, or record why the key is refused and return None."""
        span = self.span(node)
        if not isinstance(node, yaml.ScalarNode):
            msg = "mapping keys must be strings, not collections"
            self.diags.append(Diagnostic("non-string-key", msg, span))
            return None
        if node.tag != _CORE + "str":
            msg = f"mapping key '{node.value}' is not a string; quote it"
            self.diags.append(Diagnostic("non-string-key", msg, span))
            return None
        if node.value == "<<":
            msg = "merge key '<<' is not allowed; write the keys out"
            self.diags.append(Diagnostic("yaml-merge-key", msg, span))
            return None
        return str(node.value)

    def _duplicate(self, key: str, first: yaml.Node, again: yaml.Node) -> None:
        """Record a duplicate key at its second occurrence with a note at the first."""
        line = first.start_mark.line + 1
        note = Related(f"'{key}' first defined here", self.span(first))
        msg = f"duplicate key '{key}' (first defined at line {line})"
        self.diags.append(Diagnostic("duplicate-key", msg, self.span(again), (note,)))
