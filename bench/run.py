"""Times `buildlog explain` against grep and wc on the same generated logs, side by side.

    python -m bench.run                      # 10M and 100M, both scan engines, start-up, odd inputs
    python -m bench.run --sizes 1G --repeat 3
    BUILDLOG_BENCH_DIR=/scratch python -m bench.run --markdown /tmp/results.md

For every size, each round runs every command once on the same file (so the page cache and the
machine's load are shared), and the report gives medians over the rounds, ratios to
`grep -E -c` with the rules' own patterns (converted to ERE, see bench/ere.py) and to `wc -l`, and
each command's peak resident memory (GNU time's %M; for explain, the sum of its own peak and
that of the process it reads the log in, see tree_peak_mb). It also checks that
the report names every cause the generator buried (root_causes ids in `--format json`).

Logs are written to $BUILDLOG_BENCH_DIR (default /tmp/buildlog-bench), never into the repository,
and reused while the generator and the size are unchanged.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bench import gen
from bench.ere import patterns_for_grep

REPO = Path(__file__).resolve().parent.parent
FLOOR = "import click, rich, pydantic, lark"
# What a report needs loaded before it reads a byte, which the floor's package imports do not load:
# a JSON report is a pydantic model (BaseModel and its machinery), a terminal report is drawn by rich's Console.
NEEDS = {
    "json report's libraries": "import click; from pydantic import BaseModel",
    "terminal report's libraries": "import click, rich.console; from pydantic import BaseModel",
}


@dataclass
class Sample:
    """One run of one command."""

    seconds: float
    rss_mb: float
    rc: int
    stdout: bytes
    stderr: bytes


@dataclass
class Series:
    """All runs of one command on one input."""

    label: str
    samples: list[Sample] = field(default_factory=list)

    @property
    def median(self) -> float:
        return statistics.median(s.seconds for s in self.samples)

    tree_mb: float = 0.0  # explain: its own peak plus its reading process's (see tree_peak_mb)

    @property
    def peak_mb(self) -> float:
        return max(max(s.rss_mb for s in self.samples), self.tree_mb)


TIME = "/usr/bin/time"


def run_once(argv: Sequence[str], env: dict[str, str] | None = None) -> Sample:
    """Run a command to completion: wall time, and the peak RSS of the command itself.

    The child of a fork starts with this process's resident pages and Linux keeps ru_maxrss
    across exec, so os.wait4 alone would report at least the runner's own size. GNU time, being
    small itself, reports the command's own peak (%M); os.wait4 is the fallback without it.
    """
    timed = os.access(TIME, os.X_OK)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, tempfile.NamedTemporaryFile("r") as rss:
        full = [TIME, "-f", "%M", "-o", rss.name, *argv] if timed else list(argv)
        start = time.perf_counter()
        proc = subprocess.Popen(full, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
        rc = os.waitstatus_to_exitcode(status)
        peak_kb = _peak_kb(rss.read()) if timed else usage.ru_maxrss
        out.seek(0)
        err.seek(0)
        return Sample(seconds, peak_kb / 1024, rc, out.read(), err.read())


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
    from buildlog.knowledge.artefact import bundled

    patterns, fallbacks = patterns_for_grep((r.pattern, r.anchors) for r in bundled().rules)
    patterns = [p for p in patterns if _grep_accepts(p)]
    path = folder / "patterns.ere"
    path.write_text("\n".join(patterns) + "\n", "utf-8")
    return path, len(patterns), fallbacks


def _grep_accepts(pattern: str) -> bool:
    probe = subprocess.run(
        ["grep", "-E", "-c", "-e", pattern, os.devnull], capture_output=True, env=grep_env(), check=False
    )
    return probe.returncode != 2


def commands(log: Path, patterns: Path, engines: Sequence[str]) -> dict[str, tuple[list[str], dict[str, str] | None]]:
    out: dict[str, tuple[list[str], dict[str, str] | None]] = {
        "wc -l": (["wc", "-l", str(log)], None),
        "grep -E -c": (["grep", "-E", "-c", "-f", str(patterns), str(log)], grep_env()),
    }
    for engine in engines:
        out[f"explain ({engine})"] = ([*buildlog_argv(), "explain", "--format", "json", str(log)], engine_env(engine))
    return out


def measure(cmds: dict[str, tuple[list[str], dict[str, str] | None]], repeat: int) -> dict[str, Series]:
    """Round-robin: every command once per round, in the same order; then explain's memory."""
    series = {label: Series(label) for label in cmds}
    for _ in range(repeat):
        for label, (argv, env) in cmds.items():
            series[label].samples.append(run_once(argv, env))
    for label, (argv, env) in cmds.items():
        if "explain" in argv:
            series[label].tree_mb = tree_peak_mb(argv[argv.index("explain") :], env)
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


def tree_peak_mb(args: Sequence[str], env: dict[str, str] | None) -> float:
    """explain's peak memory counting both processes: its own peak plus its reading child's.

    GNU time and wait4 report the larger of a process and its children, not their sum, and
    explain reads the log in a child process while it loads (cli/ahead.py). One extra, untimed
    run reports both peaks from inside.
    """
    with tempfile.NamedTemporaryFile("r") as out:
        subprocess.run(
            [sys.executable, "-c", TREE_PROBE, out.name, *args],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=False,
        )  # fmt: skip
        numbers = out.read().split()
    return sum(int(n) for n in numbers) / 1024 if len(numbers) == 2 else 0.0


