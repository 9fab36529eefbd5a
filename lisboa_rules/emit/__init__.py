"""Back ends: the compiled rules -> {relative path: text}. Pure: nothing here touches the disk."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING

import jinja2

from lisboa_rules.core.diagnostics import Diagnostic
from lisboa_rules.core.encode import py_str
from lisboa_rules.core.inputs import ENGINE as ENGINE
from lisboa_rules.core.inputs import STATE_SCHEMA as STATE_SCHEMA
from lisboa_rules.core.inputs import VIEW_SCHEMA as VIEW_SCHEMA
from lisboa_rules.emit.engine.runtime import runtime_text
from lisboa_rules.emit.engine.state_schema import state_schemas, view_schema
from lisboa_rules.emit.engine.view import build_view
from lisboa_rules.emit.env import code_env
from lisboa_rules.emit.header import header, wrap_comment
from lisboa_rules.emit.package import emit_package, engine_version
from lisboa_rules.emit.reference import render as reference
from lisboa_rules.front.schema import export_schemas

if TYPE_CHECKING:
    from lisboa_rules.emit.engine.procs import Lowered
    from lisboa_rules.model.compiled import Compiled


def emit_engine(compiled: Compiled, lowered: Lowered) -> dict[str, str]:
    """The engine module, the state schema and the view schema (`lowered`: the rule sets'
    procedures, as the lower pass compiled them)."""
    models = [rs.model for rs in compiled.rulesets]
    schema, own = state_schemas(models, compiled.variants, compiled.digest, compiled.folded)
    seen = view_schema(schema, models[0].state, compiled.digest)
    view = build_view(
        models,
        lowered,
        compiled.variants,
        schema,
        compiled.names,
        compiled.folded_titles,
        own,
        seen,
    )
    runtime = runtime_text()
    text = runtime.unused_dropped(
        code_env()
        .get_template("engine/lisboa_engine.py.jinja")
        .render(
            view=view,
            runtime=runtime,
            header=wrap_comment(header(compiled)),
            version=py_str(engine_version(compiled)),
        )
    )
    return {
        ENGINE: text,
        STATE_SCHEMA: json.dumps(schema, indent=2, ensure_ascii=False) + "\n",
        VIEW_SCHEMA: json.dumps(seen, indent=2, ensure_ascii=False) + "\n",
    }


def emit_schemas() -> dict[str, str]:
    """The packaged rules schemas, exported so editors validate rules files while typing."""
    return {f"schema/{name}": text for name, text in export_schemas().items()}


def emit_all(
    compiled: Compiled, lowered: Lowered, on_engine: Callable[[str], None] | None = None
) -> tuple[dict[str, str], list[Diagnostic]]:
    """Every output file of the compiled rule sets and their lowered procedures (the emit pass
    of pipeline.py); a template failure becomes a diagnostic, never a traceback. `on_engine`
    is given the engine's text as soon as it exists, before the other outputs are made (a
    build starts the backstop's games with it)."""
    files: dict[str, str] = {}
    try:
        engine = emit_engine(compiled, lowered)  # first: the reference's worked examples run it
        files.update(engine)
        if on_engine is not None:
            on_engine(engine[ENGINE])
        files.update(emit_schemas())
        files.update(emit_package(compiled))
        files.update(reference.render(compiled, engine[ENGINE]))
    except jinja2.TemplateError as exc:
        return {}, [Diagnostic("template-error", f"template failed: {exc}", None)]
    return dict(sorted(files.items())), []
