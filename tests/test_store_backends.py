"""One store test suite, run on both backends: SQLite (a file) and PostgreSQL (a real server).

The PostgreSQL half needs a server: $BUILDLOG_TEST_POSTGRES, a URL to a database the tests may
create schemas in (`.ci/run` starts a throwaway cluster and sets it). Each test gets a schema of
its own, so tests never see each other's rows.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from typing import Any
from urllib.parse import quote

import pytest
from click.testing import CliRunner

from buildlog.cli import main
from buildlog.errors import BuildlogError
from buildlog.store.backend import open_store
from tests.conftest import CORPUS, ROOT
from tests.test_store_db import NOW, entry

PG_URL = os.environ.get("BUILDLOG_TEST_POSTGRES", "")
NO_SERVER = "no PostgreSQL server: set BUILDLOG_TEST_POSTGRES=postgresql://... (.ci/run starts one)"
PSUTIL = CORPUS / "flash-attn-no-build-isolation-missing-psutil.log"
WHEEL = CORPUS / "flash-attn-no-build-isolation-missing-wheel.log"


def pg_schema_url(name: str) -> str:
    """A URL whose tables live in a fresh schema of the test server."""
    import psycopg

    with psycopg.connect(PG_URL, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{name}"')
    sep = "&" if "?" in PG_URL else "?"
    return f"{PG_URL}{sep}options={quote(f'-csearch_path={name}')}"


@pytest.fixture(params=["sqlite", "postgresql"])
def location(request, tmp_path):
    """Where a fresh store goes, on each backend."""
    if request.param == "sqlite":
        return str(tmp_path / "store" / "store.sqlite")
    if not PG_URL:
        pytest.skip(NO_SERVER)
    return pg_schema_url(f"t_{uuid.uuid4().hex[:12]}")


def pg_dump(url: str) -> str:
    """Every row of every buildlog table as text, logs decompressed too (what a `pg_dump` would show)."""
    import gzip

    import psycopg

    out = []
    with psycopg.connect(url, autocommit=True) as conn:
        for table in ("buildlog_meta", "buildlog_incidents"):
            for row in conn.execute(f"SELECT * FROM {table}"):
                out.append(repr(row))
                out += [gzip.decompress(bytes(v)).decode() for v in row if isinstance(v, (bytes, memoryview))]
    return "\n".join(out)


def test_create_add_repeat_find_and_log(location):
    assert open_store(location) is None  # reading never creates a store
    with open_store(location, create=True) as store:
        row, new = store.add(entry(1, fix="free disk"), "2026-01-01T00:00:00Z")
        assert new and row.seen == 1
        row, new = store.add(entry(1), NOW)
        assert not new and row.seen == 2 and row.fix == "free disk"
        assert (row.first_seen, row.last_seen) == ("2026-01-01T00:00:00Z", NOW)
        row, _ = store.add(entry(1, fix="prune docker images"), NOW)
        assert row.fix == "prune docker images" and row.seen == 3
        store.add(entry(1, cause="compiler_oom"), NOW)  # relabelled: another fingerprint
        assert len(store.incidents()) == 2 and len(store.incidents("compiler_oom")) == 1
        assert store.find(str(row.id)).id == row.id == store.find(row.fingerprint[:6]).id
        assert store.log_text(row) == entry(1).log
        with pytest.raises(BuildlogError, match="no such incident"):
            store.find("999")
    with open_store(location) as store:  # opened again: the rows are there, nothing migrates twice
        assert sum(r.seen for r in store.incidents()) == 4


def test_merge_is_idempotent_and_widens(location):
    items = [(entry(1), 5, "2026-01-01", "2026-02-01"), (entry(2), 1, "2026-01-05", "2026-01-05")]
    with open_store(location, create=True) as store:
        assert store.merge(items) == (2, 0)
        assert store.merge(items) == (0, 2)
        assert store.merge([(entry(1), 2, "2025-12-01", "2026-03-01")]) == (0, 1)
        (row,) = [r for r in store.incidents() if r.title == entry(1).title]
        assert (row.seen, row.first_seen, row.last_seen) == (5, "2025-12-01", "2026-03-01")


def test_full_text_search_matches_word_starts_any_case(location):
    with open_store(location, create=True) as store:
        store.add(entry(12, fix="pip install psutil"), NOW)
        store.add(entry(34), NOW)
        assert [r.title for r in store.search("PSUT")] == [entry(12).title]
        assert [r.title for r in store.search("failure bc")] == [entry(12).title]
        assert len(store.search("ninja build")) == 2
        assert store.search("zzzz") == [] and store.search("  ") == []
        store.add(entry(34, fix="export CUDA_HOME=/usr/local/cuda-12.8"), NOW)  # a new fix is searchable
        assert [r.title for r in store.search("cuda_home")] == [entry(34).title]


def test_every_corpus_command_and_similar(location, tmp_path):
    runner, s = CliRunner(), ["--store", location]

    def ok(*args):
        result = runner.invoke(main, [*args, *s], catch_exceptions=False)
        assert result.exit_code == 0, result.output
        return result.output

    assert "No store" in ok("corpus", "list")
    assert "added: #" in ok("corpus", "add", str(PSUTIL), "--fix", "pip install psutil")
    assert "seen again (2 times" in ok("corpus", "add", str(PSUTIL))
    ok("corpus", "add", str(WHEEL))
    rows = json.loads(ok("corpus", "list", "-f", "json"))
    assert len(rows) == 2 and {r["seen"] for r in rows} == {1, 2}
    assert [r["fix"] for r in json.loads(ok("corpus", "search", "psutil", "-f", "json"))] == ["pip install psutil"]
    first = next(r for r in rows if r["seen"] == 2)
    assert "pip install psutil" in ok("corpus", "show", str(first["id"]))
    assert "psutil" in ok("corpus", "show", first["fingerprint"][:8], "--log")
    stats = json.loads(ok("corpus", "stats", "-f", "json"))
    assert (stats["incidents"], stats["sightings"]) == (2, 3)
    similar = json.loads(ok("similar", str(PSUTIL), "-f", "json"))
    assert similar[0]["exact"] and similar[0]["origin"] == "store" and similar[0]["seen"] == 2
    assert "exported 2 incidents" in ok("corpus", "export", str(tmp_path / "shared"))
    assert "imported 0 new, 2 already known" in ok("corpus", "import", str(tmp_path / "shared"))


def _adder(location: str, count: int) -> None:
    with open_store(location, create=True) as store:
        for n in range(count):
            store.add(entry(n % 5), NOW)  # five incidents, every worker adding each of them again


def _reader(location: str, seconds: float, reads: Any) -> None:
    end, last = time.monotonic() + seconds, 0
    while time.monotonic() < end:
        store = open_store(location)
        if store is None:
            continue
        with store:
            total = sum(r.seen for r in store.incidents())
            assert total >= last, (total, last)  # a reader never sees a count go back
            last = total
            store.search("failure")
        with reads.get_lock():
            reads.value += 1


def _python(script: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", script, *args], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def test_eight_writers_of_five_hundred_adds_with_readers_lose_nothing(location):
    """Forked workers (no interpreter start-up each), each with its own connection."""
    workers, count = 8, 500
    with open_store(location, create=True):
        pass  # created once, so the readers have a store from the start
    ctx = multiprocessing.get_context("fork")
    reads = ctx.Value("i", 0)
    procs = [ctx.Process(target=_adder, args=(location, count)) for _ in range(workers)]
    procs += [ctx.Process(target=_reader, args=(location, 2.0, reads)) for _ in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(300)
        assert p.exitcode == 0
    assert reads.value > 0  # the readers did read while the writers wrote
    with open_store(location) as store:
        rows = store.incidents()
    assert len(rows) == 5  # never a duplicate
    assert sorted(r.seen for r in rows) == [workers * count // 5] * 5  # never a lost update


KILLED = textwrap.dedent(
    """
    import sys
    from tests.test_store_db import NOW, entry
    from buildlog.store.backend import open_store

    with open_store(sys.argv[1], create=True) as store:
        for n in range(1_000_000):
            store.add(entry(n), NOW)
            print(n, flush=True)
    """
)


def test_a_writer_killed_mid_write_leaves_the_store_intact(location):
    proc = _python(KILLED, location)
    assert proc.stdout is not None
    done = -1
    for line in proc.stdout:  # let it commit a few dozen, then kill it wherever it is
        done = int(line)
        if done >= 40:
            break
    proc.send_signal(signal.SIGKILL)
    proc.wait(30)
    with open_store(location) as store:
        rows = store.incidents()
        assert len(rows) >= done + 1  # every reported commit is there
        assert all(store.log_text(r).endswith("ninja: build stopped\n") and r.seen == 1 for r in rows)
        row, new = store.add(entry(10**6), NOW)  # and it takes writes again
        assert new and row.seen == 1
        assert len({r.fingerprint for r in store.incidents()}) == len(rows) + 1


@pytest.mark.skipif(not PG_URL, reason=NO_SERVER)
def test_a_server_that_goes_away_mid_run_is_a_clear_error():
    import psycopg

    url = pg_schema_url(f"t_{uuid.uuid4().hex[:12]}")
    store = open_store(url, create=True)
    assert store is not None
    store.add(entry(1), NOW)
    (pid,) = store.conn.execute("SELECT pg_backend_pid()").fetchone()
    with psycopg.connect(PG_URL, autocommit=True) as admin:  # the server drops this connection
        admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
    with pytest.raises(BuildlogError, match="server went away"):
        store.incidents()
    store.close()


def test_an_unreachable_server_is_exit_2_without_the_password(tmp_path):
    url = "postgresql://ci:s3cr3t-pw@127.0.0.1:9/buildlog"  # port 9 (discard): nothing listens
    for args in (["corpus", "list"], ["corpus", "add", str(PSUTIL)], ["similar", str(PSUTIL)]):
        result = CliRunner().invoke(main, [*args, "--store", url])
        if args[0] == "similar":  # seen-before goes on without the store, with a note
            assert result.exit_code == 0 and "store was skipped" in result.output
        else:
            assert result.exit_code == 2, result.output
            assert "cannot connect to the store's server" in result.output
        assert "s3cr3t-pw" not in result.output and "Traceback" not in result.output
    assert not (tmp_path / "postgresql:").exists() and not os.path.exists("postgresql:")


def test_an_unknown_url_scheme_is_refused():
    result = CliRunner().invoke(main, ["corpus", "list", "--store", "mysql://u@h/db"])
    assert result.exit_code == 2 and "not a store buildlog can use" in result.output


@pytest.mark.skipif(not PG_URL, reason=NO_SERVER)
def test_a_newer_postgresql_schema_is_refused():
    import psycopg

    url = pg_schema_url(f"t_{uuid.uuid4().hex[:12]}")
    open_store(url, create=True).close()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("UPDATE buildlog_meta SET value = '99' WHERE key = 'schema_version'")
    with pytest.raises(BuildlogError, match=r"newer buildlog \(schema 99"):
        open_store(url)


@pytest.mark.skipif(not PG_URL, reason=NO_SERVER)
def test_the_seeded_secret_matrix_through_postgresql(tmp_path):
    """The secrets issue's seeded logs, added to a PostgreSQL store: nothing in its outputs or its tables."""
    from tests import test_store_secret_matrix as matrix

    url = pg_schema_url(f"t_{uuid.uuid4().hex[:12]}")
    m = matrix._walk(tmp_path, matrix.BATCHES, store=url, dump=pg_dump)
    assert m.checked > 50
    assert m.leaks == [], "\n".join(m.leaks[:40])


