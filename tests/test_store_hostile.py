"""A store that hostile or careless input cannot hurt: each way in the issue, with its test."""

from __future__ import annotations

import gzip
import json
import os
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from buildlog.cli import main
from buildlog.knowledge.artefact import bundled
from buildlog.store import intake
from tests.conftest import CORPUS

PSUTIL = CORPUS / "flash-attn-no-build-isolation-missing-psutil.log"
PSUTIL_SIDE = CORPUS / "flash-attn-no-build-isolation-missing-psutil.toml"


def run(*args: str, input: bytes | None = None):
    return CliRunner().invoke(main, [*args], input=input)


def one_line_error(result, *words: str) -> str:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and "internal error" not in result.output
    for word in words:
        assert word in result.output
    return result.output


def a_case(folder: Path, slug: str, log: bytes | None = None, sidecar: str | None = None) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{slug}.log").write_bytes(PSUTIL.read_bytes() if log is None else log)
    (folder / f"{slug}.toml").write_text(sidecar if sidecar is not None else PSUTIL_SIDE.read_text("utf-8"), "utf-8")


def test_a_gzip_bomb_in_an_import_is_skipped_with_a_message_not_a_memory_error(tmp_path, monkeypatch):
    monkeypatch.setattr(intake, "MAX_LOG_BYTES", 2 * 1024 * 1024)
    folder = tmp_path / "cases"
    a_case(folder, "good")
    bomb = gzip.compress(b"\0" * (16 * 1024 * 1024), compresslevel=1)
    (folder / "bomb.log.gz").write_bytes(bomb)
    (folder / "bomb.toml").write_text(PSUTIL_SIDE.read_text("utf-8"), "utf-8")
    result = run("corpus", "import", str(folder))
    assert result.exit_code == 0, result.output
    assert "imported 1 new" in result.output and "skipped bomb (" in result.output and "over 2 MiB" in result.output


def test_a_long_log_is_kept_as_a_bounded_excerpt_that_says_so(tmp_path):
    noise = "".join(f"[{n}/9000] Building CUDA object csrc/kernel_{n}.cu.o\n" for n in range(40_000))
    log = tmp_path / "long.log"
    log.write_text(noise + PSUTIL.read_text("utf-8") + noise, "utf-8")
    assert log.stat().st_size > 2 * intake.MAX_KEPT_BYTES
    result = run("corpus", "add", str(log))
    assert result.exit_code == 0, result.output
    assert "kept an excerpt of" in result.output
    kept = run("corpus", "show", "1", "--log").output
    assert len(kept.encode()) <= intake.MAX_KEPT_BYTES + 4096
    assert "No module named 'psutil'" in kept and "lines left out]" in kept
    assert json.loads(run("corpus", "show", "1", "-f", "json").output)["log_bytes"] <= intake.MAX_KEPT_BYTES + 4096


def test_import_never_follows_a_symlink_out_of_the_folder(tmp_path):
    private = tmp_path / "home" / "id_ed25519"
    private.parent.mkdir()
    body = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW"
    private.write_text(f"-----BEGIN OPENSSH PRIVATE KEY-----\n{body}\n-----END OPENSSH PRIVATE KEY-----\n")
    folder = tmp_path / "cases"
    a_case(folder, "good")
    (folder / "key.log").symlink_to(private)
    (folder / "key.toml").write_text(PSUTIL_SIDE.read_text("utf-8"), "utf-8")
    (folder / "linked.toml").symlink_to(PSUTIL_SIDE)  # a sidecar that is a link counts neither
    (folder / "linked.log").write_bytes(PSUTIL.read_bytes())
    result = run("corpus", "import", str(folder))
    assert "imported 1 new" in result.output, result.output
    run("corpus", "export", str(tmp_path / "out"))
    written = "".join(p.read_text("utf-8") for p in (tmp_path / "out").iterdir())
    assert body not in written and "PRIVATE KEY" not in written


def test_secrets_in_a_sidecars_title_and_key_lines_are_masked(tmp_path):
    token = "ghp_" + "cPI71dC3WPmETR4biPHnY4H59ikQ2lyrBIA3"
    side = PSUTIL_SIDE.read_text("utf-8")
    side = side.replace('title = "', f'title = "GITHUB_TOKEN={token} ', 1)
    side = side.replace("key_lines = [", f'key_lines = ["git clone https://{token}@github.com/acme/x.git", ', 1)
    a_case(tmp_path / "cases", "leaky", sidecar=side)
    assert run("corpus", "import", str(tmp_path / "cases")).exit_code == 0
    for args in (("corpus", "list", "-f", "json"), ("corpus", "show", "1", "-f", "json")):
        out = run(*args).output
        assert token not in out and "***" in out


@pytest.mark.parametrize(
    ("sidecar", "words"),
    [
        ("a = " + "[" * 50_000 + "]" * 50_000, ["invalid sidecar", "nested too deeply"]),
        (None, ["invalid sidecar", "seen"]),
    ],
    ids=["deeply-nested", "huge-seen"],
)
def test_a_hostile_sidecar_is_a_clear_error(tmp_path, sidecar, words):
    if sidecar is None:
        sidecar = PSUTIL_SIDE.read_text("utf-8") + "seen = 99999999999999999999999999\n"
    a_case(tmp_path / "cases", "bad", sidecar=sidecar)
    one_line_error(run("corpus", "import", str(tmp_path / "cases")), *words)


