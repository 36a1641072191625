"""The SQLite store: dedupe and counts, foreign files refused untouched, concurrent writers, kill -9."""

from __future__ import annotations

import multiprocessing
import os
import sqlite3
import subprocess
import sys
import textwrap

import pytest

from buildlog.errors import BuildlogError
from buildlog.learn.features import fingerprint
from buildlog.store.db import APPLICATION_ID, SCHEMA_VERSION, Store
from buildlog.store.records import Entry
from tests.conftest import ROOT

NOW = "2026-03-01T10:00:00Z"


def entry(n: int, cause: str = "disk_full", fix: str = "") -> Entry:
    """A small distinct entry without running the pipeline (numbers are masked, so spell n as letters)."""
    word = "".join(chr(ord("a") + int(d)) for d in str(n))
    lines = (f"error: failure {word}", "ninja: build stopped")
    return Entry(
        fingerprint=fingerprint(lines, cause), shape=fingerprint(lines), cause=cause, title=f"failure {word}",
        source=f"build-{word}.log", outcome="failure", key_lines=lines[:1], failure=lines,
        counts={"error": 1, "failure": 1, word: 1}, log="\n".join(lines) + "\n", fix=fix,
    )  # fmt: skip


def test_create_add_dedupe_and_keep_fix(tmp_path):
    path = tmp_path / "s" / "store.sqlite"
    assert Store.open(path) is None and not path.exists()
    with Store.open(path, create=True) as store:
        row, new = store.add(entry(1, fix="free disk"), "2026-01-01T00:00:00Z")
        assert new and row.seen == 1
        row, new = store.add(entry(1), NOW)
        assert not new and row.seen == 2 and row.fix == "free disk"
        assert (row.first_seen, row.last_seen) == ("2026-01-01T00:00:00Z", NOW)
        row, _ = store.add(entry(1, fix="prune docker images"), NOW)
        assert row.fix == "prune docker images" and row.seen == 3
        store.add(entry(1, cause="compiler_oom"), NOW)  # relabelled: another fingerprint, same shape
        assert len(store.incidents()) == 2
        assert store.find(str(row.id)).id == row.id == store.find(row.fingerprint[:6]).id
        assert store.log_text(row) == entry(1).log
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0] == str(SCHEMA_VERSION)


def test_find_errors(tmp_path):
    with Store.open(tmp_path / "s.sqlite", create=True) as store:
        store.add(entry(1), NOW)
        for ref in ("99", "zz", "abc"):
            with pytest.raises(BuildlogError, match="no such incident"):
                store.find(ref)


def test_merge_is_idempotent(tmp_path):
    with Store.open(tmp_path / "s.sqlite", create=True) as store:
        store.add(entry(1), "2026-02-01T00:00:00Z")
        items = [(entry(1, fix="f"), 4, "2026-01-01", "2026-01-15"), (entry(2), 2, "2026-01-03", "2026-01-04")]
        assert store.merge(items) == (1, 1)
        assert store.merge(items) == (0, 2)
        rows = {r.title: r for r in store.incidents()}
        one = rows["failure b"]
        assert (one.seen, one.first_seen, one.last_seen, one.fix) == (4, "2026-01-01", "2026-02-01T00:00:00Z", "f")
        assert rows["failure c"].seen == 2


def _foreign_files(tmp_path):
    random_bytes = tmp_path / "random.bin"
    random_bytes.write_bytes(os.urandom(4096))
    text = tmp_path / "notes.txt"
    text.write_text("not a database\n")
    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE users (name TEXT)")
        conn.execute("INSERT INTO users VALUES ('ada')")
    conn.close()
    return [random_bytes, text, other]


@pytest.mark.parametrize("create", [False, True])
def test_foreign_files_are_refused_and_untouched(tmp_path, create):
    for path in _foreign_files(tmp_path):
        before = path.read_bytes()
        with pytest.raises(BuildlogError) as err:
            Store.open(path, create=create)
        assert str(path) in str(err.value) and "\n" not in str(err.value)
        assert path.read_bytes() == before
        assert not path.with_name(path.name + "-wal").exists()


def test_newer_schema_and_directory_are_refused(tmp_path):
    path = tmp_path / "s.sqlite"
    Store.open(path, create=True).close()
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    conn.close()
    with pytest.raises(BuildlogError, match="newer buildlog"):
        Store.open(path)
    with pytest.raises(BuildlogError, match="directory"):
        Store.open(tmp_path, create=True)


def test_damaged_store_gives_an_error(tmp_path):
    path = tmp_path / "s.sqlite"
    with Store.open(path, create=True) as store:
        for n in range(30):
            store.add(entry(n), NOW)
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    data = bytearray(path.read_bytes())
    data[4096:] = os.urandom(len(data) - 4096)
    path.write_bytes(bytes(data))
    with pytest.raises(BuildlogError, match="s.sqlite"):
        with Store.open(path) as store:
            store.incidents()


def test_empty_file_becomes_a_store_only_on_create(tmp_path):
    path = tmp_path / "s.sqlite"
    path.touch()
    assert Store.open(path) is None and path.stat().st_size == 0
    with Store.open(path, create=True) as store:
        store.add(entry(1), NOW)
    assert len(Store.open(path).incidents()) == 1


def _adder(path: str, worker: int, count: int) -> None:
    """Run in another process: add `count` own entries and `count` shared with every other worker."""
    from pathlib import Path

    with Store.open(Path(path), create=True) as store:
        for n in range(count):
            store.add(entry(1000 * (worker + 1) + n), NOW)
            store.add(entry(n), NOW)


