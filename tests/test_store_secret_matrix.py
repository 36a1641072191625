"""The seeded matrix: every kind of secret, in nine places of a failing build log, never reaches
anything buildlog writes (the reports, facts, seen-before, the store's messages, listings, shows,
its log, an export, the SQLite file and its dump).

Kinds are batched a few to a log, each kind in every place, so the whole matrix is a few dozen
runs through the command line in process (CliRunner). A second test shows the matrix can fail:
with the mask switched off, the seeded secrets do reach those outputs.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from buildlog.cli import main
from tests.secret_samples import KEY_BLOCK, SAMPLE_SECRET, SAMPLES, SECRET_MARKERS

BATCH = 13
PLACES = (
    "failing command", "env assignment", "evidence line", "traceback line", "log tail", "after the error",
    "split by ANSI codes", "UTF-16 log", "stated fact",
)  # fmt: skip


def _split(line: str, secret: str) -> str:
    half = len(secret) // 2
    return line.replace(secret, f"{secret[:half]}\x1b[31m{secret[half:]}\x1b[0m", 1)


def seeded_log(kinds: list[tuple[str, str]], key_block: bool = False) -> str:
    """A failed apex metadata build with each kind's line in eight places (the ninth is UTF-16)."""
    lines = [s.strip() for _, s in kinds]
    out = [f"export BUILD_NOTE_{i}='{line}'" for i, line in enumerate(lines)]  # env assignments
    out.append("GPU models and configuration: GPU 0: NVIDIA H100 80GB HBM3 " + lines[0])  # a stated fact
    out += [f"TORCH_CUDA_ARCH_LIST: 9.0 {line}" for line in lines]
    if key_block:
        out += KEY_BLOCK.splitlines()
    # the failing command holds them all
    out.append("(apexenv) user@box:~/apex$ pip install -v --no-build-isolation ./ " + " ; ".join(lines))
    out += [
        "Using pip 23.3.1 from /home/user/apexenv/lib/python3.11/site-packages/pip (python 3.11)",
        "Processing /home/user/apex",
        "  Running command Preparing metadata (pyproject.toml)",
        "  Traceback (most recent call last):",
    ]
    for line in lines:  # traceback lines
        out += ['    File "<string>", line 5, in <module>', f"      {line}"]
    out += [f"  ModuleNotFoundError: No module named 'packaging' {line}" for line in lines]  # evidence
    out += [f"  {line}" for line in lines]  # after the error
    out += [_split(s, SAMPLE_SECRET[k]) for k, s in kinds]  # split by colour codes
    out += [
        "  error: subprocess-exited-with-error",
        "  × Preparing metadata (pyproject.toml) did not run successfully.",
        "  │ exit code: 1",
        "error: metadata-generation-failed",
    ]
    out += lines  # the log's tail
    return "\n".join(out) + "\n"


BATCHES = [SAMPLES[i : i + BATCH] for i in range(0, len(SAMPLES), BATCH)]


def _leaks(where: str, text: str | bytes) -> list[str]:
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace") + text.decode("utf-16-le", "replace")
    return [f"{where}: {marker[:12]}…" for marker in SECRET_MARKERS if marker in text]


class Matrix:
    def __init__(self, tmp: Path) -> None:
        self.tmp, self.runner = tmp, CliRunner()
        self.store = tmp / "store" / "store.sqlite"
        self.leaks: list[str] = []
        self.checked = 0

    def run(self, where: str, *args: str, input: bytes | None = None) -> str:
        result = self.runner.invoke(main, [*args], input=input, catch_exceptions=False)
        assert result.exit_code in (0, 1), f"{where}: exit {result.exit_code}: {result.output[-500:]}"
        self.check(where, result.output)
        return result.output

    def check(self, where: str, text: str | bytes) -> None:
        self.checked += 1
        self.leaks += _leaks(where, text)


