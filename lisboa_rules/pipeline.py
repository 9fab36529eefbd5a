"""The whole pipeline, one pass after the other, each a function of what the one before made:

    load -> validate -> merge -> build -> check -> lower -> emit -> write

- load (front/loader.py `load_dir`): the rules files (and house-rule files) read, with a
  position for every key and value -> LoadedDoc[];
- validate (`validate_all`; front/validate.py): each document against its JSON Schema, one
  document of each kind, the variants to fold in known -> Sources;
- merge (`merge_all`; front/overlay.py): every rule set, the base rules with the folded
  variants (key ()) and each combination of the others laid over them, the documents a
  variant changed validated again -> Merged[];
- build (`build_all`; model/build.py `build_model`): each rule set's typed model -> Built[];
- check (`check_steps_all`, model/checked.py `check_steps`; then `check_all`, model/checks.py):
  every rule set's procedures, actions, phases and queries type-checked into the IR
  (ir/stmt.py, ir/expr.py; their problems located by model/build.py `procedure_diagnostics`),
  then the semantic checks of each rule set whose model and steps have no error, then the
  variants' own words -> Compiled (each rule set with its checked steps);
- lower (`lower_all`; emit/engine/procs.py `lower`): the checked steps of every rule set
  printed once, one rule set after the other, as the engine's functions (Lowered); it reports
  nothing: what reaches it was checked;
- emit (emit/ `emit_all`): the compiled rule sets and their lowered procedures -> {path: text};
- write (outputs/writer.py `write_outputs`): the CLI's call (cli/main.py), only when there is
  no error; the passes of this module are pure.

`compile_rules` runs them up to emit (build); `check_rules` up to lower, and the engine's text
alone when the backstop plays it (validate); `analyse` up to check (diff, ir and balance).
Every pass returns diagnostics instead of raising; a pass only sees what the previous one
accepted, so one bad file does not cascade into a page of errors, while independent problems in
other files (and rule sets) are all reported in the same run.

A rule set whose steps do not type-check is not checked further.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TypeGuard

import jinja2

from lisboa_rules.core.diagnostics import (
    Diagnostic,
    Related,
    has_errors,
    sort_diagnostics,
    suggest,
)
from lisboa_rules.core.memory import cyclic_gc_paused
from lisboa_rules.core.source import PathTuple, Span
from lisboa_rules.emit import ENGINE, emit_all, emit_engine
from lisboa_rules.emit.engine.procs import Lowered, lower
from lisboa_rules.front.loader import LoadedDoc, load_dir
from lisboa_rules.front.overlay import (
    NO_ITEM,
    Change,
    Doc,
    apply_overlay,
    conflicts,
    identity_path,
)
from lisboa_rules.front.validate import validate
from lisboa_rules.lang.text import IDENTITY_KEYS
from lisboa_rules.lang.typed import READ_AS_TEXT
from lisboa_rules.model import types as m
from lisboa_rules.model.build import (
    KINDS,
    REQUIRED_KINDS,
    build_model,
    procedure_diagnostics,
    proof_diagnostics,
)
from lisboa_rules.model.checked import CheckedSteps, check_steps
from lisboa_rules.model.checks import (
    UNKNOWN_ID,
    check_callouts,
    check_free_text,
    check_references,
    check_stale_texts,
    left_out,
    run_checks,
)
from lisboa_rules.model.compiled import Compiled, CompiledRuleSet
from lisboa_rules.model.procs import Tables
from lisboa_rules.outputs import reuse

VARIANT_KIND = "variant"


@dataclass
class CompileResult:
    files: dict[str, str] = field(default_factory=dict)  # relative POSIX path -> text
    diagnostics: list[Diagnostic] = field(default_factory=list)
    compiled: Compiled | None = None

    @property
    def ok(self) -> bool:
        return not any(d.is_error for d in self.diagnostics)


@dataclass
class Sources:
    """What load and validate accepted: the base documents by kind, the variants by id, and
    the files as read (their texts, digests and stable names)."""

    base: dict[str, Doc]
    variants: dict[str, LoadedDoc]
    fold: tuple[str, ...]  # the variants folded into the base game
    texts: dict[str, str]  # display path -> text
    digests: list[tuple[str, str]]  # (path inside the rules folder, sha256), in load order
    names: dict[str, str]  # display path -> "rules/<path inside the rules folder>"
    # the variants offered as options of the engine (not folded in: they become part of the
    # base game, whose rule set keeps the key ()), by id
    infos: tuple[m.VariantInfo, ...]


@dataclass
class Merged:
    """One rule set's merged documents: `key` the variants laid over the base (with the
    folded ones) and their changes."""

    key: tuple[str, ...]
    docs: dict[str, Doc]
    changes: list[Change]
    # the changes of the folded variants, under a combination of the other variants (whose
    # own are `changes`): an error of the rules' lines in this rule set names them too
    folded: list[Change] = field(default_factory=list)

    @property
    def blamed(self) -> list[Change]:
        """Every change in force in this rule set: the folded variants' and its own."""
        return [*self.folded, *self.changes]


