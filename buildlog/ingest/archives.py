"""Compressed logs and archives of logs, recognised by their first bytes, never by their names.

A CI system hands out logs packed: GitHub Actions' "Download log archive" is a .zip with one text
file per step, others keep logs as .gz, .xz, .bz2 or .zst. Each is opened as a stream of the log's
own bytes, so line numbers are those of the log inside.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from typing import BinaryIO

from buildlog.errors import BuildlogError

GZIP = b"\x1f\x8b"
XZ = b"\xfd7zXZ\x00"
BZIP2 = b"BZh"
ZSTD = b"\x28\xb5\x2f\xfd"
ZIP = (b"PK\x03\x04", b"PK\x05\x06")  # a local file header; an empty archive's end record
MAGIC_LENGTH = 6

# Errors the decompressors raise on damaged input, read as "cannot read input".
DECOMPRESS_ERRORS: tuple[type[BaseException], ...] = (gzip.BadGzipFile, lzma.LZMAError, zipfile.BadZipFile)

ZIP_IN_MEMORY_LIMIT = 1 << 30  # a zip from a pipe is read whole (zip needs to seek): at most 1 GiB
LOOKS_BINARY = 8192  # a member whose first bytes hold a NUL is not a log


def kind_of(head: bytes) -> str | None:
    """`gzip`, `xz`, `bzip2`, `zstd`, `zip`, or None for anything else (plain text)."""
    if head.startswith(GZIP):
        return "gzip"
    if head.startswith(XZ):
        return "xz"
    if head.startswith(BZIP2) and len(head) > 3 and head[3:4].isdigit():
        return "bzip2"
    if head.startswith(ZSTD):
        return "zstd"
    if head.startswith(ZIP):
        return "zip"
    return None


def decompress(kind: str, stream: BinaryIO) -> BinaryIO:
    """A stream of the decompressed bytes of a gzip, xz, bzip2 or zstd stream."""
    if kind == "gzip":
        return gzip.GzipFile(fileobj=stream, mode="rb")  # type: ignore[return-value]
    if kind == "xz":
        return lzma.LZMAFile(stream, mode="rb")  # type: ignore[return-value]
    if kind == "bzip2":
        return bz2.BZ2File(stream, mode="rb")  # type: ignore[return-value]
    if kind == "zstd":
        try:
            import zstandard
        except ImportError:  # pragma: no cover - zstandard is a dependency; a broken install still gets a message
            raise BuildlogError(
                "this log is zstd-compressed and the zstandard package is missing: pip install zstandard"
            ) from None
        reader = zstandard.ZstdDecompressor().stream_reader(stream, read_across_frames=True)
        return io.BufferedReader(reader)  # type: ignore[arg-type]
    raise ValueError(kind)


def zstd_errors() -> tuple[type[BaseException], ...]:
    try:
        import zstandard
    except ImportError:  # pragma: no cover
        return ()
    return (zstandard.ZstdError,)


@dataclass(frozen=True)
class Member:
    """One log inside an archive: its name there, and how to open it."""

    name: str
    open: Callable[[], BinaryIO]


def zip_members(stream: BinaryIO, name: str) -> list[Member]:
    """The log files of a zip archive, in the archive's order (folders and binary files left out).

    GitHub Actions archives hold a file per step under a folder per job (`build/3_Run pip
    install.txt`) besides one whole-job file at the top; every one of them is a log.
    """
    if not stream.seekable():
        data = stream.read(ZIP_IN_MEMORY_LIMIT + 1)
        if len(data) > ZIP_IN_MEMORY_LIMIT:
            raise BuildlogError(f"{name}: a zip archive over 1 GiB cannot be read from a pipe; save it to a file first")
        stream = io.BytesIO(data)
    try:
        archive = zipfile.ZipFile(stream)
        infos = [i for i in archive.infolist() if not i.is_dir() and not _is_noise(i.filename)]
        members = [Member(i.filename, _opener(archive, i)) for i in infos if _is_text(archive, i)]
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, RuntimeError, OSError) as exc:
        raise BuildlogError(f"{name}: cannot read the zip archive ({exc})") from None
    if not members:
        raise BuildlogError(f"{name}: the zip archive holds no log file")
    return members


def _is_noise(filename: str) -> bool:
    return filename.startswith("__MACOSX/") or filename.rsplit("/", 1)[-1].startswith("._")


def _opener(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> Callable[[], BinaryIO]:
    return lambda: archive.open(info)  # type: ignore[return-value]


def _is_text(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> bool:
    with archive.open(info) as member:
        head = member.read(LOOKS_BINARY)
    kind = kind_of(head[:MAGIC_LENGTH])
    if kind == "zip":
        return False  # an archive in an archive: not opened
    return kind is not None or b"\x00" not in head
