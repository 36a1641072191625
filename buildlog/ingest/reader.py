"""Reads a log as binary chunks that end on a line break, whatever the source.

Binary reading keeps line numbers honest: text mode would split on a bare carriage return
(progress bars) and the numbers would drift from what an editor shows.
"""

from __future__ import annotations

import gzip
import io
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

from buildlog.errors import BuildlogError

CHUNK_SIZE = 4 * 1024 * 1024
GZIP_MAGIC = b"\x1f\x8b"


@dataclass(frozen=True)
class Source:
    """An opened input: its display name, size when known, and the binary stream."""

    name: str
    size: int | None
    stream: BinaryIO


def open_source(path: str) -> Source:
    """Open a path, `-` for stdin, or a gzip file (recognised by its magic bytes, not its name)."""
    if path == "-":
        return _maybe_gunzip(Source("<stdin>", None, sys.stdin.buffer))
    if os.path.isdir(path):
        raise BuildlogError(f"{path} is a directory; give the path of a log file")
    try:
        raw = open(path, "rb")  # noqa: SIM115 - the caller closes it via Source.stream
    except FileNotFoundError:
        raise BuildlogError(f"{path}: no such file") from None
    except OSError as exc:
        raise BuildlogError(f"{path}: cannot read ({exc.strerror or exc})") from None
    return _maybe_gunzip(Source(path, _size_of(raw), raw))


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
    return Source(source.name, None, gzip.GzipFile(fileobj=stream, mode="rb"))  # type: ignore[arg-type]


def _peek(stream: BinaryIO, n: int) -> bytes:
    if not isinstance(stream, io.BufferedReader):
        return b""
    return stream.peek(n)[:n]


def iter_chunks(stream: BinaryIO, size: int = CHUNK_SIZE, max_line: int = 16 * CHUNK_SIZE) -> Iterator[bytes]:
    """Yield chunks that end just after a newline (except the last).

    A line longer than `max_line` is passed on in pieces so that memory stays flat on a file with
    no newline at all; the scanner treats the pieces as one line because none ends in a newline.
    """
    carry = b""
    while True:
        try:
            block = stream.read(size)
        except (OSError, EOFError, gzip.BadGzipFile) as exc:
            raise BuildlogError(f"cannot read input: {exc}") from None
        if not block:
            break
        data = carry + block if carry else block
        cut = data.rfind(b"\n") + 1
        if cut == 0 and len(data) < max_line:
            carry = data
            continue
        if cut == 0:
            cut = len(data)
        yield data[:cut]
        carry = data[cut:]
    if carry:
        yield carry