@dataclass
class Built:
    """One rule set's model; `ok` when building it (and, after the check pass, checking its
    steps) found no error; `steps`: its steps checked into the IR."""

    merged: Merged
    model: m.Model
    ok: bool
    steps: CheckedSteps | None = None
    # building it found an unknown id (a rule names what the data does not have): the steps
    # that read a column holding it read text there, which only follows from that id
    unknown_ids: bool = False
    # building it found no error but unknown ids: its model is whole, and every id its rules
    # name can be looked up (model/checks.py check_references) even where its steps fail
    whole: bool = True
    # building it found no error but unknown ids and unknown names: its lists lack only the
    # items whose own formulas failed (model/checks.py left_out), whose ids are not unknown
    partial: bool = True
    proofs: tuple[Diagnostic, ...] = ()  # what the proof of total operations found


def compile_rules(
    rules_dir: Path,
    variants: Sequence[str] = (),
    order: Sequence[Path] | None = None,
    extra: Sequence[Path] = (),
    on_engine: Callable[[str], None] | None = None,
) -> CompileResult:
    """Run every pass up to emit; never raises for bad input (returns diagnostics instead).
    `extra`: house-rule variant files kept outside the rules folder (see `analyse`).
    `on_engine`: given the engine's text as soon as emit made it (see emit_all); not called
    when the outputs are reused."""
    with cyclic_gc_paused():
        compiled, diags = _analyse(rules_dir, variants, order, extra)
        if compiled is None:
            return CompileResult({}, diags, None)
        store = reuse.current()
        k = reuse.key("emit", compiled.digests, sorted(compiled.names.items()),
                      compiled.folded) if store is not None else ""
        kept = store.get("emit", k) if store is not None else None
        if _text_map(kept):
            return CompileResult(dict(kept), diags, compiled)  # lower and emit read the same
        lowered = lower_all(compiled)  # lower
        files, found = emit_all(compiled, lowered, on_engine)  # emit
        if store is not None and files and not found:
            store.put("emit", k, files)
    diags = sort_diagnostics([*diags, *found])
    if any(x.is_error for x in found):
        return CompileResult({}, diags, compiled)
    return CompileResult(files, diags, compiled)


def check_rules(
    rules_dir: Path,
    variants: Sequence[str] = (),
    order: Sequence[Path] | None = None,
    extra: Sequence[Path] = (),
    engine: bool = False,
) -> CompileResult:
    """What `validate` runs: every pass up to lower, and no emit (every diagnostic a build
    reports on rules comes from those passes). `engine`: emit the engine's text too, and only
    it (files {ENGINE: text}), for the backstop's games to play; the reference, the schemas
    and the state schema are never made."""
    with cyclic_gc_paused():
        compiled, diags = _analyse(rules_dir, variants, order, extra)
        if compiled is None or not engine:
            return CompileResult({}, diags, compiled)
        try:
            text = emit_engine(compiled, lower_all(compiled))[ENGINE]
        except jinja2.TemplateError as exc:
            found = Diagnostic("template-error", f"template failed: {exc}", None)
            return CompileResult({}, sort_diagnostics([*diags, found]), compiled)
    return CompileResult({ENGINE: text}, diags, compiled)


def _text_map(value: object) -> TypeGuard[dict[str, str]]:
    """Whether a reused entry is what emit makes: {relative path: text}, not empty."""
    return (isinstance(value, dict) and bool(value)
            and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()))


def analyse(
    rules_dir: Path,
    fold: Sequence[str] = (),
    order: Sequence[Path] | None = None,
    extra: Sequence[Path] = (),
) -> tuple[Compiled | None, list[Diagnostic]]:
    """Load, validate, merge, build and check; return the compiled rule sets or None.

    `extra`: variant files kept outside the rules folder (house rules), added to it as if they
    were in its `variants/` (their diagnostics name their own paths; front/loader.py)."""
    with cyclic_gc_paused():
        compiled, diags = _analyse(rules_dir, fold, order, extra)
    return compiled, diags


def _analyse(
    rules_dir: Path,
    fold: Sequence[str],
    order: Sequence[Path] | None,
    extra: Sequence[Path] = (),
) -> tuple[Compiled | None, list[Diagnostic]]:
    """The passes up to lower, in order."""
    store = reuse.current()  # under --watch, a file whose bytes did not change is not parsed
    memo = store.loaded if store is not None else None
    loaded, diags = load_dir(rules_dir, order=order, extra=extra, memo=memo)  # load
    sources, found = validate_all(loaded, rules_dir, fold, has_errors(diags))  # validate
    diags += found
    if sources is None:
        return None, diags
    merged, found = merge_all(sources)  # merge
    diags += found
    built, found = build_all(merged, sources)  # build
    diags += found
    built, found = check_steps_all(built)  # check: the steps
    diags = _unread_not_stale([*diags, *found])
    compiled, found = check_all(built, sources)  # check: the rule sets
    diags = _no_cascade(_dedupe([*diags, *found]))
    if compiled is None or any(x.is_error for x in diags):
        return None, diags
    return compiled, diags


