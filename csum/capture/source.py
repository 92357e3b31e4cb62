"""Open a capture for reading: a path or ``-`` (standard input), decompressed by its magic bytes.

gzip (``1f 8b``), bzip2 (``BZh``), xz (``fd 37 7a 58 5a 00``) and zstd
(``28 b5 2f fd``, through the optional ``zstandard`` package: the ``[zstd]``
extra) are recognised from the first bytes, never from the name, so a
compressed stream on standard input works too; concatenated members and frames
are read as one stream. ``scheme://`` names (``s3://``, ``http://``, ``file://`` ...)
are opened with fsspec (the ``[dask]`` extra). :class:`Source` counts the raw bytes read, so a progress
bar can show how far through the file it is. Corrupt compressed data raises
:class:`CsumValueError` (code ``bad-compression``); compressed data that simply
stops early reads as the end of the stream and sets ``ended_early`` on the
stream, which :class:`csum.pcap.Reader` reports.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import re
import stat
import sys
import zlib
from typing import BinaryIO, Protocol

from ..errors import Code, CsumValueError

__all__ = ["COMPRESSIONS", "Source", "open_source"]

#: Magic bytes -> compression name.
COMPRESSIONS = {b"\x1f\x8b": "gzip", b"BZh": "bzip2", b"\xfd7zXZ\x00": "xz", b"\x28\xb5\x2f\xfd": "zstd"}
_BUFFER = 1 << 20
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+://")


class _Counted(io.RawIOBase):
    """A raw reader over ``f`` that first replays ``head`` and counts every byte it hands out."""

    def __init__(self, f: BinaryIO, head: bytes) -> None:
        self._f, self._head, self.count = f, head, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        if self._head:
            n = min(len(buffer), len(self._head))
            buffer[:n], self._head = self._head[:n], self._head[n:]
        else:
            n = self._f.readinto(buffer)  # type: ignore[attr-defined]
            n = n or 0
        self.count += n
        return n


class _Reader1(Protocol):
    """A decompressing reader (GzipFile, BZ2File, LZMAFile, zstandard's stream reader): what _Decompressed calls."""

    def read1(self, size: int = ..., /) -> bytes: ...


class _Decompressed(io.RawIOBase):
    """Decompressed bytes of ``inner``, with its errors turned into one-line CsumValueErrors."""

    def __init__(self, inner: _Reader1, kind: str, errors: tuple[type[BaseException], ...]) -> None:
        self._inner, self.kind, self._errors = inner, kind, errors
        self.ended_early = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        if self.ended_early:
            return 0
        try:
            data = self._inner.read1(len(buffer))  # read() would drop what it has when the data stops early
        except EOFError:
            self.ended_early = True
            return 0
        except self._errors as exc:
            raise CsumValueError(f"the {self.kind} data is corrupt: {exc}", code=Code.BAD_COMPRESSION) from None
        buffer[: len(data)] = data
        return len(data)


def _decompressor(kind: str, raw: BinaryIO) -> _Decompressed:
    if kind == "gzip":
        return _Decompressed(gzip.GzipFile(fileobj=raw, mode="rb"), kind, (OSError, zlib.error))
    if kind == "bzip2":
        return _Decompressed(bz2.BZ2File(raw), kind, (OSError, ValueError))
    if kind == "xz":
        return _Decompressed(lzma.LZMAFile(raw), kind, (lzma.LZMAError, OSError))
    try:
        import zstandard
    except ImportError:
        raise CsumValueError("the input is zstd-compressed; reading it needs the zstandard package "
                             "(pip install 'linux-csum[zstd]')", code=Code.MISSING_ZSTD) from None
    reader = zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True, closefd=False)
    return _Decompressed(reader, kind, (zstandard.ZstdError, OSError))


class Source:
    """An open capture: ``stream`` gives its (decompressed) bytes; use as a context manager."""

    def __init__(self, name: str, raw: BinaryIO, size: int | None, *, owned: bool = True) -> None:
        self.name, self._owned = name, owned
        #: Size in bytes of the file as stored (None for pipes and terminals).
        self.size = size
        head = b""
        while len(head) < 6:
            more = raw.read(6 - len(head))
            if not more:
                break
            head += more
        self._raw = raw
        self._counted = _Counted(raw, head)
        buffered = io.BufferedReader(self._counted, _BUFFER)
        #: Compression found by magic bytes, or None.
        self.compression = next((kind for magic, kind in COMPRESSIONS.items() if head.startswith(magic)), None)
        stream = io.BufferedReader(_decompressor(self.compression, buffered), _BUFFER) if self.compression else buffered
        self.stream: BinaryIO = stream

    def fileno(self) -> int | None:
        """The stored file's descriptor, for ``os.pread``, when it is an uncompressed regular file opened by name
        (else None; standard input may not start at the file's first byte)."""
        if self.compression is not None or not self.size or not self._owned:
            return None
        try:
            return self._raw.fileno()
        except (AttributeError, OSError, io.UnsupportedOperation):
            return None  # fsspec files have no descriptor

    def consumed(self) -> int:
        """Bytes of the stored file read so far."""
        return self._counted.count

    def close(self) -> None:
        if self._owned:
            self._raw.close()

    def __enter__(self) -> Source:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_source(name: str) -> Source:
    """Open the capture ``name`` (``-`` for standard input); OSError propagates."""
    if name == "-":
        raw = sys.stdin.buffer.raw if hasattr(sys.stdin.buffer, "raw") else sys.stdin.buffer
        info = os.fstat(raw.fileno())
        return Source("stdin", raw, info.st_size if stat.S_ISREG(info.st_mode) else None, owned=False)
    if _URL.match(name):
        try:
            import fsspec
        except ImportError:
            raise CsumValueError(f"{name} is a URL; reading it needs fsspec (pip install 'linux-csum[dask]')",
                                 code=Code.MISSING_FSSPEC) from None
        remote = fsspec.open(name, "rb").open()
        return Source(name, remote, getattr(remote, "size", None))
    raw = open(name, "rb", buffering=0)  # a directory raises IsADirectoryError here
    try:
        info = os.fstat(raw.fileno())
        return Source(name, raw, info.st_size if stat.S_ISREG(info.st_mode) else None)
    except BaseException:
        raw.close()
        raise
