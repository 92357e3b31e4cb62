"""What a checksum field sums, as 16-bit words, and the value each single arithmetic mistake would store there.

A field's message is its pseudo-header (RFC 9293 3.1, RFC 768, RFC 8200 8.1: source, destination, protocol and
length, as 16-bit words) followed by the bytes it covers with the field itself zeroed, zero-padded to even length.
The correct checksum is the complement of the message's one's-complement sum (RFC 1071); each hypothesis here
computes the same message the wrong way, once, and gives the 16 bits a sender making that mistake stores. Every
value is fixed by the packet: no hypothesis has a free parameter (a length tried is one the packet names).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import NamedTuple
from functools import partial

from ..core.arith import M16, M32, canonical, swab16
from ..layers import table as T
from ..layers.walk import Field, IPLayer


def sum16(data: bytes) -> int:
    """The plain (carries kept) sum of ``data`` as 16-bit big-endian words, an odd last byte zero-padded: each
    word's high byte is one at an even offset, so the sum is 256 times theirs plus the others'."""
    return (sum(data[0::2]) << 8) + sum(data[1::2])


def sum32(data: bytes) -> int:
    """The plain sum of ``data`` as 32-bit big-endian words, zero-padded to a multiple of 4 (each byte weighed by
    its place in its word, as :func:`sum16` does)."""
    return (sum(data[0::4]) << 24) + (sum(data[1::4]) << 16) + (sum(data[2::4]) << 8) + sum(data[3::4])


class Message(NamedTuple):
    """A field's checksum input: pseudo-header fields (``pseudo`` False: none), the covered bytes (field zeroed),
    and their plain sums as 16-bit and 32-bit words (computed once: every hypothesis varies the rest; a tuple: one
    is made for every wrong field)."""

    src: bytes
    dst: bytes
    proto: int
    length: int
    data: bytes
    pseudo: bool
    data16: int = -1
    data32: int = -1
    pseudo16: int = 0
    pseudo32: int = 0

    @staticmethod
    def of(src: bytes, dst: bytes, proto: int, length: int, data: bytes, pseudo: bool = True) -> Message:
        head = _pseudo(src, dst, proto, length) if pseudo else b""
        return Message(src, dst, proto, length, data, pseudo, sum16(data), sum32(data), sum16(head), sum32(head))

    def moved(self, src: bytes, dst: bytes) -> Message:
        """The same segment under another pseudo-header's addresses."""
        head = _pseudo(src, dst, self.proto, self.length)
        return Message(src, dst, self.proto, self.length, self.data, True, self.data16, self.data32, sum16(head),
                       sum32(head))

    def total(self, length: int | None = None, data16: int | None = None) -> int:
        """The plain sum of the message as 16-bit words (``length``: another pseudo-header length; ``data16``:
        another sum of the covered bytes)."""
        head = self.pseudo16
        if length is not None and self.pseudo:  # the length enters as its 16-bit words, in both versions
            head += (length >> 16) + (length & M16) - (self.length >> 16) - (self.length & M16)
        return head + (self.data16 if data16 is None else data16)

    def total32(self) -> int:
        """The plain sum of the message as 32-bit words (the pseudo-header is 12 or 40 bytes: the data stays
        aligned)."""
        return self.pseudo32 + self.data32


def _pseudo(src: bytes, dst: bytes, proto: int, n: int) -> bytes:
    """The pseudo-header's bytes: RFC 9293 3.1 / RFC 768 (zero, protocol, 16-bit length; a longer one as two words)
    for 4-byte addresses, RFC 8200 8.1 (32-bit length, 3 zero bytes, next header) for 16-byte ones."""
    if len(src) == 4:
        return src + dst + bytes([0, proto]) + (n.to_bytes(2, "big") if n <= M16 else n.to_bytes(4, "big"))
    return src + dst + n.to_bytes(4, "big") + bytes([0, 0, 0, proto])


def pseudo_bytes(m: Message) -> bytes:
    """The pseudo-header bytes of message ``m`` (b"" when it has none)."""
    return _pseudo(m.src, m.dst, m.proto, m.length) if m.pseudo else b""


def checksum(total: int) -> int:
    """The RFC 1071 checksum of a message whose plain 16-bit sum is ``total``: the complement of its fold."""
    return canonical(total, 16) ^ M16


def message(buf: bytes, f: Field, ip: IPLayer | None) -> Message | None:
    """The message of field ``f`` (None when it covers no contiguous bytes: csum tries nothing there)."""
    if f.at is None or not f.covers or f.entry.odd_tail:
        return None
    data = bytearray()
    for start, end in f.covers:
        if len(data) & 1:
            return None
        data += buf[start:end]
    first = f.covers[0][0]
    if not f.covers[0][0] <= f.at < f.covers[0][1] - 1:
        return None
    data[f.at - first:f.at - first + 2] = b"\0\0"
    if f.pseudo is None:
        return Message.of(b"", b"", 0, 0, bytes(data), False)
    src, dst, size, length, proto = f.pseudo
    return Message.of(bytes(buf[src:src + size]), bytes(buf[dst:dst + size]), proto, length, bytes(data))


