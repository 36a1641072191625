"""Reads a log as binary chunks that end on a line break, whatever the source.

Binary reading keeps line numbers honest: text mode would split on a bare carriage return
(progress bars) and the numbers would drift from what an editor shows.
"""

from __future__ import annotations

import io
import os
import re
import sys
import urllib.parse
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import BinaryIO

from buildlog.errors import BuildlogError
from buildlog.ingest.archives import DECOMPRESS_ERRORS, MAGIC_LENGTH, decompress, kind_of, zip_members, zstd_errors

CHUNK_SIZE = 4 * 1024 * 1024
URL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://")


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
    """Open one log: a path or `-` for stdin, plain or compressed (.gz, .xz, .bz2, .zst, by magic bytes).

    A zip archive holding a single log is that log; one holding several is an error that says to
    use `open_sources`, which the commands that read many logs call.
    """
    sources = open_sources(path)
    if len(sources) > 1:
        names = ", ".join(s.name for s in sources[:3]) + (", ..." if len(sources) > 3 else "")
        raise BuildlogError(f"{printable(path)} is an archive of {len(sources)} logs ({names}); give one log")
    return sources[0]


def open_sources(path: str) -> list[Source]:
    """The logs a path holds: one for a file (plain or compressed), every log file of a zip archive."""
    if path == "-":
        stdin = getattr(sys.stdin, "buffer", None)
        if stdin is None or stdin.closed:
            raise BuildlogError("standard input is closed: give a log file, or pipe a log into `-`")
        return sources_of(Source("<stdin>", None, stdin))
    name = printable(path)
    try:
        if os.path.isdir(path):
            raise BuildlogError(f"{name} is a directory; give the path of a log file")
        raw = open(path, "rb")  # noqa: SIM115 - the caller closes it via Source.stream
    except FileNotFoundError:
        if URL.match(path):
            shown = shown_url(path)
            raise BuildlogError(
                f"{shown} is a URL: `buildlog explain --url` downloads one; here, save the log first "
                f"(curl -fL -o build.log '{shown}' with your credentials, or for a GitHub Actions run: "
                "gh run view RUN_ID --log-failed > build.log)"
            ) from None
        raise BuildlogError(f"{name}: no such file") from None
    except (OSError, ValueError) as exc:  # ValueError: a NUL in the name
        raise BuildlogError(f"{name}: cannot read ({getattr(exc, 'strerror', None) or exc})") from None
    return sources_of(Source(name, _size_of(raw), raw))


def printable(path: str) -> str:
    """A file name as text that any output can carry: bytes that are not UTF-8 become U+FFFD."""
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _size_of(stream: BinaryIO) -> int | None:
    try:
        return os.fstat(stream.fileno()).st_size
    except (OSError, io.UnsupportedOperation):
        return None


def sources_of(source: Source) -> list[Source]:
    """The logs an opened stream holds: itself, decompressed, or each log of a zip archive."""
    stream = source.stream
    kind = kind_of(_peek(stream, MAGIC_LENGTH))
    if kind is None:
        return [source]
    if kind == "zip":
        return [
            _decompressed(Source(f"{source.name}:{m.name}", None, m.open())) for m in zip_members(stream, source.name)
        ]
    return [Source(source.name, None, decompress(kind, stream), disk=stream)]


def _decompressed(source: Source) -> Source:
    kind = kind_of(_peek(source.stream, MAGIC_LENGTH))
    if kind is None or kind == "zip":
        return source
    return Source(source.name, None, decompress(kind, source.stream))


def _peek(stream: BinaryIO, n: int) -> bytes:
    if not hasattr(stream, "peek"):
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
        # A buffered read returns less than asked only at the end of the input. Reading on would
        # wait for a second end on a terminal (Ctrl-D once is enough).
        ended = len(block) < size
        if not ended and not block.endswith(b"\n"):
            room = -_unfinished(block, open_length) % max_line
            if room:
                block += _read(stream.readline, room)
        open_length = 0 if block.endswith(b"\n") else _unfinished(block, open_length)
        yield block
        if ended:
            return


def _unfinished(block: bytes, before: int) -> int:
    """Length so far of the line a block ends inside, `before` being what earlier blocks held of it."""
    start = block.rfind(b"\n") + 1
    return len(block) - start + (before if start == 0 else 0)


def _read(method: Callable[[int], bytes], size: int) -> bytes:
    try:
        return method(size)
    except (OSError, EOFError, zlib.error, *DECOMPRESS_ERRORS, *zstd_errors()) as exc:
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


def shown_url(url: str) -> str:
    """The URL without what could be a secret: user and password, query values, the fragment."""
    try:
        parts = urllib.parse.urlsplit(url)
        where = netloc(parts)
    except ValueError:
        return "<a URL that cannot be read>"
    user = "***@" if parts.username is not None or parts.password is not None else ""
    query = "&".join(
        f"{key}=***" if value else key for key, value in urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
    )
    return f"{parts.scheme}://{user}{where}{parts.path}" + (f"?{query}" if query else "")


def netloc(parts: urllib.parse.SplitResult) -> str:
    """HOST[:PORT] of a URL, without user or password (an IPv6 host in brackets); ValueError: a bad port."""
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    return host + (f":{parts.port}" if parts.port else "")
