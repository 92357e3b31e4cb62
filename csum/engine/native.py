"""The pure-Python and numpy twins of csum/engine/_speedups.c: the engines used when the C one is not.

Each engine is a pair of functions with the C extension's signatures and the
same bits for every input (tests/engine/test_engine.py runs each against a naive loop):

* ``ones_sum(buf, width, byteorder) -> int``: the canonical ``width``-bit
  one's-complement sum of ``buf`` (see csum/engine/__init__.py for the definition);
* ``ones_sum_many(buf, offsets, lengths, out, width, byteorder) -> None``: the
  same for every ``buf[offsets[i] : offsets[i] + lengths[i]]`` into ``out[i]``.

Like the C functions, ``ones_sum`` returns NotImplemented for arguments it does
not sum (not a C-contiguous buffer, another width or byte order; csum/engine/__init__.py
then raises csum's error naming the caller's argument), and ``ones_sum_many``,
whose caller checks first, raises ``TypeError``/``BufferError``/``ValueError``.

``python`` is ``int.from_bytes`` plus one ``%`` (both linear in CPython), the
reference; ``numpy`` is the same below :data:`NUMPY_MIN_BYTES` and a numpy
reduction over 32-bit words above it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..core.arith import canonical

if TYPE_CHECKING:
    from . import ByteOrder

WIDTHS = (8, 16, 32, 64)
#: Buffers at least this long are summed with numpy by the ``numpy`` engine (crossover measured by bench/).
NUMPY_MIN_BYTES = 2048
#: Bytes per numpy reduction: 2**31 32-bit words, each < 2**32, sum below 2**63 in a uint64.
_NUMPY_CHUNK = 1 << 33

def _bytes_view(buf: Any, width: Any, byteorder: Any) -> memoryview:
    """``buf`` as flat unsigned bytes, after the checks the C extension makes (builtin exceptions)."""
    view = memoryview(buf)  # TypeError when buf has no buffer interface
    if not view.c_contiguous:
        raise BufferError("buffer is not C-contiguous")
    if view.ndim == 0 or (not isinstance(buf, (bytes, bytearray, memoryview)) and getattr(buf, "ndim", 1) == 0):
        raise TypeError("a numpy scalar (datetime64 too, whose buffer is 1-D) or 0-d buffer is a number, not bytes")
    if width not in WIDTHS or width.__class__ is not int:
        raise ValueError("width must be 8, 16, 32 or 64")
    if byteorder != "little" and byteorder != "big":
        raise ValueError("byteorder must be 'little' or 'big'")
    return view if view.format == "B" and view.ndim == 1 else view.cast("B")


def _int_sum(view: Any, width: int, byteorder: str) -> int:
    n = int.from_bytes(view, "big" if byteorder == "big" else "little")  # the caller checked it is one of the two
    if byteorder == "big":
        n <<= 8 * (-len(view) % (width // 8))
    return canonical(n, width)


def _refused(buf: Any, width: Any, byteorder: Any) -> memoryview | None:
    """:func:`_bytes_view`, or None where it raises: the NotImplemented cases of ``ones_sum``."""
    try:
        return _bytes_view(buf, width, byteorder)
    except (TypeError, BufferError, ValueError):
        return None


def ones_sum(buf: Any, width: int, byteorder: str, name: str = "view") -> Any:
    """The ``python`` engine: ``int.from_bytes`` and one reduction (``name`` unused, as in C)."""
    view = _refused(buf, width, byteorder)
    return NotImplemented if view is None else _int_sum(view, width, byteorder)


def _numpy_sum(view: memoryview, width: int, byteorder: str) -> int:
    """Exact word sums with numpy, reduced like :func:`_int_sum` (same bits)."""
    import numpy as np

    whole = len(view) & ~7
    big = byteorder == "big"
    # 64-bit sums, and 32-bit big-endian ones, need the two 32-bit halves of each 64-bit word
    # apart; any width dividing 32 is the plain sum of little-endian 32-bit words (a 16-bit
    # big-endian sum is the little-endian one byte-swapped, RFC 1071 section 2(B)).
    lanes = width == 64 or (big and width == 32)
    order: ByteOrder = "big" if lanes and big else "little"
    words = np.frombuffer(view, dtype=">u4" if order == "big" else "<u4", count=whole // 4)
    total = 0
    step = _NUMPY_CHUNK // 4
    for start in range(0, len(words), step):
        chunk = words[start : start + step]
        if lanes:
            first, second = int(chunk[0::2].sum(dtype=np.uint64)), int(chunk[1::2].sum(dtype=np.uint64))
            total += (first << 32) + second if big else first + (second << 32)
        else:
            total += int(chunk.sum(dtype=np.uint64))
    tail = bytes(view[whole:])
    total += int.from_bytes(tail + bytes(8 - len(tail)) if order == "big" and tail else tail, order)
    if big and width == 16:
        s = canonical(total, 16)
        return ((s & 0xFF) << 8) | (s >> 8)
    return canonical(total, width)


def numpy_ones_sum(buf: Any, width: int, byteorder: str, name: str = "view") -> Any:
    """The ``numpy`` engine: Python ints for short buffers, numpy reductions from :data:`NUMPY_MIN_BYTES` on."""
    view = _refused(buf, width, byteorder)
    if view is None:
        return NotImplemented
    if len(view) >= NUMPY_MIN_BYTES:
        return _numpy_sum(view, width, byteorder)
    return _int_sum(view, width, byteorder)


def _rows(buf: Any, offsets: Any, lengths: Any, out: Any, width: Any, byteorder: Any) -> memoryview:
    """The C extension's checks of ``ones_sum_many``'s arguments, with builtin exceptions."""
    view = _bytes_view(buf, width, byteorder)
    if not (len(offsets) == len(lengths) == len(out)):
        raise ValueError("offsets, lengths and out must have the same length")
    if len(offsets) and (offsets.min() < 0 or lengths.min() < 0 or (offsets + lengths).max() > len(view)):
        raise ValueError("a row lies outside buf")
    return view


def ones_sum_many(buf: Any, offsets: Any, lengths: Any, out: Any, width: int, byteorder: str) -> None:
    """The ``python`` engine's row sums: :func:`ones_sum` of each slice, one by one (the reference)."""
    view = _rows(buf, offsets, lengths, out, width, byteorder)
    for i, (start, length) in enumerate(zip(offsets.tolist(), lengths.tolist())):
        out[i] = _int_sum(view[start : start + length], width, byteorder)


