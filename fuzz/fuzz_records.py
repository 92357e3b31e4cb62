"""Fuzz target: the pcap and pcapng record walk on arbitrary bytes, C (csum/engine/_cwalk.c ``pcap_records``) against
Python (csum/capture/pcap.py's own loop, ``csum.engine.cwalk`` set to None).

``csum.pcap.parse`` must give the same Capture (format, every column, the bytes) or raise the same error (class, code,
message); a :class:`~csum.capture.pcap.Reader` in chunks of a size taken from the input's last byte, iterated and
walked by :meth:`~csum.capture.pcap.Reader.spans`, the same chunks and the same :class:`~csum.capture.pcap.Stop`;
and on each side, :meth:`~csum.capture.pcap.Reader.mapped` over the bytes the chunks iterating gives (the same
records at the same file offsets, each chunk the file from its start) and the same stop.
The pcapng walk is Python on both sides (only its pcap records go through C), so its inputs test the shared parts.
"""

from __future__ import annotations

import io

from fuzz_common import assert_equal, exact, python_only

from csum import engine
from csum.capture import pcap
from csum.errors import CsumValueError


def _columns(cap: pcap.Capture) -> tuple:
    return (cap.format, bytes(cap.data), cap.first_index, cap.base,
            *(c.tolist() for c in (cap.offsets, cap.caplens, cap.origlens, cap.linktypes)))


def _at_file(cap: pcap.Capture) -> tuple:
    """A chunk's records where they are in the file (and the file up to its end: a mapped chunk holds it whole)."""
    return (cap.format, cap.first_index, cap.base + len(cap.data), [cap.base + o for o in cap.offsets.tolist()],
            *(c.tolist() for c in (cap.caplens, cap.origlens, cap.linktypes)))


def _parsed(data: bytes) -> object:
    try:
        return _columns(pcap.parse(data))
    except CsumValueError as exc:
        return type(exc).__name__, str(exc.code), str(exc)


def _read(data: bytes, chunk_bytes: int) -> object:
    try:
        reader = pcap.Reader(io.BytesIO(data), chunk_bytes)
        chunks = [_columns(c) for c in reader]
        spans = pcap.Reader(io.BytesIO(data), chunk_bytes)
        where = list(spans.spans())
        mapper = pcap.Reader(io.BytesIO(data), chunk_bytes)
        mapped = [_at_file(c) for c in mapper.mapped(memoryview(data))]
        assert_equal((mapped, mapper.stop, mapper.packets),
                     ([_at_file(c) for c in pcap.Reader(io.BytesIO(data), chunk_bytes)], reader.stop, reader.packets),
                     f"pcap.Reader.mapped(chunk_bytes={chunk_bytes})")
        return chunks, reader.stop, b"".join(reader.rest()), where, spans.stop, spans.packets
    except CsumValueError as exc:
        return type(exc).__name__, str(exc.code), str(exc)


def _records(data: bytes, pos: int, big: bool, variant: tuple[int, int, int, int]) -> tuple:
    """The raw C walk (an exact-size buffer) from ``pos``, as columns (``variant``: header bytes, swap, snap length
    cut, FCS bytes, as _PcapWalker passes them)."""
    assert engine.cwalk is not None
    header, swap, snap, fcs = variant
    cut = (snap, pcap.MAXIMUM_SNAPLEN) if snap else (0, 0)
    offs, caps, origs, end = engine.cwalk.pcap_records(exact(data), pos, big, pcap.MAX_RECORD, header, swap, *cut, fcs)
    return bytes(offs), bytes(caps), bytes(origs), end


def one_input(data: bytes) -> None:
    assert engine.cwalk is not None, "the C walker is not built or CSUM_ENGINE is not c"
    got = _parsed(data)
    with python_only():
        want = _parsed(data)
    assert_equal(got, want, "pcap.parse")
    chunk_bytes = 16 + (data[-1] if data else 0) * 8
    got = _read(data, chunk_bytes)
    with python_only():
        want = _read(data, chunk_bytes)
    assert_equal(got, want, f"pcap.Reader(chunk_bytes={chunk_bytes})")
    # the pcap variants (csum/capture/pcap.py _pcap_walker), chosen by the input's first byte
    knob = data[0] if data else 0
    variants = [(16, 0, 0, 0), (24 if knob & 1 else 16, (knob >> 1) % 3, (knob >> 3) % 4 * 20, (knob >> 5) * 2)]
    for pos in {0, 24, len(data) // 2, max(len(data) - 16, 0), len(data)}:  # C on its own, anywhere in the buffer
        for big, variant in ((big, variant) for big in (False, True) for variant in variants):
            walker = pcap._PcapWalker(">" if big else "<", 1, False, *variant)
            with python_only():
                walked = walker.walk(data, pos)
            offs, caps, origs, end = _records(data, pos, big, variant)
            assert_equal((offs, caps, origs, end),
                         (walked.offs.tobytes(), walked.caps.tobytes(), walked.origs.tobytes(), walked.end),
                         f"pcap_records(pos={pos}, big={big}, variant={variant})")
