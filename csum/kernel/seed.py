"""Values for a BPF object's maps and globals, as a test harness seeds them: parsed, sized, encoded.

A value (a map key or value, a global) is given as

* bytes of exactly the field's size;
* an int, or a string of one (``"8080"``, ``"0x1f90"``): stored little-endian in the field's size, as the
  C program's integer holds it on x86_64 and aarch64 (use an address or ``hex:`` for network order);
* an IPv4 or IPv6 address string (``"192.0.2.1"``, ``"2001:db8::1"``): its 4 or 16 bytes in network order;
* ``"hex:c0000201"``: the bytes themselves;
* a list of byte values (ints or ``"0x.."`` strings), as ``bpftool map dump -j`` prints them.

A map file (``--map NAME=FILE.json``) holds a list of ``{"key": ..., "value": ...}`` entries (bpftool's dump
format among them) or one JSON object of key -> value.
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Iterable, Mapping
from typing import Any

from ..errors import Code, CsumValueError

__all__ = ["Value", "encode", "entries", "read_map_file"]

Value = Any  # bytes | int | str | list of byte values


def _int(text: str) -> int | None:
    try:
        return int(text, 0)
    except ValueError:
        return None


def encode(value: Value, size: int, what: str) -> bytes:
    """``value`` as the ``size`` bytes of field ``what`` (see the module docstring); raises CsumValueError naming it."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        data = bytes(value)
    elif isinstance(value, bool):
        raise CsumValueError(f"{what}: a bool is not a value; give an int, an address or hex:BYTES",
                             code=Code.BAD_VALUE)
    elif isinstance(value, int):
        if not 0 <= value < 1 << (8 * size) and not -(1 << (8 * size - 1)) <= value < 0:
            raise CsumValueError(f"{what}: {value} does not fit in {size} bytes", code=Code.OUT_OF_RANGE)
        return (value % (1 << (8 * size))).to_bytes(size, "little")
    elif isinstance(value, list):
        try:
            data = bytes(int(v, 0) if isinstance(v, str) else v for v in value)
        except (TypeError, ValueError):
            raise CsumValueError(f"{what}: a list must hold byte values (0..255 or '0x..'), got {value!r}",
                                 code=Code.BAD_VALUE) from None
    elif isinstance(value, str):
        text = value.strip()
        number = _int(text)
        if number is not None:
            return encode(number, size, what)
        if text.startswith("hex:"):
            try:
                data = bytes.fromhex(text[4:])
            except ValueError:
                raise CsumValueError(f"{what}: {text!r} is not hex:BYTES", code=Code.BAD_VALUE) from None
        else:
            try:
                data = ipaddress.ip_address(text).packed
            except ValueError:
                raise CsumValueError(f"{what}: {text!r} is neither an integer, an IP address nor hex:BYTES",
                                     code=Code.BAD_VALUE) from None
    else:
        raise CsumValueError(f"{what}: cannot use a {type(value).__name__} as a value", code=Code.BAD_VALUE)
    if len(data) != size:
        raise CsumValueError(f"{what}: {len(data)} bytes given for a {size}-byte field", code=Code.BAD_WIDTH)
    return data


def entries(items: Mapping[Any, Value] | Iterable[Any], what: str) -> list[tuple[Value, Value]]:
    """(key, value) pairs of a mapping, of (key, value) pairs, or of {"key":, "value":} objects."""
    if isinstance(items, Mapping):
        return list(items.items())
    out = []
    for item in items:
        if isinstance(item, Mapping) and "key" in item and "value" in item:
            out.append((item["key"], item["value"]))
        elif isinstance(item, (tuple, list)) and len(item) == 2:
            out.append((item[0], item[1]))
        else:
            raise CsumValueError(f"{what}: an entry must be {{\"key\": ..., \"value\": ...}} or a (key, value) pair, "
                                 f"not {item!r}", code=Code.BAD_VALUE)
    return out


def read_map_file(path: str, what: str) -> list[tuple[Value, Value]]:
    """The (key, value) entries of a JSON map file (see the module docstring)."""
    try:
        with open(path, encoding="utf-8") as fh:
            doc = json.load(fh)
    except OSError as exc:
        raise CsumValueError(f"{what}: cannot read {path}: {exc.strerror}", code=Code.BAD_VALUE) from None
    except json.JSONDecodeError as exc:
        raise CsumValueError(f"{what}: {path} is not JSON: {exc}", code=Code.BAD_VALUE) from None
    if not isinstance(doc, (list, dict)):
        raise CsumValueError(f"{what}: {path} must hold a list of entries or an object", code=Code.BAD_VALUE)
    return entries(doc, what)
