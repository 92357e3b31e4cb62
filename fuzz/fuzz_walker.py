"""Fuzz target: the C walker's ``verify`` (csum/engine/_cwalk.c) against the Python walker, one raw frame at a time.

The input is ``[selector][frame]``: ``selector & 0x3f`` picks the link type from fuzz_common's LINKS (every link type
C walks, and one it does not), bit 7 asks for ``link="auto"`` as well; every other byte is the frame (so a cut of the
input is a cut of the frame). ``verify(frame, linktype)`` must be None (the Python walker answers) or every Result
equal in all nine fields to the Python walker's (``csum.layers.walk`` + ``verify_stack``). The frame is an
exact-size buffer: a read one byte past its end is an AddressSanitizer finding.
"""

from __future__ import annotations

from fuzz_common import LINKS, assert_equal, exact, python_verify, row

from csum import engine


def encode(link: int, frame: bytes, auto: bool = False) -> bytes:
    """A walker input: the frame on link type ``link`` (``auto``: link "auto" too)."""
    return bytes([LINKS.index(link) | (0x80 if auto else 0)]) + frame


def one_input(data: bytes) -> None:
    cwalk = engine.cwalk
    assert cwalk is not None, "the C walker is not built or CSUM_ENGINE is not c"
    if not data:
        return
    link, frame = LINKS[(data[0] & 0x3F) % len(LINKS)], data[1:]
    for number in (link, -1) if data[0] & 0x80 else (link,):
        got = cwalk.verify(exact(frame), number)
        if got is not None:
            assert_equal([row(r) for r in got], python_verify(frame, "auto" if number == -1 else number),
                         f"verify(frame, {number})")
