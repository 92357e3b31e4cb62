"""Many packets at once: Internet checksums and ``csum_partial`` emulations over numpy arrays.

Two layouts:

* a 2-D ``uint8`` array, one packet per row (``packets2d``, shape ``(N, L)``);
  a non-C-contiguous array (a slice with steps, a transposed view) is copied
  into a contiguous one first;
* one bytes-like buffer plus ``offsets`` and ``lengths`` (ragged: e.g. the
  packets of a pcap, read once); the buffer must be C-contiguous (else
  ``CsumValueError``, code ``not-contiguous``) and every
  ``buf[offsets[i] : offsets[i] + lengths[i]]`` must lie inside it.

Every function gives, row by row, the same bits as its scalar counterpart:
:func:`internet_checksums` as :func:`csum.internet_checksum` (RFC 1071),
:func:`csum_partials` as ``csum.profile(name).csum_partial``. The sums come
from the bound engine's ``ones_sum_many`` (csum/engine/__init__.py: C, or numpy
byte-position sums); the per-architecture arithmetic on the sums is
vectorized for the algorithms with a form registered beside the scalar one
(csum.arch.register_vectorized, below), and any other registered
algorithm falls back to its scalar emulation row by row (correct, not fast).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import engine
from .arch import register_vectorized, vectorized
from .arch.profiles import profile_named
from .core.arith_np import M16, M32, add32, canonical, from32to16, ror32, swab16
from .core.inputs import as_int, as_view, check_align, check_choice, check_uint
from .errors import Code, CsumTypeError, CsumValueError
from .types import Wsum


def _as_packets(packets2d: Any) -> np.ndarray:
    if not isinstance(packets2d, np.ndarray):
        raise CsumTypeError(f"packets2d must be a numpy uint8 array of shape (N, L), not {type(packets2d).__name__}",
                            code=Code.NOT_AN_ARRAY)
    if packets2d.dtype != np.uint8 or packets2d.ndim != 2:
        raise CsumTypeError(f"packets2d must be a uint8 array of shape (N, L), got {packets2d.dtype} "
                            f"with shape {packets2d.shape}", code=Code.BAD_ARRAY)
    return np.ascontiguousarray(packets2d)


def _as_array(values: Any, name: str) -> np.ndarray:
    """``values`` as a numpy array; a ragged nesting or an object numpy cannot read raises naming ``name``."""
    try:
        return np.asarray(values)
    except (ValueError, TypeError):
        raise CsumTypeError(f"{name} must be a 1-D array of integers, not {type(values).__name__} that numpy "
                            f"cannot read as one", code=Code.BAD_ARRAY) from None
    except MemoryError:  # range(2**40): a bare MemoryError before
        raise CsumValueError(f"{name} does not fit in memory as a numpy array (a {type(values).__name__} of too "
                             f"many items)", code=Code.TOO_LARGE) from None


def _as_index(values: Any, name: str) -> np.ndarray:
    arr = _as_array(values, name)
    if arr.ndim != 1 or (arr.size and arr.dtype.kind not in "iu"):
        raise CsumTypeError(f"{name} must be a 1-D array of integers, got dtype {arr.dtype} with shape {arr.shape}",
                            code=Code.BAD_ARRAY)
    if arr.size and (arr.min() < 0 or arr.max() > np.iinfo(np.int64).max):
        raise CsumValueError(f"{name} must hold integers in 0..2**63-1", code=Code.OUT_OF_RANGE)
    return np.ascontiguousarray(arr, dtype=np.int64)


def _ragged(buf: Any, offsets: Any, lengths: Any) -> tuple[memoryview, np.ndarray, np.ndarray]:
    view = as_view(buf, "buf")
    offs, lens = _as_index(offsets, "offsets"), _as_index(lengths, "lengths")
    if offs.shape != lens.shape:
        raise CsumValueError(f"offsets and lengths must have the same length, got {len(offs)} and {len(lens)}",
                             code=Code.BAD_SHAPE)
    outside = np.flatnonzero((offs > len(view)) | (lens > len(view) - offs)) if len(offs) else offs  # no overflow
    if len(outside):
        i = int(outside[0])
        raise CsumValueError(f"offsets[{i}] + lengths[{i}] = {offs[i]} + {lens[i]} is past the end of buf "
                             f"({len(view)} bytes)", code=Code.OUT_OF_RANGE)
    return view, offs, lens


def _sums(view: Any, offs: np.ndarray, lens: np.ndarray, width: int, byteorder: str) -> np.ndarray:
    out = np.zeros(len(offs), dtype=np.uint64)
    engine.ones_sum_many(view, offs, lens, out, width, byteorder)
    return out


def ones_sums(packets2d: np.ndarray, width: int = 16, byteorder: str = "little") -> np.ndarray:
    """Per row, what :func:`csum.engine.ones_sum` gives: canonical ``width``-bit sums (16 or 32), uint64 (N,)."""
    packets = _as_packets(packets2d)
    _check_word(width, byteorder)
    n, length = packets.shape
    offs = np.arange(n, dtype=np.int64) * length
    return _sums(packets.reshape(-1), offs, np.full(n, length, dtype=np.int64), width, byteorder)


def ones_sums_ragged(buf: Any, offsets: Any, lengths: Any, width: int = 16, byteorder: str = "little") -> np.ndarray:
    """Per packet ``buf[offsets[i] : offsets[i] + lengths[i]]``, the canonical ``width``-bit sum, uint64 (N,)."""
    view, offs, lens = _ragged(buf, offsets, lengths)
    _check_word(width, byteorder)
    return _sums(view, offs, lens, width, byteorder)


def _check_word(width: int, byteorder: str) -> None:
    if as_int(width, "16 or 32", "width") not in (16, 32):
        raise CsumValueError(f"width must be 16 or 32, got {width!r}", code=Code.BAD_WIDTH)
    check_choice(byteorder, ("little", "big"), "byteorder", Code.BAD_BYTEORDER)


def internet_checksums(packets2d: np.ndarray) -> np.ndarray:
    """RFC 1071 checksum of every row, as transmitted (== ``csum.internet_checksum(row)``): uint16 (N,)."""
    return (ones_sums(packets2d, 16, "big") ^ M16).astype(np.uint16)


def internet_checksums_ragged(buf: Any, offsets: Any, lengths: Any) -> np.ndarray:
    """RFC 1071 checksum of every ``buf[offsets[i] : offsets[i] + lengths[i]]``: uint16 (N,)."""
    return (ones_sums_ragged(buf, offsets, lengths, 16, "big") ^ M16).astype(np.uint16)


# --- csum_partial emulations, vectorized over rows -------------------------------------------

def _kleen(packets: np.ndarray, seeds: np.ndarray) -> np.ndarray:
    """arch/x86/lib/csum-partial_64.c (<= 5.16) at an 8-byte-aligned start: 64-bit words, then u32/u16/byte tails."""
    length = packets.shape[1]
    whole = length & ~7
    total = ones_sums(packets[:, :whole], 32, "little")
    pos = whole
    for size in (4, 2, 1):
        if length & size:
            term = np.zeros(len(packets), dtype=np.uint64)
            for j in range(size):
                term |= packets[:, pos + j].astype(np.uint64) << np.uint64(8 * j)
            total = total + term
            pos += size
    return add32(canonical(total % M32, total != 0, 32), seeds)


def _x86_v5_17_odd(packets: np.ndarray, seeds: np.ndarray) -> np.ndarray:
    """csum-partial_64.c (5.17 .. 6.6) at an odd address: rotated seed, first byte high, fold, swap."""
    if packets.shape[1] == 0:
        return seeds
    rest = ones_sums(packets[:, 1:], 16, "little")
    total = ror32(seeds, 8) + (packets[:, 0].astype(np.uint64) << np.uint64(8)) + rest
    return swab16(canonical(total % M16, total != 0, 16))


#: The vectorized forms, registered beside the scalar algorithms (csum.arch): (rows, seeds, align) -> u32 sums.
_FORMS = {
    "lib/checksum.c-le": lambda p, s, a: add32(ones_sums(p, 16, "little"), s),
    "lib/checksum.c-be": lambda p, s, a: add32(ones_sums(p, 16, "big"), s),
    "parisc": lambda p, s, a: from32to16(add32(ones_sums(p, 16, "big"), s)),
    "x86_64": lambda p, s, a: add32(ones_sums(p, 32, "little"), s),
    "x86_64-5.17": lambda p, s, a: _x86_v5_17_odd(p, s) if a & 1 else add32(ones_sums(p, 32, "little"), s),
    "x86_64-kleen": lambda p, s, a: _kleen(p, s) if a == 0 else None,
    "s390x": lambda p, s, a: add32(ones_sums(p, 32, "big"), s),
}
for _name, _form in _FORMS.items():
    register_vectorized(_name)(_form)


def _seeds(seed: Any, n: int) -> np.ndarray:
    arr = _as_array(seed, "seed") if isinstance(seed, (np.ndarray, list, tuple)) else None
    if arr is None or arr.ndim == 0:  # one u32 (a numpy integer too)
        return np.full(n, check_uint(seed, 32, "seed"), dtype=np.uint64)
    if arr.shape != (n,) or (n and arr.dtype.kind not in "iu"):
        raise CsumTypeError(f"seed must be an int or an integer array of shape ({n},), got {arr.dtype} {arr.shape}",
                            code=Code.BAD_ARRAY)
    if n and (arr.min() < 0 or arr.max() > 0xFFFFFFFF):
        raise CsumValueError("seed values must be in 0..0xffffffff", code=Code.OUT_OF_RANGE)
    return arr.astype(np.uint64)


def csum_partials(packets2d: np.ndarray, seed: Any = 0, *, profile: str = "generic", kernel: str | None = None,
                  align: int = 0) -> np.ndarray:
    """Per row, ``csum.profile(profile, kernel).csum_partial(row, seed, align=align)``: uint32 (N,).

    ``seed`` is one u32 for every row or an integer array of N of them.
    """
    packets = _as_packets(packets2d)
    align = check_align(align)
    prof = profile_named(profile, kernel, "profile")
    seeds = _seeds(seed, len(packets))
    form = vectorized(prof.implementation.algorithm)
    result = form(packets, seeds, align) if form else None
    if result is None:  # no vectorized form for this algorithm (or this alignment): the scalar emulation
        result = np.fromiter((prof.csum_partial(row, Wsum(int(s)), align=align) for row, s in zip(packets, seeds)),
                             dtype=np.uint64, count=len(packets))
    return result.astype(np.uint32)
