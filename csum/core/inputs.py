"""Input checks, in one place: every public function validates through these.

Each check names the offending argument in its message, so a user sees
``seed must be an int in 0..0xffffffff, got -1`` rather than a wrong number.
"""

from __future__ import annotations

from typing import Any, TypeVar, overload

from ..errors import Code, CsumTypeError, CsumValueError

_Int = TypeVar("_Int", bound=int)


def as_view(buf: Any, name: str) -> memoryview:
    """Return a flat unsigned-byte memoryview of ``buf`` (any C-contiguous buffer)."""
    if isinstance(buf, (bytes, bytearray)):
        return memoryview(buf)
    if isinstance(buf, str):
        raise CsumTypeError(f"{name} must be bytes-like, not str (encode it first)", code=Code.NOT_A_BUFFER)
    try:
        view = memoryview(buf)
    except TypeError:
        raise CsumTypeError(
            f"{name} must be a bytes-like object (bytes, bytearray, memoryview, numpy array), "
            f"not {type(buf).__name__}",
            code=Code.NOT_A_BUFFER,
        ) from None
    if not view.c_contiguous:
        raise CsumValueError(
            f"{name} must be C-contiguous; pass a contiguous copy (e.g. bytes(view) or numpy.ascontiguousarray)",
            code=Code.NOT_CONTIGUOUS,
        )
    if view.format != "B" or view.ndim != 1:
        if not view.nbytes:  # memoryview.cast refuses a shape with a zero in it: no bytes, the empty view
            return memoryview(b"" if view.readonly else bytearray())
        view = view.cast("B")
    return view


@overload
def check_uint(value: _Int, bits: int, name: str) -> _Int: ...
@overload
def check_uint(value: object, bits: int, name: str) -> int: ...
def check_uint(value: Any, bits: int, name: str) -> int:
    """Return ``value`` if it is an int in 0..2**bits-1, else raise naming ``name``.

    ``value`` itself is returned, so its kind (``Wsum``, ``Sum16`` ...; csum/types.py) is kept.
    """
    if isinstance(value, bool) or not isinstance(value, int):
        raise CsumTypeError(
            f"{name} must be an int in 0..{(1 << bits) - 1:#x}, not {type(value).__name__}", code=Code.BAD_TYPE
        )
    if value < 0 or value >> bits:
        raise CsumValueError(
            f"{name} must be an int in 0..{(1 << bits) - 1:#x}, got {value:#x}", code=Code.OUT_OF_RANGE
        )
    return value


def check_align(align: Any, name: str = "align") -> int:
    """``align`` (argument ``name``) is a buffer's byte offset from an 8-byte boundary: 0..7."""
    if isinstance(align, bool) or not isinstance(align, int):
        raise CsumTypeError(f"{name} must be an int in 0..7, not {type(align).__name__}", code=Code.BAD_TYPE)
    if not 0 <= align <= 7:
        raise CsumValueError(f"{name} must be in 0..7 (offset from an 8-byte boundary), got {align}",
                             code=Code.OUT_OF_RANGE)
    return align


def check_field(buf: Any, sizes: tuple[int, ...], name: str) -> bytes:
    """Return ``buf`` as bytes if it is bytes-like and its length is one of ``sizes``."""
    data = as_view(buf, name).tobytes()
    if len(data) not in sizes:
        want = " or ".join(str(s) for s in sizes)
        raise CsumValueError(f"{name} must be {want} bytes long, got {len(data)}", code=Code.BAD_WIDTH)
    return data
