"""The Jinja environments: one for code (no escaping), one for documents (HTML escaping)."""

from __future__ import annotations

import contextlib
import functools
from pathlib import Path

import jinja2
import jinja2.bccache

from lisboa_rules import cache, encode, stamp


class _QuietBytecodeCache(jinja2.FileSystemBytecodeCache):
    """Jinja's file cache of compiled templates, with three changes:

    - Jinja keys a compiled template by its name and source only, not by the environment's
      settings (trim_blocks, autoescape, ...) or its own version, which change the compiled
      code. The file names here also carry the compiler fingerprint (stamp.py: this package's
      files, the Python and library versions) and the environment's name.
    - A cache file that cannot be read or written (damaged, full or read-only disk) only
      costs a recompile, never the build.
    - Nothing is read or written while caching is off (`build --no-cache`).
    """

    def __init__(self, folder: Path, env_name: str) -> None:
        fingerprint = stamp.compiler_fingerprint()[:20]
        super().__init__(str(folder), f"__jinja2_%s.{env_name}.{fingerprint}.cache")
        for old in folder.glob(f"__jinja2_*.{env_name}.*.cache"):  # other compilers' files
            if not old.name.endswith(f".{fingerprint}.cache"):
                with contextlib.suppress(OSError):
                    old.unlink()

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        if cache.cache_dir() is None:
            return
        try:
            super().load_bytecode(bucket)
        except Exception:
            bucket.reset()

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        if cache.cache_dir() is None:
            return
        with contextlib.suppress(Exception):
            super().dump_bytecode(bucket)


def _bytecode_cache(env_name: str) -> jinja2.BytecodeCache | None:
    """Compiled templates kept between runs in the cache folder (checked against the template
    source by Jinja, so an edited template is recompiled); None when caching is off."""
    folder = cache.template_cache_dir()
    return None if folder is None else _QuietBytecodeCache(folder, env_name)


@functools.cache
def code_env() -> jinja2.Environment:
    """Templates that produce Python: never escaped, strict about undefined names; data goes
    in already encoded (lisboa_rules/encode.py), docstring text through the `pydoc` filter."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("lisboa_rules", "templates"),
        undefined=jinja2.StrictUndefined,
        bytecode_cache=_bytecode_cache("code"),
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
    env.filters["pydoc"] = encode.py_docstring
    return env


@functools.cache
def doc_env() -> jinja2.Environment:
    """Templates that produce HTML and Markdown: HTML autoescaped by the template's name."""
    return jinja2.Environment(
        loader=jinja2.PackageLoader("lisboa_rules", "templates"),
        undefined=jinja2.StrictUndefined,
        bytecode_cache=_bytecode_cache("doc"),
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=jinja2.select_autoescape(
            enabled_extensions=("html", "html.jinja"), default_for_string=True
        ),
    )
