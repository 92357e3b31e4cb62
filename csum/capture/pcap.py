"""Read pcap and pcapng captures far enough to find every packet, in bounded chunks.

Formats (draft-ietf-opsawg-pcap, draft-ietf-opsawg-pcapng):

* pcap: what libpcap reads (sf-pcap.c): either byte order, microsecond (``a1b2c3d4``) or nanosecond
  (``a1b23c4d``) timestamps, or the modified format (``a1b2cd34``, 24-byte record headers); versions 2.0 to 2.4
  (and later 2.x) and DG/UX's 543.0, the captured and original lengths swapped where libpcap swaps them; a record
  longer than the snap length cut to it; one link type per file, whose upper bits may give the length of a frame
  check sequence ending each frame (left out of the packet).
* pcapng: any number of sections, each in its own byte order; Interface
  Description Blocks give each interface's link type and snap length; packets
  come from Enhanced (6), Simple (3) and the obsolete Packet (2) blocks; every
  other block is skipped here and kept byte for byte by :func:`patched`.

:class:`Reader` validates the file header before reading anything else, then
yields :class:`Capture` chunks of about ``chunk_bytes`` each, split at record
boundaries: a chunk holds the file's bytes from ``base`` on (headers and
non-packet blocks included, so the chunks laid end to end are the file) and,
per packet, where its captured bytes start in ``data``, how many were captured,
the original length and the link type. A record the file ends inside, a record
whose header makes no sense, and compressed data that is cut, corrupt or followed
by garbage (:mod:`csum.capture.source`) stop the reading; :attr:`Reader.stop` says
where and why, every record before it has been yielded, and :meth:`Reader.rest`
gives the bytes not read as records (as far as they can be read). Nothing is decoded or re-encoded: a copy with some
bytes changed (:func:`patched`) differs from the original in those bytes only.

:func:`parse` and :func:`read` index a whole capture held in memory, and raise
:class:`CsumValueError` at the first problem.
"""

from __future__ import annotations

import os
import struct
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import repeat
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, Literal, Union

from .. import engine
from ..core.inputs import as_view, check_callable, check_instance, check_list, check_path, check_uint
from ..errors import Code, CsumTypeError, CsumValueError

if TYPE_CHECKING:  # numpy only where a column is read as an array: a small capture's check never imports it
    import numpy as np

    #: A column of record values as read, int64 in any form numpy views without a copy: an ``array("q")`` (the
    #: readers'), a memoryview of format ``q``, an int64 ndarray (a list of ints is copied once).
    Column = Union[array, memoryview, np.ndarray, Sequence[int]]
    #: A column as an int64 buffer (:meth:`Capture.buffers`).
    Int64s = Union[array, memoryview, np.ndarray]

__all__ = ["CHUNK_BYTES", "LINKTYPE_ETHERNET", "LINKTYPE_IPV4", "LINKTYPE_IPV6", "LINKTYPE_LINUX_SLL",
           "LINKTYPE_LINUX_SLL2", "LINKTYPE_RAW", "MAX_RECORD", "NO_TIME", "Capture", "Reader", "Span", "Stop",
           "parse", "patched", "read", "to_bytes"]

#: Link types (tcpdump.org/linktypes.html) whose packets csum can find IP in.
from ..layers.table import (LINKTYPE_ETHERNET, LINKTYPE_IPV4, LINKTYPE_IPV6, LINKTYPE_LINUX_SLL,  # noqa: E402
                            LINKTYPE_LINUX_SLL2, LINKTYPE_RAW)

#: Bytes of records a :class:`Reader` chunk holds (one record larger than this gets a chunk of its own).
CHUNK_BYTES = 2 << 20
#: The largest ``chunk_bytes`` (``--chunk-bytes``): a chunk is held whole, and with ``jobs`` > 1 in a shared slot of
#: three times its size per chunk in flight; 2**40 ended in "out of memory", 10**22 in a traceback.
MAX_CHUNK_BYTES = 1 << 30
#: The largest record or block read; a header announcing more is taken as damage (Wireshark caps packets
#: at 256 KiB, pcapng blocks at 16 MiB).
MAX_RECORD = 64 << 20

#: The pcap magic numbers libpcap reads (sf-pcap.c): (nanosecond timestamps, record header bytes) for the standard
#: format, its nanosecond twin and Alexey Kuznetzov's modified one (a1b2cd34: ifindex, protocol, packet type and a
#: pad byte after the lengths).
_MODIFIED_HEADER = 24
_PCAP_MAGICS = {0xA1B2C3D4: (False, 16), 0xA1B23C4D: (True, 16), 0xA1B2CD34: (False, _MODIFIED_HEADER)}
#: The most captured bytes libpcap hands over for a packet (pcap-int.h MAXIMUM_SNAPLEN): the snap length it takes for
#: a file header's 0 or more; a record of more captured bytes than the snap length and at most this is cut to it.
MAXIMUM_SNAPLEN = 262144
#: The upper bits of a pcap file header's link type (pcap/pcap.h): LT_FCS_LENGTH_PRESENT, and the frame check
#: sequence's length in 16-bit words in the top four (LT_FCS_LENGTH); the link type proper is the low 16 bits.
LT_FCS_LENGTH_PRESENT = 0x04000000
_SHB, _IDB, _PB, _SPB, _EPB = 0x0A0D0D0A, 1, 2, 3, 6
_BYTE_ORDERS = {b"\x4d\x3c\x2b\x1a": "<", b"\x1a\x2b\x3c\x4d": ">"}

#: The timestamp of a packet whose record has none (a pcapng Simple Packet Block), or whose timestamp lies outside
#: what 64-bit nanoseconds since the epoch hold (before 1677-09-21 or after 2262-04-11: a pcapng block's 64 bits of
#: ticks at a coarse if_tsresol, or an if_tsoffset, can say so).
NO_TIME = -(1 << 63)
_LATEST = (1 << 63) - 1

