"""Stage 1, load: rules/*.yaml bytes -> `LoadedDoc` (plain JSON-like data + 1-based span tables).

The loader is strict on purpose: YAML 1.2 core scalars only, no duplicate keys, no anchors,
aliases, merge keys or exotic tags, string keys only, bounded size and depth. It never raises
for bad input: every problem, even an unexpected exception, comes back as a `Diagnostic`.
"""

from __future__ import annotations

import bisect
import copy
import dataclasses
import functools
import hashlib
import math
import re
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
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
    add(_CORE + "bool", re.compile("(?:" + "|".join(_BOOL_VALUES) + r")\Z"), list("tTfF"))
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
    # A file given besides the rules folder (load_dir's `extra`: a house rule kept elsewhere).
    extra: bool = False
    # A merged document (the overlay's): the files its values come from, by shown name, with
    # their own spans (a diagnostic names a value by its path in the file the user wrote), and
    # which of them are house rules (their `source:` is optional free text)
    origins: Mapping[str, Mapping[PathTuple, Span]] = field(default_factory=dict, repr=False)
    house: frozenset[str] = frozenset()

    def span_for(self, path: PathTuple, key: bool = False) -> Span:
        """Return the span at `path` (its key when `key`), else the nearest ancestor's value."""
        if key and path in self.key_spans:
            return self.key_spans[path]
        return nearest(self.spans, path) or Span.point(self.display)


# --- files and directories ---------------------------------------------------------------


# What a process that loads the same files again and again (`build --watch`) keeps of the
# files it loaded: by path, the file's display name, nesting limit and bytes' digest with the
# document made of them (see `load_file`'s `memo`).
Memo = dict[str, tuple[tuple[str, int, str], "LoadedDoc"]]


def load_file(
    path: Path, *, max_bytes: int = MAX_FILE_BYTES, max_depth: int = MAX_DEPTH,
    memo: Memo | None = None,
) -> tuple[LoadedDoc | None, list[Diagnostic]]:
    """Load one YAML file; return (None, errors) when it cannot be used. `memo`: the
    documents loaded before in this process; a file read again with the same bytes (and the
    same display name) is not parsed again: the caller gets a copy of what it gave (its own
    data and span tables, which no later pass of a build can change in the memo)."""
    display = _display(path)

    def run() -> tuple[LoadedDoc | None, list[Diagnostic]]:
        raw = _read_bytes(path, display, max_bytes)
        text = _decode(raw, display)
        if memo is None:
            return _parse(path, display, raw, text, max_depth)
        key = (display, max_depth, hashlib.sha256(raw).hexdigest())
        kept = memo.get(str(path))
        if kept is not None and kept[0] == key:
            return _copy_doc(kept[1], path), []
        doc, diags = _parse(path, display, raw, text, max_depth)
        if doc is None:
            memo.pop(str(path), None)
            return doc, diags
        memo[str(path)] = (key, doc)
        return _copy_doc(doc, path), diags

    return _guarded(display, run)


def _copy_doc(doc: LoadedDoc, path: Path) -> LoadedDoc:
    """A document as `_parse` makes it from the same bytes: its own copy of the data (plain
    mappings, lists and scalars: the loader refuses aliases, so nothing in it is shared) and of
    the span tables (spans are frozen)."""
    return dataclasses.replace(doc, path=path.resolve(), data=_copy_data(doc.data),
                               spans=dict(doc.spans), key_spans=dict(doc.key_spans))


def _copy_data(value: Any) -> Any:
    t = type(value)
    if t is dict:
        return {k: _copy_data(v) for k, v in value.items()}
    if t is list:
        return [_copy_data(v) for v in value]
    if t in (str, int, float, bool) or value is None:
        return value
    return copy.deepcopy(value)  # no other leaf is made; were one, it is copied too


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


EXTRA_FOLDER = "variants"  # where an extra file counts as being, for the generated files


