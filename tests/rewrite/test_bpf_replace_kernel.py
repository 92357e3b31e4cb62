"""bpf_l3/l4_csum_replace emulation and csum.rewrite against the running kernel, on real packets.

Expected values come from the running kernel's helpers (net/core/filter.c) through
csum.kernel (BPF_PROG_TEST_RUN on a CHECKSUM_NONE skb). Skipped, with
csum.kernel.why_unavailable() as the reason, where that cannot run.
"""

from __future__ import annotations

import functools

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from scapy.compat import raw
from scapy.layers.inet import ICMP, IP, UDP
from test_rewrite import ETHER, KINDS, Case, build, cases, corner_adjust, field_change

from csum import bpf
from csum.arch.profiles import profile
from csum.rewrite import CsumDiffCall, CsumReplaceCall, StoreBytesCall, rewrite, set_field

kernel = pytest.importorskip("csum.kernel")
pytestmark = pytest.mark.skipif(not kernel.available(), reason=f"csum.kernel: {kernel.why_unavailable()}")

_SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
_MAX_KERNEL_PACKET = 3712  # csum.kernel's test-run limit


def _ipv6_flag_known() -> bool:
    """Whether the running kernel accepts BPF_F_IPV6 (include/uapi/linux/bpf.h, 2025) in bpf_l4_csum_replace."""
    rc, _ = kernel.l4_csum_replace(bytes(64), 20, 0, 0, bpf.BPF_F_IPV6 | bpf.BPF_F_PSEUDO_HDR)
    return rc == 0


def replay_on_kernel(packet: bytes, calls) -> bytes:
    """Run the recorded calls with the kernel's helpers (stores are plain byte writes); every call returns 0.

    A size-0 call gets what the kernel's bpf_csum_diff returned for the preceding diff: on Linux >= 6.13
    that must equal the value recorded for the running architecture (``rewrite(arch=RUNNING)``); a legacy
    kernel returns another number for the same checksum change. BPF_F_IPV6 is dropped on kernels that
    predate it (it never changes the bytes).
    """
    buf, diff, strip = bytes(packet), None, 0 if _ipv6_flag_known() else bpf.BPF_F_IPV6
    homogenized = kernel.running_profile().csum_diff_kind == "homogenized"
    for call in calls:
        if isinstance(call, CsumDiffCall):
            diff = kernel.bpf_csum_diff(call.frm, call.to, call.seed)
            if homogenized:
                assert diff == call.result
        elif isinstance(call, CsumReplaceCall):
            run = kernel.l3_csum_replace if call.helper == "bpf_l3_csum_replace" else kernel.l4_csum_replace
            size0 = call.flags & bpf.BPF_F_HDR_FIELD_MASK == 0
            rc, buf = run(buf, call.offset, call.frm, diff if size0 else call.to, call.flags & ~strip)
            assert rc == 0, call
        else:
            assert isinstance(call, StoreBytesCall)
            buf = buf[:call.offset] + call.to + buf[call.offset + len(call.to):]
    return buf


def _running_arch():
    running = kernel.running_profile()
    return profile(running.name, kernel=f"{running.version[0]}.{running.version[1]}")


def _ether_case(case: Case) -> Case:
    case.ether, case.as_scapy = True, False
    return case


@pytest.mark.parametrize(("version", "l4"), KINDS, ids=[f"ipv{v}-{k}" for v, k in KINDS])
def test_rewrite_replayed_on_kernel(version, l4):
    """Invariant: csum.rewrite's recorded calls, run by the kernel's own helpers on the original frame, give
    the bytes csum.rewrite returned (addresses, ports, TTL, fields; 0x0000 corners; UDP zero handling).
    Expected: the running kernel."""
    arch = _running_arch()

    @settings(max_examples=300, **_SETTINGS)  # scapy builds dominate; the 2,000-example sweep is test_rewrite
    @given(case=cases(version, l4).map(_ether_case))
    @example(case=Case(4, "udp", True, {"src": "0.0.0.0", "dst": "255.255.255.255"}, [], {"sport": 0, "dport": 0},
                       b"", None, None, "0.0.0.0", None, None, False, None, b"", False))  # x86_64 diff is 0, not 0xffff
    def check(case: Case) -> None:
        orig = raw(build(case, corner_adjust(case) if case.adjust else None))
        result = rewrite(orig, saddr=case.saddr, daddr=case.daddr, sport=case.sport, dport=case.dport,
                         decrement_ttl=case.ttl, fields=field_change(case, len(orig)), arch=arch)
        assert replay_on_kernel(orig, result.calls).hex() == result.packet.hex()

    check()


def test_icmpv4_all_zero_gives_0000_on_kernel():
    """The all-zero ICMPv4 corner: the kernel's bpf_l4_csum_replace also stores 0x0000 (not scapy's 0xffff)."""
    frame = raw(ETHER / IP(src="10.0.0.1", dst="10.0.0.2") / ICMP(type=0, id=0, seq=0x1234) / bytes(10))
    result = set_field(frame, 14 + 20 + 6, b"\0\0")
    assert result.packet[36:38] == b"\0\0"
    assert replay_on_kernel(frame, result.calls) == result.packet


