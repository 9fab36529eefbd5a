"""No command writes through a symlink (issue 30): every file is a new file of a random name,
made O_EXCL | O_NOFOLLOW, given its mode on its descriptor and renamed into place
(lisboa_rules/outputs/files.py), so a symlink planted in a shared output folder, at the output's
name or at a temporary name, is replaced or refused and its target is never changed.

Each test plants symlinks to a "victim" file (another user's file, in the attack) and checks the
victim's bytes and mode afterwards, and that the output is a regular file of its own.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import optional
import pytest
from conftest import run_cli

from lisboa_rules.cli import compile as compile_cli
from lisboa_rules.cli import reference
from lisboa_rules.outputs import files, writer

VICTIM_BYTES = b"another user's file\n"


def _victim(tmp_path: Path) -> Path:
    folder = tmp_path / "elsewhere"
    folder.mkdir(exist_ok=True)
    victim = folder / "victim.txt"
    victim.write_bytes(VICTIM_BYTES)
    victim.chmod(0o644)
    return victim


def _untouched(victim: Path) -> None:
    assert victim.read_bytes() == VICTIM_BYTES
    assert stat.S_IMODE(victim.stat().st_mode) == 0o644


def _regular(path: Path) -> os.stat_result:
    st = os.lstat(path)
    assert stat.S_ISREG(st.st_mode), f"{path} is not a regular file"
    return st


# --- the helper ---------------------------------------------------------------------------


def test_a_symlink_at_the_target_is_replaced(tmp_path: Path) -> None:
    victim = _victim(tmp_path)
    out = tmp_path / "shared"
    out.mkdir()
    (out / "report.txt").symlink_to(victim)
    files.write_file_atomic(out / "report.txt", b"ours\n", 0o755)
    _untouched(victim)
    st = _regular(out / "report.txt")
    assert (out / "report.txt").read_bytes() == b"ours\n" and stat.S_IMODE(st.st_mode) == 0o755
    assert sorted(p.name for p in out.iterdir()) == ["report.txt"]  # no temporary left


def test_a_dangling_symlink_at_the_target_is_replaced(tmp_path: Path) -> None:
    out = tmp_path / "shared"
    out.mkdir()
    (out / "report.txt").symlink_to(tmp_path / "would-be-created")
    files.write_file_atomic(out / "report.txt", b"ours\n")
    _regular(out / "report.txt")
    assert not (tmp_path / "would-be-created").exists()


def test_the_temporary_name_is_not_predictable(tmp_path: Path) -> None:
    """Not the PID (a small number anyone can list) but 64 random bits."""
    names = {files.temporary_name("lisboa_engine.so") for _ in range(50)}
    assert len(names) == 50
    for n in names:
        random = n.removeprefix(".lisboa_engine.so.").removesuffix(".tmp")
        assert len(random) == 16 and int(random, 16) >= 0, n


def test_a_symlink_at_the_temporary_name_is_not_followed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Even a planted symlink at the very name the helper picks (as if it were guessed) is
    refused by O_EXCL: another name is taken, the symlink stays, the victim is unchanged."""
    victim = _victim(tmp_path)
    out = tmp_path / "shared"
    out.mkdir()
    (out / ".guessed.tmp").symlink_to(victim)
    names = iter([".guessed.tmp", ".other.tmp"])
    monkeypatch.setattr(files, "temporary_name", lambda name: next(names))
    files.write_file_atomic(out / "report.txt", b"ours\n", 0o755)
    _untouched(victim)
    assert (out / ".guessed.tmp").is_symlink()
    assert (out / "report.txt").read_bytes() == b"ours\n"


def test_a_folder_at_the_target_is_an_error_and_nothing_is_left(tmp_path: Path) -> None:
    (tmp_path / "report.txt").mkdir()
    with pytest.raises(IsADirectoryError):
        files.write_file_atomic(tmp_path / "report.txt", b"ours\n")
    assert [p.name for p in tmp_path.iterdir()] == ["report.txt"]


