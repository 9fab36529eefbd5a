"""The output writer: compile gate, change-only, whole-folder atomic swap, check/diff, pruning."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from lisboa_rules import writer
from lisboa_rules.writer import MANIFEST, write_outputs

FILES = {
    "lisboa_engine.py": "RULES = {'a': 1}\n",
    "reference/rules.md": "# Lisboa\n\nRéis.\n",
    "schema/game.schema.json": "{}\n",
}

Snapshot = dict[str, tuple[bytes, int, int]]


def snapshot(root: Path) -> Snapshot:
    """Return every file under root with its bytes, mtime_ns and inode."""
    out: Snapshot = {}
    for p in sorted(root.rglob("*")):
        if p.is_file():
            st = p.stat()
            out[p.relative_to(root).as_posix()] = (p.read_bytes(), st.st_mtime_ns, st.st_ino)
    return out


def siblings(out: Path) -> list[str]:
    """Return the entries next to the output folder (temp folders must not linger)."""
    return sorted(p.name for p in out.parent.iterdir())


@pytest.fixture
def out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An output folder `gen` under a CWD of its own, so display paths are `gen/...`."""
    monkeypatch.chdir(tmp_path)
    return tmp_path / "gen"


def age(root: Path) -> None:
    """Move every mtime an hour back so any rewrite is visible."""
    for p in root.rglob("*"):
        st = p.stat()
        os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns - 3_600_000_000_000))


def test_first_write_creates_files_and_manifest(out: Path) -> None:
    result = write_outputs(out, FILES)
    assert result.ok and result.diagnostics == []
    assert result.written == sorted(FILES)
    assert (out / "reference/rules.md").read_bytes() == "# Lisboa\n\nRéis.\n".encode()
    manifest = (out / MANIFEST).read_text().splitlines()
    assert [ln for ln in manifest if not ln.startswith("#")] == sorted(FILES)
    assert siblings(out) == ["gen"]


def test_files_get_normal_permissions(out: Path) -> None:
    umask = os.umask(0o022)
    try:
        write_outputs(out, FILES)
    finally:
        os.umask(umask)
    assert stat.S_IMODE((out / "lisboa_engine.py").stat().st_mode) == 0o644
    assert stat.S_IMODE(out.stat().st_mode) == 0o755


def test_newlines_are_written_verbatim(out: Path) -> None:
    write_outputs(out, {"a.md": "x\ny\n"})
    assert (out / "a.md").read_bytes() == b"x\ny\n"


def test_nothing_is_touched_when_up_to_date(out: Path) -> None:
    write_outputs(out, FILES)
    age(out)
    before = snapshot(out)
    dir_inode = out.stat().st_ino
    result = write_outputs(out, FILES)
    assert result.written == [] and result.stale == [] and result.removed == []
    assert result.unchanged == sorted(FILES)
    assert snapshot(out) == before
    assert out.stat().st_ino == dir_inode
    assert siblings(out) == ["gen"]


def test_unchanged_files_keep_mtime_when_another_changes(out: Path) -> None:
    write_outputs(out, FILES)
    age(out)
    before = snapshot(out)
    result = write_outputs(out, {**FILES, "lisboa_engine.py": "RULES = {}\n"})
    assert result.written == ["lisboa_engine.py"]
    after = snapshot(out)
    assert after["lisboa_engine.py"][0] == b"RULES = {}\n"
    for rel in ("reference/rules.md", "schema/game.schema.json"):
        assert after[rel] == before[rel], rel
    # The manifest lists the same files: it is left alone too.
    assert after[MANIFEST] == before[MANIFEST]
    assert siblings(out) == ["gen"]


def test_check_lists_stale_files_and_writes_nothing(out: Path) -> None:
    write_outputs(out, FILES)
    before = snapshot(out)
    changed = {**FILES, "lisboa_engine.py": "RULES = {}\n", "new.md": "n\n"}
    del changed["schema/game.schema.json"]
    result = write_outputs(out, changed, check=True)
    assert snapshot(out) == before
    assert result.stale == [MANIFEST, "lisboa_engine.py", "new.md", "schema/game.schema.json"]
    assert result.messages() == [
        "would regenerate gen/.manifest",
        "would regenerate gen/lisboa_engine.py",
        "would create gen/new.md",
        "would remove gen/schema/game.schema.json",
    ]
    assert result.written == [] and result.removed == []


def test_check_on_a_missing_folder_creates_nothing(out: Path) -> None:
    result = write_outputs(out, FILES, check=True)
    assert not out.exists()
    assert len(result.stale) == len(FILES) + 1


def test_diff_is_unified_with_a_b_paths_and_writes_nothing(out: Path) -> None:
    write_outputs(out, FILES)
    before = snapshot(out)
    result = write_outputs(out, {**FILES, "lisboa_engine.py": "RULES = {}\n"}, diff=True)
    assert snapshot(out) == before
    assert result.stale == ["lisboa_engine.py"]
    assert result.diff_text == (
        "--- a/gen/lisboa_engine.py\n"
        "+++ b/gen/lisboa_engine.py\n"
        "@@ -1 +1 @@\n"
        "-RULES = {'a': 1}\n"
        "+RULES = {}\n"
    )