#: Called now and then while reading: (bytes read so far, file size).
Progress = Callable[[int, int], None]


class Capture:
    """A capture's bytes (or one chunk of them) and, per packet, where it lies in them.

    ``offsets[i]``: offset in ``data`` of packet i's first captured byte;
    ``caplens[i]`` / ``origlens[i]``: captured and original length (the packet
    was cut by the snap length when ``caplens[i] < origlens[i]``);
    ``linktypes[i]``: its link type (one int: every packet's); ``times[i]``: its timestamp in nanoseconds since the
    epoch (:data:`NO_TIME` for a pcapng Simple Packet Block or a timestamp out of that range; ``times`` None when not
    read). ``format`` is "pcap" or "pcapng".
    ``first_index``: the capture-wide number of packet 0; ``base``: the file
    offset of ``data[0]`` (both 0 for a whole file).

    The columns are read as int64 numpy arrays, made on first use from what was given (without a copy for the
    readers' columns); :meth:`packet`, :meth:`is_cut` and :meth:`records` need no numpy, so checking a small capture
    does not import it (bench/startup.py). Read-only.
    """

    __slots__ = ("data", "format", "first_index", "base", "_given", "_arrays", "__weakref__")
    data: bytes
    format: str
    first_index: int
    base: int
    _given: tuple[Column, Column, Column, Column | int, Column | None]
    _arrays: dict[int, np.ndarray]

    def __init__(self, data: bytes, format: str, offsets: Column, caplens: Column, origlens: Column,
                 linktypes: Column | int, first_index: int = 0, base: int = 0, times: Column | None = None) -> None:
        for name, value in (("data", data), ("format", format), ("first_index", first_index), ("base", base),
                            ("_given", (offsets, caplens, origlens, linktypes, times)), ("_arrays", {})):
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"a Capture is read-only: cannot set {name}")

    def __reduce__(self) -> tuple[type[Capture], tuple]:  # pickled for worker processes: the columns as given
        given = [_picklable(c) for c in self._given]
        return Capture, (self.data, self.format, *given[:4], self.first_index, self.base, given[4])

    def __repr__(self) -> str:
        return f"<Capture {self.format}: {len(self)} packets, first_index={self.first_index}, base={self.base}>"

    def _array(self, k: int) -> np.ndarray:
        got = self._arrays.get(k)
        if got is None:
            import numpy as np

            given = self._given[k]
            got = np.full(len(self), given, dtype=np.int64) if isinstance(given, int) else \
                np.asarray(given, dtype=np.int64).reshape(-1)
            self._arrays[k] = got
        return got

    @property
    def offsets(self) -> np.ndarray:
        """Where each packet's captured bytes start in ``data`` (int64)."""
        return self._array(0)

    @property
    def caplens(self) -> np.ndarray:
        """Each packet's captured length (int64)."""
        return self._array(1)

    @property
    def origlens(self) -> np.ndarray:
        """Each packet's original length, on the wire (int64)."""
        return self._array(2)

    @property
    def linktypes(self) -> np.ndarray:
        """Each packet's link type (int64)."""
        return self._array(3)

    @property
    def times(self) -> np.ndarray | None:
        """Each packet's timestamp in nanoseconds since the epoch (int64; NO_TIME: none), or None when not read."""
        return None if self._given[4] is None else self._array(4)

    def __len__(self) -> int:
        return len(self._given[0])

    def buffers(self) -> tuple[Int64s, Int64s, Int64s, Int64s, Int64s]:
        """The columns (offsets, captured and original lengths, link types, timestamps: NO_TIME where not read) as
        int64 buffers, without numpy: as given where they are such a buffer (the readers' ``array("q")``), else an
        ``array("q")`` made of them."""
        n = len(self)
        return tuple(self._arrays.get(k, _int64(c, n, NO_TIME)) for k, c in enumerate(self._given))  # type: ignore


    def packet(self, index: int) -> memoryview:
        """The captured bytes of packet ``index`` (counted in this chunk)."""
        start = int(self._given[0][index])
        return memoryview(self.data)[start : start + int(self._given[1][index])]

    def is_cut(self, index: int) -> bool:
        """Whether packet ``index`` was captured only in part (snap length)."""
        return bool(self._given[1][index] < self._given[2][index])

    def with_data(self, data: bytes) -> Capture:
        """The same records over ``data``: bytes laid out as this capture's (a copy with some fields rewritten)."""
        offsets, caplens, origlens, linktypes, times = self._given
        return Capture(data, self.format, offsets, caplens, origlens, linktypes, self.first_index, self.base, times)

    def records(self) -> Iterator[tuple[int, int, int, int, int]]:
        """(offset, captured length, original length, link type, timestamp or NO_TIME) of each packet, as Python
        ints, without numpy."""
        n = len(self)
        offs, caps, origs, links, times = (repeat(NO_TIME, n) if c is None else repeat(c, n) if isinstance(c, int)
                                           else _ints(c) for c in self._given)
        return zip(offs, caps, origs, links, times)


def _picklable(column: Column | int | None) -> Column | int | None:
    """A column as given, a memoryview (the C record walk's) as an ``array("q")``: a memoryview does not pickle."""
    if not isinstance(column, memoryview):
        return column
    copy = array("q")
    copy.frombytes(column.cast("B"))
    return copy


