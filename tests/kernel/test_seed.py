"""csum.kernel.seed: map keys, values and globals as csum prog takes them; expected bytes written out by hand."""

from __future__ import annotations

import json

import pytest

from csum.errors import Code, CsumValueError
from csum.kernel.seed import encode, entries, read_map_file


def test_encodings():
    """Ints little-endian in the field's size (as the C integer holds them on x86_64), addresses in network order,
    hex: the bytes, bpftool's byte lists, bytes as they are."""
    assert encode(0x1F90, 2, "v") == b"\x90\x1f" and encode("8080", 4, "v") == b"\x90\x1f\x00\x00"
    assert encode("0x1f90", 2, "v") == b"\x90\x1f" and encode(-1, 2, "v") == b"\xff\xff"
    assert encode("192.0.2.1", 4, "v") == b"\xc0\x00\x02\x01"
    assert encode("2001:db8::1", 16, "v") == bytes.fromhex("20010db8000000000000000000000001")
    assert encode("hex:c0000201", 4, "v") == b"\xc0\x00\x02\x01"
    assert encode(["0xc0", "0x00", 2, 1], 4, "v") == b"\xc0\x00\x02\x01" and encode(b"ab", 2, "v") == b"ab"


@pytest.mark.parametrize("value, size, code", [
    (70000, 2, Code.OUT_OF_RANGE), ("192.0.2.1", 2, Code.BAD_WIDTH), ("nope", 4, Code.BAD_VALUE),
    ("hex:zz", 1, Code.BAD_VALUE), ([300], 1, Code.BAD_VALUE), (True, 1, Code.BAD_VALUE), (1.5, 4, Code.BAD_VALUE)])
def test_bad_values_name_the_field(value, size, code):
    with pytest.raises(CsumValueError, match="^map x key: ") as err:
        encode(value, size, "map x key")
    assert err.value.code == code


def test_map_files(tmp_path):
    """A list of {"key", "value"} (bpftool map dump -j) or an object; anything else is a clear error."""
    listed = tmp_path / "a.json"
    listed.write_text(json.dumps([{"key": ["0x0a", 0, 0, 2], "value": "192.0.2.80"}]))
    assert read_map_file(str(listed), "m") == [(["0x0a", 0, 0, 2], "192.0.2.80")]
    obj = tmp_path / "b.json"
    obj.write_text(json.dumps({"10.0.0.2": "192.0.2.80"}))
    assert read_map_file(str(obj), "m") == [("10.0.0.2", "192.0.2.80")]
    for text, match in (("[1]", "an entry must be"), ("3", "must hold a list"), ("{", "is not JSON")):
        obj.write_text(text)
        with pytest.raises(CsumValueError, match=match):
            read_map_file(str(obj), "m")
    with pytest.raises(CsumValueError, match="cannot read"):
        read_map_file(str(tmp_path / "missing.json"), "m")
    assert entries([("a", "b")], "m") == [("a", "b")]
