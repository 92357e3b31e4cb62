"""csum.kernel and csum.kernel.check: the running kernel's BPF checksum helpers, and the emulation against them.

Skipped (with the reason) where csum.kernel.available() is False. Each property
test records its case count as the ``kernel_checked`` property, which
tests/kernel_count_plugin.py totals in the terminal summary.
"""

from __future__ import annotations

import functools
import json

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from csum import bpf as emulated
from csum import kernel
from csum.arch.profiles import profile
from csum.errors import CsumValueError
from csum.kernel import insn as I
from csum.kernel.check import EDGE_SEEDS, EDGE_SIZES, MAX_SIZE, KernelCheckReport, Mismatch, cases, kernel_check

#: The tests that call the running kernel; the others (input checks, case lists, report formats) run everywhere.
needs_kernel = pytest.mark.skipif(not kernel.available(), reason=f"csum.kernel: {kernel.why_unavailable()}")

#: At least 2,000 examples for bpf_csum_diff; more if the loaded hypothesis profile asks for more.
KERNEL_EXAMPLES = max(2000, settings().max_examples)
_SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _homogenized() -> bool:
    return kernel.running_profile().csum_diff_kind == "homogenized"


def _emulation():
    running = kernel.running_profile()
    p = profile(running.name, kernel=f"{running.version[0]}.{running.version[1]}")
    return p.bpf_csum_diff if running.csum_diff_kind == "homogenized" else p.bpf_csum_diff_legacy


# --- selftest vectors --------------------------------------------------------------------------------------

_DEAD = (0xDEADBEEFDEADBEEF,)
_DEAD2 = (0xDEADBEEFDEADBEEF, 0xBEEFDEADBEEFDEAD)
_ABAB = (0xABABABABABABABAB,)
_RAND = (
    0x327b23c66b8b4567, 0x66334873643c9869, 0x19495cff74b0dc51, 0x625558ec2ae8944a,
    0x46e87ccd238e1f29, 0x507ed7ab3d1b58ba, 0x41b71efb2eb141f2, 0x7545e14679e2a9e3,
    0x5bd062c2515f007c, 0x4db127f812200854, 0x1f16e9e80216231b, 0x66ef438d1190cde7,
    0x3352255a140e0f76, 0x0ded7263109cf92e, 0x1befd79f7fdcc233, 0x6b68079a41a7c4c9,
    0x25e45d324e6afb66, 0x431bd7b7519b500d, 0x7c83e4583f2dba31, 0x62bbd95a257130a3,
    0x628c895d436c6125, 0x721da317333ab105, 0x2d1d5ae92443a858, 0x75a2a8d46763845e,
    0x79838cb208edbdab, 0x0b03e0c64353d0cd, 0x54e49eb4189a769b, 0x2ca8861171f32454,
    0x02901d820836c40e, 0x081386413a95f874, 0x7c3dbd3d1e7ff521, 0x6ceaf087737b8ddc,
    0x4516dde922221a70, 0x614fd4a13006c83e, 0x5577f8e1419ac241, 0x05072367440badfc,
    0x77465f013804823e, 0x5c482a977724c67e, 0x5e884adc2463b9ea, 0x2d51779651ead36b,
    0x153ea438580bd78f, 0x70a64e2a3855585c, 0x2a487cb06a2342ec, 0x725a06fb1d4ed43b,
    0x57e4ccaf2cd89a32, 0x4b588f547a6d8d3c, 0x6de91b18542289ec, 0x7644a45c38437fdb,
    0x684a481a32fff902, 0x749abb43579478fe, 0x1ba026fa3dc240fb, 0x75c6c33a79a1deaa,
    0x70c6a52912e685fb, 0x374a3fe6520eedd1, 0x23f9c13c4f4ef005, 0x275ac794649bb77c,
    0x1cf10fd839386575, 0x235ba861180115be, 0x354fe9f947398c89, 0x741226bb15b5af5c,
    0x10233c990d34b6a8, 0x615740953f6ab60f, 0x77ae35eb7e0c57b1, 0x310c50b3579be4f1,
)

# (id, from words, from_len, to words, to_len, seed, little-endian expected result)
SELFTEST = [
    ("push-0", (), 0, _DEAD, 8, 0, 0x3B3B),
    ("push-1", (), 0, _DEAD2, 16, 0x1234, 0x88AA),
    ("push-2", (), 0, _DEAD2, 15, 0x1234, 0xCAA9),
    ("push-3", (), 0, _RAND, 512, 0xFFFF, 0xCA45),
    ("pull-0", _DEAD, 8, (), 0, 0, 0xC4C4),
    ("pull-1", _DEAD2, 16, (), 0, 0x1234, 0x9BBD),
    ("pull-2", _DEAD2, 15, (), 0, 0x1234, 0x59BE),
    ("pull-3", _RAND, 512, (), 0, 0xFFFF, 0x35BA),
    ("diff-0", _DEAD, 8, _ABAB, 8, 0, 0x7373),
    ("diff-1", _DEAD, 7, _ABAB, 7, 0, 0xA673),
    ("diff-2", (0,), 8, _ABAB, 8, 0, 0xAEAE),
    ("diff-3", _DEAD, 8, (0,), 8, 0xFFFF, 0xC4C4),
    ("edge-0", (), 0, (), 0, 0, 0),
    ("edge-1", (0x1234,), 0, (0x1234,), 0, 0, 0),
    ("edge-2", (), 0, (), 0, 0x1234, 0x1234),
    ("edge-3", (), 512, (), 0, 0xFFFF, 0xFFFF),
]


