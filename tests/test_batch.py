"""csum/batch.py: checksums and csum_partial emulations of many packets at once.

Independent sources: scapy.utils.checksum per packet, tests/oracle.py (naive
RFC 1071 loop); the batch emulations are checked bit for bit against the scalar
emulations (csum.profile(...).csum_partial) they claim to vectorize. Tests using the ``every_engine``
fixture (tests/engines.py) run once per summing engine.
"""

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from oracle import ones_sum16
from scapy.utils import checksum as scapy_checksum

import csum
import csum.batch as batch
import csum.engine
from csum.core import arith_np
from csum.errors import CsumTypeError, CsumValueError
from csum.testing import CORNER_SEEDS


def packet_arrays(max_rows: int = 12, max_len: int = 80) -> st.SearchStrategy[np.ndarray]:
    """uint8 (N, L) arrays: random bytes, or rows of all 0xff / all zero mixed in."""
    shapes = st.tuples(st.integers(0, max_rows), st.integers(0, max_len))
    fill = st.sampled_from([None, 0x00, 0xFF])

    def build(arr: np.ndarray, fill_value, every: int) -> np.ndarray:
        arr = arr.copy()
        if fill_value is not None:
            arr[::every] = fill_value
        return arr

    return st.builds(build, shapes.flatmap(lambda s: hnp.arrays(np.uint8, s)), fill, st.integers(1, 3))


@pytest.mark.usefixtures("every_engine")
@given(packet_arrays())
@example(np.zeros((0, 3), np.uint8))  # found by hypothesis: no rows, odd length broke the numpy reshape
def test_internet_checksums_equal_scapy(packets):
    """internet_checksums(rows)[i] == scapy.utils.checksum(row i), including empty and all-0xff rows."""
    got = batch.internet_checksums(packets)
    assert got.dtype == np.uint16 and got.shape == (len(packets),)
    assert got.tolist() == [scapy_checksum(row.tobytes()) for row in packets]


@pytest.mark.usefixtures("every_engine")
@given(st.binary(max_size=300), st.lists(st.tuples(st.integers(0, 300), st.integers(0, 300)), max_size=20))
def test_ragged_equals_oracle_per_slice(buf, spans):
    """Ragged packets at any offset (odd ones, overlapping, empty) == tests/oracle.py on each slice."""
    spans = [(min(o, len(buf)), min(n, len(buf) - min(o, len(buf)))) for o, n in spans]
    offsets = np.array([o for o, _ in spans], dtype=np.int64)
    lengths = np.array([n for _, n in spans], dtype=np.int64)
    want = [~ones_sum16(buf[o : o + n], "big") & 0xFFFF for o, n in spans]
    assert batch.internet_checksums_ragged(buf, offsets, lengths).tolist() == want
    le = batch.ones_sums_ragged(buf, offsets, lengths, 16, "little")
    assert le.tolist() == [ones_sum16(buf[o : o + n], "little") for o, n in spans]


@given(packet_arrays(max_rows=6, max_len=70), st.sampled_from(sorted(csum.profile_names())),
       st.one_of(st.sampled_from(CORNER_SEEDS), st.integers(0, 0xFFFFFFFF)), st.integers(0, 7),
       st.booleans())
def test_csum_partials_bit_exact_with_scalar_emulation(packets, name, seed, align, per_row_seed):
    """csum_partials(rows, profile=p)[i] == csum.profile(p).csum_partial(row i, seed, align) for every profile."""
    prof = csum.profile(name)
    seeds = (np.arange(len(packets), dtype=np.uint64) * 0x01010101 + seed) % (1 << 32) if per_row_seed \
        else np.full(len(packets), seed, dtype=np.uint64)
    want = [prof.csum_partial(row.tobytes(), int(s), align=align) for row, s in zip(packets, seeds)]
    got = batch.csum_partials(packets, seeds if per_row_seed else seed, profile=name, align=align)
    assert got.dtype == np.uint32 and got.tolist() == want


@given(packet_arrays(max_rows=6, max_len=70), st.sampled_from(["5.10", "5.17", "6.6", "6.8"]),
       st.integers(0, 0xFFFFFFFF), st.integers(0, 7))
def test_x86_64_kernel_releases_bit_exact(packets, kernel, seed, align):
    """x86_64 as each release computed it (Kleen's, Dumazet's, current): batch == scalar per row."""
    prof = csum.profile("x86_64", kernel=kernel)
    want = [prof.csum_partial(row.tobytes(), seed, align=align) for row in packets]
    assert batch.csum_partials(packets, seed, profile="x86_64", kernel=kernel, align=align).tolist() == want