def _walk(
    tmp: Path, batches: list[list[tuple[str, str]]] = BATCHES, store: str | None = None, dump: Any = None
) -> Matrix:
    """Every output for every seeded log; `store` (a URL) and `dump` (its tables as text) for another backend."""
    m = Matrix(tmp)
    st = ("--store", store or str(m.store))
    logs = []
    for n, kinds in enumerate(batches):
        text = seeded_log(kinds, key_block=n == 0)
        utf8 = tmp / f"seeded-{n}.log"
        utf8.write_text(text, "utf-8")
        utf16 = tmp / f"seeded-{n}-utf16.log"
        utf16.write_bytes(text.encode("utf-16"))  # with its BOM
        logs += [utf8, utf16]
    for log in logs:
        name = log.name
        if dump is None:  # what does not touch the store is walked once, on the default backend
            for fmt in ("terminal", "markdown", "json"):
                m.run(f"{name} explain {fmt}", "explain", str(log), "-f", fmt, *st)
            m.run(f"{name} stdin json", "explain", "-", "-f", "json", *st, input=log.read_bytes())
            m.run(f"{name} facts", "facts", str(log))
            m.run(f"{name} facts json", "facts", str(log), "-f", "json")
        m.run(f"{name} corpus add", "corpus", "add", str(log), "--fix", "pip install packaging", *st)
        m.run(f"{name} seen-before json", "explain", str(log), "-f", "json", *st)
        m.run(f"{name} similar", "similar", str(log), *st)
        if dump is None:
            m.run(f"{name} seen-before", "explain", str(log), *st)
            m.run(f"{name} similar json", "similar", str(log), "-f", "json", *st)
    for fmt in ("table", "json"):
        m.run(f"corpus list {fmt}", "corpus", "list", "-f", fmt, *st)
        m.run(f"corpus search {fmt}", "corpus", "search", "packaging", "-f", fmt, *st)
        m.run(f"corpus stats {fmt}", "corpus", "stats", "-f", fmt, *st)
    rows = json.loads(m.run("ids", "corpus", "list", "-f", "json", *st))
    assert rows, "nothing was stored"
    for row in rows:
        m.run(f"show {row['id']}", "corpus", "show", str(row["id"]), *st)
        m.run(f"show {row['id']} json", "corpus", "show", str(row["id"]), "-f", "json", *st)
        m.run(f"show {row['id']} --log", "corpus", "show", str(row["id"]), "--log", *st)
    exported = tmp / "exported"
    m.run("export", "corpus", "export", str(exported), *st)
    files = sorted(exported.iterdir())
    assert files
    for path in files:
        m.check(f"export {path.name}", path.read_bytes())
    if dump is not None:
        m.check("database dump", dump(store))
        return m
    for path in sorted(m.store.parent.iterdir()):  # the file, its WAL and shared memory
        m.check(f"sqlite {path.name}", path.read_bytes())
    with sqlite3.connect(m.store) as conn:
        m.check("sqlite dump", "\n".join(conn.iterdump()))
    return m


def test_no_seeded_secret_reaches_any_output_or_the_store(tmp_path):
    assert len(SAMPLES) >= 37 and len(PLACES) == 9
    m = _walk(tmp_path)
    assert m.checked > 100
    assert m.leaks == [], f"{len(m.leaks)} of {m.checked} outputs leaked:\n" + "\n".join(m.leaks[:40])


def test_the_matrix_fails_when_nothing_is_masked(tmp_path, monkeypatch):
    """The same walk without the mask finds the secrets: the places do reach the outputs."""
    from buildlog.knowledge.bundle import Knowledge

    monkeypatch.setattr(Knowledge, "mask", lambda self, paths=False: lambda text: text)
    m = _walk(tmp_path, BATCHES[:1])
    places = {leak.split(":")[0].split(" ", 1)[-1] for leak in m.leaks}
    for where in ("explain terminal", "explain markdown", "stdin json", "facts", "seen-before", "1 --log", "dump"):
        assert where in places, f"{where} showed no secret even unmasked: {sorted(places)}"
    assert any(leak.startswith("export") for leak in m.leaks)


@pytest.mark.parametrize("kind", [k for k, _ in SAMPLES[:3]])
def test_the_seeded_log_holds_each_secret_in_every_place(kind):
    text = seeded_log([(k, s) for k, s in SAMPLES if k == kind])
    assert text.count(SAMPLE_SECRET[kind]) >= 7