def _le_bytes(words: tuple[int, ...], size: int) -> bytes:
    """The selftest's ``unsigned long long buff[64]`` as a little-endian CPU holds it, first ``size`` bytes."""
    return b"".join(w.to_bytes(8, "little") for w in words).ljust(512, b"\0")[:size]


@pytest.mark.parametrize(("frm_words", "frm_len", "to_words", "to_len", "seed", "expected"),
                         [pytest.param(*case[1:], id=case[0]) for case in SELFTEST])
@needs_kernel
def test_selftest_vectors(frm_words, frm_len, to_words, to_len, seed, expected):
    """Kernel selftest tools/testing/selftests/bpf/prog_tests/test_csum_diff.c (torvalds/linux @c771600c6af1).

    Invariant: the running kernel's bpf_csum_diff gives the selftest's little-endian ``result``
    (a u16), both in one call and chained over two halves as progs/csum_diff_test.c does.
    The vectors are for the homogenized helper (Linux >= 6.13).
    """
    if not _homogenized():
        pytest.skip("selftest vectors are for the homogenized bpf_csum_diff (Linux >= 6.13)")
    frm, to = _le_bytes(frm_words, frm_len), _le_bytes(to_words, to_len)
    assert kernel.bpf_csum_diff(frm, to, seed) == expected
    fh, th = frm_len - frm_len // 2, to_len - to_len // 2
    first = kernel.bpf_csum_diff(frm[:fh], to[:th], seed)
    assert kernel.bpf_csum_diff(frm[fh:], to[th:], first) == expected
    assert _emulation()(frm, to, seed) == expected


# --- probing and the API's edges ---------------------------------------------------------------------------

@needs_kernel
def test_running_profile_is_probed():
    """Invariant: csum_diff_kind follows the helper's behaviour on a 1-byte ``from``, not the version."""
    running = kernel.running_profile()
    assert running.name == profile(running.name).name
    assert running.release.startswith(f"{running.version[0]}.{running.version[1]}")
    odd = kernel.bpf_csum_diff(b"\x01", b"")
    assert (odd == -22) == (running.csum_diff_kind == "legacy")


def test_input_checks():
    """Invariant: out-of-range inputs raise CsumValueError before reaching the kernel."""
    with pytest.raises(CsumValueError):
        kernel.bpf_csum_diff(bytes(kernel.MAX_DIFF_SIZE + 1), b"")
    with pytest.raises(CsumValueError):
        kernel.bpf_csum_diff(b"", b"", 1 << 32)
    with pytest.raises(CsumValueError):
        kernel.l3_csum_replace(bytes(13), 0, 0, 0, 0)
    with pytest.raises(CsumValueError):
        kernel.l4_csum_replace(bytes(3713), 0, 0, 0, 0)


@needs_kernel
def test_largest_inputs_reach_the_kernel():
    """Invariant: the largest accepted sizes (MAX_DIFF_SIZE each side, any buffer type) are answered."""
    assert kernel.bpf_csum_diff(bytearray(kernel.MAX_DIFF_SIZE), memoryview(b"\xff" * kernel.MAX_DIFF_SIZE)) >= 0


@needs_kernel
def test_verifier_log_in_error():
    """Invariant: a program the verifier rejects raises BpfError carrying the verifier log."""
    bpf = kernel.live._kernel().bpf
    with pytest.raises(kernel.BpfError, match="R0 !read_ok") as info:
        bpf.prog_load(I.exit_(), "bad")
    assert info.value.log


@needs_kernel
def test_close_then_reload():
    """Invariant: after close() the next call loads the programs again and answers the same."""
    before = kernel.bpf_csum_diff(b"abcd", b"efgh", 7)
    kernel.close()
    assert kernel.bpf_csum_diff(b"abcd", b"efgh", 7) == before


# --- the emulation against the kernel ----------------------------------------------------------------------

@functools.cache
def _sized(size: int) -> st.SearchStrategy[bytes]:
    """Bytes of ``size``: all zero, all 0xff, random, random with a run of 0xff; built once per size (a strategy is
    validated the first time it is drawn from: one built at each draw is validated at each draw)."""
    ff_run = st.tuples(st.binary(min_size=size, max_size=size), st.integers(0, size), st.integers(0, size)).map(
        lambda t: t[0][: min(t[1:])] + b"\xff" * abs(t[1] - t[2]) + t[0][max(t[1:]):])
    return st.one_of(st.just(bytes(size)), st.just(b"\xff" * size), st.binary(min_size=size, max_size=size), ff_run)


buffers = st.one_of(st.sampled_from(EDGE_SIZES), st.integers(0, MAX_SIZE)).flatmap(_sized)
seeds = st.one_of(st.sampled_from(EDGE_SEEDS), st.integers(0, 0xFFFFFFFF))


