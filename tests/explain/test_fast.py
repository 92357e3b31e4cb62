"""csum/explain/fast.py (the C walker's stack, csum/engine/_explain.c ``wrong``) against its reference, the Python
path of csum/explain (the Python walker, :meth:`Context.add`, :func:`explain_result`): the expected values are the
Python path's, on packets tests/mistaken.py makes (scapy, each mistake injected by tests/oracle.py's arithmetic),
the same with random bit flips, and arbitrary bytes after an Ethernet header.

For a set of frames explained together (one capture), the context the fast path fills (each packet it covers
recorded from C, the others added by the Python walker) must hold the same flow keys, residuals and fits as the one
the Python path fills, and every wrong field must get the same explanation (cause and detail text); the facts the C
gives for one field (flow key, hits) must be the Python's.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mistaken import MAKERS, case, flip_bits, right_packet

from csum import engine
from csum.explain import Context, explain_result, fast, hypotheses
from csum.explain.flow import carrier, flow_key
from csum.layers import Result, Status, walk

pytestmark = pytest.mark.skipif(engine.CEXPLAIN is None or engine.CWALK is None,
                                reason="csum/engine/_explain.c or _cwalk.c is not built")

WRONG = (Status.BAD, Status.OFFLOAD)


def _wrong_fields(frame: bytes) -> list[Result]:
    """The bad and offload fields of a frame as the capture check reports them (the C walker's Results)."""
    results = engine.CWALK.verify(frame, 1)
    return [] if results is None else [r for r in results if r.status in WRONG]


def _compare(frames: list[bytes]) -> int:
    """Explain ``frames`` as one capture both ways; how many fields the fast path explained. The fast path's fields
    are recorded one at a time (``mixed``) and all at once (``bulk``, as ``verify --explain`` does), and explained
    each alone and with the decisions kept across the capture's fields (``memo``, as ``verify --explain`` does)."""
    with engine.use("c"):
        python, mixed, bulk = Context(), Context(), Context()
        by_c: dict[int, fast.Wrong] = {}
        for k, frame in enumerate(frames):
            python.add(frame, 1, k + 1)
            wrong = _wrong_fields(frame)
            w = fast.wrong(frame, 1, wrong[0]) if len(wrong) == 1 else None
            if w is None:
                mixed.add(frame, 1, k + 1)
                bulk.add(frame, 1, k + 1)
            else:
                _same_facts(frame, wrong[0], w)
                fast.record(w, mixed)
                by_c[k] = w
        fast.record_all(list(by_c.values()), bulk)
        for context in (mixed, bulk):
            assert context.keys == python.keys
            assert context.residuals == python.residuals
            assert context.fits == python.fits
        explained = 0
        memo = fast.Memo()
        for k, frame in enumerate(frames):
            for r in _wrong_fields(frame):
                want = explain_result(frame, r, link=1, context=python)
                w = by_c.get(k)
                if w is not None and not fast.paired(w, mixed):
                    got = [fast.explain(w, r, mixed), fast.explain(w, r, bulk, memo)]
                    explained += 1
                else:
                    got = [explain_result(frame, r, link=1, context=mixed)]
                for e in got:
                    assert (e.cause, e.detail) == (want.cause, want.detail), (k, r)
    return explained


def _same_facts(frame: bytes, r: Result, w: fast.Wrong) -> None:
    """The C's facts for one field equal the Python walker's: the flow key and the hypotheses that fit alone."""
    stack = walk(memoryview(frame), 1)
    f = next(f for f in stack.fields if f.at == r.field)
    ip = carrier(stack, f)
    assert ip is not None and f.covers == ((w.start, w.end),)
    assert w.key == flow_key(frame, ip, f)
    reference = [g for g in hypotheses.alone(frame, stack, f, r, ip) if g.value == r.stored and g.value != r.computed]
    assert [(g.cause, g.value, g.detail) for g in w.hits] == [(g.cause, g.value, g.detail) for g in reference]


@pytest.mark.parametrize("name", sorted(MAKERS))
def test_each_mistake(name: str) -> None:
    """40 cases of each mistake, with what the capture holds besides (the packet before, the flow's others)."""
    rng = random.Random(f"fast-{name}")
    frames = []
    for _ in range(40):
        c = case(name, rng)
        frames += [*([c.before] if c.before else []), *c.others, c.frame]
    _compare(frames)


def test_the_fast_path_is_taken() -> None:
    """The mistakes a plain TCP/UDP packet carries go the C's way (so the comparisons above compare something)."""
    rng = random.Random(11)
    frames = [case(name, rng).frame for name in ("not-complemented", "byte-order", "odd-byte-dropped",
                                                 "length-wrong", "padding-summed") for _ in range(10)]
    assert _compare(frames) >= 45


def test_declines_what_it_does_not_cover() -> None:
    """Transmit offload, UDP over IPv6 stored as 0, an IPv4 header checksum: the Python path's."""
    rng = random.Random(3)
    for name in ("offload", "udp0-not-mangled", "ttl-not-updated"):
        c = case(name, rng)
        wrong = _wrong_fields(c.frame)
        assert wrong and all(fast.wrong(c.frame, 1, r) is None for r in wrong), name


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 6), st.integers(1, 12))
def test_bit_flips(seed: int, flips: int, flows: int) -> None:
    """Packets of a few flows, each with a few bits flipped (some in the same place: a flow's shared residual)."""
    rng = random.Random(seed)
    templates = [right_packet(rng) for _ in range(flows)]
    _compare([flip_bits(rng.choice(templates), random.Random(seed % 7), flips) for _ in range(24)])


