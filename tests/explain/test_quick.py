"""csum/engine/_explain.c (driven by csum/explain/quick.py) against its reference, the Python hypotheses of
csum/explain/hypotheses.py ``alone``: the expected values are the Python's, on packets tests/mistaken.py makes
(scapy, each mistake injected by tests/oracle.py's arithmetic), the same with random bit flips, and arbitrary bytes.

Every hypothesis is compared, hit or not (the C asked for all of them: same variants, values and texts, in the same
order), and the hits the explainer uses (:func:`csum.explain.hypotheses.fitting` with the C, against the Python
alone). Where the C declines (None), the Python answers: that is tested too, on the fields it must decline.
"""

from __future__ import annotations

import dataclasses
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mistaken import MAKERS, case, flip_bits, right_packet

from csum import engine
from csum.explain import hypotheses, quick
from csum.explain.flow import carrier
from csum.layers import Reason, walk
from csum.layers.check import judge

pytestmark = pytest.mark.skipif(engine.CEXPLAIN is None, reason="csum/engine/_explain.c is not built")


def _compare(frame: bytes) -> int:
    """Every field of ``frame``: the C's hypotheses equal the Python's; how many fields the C covered."""
    stack = walk(memoryview(frame), "ethernet")
    covered = 0
    with engine.use("c"):
        for f in stack.fields:
            r = judge(memoryview(frame), f)
            ip = carrier(stack, f)
            ok = f.pseudo is None or ip is None or hypotheses.header_ok(frame, stack, ip)
            every = quick.hypotheses(frame, f, ip, ok, -1, -1)
            if every is None:
                continue
            covered += 1
            reference = list(hypotheses.alone(frame, stack, f, dataclasses.replace(r, stored=None), ip))
            reference = [g for g in reference if g.cause != "udp0-not-mangled"]
            assert [(g.cause, g.value, g.detail) for g in every] == [(g.cause, g.value, g.detail) for g in reference]
            fast = hypotheses.fitting(frame, stack, f, r, ip)
            python = [g for g in hypotheses.alone(frame, stack, f, r, ip) if g.value == r.stored
                      and g.value != r.computed]
            assert [(g.cause, g.value, g.detail) for g in fast] == [(g.cause, g.value, g.detail) for g in python]
    return covered


@pytest.mark.parametrize("name", sorted(MAKERS))
def test_each_mistake(name: str) -> None:
    rng = random.Random(f"quick-{name}")
    covered = 0
    for _ in range(40):
        c = case(name, rng)
        for frame in (c.frame, *c.others, *([c.before] if c.before else [])):
            covered += _compare(frame)
    assert covered  # every generator makes fields the C covers


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 6))
def test_bit_flips(seed: int, flips: int) -> None:
    rng = random.Random(seed)
    _compare(flip_bits(right_packet(rng), rng, flips))


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**32 - 1), st.binary(min_size=0, max_size=64))
def test_padding_and_tails(seed: int, tail: bytes) -> None:
    """Frames with bytes after the datagram (padding, zero or not, odd or even) and a random TTL/TOS."""
    rng = random.Random(seed)
    frame = bytearray(right_packet(rng) + tail)
    if frame[12:14] == b"\x08\x00":
        frame[14 + 1] = rng.randrange(256)
        frame[14 + 8] = rng.randrange(256)
    _compare(bytes(frame))


@settings(max_examples=200, deadline=None)
@given(st.binary(min_size=14, max_size=200))
def test_arbitrary_bytes(data: bytes) -> None:
    _compare(b"\x02\0\0\0\0\x02\x02\0\0\0\0\x01\x08\x00" + data)


def test_declines_what_it_does_not_cover() -> None:
    """UDP over IPv6 stored as 0 (udp0-not-mangled is the Python's alone), and every field without the C engine."""
    rng = random.Random(5)
    c = case("udp0-not-mangled", rng)
    stack = walk(memoryview(c.frame), "ethernet")
    f = next(f for f in stack.fields if f.at == c.at)
    r = judge(memoryview(c.frame), f)
    assert r.reason is Reason.UDP6_ZERO
    with engine.use("c"):
        assert quick.fitting(c.frame, f, r, carrier(stack, f), True) is None
        assert [g.cause for g in hypotheses.fitting(c.frame, stack, f, r, carrier(stack, f))] == ["udp0-not-mangled"]
    with engine.use("python"):
        c = case("not-complemented", rng)
        stack = walk(memoryview(c.frame), "ethernet")
        f = next(f for f in stack.fields if f.at == c.at)
        assert quick.fitting(c.frame, f, judge(memoryview(c.frame), f), carrier(stack, f), True) is None
