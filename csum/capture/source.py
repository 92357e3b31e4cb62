"""Open a capture for reading: a path or ``-`` (standard input), decompressed by its magic bytes.

gzip (``1f 8b``), bzip2 (``BZh``), xz (``fd 37 7a 58 5a 00``) and zstd
(``28 b5 2f fd`` or a skippable frame, through the optional ``zstandard`` package: the ``[zstd]``
extra) are recognised from the first bytes, never from the name, so a
compressed stream on standard input works too. Compressed input is read the same way for every format:
streams (members, frames) back to back are one capture, as ``zcat`` reads them, and zero bytes after the
last one are padding; a stream cut before its end ("compressed stream ends early"), corrupt data, and any
other byte after the last stream (trailing garbage) raise :class:`CsumValueError` with code
``bad-compression`` once every byte decompressed before them has been read, so :class:`csum.pcap.Reader`
can report where the capture stops. Output is bounded per read whatever the compression ratio (a
decompression bomb is read in pieces). ``scheme://`` names (``s3://``, ``http://``, ``file://`` ...)
are opened with fsspec (the ``[dask]`` extra). :class:`Source` counts the raw bytes read, so a progress
bar can show how far through the file it is.
"""

from __future__ import annotations

import bz2
import io
import lzma
import os
import re
import stat
import sys
import zlib
from collections.abc import Callable
from types import ModuleType
from typing import Any, BinaryIO

from ..errors import Code, CsumValueError

__all__ = ["COMPRESSIONS", "Source", "open_source"]

#: Magic bytes -> compression name (zstd's skippable frames, 0x184d2a50 to 0x184d2a5f little-endian, too).
COMPRESSIONS = {b"\x1f\x8b": "gzip", b"BZh": "bzip2", b"\xfd7zXZ\x00": "xz", b"\x28\xb5\x2f\xfd": "zstd",
                **{bytes([n, 0x2A, 0x4D, 0x18]): "zstd" for n in range(0x50, 0x60)}}
_BUFFER = 1 << 20
#: Compressed bytes read at a time.
_PIECE = 256 << 10
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


class _Member:
    """One compressed stream (a gzip member, a bzip2 or xz stream, a zstd frame) being decompressed by ``d``, a
    decompressor object of the format's module, fed input with :meth:`feed`."""

    def __init__(self, d: Any) -> None:
        self._d, self._in = d, b""

    @property
    def eof(self) -> bool:
        """Whether the stream has ended (every byte of it decompressed)."""
        return bool(self._d.eof)

    def feed(self, data: bytes) -> None:
        """Append compressed input."""
        self._in += data

    def step(self, limit: int) -> bytes:
        """Some decompressed bytes, at most ``limit``; empty only when more input is needed or the stream has ended.
        bzip2 and xz: the decompressor keeps the input it has not used yet."""
        data, self._in = self._in, b""
        return bytes(self._d.decompress(data, limit))

    def rest(self) -> bytes:
        """After the end of the stream: the input fed after it."""
        return bytes(self._d.unused_data)


class _Zlib(_Member):
    """A gzip member (RFC 1952; zlib checks the header, the CRC-32 and the length)."""

    def __init__(self) -> None:
        super().__init__(zlib.decompressobj(16 + zlib.MAX_WBITS))

    def step(self, limit: int) -> bytes:
        out = self._d.decompress(self._in, limit)
        self._in = self._d.unconsumed_tail
        return bytes(out)


class _Zstd(_Member):
    """A zstd frame. zstandard's decompressobj has no output limit, so it gets ``_ZSTD_PIECE`` bytes of input at a
    time: a block of 128 KiB takes at least 4 bytes (RLE), so one step gives at most 32 KiB per input byte
    (``limit`` is not kept)."""

    def __init__(self, zstandard: ModuleType) -> None:
        super().__init__(zstandard.ZstdDecompressor().decompressobj())
        self._at = 0

    def feed(self, data: bytes) -> None:
        self._in, self._at = self._in[self._at :] + data, 0

    def step(self, limit: int) -> bytes:
        while self._at < len(self._in) and not self._d.eof:
            piece = self._in[self._at : self._at + _ZSTD_PIECE]
            self._at += len(piece)
            out = self._d.decompress(piece)
            if out:
                return bytes(out)
        return b""

    def rest(self) -> bytes:
        return super().rest() + self._in[self._at :]


#: Input bytes per zstd step: at most 16 MiB of output each (see :class:`_Zstd`).
_ZSTD_PIECE = 512