@needs_kernel
def test_bpf_csum_diff_matches_emulation(record_property):
    """Invariant: for any from/to of 0..600 bytes and any u32 seed, the kernel's bpf_csum_diff equals the
    emulation of the running profile (homogenized or legacy, as probed). Expected values: the kernel."""
    emulate, count = _emulation(), 0

    @settings(max_examples=KERNEL_EXAMPLES, **_SETTINGS)
    @given(frm=buffers, to=buffers, seed=seeds)
    @example(frm=b"", to=b"", seed=0)
    @example(frm=b"\xff" * MAX_SIZE, to=b"", seed=0xFFFFFFFF)
    @example(frm=b"", to=b"\xff" * MAX_SIZE, seed=0x10000)
    @example(frm=b"\0", to=b"\xff" * 3, seed=1)
    def check(frm: bytes, to: bytes, seed: int) -> None:
        nonlocal count
        count += 1
        assert kernel.bpf_csum_diff(frm, to, seed) == emulate(frm, to, seed)

    check()
    record_property("kernel_checked", count)


_u32 = st.one_of(st.sampled_from([0, 1, 0xFFFF, 0x10000, 0xFFFFFFFF]), st.integers(0, 0xFFFFFFFF))


_SIZES = st.one_of(st.sampled_from([0, 2, 4]), st.integers(0, 15))
_HIGH_FLAGS = st.sampled_from([0, 0, 0, 1 << 8, 1 << 40])


@functools.cache
def _replace_offsets(size: int) -> st.SearchStrategy[int]:
    """Offsets into a ``size``-byte packet: in range or just past it, or past 0xffff; built once per size."""
    return st.one_of(st.integers(0, size + 2), st.sampled_from([0xFFFE, 0x10000, 0xFFFFFFFE]))


@st.composite
def _replace_case(draw):
    """A packet, an offset (in range, odd, past the end, > 0xffff) and flags: field size 0..15,
    any of the four l4 flag bits, now and then an undefined bit."""
    packet = draw(st.binary(min_size=14, max_size=128))
    offset = draw(_replace_offsets(len(packet)))
    size = draw(_SIZES)
    flags = size | draw(st.integers(0, 0xF)) << 4 | draw(_HIGH_FLAGS)
    frm = 0 if size == 0 and draw(st.booleans()) else draw(_u32)
    return packet, offset, frm, draw(_u32), flags


@needs_kernel
@pytest.mark.filterwarnings("ignore::csum.bpf.BpfMisuse")  # generated calls misuse flags on purpose
@pytest.mark.parametrize("which", ["l3", "l4"])
def test_csum_replace_matches_emulation(which, record_property):
    """Invariant: bpf_l3/l4_csum_replace give the emulation's return code and packet bytes on a
    CHECKSUM_NONE skb (what BPF_PROG_TEST_RUN builds), for any flags, offset and field values."""
    run = kernel.l3_csum_replace if which == "l3" else kernel.l4_csum_replace
    emulate = emulated.bpf_l3_csum_replace if which == "l3" else emulated.bpf_l4_csum_replace
    count = 0

    @settings(max_examples=500, **_SETTINGS)
    @given(_replace_case())
    def check(case) -> None:
        nonlocal count
        count += 1
        packet, offset, frm, to, flags = case
        mine = bytearray(packet)
        assert run(packet, offset, frm, to, flags) == (emulate(mine, offset, frm, to, flags), bytes(mine))

    check()
    record_property("kernel_checked", count)


# --- kernel_check ------------------------------------------------------------------------------------------

@needs_kernel
def test_kernel_check_agrees(record_property):
    """Invariant: kernel_check's edge and random cases all agree with the running kernel."""
    report = kernel_check(600, seed=1)
    assert report.ok, report.format_text()
    assert report.cases == 600 and report.seed == 1
    record_property("kernel_checked", report.cases)


def test_kernel_check_cases_reproducible():
    """Invariant: the same (n, seed) gives the same cases; corners come first and include odd sizes."""
    first = list(cases(400, 7))
    assert first == list(cases(400, 7)) and first != list(cases(400, 8))
    assert len(first) == 400 and any(len(f) % 4 for f, _, _ in first[:50])
    assert all(len(f) <= MAX_SIZE and len(t) <= MAX_SIZE and 0 <= s <= 0xFFFFFFFF for f, t, s in first)


def test_kernel_check_report_formats():
    """Invariant: a mismatch is replayable from the text and JSON forms of the report."""
    report = KernelCheckReport("x86_64", "6.18.0", "homogenized", 5, cases=3, seconds=0.5,
                               mismatches=[Mismatch("00ff", "", 1, 0x1234, 0x4321)])
    assert not report.ok and "1 MISMATCHES" in report.format_text() and "frm=00ff" in report.format_text()
    data = json.loads(report.to_json())
    assert data["ok"] is False and data["mismatches"][0] == {"frm": "00ff", "to": "", "seed": 1,
                                                             "kernel": 0x1234, "emulated": 0x4321}
