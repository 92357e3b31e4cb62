"""The mistake table: one small program per known checksum mistake, and csum prog names exactly that mistake.

Each row compiles a program (tests/kernel/mistakes/*.c, or an example of examples/bpf built with a define that
puts the mistake in) whose one mistake is known by construction, runs it with csum.prog on the running kernel
(BPF_PROG_TEST_RUN; tc programs also on a CHECKSUM_COMPLETE skb) over 60 frames of the layout it handles, and
demands:

* the checksums csum calls broken are exactly those scapy's recomputation disagrees with (prog_frames.scapy_bad),
  and skb->csum is called stale exactly where the kernel's CHECKSUM_COMPLETE run failed with EBADMSG (the row
  states on which packets that must happen);
* every broken packet's cause reproduces the row's mistake, and that mistake is the only one reproduced on every
  broken packet: the program is named exactly, no mistake confused with another.

The correct twins (same programs without the mistake) must leave nothing broken. Skipped, with the reason, where
clang, libbpf or BPF test runs are missing.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import prog_frames as pf
import pytest
from bpf_build import EXAMPLES, compile_bpf, why_not

from csum.kernel import prog
from csum.rewrite.mistakes import Mistake

pytestmark = pytest.mark.skipif(why_not() is not None, reason=str(why_not()))

MISTAKES = Path(__file__).resolve().parent / "mistakes"
COUNT = 60


class Row(NamedTuple):
    source: Path
    defines: tuple[str, ...]
    makers: list[pf.Maker]
    mistake: Mistake | None  # None: the correct twin
    stale: bool  # a changed packet leaves skb->csum stale (tc)


M = Mistake
ROWS = {
    "pseudo-hdr-missing": Row(EXAMPLES / "tc_nat.c", ("L4_FLAGS=0",), [pf.tcp4, pf.udp4], M.PSEUDO_HDR_MISSING, True),
    "pseudo-hdr-on-port": Row(MISTAKES / "tc_pseudo_on_port.c", (), [pf.tcp4, pf.udp4], M.PSEUDO_HDR_ON_PORT, True),
    "size-bits-0": Row(MISTAKES / "tc_size_bits.c", (), [pf.tcp4], M.SIZE_BITS, False),
    "size-bits-2": Row(MISTAKES / "tc_size_bits.c", ("SIZE_2",), [pf.tcp4], M.SIZE_BITS, True),
    "l4-not-patched": Row(MISTAKES / "xdp_l4_not_patched.c", (), [pf.tcp4, pf.udp4], M.L4_NOT_PATCHED, False),
    "single-fold": Row(EXAMPLES / "xdp_nat_single_fold.c", (), [pf.tcp4, pf.udp4], M.SINGLE_FOLD, False),
    "carry-lost": Row(MISTAKES / "xdp_carry_lost.c", (), [pf.tcp4], M.CARRY_LOST, False),
    "byte-order-xdp": Row(MISTAKES / "xdp_byte_order.c", (), [pf.tcp4], M.BYTE_ORDER, False),
    "byte-order-tc": Row(MISTAKES / "tc_byte_order.c", (), [pf.tcp4], M.BYTE_ORDER, True),
    "udp0-not-kept-xdp": Row(MISTAKES / "xdp_udp0.c", ("NOT_KEPT",), [pf.udp4_unchecked], M.UDP0_NOT_KEPT, False),
    "udp0-not-mangled-xdp": Row(MISTAKES / "xdp_udp0.c", ("NOT_MANGLED",), [pf.udp4_to_zero], M.UDP0_NOT_MANGLED,
                                False),
    "udp0-not-kept-tc": Row(EXAMPLES / "tc_nat.c", ("UDP_FLAGS=0",), [pf.udp4_unchecked], M.UDP0_NOT_KEPT, False),
    "udp0-not-mangled-tc": Row(EXAMPLES / "tc_nat.c", ("UDP_FLAGS=0",), [pf.udp4_to_zero], M.UDP0_NOT_MANGLED, False),
    "ipv6-flag-missing": Row(MISTAKES / "tc_ipv6_flags.c", (), [pf.tcp6], M.IPV6_FLAG_MISSING, True),
    "ipv6-flag-on-ipv4": Row(MISTAKES / "tc_ipv6_flags.c", ("ON_IPV4",), [pf.tcp4], M.IPV6_FLAG_ON_IPV4, True),
    "outer-not-carried": Row(MISTAKES / "xdp_icmp_quote.c", (), [pf.icmp4_error], M.OUTER_NOT_CARRIED, False),
    "store-no-recompute": Row(MISTAKES / "tc_hop_limit.c", (), [pf.tcp6], M.STORE_NO_RECOMPUTE, True),
    "direct-write": Row(MISTAKES / "tc_hop_limit.c", ("DIRECT",), [pf.tcp6], M.DIRECT_WRITE, True),
    "header-field-late": Row(EXAMPLES / "tc_encap.c", ("CSUM_BEFORE_TOT_LEN",), [pf.tcp4], M.HEADER_FIELD_LATE, False),
    "header-csum-unset": Row(EXAMPLES / "tc_encap.c", ("CSUM_NEVER",), [pf.tcp4], M.HEADER_CSUM_UNSET, False),
    # the correct twins
    "tc-nat": Row(EXAMPLES / "tc_nat.c", (), [pf.tcp4, pf.udp4, pf.udp4_unchecked, pf.udp4_to_zero], None, False),
    "xdp-nat": Row(EXAMPLES / "xdp_nat.c", (), [pf.tcp4, pf.udp4, pf.udp4_unchecked, pf.udp4_to_zero], None, False),
    "xdp-udp0": Row(MISTAKES / "xdp_udp0.c", (), [pf.udp4, pf.udp4_unchecked, pf.udp4_to_zero], None, False),
    "ipv6-flag": Row(MISTAKES / "tc_ipv6_flags.c", ("IPV6_FLAG=BPF_F_IPV6",), [pf.tcp6], None, False),
    "hop-limit-recompute": Row(MISTAKES / "tc_hop_limit.c", ("HOP_FLAGS=BPF_F_RECOMPUTE_CSUM",), [pf.tcp6], None,
                               False),
    "tc-encap": Row(EXAMPLES / "tc_encap.c", (), [pf.tcp4], None, False),
}


def test_every_mistake_has_a_row():
    """The table covers the whole catalogue of csum.rewrite.mistakes."""
    assert {r.mistake for r in ROWS.values()} - {None} == set(Mistake)


@pytest.mark.parametrize("name", sorted(ROWS))
def test_mistake_is_named_exactly(name, tmp_path, record_property):
    """One program, one mistake: broken fields as scapy finds them, stale skb->csum as the kernel finds it, and the
    program's mistake the only one every broken packet reproduces (see the module docstring)."""
    row = ROWS[name]
    obj = compile_bpf(row.source, tmp_path / f"{name}.o", *row.defines)
    counts: dict[str, int] = {}
    broken = 0
    with prog.load(str(obj)) as program:
        for seed, frame in enumerate(pf.frames(row.makers, COUNT, seed=len(name))):
            run = program.run(frame)
            found = {(c.layer, c.offset) for c in run.broken if c.layer != prog.SKB_CSUM}
            assert found == pf.scapy_bad(frame, run.packet), (seed, frame.hex())
            if program.kind == "tc":
                assert run.stale == (row.stale and run.changed), (seed, frame.hex())
            if run.broken:
                broken += 1
                assert run.finding is not None and row.mistake in run.finding.mistakes, (seed, run.finding)
                assert all(c.cause and c.cause.startswith("reproduced") for c in run.broken), run.broken
                for m in run.finding.mistakes:
                    counts[m] = counts.get(m, 0) + 1
    record_property("kernel_checked", COUNT * (2 if program.kind == "tc" else 1))
    if row.mistake is None:
        assert broken == 0
        return
    assert broken >= COUNT // 3, f"the mistake shows on {broken} of {COUNT} packets only"
    assert [m for m, n in counts.items() if n == broken] == [row.mistake], counts
