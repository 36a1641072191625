"""Times `buildlog explain` against grep and wc on the same generated logs, side by side.

    python -m bench.run                      # 10M and 100M, every kind, both scan engines, start-up, odd inputs
    python -m bench.run --sizes 10M,100M,1G --kinds preambles,flood --engines hyperscan
    BUILDLOG_BENCH_DIR=/scratch python -m bench.run --markdown /tmp/results.md

For every size and every kind of generated log (bench/gen.py: `build`, one verbose failed build;
`preambles`, a thousand build jobs per 100 MB with twenty incidents among them; `flood`, 100,000
distinct compiler errors per 100 MB with a few causes among them), each round runs every command
once on the same file (so the page cache and the machine's load are shared), and the report gives
medians over the rounds, ratios to `grep -E -c` with the rules' own patterns (converted to ERE,
see bench/ere.py; run in the groups grep is fastest in, see plan_groups, since the union of all
of them makes grep's automaton blow up) and to `wc -l`, and each command's peak resident memory (GNU time's %M; for
explain, the sum of its own peak and that of the process it reads the log in, see tree_peak_mb).

Every explain run is checked, and the runner exits 1 with a FAIL row when a check fails:
- the report (`--format json`) names every buried cause in `root_causes[].id`, at every size and
  for every kind: a fast run that misses a cause is a failure;
- on the flood, the report's `volume` counts lose nothing: `analysed + repeated == candidates`
  and `candidates` is at least the number of error lines written ("n/a" where a report has no
  `volume` yet);
- explain exits 0, within --timeout seconds.
Rows whose peak memory is over 150 MB are flagged (the target), and the ratios are set against
the speed targets at the end, without failing the run.

Logs are written to $BUILDLOG_BENCH_DIR (default /tmp/buildlog-bench), never into the repository,
and reused while the generator and the size are unchanged.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bench import gen
from bench.ere import patterns_for_grep, plan_groups
from bench.rules import bundled_rules

REPO = Path(__file__).resolve().parent.parent
MEMORY_TARGET_MB = 150
SPEED_TARGETS = {"100M": 1.5, "1G": 1.0}  # explain's median over grep's, on the build logs of these sizes
FLOOD_TARGET_S_PER_100MB = 3.0
FLOOR = "import click, rich, pydantic, lark"
# The libraries each report loads (a run builds no pydantic model; a terminal report is drawn by rich's Console).
NEEDS = {
    "json report's libraries": "import click, lark",
    "terminal report's libraries": "import click, lark, rich.console, rich.table",
}


@dataclass
class Sample:
    """One run of one command."""

    seconds: float
    rss_mb: float
    rc: int
    stdout: bytes
    stderr: bytes
    timed_out: bool = False
    cpu: float = 0.0  # user + system seconds of the command and what it waited for


@dataclass
class Series:
    """All runs of one command on one input."""

    label: str
    samples: list[Sample] = field(default_factory=list)

    @property
    def median(self) -> float:
        return statistics.median(s.seconds for s in self.samples)

    @property
    def cpu(self) -> float:
        """The median CPU time: on a machine others share, it moves less with their load than wall time."""
        return statistics.median(s.cpu for s in self.samples)

    tree_mb: float = 0.0  # explain: its own peak plus its reading process's (see tree_peak_mb)

    @property
    def peak_mb(self) -> float:
        return max(max(s.rss_mb for s in self.samples), self.tree_mb)


TIME = "/usr/bin/time"


def run_once(argv: Sequence[str], env: dict[str, str] | None = None, timeout: float | None = None) -> Sample:
    """Run a command to completion: wall time, and the peak RSS of the command itself.

    The child of a fork starts with this process's resident pages and Linux keeps ru_maxrss
    across exec, so os.wait4 alone would report at least the runner's own size. GNU time, being
    small itself, reports the command's own peak (%M); os.wait4 is the fallback without it.
    """
    timed = os.access(TIME, os.X_OK)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, tempfile.NamedTemporaryFile("r") as rss:
        full = [TIME, "-f", "%M", "-o", rss.name, *argv] if timed else list(argv)
        start = time.perf_counter()
        proc = subprocess.Popen(full, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=env, start_new_session=True)
        fired = threading.Event()
        timer = threading.Timer(timeout or 0, _kill_group, (proc.pid, fired))
        if timeout:
            timer.start()
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
        timer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait again
        rc = os.waitstatus_to_exitcode(status)
        peak_kb = _peak_kb(rss.read()) if timed else usage.ru_maxrss
        out.seek(0)
        err.seek(0)
        cpu = usage.ru_utime + usage.ru_stime  # of GNU time and the command it waited for (time's own is tiny)
        return Sample(seconds, peak_kb / 1024, rc, out.read(), err.read(), fired.is_set(), cpu)


def _kill_group(pid: int, fired: threading.Event) -> None:
    """Stop a command that ran past its time, with whatever it started (explain's reading child)."""
    fired.set()
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _peak_kb(report: str) -> int:
    """The last number GNU time wrote (it may add a line about the exit status first)."""
    numbers = [line for line in report.split() if line.isdigit()]
    return int(numbers[-1]) if numbers else 0


def buildlog_argv() -> list[str]:
    """The installed console script beside this interpreter, else `python -m buildlog`."""
    script = Path(sys.executable).with_name("buildlog")
    return [str(script)] if script.exists() else [sys.executable, "-m", "buildlog"]


def engine_env(engine: str) -> dict[str, str]:
    env = dict(os.environ)
    env["BUILDLOG_SCAN_ENGINE"] = engine
    return env


def grep_env() -> dict[str, str]:
    return {**os.environ, "LC_ALL": "C"}


def write_patterns(folder: Path) -> tuple[Path, int, int]:
    """The rules' patterns as EREs, one per line; how many there are and how many fell back to anchors."""
    patterns, fallbacks = patterns_for_grep((r.pattern, r.anchors) for r in bundled_rules())
    patterns = [p for p in patterns if _grep_accepts(p)]
    path = folder / "patterns.ere"
    path.write_text("\n".join(patterns) + "\n", "utf-8")
    return path, len(patterns), fallbacks


SAMPLE_BYTES = 2 << 20  # of each log, to find the groups grep runs fastest in


def grep_groups(patterns: Path, log: Path) -> list[Path]:
    """The rules' EREs split into the groups grep searches this log fastest in (bench.ere.plan_groups),
    planned on the log's first SAMPLE_BYTES; one pattern file per group, beside the log."""
    sample = log.with_name(log.name + ".sample")
    with log.open("rb") as f:
        head = f.read(SAMPLE_BYTES)
    sample.write_bytes(head[: head.rfind(b"\n") + 1] or head)
    probe = log.with_name(log.name + ".probe.ere")

    def cost(group: list[str], limit: float | None) -> float | None:
        probe.write_text("\n".join(group) + "\n", "utf-8")
        best: float | None = None
        for _ in range(2):
            start = time.perf_counter()
            try:
                subprocess.run(
                    ["grep", "-E", "-c", "-f", str(probe), str(sample)], capture_output=True, env=grep_env(),
                    check=False, timeout=None if limit is None else max(limit * 1.5, 0.05),
                )  # fmt: skip
            except subprocess.TimeoutExpired:
                return None
            seconds = time.perf_counter() - start
            best = seconds if best is None else min(best, seconds)
        return best

    groups = plan_groups(patterns.read_text("utf-8").splitlines(), cost)
    probe.unlink(missing_ok=True)
    sample.unlink(missing_ok=True)
    paths = []
    for old in log.parent.glob(log.name + ".grep*.ere"):
        old.unlink()
    for i, group in enumerate(groups):
        path = log.with_name(f"{log.name}.grep{i}.ere")
        path.write_text("\n".join(group) + "\n", "utf-8")
        paths.append(path)
    return paths


def groups_note(groups: Sequence[Path]) -> str:
    sizes = [len(g.read_text("utf-8").splitlines()) for g in groups]
    return f"grep ran the rules' EREs in {len(groups)} group(s) of {', '.join(map(str, sizes))} pattern(s), one after the other"


def grep_argv(groups: Sequence[Path], log: Path) -> list[str]:
    """One grep per group, one after the other (the baseline's time is theirs together)."""
    if len(groups) == 1:
        return ["grep", "-E", "-c", "-f", str(groups[0]), str(log)]
    script = " ; ".join(f"grep -E -c -f {shlex.quote(str(g))} {shlex.quote(str(log))}" for g in groups)
    return ["sh", "-c", script]


def _grep_accepts(pattern: str) -> bool:
    probe = subprocess.run(
        ["grep", "-E", "-c", "-e", pattern, os.devnull], capture_output=True, env=grep_env(), check=False
    )
    return probe.returncode != 2


def commands(
    log: Path, groups: Sequence[Path], engines: Sequence[str]
) -> dict[str, tuple[list[str], dict[str, str] | None]]:
    out: dict[str, tuple[list[str], dict[str, str] | None]] = {
        "wc -l": (["wc", "-l", str(log)], None),
        "grep -E -c": (grep_argv(groups, log), grep_env()),
    }
    for engine in engines:
        out[f"explain ({engine})"] = ([*buildlog_argv(), "explain", "--format", "json", str(log)], engine_env(engine))
    return out


def measure(
    cmds: dict[str, tuple[list[str], dict[str, str] | None]], repeat: int, timeout: float | None = None
) -> dict[str, Series]:
    """Round-robin: every command once per round, in the same order; then explain's memory.

    An explain that timed out is not run again (its figures would only say "at least").
    """
    series = {label: Series(label) for label in cmds}
    for _ in range(repeat):
        for label, (argv, env) in cmds.items():
            if not any(x.timed_out for x in series[label].samples):
                series[label].samples.append(run_once(argv, env, timeout))
    for label, (argv, env) in cmds.items():
        if "explain" in argv and not any(x.timed_out for x in series[label].samples):
            series[label].tree_mb = tree_peak_mb(argv[argv.index("explain") :], env, timeout)
    return series


# Runs buildlog's console entry and, at exit, writes its own peak RSS and its children's.
TREE_PROBE = """
import atexit, resource, sys
out = sys.argv.pop(1)
def report():
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    with open(out, "w") as f:
        f.write(f"{own} {children}")
atexit.register(report)
from buildlog.cli import run
run()
"""


def tree_peak_mb(args: Sequence[str], env: dict[str, str] | None, timeout: float | None = None) -> float:
    """explain's peak memory counting both processes: its own peak plus its reading child's.

    GNU time and wait4 report the larger of a process and its children, not their sum, and
    explain reads the log in a child process while it loads (cli/ahead.py). One extra, untimed
    run reports both peaks from inside.
    """
    with tempfile.NamedTemporaryFile("r") as out:
        try:
            subprocess.run(
                [sys.executable, "-c", TREE_PROBE, out.name, *args],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=False, timeout=timeout,
            )  # fmt: skip
        except subprocess.TimeoutExpired:
            return 0.0
        numbers = out.read().split()
    return sum(int(n) for n in numbers) / 1024 if len(numbers) == 2 else 0.0


def _report(sample: Sample) -> dict | None:
    try:
        report = json.loads(sample.stdout)
    except ValueError:
        return None
    return report if isinstance(report, dict) else None


def found_causes(sample: Sample) -> set[str]:
    report = _report(sample) or {}
    try:
        return {r["id"] for r in report["root_causes"]}
    except (KeyError, TypeError):
        return set()


def cited_lines(report: dict) -> set[int]:
    """Every line number the report's root causes give as evidence."""
    try:
        return {e["line"] for r in report["root_causes"] for e in r.get("evidence", [])}
    except (KeyError, TypeError, AttributeError):
        return set()


def volume_check(report: dict, truth: gen.Truth) -> tuple[str, bool]:
    """The flood's counts: every candidate line analysed or counted as a repeat, none lost.

    `volume` is {"candidates": lines the scan selected, "analysed": of which parsed and judged,
    "repeated": of which counted as repeats of an analysed message}; a report without it says
    nothing about its counts yet ("n/a", not a failure).
    """
    volume = report.get("volume")
    if volume is None:
        return "counts n/a (the report has no volume)", False
    try:
        c, a, r = (int(volume[k]) for k in ("candidates", "analysed", "repeated"))
    except (KeyError, TypeError, ValueError):
        return f"counts unreadable: volume = {volume!r}", True
    problems = []
    if a + r != c:
        problems.append(f"analysed {a} + repeated {r} = {a + r} != candidates {c}")
    if c < truth.error_lines:
        problems.append(f"candidates {c} < {truth.error_lines} error lines written")
    if problems:
        return "counts lost: " + "; ".join(problems), True
    return f"counts ok: {c} candidates = {a} analysed + {r} repeated, >= {truth.error_lines} error lines", False


def explain_check(series: Series, truth: gen.Truth | None) -> tuple[str, bool]:
    """What every run of explain got right and wrong; (text, failed). A failed check reads FAIL: first.

    Fails when a run timed out, exited non-zero or wrote no JSON report, when any run's report
    misses a buried cause (root_causes[].id), and on the flood when its counts lose lines. Peak
    memory over the target is flagged, not failed.
    """
    notes: list[str] = []
    failed = False
    timed = [x for x in series.samples if x.timed_out]
    bad = [x for x in series.samples if x.rc != 0 and not x.timed_out]
    if timed:
        return f"FAIL: timed out (killed after {timed[0].seconds:.1f} s)", True
    if bad:
        tail = bad[0].stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
        return f"FAIL: exit {bad[0].rc}: {tail[0][:160]}", True
    if truth is not None:
        reports = [_report(x) for x in series.samples]
        if any(r is None for r in reports):
            return "FAIL: no JSON report on stdout", True
        wanted = set(truth.causes)
        missing = sorted(set().union(*(wanted - found_causes(x) for x in series.samples)))
        if missing:
            failed = True
            notes.append(f"missed {', '.join(missing)} ({len(wanted) - len(missing)}/{len(wanted)} causes)")
        else:
            notes.append(f"all {len(wanted)} causes found")
        if len(truth.buried) > len(wanted) or truth.kind != "build":
            cited = cited_lines(reports[0])
            hits = sum(1 for b in truth.buried if any(b.line <= n < b.line + b.text.count("\n") + 1 for n in cited))
            notes.append(f"{hits}/{len(truth.buried)} incident lines cited")
        if truth.kind == "flood":
            text, lost = volume_check(reports[0], truth)
            failed |= lost
            notes.append(text)
    elif not notes:
        notes.append("ok")
    if series.peak_mb > MEMORY_TARGET_MB:
        notes.append(f"over {MEMORY_TARGET_MB} MB")
    return ("FAIL: " if failed else "") + "; ".join(notes), failed


@dataclass
class Verdict:
    """What failed (the runner exits 1 if anything did), and the ratios set against the targets."""

    failures: list[str] = field(default_factory=list)
    targets: list[str] = field(default_factory=list)

    def record(self, where: str, label: str, check: tuple[str, bool]) -> str:
        text, failed = check
        if failed:
            self.failures.append(f"{where}, {label}: {text.removeprefix('FAIL: ')}")
        return text

    def lines(self) -> list[str]:
        out = ["### Targets", ""]
        out += [f"- {t}" for t in self.targets] or [
            "- (none bears on the sizes run: speed at 100M and 1G, the flood from 100M)"
        ]
        out += ["", "### Verdict", ""]
        if self.failures:
            out.append(f"FAIL: {len(self.failures)} check(s) failed")
            out += [f"- FAIL {f}" for f in self.failures]
        else:
            out.append("PASS: every explain run named every buried cause, and kept its counts where it reports them")
        return out + [""]


def size_table(
    name: str, where: str, series: dict[str, Series], truth: gen.Truth | None, verdict: Verdict
) -> list[str]:
    grep, wc = series["grep -E -c"].median, series["wc -l"].median
    rows = [
        f"### {name}",
        "",
        "| command | median s | CPU s | × grep | × wc | peak RSS MB | check |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for label, s in series.items():
        check = verdict.record(where, label, explain_check(s, truth)) if label.startswith("explain") else ""
        rows.append(
            f"| {label} | {s.median:.2f} | {s.cpu:.2f} | {s.median / grep:.2f} | {s.median / wc:.1f} | {s.peak_mb:.0f}"
            f" | {check} |"
        )
    return rows + [""]


def log_name(kind: str, size: str) -> str:
    return f"{kind}-{size}.log"


def describe(kind: str, text: str, truth: gen.Truth) -> str:
    head = f"{kind} {text} ({truth.bytes / 1e6:.0f} MB, {truth.lines} lines"
    causes = ", ".join(truth.causes)
    if kind == "preambles":
        return f"{head}, {truth.attempts} build jobs, {len(truth.buried)} incidents of {len(truth.causes)} causes: {causes})"
    if kind == "flood":
        return f"{head}, {truth.error_lines} distinct error lines, buried: {causes})"
    return f"{head}, buried: {causes})"


def targets(kind: str, text: str, series: dict[str, Series], truth: gen.Truth) -> list[str]:
    """The speed targets this table bears on, met or not (informational: they do not fail the run)."""
    grep = series["grep -E -c"].median
    out = []
    for label, s in series.items():
        if not label.startswith("explain") or any(x.timed_out for x in s.samples):
            continue
        if kind != "flood" and text in SPEED_TARGETS:
            goal = SPEED_TARGETS[text]
            ratio = s.median / grep
            out.append(
                f"{kind} {text}, {label}: {ratio:.2f}x grep (target {goal}x): {'met' if ratio <= goal else 'NOT MET'}"
            )
        if kind == "flood" and truth.bytes >= 0.9 * (100 << 20):  # below, start-up is all a figure would show
            per = s.median / (truth.bytes / (100 << 20))
            cpu = s.cpu / (truth.bytes / (100 << 20))
            goal = FLOOD_TARGET_S_PER_100MB
            out.append(
                f"flood {text}, {label}: {per:.2f} s per 100 MB, CPU {cpu:.2f} s (target {goal} s):"
                f" {'met' if per <= goal else 'NOT MET'}"
            )
        if s.peak_mb > MEMORY_TARGET_MB:
            out.append(f"{kind} {text}, {label}: peak {s.peak_mb:.0f} MB (target under {MEMORY_TARGET_MB} MB): NOT MET")
    return out


def bench_sizes(
    folder: Path,
    sizes: Sequence[str],
    kinds: Sequence[str],
    engines: Sequence[str],
    repeat: int,
    patterns: Path,
    verdict: Verdict,
    timeout: float | None = None,
) -> list[str]:
    lines: list[str] = []
    for text in sizes:
        size = gen.parse_size(text)
        for kind in kinds:
            log = folder / log_name(kind, text)
            print(f"generating {log} ...", file=sys.stderr)
            truth = gen.ensure(log, size, kind=kind)
            groups = grep_groups(patterns, log)
            _warm(log)
            print(f"timing {kind} {text} ({repeat} rounds) ...", file=sys.stderr)
            series = measure(commands(log, groups, engines), repeat, timeout)
            lines += size_table(describe(kind, text, truth), f"{kind} {text}", series, truth, verdict)
            lines += [groups_note(groups), ""]
            verdict.targets += targets(kind, text, series, truth)
    return lines


def bench_startup(folder: Path, engines: Sequence[str], repeat: int, verdict: Verdict) -> list[str]:
    """A 1 MB log against the import floor of any CLI on the same libraries."""
    log = folder / "build-1M.log"
    truth = gen.ensure(log, gen.parse_size("1M"))
    cmds: dict[str, tuple[list[str], dict[str, str] | None]] = {
        "floor: python -c '" + FLOOR + "'": ([sys.executable, "-c", FLOOR], None)
    }
    for label, code in NEEDS.items():
        cmds[f"{label}: python -c '{code}'"] = ([sys.executable, "-c", code], None)
    for engine in engines:
        cmds[f"explain 1 MB, JSON ({engine})"] = (
            [*buildlog_argv(), "explain", "--format", "json", str(log)],
            engine_env(engine),
        )
    cmds[f"explain 1 MB, terminal ({engines[0]})"] = ([*buildlog_argv(), "explain", str(log)], engine_env(engines[0]))
    series = measure(cmds, max(repeat, 5))
    floor = next(iter(series.values())).median
    rows = [
        "### Start-up: 1 MB log",
        "",
        "| command | median s | × floor | peak RSS MB | check |",
        "|---|---:|---:|---:|---|",
    ]
    for label, s in series.items():
        check = ""
        if label.startswith("explain"):
            check = verdict.record("start-up", label, explain_check(s, truth if "JSON" in label else None))
        rows.append(f"| {label} | {s.median:.2f} | {s.median / floor:.2f} | {s.peak_mb:.0f} | {check} |")
    return rows + [""]


def bench_odd_inputs(
    folder: Path, engines: Sequence[str], repeat: int, patterns: Path, verdict: Verdict, timeout: float | None = None
) -> list[str]:
    """A 50 MB line with no newline, 50 MB of NUL bytes and 50 MB of nothing but compiler errors,
    next to a normal 50 MB log."""
    size = gen.parse_size("50M")
    normal, long_line, nul = folder / "build-50M.log", folder / "one-line-50M.log", folder / "nul-50M.log"
    flood = folder / "errors-50M.log"
    gen.ensure(normal, size)
    for path, make in ((long_line, gen.one_long_line), (nul, gen.nul_file), (flood, gen.flood_file)):
        if not path.exists() or path.stat().st_size != size:
            make(path, size)
    rows = [
        "### Odd inputs, 50 MB each",
        "",
        "| input | command | median s | × grep | peak RSS MB | check |",
        "|---|---|---:|---:|---:|---|",
    ]
    for log in (normal, long_line, nul, flood):
        groups = grep_groups(patterns, log)
        _warm(log)
        series = measure(commands(log, groups, engines), repeat, timeout)
        grep = series["grep -E -c"].median
        for label, s in series.items():
            check = ""
            if label.startswith("explain"):
                traceback = [x for x in s.samples if b"Traceback" in x.stderr]
                result = explain_check(s, None)
                if traceback and not result[1]:
                    result = (f"FAIL: traceback: {traceback[0].stderr[-160:]!r}", True)
                check = verdict.record(f"odd input {log.name}", label, result)
            rows.append(
                f"| {log.name} | {label} | {s.median:.2f} | {s.median / grep:.2f} | {s.peak_mb:.0f} | {check} |"
            )
    return rows + [""]


def compile_package() -> None:
    """Byte-compile buildlog as an installed wheel is, so that an editable checkout measures the same.

    pip compiles a wheel's modules when it installs them, and the floor's libraries came that
    way; an editable install compiles nothing, and where PYTHONDONTWRITEBYTECODE is set every run
    would compile buildlog from source again.
    """
    import compileall

    import buildlog

    compileall.compile_dir(str(Path(buildlog.__file__).parent), quiet=1)


def _warm(path: Path) -> None:
    """Read the file once so that every command finds it in the page cache."""
    with path.open("rb") as f:
        while f.read(16 << 20):
            pass


def scratch_dir(explicit: str | None) -> Path:
    folder = Path(
        explicit or os.environ.get("BUILDLOG_BENCH_DIR") or Path(tempfile.gettempdir()) / "buildlog-bench"
    ).resolve()
    if folder == REPO or REPO in folder.parents:
        raise SystemExit(f"bench: {folder} is inside the repository; pick a scratch directory")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def environment(engines: Sequence[str], patterns: int, fallbacks: int) -> list[str]:
    import platform

    grep = subprocess.run(["grep", "--version"], capture_output=True, text=True, check=False).stdout.splitlines()[0]
    return [
        f"- machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, {grep}, LC_ALL=C for grep",
        f"- grep runs {patterns} EREs from the rules ({fallbacks} rule patterns fell back to their anchors), in the groups"
        " it runs fastest in on each log's first 2 MB, one grep per group, their times summed (bench/ere.py plan_groups)",
        f"- engines timed: {', '.join(engines)} (hyperscan installed: {hyperscan_available()})",
        "",
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10M,100M", help="comma-separated sizes, e.g. 10M,100M,1G")
    parser.add_argument(
        "--kinds", default=",".join(gen.KINDS), help=f"comma-separated kinds of log (default: {','.join(gen.KINDS)})"
    )
    parser.add_argument("--repeat", type=int, default=3, help="rounds per size (medians are reported)")
    parser.add_argument(
        "--timeout", type=float, default=600, help="seconds one explain run may take before it counts as failed"
    )
    parser.add_argument(
        "--engines", default=None, help="comma-separated scan engines (default: hyperscan if installed, and plain)"
    )
    parser.add_argument(
        "--dir", default=None, help="scratch directory (default $BUILDLOG_BENCH_DIR or /tmp/buildlog-bench)"
    )
    parser.add_argument("--no-startup", action="store_true", help="skip the 1 MB start-up comparison")
    parser.add_argument("--no-odd", action="store_true", help="skip the long-line, NUL-byte and all-errors inputs")
    parser.add_argument("--markdown", default=None, help="also write the tables to this file")
    args = parser.parse_args(argv)
    kinds = [k for k in args.kinds.split(",") if k]
    unknown = sorted(set(kinds) - set(gen.KINDS))
    if unknown:
        parser.error(f"unknown kinds {unknown}; pick from {', '.join(gen.KINDS)}")

    engines = (
        args.engines.split(",") if args.engines else (["hyperscan", "plain"] if hyperscan_available() else ["plain"])
    )
    if not shutil.which("grep") or not shutil.which("wc"):
        raise SystemExit("bench: grep and wc are needed")
    folder = scratch_dir(args.dir)
    compile_package()
    patterns, count, fallbacks = write_patterns(folder)
    lines = ["## buildlog explain vs grep -E -c vs wc -l", "", *environment(engines, count, fallbacks)]
    verdict = Verdict()
    sizes = [s for s in args.sizes.split(",") if s]
    lines += bench_sizes(folder, sizes, kinds, engines, args.repeat, patterns, verdict, args.timeout)
    if not args.no_odd:
        lines += bench_odd_inputs(folder, engines, args.repeat, patterns, verdict, args.timeout)
    if not args.no_startup:
        lines += bench_startup(folder, engines, args.repeat, verdict)
    lines += verdict.lines()
    text = "\n".join(lines)
    print(text)
    if args.markdown:
        Path(args.markdown).write_text(text, "utf-8")
    for failure in verdict.failures:
        print(f"bench: FAIL {failure}", file=sys.stderr)
    return 1 if verdict.failures else 0


def hyperscan_available() -> bool:
    """Whether the hyperscan module can be imported here (without importing buildlog's scanner)."""
    import importlib.util

    return importlib.util.find_spec("hyperscan") is not None


if __name__ == "__main__":
    sys.exit(main())
