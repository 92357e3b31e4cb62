"""csum prog names the causes csum.rewrite cannot re-make: checksums a program computes from scratch, headers it
adds or removes, options it inserts, packets it translates between IPv4 and IPv6, XDP address changes without the
TCP/UDP update.

Each row compiles a program of tests/kernel/mistakes/ whose one mistake is known by construction (the define that
puts it in), runs it with csum.prog on the running kernel (BPF_PROG_TEST_RUN; tc programs also on a
CHECKSUM_COMPLETE skb) over 60 frames, and demands, as tests/kernel/test_mistake_table.py does:

* the checksums csum calls broken are exactly those scapy's recomputation disagrees with (prog_frames.scapy_bad);
* every broken packet's cause names the row's mistake (the cause id the define stands for), and that is the only
  cause named on every broken packet: no other mistake blamed.

The correct twins (the same programs without the mistake) must leave nothing broken (no false blame) and, for tc,
skb->csum valid. Skipped, with the reason, where clang, libbpf or BPF test runs are missing.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import prog_frames as pf
import pytest
from bpf_build import compile_bpf, why_not
from scapy.compat import raw
from scapy.layers.inet import IP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether

from csum.kernel import prog

pytestmark = pytest.mark.skipif(why_not() is not None, reason=str(why_not()))

MISTAKES = Path(__file__).resolve().parent / "mistakes"
COUNT = 60


def padded(maker: pf.Maker) -> pf.Maker:
    """``maker``'s frames padded with zeros to Ethernet's 60-byte minimum (as a NIC pads short frames)."""
    return lambda r: (lambda f: f + bytes(max(0, 60 - len(f))))(maker(r))


def short_tcp4(r: random.Random) -> bytes:
    """A TCP segment with at most 5 bytes of payload: the frame is shorter than 60 bytes (padded: padding.)"""
    return raw(pf.ETHER / IP(src=pf._a4(r), dst=pf._a4(r)) / pf.TCP(**pf._ports(r)) / r.randbytes(r.randrange(6)))


def odd(layer: type) -> pf.Maker:
    """IPv4 TCP or UDP with an odd-length payload whose last byte is not 0 (dropping it changes the sum)."""
    return lambda r: raw(pf.ETHER / IP(src=pf._a4(r), dst=pf._a4(r)) / layer(**pf._ports(r))
                         / (r.randbytes(2 * r.randrange(20)) + bytes([r.randrange(1, 256)])))


def with_id(maker: pf.Maker) -> pf.Maker:
    """``maker``'s frames with a random IPv4 id (scapy recomputes the header checksum)."""
    def make(r: random.Random) -> bytes:
        pkt = Ether(maker(r))
        pkt[IP].id = r.randrange(65536)
        del pkt[IP].chksum
        return raw(pkt)
    return make


def mapped6(r: random.Random) -> bytes:
    """IPv6 TCP or UDP between addresses of 2001:db8:64::/96 (those tc_nat46.c translates to IPv4)."""
    def address() -> str:
        return f"2001:db8:64::{r.randrange(65536):x}:{r.randrange(65536):x}"
    return raw(pf.ETHER / IPv6(src=address(), dst=address(), hlim=r.randrange(1, 256))
               / r.choice([pf.TCP, pf.UDP])(**pf._ports(r)) / pf._payload(r))


class Row(NamedTuple):
    source: str
    defines: tuple[str, ...]
    makers: list[pf.Maker]
    cause: str | None  # None: the correct twin