def test_diff_marks_a_missing_final_newline(out: Path) -> None:
    write_outputs(out, {"a.md": "x\n"})
    text = write_outputs(out, {"a.md": "x"}, diff=True).diff_text
    assert text.endswith("+x\n\\ No newline at end of file\n")


def test_python_outputs_must_compile_before_anything_is_written(out: Path) -> None:
    write_outputs(out, FILES)
    before = snapshot(out)
    bad = {**FILES, "lisboa_engine.py": "def f(:\n    pass\n", "other.py": "x = 1\n"}
    result = write_outputs(out, bad)
    assert snapshot(out) == before
    assert not result.ok
    (d,) = result.diagnostics
    assert d.code == "generated-invalid"
    assert d.span is not None and (d.span.file, d.span.line) == ("gen/lisboa_engine.py", 1)


@pytest.mark.parametrize("fail_at", [1, 2, 3])
def test_failure_on_nth_file_write_leaves_the_folder_byte_identical(
    out: Path, monkeypatch: pytest.MonkeyPatch, fail_at: int
) -> None:
    write_outputs(out, FILES)
    (out / "notes.txt").write_text("mine\n")
    before = snapshot(out)
    real = writer._write_bytes
    calls = 0

    def flaky(path: Path, data: bytes) -> None:
        nonlocal calls
        calls += 1
        if calls == fail_at:
            raise OSError(28, "No space left on device", str(path))
        real(path, data)

    monkeypatch.setattr(writer, "_write_bytes", flaky)
    new = {rel: text.replace("\n", "  # v2\n") for rel, text in FILES.items()}
    result = write_outputs(out, {**new, "extra.md": "e\n"})
    assert calls == fail_at
    assert snapshot(out) == before
    assert siblings(out) == ["gen"]
    (d,) = [d for d in result.diagnostics if d.code == "write-failed"]
    assert "No space left on device" in d.message and d.span is None
    assert result.written == []


def test_failure_while_swapping_restores_the_folder(
    out: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_outputs(out, FILES)
    before = snapshot(out)
    monkeypatch.setattr(writer, "_exchange", lambda a, b: False)  # the two-rename fallback
    real = writer._rename
    calls = 0

    def flaky(src: Path, dst: Path) -> None:
        nonlocal calls
        calls += 1
        if calls == 2:  # old folder already moved aside, new one not yet in place
            raise PermissionError(13, "Permission denied", str(dst))
        real(src, dst)

    monkeypatch.setattr(writer, "_rename", flaky)
    result = write_outputs(out, {**FILES, "lisboa_engine.py": "RULES = {}\n"})
    assert not result.ok
    assert snapshot(out) == before
    assert siblings(out) == ["gen"]


def test_owned_files_are_pruned_and_strays_reported(out: Path) -> None:
    write_outputs(out, FILES)
    (out / "notes.txt").write_text("mine\n")
    (out / "schema" / "local.json").write_text("{}\n")
    result = write_outputs(out, {"lisboa_engine.py": FILES["lisboa_engine.py"]})
    assert result.ok
    assert result.removed == ["reference/rules.md", "schema/game.schema.json"]
    assert result.strays == ["notes.txt", "schema/local.json"]
    assert [(d.code, d.severity) for d in result.diagnostics] == [("stray-output", "warning")] * 2
    assert sorted(snapshot(out)) == [MANIFEST, "lisboa_engine.py", "notes.txt", "schema/local.json"]
    assert not (out / "reference").exists()  # emptied by pruning
    assert (out / "notes.txt").read_text() == "mine\n"


def test_without_a_manifest_nothing_unknown_is_deleted(out: Path) -> None:
    out.mkdir()
    (out / "old_engine.py").write_text("x = 1\n")
    result = write_outputs(out, FILES)
    assert result.removed == [] and result.strays == ["old_engine.py"]
    assert (out / "old_engine.py").exists()


def test_prune_false_keeps_and_still_owns_old_outputs(out: Path) -> None:
    write_outputs(out, FILES)
    result = write_outputs(out, {"lisboa_engine.py": "x = 2\n"}, prune=False)
    assert result.removed == [] and result.strays == []
    assert (out / "reference/rules.md").exists()
    assert "reference/rules.md" in (out / MANIFEST).read_text()


def test_output_folder_that_is_a_file(out: Path) -> None:
    out.write_text("oops")
    result = write_outputs(out, FILES)
    assert [d.code for d in result.diagnostics] == ["write-failed"]
    assert out.read_text() == "oops"


@pytest.mark.parametrize(
    "rel", ["/abs.py", "../up.py", "a/../b.py", "a\\b.py", "", MANIFEST, "./a"]
)
def test_unsafe_output_paths_are_a_programming_error(out: Path, rel: str) -> None:
    with pytest.raises(ValueError):
        write_outputs(out, {rel: "x\n"})