def test_udp_ipv4_zero_checksum_kept_by_kernel():
    """A zero UDP/IPv4 checksum stays 0 under BPF_F_MARK_MANGLED_0 in the kernel too."""
    frame = raw(ETHER / IP(src="10.0.0.1", dst="10.0.0.2") / UDP(sport=1, dport=2, chksum=0) / b"abc")
    result = rewrite(frame, saddr="10.9.9.9", sport=7, arch=_running_arch())
    assert result.packet[40:42] == b"\0\0"
    assert replay_on_kernel(frame, result.calls) == result.packet


_FLAG_BITS = st.sampled_from([0, bpf.BPF_F_PSEUDO_HDR, bpf.BPF_F_MARK_MANGLED_0,
                              bpf.BPF_F_MARK_MANGLED_0 | bpf.BPF_F_MARK_ENFORCE, bpf.BPF_F_IPV6,
                              bpf.BPF_F_PSEUDO_HDR | bpf.BPF_F_MARK_MANGLED_0 | bpf.BPF_F_IPV6,
                              1 << 8, 1 << 9, 1 << 31])
_u32 = st.one_of(st.sampled_from([0, 1, 0xFFFF, 0x10000, 0xFFFFFFFF]), st.integers(0, 0xFFFFFFFF))


# What _calls_on_packet draws from, built once (or once per frame layout): a strategy is validated the first time it
# is drawn from, so one built at each draw is validated at each draw.
_CASES = {kind: cases(*kind) for kind in KINDS}
_VERSIONS = st.sampled_from([4, 6])
_L4S = st.sampled_from(["tcp", "udp", "icmp"])
_SIZES = st.one_of(st.sampled_from([0, 2, 4]), st.integers(0, 15))
_HELPERS = st.sampled_from(["l3", "l4"])


@functools.cache
def _checksum_fields(csums: tuple[int, ...]) -> st.SearchStrategy[int]:
    """One of a frame's checksum field offsets."""
    return st.sampled_from(csums)


@functools.cache
def _call_offsets(base: int, size: int) -> st.SearchStrategy[int]:
    """A call's offset in a ``size``-byte frame: a checksum field at ``base``, one byte off it, at and past the
    frame's end, beyond 0xffff."""
    return st.one_of(st.just(base), st.sampled_from([base - 1, base + 1]),
                     st.sampled_from([size - 2, size - 1, size, size + 2]),
                     st.sampled_from([0xFFFE, 0x10000, 0xFFFFFFFE]))


@st.composite
def _calls_on_packet(draw):
    """A generated Ethernet frame and eight helper calls on it: at its checksum fields, one byte off them (odd),
    at and past its end, beyond 0xffff; sizes 0/2/4 and invalid ones; a checksum field zeroed now and then."""
    case = draw(_CASES[draw(_VERSIONS), draw(_L4S)])
    frame = bytearray(raw(build(_ether_case(case))))
    csums = [14 + 10] if case.version == 4 else []
    l4_off = len(frame) - ((20 + (4 if case.l4_fields.get("options") else 0)) if case.l4 == "tcp" else 8) \
        - len(case.payload)
    csums.append(l4_off + {"tcp": 16, "udp": 6, "icmp": 2}[case.l4])
    fields = _checksum_fields(tuple(csums))
    if draw(st.booleans()):
        at = draw(fields)
        frame[at:at + 2] = b"\0\0"
    calls = []
    for _ in range(8):
        offset = draw(_call_offsets(draw(fields), len(frame)))
        size = draw(_SIZES)
        frm = 0 if size == 0 and draw(st.booleans()) else draw(_u32)
        calls.append((draw(_HELPERS), offset, frm, draw(_u32), size | draw(_FLAG_BITS)))
    return bytes(frame), calls


@pytest.mark.filterwarnings("ignore::csum.bpf.BpfMisuse")  # generated calls misuse flags on purpose
def test_replace_return_codes_and_bytes_on_packets():
    """Invariant: on generated IPv4/IPv6 frames, bpf_l3/l4_csum_replace emulations return the kernel's code
    (0, -EINVAL for bad flags/sizes or non-zero from with size 0, -EFAULT for odd offsets, offsets past the
    end or > 0xffff) and leave the same bytes, call after call. Expected: the running kernel."""

    @settings(max_examples=400, **_SETTINGS)  # 8 calls per example: 3,200 kernel calls
    @given(_calls_on_packet())
    def check(case) -> None:
        frame, calls = case
        mine, theirs = bytearray(frame), frame
        for which, offset, frm, to, flags in calls:
            emulate = bpf.bpf_l3_csum_replace if which == "l3" else bpf.bpf_l4_csum_replace
            run = kernel.l3_csum_replace if which == "l3" else kernel.l4_csum_replace
            rc, theirs = run(theirs, offset, frm, to, flags)
            assert emulate(mine, offset, frm, to, flags) == rc, (which, offset, frm, to, hex(flags))
            assert bytes(mine) == theirs

    check()