def validate_all(loaded: list[LoadedDoc], rules_dir: Path, fold: Sequence[str],
                 load_failed: bool = False) -> tuple[Sources | None, list[Diagnostic]]:
    """The validate pass: each document against its schema, one document of each kind, the
    variants to fold in known; None when anything is wrong (`load_failed`: a file did not
    load, which the load pass said)."""
    diags: list[Diagnostic] = []
    good: list[LoadedDoc] = []
    refused: set[str] = set()  # the ids of variants whose files were refused (said already)
    store = reuse.current()
    for d in loaded:
        found = _validated(d, store)
        if d.extra and not found and d.data.get("kind") != VARIANT_KIND:
            found = [Diagnostic("schema-enum", f"a house-rule file given on its own must be a "
                                f"'{VARIANT_KIND}', not '{d.data.get('kind')}'",
                                d.span_for(("kind",)))]
        diags.extend(found)
        if not any(x.is_error for x in found):
            if d.extra:
                _house_sources(d.data)
            good.append(d)
        elif isinstance(d.data, dict) and d.data.get("kind") == VARIANT_KIND:
            refused.add(str(d.data.get("id")))
    base: dict[str, Doc] = {}
    first: dict[str, LoadedDoc] = {}
    variants: dict[str, LoadedDoc] = {}
    for d in good:
        kind = str(d.data["kind"])
        if kind == VARIANT_KIND:
            vid = str(d.data["id"])
            if vid in variants:
                diags.append(
                    Diagnostic(
                        "duplicate-id",
                        f"variant '{vid}' is defined twice",
                        d.span_for(("id",)),
                        (Related("first defined here", variants[vid].span_for(("id",))),),
                    )
                )
                continue
            variants[vid] = d
        elif kind in first:
            diags.append(
                Diagnostic(
                    "duplicate-kind",
                    f"a second '{kind}' document",
                    d.span_for(("kind",)),
                    (Related("the first is here", first[kind].span_for(("kind",))),),
                )
            )
        else:
            first[kind] = d
            base[kind] = _to_doc(d)
    # A file that failed to load or validate may be the missing kind: say nothing more then.
    if not load_failed and not any(x.is_error for x in diags):
        loaded_kinds = {str(d.data.get("kind")) for d in loaded if isinstance(d.data, dict)}
        for kind in REQUIRED_KINDS:
            if kind not in loaded_kinds:
                diags.append(
                    Diagnostic(
                        "missing-kind", f"no rules document of kind '{kind}' in {rules_dir}", None
                    )
                )
    for name in fold:
        if name in refused and name not in variants:
            continue  # its file's errors are said
        if name not in variants:
            diags.append(
                Diagnostic(
                    "unknown-variant",
                    f"no variant named '{name}'{_the_variants(variants)}",
                    None,
                    suggestion=suggest(name, variants),
                )
            )
        elif isinstance(applies := variants[name].data.get("applies"), dict):
            # Folded in, it would apply at every player count, not only at its own.
            counts = ", ".join(str(n) for n in applies.get("players", ()))
            diags.append(
                Diagnostic(
                    "fold-by-players",
                    f"variant '{name}' applies by player count ({counts}): folded into the "
                    "base game it would apply at every count; build without --variant "
                    f"{name} (the engine applies it by itself whenever {counts} play), or give "
                    "it 'applies: chosen' to fold it in",
                    variants[name].span_for(("applies",)),
                )
            )
    if load_failed or any(x.is_error for x in diags):
        return None, diags
    texts = {d.display: d.text for d in loaded}
    digests = [(d.source or Path(d.display).name, d.digest) for d in loaded]
    names = {d.display: f"rules/{rel}" for d, (rel, _) in zip(loaded, digests, strict=True)}
    infos = tuple(_variant_info(variants[v]) for v in sorted(variants) if v not in fold)
    return Sources(base, variants, tuple(fold), texts, digests, names, infos), diags


# What follows from another error where it stands: a text that "no longer matches" a change
# the rules refuse (a formula that does not parse, a key the place does not take).
_CONSEQUENCES = ("text-stale",)


def _no_cascade(diags: list[Diagnostic]) -> list[Diagnostic]:
    """One mistake, one error: a diagnostic that follows from an error of another code on
    the lines of the same change is not reported (the cause is, at its own position)."""
    causes = [d.span for d in diags if d.is_error and d.span is not None
              and d.code not in _CONSEQUENCES]
    if not causes:
        return diags

    def caused(d: Diagnostic) -> bool:
        s = d.span
        return s is not None and any(
            c.file == s.file and s.line <= c.line <= max(s.line, s.end_line) for c in causes)

    return [d for d in diags if not (d.code in _CONSEQUENCES and caused(d))]


