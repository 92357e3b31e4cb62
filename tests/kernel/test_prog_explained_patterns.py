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
from scapy.layers.inet import ICMP, IP, TCP, UDP, IPerror
from scapy.layers.inet6 import ICMPv6DestUnreach, ICMPv6EchoRequest, IPv6
from scapy.layers.l2 import Ether
from scapy.packet import Raw
from scapy.utils import checksum

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


def syn_after_nop(r: random.Random) -> bytes:
    """A TCP SYN whose options are a NOP, an MSS of at least 1536 (its value at an odd offset of the segment; its high
    byte not the clamp's, so a clamp changes both bytes), a window scale."""
    return raw(pf.ETHER / IP(src=pf._a4(r), dst=pf._a4(r))
               / TCP(flags="S", options=[("NOP", None), ("MSS", r.randrange(1536, 65536)), ("WScale", 7)],
                     **pf._ports(r)) / pf._payload(r))


def icmp4_error_udp(r: random.Random) -> bytes:
    """An ICMP destination unreachable / time exceeded quoting a whole IPv4 UDP datagram."""
    quote = raw(IP(src=pf._a4(r), dst=pf._a4(r)) / pf.UDP(**pf._ports(r)) / pf._payload(r))
    return raw(pf.ETHER / IP(src=pf._a4(r), dst=pf._a4(r)) / ICMP(type=r.choice([3, 11]), code=0) / Raw(quote))


def icmp6_echo_mapped(r: random.Random) -> bytes:
    """An ICMPv6 echo request between addresses of 2001:db8:64::/96 (those tc_nat46_icmp.c translates to IPv4)."""
    def address() -> str:
        return f"2001:db8:64::{r.randrange(65536):x}:{r.randrange(65536):x}"
    return raw(pf.ETHER / IPv6(src=address(), dst=address(), hlim=r.randrange(1, 256))
               / ICMPv6EchoRequest(id=r.randrange(65536), seq=r.randrange(65536), data=pf._payload(r)))


def icmp6_error(r: random.Random) -> bytes:
    """An ICMPv6 destination unreachable quoting a whole IPv6 TCP segment or UDP datagram."""
    quote = raw(IPv6(src=pf._a6(r), dst=pf._a6(r)) / r.choice([pf.TCP, pf.UDP])(**pf._ports(r)) / pf._payload(r))
    return raw(pf.ETHER / IPv6(src=pf._a6(r), dst=pf._a6(r)) / ICMPv6DestUnreach(code=r.randrange(5)) / Raw(quote))


def bad(before: bytes, after: bytes) -> set[tuple[str, int]]:
    """scapy's disagreements, plus every UDP checksum of 0 over IPv6 (RFC 8200 8.1: none is not allowed), plus an
    ICMPv6 echo request's or destination unreachable's checksum scapy recomputes otherwise (prog_frames.scapy_bad judges IPv4's layers), plus an
    ICMP error's quoted IPv4 header whose checksum scapy's RFC 1071 sum (scapy.utils.checksum) finds wrong (scapy
    does not judge quotes: IPerror)."""
    out = pf.scapy_bad(before, after)
    pkt = Ether(after)
    if IPv6 in pkt and UDP in pkt[IPv6] and pkt[IPv6][UDP].chksum == 0:
        out.add(("udp", len(after) - len(raw(pkt[IPv6][UDP]))))
    for icmp6 in (ICMPv6EchoRequest, ICMPv6DestUnreach):
        if icmp6 in pkt:
            copy = Ether(after)
            del copy[icmp6].cksum
            if Ether(raw(copy))[icmp6].cksum != pkt[icmp6].cksum:
                out.add(("icmpv6", len(after) - len(raw(pkt[icmp6]))))
    if IPerror in pkt:
        quoted = raw(pkt[IPerror])[:4 * pkt[IPerror].ihl]
        if checksum(quoted) != 0:
            out.add(("ipv4", len(after) - len(raw(pkt[IPerror]))))
    return out


class Row(NamedTuple):
    source: str
    defines: tuple[str, ...]
    makers: list[pf.Maker]
    causes: tuple[str, ...]  # (): a correct twin


