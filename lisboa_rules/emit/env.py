"""The Jinja environments: one for code (no escaping), one for documents (HTML escaping)."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import sys
from pathlib import Path

import jinja2
import jinja2.bccache

from lisboa_rules.core import encode
from lisboa_rules.outputs import cache


@functools.cache
def template_fingerprint() -> str:
    """What a compiled template depends on besides its own source (which Jinja checks): this
    file (the environments' settings, filters and finalize, baked into the compiled code),
    the Jinja version and the Python version (the bytecode)."""
    record = "\n".join((
        hashlib.sha256(Path(__file__).read_bytes()).hexdigest(),
        jinja2.__version__,
        sys.implementation.name,
        sys.version,
    ))
    return hashlib.sha256(record.encode("utf-8")).hexdigest()


class _PrivateBytecodeCache(jinja2.BytecodeCache):
    """Jinja's compiled templates, kept in a private folder (cache.open_folder: a directory of
    the effective user, mode 0700, not a symlink, checked on its open descriptor) and read
    only from it, relative to that descriptor:

    - Jinja keys a compiled template by its name and source only, not by the environment's
      settings (trim_blocks, autoescape, ...) or its own version, which change the compiled
      code. The file names here also carry `template_fingerprint` (this file, the Jinja and
      Python versions) and the environment's name.
    - A cache file that is damaged, not a regular file of ours (a FIFO, a symlink to
      /dev/zero, ...), or that cannot be written only costs a recompile, never the build.
    - Nothing is read or written while caching is off (`build --no-cache`).
    """

    def __init__(self, dir_fd: int, env_name: str) -> None:
        self.dir_fd = dir_fd
        fingerprint = template_fingerprint()[:20]
        self.suffix = f".{env_name}.{fingerprint}.cache"
        with contextlib.suppress(OSError):  # other compilers' files
            for name in os.listdir(dir_fd):
                if (name.startswith("__jinja2_") and name.endswith(".cache")
                        and f".{env_name}." in name and not name.endswith(self.suffix)):
                    with contextlib.suppress(OSError):
                        os.unlink(name, dir_fd=dir_fd)

    def _name(self, bucket: jinja2.bccache.Bucket) -> str:
        return f"__jinja2_{bucket.key}{self.suffix}"

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        if cache.is_off():
            return
        data = cache.read_private(self.dir_fd, self._name(bucket))
        if data is None:
            return
        try:
            bucket.bytecode_from_string(data)
        except Exception:
            bucket.reset()

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        if cache.is_off():
            return
        with contextlib.suppress(Exception):
            cache.write_private(self.dir_fd, self._name(bucket), bucket.bytecode_to_string())


def _bytecode_cache(env_name: str) -> jinja2.BytecodeCache | None:
    """Compiled templates kept between runs (checked against the template source by Jinja, so
    an edited template is recompiled); None when caching is off or the folder is not private."""
    folder = cache.template_cache_dir()
    dir_fd = None if folder is None else cache.open_folder(folder)
    return None if dir_fd is None else _PrivateBytecodeCache(dir_fd, env_name)


@functools.cache
def code_env() -> jinja2.Environment:
    """Templates that produce Python: never escaped, strict about undefined names; data goes
    in already encoded (lisboa_rules/core/encode.py), docstring text through the `pydoc` filter."""
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
    """Templates that produce HTML and Markdown: HTML autoescaped by the template's name; every
    printed string has its invisible controls made visible (encode.page_value)."""
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
        finalize=encode.page_value,  # no invisible control reaches a page
    )
