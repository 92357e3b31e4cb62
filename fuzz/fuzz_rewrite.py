"""Fuzz target: the C capture rewriter (csum/engine/_rewrite.c, through ``csum.rewrite.fast.rewrite_chunk``) against
the Python engine (``csum.rewrite.apply``, with ``csum.engine.crewrite`` set to None), on captured frames under rules.

The input is ``[rules: 8 bytes][frames]``: each of the first eight bytes picks one kind of rule from its list below
(address maps of both families and directions, port maps, TTL, DSCP/ECN or traffic class, flow label, MACs, VLAN
retag, Crypto-PAn and the level; zeros where the input is shorter), the rest is fuzz_common's list of frames, put in
one pcapng chunk (its bytes in an exact-size buffer: a read past the last packet is an AddressSanitizer finding).
Every byte of the rewritten chunk and every count of the Outcome must be the same with both engines, but the packets
the Python engine took (every one C declined, counted once per reason; all of them without C); the Python engine's bytes are checked against scapy, tcprewrite and the kernel's NAT by tests/rewrite.
"""

from __future__ import annotations

import functools

from fuzz_common import assert_equal, capture_bytes, decode, with_exact_data

from csum import engine
from csum.capture import pcap
from csum.rewrite.fast import NO_C_ENGINE, rewrite_chunk
from csum.rewrite.rules import Rules

#: Each rule kind's choices (index 0: no such rule), picked by one input byte modulo the list's length.
MAP_IP = ((), ("10.0.0.0/8=192.168.0.0/16",), ("0.0.0.0/0=198.51.100.0/24",), ("2001:db8::/32=2001:db9::/48",),
          ("10.0.0.0/8=192.168.0.0/16", "::/0=2001:db8:aaaa::/96"), ("172.16.0.1=10.0.0.1", "fd00::/8=fd01::/16"))
MAP_SIDE = ((), ("src", "10.0.0.0/8=172.16.0.0/12"), ("dst", "10.1.0.2=203.0.113.9"), ("src", "2001:db8::/64=fd00::/64"),
            ("dst", "::/0=2001:db8:ffff::/48"))
MAP_PORT = ((), ("80=8080",), ("tcp:443=8443", "udp:53=5353"), ("4789=4790",), ("1234=0", "udp:80=65535"),
            ("80=8080", "53=80"))
TTL = (None, -1, -2, 0, 1, 64, 255)
CLASS = ((None, None, None), (46, None, None), (None, 3, None), (10, 1, None), (None, None, 0), (None, None, 0xB9))
FLOWLABEL = (None, 0, 1, 0xFFFFF)
LINK = (((), (), ()), (("02:aa:00:00:00:01",), (), ()), ((), ("02:00:00:00:00:02=02:dd:00:00:00:01",), ()),
        ((), (), ("10=11",)), ((), (), ("20=4095", "10=0")), (("02:00:00:00:00:01=02:bb:00:00:00:01",), (), ("5=6",)))
#: Crypto-PAn or not (its key fixed: the anonymizer is tested elsewhere), and the level.
LEVEL = tuple((anon, level) for anon in (None, "ab" * 32) for level in ("all", "outer", "inner"))


def _pick(choices: tuple, byte: int) -> object:
    return choices[byte % len(choices)]


@functools.lru_cache(maxsize=4096)
def rules_of(head: bytes) -> Rules:
    """The Rules the input's first eight bytes pick; a source or destination map that overlaps the address map in
    its direction (which Rules refuses) is left out."""
    b = head.ljust(8, b"\0")
    dscp, ecn, tclass = _pick(CLASS, b[4])  # type: ignore[misc]
    mac_src, mac_dst, retag = _pick(LINK, b[6])  # type: ignore[misc]
    anonymize, level = _pick(LEVEL, b[7])  # type: ignore[misc]
    common = dict(map_ip=list(_pick(MAP_IP, b[0])), map_port=_pick(MAP_PORT, b[2]),  # type: ignore[call-overload]
                  ttl=_pick(TTL, b[3]), dscp=dscp, ecn=ecn, tclass=tclass, flowlabel=_pick(FLOWLABEL, b[5]),
                  mac_src=mac_src, mac_dst=mac_dst, vlan_retag=list(retag), anonymize=anonymize, level=level)
    side = _pick(MAP_SIDE, b[1])
    if side:
        try:
            return Rules(**common, **{f"map_{side[0]}": [side[1]]})  # type: ignore[index,arg-type]
        except ValueError:  # CsumValueError: overlapping maps
            pass
    return Rules(**common)  # type: ignore[arg-type]


def encode(rule_bytes: bytes, frames: bytes) -> bytes:
    """A rewrite input: eight rule-picking bytes, then fuzz_common frames."""
    return rule_bytes.ljust(8, b"\0")[:8] + frames


def one_input(data: bytes) -> None:
    assert engine.crewrite is not None, "csum.engine._rewrite is not built or CSUM_ENGINE is not c"
    rules = rules_of(data[:8])
    frames = decode(data[8:])
    if not frames:
        return
    chunk = with_exact_data(pcap.parse(capture_bytes(frames)))
    got_data, got_out, taken = rewrite_chunk(chunk, rules)
    saved, engine.crewrite = engine.crewrite, None
    try:
        want_data, want_out, _ = rewrite_chunk(chunk, rules)
    finally:
        engine.crewrite = saved
    assert_equal(bytes(got_data), bytes(want_data), "rewrite_chunk's bytes")
    # the packets handed to the Python engine, per reason: every one C did not take, and all of them without C
    assert_equal(sum(got_out.declined.values()), len(chunk) - taken, "packets declined")
    assert_equal(dict(want_out.declined), {NO_C_ENGINE: len(chunk)}, "the Python engine's declined")
    got_out.declined.clear()
    want_out.declined.clear()
    assert_equal(got_out, want_out, "rewrite_chunk's Outcome")