def stored_as(f: Field, value: int) -> int:
    """``value`` as a sender that follows the field's zero rule stores it (UDP: a computed 0 sent as all ones)."""
    return M16 if value == 0 and f.entry.zero is not T.ZERO.VALUE else value


class Guess(NamedTuple):
    """One simulated mistake: the cause id, the value it stores, how to say what it simulated (a tuple: dozens are
    made per field and most dropped)."""

    cause: str
    value: int
    #: The detail text, made when asked for (most guesses are tried and dropped).
    text: Callable[[], str]
    #: Fixed by evidence beyond the field (the packet before the change, its pair in the capture): never weak.
    sure: bool = False

    @property
    def detail(self) -> str:
        """The detail text: the values this mistake was simulated with."""
        return self.text()


#: Each hypothesis on the message, in the order csum/engine/_explain.c numbers them (csum/explain/quick.py): its
#: cause id and its text, with the numbers it names as positional fields (one place for both paths' texts).
TEXTS: tuple[tuple[str, str], ...] = (
    ("not-complemented", "the folded sum {0:#06x} stored; the checksum is its complement {1:#06x}"),
    ("byte-order", "the checksum {0:#06x} stored with its bytes swapped"),
    ("single-fold", "the 16-bit words' sum {0:#x} folded once (to {1:#x}) and cut to 16 bits"),
    ("single-fold", "the 32-bit words' sum {0:#x} folded once (to {1:#x}) and cut to 16 bits"),
    ("carry-lost", "the 16-bit words added without the end-around carry: {0} carries lost"),
    ("carry-lost", "the 32-bit words summed in a 32-bit accumulator: {0} carries out of bit 31 lost"),
    ("odd-byte-dropped", "the checksum without the last byte ({0:#04x}) of the {1} covered"),
    ("padding-summed", "the checksum over the segment and the frame's {0} bytes of padding, length {2} (the "
     "datagram's is {1})"),
    ("padding-summed", "the checksum over the segment and the frame's {0} bytes of padding (length {1})"),
    ("length-wrong", "pseudo-header length {0} ({1}) instead of {2}"),
    ("length-wrong", "transmit offload's pseudo-header sum with length {0} ({1}) instead of {2}"),
)
(NOT_COMPLEMENTED, BYTE_ORDER, SINGLE_FOLD16, SINGLE_FOLD32, CARRY_LOST16, CARRY_LOST32, ODD_BYTE, PADDING_COUNTED,
 PADDING, LENGTH_FULL, LENGTH_PARTIAL) = range(len(TEXTS))


def guess(variant: int, value: int, *args: object) -> Guess:
    """Hypothesis ``variant`` (an index of :data:`TEXTS`) storing ``value``, its text naming ``args``."""
    cause, text = TEXTS[variant]
    return _new(Guess, (cause, value, partial(text.format, *args), False))  # Guess(...) without its Python __new__


_new = tuple.__new__


def arithmetic(f: Field, m: Message, want: int | None = None) -> Iterator[Guess]:
    """The arithmetic slips on the whole message: not complemented, bytes swapped, one fold, carries lost (``want``:
    only the guesses that store this value)."""
    total = m.total()
    right = stored_as(f, checksum(total))
    folded = canonical(total, 16)
    if want is None or folded == want:
        yield guess(NOT_COMPLEMENTED, folded, folded, right)
    if want is None or swab16(right) == want:
        yield guess(BYTE_ORDER, swab16(right), right)
    once = (total & M16) + (total >> 16)
    if once > M16 and (want is None or stored_as(f, ~once & M16) == want):
        yield guess(SINGLE_FOLD16, stored_as(f, ~once & M16), total, once)
    plain32 = m.total32()
    wide = canonical(plain32, 32)
    once32 = (wide & M16) + (wide >> 16)
    if once32 > M16 and (want is None or stored_as(f, ~once32 & M16) == want):
        yield guess(SINGLE_FOLD32, stored_as(f, ~once32 & M16), wide, once32)
    if total > M16 and (want is None or stored_as(f, ~total & M16) == want):
        yield guess(CARRY_LOST16, stored_as(f, ~total & M16), total >> 16)
    lost = plain32 >> 32
    if lost:
        kept = plain32 & M32
        value = stored_as(f, checksum((kept >> 16) + (kept & M16)))
        if want is None or value == want:
            yield guess(CARRY_LOST32, value, lost)


