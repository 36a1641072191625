"""Reads a log as binary chunks that end on a line break, whatever the source.

Binary reading keeps line numbers honest: text mode would split on a bare carriage return
(progress bars) and the numbers would drift from what an editor shows.
"""

from __future__ import annotations

import gzip
import io
import os
import sys
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import BinaryIO

from buildlog.errors import BuildlogError

CHUNK_SIZE = 4 * 1024 * 1024
GZIP_MAGIC = b"\x1f\x8b"


PROGRESS_MIN = 50 * 1024 * 1024  # smaller inputs are read before a bar would be worth drawing


@dataclass(frozen=True)
class Source:
    """An opened input: its display name, size when known, and the binary stream.

    For a gzip file, `size` is unknown (None) but `disk` is the file that is being decompressed,
    whose position and size still say how far the reading has got.
    """

    name: str
    size: int | None
    stream: BinaryIO
    disk: BinaryIO | None = None


def open_source(path: str) -> Source:
    """Open a path, `-` for stdin, or a gzip file (recognised by its magic bytes, not its name)."""
    if path == "-":
        stdin = getattr(sys.stdin, "buffer", None)
        if stdin is None or stdin.closed:
            raise BuildlogError("standard input is closed: give a log file, or pipe a log into `-`")
        return _maybe_gunzip(Source("<stdin>", None, stdin))
    name = printable(path)
    try:
        if os.path.isdir(path):
            raise BuildlogError(f"{name} is a directory; give the path of a log file")
        raw = open(path, "rb")  # noqa: SIM115 - the caller closes it via Source.stream
    except FileNotFoundError:
        raise BuildlogError(f"{name}: no such file") from None
    except (OSError, ValueError) as exc:  # ValueError: a NUL in the name
        raise BuildlogError(f"{name}: cannot read ({getattr(exc, 'strerror', None) or exc})") from None
    return _maybe_gunzip(Source(name, _size_of(raw), raw))


def printable(path: str) -> str:
    """A file name as text that any output can carry: bytes that are not UTF-8 become U+FFFD."""
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _size_of(stream: BinaryIO) -> int | None:
    try:
        return os.fstat(stream.fileno()).st_size
    except (OSError, io.UnsupportedOperation):
        return None


def _maybe_gunzip(source: Source) -> Source:
    stream = source.stream
    peek = _peek(stream, 2)
    if peek != GZIP_MAGIC:
        return Source(source.name, source.size, stream)
    return Source(source.name, None, gzip.GzipFile(fileobj=stream, mode="rb"), disk=stream)  # type: ignore[arg-type]


def _peek(stream: BinaryIO, n: int) -> bytes:
    if not isinstance(stream, io.BufferedReader):
        return b""
    try:
        return stream.peek(n)[:n]
    except OSError as exc:
        raise BuildlogError(f"cannot read input: {exc.strerror or exc}") from None


def iter_chunks(stream: BinaryIO, size: int = CHUNK_SIZE, max_line: int = CHUNK_SIZE) -> Iterator[bytes]:
    """Yield chunks of about `size` bytes that end just after a newline (except the last).

    Each chunk is one read finished by a readline: no buffer is joined to another or sliced
    again, which at hundreds of megabytes costs as much as the scan. Memory stays flat whatever
    the input: a line longer than `max_line` (at least `size`) is passed on in
    pieces that end at multiples of `max_line` counted from the start of the line, so where the
    cuts fall does not depend on how the input was read. A piece does not end in a newline; the
    scanner knows the line goes on.
    """
    max_line = max(max_line, size)
    open_length = 0  # bytes already passed on of a line that is not finished yet
    while True:
        block = _read(stream.read, size)
        if not block:
            return
        if not block.endswith(b"\n"):
            room = -_unfinished(block, open_length) % max_line
            if room:
                block += _read(stream.readline, room)
        open_length = 0 if block.endswith(b"\n") else _unfinished(block, open_length)
        yield block


def _unfinished(block: bytes, before: int) -> int:
    """Length so far of the line a block ends inside, `before` being what earlier blocks held of it."""
    start = block.rfind(b"\n") + 1
    return len(block) - start + (before if start == 0 else 0)


def _read(method: Callable[[int], bytes], size: int) -> bytes:
    try:
        return method(size)
    except (OSError, EOFError, gzip.BadGzipFile, zlib.error) as exc:
        raise BuildlogError(f"cannot read input: {exc}") from None


def with_progress(source: Source, chunks: Iterator[bytes]) -> Iterator[bytes]:
    """The chunks unchanged; on a terminal, a progress bar on stderr while a big input is read.

    Nothing is drawn when stderr is not a terminal (CI logs, pipes) or for inputs under 50 MB.
    """
    disk_size = _size_of(source.disk) if source.disk is not None else source.size
    if not disk_size or disk_size < PROGRESS_MIN or not sys.stderr.isatty():
        yield from chunks
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
        TransferSpeedColumn,
    )

    columns = (
        TextColumn("reading {task.description}"),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(os.path.basename(source.name), total=disk_size)
        done = 0
        for chunk in chunks:
            done = source.disk.tell() if source.disk is not None else done + len(chunk)
            bar.update(task, completed=done)
            yield chunk
