"""csum prog names the cause on programs shaped like public ones' checksum code, each with one mistake of the kind
programmers make (the programs are the project's own, written for these tests; the public code each mirrors is named
in its row's comment).

As tests/kernel/test_prog_explained.py does: each row compiles a program of tests/kernel/mistakes/ whose one mistake
is known by construction (the define that puts it in), runs it with csum.prog on the running kernel
(BPF_PROG_TEST_RUN; tc programs also on a CHECKSUM_COMPLETE skb), and demands:

* the checksums csum calls broken are exactly those scapy's recomputation disagrees with (prog_frames.scapy_bad),
  plus a UDP checksum of 0 over IPv6, which scapy takes for "none" and RFC 8200 8.1 forbids;
* every broken packet's causes include the row's, and the causes named on every broken packet are exactly the
  row's: where two simulated mistakes give the same bytes on every packet (a checksum over the first 18 bytes of a
  header is the header with its last word still 0), the row lists both, as csum prog does.

The correct twins (no define) leave nothing broken; a twin that scrambles its right checksum (SCRAMBLED: what
corruption looks like, no mistake a program makes) gets a specific cause on at most 1% of its packets. Skipped,
with the reason, where clang, libbpf or BPF test runs are missing.
"""

from __future__ import annotations

import random
from typing import NamedTuple

import prog_frames as pf
import pytest
from bpf_build import compile_bpf, why_not
from test_prog_explained import COUNT, MISTAKES, judged
from scapy.compat import raw
from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether

from csum.kernel import prog

pytestmark = pytest.mark.skipif(why_not() is not None, reason=str(why_not()))


def with_options(r: random.Random) -> bytes:
    """IPv4 TCP or UDP with IP options: a Router Alert (4 bytes) or a Record Route with one slot (8 bytes)."""
    options = b"\x94\x04\x00\x00" if r.random() < 0.5 else b"\x07\x07\x04" + bytes(4) + b"\x00"
    return raw(pf.ETHER / IP(src=pf._a4(r), dst=pf._a4(r), options=options, ttl=r.randrange(2, 256))
               / r.choice([pf.TCP, pf.UDP])(**pf._ports(r)) / pf._payload(r))


def syn(r: random.Random) -> bytes:
    """A TCP SYN whose first option is an MSS above 1300 (the clamp's), then a NOP and a window scale."""
    return raw(pf.ETHER / IP(src=pf._a4(r), dst=pf._a4(r))
               / TCP(flags="S", options=[("MSS", r.randrange(1301, 65536)), ("NOP", None), ("WScale", 7)],
                     **pf._ports(r)) / pf._payload(r))


def bad(before: bytes, after: bytes) -> set[tuple[str, int]]:
    """scapy's disagreements, plus every UDP checksum of 0 over IPv6 (RFC 8200 8.1: none is not allowed)."""
    out = pf.scapy_bad(before, after)
    pkt = Ether(after)
    if IPv6 in pkt and UDP in pkt[IPv6] and pkt[IPv6][UDP].chksum == 0:
        out.add(("udp", len(after) - len(raw(pkt[IPv6][UDP]))))
    return out


class Row(NamedTuple):
    source: str
    defines: tuple[str, ...]
    makers: list[pf.Maker]
    causes: tuple[str, ...]  # (): a correct twin