def odd_byte(f: Field, m: Message) -> Iterator[Guess]:
    """The last byte of an odd-length coverage left out."""
    if len(m.data) & 1 and m.data[-1]:
        value = stored_as(f, checksum(m.total(data16=m.data16 - (m.data[-1] << 8))))
        yield guess(ODD_BYTE, value, m.data[-1], len(m.data))


def padding(f: Field, m: Message, pad: bytes) -> Iterator[Guess]:
    """The frame's bytes after the IP datagram (``pad``) summed with the segment, counted in the length or not."""
    if not pad or not m.pseudo:
        return
    padded = sum16(m.data + pad)
    yield guess(PADDING_COUNTED, stored_as(f, checksum(m.total(m.length + len(pad), padded))), len(pad), m.length,
                m.length + len(pad))
    if any(pad):
        yield guess(PADDING, stored_as(f, checksum(m.total(data16=padded))), len(pad), m.length)


def lengths(f: Field, m: Message, named: list[tuple[int, str]], want: int | None = None) -> Iterator[Guess]:
    """A wrong pseudo-header length, each one the packet names (``named``: (length, what it is)), in the full
    checksum and in transmit offload's pseudo-header sum (``want``: only the guesses that store this value, the
    others not made: the loop every wrong field runs; its sums inline, :meth:`Message.total` and
    :func:`~csum.core.arith.canonical` unrolled)."""
    if not m.pseudo:
        return
    seen = {m.length}
    head = m.pseudo16 - (m.length >> 16) - (m.length & M16)  # the pseudo-header's sum without its length
    data = m.data16
    udp = f.entry.zero is not T.ZERO.VALUE
    for length, name in named:
        if length in seen or not 0 <= length <= M32:
            continue
        seen.add(length)
        part = head + (length >> 16) + (length & M16)
        total = part + data
        full = ((total - 1) % M16 + 1 if total else 0) ^ M16
        if udp and full == 0:
            full = M16
        if want is None or full == want:
            yield guess(LENGTH_FULL, full, length, name, m.length)
        part = (part - 1) % M16 + 1 if part else 0
        if want is None or part == want:
            yield guess(LENGTH_PARTIAL, part, length, name, m.length)


def offload(f: Field, m: Message, stored: int) -> str | None:
    """The detail when ``stored`` is the pseudo-header sum alone (with the segment's length, or 0), else None."""
    if not m.pseudo:
        return None
    for length in (m.length, 0):
        if canonical(m.total(length, 0), 16) == stored:
            return f"the pseudo-header sum (length {length}): the NIC completes it (captured before the NIC)"
    return None


def named_lengths(f: Field, ip: IPLayer | None, m: Message) -> list[tuple[int, str]]:
    """The wrong pseudo-header lengths a sender might take from this packet: the IP datagram's, the header's alone,
    the payload's alone, zero, the length byte-swapped (the frame's, padding included, is :func:`padding`'s)."""
    return lengths_named(f, ip, m.length, transport_header(f, m))


def transport_header(f: Field, m: Message) -> int:
    """The length of field ``f``'s own header at the start of its coverage ``m.data`` (TCP: its data offset)."""
    if f.entry.name == "tcp" and len(m.data) > T.TCP_DOFF_AT:
        return (m.data[T.TCP_DOFF_AT] >> 4) * T.TCP_DOFF_UNIT
    return f.entry.minimum


def lengths_named(f: Field, ip: IPLayer | None, length: int, header: int) -> list[tuple[int, str]]:
    """:func:`named_lengths` for a pseudo-header ``length`` and a transport header of ``header`` bytes."""
    if ip is None:
        return lengths_of(f.entry.name, None, 0, None, length, header)
    return lengths_of(f.entry.name, ip.version, ip.end - ip.l3, None if ip.l4 is None else ip.end - ip.l4, length,
                      header)


def lengths_of(name: str, version: int | None, total: int, after: int | None, length: int,
               header: int) -> list[tuple[int, str]]:
    """:func:`lengths_named` from numbers: the field's layer ``name``, its IP header's ``version`` (None: none) and
    datagram length ``total``, the bytes ``after`` its IP header's upper-layer start (None: not known)."""
    out: list[tuple[int, str]] = [(swab16(length) if length <= M16 else length, "the length byte-swapped"),
                                  (0, "zero")]
    if version is not None:
        out.append((total, "the IPv4 total length" if version == 4 else "the IPv6 datagram's whole length"))
        if version == 6:
            out.append((total - 40, "the IPv6 payload length"))
        if after is not None:
            out.append((after, "the IP datagram's bytes after its header"))
    out.append((header, f"the {name.upper()} header alone"))
    out.append((length - header, "the payload alone"))
    return out