@settings(max_examples=200, deadline=None)
@given(st.binary(min_size=14, max_size=200))
def test_arbitrary_bytes(data: bytes) -> None:
    _compare([b"\x02\0\0\0\0\x02\x02\0\0\0\0\x01\x08\x00" + data, b"\x02\0\0\0\0\x02\x02\0\0\0\0\x01\x86\xdd" + data])


def _verify_json(path: str, capsys: pytest.CaptureFixture[str], name: str, *extra: str) -> dict:
    """``csum verify PATH --explain --json`` with every wrong field listed, under engine ``name``."""
    import json

    from csum.cli import main

    with engine.use(name):
        main(["verify", path, "--explain", "--json", "--show", "100000", "--jobs", "1", *extra])
    doc = json.loads(capsys.readouterr().out)
    doc.pop("fast_path")  # the packets the C walker checked: 0 under the Python engine
    return doc


def test_a_capture_explained_in_bulk_as_one_by_one(tmp_path, capsys) -> None:
    """``verify --explain`` on a capture (csum/explain/capture.py: the fast path's fields judged once per flow key,
    variants and residual, the summary counted over columns, each explanation made when read) against the same
    capture under the Python engine, where every field takes the reference path (the Python walker, explain_result,
    one field at a time). Expected: the same JSON, every field's cause and detail, the causes in the same order, the
    groups per flow, and the --by host verdicts. The capture: each mistake of tests/mistaken.py on several flows
    (shared residuals: the flow pins causes), the packet before a NAT, bit flips, right packets between them."""
    from scapy.layers.l2 import Ether
    from scapy.utils import wrpcap

    rng = random.Random(42)
    frames: list[bytes] = []
    for name in sorted(MAKERS):
        for _ in range(4):
            c = case(name, rng)
            frames.append(right_packet(rng))
            if c.before is not None:
                frames.append(c.before)
            frames.extend(c.others or [c.frame])
    frames += [flip_bits(right_packet(rng), rng, 1 + k % 3) for k in range(60)]
    path = str(tmp_path / "mixed.pcap")
    wrpcap(path, [Ether(f) for f in frames])
    for extra in ((), ("--by", "host")):
        got = _verify_json(path, capsys, "c", *extra)
        assert got["explain"]["causes"] and got == _verify_json(path, capsys, "python", *extra)
