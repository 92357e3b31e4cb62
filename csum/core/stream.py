"""The Internet checksum over data that arrives in pieces: a hashlib-style object and scatter/gather.

Models the kernel's way of checksumming a buffer chain (net/core/skbuff.c
``__skb_checksum``: each fragment's ``csum_partial`` is added with
``csum_block_add``, rotated by 8 bits when the fragment starts at an odd
offset; include/net/checksum.h) and Wireshark's vector ``in_cksum``
(epan/in_cksum.c). A chunk of odd length leaves a byte whose word is finished
by the next chunk; empty chunks change nothing, whatever the parity
(the pending-byte bugs of dpkt's ``in_cksum_add`` and NuttX issue #20010).

    >>> import csum
    >>> c = Checksum(b"\\x45\\x00\\x00")
    >>> c.update(b"\\x1c")
    >>> c.value == csum.internet_checksum(b"\\x45\\x00\\x00\\x1c")
    True
"""

from __future__ import annotations

from collections.abc import Iterable

from ..engine import ones_sum
from ..errors import Code, CsumTypeError
from ..types import Sum16, WireSum, Wsum
from .arith import add16, add32, fold, from32to16, swab16
from .inputs import as_view, check_list, check_uint

__all__ = ["Checksum", "internet_checksum_iov"]


def _at_odd_offset(sum16: int) -> int:
    """A canonical 16-bit sum of a block that starts at an odd offset: its bytes swap lanes.

    The 16-bit form of ``csum_shift``: times 2**8 modulo 0xffff, folded with end-around carry.
    """
    return from32to16(sum16 << 8)


class Checksum:
    """Running Internet checksum (RFC 1071) of bytes fed in chunks of any length.

    ``seed`` is a u32 ``__wsum`` as a little-endian CPU holds it (the ``sum``
    argument of lib/checksum.c ``csum_partial``), e.g. a pseudo-header sum
    from :func:`csum.csum_tcpudp_nofold`. The state is the canonical 16-bit
    sum of the bytes so far, their count and the seed, so every way of
    splitting the same bytes into chunks gives the same bits.
    """

    name = "internet"
    digest_size = 2

    __slots__ = ("_sum16", "_length", "_seed")

    def __init__(self, data: object = b"", *, seed: Wsum = Wsum(0)) -> None:
        self._seed: int = check_uint(seed, 32, "seed")
        self._sum16 = 0  # canonical 16-bit sum of the bytes so far, as little-endian words
        self._length = 0
        self._feed(data, "data")

    def update(self, chunk: object) -> None:
        """Append ``chunk`` (any bytes-like object, any length, empty included)."""
        self._feed(chunk, "chunk")

    def _feed(self, chunk: object, name: str) -> None:
        if type(chunk) is not bytes:
            chunk = as_view(chunk, name)
        if chunk:
            part = ones_sum(chunk, 16, "little")
            self._sum16 = add16(self._sum16, _at_odd_offset(part) if self._length & 1 else part)
            self._length += len(chunk)

    def copy(self) -> Checksum:
        """An independent copy of the running state."""
        other = Checksum.__new__(Checksum)
        other._sum16, other._length, other._seed = self._sum16, self._length, self._seed
        return other

    def combine(self, other: Checksum) -> Checksum:
        """A new checksum of this object's bytes followed by ``other``'s, seeds added (``csum_add``).

        Like ``csum_block_add(self.partial, other.partial, len(self))`` but
        exact: the result's :attr:`partial` equals ``csum_partial(a + b, csum_add(seed_a, seed_b))``.
        """
        if not isinstance(other, Checksum):
            raise CsumTypeError(f"other must be a Checksum, not {type(other).__name__}")
        part = _at_odd_offset(other._sum16) if self._length & 1 else other._sum16
        out = self.copy()
        out._sum16 = add16(self._sum16, part)
        out._length = self._length + other._length
        out._seed = add32(self._seed, other._seed)
        return out

    @property
    def length(self) -> int:
        """Number of bytes fed so far."""
        return self._length

    def __len__(self) -> int:
        return self._length

    @property
    def seed(self) -> Wsum:
        """The u32 seed this checksum started from."""
        return self._seed  # type: ignore[return-value]

    @property
    def partial(self) -> Wsum:
        """The unfolded sum: a u32 ``__wsum`` as a little-endian CPU holds it.

        Exactly ``csum.csum_partial(all_bytes_so_far, seed)`` (lib/checksum.c):
        the canonical 16-bit sum of the bytes read as little-endian 16-bit words,
        plus the seed with end-around carry; not folded, not complemented. Feed
        it to ``csum_fold``, ``csum_tcpudp_magic`` or ``csum_ipv6_magic`` as ``wsum``.
        """
        return add32(self._sum16, self._seed)  # type: ignore[return-value]

    @property
    def sum16(self) -> Sum16:
        """``csum_fold(partial)``: the complemented checksum as a little-endian CPU holds the field."""
        return fold(self.partial)  # type: ignore[return-value]

    @property
    def value(self) -> WireSum:
        """The checksum as transmitted, read big-endian; equals ``csum.internet_checksum`` of the bytes."""
        return swab16(fold(self.partial))  # type: ignore[return-value]

    def digest(self) -> bytes:
        """The two checksum bytes in wire order."""
        return self.value.to_bytes(2, "big")

    def hexdigest(self) -> str:
        """:meth:`digest` as 4 lowercase hex digits."""
        return self.digest().hex()

    def __repr__(self) -> str:
        return f"<csum.core.stream.Checksum length={self._length} value=0x{self.value:04x}>"


def internet_checksum_iov(buffers: Iterable[object]) -> WireSum:
    """RFC 1071 checksum of the concatenation of ``buffers``, without joining them (wire value).

    The scatter/gather form of :func:`csum.internet_checksum`, like Wireshark's
    ``in_cksum(const vec_t *vec, int veclen)``; buffers may have any length.
    """
    if isinstance(buffers, (bytes, bytearray, memoryview, str)):
        raise CsumTypeError("buffers must be an iterable of bytes-like objects, not one buffer", code=Code.NOT_A_BUFFER)
    running = Checksum()
    for i, buf in enumerate(check_list(buffers, "buffers")):
        running._feed(buf, f"buffers[{i}]")
    return running.value