HOUSE_RULE = "house rule"  # the source printed for a house rule that gives none


def _house_sources(node: object) -> None:
    """A house rule's `source:` may be one free text: made a list of it, as a citation's is
    (the file's spans still point at it)."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "source" and isinstance(value, str):
                node[key] = [value]
            else:
                _house_sources(value)
    elif isinstance(node, list):
        for value in node:
            _house_sources(value)


_PART = re.compile(r"(?P<key>[^.\[\]]+)(?:\[(?P<item>[^\]]+)\])?")


def _adds(changes: object, where: str, ident: str) -> bool:
    """Whether a variant's changes add an item whose identity is `ident` to the list at
    `where` (as the overlay names it: "flow.period_end.steps", "scoring.sources[x].groups")."""
    node: object = changes
    for part in re.findall(r"[^.\[\]]+(?:\[[^\]]+\])?", where):
        m = _PART.fullmatch(part)
        if m is None or not isinstance(node, dict) or m["key"] not in node:
            return False
        node = node[m["key"]]
        if m["item"] is not None:
            node = next((x for x in node if isinstance(x, dict) and any(
                str(x.get(k)) == m["item"] for k in IDENTITY_KEYS if k in x)), None) \
                if isinstance(node, list) else None
    return isinstance(node, list) and any(
        isinstance(x, dict) and x.get("$add") is True
        and any(str(x.get(k)) == ident for k in IDENTITY_KEYS if k in x) for x in node)


def _added_elsewhere(found: list[Diagnostic], variants: Mapping[str, LoadedDoc],
                     fold: Sequence[str]) -> list[Diagnostic]:
    """An item a variant names that the rules do not have, where another variant not folded
    in adds it (a house rule written over another): said so, with how to build them, in
    place of a guess at a near id. A variant changes the base rules and the variants folded
    into them, not another variant laid beside it."""
    out = []
    for d in found:
        missing = d.code == "overlay-unknown-item" and d.subject[:1] == (NO_ITEM,)
        what, ident, where = d.subject[1:] if missing else ("", "", "")
        adders = [] if not missing else sorted(
            v for v, doc in variants.items() if v not in fold and _adds(
                doc.data.get("changes"), where, ident))
        if not adders:
            out.append(d)
            continue
        by = ", ".join(f"'{v}'" for v in adders)
        msg = (f"no {what} '{ident}' in {where}: variant {by} adds it, and a variant "
               f"changes only the base rules and the variants folded into them; fold "
               f"{by} in (--variant {adders[0]}, this one left to choose) to build this "
               f"over it, or add the {what} in full here (with `$add: true`)")
        out.append(replace(d, message=msg, suggestion=None))
    return out


def merge_all(sources: Sources) -> tuple[list[Merged], list[Diagnostic]]:
    """The merge pass: the base rules with the folded variants (key `()`), then each
    combination of the other variants laid over them; a rule set whose merge the overlay
    refused, or whose changed documents do not validate, is left out."""
    diags: list[Diagnostic] = []
    variants, fold = sources.variants, sources.fold
    folded_docs, folded_changes, found = _merge(sources.base, [variants[v] for v in fold])
    diags.extend(_added_elsewhere(found, variants, fold))
    if _refused(found):
        # A change the overlay refused is not in the merged rules: building them would report
        # its consequences (a formula's param that was not added) as more errors. The base
        # rules are still checked on their own.
        folded_docs, folded_changes = sources.base, []
    valid: set[tuple[str, str]] = set()  # merged documents already validated without errors
    out: list[Merged] = []
    found = _revalidate(folded_docs, folded_changes, valid, sources)
    diags.extend(found)
    if not has_errors(found):
        out.append(Merged((), folded_docs, folded_changes))
    open_variants = [v for v in sorted(variants) if v not in fold]
    for n in range(1, len(open_variants) + 1):
        for combo in itertools.combinations(open_variants, n):
            if not _can_combine([variants[v] for v in combo]):
                continue
            docs, changes, found = _merge(folded_docs, [variants[v] for v in combo])
            diags.extend(_added_elsewhere(found, variants, fold))
            if _refused(found):
                continue  # as above: the refused change's consequences are not more errors
            found = _revalidate(docs, changes, valid, sources)
            diags.extend(found)
            if not has_errors(found):
                out.append(Merged(combo, docs, changes, folded_changes))
    return out, diags


# the errors of a model build after which its lists are still there, less the items with
# an error of their own (a formula's unknown name): the ids its rules name can be looked up
_LEAVE_LISTS = frozenset({"unknown-reference", "unknown-name"})


def build_all(merged: list[Merged], sources: Sources) -> tuple[list[Built], list[Diagnostic]]:
    """The build pass: each rule set's model (a model with an error is kept, not ok: the lower
    pass still reports its procedures' problems)."""
    diags: list[Diagnostic] = []
    out: list[Built] = []
    for r in merged:
        model, found = build_model(r.docs, r.key, sources.infos, sources.texts)
        diags.extend(_blame(_note_removals(found, r.blamed), r.blamed))
        if model is not None:
            out.append(Built(r, model, not has_errors(found), unknown_ids=any(
                d.is_error and d.code == "unknown-reference" for d in found), whole=all(
                d.code == "unknown-reference" for d in found if d.is_error), partial=all(
                d.code in _LEAVE_LISTS for d in found if d.is_error)))
    return out, diags