def load_dir(
    rules_dir: Path, *, order: Sequence[Path] | None = None, extra: Sequence[Path] = (),
    memo: Memo | None = None,
) -> tuple[list[LoadedDoc], list[Diagnostic]]:
    """Load all rules files under `rules_dir` (or exactly `order`, relative to it, for tests),
    then the `extra` files (house-rule variants kept outside the rules folder).

    An extra file is loaded and checked like any rules file, and its diagnostics name its own
    path; the generated files name it as if it were in the rules folder's `variants/`
    (`source` is `variants/<file name>`: no path of the user's machine gets into them). An
    extra whose name a rules file there (or another extra) has already is refused, since the
    two could not be told apart. `memo`: see `load_file`."""
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
    named = [(p, _relative(p, rules_dir), False) for p in paths]
    taken = {rel: p for p, rel, _ in named}
    for p in extra:
        rel = f"{EXTRA_FOLDER}/{p.name}"
        if rel in taken and _same_file(taken[rel], p):
            continue  # given twice, or a file of the rules folder's own variants
        if rel in taken:
            msg = (f"a file named '{p.name}' is among the rules' {EXTRA_FOLDER} already "
                   f"('{_display(taken[rel])}'); rename the house-rule file")
            diags.append(Diagnostic("duplicate-id", msg, Span.point(_display(p))))
            continue
        taken[rel] = p
        named.append((p, rel, True))
    for p, rel, is_extra in named:
        if _UNSAFE_NAME.search(rel):
            # Generated files name their sources in comments; a line break in a file name
            # would end the comment and turn the rest of the name into code.
            msg = ("the file name contains a line break, a control character or bytes that are "
                   "not UTF-8; rename the file")
            diags.append(Diagnostic("unreadable-file", msg, Span.point(_display(p))))
            continue
        doc, found = load_file(p, memo=memo)
        if doc is not None:
            doc = dataclasses.replace(doc, source=rel, extra=is_extra)
        diags.extend(found)
        if doc is not None:
            docs.append(doc)
    return docs, diags


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except (OSError, RuntimeError):
        return False


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
    """One pass over the parser's events: check them and build data + spans from them."""
    try:
        diags, builder = _scan_events(text, display, max_depth)
        if diags:
            return None, diags
    except yaml.MarkedYAMLError as exc:
        return None, [_syntax_diag(exc, display, text)]
    except yaml.YAMLError as exc:
        return None, [_diag("yaml-syntax", _clean(str(exc)), display)]
    assert builder is not None
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


def _scan_events(
    text: str, display: str, max_depth: int
) -> tuple[list[Diagnostic], _Builder | None]:
    """Check the events (no anchors, aliases, foreign tags, extra documents or deep nesting)
    and build the data and spans from the same events, in one pass over the file.

    The checks come first: when one fails, its diagnostics are all that is reported (an alias
    bomb is refused before anything is built from it, and nothing recursive ever sees more than
    `max_depth` levels); else a value that does not fit its tag, and then the builder's own
    diagnostics (duplicate, merge and non-string keys).
    """
    strict = StrictLoader("")  # resolves and constructs scalars with the strict rules
    try:
        try:
            return _one_pass(_events(text), strict, text, display, max_depth)
        except yaml.MarkedYAMLError as exc:
            if "nesting depth" not in str(exc.problem):
                raise
            # libyaml (PyYAML >= 6.0.4) refuses nesting deeper than its own limit (1000) while
            # it reads ahead, before this scan reaches `max_depth`. The pure-Python parser
            # yields the same events without that limit, so the error is the usual one at the
            # usual place.
            return _one_pass(_events(text, yaml.SafeLoader), strict, text, display, max_depth)
    finally:
        strict.dispose()


class _Frame:
    """A mapping or sequence being built: its path, its value, and for a mapping the key
    whose value comes next (`skip`: that value is not built: a refused or repeated key)."""

    __slots__ = ("first", "is_map", "key", "out", "path", "skip", "start", "want_key")

    def __init__(self, is_map: bool, path: PathTuple, start: Any) -> None:
        self.is_map = is_map
        self.path = path
        self.start = start
        self.out: Any = {} if is_map else []
        self.first: dict[str, yaml.Node] = {}
        self.key = ""
        self.want_key = True
        self.skip = False


