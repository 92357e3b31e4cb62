"""csum.rewrite's editor: one walk per rewrite, skb->csum's shadow kept incrementally, no BpfMisuse checks on
csum's own helper calls.

Expected values: the shadow's verdict is compared with :meth:`csum.skb.Skb.csum_valid` (the whole packet summed
again, the check BPF_PROG_TEST_RUN makes and tests/bpf/test_skb.py holds against the running kernel); the packets
are scapy's.
"""

from __future__ import annotations

import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scapy.compat import raw
from scapy.layers.inet import ICMP, IP, UDP
from scapy.layers.l2 import Ether
from scapy.layers.vxlan import VXLAN

import csum
import csum.bpf.misuse
import csum.rewrite.packet as packet
from csum.bpf.skb import Skb
from csum.rewrite import rewrite

ERR = raw(Ether() / IP(src="192.0.2.1", dst="203.0.113.7") / ICMP(type=3, code=3) /
          IP(src="203.0.113.7", dst="192.0.2.1") / UDP(sport=40000, dport=53) / b"query")
VX = raw(Ether() / IP(src="192.0.2.1", dst="192.0.2.2") / UDP(sport=49152, dport=4789) / VXLAN(vni=42) /
         Ether() / IP(src="10.1.0.5", dst="10.2.0.9") / UDP(sport=33000, dport=80) / (b"x" * 9))


@pytest.mark.parametrize("frame, request_", [
    (ERR, dict(daddr="10.0.0.7", quoted=dict(saddr="10.0.0.7", sport=1234))),
    (VX, dict(saddr="192.0.2.9", inner=dict(daddr="10.9.9.9", dport=8080))),
])
def test_one_walk_per_rewrite(monkeypatch, frame, request_):
    """rewrite() walks the packet once, however many layers it edits (the outer one, a quote, a tunnel's)."""
    walks = []
    real = packet.walk_outer_strict
    monkeypatch.setattr(packet, "walk_outer_strict", lambda *a, **k: walks.append(1) or real(*a, **k))
    rewrite(frame, **request_)
    assert len(walks) == 1


def test_no_misuse_checks_on_csums_own_calls(monkeypatch):
    """The BpfMisuse checks (the l4 one parses the packet) never run for the calls rewrite() makes or replays, and
    still run for a user's call."""
    def refuse(*args, **kwargs):
        raise AssertionError("a misuse check ran")

    for name in ("check_l3", "check_l4"):
        monkeypatch.setattr(csum.bpf.helpers, name, refuse)
    r = rewrite(VX, saddr="192.0.2.9", inner=dict(daddr="10.9.9.9", dport=8080))
    r.skb(arch="x86_64")
    with pytest.raises(AssertionError, match="a misuse check ran"):
        Skb(bytearray(VX)).bpf_l4_csum_replace(40, 0, 1, 0x12)


def test_users_calls_still_warn():
    """A user's call of the helper with BPF_F_MARK_MANGLED_0 on TCP still gets its BpfMisuse (through the Skb)."""
    from scapy.layers.inet import TCP

    frame = raw(Ether() / IP() / TCP())
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        Skb(bytearray(frame)).bpf_l4_csum_replace(50, 0x1234, 0x4321, 2 | csum.bpf.BPF_F_MARK_MANGLED_0)
    assert [w.message.code for w in seen if isinstance(w.message, csum.bpf.misuse.BpfMisuse)] == ["mangled0-on-tcp"]


edits = st.lists(st.tuples(st.integers(0, 200), st.binary(min_size=1, max_size=16), st.booleans()), max_size=12)


@settings(max_examples=1000)
@given(body=st.binary(min_size=1, max_size=200), network=st.integers(0, 15), edits=edits,
       arch=st.sampled_from(["generic", "x86_64", "arm64", "i386"]))
def test_shadow_balanced_is_csum_valid(body, network, edits, arch):
    """After any sequence of byte changes (some carried into skb->csum with BPF_F_RECOMPUTE_CSUM, some not), the
    incrementally kept sum says what summing the whole packet again says (Skb.csum_valid): 0x0000/0xffff folds and
    odd offsets included, on architectures whose csum_partial holds the zero sum differently (lib/checksum.c's
    folded value, x86_64's and i386's unfolded ones). The first byte past the network header is kept non-zero, as
    an IP version nibble is."""
    data = bytearray(bytes(network) + b"\x45" + body)
    shadow = packet._Shadow(data, network, csum.profile(arch))
    for at, new, recompute in edits:
        at = network + 1 + at % len(body)
        new = new[: len(data) - at]
        old = bytes(data[at:at + len(new)])
        shadow.moved(at, old, new)
        assert shadow.skb.bpf_skb_store_bytes(at, new, 1 if recompute else 0) == 0
        assert shadow.balanced() == shadow.skb.csum_valid()
