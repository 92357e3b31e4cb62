"""What the fuzz targets share: the input format of frames, exact-size buffers, the references, report comparison.

An input of the walker and fix targets is a list of frames, each ``[selector][length: 2 bytes, big-endian][bytes]``
(the last one's length clipped to what is left): ``selector & 0x3f`` picks the link type from :data:`LINKS` (modulo
its length), bit 6 marks the frame cut by the snap length (its original length one byte more), bit 7 asks
``verify`` for ``link="auto"`` as well. fuzz/seeds.py writes inputs in this format (:func:`encode`).

Every buffer handed to the C under test is an exact-size copy (:func:`exact`): a numpy array owns exactly its bytes,
where a ``bytes`` object has one more (its terminating NUL), so AddressSanitizer sees an overread of one byte too.
Expected values come only from the Python side: the Python walker (``csum.layers.walk`` + ``evaluate``, all nine
Result fields), the capture checker with ``csum.engine.cwalk`` set to None, the pure-Python summing engine.
"""

from __future__ import annotations

import contextlib
import struct
from collections.abc import Iterator
from typing import Any, NamedTuple

import numpy as np

from csum import engine
from csum.capture import checker, pcap
from csum.capture.report import Report
from csum.errors import CsumValueError
from csum.layers import Result, verify_stack, walk

#: The link types csum/engine/_cwalk.c walks (its CT_LINKS), 147 (a user link type it does not) last.
LINKS = (1, 0, 12, 14, 101, 104, 108, 113, 228, 229, 242, 276, 147)
#: At most this many frames per input (each walked by both walkers, twice over for a chunk).
MAX_FRAMES = 16

FIELDS = Result.__slots__


class Frame(NamedTuple):
    linktype: int
    data: bytes
    cut: bool
    auto: bool


def decode(data: bytes) -> list[Frame]:
    """The frames of a fuzz input (see the module docstring)."""
    out, at = [], 0
    while at + 3 <= len(data) and len(out) < MAX_FRAMES:
        sel, size = data[at], int.from_bytes(data[at + 1 : at + 3], "big")
        frame = data[at + 3 : at + 3 + size]
        out.append(Frame(LINKS[(sel & 0x3F) % len(LINKS)], frame, bool(sel & 0x40), bool(sel & 0x80)))
        at += 3 + size
    return out


def encode(frames: list[tuple[int, bytes]] | list[Frame]) -> bytes:
    """A fuzz input of (link type, frame) pairs or :class:`Frame` objects."""
    out = []
    for item in frames:
        link, frame = item[0], item[1]
        cut, auto = (item.cut, item.auto) if isinstance(item, Frame) else (False, False)
        sel = LINKS.index(link) | (0x40 if cut else 0) | (0x80 if auto else 0)
        out.append(bytes([sel]) + len(frame).to_bytes(2, "big") + frame)
    return b"".join(out)


def exact(data: bytes | bytearray | memoryview) -> np.ndarray:
    """A copy of ``data`` in a buffer of exactly its size (see the module docstring)."""
    return np.frombuffer(bytes(data), dtype=np.uint8).copy()


def row(r: Result) -> tuple:
    """All nine fields of a Result (``field``, ``path`` and ``depth`` are not part of its ``==``)."""
    return tuple(getattr(r, name) for name in FIELDS)


def python_verify(frame: bytes, link: int | str) -> list[tuple] | str:
    """The reference for one packet: the Python walker + evaluate, as csum.inet.verify answers without C (or the
    error's code)."""
    view = memoryview(frame)
    try:
        return [row(r) for r in verify_stack(view, walk(view, link, strict=True).fields)]
    except CsumValueError as exc:
        return str(exc.code)


@contextlib.contextmanager
def python_only() -> Iterator[None]:
    """``csum.engine.cwalk`` set to None: every caller of the C walker takes its Python path."""
    saved, engine.cwalk = engine.cwalk, None
    try:
        yield
    finally:
        engine.cwalk = saved


def capture_bytes(frames: list[Frame]) -> bytes:
    """A pcapng file (little-endian) of the frames: one interface per link type, cut frames with a longer original
    length."""
    def block(kind: int, body: bytes) -> bytes:
        body += bytes(-len(body) % 4)
        return struct.pack("<II", kind, 12 + len(body)) + body + struct.pack("<I", 12 + len(body))

    links = sorted({f.linktype for f in frames})
    out = [block(0x0A0D0D0A, struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1))]
    out += [block(1, struct.pack("<HHI", link, 0, 0)) for link in links]
    out += [block(6, struct.pack("<IIIII", links.index(f.linktype), 0, k, len(f.data), len(f.data) + f.cut) + f.data)
            for k, f in enumerate(frames)]
    return b"".join(out)


def with_exact_data(cap: pcap.Capture) -> pcap.Capture:
    """The capture with its bytes in an exact-size buffer (the last packet's end is the buffer's end)."""
    return cap.with_data(exact(cap.data))  # type: ignore[arg-type]


def report_rows(report: Report) -> dict[str, Any]:
    """Everything a Report says but ``fast`` (how many packets C judged), Results as nine-field rows."""
    return {"packets": report.packets, "counts": {k: v for k, v in report.counts.items() if any(v.values())},
            "bad": [(i, row(r)) for i, r in report.bad], "offload": [(i, row(r)) for i, r in report.offload],
            "malformed": report.malformed, "cut": report.cut, "not_ip": report.not_ip,
            "unsupported": report.unsupported, "patches": report.patches}


def check_rows(cap: pcap.Capture) -> tuple[dict[str, Any], list]:
    """(the report of ``checker.check``, every packet's Results through the per-packet path as rows)."""
    each: list = []
    report = checker.check(cap)
    checker.check(cap, sink=lambda i, results: each.append((i, [row(r) for r in results])))
    return report_rows(report), each


def assert_equal(got: object, want: object, what: str) -> None:
    if got != want:
        raise AssertionError(f"{what}: C and the Python reference differ\n  C:      {got!r}\n  Python: {want!r}")
