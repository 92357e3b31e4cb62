"""Packets with one checksum mistake injected, for tests/explain: built with scapy, the mistake made by this module's
own naive arithmetic (tests/oracle.py, RFC 1071 4.1), never by csum's code.

:func:`case` gives, for a cause id and a seeded random generator, a :class:`Case`: the frame (Ethernet), the
offset of the checksum field made wrong, and what the explainer may be given besides (the packet before the change,
the other packets of the capture, the Result of a reassembled datagram).
"""

from __future__ import annotations

import ipaddress
import random
from collections.abc import Callable
from dataclasses import dataclass, field

from oracle import fold16, ones_sum16, rfc1071_checksum
from scapy.compat import raw
from scapy.layers.inet import IP, TCP, UDP, fragment
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether
from scapy.packet import Raw

ETH = 14


@dataclass
class Case:
    """A frame whose field at ``at`` holds a checksum made with mistake ``cause``."""

    cause: str
    frame: bytes
    at: int
    before: bytes | None = None
    others: list[bytes] = field(default_factory=list)
    #: For a field only reassembly judges: (layer, header offset, the right checksum of the whole datagram).
    reassembled: tuple[str, int, int] | None = None


def _addr(rng: random.Random, v6: bool) -> str:
    if v6:
        return str(ipaddress.IPv6Address(rng.getrandbits(128)))
    return str(ipaddress.IPv4Address(rng.getrandbits(32)))


def _packet(rng: random.Random, *, v6: bool | None = None, proto: str | None = None, size: int | None = None,
            flow: int | None = None, **ip: object) -> Ether:
    """A random packet; ``flow``: a seed for its addresses, ports, version and protocol (the packets of one flow)."""
    fr = rng if flow is None else random.Random(flow)
    v6 = fr.random() < 0.3 if v6 is None else v6
    proto = proto or fr.choice(("tcp", "udp"))
    src, dst, sport, dport, ttl = _addr(fr, v6), _addr(fr, v6), fr.getrandbits(16), fr.getrandbits(16), \
        fr.randrange(1, 255)
    n = rng.randrange(0, 300) if size is None else size
    payload = bytes(rng.getrandbits(8) for _ in range(n))
    l3 = IPv6(src=src, dst=dst, hlim=ttl, **ip) if v6 else IP(src=src, dst=dst, ttl=ttl, id=rng.getrandbits(16), **ip)
    l4 = TCP(sport=sport, dport=dport, seq=rng.getrandbits(32)) if proto == "tcp" else UDP(sport=sport, dport=dport)
    return Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") / l3 / l4 / Raw(payload)


def _layout(frame: bytes) -> tuple[bool, int, int, int]:
    """(IPv6?, L4 offset, L4 checksum offset, L4 end) of a frame without options or extension headers."""
    v6 = frame[ETH] >> 4 == 6
    if v6:
        l4, end, proto = ETH + 40, ETH + 40 + int.from_bytes(frame[ETH + 4:ETH + 6], "big"), frame[ETH + 6]
    else:
        l4, end, proto = ETH + 20, ETH + int.from_bytes(frame[ETH + 2:ETH + 4], "big"), frame[ETH + 9]
    return v6, l4, l4 + (16 if proto == 6 else 6), end


def message(frame: bytes, *, length: int | None = None, data: bytes | None = None, src: bytes | None = None,
            dst: bytes | None = None) -> bytes:
    """The pseudo-header and segment (checksum zeroed) the L4 checksum of ``frame`` covers, as bytes."""
    v6, l4, at, end = _layout(frame)
    seg = bytearray(frame[l4:end])
    seg[at - l4:at - l4 + 2] = b"\0\0"
    body = bytes(seg) if data is None else data
    n = len(seg) if length is None else length
    if v6:
        s, d, proto = frame[ETH + 8:ETH + 24], frame[ETH + 24:ETH + 40], frame[ETH + 6]
        pseudo = (src or s) + (dst or d) + n.to_bytes(4, "big") + b"\0\0\0" + bytes([proto])
    else:
        s, d, proto = frame[ETH + 12:ETH + 16], frame[ETH + 16:ETH + 20], frame[ETH + 9]
        pseudo = (src or s) + (dst or d) + bytes([0, proto]) + n.to_bytes(2, "big")
    return pseudo + body


