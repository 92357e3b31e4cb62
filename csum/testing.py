"""Hypothesis strategies for checksum edge cases, for csum's tests and for yours.

    from hypothesis import given
    from csum.testing import buffers, seeds

    @given(buffers(), seeds())
    def test_my_checksum(buf, seed): ...

Needs hypothesis: ``pip install 'linux-csum[testing]'`` (also in the ``test`` extra).
"""

from __future__ import annotations

import functools

from .core.inputs import check_instance, check_int, check_list
from .errors import Code, CsumValueError
from .layers import table as T

try:
    from hypothesis import HealthCheck
    from hypothesis import strategies as st
except ModuleNotFoundError as exc:
    if exc.name != "hypothesis":
        raise
    raise ModuleNotFoundError("csum.testing needs hypothesis: pip install 'linux-csum[testing]' "
                              "(or pip install 'hypothesis>=6.80')", name="hypothesis") from None

#: The largest ``max_payload`` of :func:`packets`, :func:`frames` and :func:`sample_packets`: a tunnelled frame's
#: headers and payload still fit an IPv4 total length (65535).
MAX_PAYLOAD = 60_000
#: The largest ``max_size`` of :func:`buffers` (1 MiB).
MAX_SIZE = 1 << 20

#: Seeds at the one's-complement corners: zero, one, both 16-bit zeros, the 16/32-bit carries.
CORNER_SEEDS = (0, 1, 0xFFFF, 0x10000, 0xFFFE0001, 0xFFFF0000, 0xFFFFFFFE, 0xFFFFFFFF)


def seeds() -> st.SearchStrategy[int]:
    """u32 seeds, biased towards :data:`CORNER_SEEDS`."""
    return st.one_of(st.sampled_from(CORNER_SEEDS), st.integers(0, 0xFFFFFFFF))


def u16s() -> st.SearchStrategy[int]:
    """16-bit values, biased towards 0x0000, 0xffff and their neighbours."""
    return st.one_of(st.sampled_from((0, 1, 0xFFFE, 0xFFFF, 0x8000, 0x00FF, 0xFF00)), st.integers(0, 0xFFFF))


def u32s() -> st.SearchStrategy[int]:
    """32-bit values, biased towards the corners."""
    return st.one_of(st.sampled_from(CORNER_SEEDS), st.integers(0, 0xFFFFFFFF))


