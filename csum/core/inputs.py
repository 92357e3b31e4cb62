"""Input checks, in one place: every public function validates through these.

Each check names the offending argument in its message, so a user sees
``seed must be an int in 0..0xffffffff, got -1`` rather than a wrong number.
"""

from __future__ import annotations

import ipaddress
import operator
import os
from collections.abc import Callable
from typing import Any, TypeVar, overload

from ..errors import Code, CsumTypeError, CsumValueError

_Int = TypeVar("_Int", bound=int)


def as_view(buf: Any, name: str) -> memoryview:
    """Return a flat unsigned-byte memoryview of ``buf`` (any C-contiguous buffer)."""
    if isinstance(buf, (bytes, bytearray)):
        return memoryview(buf)
    if isinstance(buf, str):
        raise CsumTypeError(f"{name} must be bytes-like, not str (encode it first)", code=Code.NOT_A_BUFFER)
    if getattr(buf, "ndim", None) == 0:  # a numpy scalar or 0-d array: a number (np.uint16(5)), not its bytes
        raise CsumTypeError(f"{name} must be a bytes-like object, not the number {type(buf).__name__} "
                            f"(a numpy scalar or 0-d array; pass bytes or a 1-D array)", code=Code.NOT_A_BUFFER)
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

    ``value`` itself is returned, so its kind (``Wsum``, ``Sum16`` ...; csum/types.py) is kept; a numpy
    integer scalar (any object with ``__index__``, never a bool) is returned as the plain int it stands for.
    """
    if type(value) is not int:
        value = as_int(value, f"an int in 0..{(1 << bits) - 1:#x}", name)
    if value < 0 or value >> bits:
        raise CsumValueError(
            f"{name} must be an int in 0..{(1 << bits) - 1:#x}, got {value:#x}", code=Code.OUT_OF_RANGE
        )
    return value


def as_int(value: Any, what: str, name: str) -> int:
    """``value`` as an int: an int (a subclass such as ``Wsum`` kept) or what ``__index__`` gives (numpy
    integer scalars); a bool, a float, a str or an object whose ``__index__`` fails is refused, naming
    ``name`` (``what`` says what it must be)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if not isinstance(value, bool) and type(value).__name__ not in ("bool", "bool_"):
        try:
            return operator.index(value)
        except Exception:  # noqa: BLE001  (any failure of a foreign __index__ is "not an int")
            pass
    raise CsumTypeError(f"{name} must be {what}, not {type(value).__name__}", code=Code.BAD_TYPE)


def check_int(value: Any, lo: int, hi: int, name: str) -> int:
    """``value`` (argument ``name``) as an int in ``lo..hi`` (numpy integer scalars accepted, bools refused)."""
    value = as_int(value, f"an int in {lo}..{hi}", name)
    if not lo <= value <= hi:
        raise CsumValueError(f"{name} must be an int in {lo}..{hi}, got {value}", code=Code.OUT_OF_RANGE)
    return value


def check_bool(value: Any, name: str) -> bool:
    """``value`` (argument ``name``) if it is True or False (numpy's bool too); never a str, an int or None."""
    if value is True or value is False:
        return value
    if type(value).__name__ in ("bool", "bool_") and type(value).__module__ == "numpy":
        return bool(value)
    raise CsumTypeError(f"{name} must be True or False, not {type(value).__name__}", code=Code.BAD_TYPE)


def check_str(value: Any, name: str, what: str = "a str") -> str:
    """``value`` (argument ``name``) if it is a str (``what`` says which kind of str, for the message)."""
    if not isinstance(value, str):
        raise CsumTypeError(f"{name} must be {what}, not {type(value).__name__}", code=Code.BAD_TYPE)
    return value


def check_choice(value: Any, choices: tuple[str, ...], name: str, code: Code = Code.BAD_VALUE) -> str:
    """``value`` (argument ``name``) if it is one of the strs ``choices``, else ``code`` (a CsumValueError code)."""
    if isinstance(value, str) and value in choices:
        return value
    want = ", ".join(repr(c) for c in choices)
    if not isinstance(value, str):
        raise CsumTypeError(f"{name} must be one of {want}, not {type(value).__name__}", code=Code.BAD_TYPE)
    raise CsumValueError(f"{name} must be one of {want}, got {value!r}", code=code)


def check_instance(value: Any, cls: type | tuple[type, ...], name: str) -> Any:
    """``value`` (argument ``name``) if it is an instance of ``cls`` (one of them, for a tuple)."""
    if not isinstance(value, cls):
        want = " or ".join(c.__name__ for c in (cls if isinstance(cls, tuple) else (cls,)))
        raise CsumTypeError(f"{name} must be a {want}, not {type(value).__name__}", code=Code.BAD_TYPE)
    return value