def _int64(column: Column | int | None, n: int, missing: int) -> Int64s:
    """A column as an int64 buffer of ``n`` items (an int: every item; None: ``missing``), without a copy where it is
    one already."""
    if column is None or isinstance(column, int):
        return _constant(missing if column is None else column, n)
    if isinstance(column, array) and column.typecode == "q":
        return column
    if isinstance(column, memoryview) and column.format == "q" and column.c_contiguous:
        return column
    if getattr(column, "dtype", None) is not None:  # a numpy array: numpy is imported
        import numpy as np

        return np.ascontiguousarray(column, dtype=np.int64)
    return array("q", column)


#: Columns of one value each (a chunk's link type, a missing timestamp), kept for the next chunk of at most
#: _CONSTANT_MOST packets.
_CONSTANTS: dict[int, array] = {}
_CONSTANT_MOST = 1 << 20


def _constant(value: int, n: int) -> memoryview:
    """A read-only int64 column of ``n`` items, each ``value``."""
    have = _CONSTANTS.get(value)
    if have is None or len(have) < n:
        have = array("q", [value]) * n
        if n <= _CONSTANT_MOST:
            _CONSTANTS[value] = have
    return memoryview(have)[:n].toreadonly()


def _ints(column: Column) -> list[int]:
    """A column's values as Python ints."""
    tolist = getattr(column, "tolist", None)
    return [int(v) for v in column] if tolist is None else tolist()


@dataclass(frozen=True)
class Stop:
    """Where a :class:`Reader` stopped before the end of the file.

    ``offset``: offset in the capture (decompressed) of the first byte not read as a record; ``index``:
    the number the packet there would have had (0-based: the frames before it, read whole);
    ``truncated``: the file ends inside that record, and nothing else is wrong; otherwise the
    capture could not be read whole (a header that makes no sense, or compressed data that is cut,
    corrupt or followed by garbage); ``reason``: why.
    """

    offset: int
    index: int
    truncated: bool
    reason: str

    def __str__(self) -> str:
        return f"the record at offset {self.offset} (after frame {self.index}): {self.reason}"


def _bad(what: str, code: Code) -> CsumValueError:
    return CsumValueError(what, code=code)


class _Walked:
    """Records found in a buffer from some position on, and why the walk ended before the buffer did: the columns
    (``times``: nanoseconds since the epoch, NO_TIME where the record has none; None when not read), ``end``, and
    ``problem``, why the record at ``end`` cannot be read, ``short`` when because the buffer ends inside it (else its
    header is nonsense)."""

    __slots__ = ("offs", "caps", "origs", "links", "end", "problem", "short", "times")

    def __init__(self, offs: Column, caps: Column, origs: Column, links: Column | int, end: int,
                 problem: str | None = None, short: bool = True, times: Column | None = None) -> None:
        self.offs, self.caps, self.origs, self.links, self.end = offs, caps, origs, links, end
        self.problem, self.short, self.times = problem, short, times


class _PcapWalker:
    """Record headers of a pcap file, as libpcap's sf-pcap.c reads them: seconds, fraction, captured and original
    length (16 bytes; 24 in the modified format, :data:`_MODIFIED_HEADER`), those two lengths the other way round in
    files older than version 2.3 (``swap`` 1) and in some of version 2.3 (``swap`` 2: where the captured length would
    be the larger), a record of more captured bytes than the file's snap length (and at most :data:`MAXIMUM_SNAPLEN`)
    cut to it, and the frame check sequence of ``fcs`` bytes the link type's upper bits announce taken off the end of
    each frame (:func:`_walker` says which)."""

    format = "pcap"

    def __init__(self, endian: str, linktype: int, nanos: bool = False, header: int = 16, swap: int = 0,
                 snap: int = 0, fcs: int = 0) -> None:
        self._endian, self._linktype, self._nanos = endian, linktype, nanos
        self._header, self._swap, self._snap, self._fcs = header, swap, snap, fcs
        self._u32 = struct.Struct(endian + "I").unpack_from
        self._lengths = struct.Struct(endian + "II").unpack_from

    def state(self) -> tuple:
        """What a walker needs to go on from a record boundary (see :func:`_walker_at`)."""
        return self._endian, self._linktype, self._nanos, self._header, self._swap, self._snap, self._fcs

    def _times(self, data: bytes | bytearray | memoryview, offs: Column) -> Column:
        """Each record's timestamp in nanoseconds: seconds and the microsecond (or nanosecond) fraction of its
        header, which starts ``header`` bytes before ``offs``."""
        cwalk = engine.cwalk
        if cwalk is not None and isinstance(offs, (array, memoryview)):  # the same in C (_cwalk.c pcap_times)
            stamps = array("q")
            stamps.frombytes(cwalk.pcap_times(data, offs, self._header, self._endian == ">", self._nanos))
            return stamps
        import numpy as np

        offs = np.asarray(offs, dtype=np.int64)
        if not len(offs):
            return np.zeros(0, dtype=np.int64)
        d = np.frombuffer(data, dtype=np.uint8)
        words = d[(offs - self._header)[:, None] + np.arange(8)].view(self._endian + "u4").astype(np.int64)
        return words[:, 0] * 1_000_000_000 + words[:, 1] * (1 if self._nanos else 1000)

    def _incl_orig(self, data: bytes | bytearray | memoryview, pos: int) -> tuple[int, int]:
        """The (captured, original) lengths in the record header at ``pos``, in libpcap's order."""
        a, b = self._lengths(data, pos + 8)
        return (b, a) if self._swap == 1 or (self._swap == 2 and a > b) else (a, b)

    def walk(self, data: bytes | bytearray | memoryview, pos: int, times: bool = True) -> _Walked:
        """The records from ``pos`` on (``times``: with their timestamps)."""
        cwalk = engine.cwalk
        header = self._header
        cut = (self._snap, MAXIMUM_SNAPLEN) if self._snap else (0, 0)
        offs: Column
        caps: Column
        origs: Column
        if cwalk is not None:  # the same loop in C (csum/engine/_cwalk.c pcap_records)
            offs_b, caps_b, origs_b, pos = cwalk.pcap_records(data, pos, self._endian == ">", MAX_RECORD, header,
                                                              self._swap, *cut, self._fcs)
            offs, caps, origs = (memoryview(raw).cast("q") for raw in (offs_b, caps_b, origs_b))  # read-only, no copy
        elif header == 16 and not self._swap and not self._snap and not self._fcs:
            offs_a, caps_a, origs_a = array("q"), array("q"), array("q")
            lengths, size, most = self._lengths, len(data), MAX_RECORD
            limit = size - 16
            while pos <= limit:  # the hot loop: one unpack per record, the checks folded into one test
                incl, orig = lengths(data, pos + 8)
                end = pos + 16 + incl
                if end > size or incl > most:
                    break
                offs_a.append(pos + 16)
                caps_a.append(incl)
                origs_a.append(orig)
                pos = end
            offs, caps, origs = offs_a, caps_a, origs_a
        else:
            offs_a, caps_a, origs_a = array("q"), array("q"), array("q")
            size, fcs = len(data), self._fcs
            while pos + header <= size:
                incl, orig = self._incl_orig(data, pos)
                end = pos + header + incl
                if end > size or incl > MAX_RECORD:
                    break
                cap = cut[0] if cut[0] < incl <= cut[1] else incl
                if fcs:
                    orig = max(orig - fcs, 0)
                    cap = min(cap, orig)
                offs_a.append(pos + header)
                caps_a.append(cap)
                origs_a.append(orig)
                pos = end
            offs, caps, origs = offs_a, caps_a, origs_a
        return _Walked(offs, caps, origs, self._linktype, pos, *self._why(data, pos),
                       self._times(data, offs) if times else None)

    def _why(self, data: bytes | bytearray | memoryview, pos: int) -> tuple[str | None, bool]:
        """(problem, short) of the record at ``pos``, where the walk stopped."""
        size, most, header = len(data), MAX_RECORD, self._header
        if pos + header > size:
            return (f"header truncated ({size - pos} of {header} bytes)" if pos < size else None), True
        incl = self._incl_orig(data, pos)[0]
        if incl > most:
            return f"{incl} captured bytes announced, more than the {most >> 20} MiB csum reads", False
        return f"{incl} captured bytes announced, {size - pos - header} left in the file", True


