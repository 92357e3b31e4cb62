"""Fuzz target: the explainer's hypotheses in C (csum/engine/_explain.c ``alone``, driven by csum/explain/quick.py)
against their reference, the Python hypotheses of csum/explain/hypotheses.py ``alone``.

The input is a walker input (fuzz/fuzz_walker.py: a link selector byte, then the frame). The frame is walked by the
Python walker; for every checksum field the C covers, every hypothesis the C gives (asked for all of them: stored
-1) must equal the Python's (cause, value, detail text, in order), and so must the hits the explainer uses
(:func:`csum.explain.hypotheses.fitting` with the C against the Python alone), the C reading an exact-size copy of
the frame (fuzz_common.exact: AddressSanitizer sees an overread of one byte). Then ``alone`` is called once more
with every offset and length argument taken from the input's first bytes (anywhere from 4 before the frame to 4
past it, a pseudo-header size of 4, 16 or another): it must answer None or hypotheses, never read outside the
frame (ASan) nor fail. And ``wrong_all`` (csum/explain/fast.py's C walk of packets with one wrong TCP/UDP checksum),
asked for every field offset of the frame, one at a time and all at once, as tuples and as csum.explain.fast.Wrong:
None but for the one failing field, and there the same field, segment, flow key and hits as the Python walker gives
(csum/explain/flow.py flow_key, the hypotheses above).
"""

from __future__ import annotations

import dataclasses

from fuzz_common import LINKS, assert_equal, exact

from csum import engine
from csum.errors import CsumValueError
from csum.explain import fast, hypotheses, quick
from csum.explain.flow import carrier, flow_key
from csum.layers import walk
from csum.layers.check import judge

#: alone's arguments after the buffer (csum/engine/_explain.c A_START on): the offsets, and the pseudo-header size.
OFFSETS = ("start", "end", "at", "src", "dst", "length", "pad", "ip_total", "after", "minimum", "l3", "l3_end")


def _texts(guesses: list) -> list[tuple[int | str, ...]]:
    return [(g.cause, g.value, g.detail) for g in guesses]


def _compare(frame: bytes, link: int) -> None:
    """Every field of the frame the C covers: the C's hypotheses and hits equal the Python's."""
    try:
        stack = walk(memoryview(frame), link)
    except CsumValueError:
        return
    copy = exact(frame)
    for f in stack.fields:
        r = judge(memoryview(frame), f)
        ip = carrier(stack, f)
        ok = f.pseudo is None or ip is None or hypotheses.header_ok(frame, stack, ip)
        every = quick.hypotheses(copy, f, ip, ok, -1, -1)
        if every is None:
            continue
        reference = [g for g in hypotheses.alone(frame, stack, f, dataclasses.replace(r, stored=None), ip)
                     if g.cause != "udp0-not-mangled"]
        assert_equal(_texts(every), _texts(reference), f"alone({f.entry.name} at {f.at}), every hypothesis")
        if r.stored is None or r.computed is None:
            continue
        fast = quick.fitting(copy, f, r, ip, ok)
        if fast is not None:
            python = [g for g in hypotheses.alone(frame, stack, f, r, ip)
                      if g.value == r.stored and g.value != r.computed]
            assert_equal(_texts(fast), _texts(python), f"fitting({f.entry.name} at {f.at})")


def _wrong(frame: bytes, link: int) -> None:
    """``wrong_all`` on the frame (an exact-size copy: ASan sees an overread), asked for each field offset the C
    walker reports and for one past the frame, and where it answers for the packet's one failing field: the Python
    walker's field, segment, flow key and hits; for any other offset, None. Then the whole batch at once gives the
    same answers."""
    c, cwalk = engine.cexplain, engine.cwalk
    assert c is not None and cwalk is not None
    results = cwalk.verify(exact(frame), link)
    failing = [] if results is None else [r for r in results if r.ok is False]
    offsets = [r.field for r in results or () if r.field is not None] + [len(frame) + 1]
    copies = [exact(frame) for _ in offsets]
    every = c.wrong_all(copies, [link] * len(offsets), offsets)
    assert len(every) == len(offsets), f"wrong_all answered {len(every)} for {len(offsets)} packets"
    for at, got in zip(offsets, every):
        if len(failing) != 1 or at != failing[0].field:
            assert got is None, f"wrong_all answered {got!r} at {at} for failing fields {failing!r}"
    typed = c.wrong_all([exact(frame) for _ in offsets], [link] * len(offsets), offsets, fast.Wrong)
    assert [None if t is None else (type(t), t[1:]) for t in typed] == \
        [None if t is None else (fast.Wrong, t[1:]) for t in every], "wrong_all made as Wrong and as tuples differ"
    for at, got in zip(offsets, every):
        one = c.wrong_all([exact(frame)], [link], [at])[0]  # past the packet itself (its copy: another object)
        assert (one is None) == (got is None) and (got is None or one[1:] == got[1:]), \
            f"wrong_all at {at}: batch and one differ"
        if got is None:
            continue
        r = failing[0]
        w = fast.wrong(frame, link, r)
        assert w is not None and w.at == got[1] == r.field, f"wrong_all answered {got!r} for {r!r}"
        stack = walk(memoryview(frame), link)
        f = next(f for f in stack.fields if f.at == r.field)
        ip = carrier(stack, f)
        assert ip is not None, "wrong_all answered for a field no IP header carries"
        python = [g for g in hypotheses.alone(frame, stack, f, r, ip) if g.value == r.stored and g.value != r.computed]
        assert_equal((w.start, w.end, w.key, _texts(w.hits), w.causes),
                     (*f.covers[0], flow_key(frame, ip, f), _texts(python), tuple(g.cause for g in python)),
                     f"wrong_all({r.layer} at {r.field})")


def _arbitrary(data: bytes, frame: bytes) -> None:
    """``alone`` with offsets the input picks: None or hypotheses, nothing read outside the frame."""
    c = engine.cexplain
    assert c is not None
    head = data[:len(OFFSETS) + 4].ljust(len(OFFSETS) + 4, b"\0")
    n = len(frame)
    where = {name: head[k] * (n + 9) // 255 - 4 for k, name in enumerate(OFFSETS)}
    size = (4, 16, head[-4] & 31)[head[-4] % 3]
    flags, proto, stored, computed = head[-3], head[-2], head[-1] << 8 | head[0], head[1] << 8 | head[2]
    got = c.alone(exact(frame), where["start"], where["end"], where["at"], where["src"], where["dst"], size,
                  where["length"], proto, stored, computed, flags, where["pad"], where["ip_total"], where["after"],
                  where["minimum"], where["l3"], where["l3_end"])
    assert got is None or all(isinstance(t, tuple) and len(t) == 5 for t in got), f"alone answered {got!r}"


def one_input(data: bytes) -> None:
    assert engine.cexplain is not None, "csum/engine/_explain.c is not built or CSUM_ENGINE is not c"
    if not data:
        return
    link, frame = LINKS[(data[0] & 0x3F) % len(LINKS)], data[1:]
    _compare(frame, link)
    _wrong(frame, link)
    _arbitrary(data, frame)
