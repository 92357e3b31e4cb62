"""csum.skb against the running kernel: skb->csum, csum_level and every helper's return value, number for number.

Expected values come from the running kernel (csum.kernel.skb_run: BPF_PROG_TEST_RUN of an assembled program
that makes the helper calls on one skb, CHECKSUM_COMPLETE through BPF_F_TEST_SKB_CHECKSUM_COMPLETE or
CHECKSUM_NONE, and reads skb->csum with bpf_csum_update(skb, 0)). A stale skb->csum is the kernel's EBADMSG.
Skipped, with the reason, where the kernel's helpers cannot be called. Case counts go to kernel_count_plugin.
"""

from __future__ import annotations

import errno
import functools
import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from csum import bpf, kernel
from csum.arch.profiles import profile
from csum.bpf.helpers import BpfMisuse
from csum.bpf.skb import DIFF, Skb
from csum.rewrite import rewrite
from csum.testing import packets, seeds, u32s

pytestmark = [
    pytest.mark.skipif(not kernel.available(), reason=f"csum.kernel: {kernel.why_unavailable()}"),
    pytest.mark.filterwarnings("ignore::csum.bpf.BpfMisuse"),  # the generated calls misuse flags on purpose
]

_SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
#: Generated cases per property (each case makes up to csum.kernel.MAX_OPS helper calls).
EXAMPLES = max(2000, settings().max_examples)
ETHER_HEADER = bytes.fromhex("020000000001020000000002")


def _arch():
    running = kernel.running_profile()
    return profile(running.name, kernel=f"{running.version[0]}.{running.version[1]}")


def _complete_supported() -> bool:
    try:
        kernel.skb_run(ETHER_HEADER + b"\x08\x00" + bytes(20), [], checksum_complete=True)
    except kernel.BpfError as exc:
        return exc.errno != errno.EINVAL
    return True


def _frame(ip_packet: bytes) -> bytes:
    return ETHER_HEADER + (b"\x08\x00" if ip_packet[0] >> 4 == 4 else b"\x86\xdd") + ip_packet


_FLAGS = st.one_of(
    st.sampled_from([0, 2, 4, 2 | bpf.BPF_F_PSEUDO_HDR, 4 | bpf.BPF_F_PSEUDO_HDR, bpf.BPF_F_PSEUDO_HDR,
                     bpf.BPF_F_PSEUDO_HDR | bpf.BPF_F_IPV6, 2 | bpf.BPF_F_MARK_MANGLED_0,
                     bpf.BPF_F_PSEUDO_HDR | bpf.BPF_F_MARK_MANGLED_0 | bpf.BPF_F_MARK_ENFORCE, 1 << 8, 3]),
    st.integers(0, 0xFF))
# The strategies of one call, built once: a strategy built inside a draw is validated again at each draw, which
# cost 20 of this test's 26 s.
_FRAMES = packets(max_payload=200).map(_frame)
_KINDS = st.sampled_from(["replace", "replace", "replace", "store", "diff", "update", "level"])
_HELPERS = st.sampled_from(["bpf_l3_csum_replace", "bpf_l4_csum_replace"])
_U32S = u32s()
_REPLACE_TO = st.one_of(st.just(DIFF), u32s())
_STORED = st.binary(min_size=1, max_size=16)
_STORE_FLAGS = st.sampled_from([0, 1, 1, 2, 3, 4])
_DIFFED = st.binary(max_size=16)
_SEEDS = seeds()
_UPDATES = st.one_of(st.just(0), u32s())
_LEVELS = st.sampled_from([0, 1, 1, 2, 3, 4, 1 << 40])


@functools.cache
def _replace_offsets(fields: tuple[int, ...], size: int) -> st.SearchStrategy[int]:
    """A replace's offset: a checksum field of the frame, or anywhere in (or just past) its ``size`` bytes."""
    return st.one_of(st.sampled_from(fields), st.integers(0, size + 2))


@st.composite
def _cases(draw: st.DrawFn) -> tuple[bytes, bool, list[tuple]]:
    """(frame, CHECKSUM_COMPLETE?, calls): an IPv4/IPv6 frame and up to MAX_OPS helper calls on it: replace at the
    checksum fields (or anywhere even/odd), stores at any offset with and without BPF_F_RECOMPUTE_CSUM, diffs
    feeding size-0 replaces, csum_update with corner values, csum_level."""
    frame, complete = draw(_FRAMES), draw(st.booleans())
    version = frame[14] >> 4
    l4 = 14 + (20 if version == 4 else 40)
    proto = frame[14 + 9] if version == 4 else frame[14 + 6]
    csum_at = l4 + {6: 16, 17: 6}.get(proto, 2)
    offsets = _replace_offsets((24, csum_at) if version == 4 else (csum_at,), len(frame))
    ops: list[tuple] = []
    for _ in range(draw(st.integers(1, kernel.MAX_OPS))):
        kind = draw(_KINDS)
        if kind == "replace":
            offset = draw(offsets)
            to = draw(_REPLACE_TO)
            frm = 0 if to == DIFF or draw(st.booleans()) else draw(_U32S)
            ops.append((draw(_HELPERS), offset, frm, to, draw(_FLAGS)))
        elif kind == "store":
            data = draw(_STORED)
            offset = draw(st.integers(0, len(frame)))
            ops.append(("bpf_skb_store_bytes", offset, data, draw(_STORE_FLAGS)))
        elif kind == "diff":
            ops.append(("bpf_csum_diff", draw(_DIFFED), draw(_DIFFED), draw(_SEEDS)))
        elif kind == "update":
            ops.append(("bpf_csum_update", draw(_UPDATES)))
        else:
            ops.append(("bpf_csum_level", draw(_LEVELS)))
    return frame, complete, ops