def words(data: bytes) -> list[int]:
    if len(data) % 2:
        data += b"\0"
    return [int.from_bytes(data[i:i + 2], "big") for i in range(0, len(data), 2)]


def udp_sent(frame: bytes, value: int) -> int:
    """A computed 0 as a UDP sender sends it."""
    _, l4, at, _ = _layout(frame)
    return 0xFFFF if value == 0 and at - l4 == 6 else value


def _store(frame: bytes, at: int, value: int) -> bytes:
    b = bytearray(frame)
    b[at:at + 2] = value.to_bytes(2, "big")
    return bytes(b)


def _coincides(frame: bytes, value: int, cause: str) -> bool:
    """Whether the L4 checksum ``value`` is the right one, or (for another cause than offload) transmit offload's
    pseudo-header sum, with the segment's length or 0 (csum's verdict is then offload, RFC-wise right)."""
    if value == udp_sent(frame, rfc1071_checksum(message(frame))):
        return True
    return cause != "offload" and value in (fold16(ones_sum16(message(frame, data=b""))),
                                            fold16(ones_sum16(message(frame, data=b"", length=0))))


def _l4_case(rng: random.Random, cause: str, wrong: Callable[[bytes], int | None], **kw: object) -> Case:
    """A frame whose L4 checksum is ``wrong(frame)`` (None, or a value that is no mistake: try another packet)."""
    while True:
        frame = raw(_packet(rng, **kw))  # type: ignore[arg-type]
        _, _, at, _ = _layout(frame)
        value = wrong(frame)
        if value is not None and not _coincides(frame, value, cause):
            return Case(cause, _store(frame, at, value), at)


def _single_fold(frame: bytes) -> int | None:
    s = sum(words(message(frame)))
    once = (s & 0xFFFF) + (s >> 16)
    return udp_sent(frame, ~once & 0xFFFF) if once > 0xFFFF else None


def _fold_case(rng: random.Random, flow: int | None = None) -> Case:
    """single-fold: a payload word chosen so the one fold of the words' sum carries (rare in random data)."""
    while True:
        frame = bytearray(raw(_packet(rng, size=rng.randrange(40, 300) & ~1, flow=flow)))
        _, l4, at, end = _layout(bytes(frame))
        s = sum(words(message(bytes(frame))))
        last = int.from_bytes(frame[end - 2:end], "big")
        high = (s - last) >> 16
        target = rng.randrange(0x10000 - high, 0x10000) if high else None
        if target is None:
            continue
        new = (target - (s - last)) & 0xFFFF
        frame[end - 2:end] = new.to_bytes(2, "big")
        value = _single_fold(bytes(frame))
        if value is not None and not _coincides(bytes(frame), value, "single-fold"):
            return Case("single-fold", _store(bytes(frame), at, value), at)


def _carry16(frame: bytes) -> int:
    return udp_sent(frame, ~(sum(words(message(frame))) & 0xFFFF) & 0xFFFF)


def _carry32(frame: bytes) -> int:
    m = message(frame)
    m += b"\0" * (-len(m) % 4)
    total = sum(int.from_bytes(m[i:i + 4], "big") for i in range(0, len(m), 4)) & 0xFFFFFFFF
    return udp_sent(frame, ~fold16(total) & 0xFFFF)


def _odd(frame: bytes) -> int | None:
    m = message(frame)
    if len(m) % 2 == 0 or m[-1] == 0:
        return None
    return udp_sent(frame, rfc1071_checksum(m[:-1]))


def _length(frame: bytes) -> int:
    v6, l4, _, end = _layout(frame)
    return udp_sent(frame, rfc1071_checksum(message(frame, length=end - ETH)))  # the IP datagram's whole length