def check_callable(value: Any, name: str) -> Callable[..., Any]:
    """``value`` (argument ``name``) if it can be called."""
    if not callable(value):
        raise CsumTypeError(f"{name} must be callable, not {type(value).__name__}", code=Code.BAD_TYPE)
    return value


def check_list(value: Any, name: str) -> list[Any]:
    """``value`` (argument ``name``), an iterable that is not a str or a buffer, as a list; its items are the
    caller's to check (named ``name[i]``)."""
    if isinstance(value, (str, bytes, bytearray, memoryview)) or getattr(value, "ndim", None) == 0:
        raise CsumTypeError(f"{name} must be a list or another iterable, not {type(value).__name__}",
                            code=Code.BAD_TYPE)
    try:
        return list(value)
    except Exception:  # noqa: BLE001  (not iterable, or its __iter__ fails)
        raise CsumTypeError(f"{name} must be a list or another iterable, not {type(value).__name__}",
                            code=Code.BAD_TYPE) from None


def check_align(align: Any, name: str = "align") -> int:
    """``align`` (argument ``name``) is a buffer's byte offset from an 8-byte boundary: 0..7."""
    align = as_int(align, "an int in 0..7", name)
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


_FAMILY = {4: "IPv4", 16: "IPv6"}


def check_address(value: Any, size: int, name: str, *, be32: bool = False) -> bytes:
    """The ``size`` network-order bytes (4: IPv4, 16: IPv6) of address ``value`` (argument ``name``): its text,
    an ``ipaddress`` object or its bytes; with ``be32``, an IPv4 address may also be a ``__be32`` int as a
    little-endian CPU holds it (a numpy integer too)."""
    kind = _FAMILY[size]
    if not isinstance(value, (bytes, bytearray, memoryview, str)) and (
            isinstance(value, int) or getattr(value, "ndim", None) == 0):  # an int, a numpy scalar
        if be32 and size == 4:
            return check_uint(value, 32, name).to_bytes(4, "little")
        raise CsumTypeError(f"{name} must be an {kind} address (a string, an ipaddress object or its {size} bytes), "
                            f"not {type(value).__name__}", code=Code.BAD_TYPE)
    if isinstance(value, (str, ipaddress.IPv4Address, ipaddress.IPv6Address)):
        try:
            packed = ipaddress.ip_address(value).packed
        except ValueError:
            raise CsumValueError(f"{name} must be an {kind} address (a string like "
                                 f"{'192.0.2.1' if size == 4 else '2001:db8::1'}, an ipaddress object or its "
                                 f"{size} bytes), got {value!r}", code=Code.BAD_ADDRESS) from None
        if len(packed) != size:
            raise CsumValueError(f"{name} must be an {kind} address, got {value!r}", code=Code.BAD_ADDRESS)
        return packed
    try:
        view = as_view(value, name)
    except CsumTypeError:
        raise CsumTypeError(f"{name} must be an {kind} address: a string, an ipaddress object, its {size} bytes"
                            f"{' or a __be32 int' if be32 and size == 4 else ''}; not {type(value).__name__}",
                            code=Code.BAD_TYPE) from None
    if len(view) != size:
        raise CsumValueError(f"{name} must be an {kind} address ({size} bytes), got {len(view)} bytes",
                             code=Code.BAD_ADDRESS)
    return view.tobytes()


#: Worker processes per usable core at most (``jobs=``, ``--jobs``): checking and rewriting are CPU-bound, so
#: processes beyond the cores only add memory (each holds its chunks) and start-up time; 4 per core leaves room for
#: workers waiting on a slow disk or a decompressor. ``--jobs 100000`` forked hundreds of workers before.
JOBS_PER_CORE = 4


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity; every core where that is unknown)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def max_jobs() -> int:
    """The most processes ``jobs=`` may ask for: :data:`JOBS_PER_CORE` per usable core."""
    return JOBS_PER_CORE * usable_cores()


def check_jobs(value: Any, name: str = "jobs") -> int:
    """``value`` (argument ``name``), a number of processes: an int in 1..:func:`max_jobs` (say why it is capped)."""
    cap = max_jobs()
    value = as_int(value, f"an int in 1..{cap}", name)
    if not 1 <= value <= cap:
        raise CsumValueError(f"{name} must be an int in 1..{cap} ({JOBS_PER_CORE} per usable core, "
                             f"{usable_cores()} here: more processes than cores only add memory), got {value}",
                             code=Code.OUT_OF_RANGE)
    return value


def check_path(value: Any, name: str) -> str:
    """``value`` (argument ``name``), a file name: a str or an ``os.PathLike`` giving one, without a NUL (an empty or
    missing one is the opening's to refuse)."""
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if not isinstance(value, str):
        raise CsumTypeError(f"{name} must be a file name (a str or a pathlib.Path), not {type(value).__name__}",
                            code=Code.BAD_TYPE)
    if "\0" in value:
        raise CsumValueError(f"{name} must be a file name, got {value!r}", code=Code.BAD_VALUE)
    return value
