"""The Jinja environments: one for code (no escaping), one for documents (HTML escaping)."""

from __future__ import annotations

import functools

import jinja2

from lisboa_rules import cache


@functools.cache
def _bytecode_cache() -> jinja2.BytecodeCache | None:
    """Compiled templates kept between runs in the cache folder (checked against the template
    source by Jinja, so an edited template is recompiled); None when caching is off."""
    folder = cache.template_cache_dir()
    return None if folder is None else jinja2.FileSystemBytecodeCache(str(folder))


@functools.cache
def code_env() -> jinja2.Environment:
    """Templates that produce Python: never escaped, strict about undefined names."""
    return jinja2.Environment(
        loader=jinja2.PackageLoader("lisboa_rules", "templates"),
        undefined=jinja2.StrictUndefined,
        bytecode_cache=_bytecode_cache(),
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )


@functools.cache
def doc_env() -> jinja2.Environment:
    """Templates that produce HTML and Markdown: HTML autoescaped by the template's name."""
    return jinja2.Environment(
        loader=jinja2.PackageLoader("lisboa_rules", "templates"),
        undefined=jinja2.StrictUndefined,
        bytecode_cache=_bytecode_cache(),
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=jinja2.select_autoescape(
            enabled_extensions=("html", "html.jinja"), default_for_string=True
        ),
    )
