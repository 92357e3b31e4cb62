"""A naive RFC 1071 model, written from the RFC's section 4.1 C example: the tests' oracle.

Word by word, with an explicit end-around carry, no tricks: slow and obviously right.
"""


def ones_sum16(data: bytes, byteorder: str = "big") -> int:
    """The 16-bit one's-complement sum of ``data`` as 16-bit words (odd tail zero-padded)."""
    if len(data) % 2:
        data += b"\x00"  # the odd byte is the first byte of a zero-padded word
    total = 0
    for i in range(0, len(data), 2):
        total += int.from_bytes(data[i : i + 2], byteorder)
        while total >> 16:
            total = (total & 0xFFFF) + (total >> 16)
    return total


def rfc1071_checksum(data: bytes) -> int:
    """The transmitted checksum, read big-endian: ~sum of big-endian words."""
    return ~ones_sum16(data, "big") & 0xFFFF


def ones_add32(a: int, b: int) -> int:
    """32-bit add with end-around carry, one step at a time."""
    total = a + b
    if total > 0xFFFFFFFF:
        total -= 0xFFFFFFFF
    return total


def fold16(x: int) -> int:
    """Fold a 32-bit sum to 16 bits with end-around carries."""
    while x >> 16:
        x = (x & 0xFFFF) + (x >> 16)
    return x
