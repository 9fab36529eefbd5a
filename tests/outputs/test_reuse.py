"""Passes reused by the digest of what they read (issue 36; outputs/reuse.py).

A build files the results of its pure passes in the private cache folder and reuses them when
their inputs did not change; the outputs are byte for byte what a build without the cache
makes. `build --check` never reads them (it recomputes every pass), `--no-cache` turns them
off, and a damaged or foreign entry only costs a recompute.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from lisboa_rules import emit, pipeline
from lisboa_rules.cli.main import main
from lisboa_rules.outputs import cache, reuse

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "generated"
POISON = "raise SystemExit('planted')\n"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of rules/ in an empty folder (the CWD), with a cache folder of its own."""
    shutil.copytree(ROOT / "rules", tmp_path / "rules")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(cache.ENV, str(tmp_path / "cache"))
    return tmp_path


def tree(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def entries(project: Path, kind: str) -> list[Path]:
    return sorted((project / "cache" / reuse.FOLDER).glob(f"{kind}-*.json"))


def poison_emit(project: Path) -> None:
    """Rewrite every `emit` entry as a consistent one (its digest recomputed) whose engine
    is planted: what only someone who can write the private folder could do."""
    found = entries(project, "emit")
    assert found, "the build filed no emit entry"
    for p in found:
        entry = json.loads(p.read_text(encoding="utf-8"))
        files = json.loads(entry["payload"])
        files[emit.ENGINE] = POISON
        p.write_bytes(reuse.encode("emit", entry["key"], files))


def test_a_cached_build_is_byte_identical_to_an_uncached_one(project: Path) -> None:
    assert main(["build", "--out", "plain", "--no-cache"]) == 0
    assert not (project / "cache" / reuse.FOLDER).exists(), "--no-cache files nothing"
    assert main(["build", "--out", "first"]) == 0  # files the passes' results
    for kind in ("emit", "valid", "compiles"):
        assert entries(project, kind), kind
    assert main(["build", "--out", "second"]) == 0  # reuses them
    assert (
        tree(project / "plain")
        == tree(project / "first")
        == tree(project / "second")
        == tree(GOLDEN)
    )


def test_the_reuse_is_real_and_check_never_trusts_it(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["build", "--out", "gen"]) == 0
    golden = tree(project / "gen")
    poison_emit(project)
    # --check recomputes every pass: the folder is up to date, whatever the entries say
    capsys.readouterr()
    assert main(["build", "--check", "--out", "gen"]) == 0
    assert "up to date" in capsys.readouterr().err
    # the control: a plain build does reuse the (planted) entry...
    assert main(["build", "--out", "planted"]) == 0
    assert (project / "planted" / emit.ENGINE).read_text(encoding="utf-8") == POISON
    # ...which --check then finds stale, and --no-cache does not read
    capsys.readouterr()
    assert main(["build", "--check", "--out", "planted"]) == 1
    assert f"would regenerate planted/{emit.ENGINE}" in capsys.readouterr().err
    assert main(["build", "--no-cache", "--out", "planted"]) == 0
    assert tree(project / "planted") == golden


def test_check_runs_every_pass(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert main(["build", "--out", "gen"]) == 0
    calls: list[str] = []
    real_emit, real_validate = pipeline.emit_all, pipeline.validate
    monkeypatch.setattr(pipeline, "emit_all", lambda *a: (calls.append("emit"), real_emit(*a))[1])
    monkeypatch.setattr(
        pipeline, "validate", lambda d: (calls.append("validate"), real_validate(d))[1]
    )
    assert main(["build", "--check", "--out", "gen"]) == 0
    assert calls.count("emit") == 1
    assert calls.count("validate") >= len(list((project / "rules").rglob("*.yaml")))
    calls.clear()
    assert main(["build", "--out", "gen"]) == 0  # a build reuses them all
    assert calls == []


def test_an_edit_reuses_what_it_did_not_change(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert main(["build", "--out", "gen"]) == 0
    game = project / "rules" / "game.yaml"
    text = game.read_text(encoding="utf-8")
    assert "\n  reis: 10\n" in text
    game.write_text(text.replace("\n  reis: 10\n", "\n  reis: 12\n", 1), encoding="utf-8")
    validated: list[str] = []
    real = pipeline.validate
    monkeypatch.setattr(pipeline, "validate", lambda d: (validated.append(d.display), real(d))[1])
    assert main(["build", "--out", "gen"]) == 0
    assert "rules/game.yaml" in validated  # the file edited, and what the merge made of it
    assert not [d for d in validated if d.startswith("rules/") and d != "rules/game.yaml"]
    assert b"12" in (project / "gen" / emit.ENGINE).read_bytes()
    assert main(["build", "--check", "--no-cache", "--out", "gen"]) == 0


DAMAGE = [
    "garbage",
    "empty",
    "truncated",
    "another key",
    "another kind",
    "bad digest",
    "not a map",
    "symlink",
    "fifo",
    "folder",
    "too big",
]


@pytest.mark.sampled(4)
@pytest.mark.parametrize("damage", DAMAGE)
def test_a_damaged_or_foreign_entry_costs_a_recompute(project: Path, damage: str) -> None:
    assert main(["build", "--out", "first"]) == 0
    golden = tree(project / "first")
    folder = project / "cache" / reuse.FOLDER
    elsewhere = project / "planted"
    elsewhere.mkdir()
    for p in sorted(folder.iterdir()):
        data = p.read_bytes()
        entry = json.loads(data)
        kind, key = entry["kind"], entry["key"]
        planted = {emit.ENGINE: POISON} if kind == "emit" else False
        p.unlink()
        if damage == "garbage":
            p.write_bytes(b"\x00\xffnot json")
        elif damage == "empty":
            p.write_bytes(b"")
        elif damage == "truncated":
            p.write_bytes(data[: len(data) // 2])
        elif damage == "another key":  # a consistent entry of another key, renamed
            p.write_bytes(reuse.encode(kind, "0" * 64, planted))
        elif damage == "another kind":
            p.write_bytes(reuse.encode("valid" if kind != "valid" else "emit", key, planted))
        elif damage == "bad digest":
            entry["payload"] = json.dumps(planted)
            p.write_text(json.dumps(entry), encoding="utf-8")
        elif damage == "not a map":
            p.write_bytes(reuse.encode(kind, key, ["not", "files"] if kind == "emit" else 1))
        elif damage == "symlink":
            (elsewhere / p.name).write_bytes(reuse.encode(kind, key, planted))
            p.symlink_to(elsewhere / p.name)
        elif damage == "fifo":
            os.mkfifo(p)
        elif damage == "folder":
            p.mkdir()
        elif damage == "too big":
            with p.open("wb") as fh:
                fh.truncate(reuse.MAX_ENTRY + 10)  # sparse
    assert main(["build", "--out", "second"]) == 0
    assert tree(project / "second") == golden == tree(GOLDEN)


@pytest.mark.parametrize("mode", [0o755, 0o770])
def test_entries_are_not_read_from_a_folder_others_can_use(project: Path, mode: int) -> None:
    assert main(["build", "--out", "first"]) == 0
    poison_emit(project)
    (project / "cache" / reuse.FOLDER).chmod(mode)
    assert main(["build", "--out", "second"]) == 0
    assert tree(project / "second") == tree(GOLDEN)


def test_the_store_reads_what_it_wrote_and_nothing_else(project: Path) -> None:
    store = reuse.Store()
    k = reuse.key("emit", ["a"])
    assert store.get("emit", k) is None
    store.put("emit", k, {"x.md": "é\n"})
    assert reuse.Store().get("emit", k) == {"x.md": "é\n"}
    assert reuse.Store().get("valid", k) is None  # the same key, another kind
    assert reuse.key("emit", ["a"]) != reuse.key("emit", ["b"]) != reuse.key("valid", ["b"])
    with cache.turned_off():
        assert reuse.Store().get("emit", k) is None
    memory = reuse.Store(memory=True, disk=False)
    memory.put("valid", k, True)
    assert memory.get("valid", k) is True and reuse.Store().get("valid", k) is None


def test_games_are_not_played_again_on_an_engine_that_says_the_same(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The backstop's verdict is keyed by the engine's text without the digest of its inputs:
    an edit the engine does not say (a glossary entry) plays no game again; a number does."""
    from lisboa_rules.sim import backstop

    played: list[int] = []
    real = backstop.play_check
    monkeypatch.setattr(
        backstop,
        "play_check",
        lambda text, games, names=None, **kw: (
            played.append(games),
            real(text, games, names, **kw),
        )[1],
    )
    assert main(["build", "--play", "1", "--out", "gen"]) == 0
    assert played == [1]
    vocabulary = project / "rules" / "vocabulary.yaml"
    text = vocabulary.read_text(encoding="utf-8")
    words = "    text: Your pawn in the Royal Court."
    assert words in text
    vocabulary.write_text(text.replace(words, words + " Yours alone.", 1), encoding="utf-8")
    assert main(["build", "--play", "1", "--out", "gen"]) == 0
    assert b"Yours alone." in (project / "gen" / "reference" / "rules.md").read_bytes()
    assert played == [1], "the engine plays as before: its games are not played again"
    assert main(["build", "--play", "2", "--out", "gen"]) == 0
    assert played == [1, 2], "more games than were played: played"
    game = project / "rules" / "game.yaml"
    game.write_text(
        game.read_text(encoding="utf-8").replace("\n  reis: 10\n", "\n  reis: 12\n"),
        encoding="utf-8",
    )
    assert main(["build", "--play", "1", "--out", "gen"]) == 0
    assert played == [1, 2, 1]


def test_the_folder_keeps_the_most_recent_entries_of_each_kind(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(reuse, "KEEP", {"emit": 2, "valid": 3})
    store = reuse.Store()
    folder = project / "cache" / reuse.FOLDER
    for i in range(6):
        store.put("valid", reuse.key("valid", i), True)
        os.utime(folder / f"valid-{reuse.key('valid', i)}.json", ns=(i * 10**9, i * 10**9))
    for i in range(3):
        store.put("emit", reuse.key("emit", i), {"a.md": str(i)})
        os.utime(folder / f"emit-{reuse.key('emit', i)}.json", ns=(i * 10**9, i * 10**9))
    (folder / "notes.txt").write_text("mine\n", encoding="utf-8")
    store.put("emit", reuse.key("emit", 9), {"a.md": "9"})  # trims the folder
    assert store.get("emit", reuse.key("emit", 9)) == {"a.md": "9"}
    assert store.get("emit", reuse.key("emit", 2)) == {"a.md": "2"}
    assert store.get("emit", reuse.key("emit", 1)) is None
    assert [store.get("valid", reuse.key("valid", i)) for i in range(6)] == [None] * 3 + [True] * 3
    assert (folder / "notes.txt").exists()
    assert len(list(folder.glob("*.json"))) == 2 + 3


def test_every_key_holds_the_whole_compiler(tmp_path: Path) -> None:
    """The fingerprint in every key hashes every file of the package (not only outputs/): a
    change to a template's environment, a printer or the runtime files nothing under the same
    key (tests/outputs/test_build_cache.py changes emit/env.py in a copy and builds)."""
    from lisboa_rules.outputs import stamp

    files = {
        p.relative_to(stamp.package_root()).as_posix()
        for p in stamp._package_files(stamp.package_root())
    }
    for rel in (
        "emit/env.py",
        "runtime/engine.py",
        "pipeline.py",
        "outputs/reuse.py",
        "templates/engine/lisboa_engine.py.jinja",
        "sim/backstop.py",
    ):
        assert rel in files, rel