class _PcapngWalker:
    """Blocks of a pcapng file; the current section's byte order and interfaces carry over between chunks."""

    format = "pcapng"

    def __init__(self) -> None:
        self._endian = "<"
        #: (link type, snap length, if_tsresol, if_tsoffset seconds) of the current section's interfaces
        self._interfaces: list[tuple[int, int, int, int]] = []

    def state(self) -> tuple:
        """What a walker needs to go on from a block boundary (see :func:`_walker_at`)."""
        return self._endian, tuple(self._interfaces)

    def walk(self, data: bytes | bytearray | memoryview, pos: int, times: bool = True) -> _Walked:
        """The blocks from ``pos`` on (``times``: with the packets' timestamps)."""
        offs, caps, origs, links = array("q"), array("q"), array("q"), array("q")
        walked = _Walked(offs, caps, origs, links, pos, times=array("q") if times else None)
        size = len(data)
        while pos < size:
            walked.end = pos
            if pos + 12 > size:
                walked.problem = f"block truncated ({size - pos} bytes left, a block needs 12)"
                return walked
            endian = self._endian
            is_shb = int.from_bytes(data[pos : pos + 4], "little") == _SHB
            if is_shb:
                endian = _BYTE_ORDERS.get(bytes(data[pos + 8 : pos + 12]), "")
                if not endian:
                    magic = data[pos + 8 : pos + 12].hex()
                    return self._damaged(walked, f"section header: bad byte-order magic {magic}")
            kind, length = struct.unpack_from(endian + "II", data, pos)
            if length < 12 or length % 4 or length > MAX_RECORD:
                return self._damaged(walked, f"block total length {length} is not a multiple of 4 "
                                             f"between 12 and {MAX_RECORD}")
            if pos + length > size:
                walked.problem = f"block of {length} bytes announced, {size - pos} left in the file"
                return walked
            if struct.unpack_from(endian + "I", data, pos + length - 4)[0] != length:
                return self._damaged(walked, f"block's trailing length differs from leading length {length}")
            if is_shb:
                self._endian, self._interfaces = endian, []
            elif kind == _IDB:
                if length < 20:
                    return self._damaged(walked, "interface description block is too short")
                self._interfaces.append((*struct.unpack_from(endian + "H2xI", data, pos + 8),
                                         *_clock(data, pos + 16, pos + length - 4, endian)))
            elif kind in (_EPB, _PB, _SPB):
                why = self._packet(data, pos, kind, length, walked)
                if why:
                    return self._damaged(walked, why)
            pos += length
        walked.end = pos
        return walked

    def _packet(self, data: bytes | bytearray | memoryview, pos: int, kind: int, length: int, walked: _Walked
                ) -> str | None:
        endian, interfaces = self._endian, self._interfaces
        if length < (16 if kind == _SPB else 32):
            return f"packet block is too short ({length} bytes)"
        if kind == _SPB:
            iface, orig = 0, struct.unpack_from(endian + "I", data, pos + 8)[0]
            snap = interfaces[0][1] if interfaces else 0
            cap, start = min(orig, snap or orig, length - 16), pos + 12
        else:
            fmt = endian + ("I8xII" if kind == _EPB else "H10xII")
            iface, cap, orig = struct.unpack_from(fmt, data, pos + 8)
            start = pos + 28
            if start + cap > pos + length - 4:
                return f"packet block: {cap} captured bytes overrun the block"
        if iface >= len(interfaces):
            return f"packet block names interface {iface}, the section has {len(interfaces)}"
        walked.offs.append(start)  # type: ignore[union-attr]
        walked.caps.append(cap)  # type: ignore[union-attr]
        walked.origs.append(orig)  # type: ignore[union-attr]
        walked.links.append(interfaces[iface][0])  # type: ignore[union-attr]
        if walked.times is not None:  # a Simple Packet Block has no timestamp
            walked.times.append(NO_TIME if kind == _SPB else self._stamp(data, pos, iface))  # type: ignore[union-attr]
        return None

    def _stamp(self, data: bytes | bytearray | memoryview, pos: int, iface: int) -> int:
        """The timestamp of the (Enhanced or obsolete) Packet Block at ``pos`` in nanoseconds: 64 bits of ticks of its
        interface's if_tsresol, plus its if_tsoffset."""
        high, low = struct.unpack_from(self._endian + "II", data, pos + 12)
        _link, _snap, resol, offset = self._interfaces[iface]
        ns = _nanoseconds(high << 32 | low, resol) + offset * 1_000_000_000
        return ns if NO_TIME < ns <= _LATEST else NO_TIME

    @staticmethod
    def _damaged(walked: _Walked, why: str) -> _Walked:
        walked.problem, walked.short = why, False
        return walked


