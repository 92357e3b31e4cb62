"""Hypothesis strategies for checksum edge cases, for csum's tests and for yours.

    from hypothesis import given
    from csum.testing import buffers, seeds

    @given(buffers(), seeds())
    def test_my_checksum(buf, seed): ...

Needs hypothesis: ``pip install 'linux-csum[testing]'`` (also in the ``test`` extra).
"""

from __future__ import annotations

try:
    from hypothesis import strategies as st
except ModuleNotFoundError as exc:
    if exc.name != "hypothesis":
        raise
    raise ModuleNotFoundError("csum.testing needs hypothesis: pip install 'linux-csum[testing]' "
                              "(or pip install 'hypothesis>=6.80')", name="hypothesis") from None

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
    odd lengths included.
    """
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
    """(old, new) pairs for a ``width``-byte field, including no-op changes and all-ones values."""
    top = (1 << (8 * width)) - 1
    value = st.one_of(st.sampled_from((0, top, 1, top - 1)), st.integers(0, top))
    return st.one_of(value.map(lambda v: (v, v)), st.tuples(value, value))


def chunked(
    data: st.SearchStrategy[bytes] | None = None, max_chunks: int = 20
) -> st.SearchStrategy[tuple[bytes, list[bytes]]]:
    """(buffer, chunks): ``buffer`` split into 1..``max_chunks`` consecutive chunks that join back to it.

    Cut points may repeat, so empty chunks appear, also right after odd-length ones.
    """
    def split(buf: bytes) -> st.SearchStrategy[tuple[bytes, list[bytes]]]:
        cuts = st.lists(st.integers(0, len(buf)), max_size=max_chunks - 1).map(sorted)
        return cuts.map(lambda c: (buf, [buf[i:j] for i, j in zip([0, *c], [*c, len(buf)])]))

    return (buffers() if data is None else data).flatmap(split)


_L4 = {"tcp": (6, 20, 16), "udp": (17, 8, 6), "icmp": (1, 8, 2), "icmpv6": (58, 8, 2)}


def _build_packet(version: int, layer: str, src: bytes, dst: bytes, head: bytes, payload: bytes, ttl: int) -> bytes:
    from .inet import compute  # the strategy fills checksums with csum's own verified code

    proto, size, csum_at = _L4[layer]
    l4 = bytearray(head[:size].ljust(size, b"\0") + payload)
    if layer == "tcp":
        l4[12] = 5 << 4  # data offset: 20-byte header, no options
    if layer == "udp":
        l4[4:6] = len(l4).to_bytes(2, "big")
    l4[csum_at : csum_at + 2] = b"\0\0"
    if version == 4:
        ip = bytearray(b"\x45\x00" + (20 + len(l4)).to_bytes(2, "big") + b"\0\0\0\0" + bytes([ttl, proto]) + b"\0\0")
        ip += src + dst
        ip[10:12] = compute(bytes(ip + l4), "ipv4").to_bytes(2, "big")
        offset = 20
    else:
        ip = bytearray(b"\x60\0\0\0" + len(l4).to_bytes(2, "big") + bytes([proto, ttl]) + src + dst)
        offset = 40
    packet = bytearray(ip + l4)
    packet[offset + csum_at : offset + csum_at + 2] = compute(bytes(packet), layer).to_bytes(2, "big")
    return bytes(packet)


def packets(versions: tuple[int, ...] = (4, 6), max_payload: int = 1500) -> st.SearchStrategy[bytes]:
    """Bare IPv4/IPv6 packets (TCP, UDP, ICMP / ICMPv6) with every checksum filled in correctly.

    Payloads use :func:`buffers` (all-zero and all-0xff runs, odd lengths), so checksums
    land on the 0x0000 / 0xffff corners too. Feed them to your parser or rewriter and
    check the result with :func:`csum.inet.verify`.
    """
    def one(version: int) -> st.SearchStrategy[bytes]:
        size = 4 if version == 4 else 16
        layers = ("tcp", "udp", "icmp") if version == 4 else ("tcp", "udp", "icmpv6")
        addr = st.one_of(st.binary(min_size=size, max_size=size), st.sampled_from((bytes(size), b"\xff" * size)))
        return st.builds(_build_packet, st.just(version), st.sampled_from(layers), addr, addr,
                         st.binary(min_size=20, max_size=20), buffers(max_size=max_payload), st.integers(1, 255))

    return st.sampled_from(versions).flatmap(one)