def test_a_sidecar_that_is_a_folder_is_passed_over(tmp_path):
    folder = tmp_path / "cases"
    a_case(folder, "good")
    (folder / "odd.toml").mkdir()
    (folder / "odd.log").write_bytes(PSUTIL.read_bytes())
    result = run("corpus", "import", str(folder))
    assert result.exit_code == 0 and "imported 1 new" in result.output, result.output


def test_export_onto_a_folder_in_the_way_leaves_no_temporary_file(tmp_path):
    assert run("corpus", "add", str(PSUTIL)).exit_code == 0
    out = tmp_path / "out"
    run("corpus", "export", str(out))
    (sidecar,) = out.glob("*.toml")
    sidecar.unlink()
    sidecar.mkdir()  # a directory where the case file goes
    one_line_error(run("corpus", "export", str(out)), "cannot write")
    assert not [p for p in out.iterdir() if p.name.startswith(".")]


def _store_file() -> Path:
    return Path(os.environ["BUILDLOG_STORE"])


def test_a_row_with_bad_json_or_a_bad_log_blob_breaks_nothing_else(tmp_path):
    assert run("corpus", "add", str(PSUTIL)).exit_code == 0
    assert run("corpus", "add", str(CORPUS / "flash-attn-no-build-isolation-missing-wheel.log")).exit_code == 0
    with sqlite3.connect(_store_file()) as conn:
        conn.execute("UPDATE incidents SET key_lines = '{not json', counts = '[', log = x'00ff' WHERE id = 1")
    for args in (
        ("corpus", "list"), ("corpus", "list", "-f", "json"), ("corpus", "search", "psutil"), ("corpus", "stats"),
        ("corpus", "show", "1"), ("corpus", "show", "2", "--log"), ("similar", str(PSUTIL)), ("explain", str(PSUTIL)),
    ):  # fmt: skip
        result = run(*args)
        assert result.exit_code == 0, (args, result.output)
    one_line_error(run("corpus", "show", "1", "--log"), "#1", "stored log is damaged")
    result = run("corpus", "export", str(tmp_path / "out"))
    assert result.exit_code == 0 and "exported 1 incidents" in result.output and "skipped #1" in result.output


def test_store_that_is_a_folder_or_fifo_is_refused(tmp_path):
    fifo = tmp_path / "fifo.sqlite"
    os.mkfifo(fifo)
    one_line_error(run("corpus", "list", "--store", str(fifo)), "not a regular file")


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads and writes every file; this needs an ordinary user")
def test_an_unreadable_or_read_only_store_skips_seen_before_with_a_note(tmp_path):
    store = tmp_path / "store" / "store.sqlite"
    assert run("corpus", "add", str(PSUTIL), "--store", str(store)).exit_code == 0
    try:
        for file_mode, dir_mode in ((0o000, 0o755), (0o444, 0o555), (0o644, 0o000)):
            os.chmod(store, file_mode)
            os.chmod(store.parent, dir_mode)
            for command in (["explain", str(PSUTIL)], ["similar", str(PSUTIL)]):
                result = run(*command, "--store", str(store))
                assert result.exit_code == 0, result.output
                assert "Traceback" not in result.output and "internal error" not in result.output
    finally:
        os.chmod(store.parent, 0o755)
        os.chmod(store, 0o644)


@pytest.mark.parametrize("error", ["unable to open database file", "attempt to write a readonly database"])
def test_a_store_that_cannot_be_opened_skips_seen_before_with_a_note(monkeypatch, error):
    assert run("corpus", "add", str(PSUTIL)).exit_code == 0

    def refuse(*args, **kwargs):
        raise sqlite3.OperationalError(error)

    monkeypatch.setattr("buildlog.store.db.sqlite3.connect", refuse)
    for command in (["explain", str(PSUTIL)], ["similar", str(PSUTIL)]):
        result = run(*command)
        assert result.exit_code == 0 and "the store was skipped" in result.output, result.output
    one_line_error(run("corpus", "list"), "cannot open the store")


def test_a_store_path_that_cannot_be_looked_at_is_a_clear_error(monkeypatch, tmp_path):
    def denied(self, *args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "is_dir", denied)
    one_line_error(run("corpus", "list", "--store", str(tmp_path / "x.sqlite")), "cannot open the store")


def test_a_plain_log_too_big_to_hold_is_analysed_as_a_stream_and_kept_as_an_excerpt(tmp_path, monkeypatch):
    """Over MAX_LOG_BYTES a plain log is read twice, never held: the analysis streams, the excerpt
    keeps its start, the proof with its context and its end (the issue's 300 MB import)."""
    monkeypatch.setattr(intake, "MAX_LOG_BYTES", 1024 * 1024)
    noise = "".join(f"[{i}/9000] c++ -O2 -c src/file_{i}.cpp -o build/file_{i}.o\n" for i in range(60_000))
    log = tmp_path / "big.log"
    log.write_text(
        "$ pip install ext --no-build-isolation\n" + noise + "ModuleNotFoundError: No module named 'psutil'\n" + noise
    )
    assert log.stat().st_size > 4 * 1024 * 1024
    knowledge = bundled()
    name, entry = intake.entry_from_file(str(log), knowledge)
    assert entry.cause == "missing_build_dependency"
    assert "No module named 'psutil'" in entry.log and entry.log.startswith("$ pip install ext")
    assert len(entry.log.encode()) <= intake.MAX_KEPT_BYTES and "lines left out" in entry.log
    assert entry.kept.startswith("kept an excerpt of")
