"""The Jinja environments: one for code (no escaping), one for documents (HTML escaping)."""

from __future__ import annotations

import contextlib
import functools

import jinja2
import jinja2.bccache

from lisboa_rules import cache


class _QuietBytecodeCache(jinja2.FileSystemBytecodeCache):
    """Jinja's file cache of compiled templates, except that a cache that cannot be read or
    written (damaged file, full or read-only disk) only costs a recompile, never the build."""

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        try:
            super().load_bytecode(bucket)
        except Exception:
            bucket.reset()

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        with contextlib.suppress(Exception):
            super().dump_bytecode(bucket)


@functools.cache
def _bytecode_cache() -> jinja2.BytecodeCache | None:
    """Compiled templates kept between runs in the cache folder (checked against the template
    source by Jinja, so an edited template is recompiled); None when caching is off."""
    folder = cache.template_cache_dir()
    return None if folder is None else _QuietBytecodeCache(str(folder))


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
