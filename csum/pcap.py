"""Read pcap and pcapng captures far enough to find every packet; write patched copies atomically.

Formats (draft-ietf-opsawg-pcap, draft-ietf-opsawg-pcapng):

* pcap: either byte order, microsecond (``a1b2c3d4``) or nanosecond
  (``a1b23c4d``) timestamps; one link type per file.
* pcapng: any number of sections, each in its own byte order; Interface
  Description Blocks give each interface's link type and snap length; packets
  come from Enhanced (6), Simple (3) and the obsolete Packet (2) blocks; every
  other block is skipped here and kept byte for byte by :func:`patched`.

A :class:`Capture` keeps the whole file and, per packet, where its captured
bytes start in the file, how many were captured, the original length and the
link type. Nothing is decoded or re-encoded: a copy with some bytes changed
(:func:`patched`, e.g. corrected checksums) differs from the original in those
bytes only, so timestamps, options and unknown blocks survive untouched.
Malformed files raise :class:`CsumValueError` whose message says where.
"""

from __future__ import annotations

import os
import struct
import tempfile
from array import array
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .errors import CsumValueError

__all__ = [
    "LINKTYPE_ETHERNET", "LINKTYPE_IPV4", "LINKTYPE_IPV6", "LINKTYPE_LINUX_SLL", "LINKTYPE_LINUX_SLL2",
    "LINKTYPE_RAW", "Capture", "parse", "patched", "read", "write_atomic",
]

#: Link types (tcpdump.org/linktypes.html) whose packets csum can find IP in.
LINKTYPE_ETHERNET = 1
LINKTYPE_RAW = 101
LINKTYPE_LINUX_SLL = 113
LINKTYPE_IPV4 = 228
LINKTYPE_IPV6 = 229
LINKTYPE_LINUX_SLL2 = 276

_PCAP_MAGICS = {0xA1B2C3D4: "us", 0xA1B23C4D: "ns"}
_SHB, _IDB, _PB, _SPB, _EPB = 0x0A0D0D0A, 1, 2, 3, 6
_BYTE_ORDER_MAGIC = 0x1A2B3C4D

#: Called now and then while reading: (bytes read so far, file size).
Progress = Callable[[int, int], None]


@dataclass(frozen=True, eq=False)
class Capture:
    """A capture file's bytes and, per packet, where it lies in them.

    ``offsets[i]``: file offset of packet i's first captured byte;
    ``caplens[i]`` / ``origlens[i]``: captured and original length (the packet
    was cut by the snap length when ``caplens[i] < origlens[i]``);
    ``linktypes[i]``: its link type. ``format`` is "pcap" or "pcapng".
    """

    data: bytes
    format: str
    offsets: np.ndarray
    caplens: np.ndarray
    origlens: np.ndarray
    linktypes: np.ndarray
    first_index: int = 0  # the global 0-based number of this Capture's packet 0 (chunks of a stream)
    base: int = 0  # the file offset of data[0]

    def __len__(self) -> int:
        return len(self.offsets)

    def packet(self, index: int) -> memoryview:
        """The captured bytes of packet ``index``."""
        start = int(self.offsets[index])
        return memoryview(self.data)[start : start + int(self.caplens[index])]

    def is_cut(self, index: int) -> bool:
        """Whether packet ``index`` was captured only in part (snap length)."""
        return bool(self.caplens[index] < self.origlens[index])


def _bad(what: str, code: str) -> CsumValueError:
    return CsumValueError(what, code=code)


def _columns(data: bytes, fmt: str, offs: array, caps: array, origs: array, links: array | int) -> Capture:
    def column(values: array) -> np.ndarray:
        return np.frombuffer(values, dtype=np.int64) if len(values) else np.zeros(0, dtype=np.int64)

    link = np.full(len(offs), links, dtype=np.int64) if isinstance(links, int) else column(links)
    return Capture(data, fmt, column(offs), column(caps), column(origs), link)


def _parse_pcap(data: bytes, endian: str, progress: Progress | None) -> Capture:
    if len(data) < 24:
        raise _bad(f"pcap file header needs 24 bytes, file has {len(data)}", "truncated")
    linktype = struct.unpack_from(endian + "I", data, 20)[0] & 0xFFFF
    record = struct.Struct(endian + "8xII").unpack_from
    offs, caps, origs = array("q"), array("q"), array("q")
    pos, size, index = 24, len(data), 0
    while pos < size:
        if pos + 16 > size:
            raise _bad(f"record {index} at offset {pos}: header truncated ({size - pos} of 16 bytes)", "truncated")
        incl, orig = record(data, pos)
        if pos + 16 + incl > size:
            raise _bad(f"record {index} at offset {pos}: {incl} captured bytes announced, "
                       f"{size - pos - 16} left in the file", "truncated")
        offs.append(pos + 16)
        caps.append(incl)
        origs.append(orig)
        pos += 16 + incl
        index += 1
        if progress is not None and not index & 0xFFFF:
            progress(pos, size)
    return _columns(data, "pcap", offs, caps, origs, linktype)


