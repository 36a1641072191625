"""The command line: exit codes, input forms and messages, through click's runner and a real process."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from buildlog.cli import main

MISMATCH = (
    "$ pip install --no-build-isolation flash-attn\n"
    "torch.__version__  = 2.9.1+cu128\n"
    "RuntimeError:\n"
    "The detected CUDA version (13.0) mismatches the version that was used to compile\n"
    "PyTorch (12.8). Please make sure to use the same CUDA versions.\n"
)


@pytest.fixture
def runner():
    return CliRunner()


def _json(result):
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_explain_file_json(runner, tmp_path):
    log = tmp_path / "build.log"
    log.write_text(MISMATCH)
    data = _json(runner.invoke(main, ["explain", str(log), "--format", "json"]))
    assert data["root_causes"][0]["id"] == "cuda_version_mismatch"
    assert 4 in [e["line"] for e in data["root_causes"][0]["evidence"]]
    assert "CUDA_HOME=/usr/local/cuda-12.8" in data["root_causes"][0]["fix"]


def test_explain_stdin_and_gzip(runner, tmp_path):
    data = _json(runner.invoke(main, ["explain", "-", "-f", "json"], input=MISMATCH))
    assert data["status"] == "failure"
    gz = tmp_path / "build.log.gz"
    gz.write_bytes(gzip.compress(MISMATCH.encode()))
    assert _json(runner.invoke(main, ["explain", str(gz), "-f", "json"]))["lines"] == 5


@pytest.mark.parametrize("kind", ["missing", "directory"])
def test_bad_input_exits_2_with_one_line(runner, tmp_path, kind):
    target = tmp_path / "x.log"
    if kind == "directory":
        target.mkdir()
    result = runner.invoke(main, ["explain", str(target)])
    assert result.exit_code == 2
    assert result.output.count("\n") == 1 and "buildlog:" in result.output
    assert "Traceback" not in result.output


def test_unreadable_file(runner, tmp_path):
    if sys.platform == "win32" or (hasattr(__import__("os"), "geteuid") and __import__("os").geteuid() == 0):
        pytest.skip("root reads every file")
    target = tmp_path / "secret.log"
    target.write_text("x")
    target.chmod(0)
    assert runner.invoke(main, ["explain", str(target)]).exit_code == 2


def test_empty_and_garbage_input(runner):
    assert "empty" in _json(runner.invoke(main, ["explain", "-", "-f", "json"], input=""))["status"]
    garbage = bytes(range(256)) * 100
    data = _json(runner.invoke(main, ["explain", "-", "-f", "json"], input=garbage))
    assert data["status"] in ("unknown", "empty")


def test_fail_flag_sets_exit_code(runner, tmp_path):
    log = tmp_path / "build.log"
    log.write_text(MISMATCH)
    assert runner.invoke(main, ["explain", str(log), "--fail"]).exit_code == 1


def test_markdown_and_terminal(runner, tmp_path):
    log = tmp_path / "build.log"
    log.write_text(MISMATCH)
    md = runner.invoke(main, ["explain", str(log), "-f", "markdown"])
    assert md.exit_code == 0 and "### Cause 1: `cuda_version_mismatch`" in md.output
    term = runner.invoke(main, ["explain", str(log), "--no-color"])
    assert term.exit_code == 0 and "cuda_version_mismatch" in term.output and "\x1b[" not in term.output


def test_schema_causes_rules_commands(runner):
    schema = json.loads(runner.invoke(main, ["schema"]).output)
    assert schema["title"] == "buildlog report"
    causes = runner.invoke(main, ["causes"]).output
    assert "cuda_version_mismatch" in causes and "build_interrupted" in causes
    assert "torch-cuda-major-mismatch" in runner.invoke(main, ["rules", "--cause", "cuda_version_mismatch"]).output


def test_bad_option_is_a_usage_error(runner):
    assert runner.invoke(main, ["explain", "-", "--format", "yaml"]).exit_code == 2


def test_real_process_module_entry_point(tmp_path):
    log = tmp_path / "build.log"
    log.write_text(MISMATCH)
    proc = subprocess.run([sys.executable, "-m", "buildlog", "explain", str(log)], capture_output=True, text=True)
    assert proc.returncode == 0 and "cuda_version_mismatch" in proc.stdout
    missing = subprocess.run(
        [sys.executable, "-m", "buildlog", "explain", str(tmp_path / "no.log")], capture_output=True, text=True
    )
    assert missing.returncode == 2 and missing.stderr.startswith("buildlog:") and "Traceback" not in missing.stderr
    failed = subprocess.run([sys.executable, "-m", "buildlog", "explain", str(log), "--fail"], capture_output=True)
    assert failed.returncode == 1


def test_a_big_input_draws_a_progress_bar_on_a_terminal_only(tmp_path):
    import os
    import pty

    from buildlog.ingest.reader import PROGRESS_MIN

    log = tmp_path / "big.log"
    with log.open("wb") as f:
        line = b"[12/85] c++ -O3 -Werror=return-type -c x.cpp -o x.o\n"
        f.write(line * (PROGRESS_MIN // len(line) + 1))
    argv = [sys.executable, "-m", "buildlog", "explain", str(log), "-f", "json"]
    master, slave = pty.openpty()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=slave)
    os.close(slave)
    drawn = b""
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # the terminal closes when the process ends
            break
        if not data:
            break
        drawn += data
    proc.wait()
    os.close(master)
    assert proc.returncode == 0 and b"reading big.log" in drawn
    piped = subprocess.run(argv, capture_output=True)
    assert piped.returncode == 0 and piped.stderr == b""


# --- settings from the environment and config files, and inputs that cannot be read ---------

import os  # noqa: E402
import subprocess as _sp  # noqa: E402

from tests.conftest import ROOT  # noqa: E402


def _buildlog(*args, env=None, stdin=None, cwd=None):
    full = {**os.environ, **(env or {})}
    return _sp.run(
        [sys.executable, "-m", "buildlog", *args], capture_output=True, text=True, env=full, stdin=stdin, cwd=cwd
    )


LOG = ROOT / "corpus" / "cases" / "flash-attn-no-build-isolation-missing-psutil.log"


@pytest.mark.parametrize(
    "env, message",
    [
        (
            {"BUILDLOG_SCAN_ENGINE": "garbage"},
            "$BUILDLOG_SCAN_ENGINE='garbage': expected one of auto, hyperscan, plain",
        ),
        ({"BUILDLOG_REDACT_PATHS": "maybe"}, "$BUILDLOG_REDACT_PATHS='maybe': expected 1 or 0"),
        ({"BUILDLOG_RULES": "/no/such/rules"}, "/no/such/rules: no such rule file or folder"),
    ],
)
def test_a_bad_environment_variable_is_a_clear_error(env, message):
    proc = _buildlog("explain", str(LOG), env=env)
    assert proc.returncode == 2 and message in proc.stderr and "internal error" not in proc.stderr


def test_debug_zero_means_off_and_a_relative_cache_folder_writes_nothing_here(tmp_path):
    proc = _buildlog(
        "explain",
        str(LOG),
        env={"BUILDLOG_DEBUG": "0", "XDG_CACHE_HOME": "relative", "HOME": str(tmp_path)},
        cwd=tmp_path,
    )
    assert proc.returncode == 0
    assert not (tmp_path / "relative").exists()


@pytest.mark.parametrize("args", [["explain", "/proc/self/mem"], ["explain", "a" * 300 + ".log"]])
def test_inputs_that_cannot_be_read_are_clear_errors(args):
    proc = _buildlog(*args)
    assert proc.returncode == 2 and "internal error" not in proc.stderr and proc.stderr.startswith("buildlog: ")


def test_a_closed_stdin_is_a_clear_error():
    proc = _sp.run(f"{sys.executable} -m buildlog explain - <&-", shell=True, capture_output=True, text=True)
    assert proc.returncode == 2 and "standard input is closed" in proc.stderr


def test_a_file_name_that_is_not_utf8_still_gives_json(tmp_path):
    name = os.fsencode(str(tmp_path)) + b"/build-\xff.log"
    with open(name, "wb") as out:
        out.write(LOG.read_bytes())
    proc = _sp.run([sys.executable, "-m", "buildlog", "explain", name, "--format", "json"], capture_output=True)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["source"].endswith("build-\ufffd.log")


def test_config_in_pyproject_adds_rules_and_switches_one_off(tmp_path):
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "team.toml").write_text(
        '[[rule]]\nid = "team-psutil"\ncause = "missing_build_dependency"\ntitle = "psutil is missing (team rule)"\n'
        "anchors = [\"No module named 'psutil'\"]\npattern = \"No module named 'psutil'\"\npriority = 99\n"
        'fix = "Ask the platform team for the psutil image."\n[rule.examples]\nfire = ["No module named \'psutil\'"]\n'
    )
    (tmp_path / "pyproject.toml").write_text('[tool.buildlog]\nrules = ["rules"]\ndisable = ["ninja-required"]\n')
    proc = _buildlog("explain", str(LOG), "--format", "json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["root_causes"][0]["rule"] == "team-psutil"
    listed = _buildlog("rules", cwd=tmp_path).stdout
    assert "team-psutil" in listed and "ninja-required " not in listed
    (tmp_path / "pyproject.toml").write_text('[tool.buildlog]\nrulez = ["rules"]\n')
    bad = _buildlog("explain", str(LOG), cwd=tmp_path)
    assert bad.returncode == 2 and "unknown buildlog setting rulez" in bad.stderr


def test_rule_prints_what_a_rule_finds_and_rules_test_runs_a_folder(tmp_path):
    shown = _buildlog("rule", "torch-cuda-major-mismatch").stdout
    for part in ("cuda_version_mismatch", "Why it matters:", "Example:", "Fix:", "References:"):
        assert part in shown
    assert _buildlog("rule", "nope").returncode == 2
    (tmp_path / "r.toml").write_text(
        '[[rule]]\nid = "team-x"\ncause = "disk_full"\ntitle = "team disk rule"\nanchors = ["QUOTA EXCEEDED"]\n'
        'pattern = "QUOTA EXCEEDED on (?P<path>\\\\S+)"\n[rule.examples]\nfire = ["QUOTA EXCEEDED on /scratch"]\n'
        'quiet = ["QUOTA EXCEEDED on"]\n'
    )
    ok_run = _buildlog("rules", "test", str(tmp_path))
    assert ok_run.returncode == 0 and "1 rules, 0 failing examples" in ok_run.stdout, ok_run.stdout + ok_run.stderr
    (tmp_path / "r.toml").write_text(
        (tmp_path / "r.toml")
        .read_text()
        .replace('quiet = ["QUOTA EXCEEDED on"]', 'quiet = ["QUOTA EXCEEDED on /home"]')
    )
    failing = _buildlog("rules", "test", str(tmp_path))
    assert failing.returncode == 1 and "FAIL team-x quiet" in failing.stdout
    schema = json.loads(_buildlog("schema", "--rules").stdout)
    assert "rule" in schema["properties"]


def test_the_readme_rule_works_as_written(tmp_path):
    import re as _re

    blocks = _re.findall(r"```toml\n(.*?)```", (ROOT / "README.md").read_text("utf-8"), _re.S)
    rule = next(b for b in blocks if "[[rule]]" in b)
    (tmp_path / "team.toml").write_text(rule)
    proc = _buildlog("rules", "test", str(tmp_path))
    assert proc.returncode == 0 and "0 failing examples" in proc.stdout, proc.stdout + proc.stderr
    config = next(b for b in blocks if "[tool.buildlog]" in b)
    (tmp_path / "ci" / "buildlog-rules").mkdir(parents=True)
    (tmp_path / "ci" / "buildlog-rules" / "team.toml").write_text(rule)
    (tmp_path / "pyproject.toml").write_text(config)
    log = tmp_path / "b.log"
    log.write_text(
        "$ pip install ext\nPLATFORM-CHECK: CUDA toolkit 13.0 is not supported on this runner\nerror: stop\n"
    )
    out = json.loads(_buildlog("explain", str(log), "--format", "json", cwd=tmp_path).stdout)
    assert out["root_causes"][0]["rule"] == "team-cuda-12-images-only"