def numpy_ones_sum_many(buf: Any, offsets: Any, lengths: Any, out: Any, width: int, byteorder: str) -> None:
    """The ``numpy`` engine's row sums: per-row sums of the bytes at each position within a word.

    Rows that tile ``buf`` back to back with one length (a 2-D array) are reshaped; any
    other layout goes through prefix sums over each residue class of byte positions.
    """
    import numpy as np

    view = _rows(buf, offsets, lengths, out, width, byteorder)
    k = width // 8
    data = np.frombuffer(view, dtype=np.uint8)
    n = len(offsets)
    if n == 0:
        return
    length = int(lengths[0])
    if (lengths == length).all() and (offsets == int(offsets[0]) + length * np.arange(n)).all():
        rows = data[int(offsets[0]) : int(offsets[0]) + n * length].reshape(n, length)
        if length % k:
            rows = np.pad(rows, ((0, 0), (0, k - length % k)))
        cols = rows.reshape(n, rows.shape[1] // k, k).sum(axis=1, dtype=np.uint64)
    else:
        ends, index = offsets + lengths, np.arange(n)
        cols = np.empty((n, k), dtype=np.uint64)
        for r in range(k):
            prefix = np.concatenate(([0], np.cumsum(data[r::k], dtype=np.uint64)))
            before = lambda i: np.maximum(i - r + k - 1, 0) // k  # noqa: E731  how many t < i have t % k == r
            # the bytes at residue r sit at position (r - offset) % k of each row's words
            cols[index, (r - offsets) % k] = prefix[before(ends)] - prefix[before(offsets)]
    out[:] = _combine(cols, width, byteorder)


def _combine(cols: Any, width: int, byteorder: str) -> Any:
    """Canonical sums from per-row sums of the bytes at each position within a word, shape (N, width/8)."""
    import numpy as np

    k = width // 8
    m = np.uint64((1 << width) - 1)
    if width == 64:  # terms would overflow uint64: exact Python ints per row
        return np.fromiter((canonical(sum(int(c) << (8 * (j if byteorder == "little" else k - 1 - j))
                                          for j, c in enumerate(row)), 64) for row in cols.tolist()),
                           dtype=np.uint64, count=len(cols))
    total = np.zeros(len(cols), dtype=np.uint64)
    for j in range(k):
        shift = 8 * j if byteorder == "little" else 8 * (k - 1 - j)
        total += (cols[:, j] % m) << np.uint64(shift)  # < 2**(2 * width - 8) per term: no overflow up to 32
    r = total % m
    return np.where((r == 0) & cols.any(axis=1), m, r)