def test_write_new_file_refuses_any_existing_name(tmp_path: Path) -> None:
    victim = _victim(tmp_path)
    (tmp_path / "page.html").symlink_to(victim)
    with pytest.raises(FileExistsError):
        files.write_new_file(tmp_path / "page.html", b"ours")
    _untouched(victim)
    files.write_new_file(tmp_path / "new.html", b"ours", 0o640)
    assert stat.S_IMODE(_regular(tmp_path / "new.html").st_mode) == 0o640


# --- compile --------------------------------------------------------------------------------


def test_compile_does_not_write_or_chmod_through_planted_symlinks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The old temporary name (`.lisboa_engine<suffix>.<PID>.tmp`, written, then chmod 0755)
    and the target's name both hold symlinks to the victim: neither is followed."""
    optional.module("mypy.version", "dev")  # compile names its file by a key holding mypy's version
    monkeypatch.setattr(compile_cli, "run_mypyc", lambda source, level: b"\x7fELF fake")
    victim = _victim(tmp_path)
    out = tmp_path / "shared"
    out.mkdir()
    name = f"{compile_cli.MODULE}{compile_cli.extension_suffix()}"
    (out / f".{name}.{os.getpid()}.tmp").symlink_to(victim)
    (out / name).symlink_to(victim)
    done = compile_cli.compile_engine(b"source", out, 0, use_cache=False)
    _untouched(victim)
    st = _regular(done.path)
    assert done.path == out / name and done.path.read_bytes() == b"\x7fELF fake"
    assert stat.S_IMODE(st.st_mode) == 0o755
    assert (out / f".{name}.{os.getpid()}.tmp").is_symlink()  # left alone, not used
    assert len(list(out.iterdir())) == 2


# --- balance --out ----------------------------------------------------------------------------

BALANCE = ["balance", "--games", "1", "--seed", "1", "--players", "2", "--agents", "random",
           "--format", "json"]


def test_balance_out_replaces_a_symlink(
    tmp_path: Path, capsys: Any, monkeypatch: Any
) -> None:
    victim = _victim(tmp_path)
    link = tmp_path / "report.json"
    link.symlink_to(victim)
    code, _, err = run_cli([*BALANCE, "--out", str(link)], capsys, monkeypatch)
    assert code == 0, err
    _untouched(victim)
    _regular(link)
    assert link.read_text(encoding="utf-8").startswith('{\n  "run"')


def test_balance_out_replaces_a_symlink_to_a_folder(
    tmp_path: Path, capsys: Any, monkeypatch: Any
) -> None:
    victim = _victim(tmp_path)
    link = tmp_path / "report.json"
    link.symlink_to(victim.parent)
    code, _, err = run_cli([*BALANCE, "--out", str(link)], capsys, monkeypatch)
    assert code == 0, err
    _untouched(victim)
    assert [p.name for p in victim.parent.iterdir()] == ["victim.txt"]
    _regular(link)


@pytest.mark.parametrize("where", ["fifo", "/dev/null", "/dev/stdout"])
def test_balance_out_refuses_devices_and_fifos(
    where: str, tmp_path: Path, capsys: Any, monkeypatch: Any
) -> None:
    """A report replaces what is at --out; a FIFO or a device is not replaced (run as root, a
    rename would replace /dev/null), it is refused before any game is played."""
    if where == "fifo":
        path = tmp_path / "pipe"
        os.mkfifo(path)
    else:
        path = Path(where)
    before = os.lstat(path)
    code, out, err = run_cli([*BALANCE, "--out", str(path)], capsys, monkeypatch)
    assert code == 2 and out == "", err
    assert err.startswith(f"lisboa-rules: error: --out {path}: "), err
    after = os.lstat(path)
    assert (after.st_ino, after.st_mode) == (before.st_ino, before.st_mode)


# --- pdf --out ----------------------------------------------------------------------------------


