"""csum.explain against packets whose mistake is known: made by tests/mistaken.py (scapy builds the packet, the
mistake is made with tests/oracle.py's naive RFC 1071 arithmetic, never with csum's code), and random bit flips.

The bars (issue 32): for each cause, the right cause on at least 99% of its wrong fields and a wrong specific cause
on at most 0.1%; random bit flips get a specific cause on at most 1%. ``CSUM_EXPLAIN_CASES`` sets the cases per
generator (default 100; the numbers in docs/explain.md are from 1000).
"""

from __future__ import annotations

import os
import random

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from mistaken import MAKERS, WEAK_ALONE, Case, case, flip_bits, right_packet

from csum import inet
from csum.errors import CsumValueError
from csum.explain import CAUSES, NOT_CAUSES, Context, Explanation, explain, explain_result, what
from csum.layers import Reason, Result
from csum.rewrite.mistakes import Mistake

N = int(os.environ.get("CSUM_EXPLAIN_CASES", "100"))
#: Generators whose mistake another mistake reproduces exactly on part of the packets (then "unexplained", both
#: listed): ECN marked CE without an update (1 or 2 off) and a header checksum summed without the end-around carry
#: (as many off as carries lost, 1 to 3 in a 20-byte header) fit the same flows in about 40% of them.
AMBIGUOUS = {"tos-ecn-ce-flow": 0.5}


def run(c: Case) -> Explanation | None:
    """The explanation csum gives for the case's field, with what the case says is known besides."""
    ctx = None
    if c.others:
        ctx = Context()
        for k, other in enumerate(c.others):
            ctx.add(other, frame=k + 1)
    if c.reassembled is not None:
        layer, header, right = c.reassembled
        stored = int.from_bytes(c.frame[c.at:c.at + 2], "big")
        return explain_result(c.frame, Result(layer, header, stored, right, False, Reason.MISMATCH, c.at), context=ctx)
    return next((e for r, e in explain(c.frame, before=c.before, context=ctx) if r.field == c.at), None)


def test_cause_table() -> None:
    """Every id is unique and in docs/explain.md's table as csum.explain.causes has it; every mistake csum prog names
    is a cause (expected: the Mistake enum of csum/rewrite/mistakes.py, and the page's text)."""
    ids = [c.id for c in (*CAUSES, *NOT_CAUSES)]
    assert len(ids) == len(set(ids))
    assert {m.value for m in Mistake} <= set(ids)
    page = (__import__("pathlib").Path(__file__).resolve().parents[2] / "docs" / "explain.md").read_text()
    for c in (*CAUSES, *NOT_CAUSES):
        assert f"| `{c.id}` | {c.what} | {c.example} |" in page, c.id
        assert what(c.id) == c.what


@pytest.mark.parametrize("name", sorted(set(MAKERS) - set(WEAK_ALONE)))
def test_each_cause(name: str) -> None:
    """The right cause on >= 99% of the generator's wrong fields, a wrong specific cause on none (<= 0.1%); expected
    cause: the one tests/mistaken.py injected. (The mistakes one bit away from the right checksum are measured on
    their flows, the -flow generators; alone, test_weak_alone_never_wrong.)"""
    rng = random.Random(f"explain-{name}")
    right = wrong = listed = 0
    for _ in range(N):
        c = case(name, rng)
        e = run(c)
        assert e is not None, "the injected mistake left the field right: the generator's bug"
        if e.cause == c.cause:
            right += 1
        elif e.named:
            wrong += 1
        elif c.cause in e.detail:
            listed += 1
    assert wrong <= N * 0.001
    assert right >= N * (1 - AMBIGUOUS.get(name, 0.01))
    assert right + listed >= N * 0.99


@pytest.mark.parametrize("name", WEAK_ALONE)
def test_weak_alone_never_wrong(name: str) -> None:
    """On one packet alone, a mistake one bit away from the right checksum is named rightly or not at all (expected
    cause: the injected one)."""
    rng = random.Random(f"alone-{name}")
    for _ in range(N):
        c = case(name, rng)
        c.others = []
        e = run(c)
        assert e is not None and (e.cause == c.cause or not e.named), (e, c.cause)


def test_bit_flips_rarely_named() -> None:
    """Right packets (scapy's checksums) with 1 to 3 random bits flipped: a specific cause on <= 1% of the wrong
    fields, alone and with their flow as context (expected: no cause; the flips are csum-independent random)."""
    rng = random.Random("flips")
    fields = named = 0
    for _ in range(N * 5):
        for _r, e in explain(flip_bits(right_packet(rng), rng, rng.randrange(1, 4))):
            fields += 1
            named += e.named
    for _ in range(N // 2):
        seed = rng.getrandbits(32)
        frames = [flip_bits(right_packet(random.Random(seed)), rng, rng.randrange(1, 4))
                  for _ in range(rng.randrange(2, 20))]
        ctx = Context()
        for frame in frames:
            ctx.add(frame)
        for frame in frames:
            for _r, e in explain(frame, context=ctx):
                fields += 1
                named += e.named
    assert fields > N * 5
    assert named <= fields * 0.01


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(sorted(MAKERS)), st.integers(0, 2**32 - 1))
# found by Hypothesis (2026-12-05): a NAT flow's field whose stored bytes also equal one length-wrong hypothesis by
# chance; the flow's shared residual contests it (several mistakes give these bytes), never length-wrong alone
@example("l4-not-patched-flow", 478)
def test_never_a_wrong_cause(name: str, seed: int) -> None:
    """Any generator, any seed: the cause named is the injected one or none (expected: tests/mistaken.py's)."""
    c = case(name, random.Random(seed))
    e = run(c)
    assert e is not None and (e.cause == c.cause or not e.named), (name, e)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_explanation_keeps_the_verdict(seed: int) -> None:
    """The explained fields are exactly the bad and offload ones csum.inet.verify reports, with the same Result
    (expected: inet.verify, the verdict explain must not change); where inet.verify finds the packet malformed,
    explain answers without raising."""
    rng = random.Random(seed)
    frame = flip_bits(right_packet(rng), rng, rng.randrange(0, 3))
    try:
        results = inet.verify(frame, link="ethernet")
    except CsumValueError:
        assert all(isinstance(e, Explanation) for _, e in explain(frame))
        return
    wrong = [r for r in results if r.status.value in ("bad", "offload")]
    assert [r for r, _ in explain(frame)] == wrong


def test_right_packet_has_nothing_to_explain() -> None:
    """A packet scapy built right: no wrong field, no explanation."""
    assert explain(right_packet(random.Random(1))) == []


def test_malformed_packet_cannot_be_judged() -> None:
    """A frame cut inside its IPv4 header (14 + 10 bytes of a 20-byte header): the explainer says it cannot judge
    (expected: the header needs 20 bytes, RFC 791)."""
    frame = right_packet(random.Random(2))[:24]
    out = explain(frame)
    assert [e.cause for _, e in out] == ["cannot-judge"]
    assert "does not parse" in out[0][1].detail