def _offload(frame: bytes) -> int:
    v6, l4, _, end = _layout(frame)
    return fold16(ones_sum16(message(frame, data=b"")))


def _padding_case(rng: random.Random, flow: int | None = None) -> Case:
    """padding-summed: an IPv4 frame under 60 bytes, padded by the link layer, the padding summed and counted."""
    while True:
        frame = raw(_packet(rng, v6=False, size=rng.randrange(0, 6), flow=flow))
        pad = bytes(rng.getrandbits(8) if rng.random() < 0.5 else 0 for _ in range(60 - len(frame)))
        if not pad:
            continue
        _, l4, at, end = _layout(frame)
        seg_len = end - l4
        value = udp_sent(frame, rfc1071_checksum(message(frame, length=seg_len + len(pad),
                                                          data=message(frame)[12:] + pad)))
        padded = frame + pad
        if not _coincides(frame, value, "padding-summed"):
            return Case("padding-summed", _store(padded, at, value), at)


def _udp0_case(rng: random.Random) -> Case:
    """udp0-not-mangled: an IPv6 UDP datagram whose checksum computes to 0, stored as 0."""
    while True:
        frame = bytearray(raw(_packet(rng, v6=True, proto="udp", size=rng.randrange(2, 200) & ~1)))
        _, l4, at, end = _layout(bytes(frame))
        s = ones_sum16(message(bytes(frame)))
        last = int.from_bytes(frame[end - 2:end], "big")
        # make the sum 0xffff (checksum 0): the last word takes what is missing
        rest = fold16(s + (~last & 0xFFFF))
        frame[end - 2:end] = (0xFFFF - rest if rest != 0xFFFF else 0xFFFF).to_bytes(2, "big")
        if rfc1071_checksum(message(bytes(frame))) == 0:
            return Case("udp0-not-mangled", _store(bytes(frame), at, 0), at)


def _ip_checksum(header: bytes) -> int:
    h = bytearray(header)
    h[10:12] = b"\0\0"
    return rfc1071_checksum(bytes(h))


def _ip_field_case(rng: random.Random, cause: str, change: Callable[[bytearray], None], *,
                   with_before: bool = False, **kw: object) -> Case:
    """An IPv4 header changed by ``change`` after its checksum was computed (TTL, TOS, id: not in the TCP/UDP
    pseudo-header, whose checksum stays right)."""
    while True:
        before = raw(_packet(rng, v6=False, **kw))  # type: ignore[arg-type]
        after = bytearray(before)
        change(after)
        if after == bytearray(before):
            continue
        return Case(cause, bytes(after), ETH + 10, before=before if with_before else None)


def _set(offset: int, size: int, value: Callable[[int], int]) -> Callable[[bytearray], None]:
    def change(b: bytearray) -> None:
        old = int.from_bytes(b[ETH + offset:ETH + offset + size], "big")
        b[ETH + offset:ETH + offset + size] = (value(old) % (1 << 8 * size)).to_bytes(size, "big")
    return change


def _nat(rng: random.Random, v6: bool = False) -> tuple[bytes, bytes, int]:
    """(before, after, L4 checksum offset): a source NAT whose IP header is updated (scapy recomputes it) and whose
    TCP/UDP checksum is left as it was."""
    pkt = _packet(rng, v6=v6)
    before = raw(pkt)
    l3 = pkt.getlayer(1)
    l3.src = _addr(rng, v6)
    if not v6:
        del l3.chksum
    l4 = pkt.getlayer(2)
    l4.chksum = int.from_bytes(before[_layout(before)[2]:_layout(before)[2] + 2], "big")
    after = raw(pkt)
    return before, after, _layout(after)[2]