def test_concurrent_processes_lose_nothing(tmp_path):
    path = tmp_path / "shared" / "store.sqlite"
    workers, count = 4, 12
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_adder, args=(str(path), w, count)) for w in range(workers)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    with Store.open(path) as store:
        rows = store.incidents()
    assert len(rows) == workers * count + count
    assert sum(r.seen for r in rows) == 2 * workers * count
    shared = [r for r in rows if r.seen > 1]
    assert len(shared) == count and all(r.seen == workers for r in shared)


WRITER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from tests.test_store_db import NOW, entry
    from buildlog.store.backend import ON_ADD
    from buildlog.store.db import Store

    store = Store.open(Path(sys.argv[1]), create=True)
    mode = sys.argv[2]
    if mode == "hold":
        store.add(entry(1), NOW)
        with store.transaction():
            store._sighting(entry(2), 1, NOW, NOW, ON_ADD)
            print("inside", flush=True)
            time.sleep(120)
    else:
        for n in range(100000):
            store.add(entry(n), NOW)
            print(n, flush=True)
    """
)


def _writer(path, mode):
    return subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path), mode], cwd=ROOT, stdout=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip


def _integrity(path):
    with sqlite3.connect(path) as conn:
        return conn.execute("PRAGMA integrity_check").fetchone()[0]


def test_writer_killed_mid_transaction_leaves_committed_rows(tmp_path):
    path = tmp_path / "store.sqlite"
    proc = _writer(path, "hold")
    assert proc.stdout.readline().strip() == "inside"
    proc.kill()
    proc.wait()
    with Store.open(path) as store:
        assert [r.title for r in store.incidents()] == ["failure b"]
        store.add(entry(3), NOW)  # and it still takes writes
    assert _integrity(path) == "ok"


def test_writer_killed_in_a_loop_keeps_every_commit(tmp_path):
    path = tmp_path / "store.sqlite"
    proc = _writer(path, "loop")
    committed = -1
    while committed < 40:
        committed = int(proc.stdout.readline())
    proc.kill()
    proc.wait()
    rest = proc.stdout.read().split()
    committed = int(rest[-1]) if rest else committed
    with Store.open(path) as store:
        n = len(store.incidents())
    assert committed + 1 <= n <= committed + 2
    assert _integrity(path) == "ok"


def _v1_store(path, secret):
    """A store as buildlog wrote it before schema 2: no full-text index, and a secret kept raw."""
    import gzip
    import json

    conn = sqlite3.connect(path)
    from buildlog.store.db import _SCHEMA_1

    for statement in _SCHEMA_1:
        conn.execute(statement)
    conn.execute("INSERT INTO meta VALUES ('schema_version', '1')")
    conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    line = f"git clone https://x-access-token:{secret}@github.com/acme/apex.git failed"
    conn.execute(
        "INSERT INTO incidents (fingerprint, shape, cause, title, key_lines, failure, log, log_size, first_seen, "
        "last_seen, seen) VALUES ('aaaa1111', 'bbbb2222', 'unknown', ?, ?, ?, ?, 10, '2026-01-01', '2026-01-02', 3)",
        (line, json.dumps([line]), json.dumps([line]), gzip.compress(f"$ {line}\n".encode())),
    )
    conn.commit()
    conn.close()


def test_an_old_store_is_migrated_and_masked_again_on_open(tmp_path):
    secret = "ghs_" + "vAIY122Ql9bw2kwJRKYInhNTrJWKUnKsKrQJ"
    path = tmp_path / "old.sqlite"
    _v1_store(path, secret)
    with Store.open(path) as store:
        (row,) = store.incidents()
        assert secret not in row.title and "***" in row.title and secret not in store.log_text(row)
        assert row.seen == 3 and secret not in "".join(row.key_lines + row.failure)
        assert [r.id for r in store.search("clone acme")] == [row.id]  # the index was built
    raw = path.read_bytes() + b"".join(p.read_bytes() for p in tmp_path.glob("old.sqlite-*"))
    with sqlite3.connect(path) as conn:
        dump = "\n".join(conn.iterdump())
        assert conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0] == str(SCHEMA_VERSION)
    assert secret not in dump and secret.encode() not in raw


def test_a_store_masked_under_an_older_rule_set_is_masked_again(tmp_path):
    path = tmp_path / "s.sqlite"
    with Store.open(path, create=True) as store:
        store.add(entry(1), NOW)
    with sqlite3.connect(path) as conn:
        conn.execute(
            "UPDATE incidents SET title = 'token=' || ?",
            ("xoxb-" + "922328385642-7105129837252-FJhia0yf9SFOAQKvG8wfVRLb",),
        )
        conn.execute("UPDATE meta SET value = 'older' WHERE key = 'mask'")
    with Store.open(path) as store:
        assert "xoxb-" not in store.incidents()[0].title.split("***")[-1]
        assert "FJhia0yf9SFOAQKvG8wfVRLb" not in store.incidents()[0].title


def test_a_newer_schema_is_refused_and_left_alone(tmp_path):
    path = tmp_path / "s.sqlite"
    Store.open(path, create=True).close()
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    before = path.read_bytes()
    with pytest.raises(BuildlogError, match=r"newer buildlog \(schema 99"):
        Store.open(path)
    assert path.read_bytes() == before
