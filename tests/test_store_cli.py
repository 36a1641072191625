"""`buildlog corpus ...`, `buildlog similar` and "Seen before" in explain, through the command line."""

from __future__ import annotations

import gzip
import json
import os
import sqlite3
import subprocess
import sys

import pytest
from click.testing import CliRunner

from buildlog.cli import main
from buildlog.store.db import Store
from tests.conftest import CORPUS, ROOT

PSUTIL = CORPUS / "flash-attn-no-build-isolation-missing-psutil.log"
WHEEL = CORPUS / "flash-attn-no-build-isolation-missing-wheel.log"

# Built at run time so that no secret-looking literal sits in the source.
SECRETS = {
    "hf": "hf_" + "Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3h",
    "github": "ghp_" + "1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R",
    "aws": "AKIA" + "IOSFODNN7EXAMPLE",
    "pypi": "pypi-" + "AgEIcHlwaS5vcmcCJDU5ZTk3NGQ2LWFlY2QtNDg4Ny1iYzU3",
    "url_password": "hunter2horse",
    "bearer": "eyJhbGciOiJIUzI1NiJ9.payload.signature",
    "token_assignment": "t0ken-v4lue-9988",
    "key_assignment": "k3y-v4lue-7766",
}
LEAKY = "\n".join([
    "$ export HF_TOKEN=" + SECRETS["hf"],
    "$ git clone https://x-access-token:" + SECRETS["github"] + "@github.com/org/repo",
    "aws_access_key_id = " + SECRETS["aws"],
    "$ twine upload -p " + SECRETS["pypi"] + " dist/*",
    "Looking in indexes: https://ci-bot:" + SECRETS["url_password"] + "@index.example/simple",
    "> Authorization: Bearer " + SECRETS["bearer"],
    "CI_JOB_TOKEN=" + SECRETS["token_assignment"],
    "export OPENAI_API_KEY=" + SECRETS["key_assignment"],
    "Processing /home/alice/src/flash-attention",
    "alice@gpu-box-7:~/src$ pip install --no-build-isolation flash-attn",
]) + "\n"  # fmt: skip


@pytest.fixture
def runner():
    return CliRunner()


@pytest.fixture
def store(tmp_path):
    return tmp_path / "data" / "store.sqlite"


def ok(result):
    assert result.exit_code == 0, result.output
    return result.output


def usage_error(result):
    assert result.exit_code == 2, result.output
    assert result.output.count("\n") == 1 and result.output.startswith("buildlog:"), result.output
    assert "Traceback" not in result.output
    return result.output


def test_add_list_show_search_stats(runner, store, tmp_path):
    s = ["--store", str(store)]
    assert "added" in ok(runner.invoke(main, ["corpus", "add", str(PSUTIL), "--fix", "pip install psutil", *s]))
    again = ok(runner.invoke(main, ["corpus", "add", str(PSUTIL), "--ticket", "https://issues.example/7", *s]))
    assert "seen again (2 times" in again
    ok(runner.invoke(main, ["corpus", "add", str(WHEEL), "--cause", "compiler_oom", "--title", "my title", *s]))
    rows = json.loads(ok(runner.invoke(main, ["corpus", "list", "-f", "json", *s])))
    assert [r["cause"] for r in rows] == ["compiler_oom", "missing_build_dependency"]
    psutil = rows[1]
    assert (psutil["seen"], psutil["fix"], psutil["ticket"]) == (2, "pip install psutil", "https://issues.example/7")
    assert "psutil" in psutil["title"]
    shown = json.loads(ok(runner.invoke(main, ["corpus", "show", psutil["fingerprint"][:8], "-f", "json", *s])))
    assert any("psutil" in line for line in shown["key_lines"]) and shown["failure_lines"]
    assert "pip install psutil" in ok(runner.invoke(main, ["corpus", "show", f"#{psutil['id']}", *s]))
    log = ok(runner.invoke(main, ["corpus", "show", str(psutil["id"]), "--log", *s]))
    assert log == PSUTIL.read_text()
    found = json.loads(ok(runner.invoke(main, ["corpus", "search", "PSUTIL", "install", "-f", "json", *s])))
    assert [r["id"] for r in found] == [psutil["id"]]
    assert "Nothing stored matches" in ok(runner.invoke(main, ["corpus", "search", "zzzz", *s]))
    stats = json.loads(ok(runner.invoke(main, ["corpus", "stats", "-f", "json", *s])))
    assert (stats["incidents"], stats["sightings"], stats["with_fix"]) == (2, 3, 1)
    assert "2 incidents" in ok(runner.invoke(main, ["corpus", "stats", *s]))
    assert "missing_build_dependency" in ok(runner.invoke(main, ["corpus", "list", *s]))


