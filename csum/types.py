"""Names for the kinds of number checksum code passes around.

They are plain ``int`` aliases: they document width and byte order in
signatures, the way the kernel's sparse types (``__wsum``, ``__sum16``,
``__be32``) do in include/linux/types.h.
"""

from typing import TypeAlias

#: ``__wsum``: a 32-bit unfolded one's-complement running sum (u32).
Wsum: TypeAlias = int
#: ``__sum16``: a folded, complemented 16-bit checksum, as a little-endian CPU
#: holds the field: ``int.from_bytes(field_bytes, "little")``.
Sum16: TypeAlias = int
#: ``__be16``: a 16-bit network-order field, as a little-endian CPU holds it.
Be16: TypeAlias = int
#: ``__be32``: a 32-bit network-order field, as a little-endian CPU holds it.
Be32: TypeAlias = int
#: A checksum as transmitted, read as a big-endian number (what scapy and
#: Wireshark display): ``int.from_bytes(field_bytes, "big")``.
WireSum: TypeAlias = int
