"""Hypothesis strategies for checksum edge cases, for csum's tests and for yours.

    from hypothesis import given
    from csum.testing import buffers, seeds

    @given(buffers(), seeds())
    def test_my_checksum(buf, seed): ...

Needs hypothesis (``pip install hypothesis``; it is in csum's ``test`` extra).
"""

from __future__ import annotations

from hypothesis import strategies as st

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
