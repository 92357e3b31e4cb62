"""The kinds of number checksum code passes around, as ``typing.NewType`` kinds of ``int``.

They play the part of the kernel's sparse types (``__wsum``, ``__sum16``, ``__be16``,
``__be32`` in include/linux/types.h): at run time every value is a plain ``int`` (no
wrapper, no cost), while a type checker tells the kinds apart, so a ``Sum16`` (the field
as a CPU register holds it) passed where a ``WireSum`` (the field read big-endian) is
expected is an error (tests/test_types.py runs mypy on such a snippet).

A literal of a kind is written ``Sum16(0x1c46)`` (an identity call at run time), the way
kernel code writes ``(__force __sum16)``. csum's own functions return their kinds without
that call (it costs a Python call on the hot path): their results come from the unchecked
arithmetic of csum/core/arith.py, and a ``# type: ignore[return-value]`` marks each such line.

The generic functions (``csum.csum_fold``, ``csum.ip_compute_csum`` ...) model a
little-endian CPU; a :class:`csum.Profile` of a big-endian architecture holds the
register kinds (``Wsum``, ``Sum16``, ``Be16``, ``Be32``) the way that CPU does.
"""

from typing import NewType

#: ``__wsum``: a 32-bit unfolded one's-complement running sum (u32), as the CPU's register holds it.
Wsum = NewType("Wsum", int)
#: ``__sum16``: a folded, complemented 16-bit checksum as the CPU's register holds the field;
#: on a little-endian CPU (csum's generic functions) ``int.from_bytes(field_bytes, "little")``.
Sum16 = NewType("Sum16", int)
#: ``__be16``: a 16-bit network-order field as the CPU's register holds it (on a little-endian
#: CPU ``int.from_bytes(field_bytes, "little")``: port 80 is ``0x5000``).
Be16 = NewType("Be16", int)
#: ``__be32``: a 32-bit network-order field as the CPU's register holds it (on a little-endian
#: CPU 192.0.2.1 is ``0x010200c0``).
Be32 = NewType("Be32", int)
#: A checksum as transmitted, read as a big-endian number whatever the CPU (what scapy and
#: Wireshark display): ``int.from_bytes(field_bytes, "big")``.
WireSum = NewType("WireSum", int)

__all__ = ["Be16", "Be32", "Sum16", "WireSum", "Wsum"]