def check_steps_all(built: list[Built]) -> tuple[list[Built], list[Diagnostic]]:
    """The check pass's first half: every rule set's steps checked into the IR once, one rule
    set after the other (the rules' tables they read shared); a rule set whose steps have an
    error is no longer ok."""
    tables = Tables()
    diags: list[Diagnostic] = []
    out: list[Built] = []
    for b in built:
        steps = check_steps(b.model, tables)
        found = procedure_diagnostics(b.model, b.merged.docs, steps.problems)
        if b.unknown_ids:  # said at the id; the steps of the rules the variants did not
            # change (they check without them) that read its column follow from it: a column
            # of ids of one kind is text when one of them names nothing of it, and a step's
            # read of a field of it is refused (lang/typed.py READ_AS_TEXT)
            changed = {c.span.file for c in b.merged.blamed}
            found = [d for d in found if not (
                d.code == "expr-type" and d.subject[:1] == (READ_AS_TEXT,)
                and d.span is not None and d.span.file not in changed)]
        blamed = b.merged.blamed
        diags.extend(_blame(_note_removals(found, blamed), blamed))
        proofs = proof_diagnostics(b.model, b.merged.docs, steps.problems)
        out.append(replace(b, ok=b.ok and not has_errors(found), steps=steps,
                           proofs=tuple(_blame(_note_removals(proofs, blamed), blamed))))
    return out, diags


def lower_all(compiled: Compiled) -> Lowered:
    """The lower pass: every compiled rule set's checked steps printed once, one rule set
    after the other, as the engine's functions."""
    steps = [rs.steps for rs in compiled.rulesets]
    assert all(s is not None for s in steps)
    return lower([rs.model for rs in compiled.rulesets], compiled.names,
                 [s for s in steps if s is not None])


def check_all(built: list[Built], sources: Sources) -> tuple[Compiled | None, list[Diagnostic]]:
    """The check pass: the semantic checks of every rule set that is ok so far, then the
    variants' player counts, words and callouts; the compiled rule sets, or None without a
    base rule set."""
    diags: list[Diagnostic] = []
    base_set: CompiledRuleSet | None = None
    rulesets: list[CompiledRuleSet] = []
    for b in built:
        if not b.ok:  # every id the rules name that the data does not have, said all at once
            if b.whole:  # (a model built with other errors lacks what they broke: not said)
                diags.extend(_blame(_note_removals(list(check_references(b.model)),
                                                   b.merged.blamed), b.merged.blamed))
            elif b.partial:  # the ids named that the data has nowhere
                there = left_out(b.model)
                unknown = [d for d in check_references(b.model) if d.subject[:1] == (UNKNOWN_ID,)
                           and d.subject[1] not in there]
                diags.extend(_blame(_note_removals(unknown, b.merged.blamed), b.merged.blamed))
            continue
        changes = b.merged.changes
        found = _blame(_note_removals(run_checks(b.model), b.merged.blamed), b.merged.blamed)
        if not has_errors(found):  # the proof reads the data: an error there says more
            found += b.proofs
        diags.extend(found)
        if has_errors(found):
            continue
        rs = CompiledRuleSet(b.merged.key, b.model, changes, b.steps)
        if rs.key == ():
            base_set = rs
        else:
            rulesets.append(rs)
    if base_set is None:
        return None, diags
    variants, fold, infos = sources.variants, sources.fold, sources.infos
    diags.extend(_player_counts(base_set.model, variants))
    by_key = {rs.key: rs.model for rs in rulesets}
    by_changes = {rs.key: rs.changes for rs in rulesets}
    folded_infos = [_variant_info(variants[v]) for v in fold if v in variants]
    for info in [*infos, *folded_infos]:  # a folded variant's words are the base game's
        variant_model = by_key.get((info.id,), base_set.model)
        text_span = variants[info.id].span_for(("text",))  # at the text, not the id
        diags.extend(check_free_text(variant_model, info.text, text_span))
        raw = list(variants[info.id].data.get("callouts", ()))
        for c in info.callouts:
            i = next(k for k, r in enumerate(raw) if "of" not in r and r.get("rule") == c.rule
                     and r.get("text") == c.text)
            callout_text = variants[info.id].span_for(("callouts", i, "text"))
            diags.extend(
                _note_removals(
                    check_callouts(base_set.model, [(c.variant, c.rule, c.span)],
                                   variant_model, c.text, callout_text),
                    by_changes.get((info.id,), base_set.changes if info.id in fold else []),
                )
            )
        diags.extend(_check_amends(info, variants, base_set.model, variant_model))
    compiled = Compiled(base_set, [base_set, *rulesets], list(infos), sources.digests,
                        sources.names)
    compiled.folded = tuple(sorted(fold))
    compiled.folded_titles = tuple((v, str(variants[v].data["title"])) for v in compiled.folded)
    compiled.folded_infos = tuple(_variant_info(variants[v]) for v in compiled.folded)
    return compiled, diags