def _repeat(pattern: bytes, n: int) -> bytes:
    return (pattern * (n // len(pattern) + 1))[:n]


def buffers(min_size: int = 0, max_size: int = 600) -> st.SearchStrategy[bytes]:
    """Byte strings with the patterns that break checksum code.

    Random bytes, all zeros, all 0xff (sums to -0), runs of 0xff with one
    other byte, and alternating 0x80/0x00 words; any length in the range,
    odd lengths included. ``min_size`` and ``max_size`` are ints in 0..:data:`MAX_SIZE`, the first at most the second.
    """
    min_size, max_size = check_int(min_size, 0, MAX_SIZE, "min_size"), check_int(max_size, 0, MAX_SIZE, "max_size")
    if min_size > max_size:
        raise CsumValueError(f"min_size must be at most max_size, got {min_size} > {max_size}", code=Code.OUT_OF_RANGE)
    sizes = st.integers(min_size, max_size)
    patterned = st.builds(_repeat, st.sampled_from((b"\x00", b"\xff", b"\x80\x00", b"\x00\x80", b"\xff\xfe")), sizes)
    ff_with_one = st.builds(
        lambda n, i, b: bytes(0xFF if j != i else b for j in range(n)),
        sizes.filter(lambda n: n > 0), st.integers(0, max_size), st.integers(0, 255),
    )
    return st.one_of(st.binary(min_size=min_size, max_size=max_size), patterned, ff_with_one)


def aligns() -> st.SearchStrategy[int]:
    """A buffer's offset from an 8-byte boundary: 0..7."""
    return st.integers(0, 7)


def field_changes(width: int) -> st.SearchStrategy[tuple[int, int]]:
    """(old, new) pairs for a ``width``-byte field (1 to 16 bytes), including no-op changes and all-ones values."""
    width = check_int(width, 1, 16, "width")
    top = (1 << (8 * width)) - 1
    value = st.one_of(st.sampled_from((0, top, 1, top - 1)), st.integers(0, top))
    return st.one_of(value.map(lambda v: (v, v)), st.tuples(value, value))


def chunked(
    data: st.SearchStrategy[bytes] | None = None, max_chunks: int = 20
) -> st.SearchStrategy[tuple[bytes, list[bytes]]]:
    """(buffer, chunks): ``buffer`` split into 1..``max_chunks`` consecutive chunks that join back to it.

    Cut points may repeat, so empty chunks appear, also right after odd-length ones. ``data``: a strategy of bytes
    (default :func:`buffers`); ``max_chunks``: 1 to 10000.
    """
    if data is not None:
        check_instance(data, st.SearchStrategy, "data")
    max_chunks = check_int(max_chunks, 1, 10_000, "max_chunks")

    def split(buf: bytes) -> st.SearchStrategy[tuple[bytes, list[bytes]]]:
        cuts = st.lists(st.integers(0, len(buf)), max_size=max_chunks - 1).map(sorted)
        return cuts.map(lambda c: (buf, [buf[i:j] for i, j in zip([0, *c], [*c, len(buf)])]))

    return (buffers() if data is None else data).flatmap(split)


def _fill(frame: bytes, linktype: int) -> bytes:
    """``frame`` with every checksum csum.layers finds set to what a sender stores (inner ones first)."""
    from .layers import corrections, walk

    view = memoryview(frame)
    out = bytearray(frame)
    for at, new in corrections(view, walk(view, linktype).fields, every=True):
        out[at : at + 2] = new
    return bytes(out)


#: name -> (IP protocol, header without checksum; the checksum field is left 0 for :func:`_fill`).
_L4 = {"tcp": (6, bytes.fromhex("00010002" "00000000" "00000000" "5010ffff" "00000000")),
       "udp": (17, bytes.fromhex("00350035" "00000000")), "udplite": (136, bytes.fromhex("13881389" "00000000")),
       "icmp": (1, bytes.fromhex("08000000" "00010001")), "icmpv6": (58, bytes.fromhex("80000000" "00010001"))}


def _l4(layer: str, payload: bytes) -> tuple[int, bytes]:
    proto, head = _L4[layer]
    seg = bytearray(head + payload)
    if layer == "udp":
        seg[4:6] = len(seg).to_bytes(2, "big")
    return proto, bytes(seg)


def _ip(version: int, proto: int, payload: bytes, src: bytes, dst: bytes, ttl: int, options: bytes = b"",
        ext: bytes = b"") -> bytes:
    if version == 4:
        ihl = (20 + len(options)) // 4
        head = bytes([0x40 | ihl, 0]) + (4 * ihl + len(payload)).to_bytes(2, "big") + b"\0\0\0\0"
        return head + bytes([ttl, proto]) + b"\0\0" + src + dst + options + payload
    if ext:  # a destination options header (PadN) in front of the upper layer
        payload, proto = bytes([proto]) + ext[1:] + payload, 60
    return b"\x60\0\0\0" + len(payload).to_bytes(2, "big") + bytes([proto, ttl]) + src + dst + payload


def _build_packet(version: int, layer: str, src: bytes, dst: bytes, head: bytes, payload: bytes, ttl: int) -> bytes:
    proto, seg = _l4(layer, payload)
    if layer in ("tcp", "icmp", "icmpv6"):  # random ports / ids / sequence numbers, the checksum field left 0
        keep = {"tcp": (0, 12), "icmp": (4, 8), "icmpv6": (4, 8)}[layer]
        seg = seg[: keep[0]] + head[keep[0] : keep[1]] + seg[keep[1] :]
    return _fill(_ip(version, proto, seg, src, dst, ttl), T.LINKTYPE_RAW)


@functools.cache
def _addr(size: int) -> st.SearchStrategy[bytes]:
    return st.one_of(st.binary(min_size=size, max_size=size), st.sampled_from((bytes(size), b"\xff" * size)))


def packets(versions: tuple[int, ...] = (4, 6), max_payload: int = 1500) -> st.SearchStrategy[bytes]:
    """Bare IPv4/IPv6 packets (TCP, UDP, ICMP / ICMPv6) with every checksum filled in correctly.

    Payloads use :func:`buffers` (all-zero and all-0xff runs, odd lengths), so checksums
    land on the 0x0000 / 0xffff corners too. Checksums are set by csum.layers (the walker
    csum verify uses); tests/test_testing.py checks them with scapy. Feed them to your parser
    or rewriter and check the result with :func:`csum.inet.verify`. ``versions``: a non-empty sequence of 4 and 6;
    ``max_payload``: 0..:data:`MAX_PAYLOAD`.
    """
    versions = _versions(versions)
    max_payload = check_int(max_payload, 0, MAX_PAYLOAD, "max_payload")
    def one(version: int) -> st.SearchStrategy[bytes]:
        size = T.ADDR_SIZES[version]
        layers = ("tcp", "udp", "icmp") if version == 4 else ("tcp", "udp", "icmpv6")
        return st.builds(_build_packet, st.just(version), st.sampled_from(layers), _addr(size), _addr(size),
                         st.binary(min_size=20, max_size=20), buffers(max_size=max_payload), st.integers(1, 255))

    # one strategy per version, built here: one built inside each draw would be validated again at every draw
    # (most of the time of a test drawing small packets)
    by_version = {version: one(version) for version in versions}
    return st.sampled_from(versions).flatmap(by_version.__getitem__)


def _versions(versions: object) -> tuple[int, ...]:
    found = tuple(check_int(v, 4, 6, f"versions[{i}]") for i, v in enumerate(check_list(versions, "versions")))
    if not found or any(v == 5 for v in found):
        raise CsumValueError(f"versions must be a non-empty sequence of 4 and 6, got {found}", code=Code.BAD_VALUE)
    return found


def assert_checksums_ok(packet: object, *, link: str = "auto", udp6_zero_ok: bool = False,
                        before: object = None) -> None:
    """Fail (AssertionError) with a readable message unless every checksum of ``packet`` verifies.

    ``packet``: bytes-like, an Ethernet frame or bare IP ("auto"; or pass ``link="ethernet"``/``"ip"``).
    Uses :func:`csum.inet.verify`; a stored 0xffff where 0x0000 is computed passes (the same number),
    checksums that cannot be verified from this packet alone (fragments) are not failures. Each wrong checksum is
    given its cause where :func:`csum.explain.explain` finds one (``before``: the packet before the code under test
    changed it, which lets it name more: a NAT without the TCP/UDP update, a header field changed without an update,
    the program mistakes of ``csum prog``).
    """
    from .explain import explain
    from .layers.inet import verify

    results = verify(packet, link=link, udp6_zero_ok=udp6_zero_ok)  # type: ignore[arg-type]
    bad = [r for r in results if r.ok is False]
    if bad:
        why = {r.field: e for r, e in explain(packet, link=link, before=before)}  # type: ignore[arg-type]
        lines = []
        for r in bad:
            e = why.get(r.field)
            lines.append(f"  {r.layer} checksum (header at offset {r.offset}): stored "
                         f"{'none' if r.stored is None else f'{r.stored:#06x}'}, expected "
                         f"{'unknown' if r.computed is None else f'{r.computed:#06x}'} ({r.reason})"
                         + ("" if e is None else f"; cause {e.cause}: {e.detail}"))
        raise AssertionError(f"{len(bad)} of {len(results)} checksums wrong:\n" + "\n".join(lines))


def sample_packets(n: int, *, seed: int = 0, max_payload: int = 600) -> list[bytes]:
    """``n`` packets drawn from :func:`packets`, the same ones for the same ``seed`` (what ``csum prog`` runs);
    ``n``: 0..1000000, ``seed``: an int in 0..2**64-1, ``max_payload``: 0..:data:`MAX_PAYLOAD`."""
    n, seed = check_int(n, 0, 1_000_000, "n"), check_int(seed, 0, (1 << 64) - 1, "seed")
    max_payload = check_int(max_payload, 0, MAX_PAYLOAD, "max_payload")
    from hypothesis import given, settings
    from hypothesis import seed as fixed_seed

    drawn: list[bytes] = []

    @fixed_seed(seed)
    @settings(max_examples=n, database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(packets(max_payload=max_payload))
    def draw(packet: bytes) -> None:
        drawn.append(packet)

    draw()
    return drawn[:n]


@functools.cache
def _payloads(max_size: int) -> st.SearchStrategy[bytes]:
    """:func:`buffers` of at most ``max_size`` bytes, built once per size (a strategy is validated when first
    drawn from: one built at every draw is validated at every draw)."""
    return buffers(max_size=max_size)


_MAC = b"\x02\0\0\0\0\x01\x02\0\0\0\0\x02"
_ETHERTYPE = {4: T.ETH_IPV4.to_bytes(2, "big"), 6: T.ETH_IPV6.to_bytes(2, "big")}
#: The VLAN tags of :func:`frames`: an 802.1Q C-tag (VLAN 7), under an 802.1ad S-tag (VLAN 5) for QinQ.
_C_TAG = T.ETH_8021Q.to_bytes(2, "big") + b"\x00\x07"
_S_TAG = T.ETH_8021AD.to_bytes(2, "big") + b"\x00\x05"


def frames(max_payload: int = 200) -> st.SearchStrategy[tuple[int, bytes]]:
    """(link type, frame): stacks as real traffic carries them, every checksum filled in by csum.layers.

    Ethernet with 0-2 VLAN tags (0x8100 / 0x88a8), an MPLS label, or bare IP (link type 101);
    IPv4 with or without options, IPv6 with or without a destination options header; optionally
    a tunnel (IP-in-IP / 6in4, GRE with its checksum, VXLAN) around an inner IPv4/IPv6 packet;
    TCP, UDP, UDP-Lite or ICMP/ICMPv6 innermost, payloads from :func:`buffers` of at most ``max_payload`` bytes
    (0..:data:`MAX_PAYLOAD`).
    """
    return _frames(check_int(max_payload, 0, MAX_PAYLOAD, "max_payload"))


@st.composite
def _frames(draw: st.DrawFn, max_payload: int) -> tuple[int, bytes]:
    """:func:`frames`, its argument checked."""
    def ip_packet(version: int, proto: int, payload: bytes) -> bytes:
        size = T.ADDR_SIZES[version]
        options = draw(st.sampled_from((b"", b"\x01\x01\x01\x00", b"\x94\x04\x00\x00")))  # NOP, Router Alert
        ext = draw(st.sampled_from((b"", bytes([0, 0, 1, 4, 0, 0, 0, 0]))))
        return _ip(version, proto, payload, draw(_addr(size)), draw(_addr(size)), draw(st.integers(1, 255)),
                   options if version == 4 else b"", ext if version == 6 else b"")

    inner_v = draw(st.sampled_from((4, 6)))
    layer = draw(st.sampled_from(("tcp", "udp", "udplite", "icmp" if inner_v == 4 else "icmpv6")))
    packet = ip_packet(inner_v, *_l4(layer, draw(_payloads(max_payload))))
    version = inner_v
    tunnel = draw(st.sampled_from(("none", "none", "ip", "gre", "vxlan")))
    if tunnel != "none":
        version = draw(st.sampled_from((4, 6)))
        if tunnel == "ip":
            packet = ip_packet(version, T.IPIP if inner_v == 4 else T.IPV6_IN, packet)
        elif tunnel == "gre":
            packet = ip_packet(version, T.GRE, b"\x80\x00" + _ETHERTYPE[inner_v] + b"\0\0\0\0" + packet)
        else:
            vxlan = b"\x08\0\0\0\0\0\x2a\0" + _MAC + _ETHERTYPE[inner_v] + packet
            packet = ip_packet(version, *_l4("udp", vxlan))
            ext = packet[T.IPV6HDR.nexthdr if version == 6 else T.IPHDR.protocol] == T.DEST_OPTS
            at = (T.IPV6HDR.size if version == 6 else packet[0] % 16 * T.IHL_UNIT) + (8 if ext else 0)
            port = at + T.TUNNEL_DEMUX_AT
            packet = packet[:port] + T.VXLAN_PORT.to_bytes(2, "big") + packet[port + 2 :]
    link = draw(st.sampled_from(("eth", "vlan", "qinq", "mpls", "raw")))
    if link == "raw":
        return T.LINKTYPE_RAW, _fill(packet, T.LINKTYPE_RAW)
    tags = {"eth": b"", "vlan": _C_TAG, "qinq": _S_TAG + _C_TAG}.get(link)
    if tags is None:
        frame = _MAC + T.ETH_MPLS.to_bytes(2, "big") + b"\x00\x01\x01\x40" + packet
    else:
        frame = _MAC + tags + _ETHERTYPE[version] + packet
    return T.LINKTYPE_ETHERNET, _fill(frame, T.LINKTYPE_ETHERNET)