def _parse_pcapng(data: bytes, progress: Progress | None) -> Capture:
    offs, caps, origs, links = array("q"), array("q"), array("q"), array("q")
    interfaces: list[tuple[int, int]] = []  # (link type, snap length) of the current section
    endian, pos, size, blocks = "<", 0, len(data), 0
    while pos < size:
        if pos + 12 > size:
            raise _bad(f"block at offset {pos}: truncated ({size - pos} bytes left, a block needs 12)", "truncated")
        if int.from_bytes(data[pos : pos + 4], "little") == _SHB:
            magic = data[pos + 8 : pos + 12]
            if magic not in (b"\x4d\x3c\x2b\x1a", b"\x1a\x2b\x3c\x4d"):
                raise _bad(f"section header at offset {pos}: bad byte-order magic {magic.hex()}", "bad-block")
            endian, interfaces = ("<" if magic[0] == 0x4D else ">"), []
        kind, length = struct.unpack_from(endian + "II", data, pos)
        if length < 12 or length % 4:
            raise _bad(f"block at offset {pos}: total length {length} is not a multiple of 4 of at least 12",
                       "bad-block")
        if pos + length > size:
            raise _bad(f"block at offset {pos}: {length} bytes announced, {size - pos} left in the file", "truncated")
        if struct.unpack_from(endian + "I", data, pos + length - 4)[0] != length:
            raise _bad(f"block at offset {pos}: trailing length differs from leading length {length}", "bad-block")
        if kind == _IDB:
            if length < 20:
                raise _bad(f"interface description block at offset {pos} is too short", "bad-block")
            link, snap = struct.unpack_from(endian + "H2xI", data, pos + 8)
            interfaces.append((link, snap))
        elif kind in (_EPB, _PB, _SPB):
            head = 16 if kind == _SPB else 32
            if length < head:
                raise _bad(f"packet block at offset {pos} is too short ({length} bytes)", "bad-block")
            if kind == _SPB:
                iface, orig = 0, struct.unpack_from(endian + "I", data, pos + 8)[0]
                snap = interfaces[0][1] if interfaces else 0
                cap = min(orig, snap or orig, length - 16)
                start = pos + 12
            else:
                fmt = endian + ("I8xII" if kind == _EPB else "H10xII")
                iface, cap, orig = struct.unpack_from(fmt, data, pos + 8)
                start = pos + 28
                if start + cap > pos + length - 4:
                    raise _bad(f"packet block at offset {pos}: {cap} captured bytes overrun the block", "bad-block")
            if iface >= len(interfaces):
                raise _bad(f"packet block at offset {pos} names interface {iface}, "
                           f"the section has {len(interfaces)}", "bad-block")
            offs.append(start)
            caps.append(cap)
            origs.append(orig)
            links.append(interfaces[iface][0])
        pos += length
        blocks += 1
        if progress is not None and not blocks & 0xFFFF:
            progress(pos, size)
    return _columns(data, "pcapng", offs, caps, origs, links)


def parse(data: bytes, progress: Progress | None = None) -> Capture:
    """Index the packets of a pcap or pcapng file held in ``data``.

    Raises :class:`CsumValueError` (code ``not-a-capture``, ``truncated`` or
    ``bad-block``) naming the offset of the first problem.
    """
    data = bytes(data)
    if len(data) < 4:
        raise _bad(f"not a pcap or pcapng capture: {len(data)} bytes", "not-a-capture")
    if int.from_bytes(data[:4], "little") == _SHB:
        return _parse_pcapng(data, progress)
    for endian, order in (("<", "little"), (">", "big")):
        if int.from_bytes(data[:4], order) in _PCAP_MAGICS:
            return _parse_pcap(data, endian, progress)
    raise _bad(f"not a pcap or pcapng capture (starts with {data[:4].hex()})", "not-a-capture")


def read(path: str | os.PathLike[str], progress: Progress | None = None) -> Capture:
    """Read and index the capture at ``path`` (see :func:`parse`); OSError propagates."""
    return parse(Path(path).read_bytes(), progress)


def patched(capture: Capture, patches: Iterable[tuple[int, bytes]]) -> bytes:
    """The capture's bytes with ``data[offset : offset + len(new)] = new`` for each (offset, new)."""
    out = bytearray(capture.data)
    for offset, new in patches:
        if offset < 0 or offset + len(new) > len(out):
            raise CsumValueError(f"patches: offset {offset} is outside the {len(out)}-byte capture", code="out-of-range")
        out[offset : offset + len(new)] = new
    return bytes(out)


def write_atomic(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same directory and ``os.replace``.

    Readers see either the old file or the complete new one, never a partial write.
    """
    target = Path(path)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