def _one_pass(
    events: Iterator[Any], strict: StrictLoader, text: str, display: str, max_depth: int
) -> tuple[list[Diagnostic], _Builder | None]:
    b = _Builder(strict, display, text)
    diags: list[Diagnostic] = []
    failure: Exception | None = None  # a scalar that does not fit its tag (reported last)
    depth = 0
    documents = 0
    stack: list[_Frame] = []
    skipping = 0  # nesting inside a node that is not built (0: building)
    skipped_key: Any = None  # the start mark of a collection used as a key, while skipped

    def done(value: Any) -> None:
        """A node (not skipped) is complete: put it where it belongs."""
        if not stack:
            b.data = value
            return
        f = stack[-1]
        if not f.is_map:
            f.out.append(value)
            return
        if not f.skip:
            f.out[f.key] = value
        f.want_key, f.skip = True, False

    def skipped_done(end: Any) -> None:
        """A skipped node is complete (a refused key's value, or a collection key)."""
        nonlocal skipped_key
        f = stack[-1]
        if skipped_key is not None:
            msg = "mapping keys must be strings, not collections"
            b.diags.append(Diagnostic("non-string-key", msg, _mark_span(display, skipped_key,
                                                                       end, text)))
            skipped_key = None
            f.want_key, f.skip = False, True
        else:
            f.want_key, f.skip = True, False

    for event in events:
        cls = type(event)
        if cls is yaml.ScalarEvent or cls is yaml.MappingStartEvent or \
                cls is yaml.SequenceStartEvent:  # fmt: skip
            if event.anchor is not None or (event.tag is not None
                                            and event.tag not in ALLOWED_TAGS):  # fmt: skip
                span = _mark_span(display, event.start_mark, event.end_mark, text)
                diags.extend(_check_node_event(event, span))
            if cls is not yaml.ScalarEvent:
                depth += 1
                if depth > max_depth:
                    msg = f"the data is nested more than {max_depth} levels deep"
                    span = _mark_span(display, event.start_mark, event.end_mark, text)
                    return [*diags, Diagnostic("nesting-too-deep", msg, span)], None
        elif cls is yaml.MappingEndEvent or cls is yaml.SequenceEndEvent:
            depth -= 1
        elif cls is yaml.AliasEvent:
            span = _mark_span(display, event.start_mark, event.end_mark, text)
            diags.append(Diagnostic("yaml-alias", f"alias '*{event.anchor}' is not allowed", span))
            continue
        elif cls is yaml.DocumentStartEvent:
            documents += 1
            if documents == 2:
                msg = "the file contains more than one YAML document"
                span = _mark_span(display, event.start_mark, event.end_mark, text)
                return [Diagnostic("multi-document", msg, span)], None
            continue
        else:
            continue
        if diags or failure is not None:
            continue  # nothing built is used any more; the checks go on to the end
        # -- building ---------------------------------------------------------------------
        if skipping:
            if cls is yaml.MappingStartEvent or cls is yaml.SequenceStartEvent:
                skipping += 1
            elif cls is not yaml.ScalarEvent:
                skipping -= 1
                if not skipping:
                    skipped_done(event.end_mark)
            continue
        if cls is yaml.MappingEndEvent or cls is yaml.SequenceEndEvent:
            f = stack.pop()
            b.spans[f.path] = _mark_span(display, f.start, event.end_mark, text)
            done(f.out)
            continue
        top = stack[-1] if stack else None
        if top is not None and top.is_map and top.want_key:
            if cls is not yaml.ScalarEvent:  # a collection as a key: refused, not built
                skipping, skipped_key = 1, event.start_mark
                continue
            node = yaml.ScalarNode(_scalar_tag(strict, event), event.value, event.start_mark,
                                   event.end_mark, event.style)  # fmt: skip
            key = b._key(node)
            top.want_key = False
            if key is None:
                top.skip = True
            elif key in top.first:
                b._duplicate(key, top.first[key], node)
                top.skip = True
            else:
                top.first[key] = node
                b.key_spans[(*top.path, key)] = b.span(node)
                top.key, top.skip = key, False
            continue
        if top is not None and top.is_map and top.skip:  # the value of a refused key
            if cls is yaml.ScalarEvent:
                top.want_key, top.skip = True, False
            else:
                skipping = 1
            continue
        if top is None:
            path: PathTuple = ()
        elif top.is_map:
            path = (*top.path, top.key)
        else:
            path = (*top.path, len(top.out))
        if cls is yaml.ScalarEvent:
            node = yaml.ScalarNode(_scalar_tag(strict, event), event.value, event.start_mark,
                                   event.end_mark, event.style)  # fmt: skip
            b.spans[path] = b.span(node)
            try:
                value = b.scalar(node)
            except Exception as exc:
                failure = exc
                continue
            done(value)
        else:
            b.spans[path] = b.span_of(event)  # replaced by the full span at the end event
            stack.append(_Frame(cls is yaml.MappingStartEvent, path, event.start_mark))
    if diags:
        return diags, None
    if failure is not None:
        raise failure
    return [], b


def _scalar_tag(strict: StrictLoader, event: Any) -> str:
    """The tag of a scalar, resolved as the composer does."""
    tag = event.tag
    if tag is None or tag == "!":
        tag = strict.resolve(yaml.ScalarNode, event.value, event.implicit)
    return str(tag)


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
    ctx = exc.context_mark
    ctx_span = _clamp(_mark_span(display, ctx, ctx, text), text) if ctx is not None else None
    if code == "yaml-syntax":
        message = _explain_yaml(message, _clean(exc.context or ""), _char_at(text, span),
                                ctx_span, _indented_past(text, span.line))
    related: tuple[Related, ...] = ()
    if exc.context and exc.problem:
        related = (Related(_clean(exc.context), ctx_span),)
    return Diagnostic(code, message, span, related)