TCP_UDP = [pf.tcp4, pf.udp4]
ICMP_ERRORS = [pf.icmp4_error, icmp4_error_udp]
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
    # reverse SNAT of an ICMP error in tc: the quoted header's address, port and checksums, and the ICMP checksum
    # over them, each by a helper (cilium's nat.h, calico's nat/icmp)
    "icmp-error-nat": Row("tc_icmp_error_nat.c", (), ICMP_ERRORS, ()),
    "icmp-error-nat-no-quote-csums": Row("tc_icmp_error_nat.c", ("NO_QUOTE_CSUMS",), ICMP_ERRORS,
                                         ("outer-not-carried",)),
    "icmp-error-nat-no-icmp-port": Row("tc_icmp_error_nat.c", ("NO_ICMP_PORT",), ICMP_ERRORS, ("outer-not-carried",)),
    "icmp-error-nat-no-quoted-ip": Row("tc_icmp_error_nat.c", ("NO_QUOTED_IP",), ICMP_ERRORS,
                                       ("ip-field-not-updated",)),
    # MSS clamp walking the options: the MSS after a NOP sits at an odd offset (tcp-mss-clamp programs)
    "mss-odd": Row("tc_mss_odd.c", (), [syn, syn_after_nop], ()),
    "mss-odd-window4": Row("tc_mss_odd.c", ("WINDOW4",), [syn, syn_after_nop], ("diff-size-wrong",)),
    "mss-odd-replace2": Row("tc_mss_odd.c", ("ODD_REPLACE2",), [syn, syn_after_nop], ("byte-order",)),
    # ICMPv6 echo -> ICMP echo with bpf_skb_change_proto, the pseudo-header taken out (cilium's nat_46x64.h)
    "nat46-icmp": Row("tc_nat46_icmp.c", (), [icmp6_echo_mapped], ()),
    "nat46-icmp-pseudo-kept": Row("tc_nat46_icmp.c", ("PSEUDO_KEPT",), [icmp6_echo_mapped], ("l4-not-patched",)),
    "nat46-icmp-no-pseudo-flag": Row("tc_nat46_icmp.c", ("PDIFF_FLAGS=0",), [icmp6_echo_mapped],
                                     ("pseudo-hdr-missing",)),
    # ICMP echo -> ICMPv6 echo, the pseudo-header added (cilium's nat_46x64.h), or forgotten
    "nat64-icmp": Row("tc_nat64_icmp.c", (), [pf.icmp4_echo], ()),
    "nat64-icmp-no-pseudo": Row("tc_nat64_icmp.c", ("NO_PSEUDO",), [pf.icmp4_echo], ("no-pseudo-header",)),
    # FOU/GUE over IPv4: outer IPv4 + UDP pushed, the UDP checksum by a loop (katran's gue, ebpf-go/aya encaps); the
    # UDP length summed as 0 and a pseudo-header length of 0 store the same bytes: both are named
    "udp4-encap": Row("xdp_udp4_encap.c", (), TCP_UDP, ()),
    "udp4-encap-zero": Row("xdp_udp4_encap.c", ("ZERO",), TCP_UDP, ()),
    "udp4-encap-len-late": Row("xdp_udp4_encap.c", ("LEN_LATE",), TCP_UDP, ("header-field-late", "length-wrong")),
    "udp4-encap-inner-len": Row("xdp_udp4_encap.c", ("INNER_LEN",), TCP_UDP, ("length-wrong",)),
    # an ICMP error made from the packet: cut after 8 bytes of payload, IPv4 + ICMP pushed (calico's icmp_v4_reply)
    "icmp-frag-needed": Row("xdp_icmp_frag_needed.c", (), TCP_UDP, ()),
    "icmp-frag-needed-hdr-only": Row("xdp_icmp_frag_needed.c", ("HDR_ONLY",), TCP_UDP, ("coverage-short",)),
    # the same for an ICMPv6 error: its checksum's pseudo-header holds the outer destination (cilium's nat.h, IPv6)
    "icmp6-error-nat": Row("tc_icmp6_error_nat.c", (), [icmp6_error], ()),
    "icmp6-error-nat-no-quote-addr": Row("tc_icmp6_error_nat.c", ("NO_QUOTE_ADDR",), [icmp6_error],
                                         ("outer-not-carried",)),
    "icmp6-error-nat-no-outer": Row("tc_icmp6_error_nat.c", ("NO_OUTER",), [icmp6_error], ("l4-not-patched",)),
    # IPv6 DSCP remarked by a direct write, skb->csum moved by bpf_csum_update (or the wrong way)
    "dscp6": Row("tc_dscp6.c", (), [pf.tcp6], ()),
    "dscp6-reversed": Row("tc_dscp6.c", ("REVERSED",), [pf.tcp6], ("direct-write",)),
}
#: The rows whose stale skb->csum follows from the wrong checksum alone (the program moves skb->csum for none of its
#: change: replaces without BPF_F_PSEUDO_HDR, stores of bytes a checksum balances), by construction of the program.
STALE_BY_FIELD = ("icmp-error-nat-no-quote-csums", "icmp-error-nat-no-icmp-port", "mss-odd-window4",
                  "icmp6-error-nat-no-quote-addr", "icmp6-error-nat-no-outer")


