"""lisboa-rules: a declarative rules-data compiler for the board game Lisboa."""

from __future__ import annotations

DISTRIBUTION = "lisboa-rules"


def version() -> str:
    """The version of lisboa-rules that runs (`lisboa-rules --version`, `__version__`).

    From a source checkout (an editable install included) it is the `version` of the
    checkout's pyproject.toml: an editable install's metadata keeps the version it was installed
    with until it is installed again, so a release's bump would not show. Otherwise it is the
    installed distribution's (importlib.metadata), and "0+unknown" when neither is found (the
    package run from a copy that is neither)."""
    import tomllib
    from pathlib import Path

    pyproject = Path(__file__).resolve().parent.parent / "pyproject.toml"
    try:
        project = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {})
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        project = {}
    if project.get("name") == DISTRIBUTION and isinstance(project.get("version"), str):
        return str(project["version"])
    from importlib import metadata

    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return "0+unknown"


def __getattr__(name: str) -> str:
    """`__version__`, read when asked (a build does not pay for the file read)."""
    if name == "__version__":
        return version()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