def test_reading_commands_do_not_create_a_store(runner, store):
    s = ["--store", str(store)]
    assert "No store" in ok(runner.invoke(main, ["corpus", "list", *s]))
    assert json.loads(ok(runner.invoke(main, ["corpus", "search", "x", "-f", "json", *s]))) == []
    assert "0 incidents" in ok(runner.invoke(main, ["corpus", "stats", *s]))
    usage_error(runner.invoke(main, ["corpus", "show", "1", *s]))
    ok(runner.invoke(main, ["explain", str(PSUTIL), *s]))
    ok(runner.invoke(main, ["similar", str(PSUTIL), *s]))
    assert not store.exists() and not store.parent.exists()


def test_bad_input_is_one_line_exit_2(runner, store, tmp_path):
    s = ["--store", str(store)]
    usage_error(runner.invoke(main, ["corpus", "add", str(PSUTIL), "--cause", "no_such_cause", *s]))
    usage_error(runner.invoke(main, ["corpus", "add", str(tmp_path / "missing.log"), *s]))
    empty = tmp_path / "empty.log"
    empty.write_text("")
    usage_error(runner.invoke(main, ["corpus", "add", str(empty), *s]))
    fine = tmp_path / "fine.log"
    fine.write_text("Successfully installed flash-attn-2.8.3\n")
    usage_error(runner.invoke(main, ["corpus", "add", str(fine), *s]))
    usage_error(runner.invoke(main, ["corpus", "import", str(tmp_path / "nowhere"), *s]))
    assert not store.exists()
    ok(runner.invoke(main, ["corpus", "add", str(PSUTIL), *s]))
    usage_error(runner.invoke(main, ["corpus", "show", "4242", *s]))


def test_foreign_store_is_refused_by_every_command(runner, tmp_path):
    foreign = tmp_path / "other.sqlite"
    with sqlite3.connect(foreign) as conn:
        conn.execute("CREATE TABLE things (x)")
    conn.close()
    junk = tmp_path / "junk.bin"
    junk.write_bytes(os.urandom(2048))
    text = tmp_path / "notes.txt"
    text.write_text("remember the milk\n")
    for path in (foreign, junk, text):
        before = path.read_bytes()
        s = ["--store", str(path)]
        for args in (["corpus", "add", str(PSUTIL)], ["corpus", "list"], ["corpus", "import", str(CORPUS)]):
            assert str(path) in usage_error(runner.invoke(main, [*args, *s]))
        for args in (["explain", str(PSUTIL)], ["similar", str(PSUTIL)]):  # explained all the same, the store skipped
            result = runner.invoke(main, [*args, *s])
            assert result.exit_code == 0 and f"the store was skipped: {path}" in result.stderr
        assert path.read_bytes() == before


def test_store_from_environment(runner, store, monkeypatch):
    monkeypatch.setenv("BUILDLOG_STORE", str(store))
    ok(runner.invoke(main, ["corpus", "add", str(PSUTIL)]))
    assert store.exists()