def _nat_case(rng: random.Random, how: str) -> Case:
    while True:
        v6 = rng.random() < 0.3
        before, after, at = _nat(rng, v6)
        if _coincides(after, int.from_bytes(after[at:at + 2], "big"), "l4-not-patched"):
            continue  # the address change happens to leave the sum as it was, or to store an offload sum
        if how == "before":
            return Case("l4-not-patched", after, at, before=before)
        if how == "capture":  # -i any: the capture holds the packet before the NAT too
            return Case("l4-not-patched", after, at, others=[before, after])
        # the flow only: more packets of the same flow NATed the same way
        old_src = before[ETH + 12:ETH + 16] if not v6 else before[ETH + 8:ETH + 24]
        others = [after]
        for _ in range(rng.randrange(1, 4)):
            pkt = Ether(after)
            load = bytes(rng.getrandbits(8) for _ in range(rng.randrange(0, 200)))
            if pkt.haslayer(Raw):
                pkt[Raw].load = load
            else:
                pkt = pkt / Raw(load)
            if v6:
                pkt.getlayer(1).plen = None
            else:
                pkt.getlayer(1).len = None
                del pkt.getlayer(1).chksum
            if pkt.haslayer(UDP):
                pkt.getlayer(2).len = None
            frame = raw(pkt)
            value = udp_sent(frame, rfc1071_checksum(message(frame, src=old_src)))
            if not _coincides(frame, value, "l4-not-patched"):
                others.append(_store(frame, at, value))
        return Case("l4-not-patched", after, at, others=others)


def _tos_flow_case(rng: random.Random) -> Case:
    """tos-not-updated, pinned by the flow: every packet's DSCP remarked from one value to another."""
    old, new = rng.sample(range(64), 2)
    ecn = rng.randrange(4)
    frames = []
    pkt = _packet(rng, v6=False, tos=old << 2 | ecn)
    for _ in range(rng.randrange(3, 6)):
        pkt.getlayer(3).load = bytes(rng.getrandbits(8) for _ in range(rng.randrange(0, 100)))
        pkt.getlayer(1).id = rng.getrandbits(16)
        pkt.getlayer(1).len = None
        del pkt.getlayer(1).chksum
        if pkt.haslayer(UDP):
            pkt.getlayer(2).len = None
        del pkt.getlayer(2).chksum
        b = bytearray(raw(pkt))
        b[ETH + 1] = new << 2 | ecn
        frames.append(bytes(b))
    return Case("tos-not-updated", frames[0], ETH + 10, others=frames)


