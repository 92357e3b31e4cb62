"""Bad input gets a clear error naming the argument (csum/core/inputs.py), never a wrong number."""

import numpy as np
import pytest

import csum
from csum.errors import CsumError


@pytest.mark.parametrize("call,exc,name", [
    (lambda: csum.csum_partial("abc"), TypeError, "buf"),
    (lambda: csum.csum_partial(1.5), TypeError, "buf"),
    (lambda: csum.csum_partial(None), TypeError, "buf"),
    (lambda: csum.csum_partial(memoryview(bytes(10))[::2]), ValueError, "buf"),
    (lambda: csum.csum_partial(np.zeros((4, 4), dtype=np.uint8)[:, 1]), ValueError, "buf"),
    (lambda: csum.csum_partial(b"", -1), ValueError, "seed"),
    (lambda: csum.csum_partial(b"", 1 << 32), ValueError, "seed"),
    (lambda: csum.csum_partial(b"", 1.0), TypeError, "seed"),
    (lambda: csum.csum_partial(b"", True), TypeError, "seed"),
    (lambda: csum.csum_partial(b"", align=8), ValueError, "align"),
    (lambda: csum.csum_partial(b"", align=-1), ValueError, "align"),
    (lambda: csum.internet_checksum("x"), TypeError, "buf"),
    (lambda: csum.inet_proto_csum_replace16(0, b"\0" * 15, b"\0" * 16), ValueError, "frm"),
    (lambda: csum.csum_replace2(0, 0, 0x1_0000), ValueError, "new"),
    (lambda: csum.csum_replace4(0x1_0000, 0, 0), ValueError, "sum16"),
    (lambda: csum.profile("x86_64").csum_partial(b"", align=9), ValueError, "align"),
    (lambda: csum.profile("vax"), ValueError, "vax"),
    (lambda: csum.profile("x86_64", kernel="five"), ValueError, "kernel"),
    (lambda: csum.bpf_csum_diff("ab", b""), TypeError, "frm"),
    (lambda: csum.bpf_l4_csum_replace(bytearray(4), 0, b"\0\0\0", 0, 2), ValueError, "frm"),
])
def test_bad_input_names_the_argument(call, exc, name):
    """Each bad input raises TypeError/ValueError (csum's CsumError family) whose message names the argument."""
    with pytest.raises(exc, match=name) as info:
        call()
    assert isinstance(info.value, CsumError) and info.value.code


def test_numpy_non_uint8_contiguous_is_read_as_bytes():
    """A contiguous numpy array of any dtype is read as its bytes in memory (documented; not an error)."""
    arr = np.arange(8, dtype=np.uint16)
    assert csum.csum_partial(arr) == csum.csum_partial(arr.tobytes())