@pytest.mark.parametrize("name", sorted(ROWS))
def test_cause_is_named(name, tmp_path, record_property):
    """One program, one mistake: broken fields as scapy finds them (:func:`bad`), the row's causes on every broken
    packet and no other cause on all of them; the twins break nothing (see the module docstring)."""
    row = ROWS[name]
    _, kind = judged(name, row.source, row.defines, row.makers, row.causes, tmp_path, bad)
    record_property("kernel_checked", COUNT * (2 if kind == "tc" else 1))


#: Programs with a SCRAMBLED twin, and their frames.
SCRAMBLED = {"xdp_full_nat.c": TCP_UDP, "tc_icmp_error_nat.c": ICMP_ERRORS, "tc_mss_odd.c": [syn, syn_after_nop],
             "tc_nat46_icmp.c": [icmp6_echo_mapped], "xdp_icmp_frag_needed.c": TCP_UDP,
             "xdp_udp4_encap.c": TCP_UDP, "tc_icmp6_error_nat.c": [icmp6_error]}


@pytest.mark.parametrize("source", sorted(SCRAMBLED))
def test_scrambled_checksums_get_no_cause(source, tmp_path):
    """The program's right TCP/UDP/ICMP checksum XORed with a hash of a field of the input (SCRAMBLED): every packet
    it changes broken, a specific cause on at most 1% of them (a simulated mistake may hit a scrambled value by
    chance), on the checksums and on a stale skb->csum alike."""
    obj = compile_bpf(MISTAKES / source, tmp_path / "scrambled.o", "SCRAMBLED")
    count = 200
    named = broken = 0
    with prog.load(str(obj)) as program:
        for frame in pf.frames(SCRAMBLED[source], count, seed=7):
            run = program.run(frame)
            broken += bool(run.broken)
            named += bool(run.finding is not None and run.finding.causes)
    assert broken >= count // 2, broken
    assert named <= broken // 100, named


@pytest.mark.parametrize("name", STALE_BY_FIELD)
def test_stale_skb_csum_gets_the_fields_cause(name, tmp_path):
    """Where the wrong checksum alone leaves skb->csum stale (:data:`STALE_BY_FIELD`), the CHECKSUM_COMPLETE run's
    verdict (the kernel's: EBADMSG) gets the row's cause too, on every packet whose checksum the mistake broke."""
    row = ROWS[name]
    obj = compile_bpf(MISTAKES / row.source, tmp_path / f"{name}.o", *row.defines)
    stale = 0
    with prog.load(str(obj)) as program:
        for frame in pf.frames(row.makers, COUNT, seed=len(name)):
            run = program.run(frame)
            skb = [c for c in run.broken if c.layer == prog.SKB_CSUM]
            if skb:
                stale += 1
                assert skb[0].mistakes == row.causes, skb[0].cause
    assert stale >= COUNT // 3


def test_csum_update_the_wrong_way(tmp_path):
    """A direct write whose bpf_csum_update gets the diff reversed (tc_dscp6.c REVERSED): the stale skb->csum is
    direct-write, and its text says the program does call bpf_csum_update (the diff it gives is wrong), rather than
    leave the reader to add a call the program makes."""
    obj = compile_bpf(MISTAKES / "tc_dscp6.c", tmp_path / "reversed.o", "REVERSED")
    with prog.load(str(obj)) as program:
        for frame in pf.frames([pf.tcp6], 20, seed=9):
            [skb] = [c for c in program.run(frame).broken if c.layer == prog.SKB_CSUM]
            assert skb.mistakes == ("direct-write",) and "calls bpf_csum_update" in (skb.cause or ""), skb.cause