ROWS = {
    # sums computed from scratch: a loop recomputes the TCP/UDP checksum after an XDP SNAT
    "scratch-odd-byte-dropped": Row("xdp_scratch.c", ("ODD_DROPPED",), [odd(pf.TCP), odd(pf.UDP)],
                                     "odd-byte-dropped"),
    "scratch-single-fold": Row("xdp_scratch.c", ("SINGLE_FOLD",), [pf.tcp4, pf.udp4], "single-fold"),
    "scratch-not-complemented": Row("xdp_scratch.c", ("NOT_COMPLEMENTED",), [pf.tcp4, pf.udp4], "not-complemented"),
    "scratch-no-pseudo-header": Row("xdp_scratch.c", ("NO_PSEUDO",), [pf.tcp4, pf.udp4], "no-pseudo-header"),
    "scratch-padding-summed": Row("xdp_scratch.c", ("PADDING",), [padded(short_tcp4)], "padding-summed"),
    "scratch": Row("xdp_scratch.c", (), [pf.tcp4, pf.udp4, padded(short_tcp4), odd(pf.TCP), odd(pf.UDP)], None),
    # added headers: an outer IPv4 header pushed with bpf_xdp_adjust_head
    "push-single-fold": Row("xdp_push.c", ("SINGLE_FOLD",), [with_id(pf.tcp4), with_id(pf.udp4)], "single-fold"),
    "push-not-complemented": Row("xdp_push.c", ("NOT_COMPLEMENTED",), [pf.tcp4, pf.udp4], "not-complemented"),
    "push-inner-ttl": Row("xdp_push.c", ("INNER_TTL",), [pf.tcp4, pf.udp4], "ttl-not-updated"),
    "push": Row("xdp_push.c", (), [with_id(pf.tcp4), pf.udp4], None),
    "push-inner-ttl-ok": Row("xdp_push.c", ("INNER_TTL_OK",), [pf.tcp4, pf.udp4], None),
    # removed headers: an outer IPv4 header popped, the inner TTL decremented
    "pop-ttl-not-updated": Row("xdp_pop.c", ("TTL_NOT_UPDATED",), [pf.ipip4], "ttl-not-updated"),
    "pop": Row("xdp_pop.c", (), [pf.ipip4], None),
    # IPv4 -> IPv6 translation with bpf_skb_change_proto
    "nat64-l4-not-patched": Row("tc_nat64.c", ("L4_NOT_PATCHED",), [pf.tcp4, pf.udp4], "l4-not-patched"),
    "nat64-diff-size-wrong": Row("tc_nat64.c", ("DIFF_SIZE",), [pf.tcp4, pf.udp4], "diff-size-wrong"),
    "nat64": Row("tc_nat64.c", (), [pf.tcp4, pf.udp4], None),
    # IPv6 -> IPv4
    "nat46-l4-not-patched": Row("tc_nat46.c", ("L4_NOT_PATCHED",), [mapped6], "l4-not-patched"),
    "nat46-diff-size-wrong": Row("tc_nat46.c", ("DIFF_SIZE",), [mapped6], "diff-size-wrong"),
    "nat46": Row("tc_nat46.c", (), [mapped6], None),
    # grown: an IPv4 option inserted with bpf_skb_adjust_room(BPF_ADJ_ROOM_NET), the lengths updated
    "ip-option-csum-kept": Row("tc_ip_option.c", ("CSUM_KEPT",), [pf.tcp4, pf.udp4], "ip-field-not-updated"),
    "ip-option": Row("tc_ip_option.c", (), [pf.tcp4, pf.udp4], None),
    # XDP address change, the TCP checksum moved with bpf_csum_diff (or not)
    "xdp-nat6-l4-not-patched": Row("xdp_nat6.c", ("L4_NOT_PATCHED",), [pf.tcp6], "l4-not-patched"),
    "xdp-nat6": Row("xdp_nat6.c", (), [pf.tcp6], None),
}


def judged(name: str, source: str, defines: tuple[str, ...], makers: list[pf.Maker], causes: tuple[str, ...],
           tmp_path: Path, bad: Callable[[bytes, bytes], set[tuple[str, int]]] = pf.scapy_bad) -> tuple[int, str]:
    """Runs the program of ``source`` built with ``defines`` on COUNT frames of ``makers``: the checksums broken are
    ``bad``'s, every broken packet's causes include ``causes`` and are all reproduced, the causes named on every
    broken packet are exactly ``causes`` (none: nothing broken, skb->csum kept valid); (broken packets, kind)."""
    obj = compile_bpf(MISTAKES / source, tmp_path / f"{name}.o", *defines)
    counts: dict[str, int] = {}
    broken = 0
    with prog.load(str(obj)) as program:
        for seed, frame in enumerate(pf.frames(makers, COUNT, seed=len(name))):
            run = program.run(frame)
            found = {(c.layer, c.offset) for c in run.broken if c.layer != prog.SKB_CSUM}
            assert found == bad(frame, run.packet), (seed, frame.hex())
            if program.kind == "tc" and not causes:
                assert run.stale is not True, (seed, frame.hex())
            if run.broken:
                broken += 1
                assert run.finding is not None and set(causes) <= set(run.finding.causes), (seed, run.finding)
                checks = [c for c in run.broken if c.layer != prog.SKB_CSUM]
                assert all(c.cause and c.cause.startswith("reproduced") for c in checks), checks
                for cause in run.finding.causes:
                    counts[cause] = counts.get(cause, 0) + 1
    if not causes:
        assert broken == 0
    else:
        assert broken >= COUNT // 3, f"the mistake shows on {broken} of {COUNT} packets only"
        assert sorted(c for c, n in counts.items() if n == broken) == sorted(causes), counts
    return broken, program.kind


@pytest.mark.parametrize("name", sorted(ROWS))
def test_cause_is_named_exactly(name, tmp_path, record_property):
    """One program, one mistake: broken fields as scapy finds them, the row's cause on every broken packet and no
    other cause on all of them; the twins break nothing (see the module docstring)."""
    row = ROWS[name]
    _, kind = judged(name, row.source, row.defines, row.makers, (row.cause,) if row.cause else (), tmp_path)
    record_property("kernel_checked", COUNT * (2 if kind == "tc" else 1))
