"""Bits: the fields of a generated case cut in turn from one drawn byte string.

A Hypothesis draw costs about 0.1 ms whatever its size, so a case made of one draw per field (ports, addresses,
flags, one_of branches: 49 draws for a tests/rewrite/test_rewrite.py case) spends most of its time drawing. Cut
from one ``st.binary`` draw, each field is uniform over its own bits (where ``st.integers`` favours small
numbers: a TCP window cut from the top of a 128-bit ``st.integers`` draw is 0 in 98 cases of 100), with the
corners a field needs made explicit. All-zero bits give the simplest case, what Hypothesis shrinks a failure
towards.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")

#: 16-bit values a port or ICMP id takes half the time (the rest: any).
U16_CORNERS = (0, 1, 0xFF, 0xFFFF)


class Bits:
    """Fields cut in turn from ``data``; a case that needs more bits than ``data`` holds fails loudly."""

    def __init__(self, data: bytes) -> None:
        self._value, self._left = int.from_bytes(data, "little"), 8 * len(data)

    def take(self, width: int) -> int:
        """The next ``width`` bits as an unsigned number."""
        assert width <= self._left, "the drawn byte string is too short for this case"
        value, self._value, self._left = self._value & ((1 << width) - 1), self._value >> width, self._left - width
        return value

    def flag(self) -> bool:
        """The next bit, as a bool."""
        return bool(self.take(1))

    def choice(self, options: Sequence[T]) -> T:
        """One of ``options``, about uniformly (16 bits modulo its length)."""
        return options[self.take(16) % len(options)]

    def u16(self) -> int:
        """A 16-bit value: half the time one of U16_CORNERS."""
        return self.choice(U16_CORNERS) if self.flag() else self.take(16)

    def ttl(self) -> int:
        """A TTL / hop limit of 1 (decremented to 0) or 255 one time in eight each, else any of 1..255."""
        pick = self.take(3)
        return 1 if pick == 0 else 255 if pick == 1 else self.take(8) or 1

    def address(self, version: int) -> str:
        """An address, all zeros or all ones one time in eight each (pseudo-header sums at the corners)."""
        size, pick = 4 if version == 4 else 16, self.take(3)
        packed = bytes(size) if pick == 0 else b"\xff" * size if pick == 1 else self.take(8 * size).to_bytes(size)
        return str(ipaddress.ip_address(packed))

    def new(self, old: T, fresh: Callable[[], T]) -> T | None:
        """A rewrite's new value: none half the time, the old value one time in eight (a change that changes
        nothing), else ``fresh()``."""
        pick = self.take(3)
        return None if pick < 4 else old if pick == 4 else fresh()