def _clock(data: bytes | bytearray | memoryview, pos: int, end: int, endian: str) -> tuple[int, int]:
    """(if_tsresol, if_tsoffset) among an Interface Description Block's options from ``pos`` to ``end``
    (draft-ietf-opsawg-pcapng 4.2: option 9, one byte, default 6 = microseconds; option 14, seconds, default 0)."""
    resol, offset = 6, 0
    while pos + 4 <= end:
        code, size = struct.unpack_from(endian + "HH", data, pos)
        if code == 0 or pos + 4 + size > end:
            break
        if code == 9 and size >= 1:
            resol = data[pos + 4]
        elif code == 14 and size >= 8:
            offset = struct.unpack_from(endian + "q", data, pos + 4)[0]
        pos += 4 + (-(-size // 4) * 4)
    return resol, offset


def _nanoseconds(ticks: int, resol: int) -> int:
    """A pcapng timestamp in nanoseconds: ``ticks`` of 10**-resol seconds, or 2**-(resol & 0x7f) with the top bit set."""
    if resol & 0x80:
        return (ticks * 1_000_000_000) >> (resol & 0x7F)
    return ticks * 10 ** (9 - resol) if resol <= 9 else ticks // 10 ** (resol - 9)


def _capture(data: bytes, fmt: str, walked: _Walked, first_index: int, base: int) -> Capture:
    return Capture(data, fmt, walked.offs, walked.caps, walked.origs, walked.links, first_index, base, walked.times)


def _read_full(stream: BinaryIO, n: int) -> bytes:
    """Up to ``n`` bytes; fewer only at the end of the stream."""
    parts, got = [], 0
    while got < n:
        block = stream.read(n - got)
        if not block:
            break
        parts.append(block)
        got += len(block)
    return parts[0] if len(parts) == 1 else b"".join(parts)


def _readinto(stream: BinaryIO) -> Callable[[memoryview], int]:
    """A function filling part of a buffer from ``stream``, returning the bytes read (0 at its end): ``readinto1``
    when the stream has it (one read of the stream below each call, so an error the stream raises loses no byte
    read before it), else ``readinto``, else ``read``."""
    readinto = getattr(stream, "readinto1", None) or getattr(stream, "readinto", None)
    if readinto is not None:
        return readinto

    def read(into: memoryview) -> int:
        block = stream.read(len(into))
        into[: len(block)] = block
        return len(block)

    return read


def is_capture(head: bytes) -> bool:
    """Whether ``head``, a file's first 4 (decompressed) bytes, is a magic number a capture starts with: a pcapng
    section header, or one of libpcap's pcap magics in either byte order (:data:`_PCAP_MAGICS`)."""
    if len(head) < 4:
        return False
    return int.from_bytes(head[:4], "little") == _SHB or any(
        int.from_bytes(head[:4], order) in _PCAP_MAGICS for order in ("little", "big"))


def _walker(head: bytes, more: Callable[[int], bytes]) -> tuple[_PcapWalker | _PcapngWalker, bytes, int]:
    """Validate the file header; returns the walker, the header bytes read and where records start."""
    if len(head) < 4:
        raise _bad(f"not a pcap or pcapng capture: {len(head)} bytes", Code.NOT_A_CAPTURE)
    if int.from_bytes(head[:4], "little") == _SHB:
        head += more(28 - len(head))
        if len(head) < 28:
            raise _bad(f"pcapng section header needs 28 bytes, the file has {len(head)}", Code.TRUNCATED)
        endian = _BYTE_ORDERS.get(head[8:12])
        if endian is None:
            raise _bad(f"block at offset 0: section header: bad byte-order magic {head[8:12].hex()}", Code.BAD_BLOCK)
        major = struct.unpack_from(endian + "H", head, 12)[0]
        if major != 1:
            raise _bad(f"pcapng version {major} is not supported (only 1.x)", Code.NOT_A_CAPTURE)
        return _PcapngWalker(), head, 0
    orders: tuple[tuple[str, Literal["little", "big"]], ...] = (("<", "little"), (">", "big"))
    for endian, order in orders:
        magic = _PCAP_MAGICS.get(int.from_bytes(head[:4], order))
        if magic is not None:
            head += more(24 - len(head))
            if len(head) < 24:
                raise _bad(f"pcap file header needs 24 bytes, file has {len(head)}", Code.TRUNCATED)
            return _pcap_walker(endian, *magic, *struct.unpack_from(endian + "HHiIII", head, 4)), head, 24
    raise _bad(f"not a pcap or pcapng capture (starts with {head[:4].hex()})", Code.NOT_A_CAPTURE)


def _pcap_walker(endian: str, nanos: bool, header: int, major: int, minor: int, _zone: int, _sigfigs: int, snap: int,
                 link: int) -> _PcapWalker:
    """The record walker of a pcap file with this header, as libpcap's sf-pcap.c pcap_check_header reads it: version
    2.x (the lengths swapped before 2.3, and where they would say more was captured than sent in 2.3) or DG/UX
    tcpdump's 543.0 (swapped); the snap length (0 or more than :data:`MAXIMUM_SNAPLEN`: that; 14 more in a modified
    file of Ethernet, for the header the capture made up); the link type's FCS bits. Versions 2.5 and later, which
    libpcap refuses, are read as 2.4 (as Wireshark does)."""
    if major < 2:
        raise _bad(f"pcap version {major}.{minor} is an archaic format csum does not read (2.x)", Code.NOT_A_CAPTURE)
    if major == 2:
        swap = 1 if minor < 3 else 2 if minor == 3 else 0
    elif (major, minor) == (543, 0):
        swap = 1
    else:
        raise _bad(f"pcap version {major}.{minor} is not supported (only 2.x and DG/UX's 543.0)", Code.NOT_A_CAPTURE)
    linktype = link & 0xFFFF
    snapshot = MAXIMUM_SNAPLEN if snap == 0 or snap > MAXIMUM_SNAPLEN else snap
    if header == _MODIFIED_HEADER and linktype == LINKTYPE_ETHERNET:
        snapshot += 14
    fcs = 2 * (link >> 28) if link & LT_FCS_LENGTH_PRESENT else 0
    return _PcapWalker(endian, linktype, nanos, header, swap, snapshot if snapshot < MAXIMUM_SNAPLEN else 0, fcs)


class Reader:
    """Read a capture from a binary stream in chunks of about ``chunk_bytes`` (see the module docstring).

    The header is read and validated on construction (:class:`CsumValueError`
    with code ``not-a-capture``, ``truncated`` or ``bad-block``, or the stream's own error: ``bad-compression``
    for compressed data that cannot give the header). Iterating
    yields :class:`Capture` chunks (with their ``times`` column when ``times``); afterwards :attr:`stop` is None when every
    byte was read as records, else the :class:`Stop` that ended the reading.
    """

    def __init__(self, stream: BinaryIO, chunk_bytes: int = CHUNK_BYTES, *, times: bool = False) -> None:
        if chunk_bytes < 1:
            raise CsumValueError(f"chunk_bytes must be positive, got {chunk_bytes}", code=Code.OUT_OF_RANGE)
        self._stream, self.chunk_bytes, self.times = stream, chunk_bytes, times
        self._walker, self._buf, self._pos = _walker(_read_full(stream, 4), lambda n: _read_full(stream, n))
        self.format: str = self._walker.format
        self.stop: Stop | None = None
        self.packets = 0
        self._base = 0
        self._problem: str | None = None  # why the stream could not be read further (a CsumValueError it raised)

    def _fill(self, into: memoryview) -> int:
        """Fill ``into`` from the stream (short only at its end); the bytes read. An error the stream raises (cut,
        corrupt or trailing compressed data) ends it there, every byte read before kept, and is the reason
        reading stops."""
        got = 0
        if self._problem is None:
            readinto = _readinto(self._stream)
            try:
                while got < len(into) and (n := readinto(into[got:])):
                    got += n
            except CsumValueError as exc:
                self._problem = str(exc)
        return got

    def __iter__(self) -> Iterator[Capture]:
        buf: bytes | bytearray = self._buf
        pos, eof = self._pos, False
        while True:
            if not eof:  # the unread rest of the last chunk, then the stream's next bytes read in after it
                grown = bytearray(len(buf) + self.chunk_bytes)
                grown[: len(buf)] = buf
                got = self._fill(memoryview(grown)[len(buf) :])
                eof = got < self.chunk_bytes or self._problem is not None
                if got < self.chunk_bytes:  # the last chunk: a copy, as a stream may still hold a view of it
                    grown = grown[: len(buf) + got]
                buf = grown
            walked = self._walker.walk(buf, pos, self.times)
            end = walked.end
            if end:
                data = bytes(memoryview(buf)[:end])
                chunk = _capture(data, self.format, walked, self.packets, self._base)
                self.packets += len(chunk)
                self._base += end
                buf, pos = bytes(memoryview(buf)[end:]), 0
                yield chunk
            if self._stopped(walked, eof, len(buf)):
                break
        self._buf = bytes(buf)

    def mapped(self, view: memoryview, done: Callable[[int], None] | None = None) -> Iterator[Capture]:
        """Iterate as iterating does, over ``view``, the whole stored file mapped in memory (``mmap``: an
        uncompressed regular file), instead of reading the stream: nothing is copied.

        Call instead of iterating, right after construction (the header was read from the stream; the same bytes
        start ``view``). The chunks are the ones iterating makes (the same records, split at the same places), but
        each one's ``data`` is ``view`` up to the chunk's end, its ``base`` 0 and its offsets the file's: the records
        of earlier chunks stay where they are, so the fragments a chunk carries over are not copied either
        (csum/capture/fastpath.py Batch.of). :attr:`stop` and :attr:`packets` are set as iterating sets them;
        :meth:`rest` is not available afterwards. :meth:`consumed` says how far the chunks have got. ``done(end)``, when
        given, is called as the next chunk is asked for, ``end`` the end of the chunk before: the caller is done with
        it (csum.scan lets the kernel drop its pages from the process, so memory does not grow with the file).
        """
        size, pos = len(view), self._pos
        hi = len(self._buf)  # iterating holds the header read so far, then reads chunk_bytes more at a time
        self._buf = b""
        while True:
            hi = min(size, hi + self.chunk_bytes)
            eof = hi == size
            walked = self._walker.walk(view[:hi], pos, self.times)
            if walked.end > self._base:  # iterating's test: the chunk's bytes (maybe no record: headers, blocks)
                chunk = _capture(view[: walked.end], self.format, walked, self.packets, 0)  # type: ignore[arg-type]
                self.packets += len(chunk)
                self._base = pos = walked.end
                yield chunk
                if done is not None:
                    done(self._base)
            if self._stopped(walked, eof, hi - self._base):
                return

    def consumed(self) -> int:
        """The bytes of the capture walked as records so far (every chunk yielded ends there)."""
        return self._base

    def spans(self) -> Iterator[Span]:
        """Walk the rest of the stream as iterating would, yielding where each chunk is instead of its bytes.

        Call instead of iterating, right after construction. The stream is read ``chunk_bytes`` at a
        time into one reused buffer (nothing is copied out), and the records walked after each read
        form one chunk, as iterating makes them; each non-empty one is yielded as a :class:`Span`
        that :meth:`Span.capture` turns back into that chunk from the file's bytes. :attr:`stop` and
        :attr:`packets` are set as iterating sets them; :meth:`rest` is not available afterwards.
        """
        size, walker = self.chunk_bytes, self._walker
        have, pos, eof = len(self._buf), self._pos, False
        buf = bytearray(have + size)
        buf[:have] = self._buf
        self._buf = b""
        while True:
            if not eof:
                if len(buf) < have + size:  # a record larger than what the buffer holds
                    buf += bytes(have + size - len(buf))
                view = memoryview(buf)
                got = self._fill(view[have : have + size])
                view.release()
                eof = got < size or self._problem is not None
                have += got
            state = walker.state()
            walked = walker.walk(memoryview(buf)[:have], pos, False)
            end = walked.end
            if len(walked.offs):
                yield Span(self.format, state, self._base + pos, self._base + end, self.packets, len(walked.offs))
            if end:
                self.packets += len(walked.offs)
                self._base += end
                buf[: have - end] = buf[end:have]
                have, pos = have - end, 0
            if self._stopped(walked, eof, have):
                return

    def _stopped(self, walked: _Walked, eof: bool, left: int) -> bool:
        """Whether reading ends after ``walked`` (``left`` bytes not read as records), setting :attr:`stop`."""
        if walked.problem is not None and not walked.short:
            self.stop = Stop(self._base, self.packets, False, walked.problem)
            return True
        if not eof:
            return False
        if self._problem is not None:
            self.stop = Stop(self._base, self.packets, False, self._problem)
        elif left:
            self.stop = Stop(self._base, self.packets, True, walked.problem or "truncated")
        return True

    def rest(self) -> Iterator[bytes]:
        """After iterating: the bytes from :attr:`stop` to the end of the stream, in blocks."""
        if self._buf:
            yield self._buf
            self._buf = b""
        while self._problem is None:
            try:
                block = self._stream.read(self.chunk_bytes)
            except CsumValueError as exc:  # compressed data cut or corrupt further on: the rest ends there
                self._problem = str(exc)
                return
            if not block:
                return
            yield block


@dataclass(frozen=True)
class Span:
    """Where one :class:`Reader` chunk's records are in the file: bytes ``lo`` to ``hi`` (records only), its
    ``packets`` numbered from ``first_index``, and ``state``, what the record walk knew when it got there
    (pcap: byte order and link type; pcapng: the section's byte order and interfaces)."""

    format: str
    state: tuple
    lo: int
    hi: int
    first_index: int
    packets: int

    def capture(self, read: Callable[[int, int], bytes], times: bool = False) -> Capture:
        """The chunk, its bytes got by ``read(file offset, size)`` (e.g. ``os.pread`` on the file) and walked again
        (``times``: with its packets' timestamps)."""
        data = read(self.lo, self.hi - self.lo)
        walked = _walker_at(self.format, self.state).walk(data, 0, times)
        if walked.end != len(data) or len(walked.offs) != self.packets:
            raise CsumValueError(f"the capture changed while it was read: {self.hi - self.lo} bytes at offset "
                                 f"{self.lo} no longer hold {self.packets} records", code=Code.TRUNCATED)
        return _capture(data, self.format, walked, self.first_index, self.lo)


def _walker_at(fmt: str, state: tuple) -> _PcapWalker | _PcapngWalker:
    """A record walker in ``state`` (:meth:`_PcapWalker.state` / :meth:`_PcapngWalker.state`)."""
    if fmt == "pcap":
        return _PcapWalker(*state)
    walker = _PcapngWalker()
    walker._endian, walker._interfaces = state[0], list(state[1])
    return walker


def parse(data: bytes, progress: Progress | None = None) -> Capture:
    """Index the packets of a pcap or pcapng file held in ``data``, as one :class:`Capture`.

    Raises :class:`CsumValueError` (code ``not-a-capture``, ``truncated`` or
    ``bad-block``) naming the offset of the first problem. ``progress`` is
    called once, at the end.
    """
    if type(data) is not bytes:  # bytes are immutable: indexed as they are (a whole capture is not copied)
        data = as_view(data, "data").tobytes()
    if progress is not None:
        check_callable(progress, "progress")
    walker, _head, start = _walker(data[:4], lambda n: data[4 : 4 + n])
    walked = walker.walk(data, start)
    if walked.problem is not None:
        stop = Stop(walked.end, len(walked.offs), walked.short, walked.problem)
        raise _bad(str(stop), Code.TRUNCATED if walked.short else Code.BAD_BLOCK)
    if progress is not None:
        progress(len(data), len(data))
    return _capture(data, walker.format, walked, 0, 0)


def read(path: str | os.PathLike[str], progress: Progress | None = None) -> Capture:
    """Read and index the capture at ``path`` (see :func:`parse`); OSError propagates."""
    if progress is not None:
        check_callable(progress, "progress")
    return parse(Path(check_path(path, "path")).read_bytes(), progress)


def patched(capture: Capture, patches: Iterable[tuple[int, bytes]]) -> bytes:
    """The capture's bytes with ``new`` at each file offset of ``patches`` (offsets count from the file's start,
    so a chunk takes the patches that fall inside it, ``capture.base`` on)."""
    out = bytearray(check_instance(capture, Capture, "capture").data)
    for i, patch in enumerate(check_list(patches, "patches")):
        if not isinstance(patch, tuple) or len(patch) != 2:
            raise CsumTypeError(f"patches[{i}] must be an (offset, bytes) pair, not {type(patch).__name__}",
                                code=Code.BAD_TYPE)
        offset, new = check_uint(patch[0], 63, f"patches[{i}] offset"), as_view(patch[1], f"patches[{i}] bytes")
        at = offset - capture.base
        if at < 0 or at + len(new) > len(out):
            raise CsumValueError(f"patches: offset {offset} is outside the {len(out)} bytes from offset "
                                 f"{capture.base}", code=Code.OUT_OF_RANGE)
        out[at : at + len(new)] = new
    return bytes(out)


def _record_header(data: bytes, at: int, cap: int, orig: int, index: int) -> str:
    """The byte order ("<" or ">") of the standard 16-byte pcap record header at ``at`` that holds ``cap`` and
    ``orig``; CsumValueError where it does not (a modified or swapped layout: not resized)."""
    for order in "<>":
        if struct.unpack_from(order + "II", data, at + 8) == (cap, orig):
            return order
    raise CsumValueError(f"packet {index}: its pcap record header is not the standard one (captured and original "
                         "length at 8 and 12): not resized", code=Code.BAD_VALUE)


def _block_start(data: bytes, offset: int, index: int) -> tuple[int, str, int]:
    """(start, byte order, type) of the pcapng packet block whose packet data starts at ``offset``: an Enhanced or
    obsolete Packet Block (data at 28) or a Simple Packet Block (data at 12)."""
    for back, kinds in ((28, (_EPB, _PB)), (12, (_SPB,))):
        for order in "<>":
            at = offset - back
            if at >= 0 and struct.unpack_from(order + "I", data, at)[0] in kinds:
                length = struct.unpack_from(order + "I", data, at + 4)[0]
                if at + length <= len(data) and struct.unpack_from(order + "I", data, at + length - 4)[0] == length:
                    return at, order, struct.unpack_from(order + "I", data, at)[0]
    raise CsumValueError(f"packet {index}: no pcapng packet block holds it: not resized", code=Code.BAD_VALUE)


def resized(capture: Capture, packets: Sequence[bytes | None], origlens: Sequence[int]) -> Capture:
    """``capture`` with packet i's captured bytes replaced by ``packets[i]`` (None: as it was; any length) and its
    original length set to ``origlens[i]``: the pcap record headers, or the pcapng packet blocks (their lengths,
    padding, options and trailing length), rewritten to fit; every other byte (file and section headers, other
    blocks) copied. What ``csum rewrite --truncate`` writes."""
    data, out = capture.data, []
    offs, caps, origs, links, times = [], [], [], [], []
    pos, size = 0, 0
    for i, (offset, cap, orig, link, stamp) in enumerate(capture.records()):
        given = packets[i]
        new = bytes(capture.packet(i)) if given is None else given
        if capture.format == "pcap":
            start = offset - 16
            order = _record_header(data, start, cap, orig, i)
            head = data[start:start + 8] + struct.pack(order + "II", len(new), origlens[i])
            block, at, end = head + new, 16, offset + cap
        else:
            start, order, kind = _block_start(data, offset, i)
            length = struct.unpack_from(order + "I", data, start + 4)[0]
            end = start + length
            pad = -len(new) % 4
            if kind == _SPB:
                body = struct.pack(order + "I", origlens[i]) + new + bytes(pad)
                at = 12
            else:
                options = data[offset + cap + (-cap % 4):end - 4]
                body = data[start + 8:start + 20] + struct.pack(order + "II", len(new), origlens[i]) + new + \
                    bytes(pad) + options
                at = 28
            total = 12 + len(body)
            block = struct.pack(order + "II", kind, total) + body + struct.pack(order + "I", total)
        out.append(data[pos:start])
        size += start - pos
        offs.append(size + at)
        caps.append(len(new))
        origs.append(origlens[i])
        links.append(link)
        times.append(stamp)
        out.append(block)
        size += len(block)
        pos = end
    out.append(data[pos:])
    return Capture(b"".join(out), capture.format, offs, caps, origs, links, capture.first_index, capture.base,
                   None if capture.times is None else times)


def to_bytes(frames: Iterable[bytes], linktype: int = LINKTYPE_ETHERNET) -> bytes:
    """A pcap file (microsecond timestamps, all 0; little-endian; snap length 262144) of ``frames`` on ``linktype``:
    what ``csum prog --out`` writes."""
    out = [struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 262144, check_uint(linktype, 32, "linktype"))]
    views = [as_view(f, f"frames[{i}]") for i, f in enumerate(check_list(frames, "frames"))]
    out += [struct.pack("<IIII", 0, 0, len(f), len(f)) + f for f in views]
    return b"".join(out)