def test_pdf_out_replaces_symlinks(
    tmp_path: Path, capsys: Any, monkeypatch: Any
) -> None:
    """A printer that writes where it is told; the PDFs' names and the old `.NAME.pdf.partial`
    temporary names hold symlinks to the victim."""

    def fake(html: str, work: Path, target: Path) -> None:
        target.write_bytes(b"%PDF-1.4 fake\n")

    monkeypatch.setattr(reference, "choose_printer", lambda backend: ("fake", fake))
    victim = _victim(tmp_path)
    out = tmp_path / "dist"
    out.mkdir()
    for stem in ("rules", "player-aid"):
        (out / f"{stem}.pdf").symlink_to(victim)
        (out / f".{stem}.pdf.partial").symlink_to(victim)
    code, _, err = run_cli(["pdf", "--out", str(out)], capsys, monkeypatch)
    assert code == 0, err
    _untouched(victim)
    for stem in ("rules", "player-aid"):
        _regular(out / f"{stem}.pdf")
        assert (out / f"{stem}.pdf").read_bytes() == b"%PDF-1.4 fake\n"
        assert (out / f".{stem}.pdf.partial").is_symlink()


# --- build and schema --out -----------------------------------------------------------------


def test_schema_out_does_not_write_through_a_symlinked_output(
    tmp_path: Path, capsys: Any, monkeypatch: Any
) -> None:
    victim = _victim(tmp_path)
    out = tmp_path / "schemas"
    code, _, err = run_cli(["schema", "--out", str(out)], capsys, monkeypatch)
    assert code == 0, err
    first = sorted(p.name for p in out.iterdir() if p.name.endswith(".schema.json"))[0]
    (out / first).unlink()
    (out / first).symlink_to(victim)
    code, _, err = run_cli(["schema", "--out", str(out)], capsys, monkeypatch)
    assert code == 0, err
    _untouched(victim)
    assert _regular(out / first).st_size > len(VICTIM_BYTES)


@pytest.mark.parametrize("exchange", [True, False], ids=["exchange", "two renames"])
def test_schema_out_that_is_a_symlink_is_replaced(
    exchange: bool, tmp_path: Path, capsys: Any, monkeypatch: Any
) -> None:
    victim = _victim(tmp_path)
    if not exchange:
        monkeypatch.setattr(writer, "_exchange", lambda a, b: False)
    link = tmp_path / "schemas"
    link.symlink_to(victim.parent)
    code, _, err = run_cli(["schema", "--out", str(link)], capsys, monkeypatch)
    assert code == 0, err
    _untouched(victim)
    assert [p.name for p in victim.parent.iterdir()] == ["victim.txt"]
    assert not link.is_symlink() and link.is_dir()


def test_the_staging_folder_is_private_until_complete(
    tmp_path: Path, capsys: Any, monkeypatch: Any
) -> None:
    """The writer stages the new tree next to the output folder: it stays 0700 while files
    are written into it (nobody else can plant a symlink there), and gets the output folder's
    mode on its descriptor before the swap."""
    out = tmp_path / "schemas"
    out.mkdir()
    out.chmod(0o775)
    seen: list[int] = []
    real = writer._write_bytes

    def spy(path: Path, data: bytes) -> None:
        staging = next(p for p in path.parents if p.name.startswith(".schemas.new-"))
        seen.append(stat.S_IMODE(staging.stat().st_mode))
        real(path, data)

    monkeypatch.setattr(writer, "_write_bytes", spy)
    code, _, err = run_cli(["schema", "--out", str(out)], capsys, monkeypatch)
    assert code == 0, err
    assert seen and set(seen) == {0o700}
    assert stat.S_IMODE(out.stat().st_mode) == 0o775


@pytest.mark.parametrize("exchange", [True, False], ids=["exchange", "two renames"])
def test_schema_out_that_is_a_dangling_symlink_is_replaced(
    exchange: bool, tmp_path: Path, capsys: Any, monkeypatch: Any
) -> None:
    """A dangling symlink would have sent the new folder to where it points (a folder of
    someone else's choosing): the link itself is replaced."""
    (tmp_path / "theirs").mkdir()
    if not exchange:
        monkeypatch.setattr(writer, "_exchange", lambda a, b: False)
    link = tmp_path / "schemas"
    link.symlink_to(tmp_path / "theirs" / "planted")
    code, _, err = run_cli(["schema", "--out", str(link)], capsys, monkeypatch)
    assert code == 0, err
    assert list((tmp_path / "theirs").iterdir()) == []
    assert not link.is_symlink() and (link / ".manifest").is_file()