@pytest.mark.usefixtures("every_engine")
def test_million_packets_all_little_endian_profiles_agree_mod_0xffff():
    """One million 64-byte rows: every vectorized little-endian form folds to generic's 16-bit sum.

    All kernel csum_partial implementations agree modulo 0xffff (shared/kernel-csum.md); folding with
    from32to16 makes that an equality. Seconds, not minutes, because the forms are vectorized.
    """
    if csum.engine.ENGINE == "python":
        pytest.skip("pure-Python row loop: a million rows is the numpy engine's job")
    rows = np.random.default_rng(7).integers(0, 256, (1_000_000, 64), dtype=np.uint8)
    rows[::1000] = 0xFF
    generic = batch.csum_partials(rows, profile="generic").astype(np.uint64)
    for name, kernel in (("x86_64", None), ("x86_64", "5.10"), ("x86_64", "5.17")):
        wide = batch.csum_partials(rows, profile=name, kernel=kernel).astype(np.uint64)
        assert (arith_np.from32to16(wide) == generic).all()


@pytest.mark.usefixtures("every_engine")
def test_non_contiguous_rows_are_copied():
    """A strided (N, L) view is copied, not rejected: same checksums as its contiguous copy."""
    base = np.random.default_rng(1).integers(0, 256, (20, 64), dtype=np.uint8)
    view = base[::2, 1::3]
    assert not view.flags.c_contiguous
    assert batch.internet_checksums(view).tolist() == [scapy_checksum(r.tobytes()) for r in view]


def test_bad_arrays_are_rejected():
    """Wrong type, dtype or rank: CsumTypeError naming packets2d."""
    with pytest.raises(CsumTypeError, match="^packets2d must be a numpy uint8 array"):
        batch.internet_checksums([[1, 2]])
    with pytest.raises(CsumTypeError, match=r"^packets2d must be a uint8 array of shape \(N, L\), got uint16"):
        batch.internet_checksums(np.zeros((2, 2), np.uint16))
    with pytest.raises(CsumTypeError, match="got uint8 with shape"):
        batch.internet_checksums(np.zeros(4, np.uint8))


def test_bad_ragged_spans_are_rejected():
    """Spans past the end, negative values, mismatched counts: CsumValueError naming the argument."""
    buf = bytes(10)
    with pytest.raises(CsumValueError, match=r"^offsets\[1\] \+ lengths\[1\] = 8 \+ 3 is past the end of buf"):
        batch.internet_checksums_ragged(buf, [0, 8], [2, 3])
    with pytest.raises(CsumValueError, match="^lengths must hold integers in 0"):
        batch.internet_checksums_ragged(buf, [0], [-1])
    with pytest.raises(CsumValueError, match="^offsets and lengths must have the same length"):
        batch.internet_checksums_ragged(buf, [0, 1], [1])
    with pytest.raises(CsumTypeError, match="^offsets must be a 1-D array of integers"):
        batch.internet_checksums_ragged(buf, [0.5], [1])
    with pytest.raises(CsumValueError, match="^buf must be C-contiguous"):
        batch.internet_checksums_ragged(np.zeros(20, np.uint8)[::2], [0], [1])


def test_bad_seeds_and_widths_are_rejected():
    """Seeds out of u32 range or of the wrong shape, widths other than 16/32: errors naming them."""
    rows = np.zeros((3, 4), np.uint8)
    with pytest.raises(CsumValueError, match="^seed must be an int in 0..0xffffffff"):
        batch.csum_partials(rows, 1 << 32)
    with pytest.raises(CsumTypeError, match=r"^seed must be an int or an integer array of shape \(3,\)"):
        batch.csum_partials(rows, np.zeros(2, np.uint32))
    with pytest.raises(CsumValueError, match="^seed values must be in 0..0xffffffff"):
        batch.csum_partials(rows, np.array([0, 1, -1]))
    with pytest.raises(CsumValueError, match="^width must be 16 or 32"):
        batch.ones_sums(rows, 64)


def test_vectorized_forms_live_in_the_algorithm_registry():
    """One registry: each vectorized form is registered beside a scalar algorithm a profile uses, and a
    form for an unregistered algorithm is refused (unknown-algorithm)."""
    import csum.arch as arch

    used = {impl.algorithm for n in csum.profile_names() for impl in csum.profile(n).implementations}
    forms = {name for name in arch.algorithm_names() if arch.vectorized(name) is not None}
    assert {"lib/checksum.c-le", "x86_64", "s390x"} <= forms <= used
    with pytest.raises(CsumValueError, match="unknown algorithm"):
        arch.register_vectorized("no-such-algorithm")(lambda p, s, a: None)