@pytest.mark.skipif(not PG_URL, reason=NO_SERVER)
def test_a_shared_store_masks_paths_on_add_and_remasks_on_open(tmp_path):
    import psycopg

    url = pg_schema_url(f"t_{uuid.uuid4().hex[:12]}")
    log = tmp_path / "home.log"
    log.write_text("alice@gpu-box-7:~/src$ pip install flash-attn\nProcessing /home/alice/src/x\n" + PSUTIL.read_text())
    assert CliRunner().invoke(main, ["corpus", "add", str(log), "--store", url]).exit_code == 0
    assert "alice" not in pg_dump(url) and "gpu-box-7" not in pg_dump(url)
    token = "xoxb-" + "922328385642-7105129837252-FJhia0yf9SFOAQKvG8wfVRLb"
    with psycopg.connect(url, autocommit=True) as conn:  # as an older buildlog would have left it
        conn.execute("UPDATE buildlog_incidents SET title = %s", (f"posted with {token}",))
        conn.execute("UPDATE buildlog_meta SET value = 'older' WHERE key = 'mask'")
    with open_store(url) as store:
        assert token not in store.incidents()[0].title
    assert token not in pg_dump(url)


@pytest.mark.skipif(not PG_URL, reason=NO_SERVER)
def test_messages_never_show_the_urls_password():
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(pg_schema_url(f"t_{uuid.uuid4().hex[:12]}"))
    url = urlunsplit(parts._replace(netloc=f"{parts.username}:n0t-a-real-pw@{parts.hostname}:{parts.port}"))
    for args in (["corpus", "list"], ["corpus", "stats", "-f", "json"], ["corpus", "show", "1"]):
        result = CliRunner().invoke(main, [*args, "--store", url])
        assert "n0t-a-real-pw" not in result.output, result.output