def variant_changes(
    rules_dir: Path, name: str, extra: Sequence[Path] = ()
) -> tuple[list[Change], list[Diagnostic]]:
    """The values a variant changes on the base rules (for `lisboa-rules diff NAME`); `extra`:
    house-rule files, as `analyse` takes them."""
    compiled, diags = analyse(rules_dir, extra=extra)
    if compiled is None:
        return [], diags
    for rs in compiled.rulesets:
        if rs.key == (name,):
            return rs.changes, diags
    known = [v.id for v in compiled.variants]
    return [], [
        *diags,
        Diagnostic(
            "unknown-variant", f"no variant named '{name}'{_the_variants(known)}", None,
            suggestion=suggest(name, known)
        ),
    ]


def _check_amends(info: m.VariantInfo, variants: Mapping[str, LoadedDoc], base: m.Model,
                  variant_model: m.Model) -> Iterator[Diagnostic]:
    """A variant's changes to another's callouts name a variant and one of its callouts by
    id; a new text binds as a callout's does."""
    for a in info.amends:
        at = variants[info.id]
        i = next(k for k, r in enumerate(at.data.get("callouts", ()))
                 if r.get("of") == a.of and r.get("id") == a.id)
        if a.of not in variants or a.of == info.id:
            yield Diagnostic(
                "unknown-reference",
                f"variant '{info.id}' amends a callout of '{a.of}', which is no other variant",
                at.span_for(("callouts", i, "of")),
                suggestion=suggest(a.of, [v for v in variants if v != info.id]),
            )
            continue
        theirs = {str(c.get("id")): c for c in variants[a.of].data.get("callouts", ())
                  if "of" not in c and c.get("id") is not None}
        if a.id not in theirs:
            known = sorted(theirs)
            yield Diagnostic(
                "unknown-reference",
                f"variant '{a.of}' has no callout with id '{a.id}'"
                + (f" (its callouts with an id: {', '.join(known)})" if known else
                   " (a callout is named by its `id:`, which it does not have)"),
                at.span_for(("callouts", i, "id")),
                suggestion=suggest(a.id, known),
            )
            continue
        if a.text is not None:
            yield from check_callouts(base, [(info.id, str(theirs[a.id]["rule"]), a.span)],
                                      variant_model, a.text,
                                      at.span_for(("callouts", i, "text")))


def _to_doc(d: LoadedDoc) -> Doc:
    return Doc(str(d.data["kind"]), d.data, dict(d.spans), dict(d.key_spans), (d.display,))


def _as_loaded(doc: Doc, sources: Sources | None = None) -> LoadedDoc:
    """A merged document as validate reads it: with the files its values come from (so that
    a diagnostic names a value by its path in the file the user wrote) and the house rules
    among them."""
    if sources is None:
        return LoadedDoc(Path(doc.files[0]), doc.files[0], "", doc.data, doc.spans,
                         doc.key_spans)
    origins: dict[str, Mapping[PathTuple, Span]] = {}
    for base in sources.base.values():
        origins[base.files[0]] = base.spans
    for v in sources.variants.values():
        origins[v.display] = v.spans
    house = frozenset(v.display for v in sources.variants.values() if v.extra)
    return LoadedDoc(Path(doc.files[0]), doc.files[0], "", doc.data, doc.spans, doc.key_spans,
                     origins={f: origins[f] for f in doc.files if f in origins}, house=house)


def _variant_info(d: LoadedDoc) -> m.VariantInfo:
    data = d.data
    applies = data["applies"]
    players = tuple(applies["players"]) if isinstance(applies, dict) else ()
    callouts = tuple(
        m.Callout(
            data["id"],
            c["rule"],
            c["text"],
            m.Provenance(tuple(c.get("source", ())), tuple(c.get("assumptions", ()))),
            span=d.span_for(("callouts", i)),
            id=c.get("id"),
        )
        for i, c in enumerate(data.get("callouts", ())) if "of" not in c
    )
    amends = tuple(
        m.CalloutAmend(
            data["id"],
            c["of"],
            c["id"],
            None if c.get("$remove") else c["text"],
            m.Provenance(tuple(c.get("source", ())), tuple(c.get("assumptions", ()))),
            span=d.span_for(("callouts", i)),
        )
        for i, c in enumerate(data.get("callouts", ())) if "of" in c
    )
    return m.VariantInfo(
        data["id"],
        data["title"],
        players,
        data["text"],
        # a house rule that says nothing of where it comes from is printed as one
        m.Provenance(tuple(data.get("source", ())) or ((HOUSE_RULE,) if d.extra else ()),
                     tuple(data.get("assumptions", ()))),
        callouts,
        span=d.span_for(("id",)),
        amends=amends,
        official=data.get("official") is True,
    )


