"""Every key is read or refused (issue 33), for every schema of the rules: each key of each
schema (lisboa_rules/front/schema/*.schema.json) is classified in tests/model/schema_keys/
(one table per schema) as

- `engine`: a change of it changes the generated engine (lisboa_engine.py), or is refused at
  build time with located errors (the table says `refused:` and why);
- `reference`: a change of it leaves the engine as it was and changes the reference (its
  words, names, provenance, examples, figures, the state's schema);
- `compiler`: structural (an id, a kind, a section whose keys are classified one by one, what
  a variant matches), not changed here;

with a short phrase saying what reads it. The walk fails on a key of a schema the table does
not classify and on a key of the table no schema has (so the tables cannot drift). Then each
`engine` and `reference` key written in rules/ is changed at one place (schema_walk.py
`changed`: a bool flipped, a number + 1, a string changed, a list shortened; or the table's
`change:`, where that changes nothing a reader sees, as a source already named) and the rules
built in memory, and what changed is what its class says. A key whose change changes nothing
is a key nothing reads: the table marks it `unread:` with the evidence, and its case is an
xfail(strict=True) that fails the day it is read or refused.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import schema_walk as w
import yaml

from lisboa_rules import pipeline

TABLES = Path(__file__).with_name("schema_keys")
ENGINE = "lisboa_engine.py"
CLASSES = ("engine", "reference", "compiler")
OPTIONS = {"class", "read", "refused", "unread", "at", "change"}


def _table(schema: str) -> dict[str, dict[str, Any]]:
    path = TABLES / f"{schema.removesuffix(w.SUFFIX)}.yaml"
    raw = yaml.safe_load(path.read_text(encoding="utf-8")) if path.exists() else {}
    out = {}
    for key, row in (raw or {}).items():
        if isinstance(row, list):
            row = {"class": row[0], "read": row[1]}
        out[str(key)] = dict(row)
    return out


KEYS = w.schema_keys()
TABLE = {s: _table(s) for s in KEYS}
DOCS = w.rules_docs()
INSTANCES = w.instances(DOCS)


# --- the walk: every key classified, no other ---------------------------------------------------


def test_every_schema_has_a_table() -> None:
    names = {p.name.removesuffix(".yaml") for p in TABLES.glob("*.yaml")}
    assert names == {s.removesuffix(w.SUFFIX) for s in KEYS}


@pytest.mark.parametrize("schema", sorted(KEYS))
def test_every_key_of_the_schema_is_classified(schema: str) -> None:
    """The table of the schema classifies each of its keys, and only those: each in one
    class, with what reads it."""
    table = TABLE[schema]
    missing = sorted(KEYS[schema] - set(table))
    assert not missing, f"classify in schema_keys/: {missing}"
    stale = sorted(set(table) - KEYS[schema])
    assert not stale, f"no longer a key of {schema}: {stale}"
    for key, row in table.items():
        assert row.get("class") in CLASSES, (key, row)
        assert isinstance(row.get("read"), str) and row["read"].strip(), f"{key}: what reads it?"
        assert set(row) <= OPTIONS, (key, sorted(set(row) - OPTIONS))
        assert "refused" not in row or row["class"] == "engine", key
        assert "unread" not in row or row["class"] != "compiler", key


def test_every_key_written_in_the_rules_is_found() -> None:
    """The walk of the data names each value of rules/ by a key of a schema (no key of the
    data is missed by the walk of the schemas)."""
    known = {(s, k) for s, keys in KEYS.items() for k in keys}
    assert set(INSTANCES) <= known
    assert len(INSTANCES) > len(known) // 2


# --- a change of each key ---------------------------------------------------------------------


def _cases() -> list[Any]:
    out = []
    for schema in sorted(KEYS):
        for key, row in sorted(TABLE[schema].items()):
            if row.get("class") not in ("engine", "reference") or (schema, key) not in INSTANCES:
                continue
            marks = []
            if "unread" in row:
                marks.append(pytest.mark.xfail(strict=True, reason=f"unread: {row['unread']}"))
            out.append(pytest.param(schema, key, id=f"{schema.removesuffix(w.SUFFIX)}:{key}",
                                    marks=marks))
    return out


def _build(docs: dict[str, Any], tmp: Path) -> pipeline.CompileResult:
    return pipeline.compile_rules(w.write(docs, tmp / "rules"))


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The outputs of rules/ written again as the changed copies are (the same data)."""
    result = _build(DOCS, tmp_path_factory.mktemp("base"))
    assert result.ok, [d.message for d in result.diagnostics if d.is_error]
    return {k: w.normal(v) for k, v in result.files.items()}


@pytest.mark.sampled(3)
@pytest.mark.parametrize(("schema", "key"), _cases())
def test_a_change_of_a_key_changes_what_its_class_says(
    tmp_path: Path, base: dict[str, str], schema: str, key: str
) -> None:
    """One value of the key in rules/ changed: an `engine` key changes the engine (or, where
    the table says `refused:`, the build is refused with located errors); a `reference` key
    leaves the engine as it was and changes the reference."""
    row = TABLE[schema][key]
    rel, at = INSTANCES[(schema, key)][int(row.get("at", 0))]
    value = w.get(DOCS[rel], at)
    new = row["change"] if "change" in row else w.changed(value)
    assert new != value
    result = _build(w.mutate(DOCS, rel, at, new), tmp_path)
    errors = [d for d in result.diagnostics if d.is_error]
    where = f"{rel} {'.'.join(map(str, at))}: {value!r} -> {new!r}"
    if "refused" in row:
        assert errors, f"{where}: built, where the table says it is refused"
        assert all(d.span is not None for d in errors), [d.message for d in errors]
        return
    assert not errors, (where, [f"{d.code}: {d.message}" for d in errors])
    files = {k: w.normal(v) for k, v in result.files.items()}
    engine_changed = files[ENGINE] != base[ENGINE]
    reference = sorted(k for k in set(files) | set(base)
                       if k != ENGINE and files.get(k) != base.get(k))
    if row["class"] == "engine":
        assert engine_changed, f"{where}: the engine is as it was (reference: {reference})"
    else:
        assert not engine_changed, f"{where}: a key of the reference changes the engine"
        assert reference, f"{where}: changes neither the engine nor the reference"