def zstandard(what: str) -> ModuleType:
    """The zstandard module (the ``[zstd]`` extra), or :class:`CsumValueError` (code ``missing-zstd``) naming
    ``what`` needed it."""
    try:
        import zstandard as module
    except ImportError:
        raise CsumValueError(f"{what}; zstd needs the zstandard package (pip install 'linux-csum[zstd]')",
                             code=Code.MISSING_ZSTD) from None
    return module


def _member_factory(kind: str) -> tuple[Callable[[], _Member], tuple[type[BaseException], ...]]:
    """How to start one stream of ``kind``, and the exceptions its decompressor raises on corrupt data."""
    if kind == "gzip":
        return _Zlib, (zlib.error,)
    if kind == "bzip2":
        return lambda: _Member(bz2.BZ2Decompressor()), (OSError, ValueError)
    if kind == "xz":
        return lambda: _Member(lzma.LZMADecompressor(lzma.FORMAT_XZ)), (lzma.LZMAError,)
    module = zstandard("the input is zstd-compressed")
    return lambda: _Zstd(module), (module.ZstdError,)


class _Decompressed(io.RawIOBase):
    """The decompressed bytes of ``raw``: one stream of ``kind`` after another (as ``zcat`` reads concatenated
    files), then optional zero padding. A cut stream, corrupt data and anything else after the last stream raise
    :class:`CsumValueError` (code ``bad-compression``) once every byte decompressed before them was handed out,
    the same way for every format."""

    def __init__(self, raw: BinaryIO, kind: str) -> None:
        self._raw, self.kind = raw, kind
        self._start, self._errors = _member_factory(kind)
        self._magics = tuple(magic for magic, name in COMPRESSIONS.items() if name == kind)
        self._member: _Member | None = None
        self._left = b""  # input read past the end of the last stream
        self._out, self._at = b"", 0  # decompressed bytes not handed out yet
        self._pos = 0  # bytes of the file read so far

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        while self._at == len(self._out):
            if self._member is None and not self._begin():
                return 0
            member = self._member
            assert member is not None
            if member.eof:
                self._left, self._member = member.rest(), None
                continue
            try:
                self._out, self._at = member.step(max(len(buffer), 1)), 0
            except self._errors as exc:
                raise self._refuse(f"the {self.kind} data is corrupt (at or before byte {self._pos} of the file): "
                                   f"{exc}") from None
            if not self._out and not member.eof:
                more = self._read()
                if not more:
                    raise self._refuse(f"compressed stream ends early: the {self.kind} data stops at byte "
                                       f"{self._pos} of the file, before its end-of-stream marker")
                member.feed(more)
        n = min(len(buffer), len(self._out) - self._at)
        buffer[:n] = memoryview(self._out)[self._at : self._at + n]
        self._at += n
        return n

    def _read(self) -> bytes:
        more = self._raw.read(_PIECE)
        self._pos += len(more)
        return more

    def _begin(self) -> bool:
        """Start the next stream; False at the clean end of the input (nothing, or zeros only, after the last)."""
        data, self._left = self._left, b""
        while len(data) < 6 and (more := self._read()):  # the longest magic
            data += more
        if not data:
            return False
        if data.startswith(self._magics):
            self._member = self._start()
            self._member.feed(data)
            return True
        at = self._pos - len(data)
        while not data.strip(b"\0"):  # zero padding (tape blocks, xz stream padding): accepted to the end
            data = self._read()
            if not data:
                return False
        raise self._refuse(f"the bytes from offset {at} of the file on are not {self.kind} data (trailing "
                           f"garbage after the {self.kind} stream)")

    @staticmethod
    def _refuse(why: str) -> CsumValueError:
        return CsumValueError(why, code=Code.BAD_COMPRESSION)


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
        # compressed: the decompressor itself, unbuffered, so that an error it raises never takes with it bytes a
        # buffer had read before (io.BufferedReader drops them when its raw stream raises mid-read)
        stream = _Decompressed(buffered, self.compression) if self.compression else buffered
        self.stream: BinaryIO = stream  # type: ignore[assignment]

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
    try:
        raw = open(name, "rb", buffering=0)
    except IsADirectoryError:
        raise CsumValueError(f"{name} is a directory, not a capture file", code=Code.NOT_A_CAPTURE) from None
    try:
        info = os.fstat(raw.fileno())
        return Source(name, raw, info.st_size if stat.S_ISREG(info.st_mode) else None)
    except BaseException:
        raw.close()
        raise