def test_explain_shows_seen_before_and_not_itself_as_similar(runner, store):
    s = ["--store", str(store)]
    ok(runner.invoke(main, ["corpus", "add", str(PSUTIL), "--fix", "pip install psutil", *s]))
    ok(runner.invoke(main, ["corpus", "add", str(PSUTIL), *s]))
    report = json.loads(ok(runner.invoke(main, ["explain", str(PSUTIL), "-f", "json", *s])))
    similar = report["similar"]
    assert 1 <= len(similar) <= 3
    first = similar[0]
    assert (first["origin"], first["exact"], first["seen"], first["fix"]) == ("store", True, 2, "pip install psutil")
    assert not any(x["exact"] for x in similar[1:])
    assert all(x["score"] >= 0.5 for x in similar)
    text = ok(runner.invoke(main, ["explain", str(PSUTIL), "--no-color", "--width", "200", *s]))
    assert "Seen before" in text and "the same failure, seen 2 times" in text.replace(" · ", ", ")
    md = ok(runner.invoke(main, ["explain", str(PSUTIL), "-f", "markdown", *s]))
    assert "### Seen before" in md and "fixed by: pip install psutil" in md
    listed = json.loads(
        ok(runner.invoke(main, ["similar", str(PSUTIL), "-f", "json", "--limit", "5", "--min-score", "0", *s]))
    )
    assert len(listed) == 5 and listed[0]["exact"]
    assert "fixed by: pip install psutil" in ok(runner.invoke(main, ["similar", str(PSUTIL), *s]))


def test_export_is_a_corpus_that_eval_and_import_read(runner, store, tmp_path):
    s = ["--store", str(store)]
    ok(runner.invoke(main, ["corpus", "add", str(PSUTIL), "--fix", "pip install psutil", *s]))
    ok(runner.invoke(main, ["corpus", "add", str(PSUTIL), *s]))
    ok(runner.invoke(main, ["corpus", "add", str(WHEEL), *s]))
    shared = tmp_path / "shared"
    assert "exported 2" in ok(runner.invoke(main, ["corpus", "export", str(shared), *s]))
    assert len(list(shared.glob("*.toml"))) == 2 and len(list(shared.glob("*.log"))) == 2
    ok(runner.invoke(main, ["eval", str(shared)]))  # exit 0: every exported case passes
    other = ["--store", str(tmp_path / "other.sqlite")]
    assert "imported 2 new" in ok(runner.invoke(main, ["corpus", "import", str(shared), *other]))
    assert "0 new, 2 already known" in ok(runner.invoke(main, ["corpus", "import", str(shared), *other]))
    rows = json.loads(ok(runner.invoke(main, ["corpus", "list", "-f", "json", *other])))
    seen = {r["fix"]: r["seen"] for r in rows}
    assert seen == {"pip install psutil": 2, "": 1}
    again = tmp_path / "again"
    ok(runner.invoke(main, ["corpus", "export", str(again), *other]))
    assert sorted(p.name for p in again.iterdir()) == sorted(p.name for p in shared.iterdir())


def test_long_logs_are_exported_gzipped(runner, store, tmp_path):
    big = tmp_path / "big.log"
    big.write_bytes(b"compiling object %d\n" * 30000 + PSUTIL.read_bytes())
    s = ["--store", str(store)]
    ok(runner.invoke(main, ["corpus", "add", str(big), *s]))
    ok(runner.invoke(main, ["corpus", "export", str(tmp_path / "out"), *s]))
    (packed,) = (tmp_path / "out").glob("*.log.gz")
    assert gzip.decompress(packed.read_bytes()) == big.read_bytes()


def test_import_the_repository_corpus(runner, store):
    s = ["--store", str(store)]
    out = ok(runner.invoke(main, ["corpus", "import", str(CORPUS), *s]))
    assert "imported" in out
    with Store.open(store) as opened:
        rows = opened.incidents()
    assert rows and all(r.cause != "" for r in rows)


def _assert_clean(text: str, paths: bool = False) -> None:
    for name, secret in SECRETS.items():
        assert secret not in text, f"{name} leaked"
    if paths:
        assert "alice" not in text and "gpu-box-7" not in text


