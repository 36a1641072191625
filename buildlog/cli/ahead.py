"""The first pass over a log file, run in a second process while this one loads the rest of buildlog.

Explaining a log is one pass over its bytes (firstpass) and then work on the few lines it picked.
That work needs the rules, the fact patterns and the report models loaded, which takes as long as
scanning some tens of megabytes; the pass itself needs only the scanner and the grammars. So for a
regular file on Linux, with a second core to run on, the pass starts in a forked child as soon as
the file is open and its events come back through a pipe: neither process waits for the other's
loading, and this one never loads the grammars or the scan engine at all.

The child reopens the file through /proc (its own read position), draws the progress bar, and
reports an unreadable input as the same message the pass would give here. If it dies for any
other reason, the pass simply runs here: the result never depends on which process read.
"""

from __future__ import annotations

import os
import pickle
import signal
import stat
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NoReturn

from buildlog.errors import BuildlogError
from buildlog.ingest.reader import Source, iter_chunks, with_progress
from buildlog.scan.scanner import ScanSummary

if TYPE_CHECKING:
    from buildlog.parse.events import Event
    from buildlog.pipeline import Analysis


def analyse_file(path: str, redact_paths: bool = False) -> Analysis:
    """Open and analyse a log as every command does: the first pass starts before buildlog's
    heavier modules are loaded, in a child process where that pays (see FirstPass)."""
    from buildlog.ingest.reader import open_source

    source = open_source(path)
    with source.stream:
        first = FirstPass.start(source, redact_paths)
        from buildlog.pipeline import run_events

        events, summary = first.result()
    return run_events(source.name, events, summary, redact_paths=redact_paths)


@dataclass
class FirstPass:
    """The first pass over one source: running in a child process (`pid`), or to be run here."""

    source: Source
    redact_paths: bool
    pid: int = 0
    pipe: int = -1

    @classmethod
    def start(cls, source: Source, redact_paths: bool = False, minimum: int = 1) -> FirstPass:
        """Start reading in a child process when that pays; otherwise `result` reads here.

        `minimum`: the smallest file worth a process (tests raise it to read here).
        """
        first = cls(source, redact_paths)
        if _worth_a_process(source, minimum):
            first._fork()
        return first

    def result(self) -> tuple[list[Event], ScanSummary]:
        """The events and the summary of the whole input."""
        if self.pid:
            payload = self._collect()
            if payload is not None:
                return _unpack(payload)
            self.source.stream.seek(0)
        return _first_pass(self.source, self.redact_paths)

    def _fork(self) -> None:
        """Start the child; when the system refuses a process, `result` reads here instead."""
        sys.stdout.flush()
        sys.stderr.flush()
        read_end, write_end = os.pipe()
        try:
            pid = os.fork()
        except OSError:
            os.close(read_end)
            os.close(write_end)
            return
        if pid == 0:
            os.close(read_end)
            _child(self.source, self.redact_paths, write_end)
        os.close(write_end)
        self.pid, self.pipe = pid, read_end

    def _collect(self) -> Any:
        """What the child sent; None when it died without sending it."""
        try:
            with os.fdopen(self.pipe, "rb") as pipe:
                data = pipe.read()
        except BaseException:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
            raise
        _, status = os.waitpid(self.pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            return None
        try:
            return pickle.loads(data)  # noqa: S301 - written by our own child, through our own pipe
        except Exception:  # noqa: BLE001 - a cut-off message: read here instead
            return None


def _worth_a_process(source: Source, minimum: int) -> bool:
    """A regular, uncompressed file of at least `minimum` bytes, on Linux with two cores to use.

    Pipes and gzip streams are read here: a child could not read them again from the start.
    """
    if not sys.platform.startswith("linux") or source.disk is not None or (source.size or 0) < minimum:
        return False
    try:
        if len(os.sched_getaffinity(0)) < 2:
            return False
        return stat.S_ISREG(os.fstat(source.stream.fileno()).st_mode) and source.stream.tell() == 0
    except (OSError, ValueError, AttributeError):
        return False


def _child(source: Source, redact_paths: bool, write_end: int) -> NoReturn:
    """Run the pass on a fresh descriptor of the same file, send the outcome, and leave at once."""
    code = 1
    try:
        with open(f"/proc/self/fd/{source.stream.fileno()}", "rb") as stream:
            own = Source(source.name, source.size, stream)
            try:
                events, summary = _first_pass(own, redact_paths)
                payload: tuple = ("events", events, summary.lines, summary.bytes, list(summary.tail), summary.skipped)
            except BuildlogError as exc:
                payload = ("error", str(exc))
        with os.fdopen(write_end, "wb") as out:
            pickle.dump(payload, out, protocol=pickle.HIGHEST_PROTOCOL)
        code = 0
    finally:
        try:
            sys.stderr.flush()  # the progress bar's last words
        finally:
            os._exit(code)  # never return into the parent's code, never run its exit handlers


def _first_pass(source: Source, redact_paths: bool) -> tuple[list[Event], ScanSummary]:
    from buildlog.firstpass import parse_events

    summary = ScanSummary()
    events = parse_events(with_progress(source, iter_chunks(source.stream)), summary, redact_paths)
    return events, summary


def _unpack(payload: tuple) -> tuple[list[Event], ScanSummary]:
    if payload[0] == "error":
        raise BuildlogError(payload[1])
    _, events, lines, size, tail, skipped = payload
    summary = ScanSummary()
    summary.lines, summary.bytes, summary.skipped = lines, size, skipped
    summary.tail.extend(tail)
    return events, summary
