"""Crypto-PAn: prefix-preserving IP address anonymization (Xu, Fan, Ammar, Moon, ICNP 2002).

Two addresses sharing a k-bit prefix map to two addresses sharing a k-bit prefix, and the same 32-byte key gives
the same mapping in every file and run. Bit i of the result is bit i of the address XOR the first bit of
AES-128(key[:16]) applied to the address's first i bits followed by the pad's bits from i on, the pad being
AES-128(key[:16], key[16:]); IPv4 addresses are the top 32 bits of the 128-bit block (as the reference
implementation and the ``yacryptopan`` package do it: tests/rewrite/test_cryptopan.py compares them address for
address). AES comes from the ``cryptography`` package (the ``[anonymize]`` extra).
"""

from __future__ import annotations

from ..errors import Code, CsumValueError

__all__ = ["CryptoPAn"]

#: Addresses remembered per instance (a capture has few distinct ones); the cache starts again when full.
CACHE = 1 << 16


class CryptoPAn:
    """The Crypto-PAn mapping of one 32-byte key; :meth:`anonymize_packed` maps 4 or 16 network-order bytes."""

    def __init__(self, key: bytes) -> None:
        try:
            from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
        except ImportError:
            raise CsumValueError("--anonymize needs the cryptography package: pip install 'linux-csum[anonymize]'",
                                 code=Code.MISSING_CRYPTOGRAPHY) from None
        if len(key) != 32:
            raise CsumValueError(f"a Crypto-PAn key is 32 bytes, got {len(key)}", code=Code.BAD_RULE)
        self._aes = Cipher(algorithms.AES(key[:16]), modes.ECB()).encryptor()
        self._pad = int.from_bytes(self._aes.update(key[16:]), "big")
        self._cache: dict[bytes, bytes] = {}

    def _flips(self, value: int, bits: int) -> int:
        """The one-time pad of the ``bits``-bit address ``value`` (its top bits in a 128-bit block)."""
        ext, out, update = value << (128 - bits), 0, self._aes.update
        for pos in range(bits):
            keep = 128 - pos
            block = (ext >> keep << keep) | (self._pad & ((1 << keep) - 1))
            out = (out << 1) | (update(block.to_bytes(16, "big"))[0] >> 7)
        return out

    def anonymize_int(self, value: int, version: int) -> int:
        """``value`` (an IPv4 or IPv6 address as an int) anonymized."""
        bits = 32 if version == 4 else 128
        return value ^ self._flips(value, bits)

    def anonymize_packed(self, packed: bytes) -> bytes:
        """4 or 16 network-order address bytes anonymized."""
        hit = self._cache.get(packed)
        if hit is None:
            version = 4 if len(packed) == 4 else 6
            hit = self.anonymize_int(int.from_bytes(packed, "big"), version).to_bytes(len(packed), "big")
            if len(self._cache) >= CACHE:
                self._cache.clear()
            self._cache[packed] = hit
        return hit
