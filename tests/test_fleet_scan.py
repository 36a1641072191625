"""`buildlog scan PATH...`: many logs (folders, globs, zip archives), on several processes, with
one JSON line per log, a summary, the unreadable reported and skipped, and --add into the store."""

from __future__ import annotations

import gzip
import json
import shutil
import zipfile

import pytest
from click.testing import CliRunner

from buildlog.cli import main
from buildlog.errors import BuildlogError
from buildlog.store import fleet
from tests.conftest import CORPUS

PSUTIL = CORPUS / "flash-attn-no-build-isolation-missing-psutil.log"
WHEEL = CORPUS / "flash-attn-no-build-isolation-missing-wheel.log"
CMAKE = sorted(CORPUS.glob("cmake-*.log"))


def fleet_folder(tmp_path):
    logs = tmp_path / "ci"
    (logs / "nested").mkdir(parents=True)
    shutil.copy(PSUTIL, logs / "a.log")
    shutil.copy(PSUTIL, logs / "nested" / "again.log")  # the same failure twice
    (logs / "b.log.gz").write_bytes(gzip.compress(WHEEL.read_bytes()))
    (logs / "broken.log.gz").write_bytes(b"\x1f\x8b" + b"not really gzip")  # cannot be read
    (logs / "notes.md").write_text("not a log")  # not a log name: left alone
    with zipfile.ZipFile(logs / "nightly.zip", "w") as archive:
        archive.write(WHEEL, "runs/1/wheel.log")
        archive.writestr("runs/readme.md", "no log")
    return logs


def test_collect_finds_folders_globs_and_zip_members_once(tmp_path):
    logs = fleet_folder(tmp_path)
    items, problems = fleet.collect([str(logs), str(logs / "*.log"), str(tmp_path / "missing.log")])
    names = sorted(i.name.replace(str(logs), "") for i in items)
    assert names == ["/a.log", "/b.log.gz", "/broken.log.gz", "/nested/again.log", "/nightly.zip:runs/1/wheel.log"]
    assert problems == [{"log": str(tmp_path / "missing.log"), "error": "no such file"}]


def test_scan_writes_json_lines_a_summary_and_adds_to_the_store(tmp_path):
    logs = fleet_folder(tmp_path)
    out, store = tmp_path / "results.jsonl", tmp_path / "store.sqlite"
    result = CliRunner().invoke(
        main, ["scan", str(logs), *map(str, CMAKE[:2]), "--jobs", "2", "-o", str(out), "--add", "--store", str(store)]
    )
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in out.read_text("utf-8").splitlines()]
    assert len(lines) == 7
    broken = [line for line in lines if "error" in line]
    assert [b["log"].rsplit("/", 1)[-1] for b in broken] == ["broken.log.gz"]
    good = {line["log"].rsplit("/", 1)[-1]: line for line in lines if "error" not in line}
    assert good["a.log"]["cause"] == good["again.log"]["cause"] == "missing_build_dependency"
    assert good["a.log"]["fingerprint"] == good["again.log"]["fingerprint"]
    assert "psutil" in good["a.log"]["fix"] and all(line["stored"] for line in good.values())
    text = result.output
    assert "7 logs" in text and "1 unreadable" in text and "on 2 processes" in text
    assert "Causes" in text and "Failures seen most" in text and "Could not be read" in text
    listing = json.loads(CliRunner().invoke(main, ["corpus", "list", "-f", "json", "--store", str(store)]).output)
    assert sum(r["seen"] for r in listing) == 6 and max(r["seen"] for r in listing) == 2


def test_scan_json_summary_and_one_process_give_the_same_answers(tmp_path):
    logs = fleet_folder(tmp_path)
    runs = []
    for jobs in ("1", "2"):
        result = CliRunner().invoke(main, ["scan", str(logs), "--jobs", jobs, "-f", "json"])
        assert result.exit_code == 0, result.output
        data = json.loads(result.output)
        runs.append((data["by_cause"], data["by_status"], [t["fingerprint"] for t in data["top_failures"]]))
        assert data["jobs"] == int(jobs) and data["logs"] == 5
    assert runs[0] == runs[1]


def test_scan_lines_to_stdout_keep_the_summary_on_stderr(tmp_path):
    result = CliRunner().invoke(main, ["scan", str(PSUTIL), "-o", "-", "--jobs", "1"])
    assert result.exit_code == 0
    (line,) = result.stdout.splitlines()
    assert json.loads(line)["cause"] == "missing_build_dependency"
    assert "1 logs (1 failure)" in result.stderr


def test_scan_of_nothing_is_a_clear_error(tmp_path):
    (tmp_path / "empty").mkdir()
    result = CliRunner().invoke(main, ["scan", str(tmp_path / "empty")])
    assert result.exit_code == 2 and "no logs found" in result.output
    result = CliRunner().invoke(main, ["scan", str(PSUTIL), "-o", str(tmp_path / "no" / "such" / "dir" / "x.jsonl")])
    assert result.exit_code == 2 and "cannot write" in result.output


def test_scan_draws_a_progress_bar_only_when_asked_or_on_a_terminal(tmp_path):
    logs = fleet_folder(tmp_path)
    quiet = CliRunner().invoke(main, ["scan", str(logs), "--jobs", "1"])
    assert "scanning" not in quiet.stderr  # not a terminal
    shown = CliRunner().invoke(main, ["scan", str(logs), "--jobs", "1", "--progress"])
    assert shown.exit_code == 0 and "scanning" in shown.stderr


def test_a_gzip_member_of_a_zip_is_unpacked_within_the_limit(tmp_path):
    packed = gzip.compress(WHEEL.read_bytes())
    with zipfile.ZipFile(tmp_path / "logs.zip", "w") as archive:
        archive.writestr("wheel.log.gz", packed)
        archive.writestr("broken.log.gz", b"\x1f\x8b" + b"not really gzip")
    items, _ = fleet.collect([str(tmp_path / "logs.zip")])
    good, broken = sorted(items, key=lambda i: i.member != "wheel.log.gz")
    assert fleet.read_item(good) == WHEEL.read_bytes()
    size = len(WHEEL.read_bytes())
    for limit in (len(packed) - 1, size - 1):  # the member itself, or what it unpacks to, is too big
        with pytest.raises(BuildlogError, match=f"over {limit // (1024 * 1024)} MiB$"):
            fleet.read_item(good, limit)
    with pytest.raises(BuildlogError, match="not a readable gzip file"):
        fleet.read_item(broken)