def _compare(frame: bytes, ops, complete: bool) -> None:
    theirs = kernel.skb_run(frame, ops, checksum_complete=complete)
    arch = _arch()
    skb = Skb.checksum_complete(frame, arch=arch) if complete else Skb(frame, arch=arch)
    mine = skb.run(ops)
    assert tuple(mine) == theirs.results, (ops, mine, theirs)
    assert skb.bpf_csum_update(0) == theirs.csum
    assert skb.bpf_csum_level(0) == theirs.csum_level
    assert (theirs.errno == errno.EBADMSG) == (not skb.csum_valid()), (ops, theirs)
    if theirs.packet is not None:
        assert bytes(skb.data) == theirs.packet


def test_skb_helpers_match_kernel_number_for_number(record_property):
    """Invariant: for generated IPv4/IPv6 frames and call sequences, every return value, the final skb->csum
    (bpf_csum_update(skb, 0)), the csum_level query, whether the kernel finds skb->csum stale (EBADMSG) and the
    bytes equal csum.skb's, on CHECKSUM_COMPLETE and CHECKSUM_NONE skbs. Expected: the running kernel."""
    if not _complete_supported():
        pytest.skip("BPF_F_TEST_SKB_CHECKSUM_COMPLETE is not supported by this kernel (Linux < 6.11)")
    count = 0

    @settings(max_examples=EXAMPLES, **_SETTINGS)
    @given(_cases())
    def check(case) -> None:
        nonlocal count
        frame, complete, ops = case
        _compare(frame, ops, complete)
        count += 1

    check()
    record_property("kernel_checked", count)


def test_rewrite_skb_csum_matches_kernel(record_property):
    """Invariant: the skb->csum Rewrite.skb() predicts is the kernel's after the same calls on a CHECKSUM_COMPLETE
    skb, and the kernel accepts it (no EBADMSG), for NAT of addresses, ports and TTL/hop limit. Expected: the
    running kernel."""
    if not _complete_supported():
        pytest.skip("BPF_F_TEST_SKB_CHECKSUM_COMPLETE is not supported by this kernel (Linux < 6.11)")
    count, arch = 0, _arch()

    @settings(max_examples=EXAMPLES // 2, **_SETTINGS)
    @given(packets(max_payload=300).map(_frame), st.data())
    def check(frame, data) -> None:
        nonlocal count
        size = 4 if frame[14] >> 4 == 4 else 16
        addr = st.one_of(st.none(), st.binary(min_size=size, max_size=size))
        port = st.one_of(st.none(), st.integers(0, 0xFFFF))
        has_ports = frame[14 + (9 if size == 4 else 6)] in (6, 17)
        which = data.draw(st.sampled_from(["saddr", "daddr"]))  # one address: at most MAX_OPS calls in all
        with warnings.catch_warnings():
            warnings.simplefilter("error", BpfMisuse)
            r = rewrite(frame, **{which: data.draw(addr)}, decrement_ttl=data.draw(st.booleans()),
                        sport=data.draw(port) if has_ports else None, arch=arch)
        ops = r.ops()
        assert len(ops) <= kernel.MAX_OPS
        theirs = kernel.skb_run(frame, ops)
        skb = r.skb(arch=arch)
        assert theirs.errno == 0 and skb.csum_valid()
        assert theirs.csum == skb.csum and theirs.packet == r.packet
        count += 1

    check()
    record_property("kernel_checked", count)


def test_rewrite_store_flags_follow_the_architecture_at_the_zero_corner():
    """Found by hypothesis (test_rewrite_skb_csum_matches_kernel): 0.0.0.0 -> 68.144.186.229 on IPv4/TCP makes the
    new packet's bytes sum to 0xffff, where lib/checksum.c's folded sum and x86_64's unfolded one hold skb->csum
    as the two different zeros. rewrite() chose BPF_F_RECOMPUTE_CSUM from a generic shadow skb, and on x86_64
    that store left skb->csum stale (the kernel's test run: EBADMSG). With the shadow on the rewrite's
    architecture the calls are the kernel's right ones. Any 132-byte TCP segment between zero addresses: the new
    pseudo-header (0x4490 + 0xbae5 + 6 + 132) is 0xffff. Expected: the running kernel (no EBADMSG, csum equal)."""
    from scapy.layers.inet import IP, TCP
    from scapy.layers.l2 import Ether

    if not _complete_supported():
        pytest.skip("BPF_F_TEST_SKB_CHECKSUM_COMPLETE is not supported by this kernel (Linux < 6.11)")
    arch = _arch()
    frame = bytes(Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") / IP(src="0.0.0.0", dst="0.0.0.0")
                  / TCP(sport=1, dport=2) / bytes(range(112)))
    r = rewrite(frame, saddr=b"D\x90\xba\xe5", arch=arch)
    theirs, skb = kernel.skb_run(frame, r.ops()), r.skb(arch=arch)
    assert theirs.errno == 0 and skb.csum_valid() and theirs.csum == skb.csum and theirs.packet == r.packet