def found_causes(sample: Sample) -> set[str]:
    try:
        return {r["id"] for r in json.loads(sample.stdout)["root_causes"]}
    except (ValueError, KeyError, TypeError):
        return set()


def causes_check(series: Series, truth: gen.Truth | None) -> str:
    """Whether every run of explain succeeded and (given the truth) named every buried cause."""
    bad = [x for x in series.samples if x.rc != 0]
    if bad:
        return f"exit {bad[0].rc}"
    if truth is None:
        return "ok"
    missing = sorted(set(truth.causes) - found_causes(series.samples[0]))
    return "missed " + ", ".join(missing) if missing else "all causes found"


def size_table(name: str, series: dict[str, Series], truth: gen.Truth | None) -> list[str]:
    grep, wc = series["grep -E -c"].median, series["wc -l"].median
    rows = [
        f"### {name}",
        "",
        "| command | median s | × grep | × wc | peak RSS MB | check |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for label, s in series.items():
        check = causes_check(s, truth) if label.startswith("explain") else ""
        rows.append(
            f"| {label} | {s.median:.2f} | {s.median / grep:.2f} | {s.median / wc:.1f} | {s.peak_mb:.0f} | {check} |"
        )
    return rows + [""]


def bench_sizes(folder: Path, sizes: Sequence[str], engines: Sequence[str], repeat: int, patterns: Path) -> list[str]:
    lines: list[str] = []
    for text in sizes:
        size = gen.parse_size(text)
        log = folder / f"build-{text}.log"
        print(f"generating {log} ...", file=sys.stderr)
        truth = gen.ensure(log, size)
        _warm(log)
        print(f"timing {text} ({repeat} rounds) ...", file=sys.stderr)
        series = measure(commands(log, patterns, engines), repeat)
        lines += size_table(
            f"{text} ({truth.bytes / 1e6:.0f} MB, {truth.lines} lines, buried: {', '.join(truth.causes)})",
            series,
            truth,
        )
    return lines


def bench_startup(folder: Path, engines: Sequence[str], repeat: int) -> list[str]:
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
        check = causes_check(s, truth if "JSON" in label else None) if label.startswith("explain") else ""
        rows.append(f"| {label} | {s.median:.2f} | {s.median / floor:.2f} | {s.peak_mb:.0f} | {check} |")
    return rows + [""]


def bench_odd_inputs(folder: Path, engines: Sequence[str], repeat: int, patterns: Path) -> list[str]:
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
        _warm(log)
        series = measure(commands(log, patterns, engines), repeat)
        grep = series["grep -E -c"].median
        for label, s in series.items():
            check = ""
            if label.startswith("explain"):
                bad = [x for x in s.samples if x.rc != 0 or b"Traceback" in x.stderr]
                check = f"exit {bad[0].rc}: {bad[0].stderr[-200:]!r}" if bad else "ok"
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

    from buildlog.scan.engines import hyperscan_available

    grep = subprocess.run(["grep", "--version"], capture_output=True, text=True, check=False).stdout.splitlines()[0]
    return [
        f"- machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, {grep}, LC_ALL=C for grep",
        f"- grep runs {patterns} EREs from the rules ({fallbacks} rule patterns fell back to their anchors)",
        f"- engines timed: {', '.join(engines)} (hyperscan installed: {hyperscan_available()})",
        "",
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10M,100M", help="comma-separated sizes, e.g. 10M,100M,1G")
    parser.add_argument("--repeat", type=int, default=3, help="rounds per size (medians are reported)")
    parser.add_argument(
        "--engines", default=None, help="comma-separated scan engines (default: hyperscan if installed, and stdlib)"
    )
    parser.add_argument(
        "--dir", default=None, help="scratch directory (default $BUILDLOG_BENCH_DIR or /tmp/buildlog-bench)"
    )
    parser.add_argument("--no-startup", action="store_true", help="skip the 1 MB start-up comparison")
    parser.add_argument("--no-odd", action="store_true", help="skip the long-line, NUL-byte and all-errors inputs")
    parser.add_argument("--markdown", default=None, help="also write the tables to this file")
    args = parser.parse_args(argv)

    from buildlog.scan.engines import hyperscan_available

    engines = (
        args.engines.split(",") if args.engines else (["hyperscan", "stdlib"] if hyperscan_available() else ["stdlib"])
    )
    if not shutil.which("grep") or not shutil.which("wc"):
        raise SystemExit("bench: grep and wc are needed")
    folder = scratch_dir(args.dir)
    compile_package()
    patterns, count, fallbacks = write_patterns(folder)
    lines = ["## buildlog explain vs grep -E -c vs wc -l", "", *environment(engines, count, fallbacks)]
    lines += bench_sizes(folder, [s for s in args.sizes.split(",") if s], engines, args.repeat, patterns)
    if not args.no_odd:
        lines += bench_odd_inputs(folder, engines, args.repeat, patterns)
    if not args.no_startup:
        lines += bench_startup(folder, engines, args.repeat)
    text = "\n".join(lines)
    print(text)
    if args.markdown:
        Path(args.markdown).write_text(text, "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