@pytest.mark.parametrize("redact_paths", [False, True])
def test_stored_and_exported_logs_carry_no_secret(runner, store, tmp_path, redact_paths):
    leaky = tmp_path / "leaky.log"
    leaky.write_text(LEAKY + PSUTIL.read_text())
    s = ["--store", str(store)]
    flags = ["--redact-paths"] if redact_paths else []
    ticket = "https://bob:" + SECRETS["url_password"] + "@jira.example/BUILD-1"
    ok(
        runner.invoke(
            main, ["corpus", "add", str(leaky), "--ticket", ticket, "--fix", "HF_TOKEN=" + SECRETS["hf"], *flags, *s]
        )
    )
    with Store.open(store) as opened:
        (row,) = opened.incidents()
        _assert_clean(opened.log_text(row), redact_paths)
        assert "***" in opened.log_text(row)
    with sqlite3.connect(store) as conn:
        raw = "\n".join(str(v) for r in conn.execute("SELECT * FROM incidents") for v in r if not isinstance(v, bytes))
    conn.close()
    _assert_clean(raw, redact_paths)
    _assert_clean(ok(runner.invoke(main, ["corpus", "show", "1", "--log", *s])), redact_paths)
    _assert_clean(ok(runner.invoke(main, ["corpus", "show", "1", "-f", "json", *s])), redact_paths)
    out = tmp_path / "out"
    ok(runner.invoke(main, ["corpus", "export", str(out), *s]))
    for path in out.iterdir():
        _assert_clean(path.read_text(), redact_paths)


@pytest.mark.parametrize("command", [
    ["corpus"], ["corpus", "add"], ["corpus", "list"], ["corpus", "show"], ["corpus", "search"], ["corpus", "stats"],
    ["corpus", "export"], ["corpus", "import"], ["similar"],
])  # fmt: skip
def test_help_teaches_with_examples(runner, command):
    text = ok(runner.invoke(main, [*command, "--help"]))
    assert "Example" in text and "buildlog " in text


def test_explain_and_the_store_never_import_scikit_learn(tmp_path):
    store = tmp_path / "store.sqlite"
    code = (
        "import sys\n"
        "from click.testing import CliRunner\n"
        "from buildlog.cli import main\n"
        f"r = CliRunner().invoke(main, ['corpus', 'add', {str(PSUTIL)!r}, '--store', {str(store)!r}])\n"
        "assert r.exit_code == 0, r.output\n"
        f"r = CliRunner().invoke(main, ['explain', {str(WHEEL)!r}, '--store', {str(store)!r}])\n"
        "assert r.exit_code == 0, r.output\n"
        "assert 'sklearn' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)


def test_concurrent_cli_adds_on_a_new_store(tmp_path):
    store = tmp_path / "new" / "store.sqlite"
    logs = [PSUTIL, WHEEL, PSUTIL, WHEEL]
    procs = [
        subprocess.Popen([sys.executable, "-m", "buildlog", "corpus", "add", str(log), "--store", str(store)], cwd=ROOT,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for log in logs
    ]  # fmt: skip
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    with Store.open(store) as opened:
        assert sorted(r.seen for r in opened.incidents()) == [2, 2]


def test_export_always_masks_user_names_homes_and_hosts(runner, store, tmp_path):
    log = tmp_path / "leaky.log"
    log.write_text(PSUTIL.read_text("utf-8") + LEAKY, "utf-8")
    s = ["--store", str(store)]
    ok(runner.invoke(main, ["corpus", "add", str(log), "--fix", "see /home/alice/notes.txt", *s]))
    assert "alice" in ok(runner.invoke(main, ["corpus", "show", "1", "--log", *s]))  # kept in one's own store
    ok(runner.invoke(main, ["corpus", "export", str(tmp_path / "out"), *s]))
    written = "".join(p.read_text("utf-8") for p in (tmp_path / "out").iterdir())
    assert "alice" not in written and "gpu-box-7" not in written and "notes.txt" in written