# What the overlay refuses to merge (an unknown key, item or target, an item named twice in
# one list, whose second entry is left out): the merged rules are not what the variant says.
_REFUSALS = ("overlay-unknown-key", "overlay-unknown-item", "overlay-unknown-target",
             "duplicate-id")


def _refused(found: list[Diagnostic]) -> bool:
    return any(x.is_error and x.code in _REFUSALS for x in found)


def _merge(
    base: dict[str, Doc], overlays: list[LoadedDoc]
) -> tuple[dict[str, Doc], list[Change], list[Diagnostic]]:
    docs = dict(base)
    changes: list[Change] = []
    diags: list[Diagnostic] = []
    for ov in overlays:
        # `changes: {}` is a variant that says so: the control of a paired comparison
        # (`balance --compare`); only an empty part inside changes is refused
        for kind, part in ov.data["changes"].items():
            if kind not in docs:
                diags.append(
                    Diagnostic(
                        "overlay-unknown-target",
                        f"variant '{ov.data['id']}' changes '{kind}', which the "
                        "base rules do not have",
                        ov.span_for(("changes", kind), key=True),
                        suggestion=suggest(kind, KINDS),
                    )
                )
                continue
            merged, log, found = apply_overlay(
                docs[kind], str(ov.data["id"]), part, ov.spans, ov.key_spans, ("changes", kind)
            )
            # what each change is, by the identities of the items it is in (compared with the
            # changes of the other variants laid over the same rules: conflicts below)
            log = [replace(ch, key=identity_path(docs[kind].data, ch)) for ch in log]
            merged.files = (*docs[kind].files, ov.display)
            acknowledged = [str(c.get("rule")) for c in ov.data.get("callouts", ())
                            if isinstance(c, dict)]
            diags.extend(check_stale_texts(docs[kind], log, acknowledged))
            docs[kind] = merged
            changes.extend(log)
            diags.extend(found)
    diags.extend(conflicts(changes, {str(ov.data["id"]) for ov in overlays if ov.extra}))
    return docs, changes, diags


def _revalidate(docs: dict[str, Doc], changes: list[Change], valid: set[tuple[str, str]],
                sources: Sources | None = None) -> list[Diagnostic]:
    """Every kind an overlay touched is validated again (even a change that logs nothing,
    such as appending a null item), except a merged document equal to one that already
    passed in another combination (a kind only one of the variants changes)."""
    diags: list[Diagnostic] = []
    changed_kinds = {c.kind for c in changes} | {k for k, d in docs.items() if len(d.files) > 1}
    for kind in sorted(changed_kinds):
        seen = (kind, json.dumps(docs[kind].data, sort_keys=True, default=repr))
        if seen in valid:
            continue
        loaded = _as_loaded(docs[kind], sources)
        # a house rule's values may omit `source:` (or give free text): the reuse key says so
        found = _validated(loaded, reuse.current(), seen[1] + repr(sorted(loaded.house)))
        # a value of the rules' file that the merge made wrong (the last item of a list
        # removed) names the variants that changed that file
        diags.extend(_blame(found, [c for c in changes if c.kind == kind]))
        if not found:
            valid.add(seen)
    return diags


def _validated(d: LoadedDoc, store: reuse.Store | None, data: str | None = None
               ) -> list[Diagnostic]:
    """validate(d), or nothing when `store` holds that a document of the same text (`data`:
    the merged document as JSON, for one made by the merge) passed its schema."""
    if store is None or (data is None and not d.digest):
        return validate(d)
    # a house rule (`extra`) is held to its own schema: its `source:` is optional free text
    k = reuse.key("valid", d.digest if data is None else reuse.text_digest(data), d.extra)
    if store.get("valid", k) is True:
        return []
    found = validate(d)
    if not found:
        store.put("valid", k, True)
    return found


def _can_combine(vs: list[LoadedDoc]) -> bool:
    """Variants that apply by player count combine only when they share a player count."""
    counts = [set(v.data["applies"]["players"]) for v in vs if isinstance(v.data["applies"], dict)]
    return not counts or bool(set.intersection(*counts))


# The codes of a name that is not there: when a variant removed it, a note says where.
_MISSING = ("unknown-reference", "unknown-name", "unknown-placeholder")
_QUOTED = re.compile(r"'([^'\s]+)'")


def _removed(changes: Sequence[Change]) -> dict[str, Change]:
    """Every id (and key) the changes remove, with the removal: a removed list item's identity
    and the identities inside it (a removed Noble action's steps), a removed key's name."""
    out: dict[str, Change] = {}

    def walk(value: object, ch: Change) -> None:
        if isinstance(value, dict):
            for key in IDENTITY_KEYS:
                if isinstance(value.get(key), str | int):
                    out.setdefault(str(value[key]), ch)
                    break
            for v in value.values():
                walk(v, ch)
        elif isinstance(value, list):
            for v in value:
                walk(v, ch)

    for ch in changes:
        if ch.after is not None or ch.before is None or not ch.path:
            continue
        if isinstance(ch.path[-1], str):
            out.setdefault(ch.path[-1], ch)
        walk(ch.before, ch)
    return out