def _fragment_case(rng: random.Random, whole_length: bool = False) -> Case:
    """fragment-only: a UDP datagram split in two, its checksum computed over the first fragment alone, with the
    first fragment's length in the pseudo-header (``whole_length``: the whole datagram's UDP length, as a sender that
    fills the pseudo-header from the datagram but sums only the bytes it has does)."""
    while True:
        v4 = _packet(rng, v6=False, proto="udp", size=rng.randrange(1500, 3000))
        frags = fragment(v4.getlayer(1), fragsize=1480)
        whole = raw(v4)
        right = udp_sent(whole, rfc1071_checksum(message(whole)))
        first = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") / frags[0]
        first_raw = bytearray(raw(first))
        l4 = ETH + 20
        seg = bytearray(first_raw[l4:])
        seg[6:8] = b"\0\0"
        src, dst = first_raw[ETH + 12:ETH + 16], first_raw[ETH + 16:ETH + 20]
        length = len(whole) - l4 if whole_length else len(seg)
        value = udp_sent(whole, rfc1071_checksum(bytes(src + dst + bytes([0, 17]) + length.to_bytes(2, "big")
                                                       + seg)))
        if value == right:
            continue
        first_raw[l4 + 6:l4 + 8] = value.to_bytes(2, "big")
        rest = [raw(Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") / f) for f in frags[1:]]
        return Case("fragment-only", bytes(first_raw), l4 + 6, others=[bytes(first_raw), *rest],
                    reassembled=("udp", l4, right))


def _udp0_kept_case(rng: random.Random) -> Case:
    """udp0-not-kept: a UDP checksum of 0 (none) updated by a NAT (RFC 1624 eqn. 3 by hand) into a non-zero value."""
    while True:
        pkt = _packet(rng, v6=False, proto="udp")
        pkt.getlayer(2).chksum = 0
        before = raw(pkt)
        new_src = _addr(rng, False)
        pkt.getlayer(1).src = new_src
        del pkt.getlayer(1).chksum
        after = bytearray(raw(pkt))
        old_w = words(before[ETH + 12:ETH + 16])
        new_w = words(ipaddress.IPv4Address(new_src).packed)
        total = 0xFFFF  # ~HC with HC = 0
        for o, n in zip(old_w, new_w):
            total += (~o & 0xFFFF) + n
        value = ~fold16(total) & 0xFFFF
        _, _, at, _ = _layout(bytes(after))
        if value in (0, 0xFFFF) or _coincides(bytes(after), value, "udp0-not-kept"):
            continue
        after[at:at + 2] = value.to_bytes(2, "big")
        return Case("udp0-not-kept", bytes(after), at, before=before)


def _flowed(make: Callable[[random.Random, int], Case]) -> Callable[[random.Random], Case]:
    """3 to 5 packets of one flow, each with the mistake (a sender's bug shows on every packet it sends): the first
    is the case, all of them the capture around it."""
    def flowed(rng: random.Random) -> Case:
        flow = rng.getrandbits(32)
        cases = [make(rng, flow) for _ in range(rng.randrange(3, 6))]
        first = cases[0]
        first.others = [c.frame for c in cases]
        return first
    return flowed


#: Every cause the generator makes, and how; the names ending in -flow make it on 3 to 5 packets of one flow.
MAKERS: dict[str, Callable[[random.Random], Case]] = {
    "offload": lambda rng: _l4_case(rng, "offload", _offload),
    "not-complemented": lambda rng: _l4_case(rng, "not-complemented", lambda f: udp_sent(f, ones_sum16(message(f)))),
    "byte-order": lambda rng: _l4_case(rng, "byte-order", lambda f: int.from_bytes(
        udp_sent(f, rfc1071_checksum(message(f))).to_bytes(2, "little"), "big")),
    "single-fold-flow": _flowed(_fold_case),
    "carry-lost-16": lambda rng: _l4_case(rng, "carry-lost", _carry16),
    "carry-lost-32": lambda rng: _l4_case(rng, "carry-lost", _carry32),
    "carry-lost-16-flow": _flowed(lambda rng, flow: _l4_case(rng, "carry-lost", _carry16, flow=flow)),
    "carry-lost-32-flow": _flowed(lambda rng, flow: _l4_case(rng, "carry-lost", _carry32, flow=flow)),
    "odd-byte-dropped": lambda rng: _l4_case(rng, "odd-byte-dropped", _odd),
    "odd-byte-dropped-flow": _flowed(lambda rng, flow: _l4_case(rng, "odd-byte-dropped", _odd, flow=flow)),
    "length-wrong": lambda rng: _l4_case(rng, "length-wrong", _length),
    "padding-summed": _padding_case,
    "padding-summed-flow": _flowed(_padding_case),
    "udp0-not-mangled": _udp0_case,
    "ttl-not-updated": lambda rng: _ip_field_case(rng, "ttl-not-updated", _set(8, 1, lambda v: v - 1)),
    "ttl-not-updated-flow": _flowed(lambda rng, flow: _ip_field_case(rng, "ttl-not-updated",
                                                                     _set(8, 1, lambda v: v - 1), flow=flow)),
    "tos-ecn-ce": lambda rng: _ip_field_case(rng, "tos-not-updated", _set(1, 1, lambda v: v | 3),
                                             tos=rng.choice((1, 2)) | rng.randrange(64) << 2),
    "tos-ecn-ce-flow": _flowed(lambda rng, flow: _ip_field_case(
        rng, "tos-not-updated", _set(1, 1, lambda v: v | 3), flow=flow, tos=random.Random(flow).choice((1, 2)))),
    "tos-flow": _tos_flow_case,
    "id-before": lambda rng: _ip_field_case(rng, "id-not-updated", _set(4, 2, lambda v: v + rng.randrange(1, 65535)),
                                            with_before=True),
    "ttl-before": lambda rng: _ip_field_case(rng, "ttl-not-updated", _set(8, 1, lambda v: v - rng.randrange(1, 5)),
                                             with_before=True),
    "l4-not-patched-before": lambda rng: _nat_case(rng, "before"),
    "l4-not-patched-capture": lambda rng: _nat_case(rng, "capture"),
    "l4-not-patched-flow": lambda rng: _nat_case(rng, "flow"),
    "fragment-only": _fragment_case,
    "fragment-only-whole-length": lambda rng: _fragment_case(rng, whole_length=True),
    "udp0-not-kept": _udp0_kept_case,
}


def case(name: str, rng: random.Random) -> Case:
    """A :class:`Case` of generator ``name`` (a key of :data:`MAKERS`)."""
    return MAKERS[name](rng)


def right_packet(rng: random.Random) -> bytes:
    """A frame whose checksums are all right (scapy computes them)."""
    return raw(_packet(rng))


def flip_bits(frame: bytes, rng: random.Random, n: int) -> bytes:
    """``frame`` with ``n`` random bits of its IP datagram flipped."""
    b = bytearray(frame)
    for _ in range(n):
        k = rng.randrange(ETH * 8, len(b) * 8)
        b[k // 8] ^= 1 << (k % 8)
    return bytes(b)


#: The generators whose mistake is, on one packet, often (or always) one bit away from the right checksum, so the
#: explainer names it only when the flow pins it: on one packet alone, it must never name another cause.
WEAK_ALONE = ("carry-lost-16", "carry-lost-32", "odd-byte-dropped", "padding-summed", "ttl-not-updated", "tos-ecn-ce")


def _measure(n: int) -> None:  # pragma: no cover - run by hand: python tests/mistaken.py N (docs/explain.md)
    """Print docs/explain.md's table: per generator, of ``n`` cases, how many csum.explain names rightly, leaves
    unexplained, or names wrongly; then random bit flips."""
    import collections
    import sys

    sys.path.insert(0, str(__import__("pathlib").Path(__file__).parent / "explain"))
    from test_explain import run

    from csum.explain import Context, explain

    print("| generator | cause | right | unexplained | wrong cause |\n|---|---|---|---|---|")
    for name in MAKERS:
        rng = random.Random(f"measure-{name}")
        got: collections.Counter[str] = collections.Counter()
        cause = ""
        for _ in range(n):
            c = case(name, rng)
            cause = c.cause
            e = run(c)
            got["right" if e is not None and e.cause == c.cause else "wrong" if e is not None and e.named
                else "unexplained"] += 1
        print(f"| {name} | `{cause}` | {got['right'] / n:.1%} | {got['unexplained'] / n:.1%} | "
              f"{got['wrong'] / n:.1%} |")
    rng = random.Random("measure-flips")
    fields = named = 0
    for _ in range(n * 5):
        for _r, e in explain(flip_bits(right_packet(rng), rng, rng.randrange(1, 4))):
            fields += 1
            named += e.named
    flow_fields = flow_named = 0
    for _ in range(n // 2):
        seed = rng.getrandbits(32)
        frames = [flip_bits(right_packet(random.Random(seed)), rng, rng.randrange(1, 4))
                  for _ in range(rng.randrange(2, 20))]
        ctx = Context()
        for frame in frames:
            ctx.add(frame)
        for frame in frames:
            for _r, e in explain(frame, context=ctx):
                flow_fields += 1
                flow_named += e.named
    print(f"\nrandom bit flips (1 to 3 per packet): a specific cause on {named} of {fields} wrong fields "
          f"({named / fields:.2%}) alone, {flow_named} of {flow_fields} ({flow_named / flow_fields:.2%}) with their "
          "flow as context")


if __name__ == "__main__":  # pragma: no cover
    import sys

    _measure(int(sys.argv[1]) if len(sys.argv) > 1 else 100)