def _indented_past(text: str, line: int) -> bool:
    """Whether `line` (1-based) is indented further than the `key: value` line above it (so
    YAML reads it as more of that value)."""
    lines = text.split("\n")
    if not 1 < line <= len(lines):
        return False
    above = next((ln for ln in reversed(lines[: line - 1]) if ln.strip()
                  and not ln.lstrip().startswith("#")), "")
    here = lines[line - 1]

    def indent(ln: str) -> int:
        return len(ln) - len(ln.lstrip(" "))

    return bool(re.match(r"\s*(- )?[^\s:#][^:#]*:\s+\S", above)) and indent(here) > indent(above)


def _explain_yaml(problem: str, context: str, char: str, opened: Span | None,
                  past: bool = False) -> str:
    """What a YAML syntax error of libyaml means for a rules file, in words, with the fix
    (`past`: the line is indented further than the `key: value` above it)."""
    at = f" at line {opened.line}" if opened is not None else ""
    col = f" (column {opened.col})" if opened is not None else ""
    if char == "\t" or "tab character" in problem:
        return "a tab character: YAML is indented with spaces only; replace the tab by spaces"
    if "end of stream" in problem and "quoted scalar" in context:
        return (f"a quoted text opened{at} is never closed: add its closing quote (a quote "
                "inside a text is written twice, '' in a 'text', or use the other quote)")
    if "cannot start any token" in problem:
        shown = repr(char) if char else "this character"
        return (f"a value cannot start with {shown} in YAML: put the value in quotes "
                f"(\"...\")")
    if "mapping values are not allowed" in problem and past:
        return ("this line is indented further than the key above it, so YAML reads it as "
                "more of that key's value: line it up with its sibling keys")
    if "mapping values are not allowed" in problem:
        return ("a second ': ' on this line: quote a text that holds ': ' (text: \"a: b\"), "
                "or, if this is a key, put it on its own line, indented under its parent")
    if "could not find expected ':'" in problem:
        return (f"a line without ':'{at}: write `key: value`, or indent the line further to "
                "continue the value above")
    if "did not find expected key" in problem and "block mapping" in context:
        return (f"this line is indented unlike the keys of the mapping that starts{at}{col}: "
                "line it up with its sibling keys (spaces, not tabs), or, for a list item, "
                "put the list under a key")
    if "did not find expected '-' indicator" in problem:
        return (f"this line is indented unlike the items of the list that starts{at}{col}: "
                "start an item with '- ' lined up with the others, or indent a key of the "
                "item as far as the item's first key")
    if "expected ',' or ']'" in problem:
        return (f"a list in brackets opened{at} is not closed: end it with ']' (items are "
                "separated by ', ')")
    if "expected ',' or '}'" in problem:
        return (f"a mapping in braces opened{at} is not closed: end it with '}}' (entries "
                "are separated by ', ')")
    if "block end" in problem:
        return ("this line is indented further than the line above allows: line it up with "
                "its sibling keys or items")
    if "block sequence entries are not allowed" in problem:
        return ("a list item '- ' cannot start here: put the list on the lines under its key, "
                "each item indented and starting with '- '")
    return f"YAML cannot read this: {problem}"


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
    """The data, span tables and structural diagnostics of one file (built by `_one_pass`)."""

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

    def span_of(self, event: Any) -> Span:
        """Return the 1-based span of an event."""
        return _mark_span(self.display, event.start_mark, event.end_mark, self.text)

    def scalar(self, node: yaml.ScalarNode) -> Any:
        """Return the value of a scalar node (a diagnostic and None when its digits are too
        many; a ConstructorError when it does not fit its explicit tag)."""
        try:
            return self.loader.construct_object(node, deep=True)
        except ValueError:  # an integer beyond Python's int-to-str digit limit (4300)
            msg = f"the number {_shorten(str(node.value))} has too many digits"
            self.diags.append(Diagnostic("yaml-syntax", msg, self.span(node)))
            return None

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
        msg = (f"duplicate key '{key}' (first defined at line {line}): a key is written once "
               "in a mapping; keep one of the two, or merge what they say")
        self.diags.append(Diagnostic("duplicate-key", msg, self.span(again), (note,)))