def _note_removals(found: Iterable[Diagnostic], changes: Sequence[Change]) -> list[Diagnostic]:
    """An unknown id or name that a variant of this rule set removed gets a note at the
    removal: the designer sees which change left the reference dangling."""
    removed = _removed(changes) if changes else {}
    out = []
    for d in found:
        if removed and d.code in _MISSING:
            quoted = _QUOTED.findall(d.message)
            if d.code == "unknown-placeholder":  # '{court.actions.discard.reward.reis}'
                quoted = [part for q in quoted for part in re.split(r"[{}.|]", q)]
            names = [n for n in dict.fromkeys(quoted) if n in removed]
            whole = len(names) == 1 and d.code != "unknown-placeholder"  # the name quoted
            notes = tuple(
                Related(
                    f"variant '{removed[n].variant}' removes "
                    f"{'it' if whole else repr(n)} here",
                    removed[n].span,
                )
                for n in names
            )
            if notes:
                d = dataclasses.replace(d, related=(*d.related, *notes))
        out.append(d)
    return out


def _blame(found: list[Diagnostic], changes: list[Change]) -> list[Diagnostic]:
    """Errors the variants' changes brought about in the rules they did not change (a step of
    rules/ that no longer type-checks, a reference to an item a variant removed) point at the
    rules' line and name the variants in notes: an error of the same place that the rules
    have without the variants is reported first, without them (`_dedupe` keeps the first).
    A reference to a removed item names the removal, not a look-alike to correct it to."""
    if not changes:
        return found
    files = {c.span.file for c in changes}
    first: dict[str, Change] = {}
    for c in changes:
        first.setdefault(c.variant, c)
    removed = {(c.variant, str(c.before[k])): c for c in changes
               if c.after is None and isinstance(c.before, dict)
               for k in IDENTITY_KEYS if isinstance(c.before.get(k), str | int)}
    out = []
    for d in found:
        if not d.is_error or d.span is None or d.span.file in files:
            out.append(d)
            continue
        gone = [c for (_, ident), c in removed.items() if f"'{ident}'" in d.message]
        if any(" removes " in r.message for r in d.related):
            out.append(replace(d, suggestion=None))  # _note_removals named the removal
            continue
        if gone:
            notes = tuple(Related(f"variant '{c.variant}' removes it here: change or remove "
                                  "this reference in the same variant", c.span) for c in gone)
            out.append(replace(d, related=(*d.related, *notes), suggestion=None))
            continue
        notes = tuple(Related(f"with variant '{v}', which changes the rules here", c.span)
                      for v, c in first.items())
        out.append(replace(d, related=(*d.related, *notes)))
    return out


def _player_counts(model: m.Model, variants: dict[str, LoadedDoc]) -> Iterator[Diagnostic]:
    """A variant that applies by player count names counts the game is played with: a count
    outside game.players would never apply (and the engine's new_game refuses it)."""
    lo, hi = model.value("game", "players", "min"), model.value("game", "players", "max")
    for vid in sorted(variants):
        applies = variants[vid].data["applies"]
        if not isinstance(applies, dict):
            continue
        for j, count in enumerate(applies["players"]):
            if not lo <= count <= hi:
                bound = "min" if count < lo else "max"
                yield Diagnostic(
                    "value-out-of-range",
                    f"variant '{vid}' applies with {count} players, but the game is for {lo} "
                    f"to {hi} players, so it would never apply",
                    variants[vid].span_for(("applies", "players", j)),
                    (
                        Related(
                            f"players.{bound} is {lo if bound == 'min' else hi}",
                            model.span_of("game", "players", bound),
                        ),
                    ),
                )


def _unread_not_stale(diags: list[Diagnostic]) -> list[Diagnostic]:
    """A key a variant sets that no step reads is refused (`unread-key`): the words of its
    rule need not say it (no `text-stale` about only such keys: their `subject`s)."""
    refused = {s for d in diags if d.code == "unread-key" for s in d.subject}
    return [d for d in diags if not (
        d.code == "text-stale" and d.subject and set(d.subject) <= refused)]


def _dedupe(diags: list[Diagnostic]) -> list[Diagnostic]:
    seen: set[tuple[str, str, Span | None]] = set()
    out = []
    for d in diags:
        k = (d.code, d.message, d.span)
        if k not in seen:
            seen.add(k)
            out.append(d)
    return sort_diagnostics(out)


def _the_variants(names: Iterable[str]) -> str:
    """The variants there are, for an error that names none of them."""
    known = sorted(names)
    return f" (the variants: {', '.join(known)})" if known else " (there are no variants)"