TCP_UDP = [pf.tcp4, pf.udp4]
ROWS = {
    # full NAT, bpf_csum_diff chains seeded with ~check (katran's/xdp-tutorial's csum_diff + fold helpers)
    "full-nat": Row("xdp_full_nat.c", (), TCP_UDP, ()),
    "full-nat-one-address": Row("xdp_full_nat.c", ("ONE_ADDR",), TCP_UDP, ("l4-not-patched",)),
    "full-nat-seed-raw": Row("xdp_full_nat.c", ("SEED_RAW",), TCP_UDP, ("seed-not-complemented",)),
    "full-nat-l4-skip": Row("xdp_full_nat.c", ("L4_SKIP",), TCP_UDP, ("l4-not-patched",)),
    # ICMP echo responder (xdp-tutorial packet-solutions' icmp_checksum_diff)
    "icmp-echo": Row("xdp_icmp_echo.c", (), [pf.icmp4_echo], ()),
    "icmp-echo-seed-raw": Row("xdp_icmp_echo.c", ("SEED_RAW",), [pf.icmp4_echo], ("seed-not-complemented",)),
    "icmp-echo-no-update": Row("xdp_icmp_echo.c", ("NO_UPDATE",), [pf.icmp4_echo], ("l4-field-not-updated",)),
    "icmp-echo-not-complemented": Row("xdp_icmp_echo.c", ("NO_COMPLEMENT",), [pf.icmp4_echo],
                                      ("not-complemented",)),
    # IPIP encap, outer header checksum from bpf_csum_diff(0, 0, iph, size) (katran's encap, xdp-tools' samples)
    "encap": Row("xdp_encap_short.c", (), TCP_UDP, ()),
    "encap-diff-short": Row("xdp_encap_short.c", ("SHORT",), TCP_UDP, ("coverage-short",)),
    "encap-loop-short": Row("xdp_encap_short.c", ("U16_LOOP_SHORT",), TCP_UDP,
                            ("coverage-short", "header-field-late")),
    # forwarder recomputing the IPv4 header checksum from scratch (ipv4_csum loops of xdp examples)
    "fwd-options": Row("xdp_fwd_options.c", (), [with_options], ()),
    "fwd-options-fixed-20": Row("xdp_fwd_options.c", ("FIXED20",), [with_options], ("coverage-short",)),
    # MSS clamp in tc (bpf_l4_csum_replace of the option word)
    "mss-clamp": Row("tc_mss_clamp.c", (), [syn], ()),
    "mss-clamp-no-update": Row("tc_mss_clamp.c", ("NO_UPDATE",), [syn], ("l4-field-not-updated",)),
    "mss-clamp-host-order": Row("tc_mss_clamp.c", ("HOST_ORDER",), [syn], ("byte-order",)),
    "mss-clamp-pseudo": Row("tc_mss_clamp.c", ("PSEUDO",), [syn], ("pseudo-hdr-on-port",)),
    # DSR: an IPv4 option inserted, header checksum moved by a bpf_csum_diff chain (cilium's dsr option)
    "dsr": Row("tc_dsr_option.c", (), TCP_UDP, ()),
    "dsr-no-option": Row("tc_dsr_option.c", ("NO_OPT",), TCP_UDP, ("coverage-short", "ip-field-not-updated")),
    "dsr-no-length": Row("tc_dsr_option.c", ("NO_LEN",), TCP_UDP, ("tot-len-not-updated",)),
    "dsr-no-ihl": Row("tc_dsr_option.c", ("NO_IHL",), TCP_UDP, ("ip-field-not-updated",)),
    # DNAT, TCP/UDP checksum recomputed by a loop adding the pseudo-header field by field (loxilb/polycube-style)
    "scratch-pseudo": Row("xdp_scratch_pseudo.c", (), TCP_UDP, ()),
    "scratch-pseudo-proto-host": Row("xdp_scratch_pseudo.c", ("PROTO_HOST",), TCP_UDP, ("byte-order",)),
    "scratch-pseudo-len-host": Row("xdp_scratch_pseudo.c", ("LEN_HOST",), TCP_UDP, ("length-wrong",)),
    # UDP over IPv6 encap with the outer UDP checksum computed by a loop (katran's GUE over IPv6)
    "udp6-encap": Row("xdp_udp6_encap.c", (), TCP_UDP, ()),
    "udp6-encap-zero": Row("xdp_udp6_encap.c", ("ZERO",), TCP_UDP, ("udp6-zero",)),
    "udp6-encap-header-only": Row("xdp_udp6_encap.c", ("HDR_ONLY",), TCP_UDP, ("coverage-short",)),
    "udp6-encap-no-pseudo": Row("xdp_udp6_encap.c", ("NO_PSEUDO",), TCP_UDP, ("no-pseudo-header",)),
}


@pytest.mark.parametrize("name", sorted(ROWS))
def test_cause_is_named(name, tmp_path, record_property):
    """One program, one mistake: broken fields as scapy finds them (:func:`bad`), the row's causes on every broken
    packet and no other cause on all of them; the twins break nothing (see the module docstring)."""
    row = ROWS[name]
    _, kind = judged(name, row.source, row.defines, row.makers, row.causes, tmp_path, bad)
    record_property("kernel_checked", COUNT * (2 if kind == "tc" else 1))


def test_scrambled_checksums_get_no_cause(tmp_path):
    """The full NAT's right TCP/UDP checksum XORed with a hash of the source port (SCRAMBLED): every packet broken,
    a specific cause on at most 1% of them (a simulated mistake may hit a scrambled value by chance)."""
    obj = compile_bpf(MISTAKES / "xdp_full_nat.c", tmp_path / "scrambled.o", "SCRAMBLED")
    count = 200
    named = broken = 0
    with prog.load(str(obj)) as program:
        for frame in pf.frames(TCP_UDP, count, seed=7):
            run = program.run(frame)
            broken += bool(run.broken)
            named += bool(run.finding is not None and run.finding.causes)
    assert broken == count
    assert named <= count // 100, named
