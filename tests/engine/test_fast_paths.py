"""csum/engine/_speedups.c and _arith.c, the C fast paths, against the checked Python functions they stand before.

Independent source: the Python emulations (csum/core, csum/arch, csum/core/diff.py, csum/bpf/helpers.py),
written without the C and checked against the kernel's own code elsewhere (tests/arch/test_kernel_vectors.py,
tests/bpf/, tests/kernel/). Here C and Python must agree on everything a caller sees: the value, the error
raised (class, message, code), the packet bytes after an in-place helper, the BpfMisuse warnings (message and
the line they point at). Each property also checks that C itself answered where it should (the fast function
returned a value, not NotImplemented): a C part that declined everything would fail here.
"""

import dataclasses
import functools
import inspect
import itertools
import pickle
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import csum
from csum import engine
from csum.arch import algorithm
from csum.bpf import helpers
from csum.bpf.flags import BPF_F_IPV6, BPF_F_MARK_ENFORCE, BPF_F_MARK_MANGLED_0, BPF_F_PSEUDO_HDR
from csum.core import diff
from csum.testing import CORNER_SEEDS, aligns, buffers, packets, seeds, u16s, u32s

pytestmark = pytest.mark.skipif("c" not in engine.ENGINES, reason="csum.engine._speedups not built")

SHAPED = sorted(engine.SHAPES)
#: Every profile with each of its kernel implementations.
PROFILES = [dataclasses.replace(p, implementation=impl) for p in map(csum.profile, csum.profile_names())
            for impl in p.implementations]
#: The public functions that answer from C first, with their C function.
FAST = {csum.csum_partial: "partial", csum.internet_checksum: "internet_checksum",
        csum.internet_checksum_bytes: "internet_checksum_bytes", csum.bpf_csum_diff: "csum_diff",
        csum.bpf_csum_diff_legacy: "csum_diff_legacy", csum.inet_proto_csum_replace16: "inet_proto_csum_replace16",
        csum.csum_replace2: "csum_replace2", csum.csum_replace4: "csum_replace4",
        csum.bpf_l3_csum_replace: "l3_csum_replace", csum.bpf_l4_csum_replace: "l4_csum_replace",
        engine.ones_sum: "ones_sum"}
#: A sample of values for the l3/l4 helpers' frm/to: every width the helpers mask to, bytes, and wrong kinds.
FIELD_VALUES = st.one_of(u16s(), u32s(), st.integers(0, 2**64 - 1), st.binary(min_size=2, max_size=2),
                         st.binary(min_size=4, max_size=4), st.sampled_from([-1, 2**64, True, 1.0, b"abc", None]))
FLAGS = st.one_of(st.sets(st.sampled_from([0, 1, 2, 3, 4, 8, BPF_F_PSEUDO_HDR, BPF_F_MARK_MANGLED_0,
                                            BPF_F_MARK_ENFORCE, BPF_F_IPV6, 1 << 8, 1 << 40])).map(sum),
                  st.integers(0, 0xFF), st.sampled_from([-1, 2**64, True]))


def outcome(fn, *args, **kwargs):
    """Everything a call shows its caller: value or error (class, message, code) and the warnings it raised."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = ("value", fn(*args, **kwargs))
        except Exception as exc:  # noqa: BLE001  what the caller would see
            result = ("error", type(exc), str(exc), getattr(exc, "code", None))
    return result, [(w.category, str(w.message), getattr(w.message, "code", None), w.filename, w.lineno)
                    for w in caught]


def fast_of(fn):
    """The C answer of FastPath ``fn`` alone (with its shape), no fallback."""
    first = () if fn.first is None else (fn.first,)
    return lambda *args, **kwargs: fn.fast(*first, *args, **kwargs)


def test_every_loop_helper_is_a_fast_path():
    """The helpers of issue 23 item 4 are FastPaths over the named C function, and so is each profile's
    csum_partial / bpf_csum_diff (both forms) / inet_proto_csum_replace16 exactly where C has its shape."""
    generic = engine.SHAPES[csum.profile("generic").implementation.algorithm]
    for fn, name in FAST.items():
        assert type(fn).__name__ == "FastPath" and fn.fast.__name__ == name, fn
        assert fn.first in (None, generic), fn  # the generic toolbox computes as the generic profile does
    for prof in PROFILES:
        shaped = prof.implementation.algorithm in engine.SHAPES
        for method in ("csum_partial", "bpf_csum_diff", "bpf_csum_diff_legacy", "inet_proto_csum_replace16"):
            bound = getattr(prof, method)
            assert (type(bound).__name__ == "FastPath") == shaped, (prof.name, method)
            if shaped:
                assert bound.first == engine.SHAPES[prof.implementation.algorithm]
                assert bound.slow.__self__ is prof and bound.slow.__name__ == method


def test_shapes_are_algorithms_and_cover_the_common_profiles():
    """Every C shape names a registered csum/arch algorithm; the profiles most kernels run are among them."""
    for name in engine.SHAPES:
        algorithm(name)
    for name in ("generic", "x86_64", "arm64", "arm", "i386", "powerpc64le", "s390x", "riscv64", "parisc"):
        assert csum.profile(name).implementation.algorithm in engine.SHAPES, name


@pytest.mark.parametrize("shape", SHAPED)
def test_partial_every_shape_length_align_and_seed_corner(shape):
    """Exhaustive corners: lengths 0..24 of all-zero, all-0xff and counting bytes, every align 0..7, every
    CORNER_SEEDS seed: C == the csum/arch algorithm (0x0000/0xffff and the unfolded u32 corners included)."""
    fp = engine.fast_path("partial", shape)(algorithm(shape))
    python = algorithm(shape)
    for n, fill, align, seed in itertools.product(range(25), (b"\x00", b"\xff", None), range(8), CORNER_SEEDS):
        data = bytes(range(1, n + 1)) if fill is None else fill * n
        assert fp.fast(fp.first, data, seed, align=align) == python(memoryview(data), seed, align), \
            (n, fill, align, hex(seed))


@given(buffers(max_size=300), seeds(), st.sampled_from(SHAPED))
@example(b"\xff" * 8, 0xFFFFFFFF, "arm")
@example(b"\xff" * 129, 0, "powerpc64")
def test_partial_equals_python_at_every_align(data, seed, shape):
    """Random and patterned buffers, odd lengths: C == the Python algorithm at each of the 8 aligns."""
    fp = engine.fast_path("partial", shape)(algorithm(shape))
    for align in range(8):
        assert fp.fast(fp.first, data, seed, align=align) == algorithm(shape)(memoryview(data), seed, align)


@pytest.mark.parametrize("shape", SHAPED)
def test_csum_diff_corners_every_shape(shape):
    """Exhaustive corners of both bpf_csum_diff forms: from/to each empty, all-zero or all-0xff (1, 3, 4 and 8
    bytes: +0 and -0 sums, odd lengths), every CORNER_SEEDS seed, all 64 (frm_align, to_align) pairs for the
    homogenized form: C == csum/core/diff.py, 0x0000 vs 0xffff included."""
    fast = engine.fast_path("csum_diff", shape)(lambda *a, **k: None)
    legacy = engine.fast_path("csum_diff_legacy", shape)(lambda *a, **k: None)
    python = algorithm(shape)
    bufs = [b""] + [fill * n for fill in (b"\x00", b"\xff") for n in (1, 3, 4, 8)]
    for frm, to, seed in itertools.product(bufs, bufs, CORNER_SEEDS):
        for fa, ta in itertools.product(range(8), repeat=2):
            want = diff.csum_diff(python, frm, to, seed, frm_align=fa, to_align=ta)
            assert fast.fast(fast.first, frm, to, seed, frm_align=fa, to_align=ta) == want, (frm, to, seed, fa, ta)
        got = legacy.fast(legacy.first, frm, to, seed)
        assert (diff.csum_diff_legacy(python, frm, to, seed) == -22) if got is NotImplemented \
            else got == diff.csum_diff_legacy(python, frm, to, seed)


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(buffers(max_size=48), buffers(max_size=48), seeds(), st.sampled_from(SHAPED))
@example(b"\xff" * 4, b"", 0xFFFFFFFF, "x86_64")
@example(b"", b"\0" * 4, 0, "arm")
def test_csum_diff_equals_python_at_all_64_alignments(frm, to, seed, shape):
    """bpf_csum_diff (>= 6.13) over each shape: C == csum/core/diff.py for every (frm_align, to_align)."""
    fast = engine.fast_path("csum_diff", shape)(lambda *a, **k: None)
    python = algorithm(shape)
    for fa, ta in itertools.product(range(8), repeat=2):
        want = diff.csum_diff(python, frm, to, seed, frm_align=fa, to_align=ta)
        assert fast.fast(fast.first, frm, to, seed, frm_align=fa, to_align=ta) == want, (fa, ta)


@given(st.binary(max_size=300), st.binary(max_size=300), seeds(), st.sampled_from(SHAPED))
@example(bytes(256), bytes(256), 0, "lib/checksum.c-le")  # 512: the scratch buffer exactly
@example(bytes(256), bytes(260), 0, "x86_64")  # 516: -EINVAL
@example(b"\xff" * 4, b"", 0xFFFFFFFF, "powerpc64le")
def test_csum_diff_legacy_equals_python(frm, to, seed, shape):
    """bpf_csum_diff (<= 6.12): C answers exactly the sizes the scratch buffer takes (multiples of 4, at most 512
    together) with Python's value; the rest it declines, and Python returns -EINVAL."""
    fast = engine.fast_path("csum_diff_legacy", shape)(lambda *a, **k: None)
    want = diff.csum_diff_legacy(algorithm(shape), frm, to, seed)
    got = fast.fast(fast.first, frm, to, seed)
    if (len(frm) | len(to)) & 3 or len(frm) + len(to) > diff.SCRATCH_SIZE:
        assert got is NotImplemented and want == -22
    else:
        assert got == want


@given(u16s(), st.binary(min_size=16, max_size=16), st.binary(min_size=16, max_size=16), st.sampled_from(SHAPED))
@example(0, b"\xff" * 16, b"\0" * 16, "x86_64")
@example(0xFFFF, b"\0" * 16, b"\0" * 16, "s390x")
def test_inet_proto_csum_replace16_equals_python(sum16, frm, to, shape):
    """net/core/utils.c inet_proto_csum_replace16 over each shape: C == csum/core/diff.py."""
    fast = engine.fast_path("inet_proto_csum_replace16", shape)(lambda *a, **k: None)
    assert fast.fast(fast.first, sum16, frm, to) == diff.inet_proto_csum_replace16(algorithm(shape), sum16, frm, to)


@given(buffers(max_size=64), buffers(max_size=64), seeds(), aligns(), aligns(), st.sampled_from(PROFILES))
def test_profile_methods_agree_with_their_checked_methods(frm, to, seed, fa, ta, prof):
    """Through the Profile itself (every profile and kernel implementation): the public method == the checked
    one for csum_partial, both bpf_csum_diff forms and inet_proto_csum_replace16."""
    def both(method, *args, **kwargs):
        public = getattr(prof, method)
        checked = getattr(public, "slow", public)
        assert outcome(public, *args, **kwargs) == outcome(checked, *args, **kwargs), (prof.name, method)

    both("csum_partial", to, seed, align=ta)
    both("bpf_csum_diff", frm, to, seed, frm_align=fa, to_align=ta)
    both("bpf_csum_diff_legacy", frm, to, seed)
    both("inet_proto_csum_replace16", seed & 0xFFFF, (frm * 16)[:16], (to * 16)[:16])


def _kinds(data: bytes) -> list:
    kinds = [data, bytearray(data), memoryview(data), np.frombuffer(data, dtype=np.uint8)]
    return kinds + ([np.frombuffer(data, dtype=np.uint16)] if len(data) % 2 == 0 else [])


@given(buffers(max_size=300))
def test_internet_checksum_and_bytes_from_c_for_every_buffer_kind(data):
    """internet_checksum / internet_checksum_bytes: C answers bytes, bytearray, memoryview and numpy arrays with
    the checked function's value (which tests/core/test_partial.py checks against scapy and RFC 1071)."""
    for fn in (csum.internet_checksum, csum.internet_checksum_bytes):
        for buf in _kinds(data):
            got = fast_of(fn)(buf)
            assert got is not NotImplemented and got == fn.slow(buf) == fn(buf)


@given(u16s(), u32s(), u32s())
def test_csum_replace2_and_4_from_c(sum16, a, b):
    """csum_replace2 (16-bit values) and csum_replace4 (32-bit): C == csum/core/ones.py on every value."""
    assert fast_of(csum.csum_replace4)(sum16, a, b) == csum.csum_replace4.slow(sum16, a, b)
    a16, b16 = a & 0xFFFF, b & 0xFFFF
    assert fast_of(csum.csum_replace2)(sum16, a16, b16) == csum.csum_replace2.slow(sum16, a16, b16)


def _offsets(pkt: bytes) -> st.SearchStrategy[int]:
    """Offsets into ``pkt``: its L4 checksum's (where it has one), the edges, past them, and anywhere."""
    try:
        l4: tuple[int, ...] = (csum.layers.layout(memoryview(pkt)).l4_csum,)
    except csum.CsumError:
        l4 = ()
    return _offsets_of(l4, len(pkt))


@functools.cache
def _offsets_of(l4: tuple[int, ...], size: int) -> st.SearchStrategy[int]:
    """:func:`_offsets` for a packet of ``size`` bytes, built once per layout (a strategy is validated the first
    time it is drawn from: one built at each draw is validated at each draw)."""
    return st.one_of(st.sampled_from([*l4, 0, 1, 10, size - 2, size - 1, size, 0x10000, 2**32 - 1, 2**32, -1, True]),
                     st.integers(0, size + 2))


_PACKETS = st.one_of(packets(max_payload=40), st.binary(max_size=40))
_IP_SUMMED = st.one_of(st.integers(0, 3), st.sampled_from([None, 4, -1, True]))


@st.composite
def helper_calls(draw):
    """(pkt, offset, frm, to, flags, ip_summed): real packets with their L4 checksum offset, or random bytes."""
    pkt = draw(_PACKETS)
    offset = draw(_offsets(pkt))
    ip_summed = draw(_IP_SUMMED)
    return bytearray(pkt), offset, draw(FIELD_VALUES), draw(FIELD_VALUES), draw(FLAGS), ip_summed


def _call(fn, pkt, offset, frm, to, flags, ip_summed):
    """``fn`` on a copy of ``pkt`` (``ip_summed`` for bpf_l4_csum_replace, unless None): what the call shows and
    the bytes it leaves."""
    copy = bytearray(pkt)
    l4 = fn.__name__ == "bpf_l4_csum_replace"
    kwargs = {"ip_summed": ip_summed} if l4 and ip_summed is not None else {}
    return outcome(fn, copy, offset, frm, to, flags, **kwargs), bytes(copy)


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(helper_calls())
@example((bytearray(b"\x12\x34"), 0, 1, 2, 2, None))
@example((bytearray(b"\x00\x01"), 0, 0, 0x100, 2 | BPF_F_MARK_MANGLED_0, None))
def test_l3_l4_csum_replace_show_the_same_as_python(call):
    """bpf_l3/l4_csum_replace (public, C first) == the checked Python helper: return code, error, packet bytes
    and BpfMisuse warnings, on generated packets at their L4 checksum and anywhere else, every flag bit."""
    for helper in (csum.bpf_l3_csum_replace, csum.bpf_l4_csum_replace):
        assert _call(helper, *call) == _call(helper.slow, *call), helper.__name__


@given(packets(max_payload=40), u32s(), u32s(), st.sampled_from([0, 1, 2, 3]))
def test_c_answers_the_quiet_calls(pkt, frm, to, ip_summed):
    """The calls no BpfMisuse check looks at are C's: size 4 with or without BPF_F_PSEUDO_HDR, size 2 on 16-bit
    values without it, a size-0 diff on l3, bad flags, bad offsets; each patches the packet as Python does."""
    off = csum.layers.layout(memoryview(pkt)).l4_csum
    f16, t16 = frm & 0xFFFF, to & 0xFFFF
    calls = [(csum.bpf_l3_csum_replace, (off, frm, to, 4), {}), (csum.bpf_l3_csum_replace, (off, f16, t16, 2), {}),
             (csum.bpf_l3_csum_replace, (off, 0, to, 0), {}), (csum.bpf_l3_csum_replace, (off, frm, to, 1 << 8), {}),
             (csum.bpf_l3_csum_replace, (off + 1, frm, to, 4), {}),
             (csum.bpf_l4_csum_replace, (off, frm, to, 4 | BPF_F_PSEUDO_HDR), {"ip_summed": ip_summed}),
             (csum.bpf_l4_csum_replace, (off, f16, t16, 2), {"ip_summed": ip_summed}),
             (csum.bpf_l4_csum_replace, (off, frm, to, 4 | BPF_F_MARK_ENFORCE), {}),
             (csum.bpf_l4_csum_replace, (len(pkt), frm, to, 4), {})]
    for helper, args, kwargs in calls:
        fast, slow = bytearray(pkt), bytearray(pkt)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            got = fast_of(helper)(fast, *args, **kwargs)
            assert got is not NotImplemented and got == helper.slow(slow, *args, **kwargs), (helper, args)
        assert fast == slow


@pytest.mark.parametrize("flags, frm, to", [(0, 1, 2), (2, 0x10000, 1), (2 | BPF_F_PSEUDO_HDR, 1, 2),
                                            (4 | BPF_F_MARK_MANGLED_0, 1, 2), (BPF_F_PSEUDO_HDR, 0, 2)])
def test_c_leaves_the_calls_misuse_looks_at_to_python(flags, frm, to):
    """Size 0 with a from, a wide value with size 2, and (l4) the cases csum/bpf/misuse.py parses the packet for:
    C declines, nothing is written, and the public helper still warns where the Python one does."""
    pkt = bytearray(bytes.fromhex("4500001c000100004011f7cdc0000201c6336402000100020008ffff"))
    for helper in (csum.bpf_l3_csum_replace, csum.bpf_l4_csum_replace):
        if helper is csum.bpf_l3_csum_replace and flags & ~0xF:
            continue
        before = bytes(pkt)
        assert fast_of(helper)(pkt, 26, frm, to, flags) is NotImplemented and pkt == before
        assert _call(helper, pkt, 26, frm, to, flags, None) == _call(helper.slow, pkt, 26, frm, to, flags, None)


def test_misuse_warnings_point_at_the_callers_line():
    """A warning from a call C declined names the line that called the public helper (no frame in between)."""
    with pytest.warns(csum.bpf.BpfMisuse) as caught:
        csum.bpf_l3_csum_replace(bytearray(4), 0, 1, 2, 0)
    assert caught[0].filename == __file__


SAMPLES = {csum.csum_partial: ((b"abc", 7), {"align": 3}), csum.internet_checksum: ((b"abc",), {}),
           csum.internet_checksum_bytes: ((b"abc",), {}),
           csum.bpf_csum_diff: ((b"abcd", b"efg", 9), {"frm_align": 1, "to_align": 6}),
           csum.bpf_csum_diff_legacy: ((b"abcd", b"efgh", 9), {}),
           csum.inet_proto_csum_replace16: ((0x1234, bytes(16), bytes(range(16))), {}),
           csum.csum_replace2: ((0x1234, 5, 6), {}), csum.csum_replace4: ((0x1234, 5, 6), {}),
           csum.bpf_l3_csum_replace: ((bytearray(8), 2, 5, 6, 4), {}),
           csum.bpf_l4_csum_replace: ((bytearray(8), 2, 5, 6, 4), {"ip_summed": 2})}
NAMES = sorted({p for fn in SAMPLES for p in fn.__wrapped__.__code__.co_varnames[:fn.__wrapped__.__code__.co_argcount
                                                                               + fn.__wrapped__.__code__.co_kwonlyargcount]})


@pytest.mark.parametrize("fn", list(SAMPLES), ids=lambda fn: fn.__name__)
def test_c_binds_arguments_as_python_does(fn):
    """Each argument may be passed by keyword where the Python signature allows it, and C then answers with the
    same value; a keyword of another function, a repeated or a missing argument C declines (Python raises)."""

    args, kwargs = SAMPLES[fn]
    params = list(inspect.signature(fn.slow).parameters.values())
    want = outcome(fn.slow, *args, **kwargs)[0][1]
    for i in range(len(args) + 1):  # the first i positional, the rest by keyword
        assert fast_of(fn)(*args[:i], **kwargs, **{p.name: a for p, a in zip(params[i:], args[i:])}) == want, i
    for other in set(NAMES) - {p.name for p in params}:
        assert fast_of(fn)(*args, **kwargs, **{other: 0}) is NotImplemented, other
        assert outcome(fn, *args, **kwargs, **{other: 0})[0][1] is TypeError
    assert fast_of(fn)() is NotImplemented
    assert fast_of(fn)(*args, *args) is NotImplemented
    assert fast_of(fn)(args[0], *args, **kwargs) is NotImplemented  # the first argument twice
    if len(args) > 1:
        assert fast_of(fn)(*args, **{params[0].name: args[0]}) is NotImplemented


BAD = [(csum.csum_partial, (b"ab", True)), (csum.csum_partial, (b"ab", -1)), (csum.csum_partial, ("ab",)),
       (csum.csum_partial, (memoryview(b"abcd")[::2],)), (csum.internet_checksum, ("ab",)),
       (csum.internet_checksum, (12,)), (csum.internet_checksum_bytes, (np.zeros((4, 4), np.uint8).T,)),
       (csum.bpf_csum_diff, (b"ab", "cd")), (csum.bpf_csum_diff, (b"ab", b"cd", 1 << 32)),
       (csum.bpf_csum_diff_legacy, (b"abc", b"")), (csum.bpf_csum_diff_legacy, (None, b"")),
       (csum.inet_proto_csum_replace16, (0x10000, bytes(16), bytes(16))),
       (csum.inet_proto_csum_replace16, (1, bytes(15), bytes(16))), (csum.csum_replace2, (1, 0x10000, 0)),
       (csum.csum_replace4, (1, 2, 1 << 32)), (csum.csum_replace4, (True, 2, 3)),
       (csum.bpf_l3_csum_replace, (b"\0\0", 0, 0, 1, 2)), (csum.bpf_l3_csum_replace, (bytearray(4), 0, 0, 1, -1)),
       (csum.bpf_l4_csum_replace, (bytearray(4), 0, b"abc", 1, 2)),
       (csum.bpf_l4_csum_replace, (bytearray(4), 2**32, 0, 1, 2))]


@pytest.mark.parametrize("fn, args", BAD, ids=lambda x: getattr(x, "__name__", None))
def test_arguments_c_declines_get_python_s_answer(fn, args):
    """Bools, negatives, out-of-range ints, str, non-contiguous buffers, a read-only packet, sizes C does not take:
    C returns NotImplemented and the public function shows exactly what the checked one shows."""
    assert fast_of(fn)(*args) is NotImplemented
    assert outcome(fn, *args) == outcome(fn.slow, *args)


def test_empty_arrays_of_any_shape():
    """A numpy array with a zero in its shape holds no bytes: C and Python both sum nothing (the empty buffer's
    checksum 0xffff, csum_partial's seed back), and a writable one is a packet too short for any field (-EFAULT)."""
    for arr in (np.zeros((0, 3), np.uint8), np.zeros((2, 0), np.uint16)):
        for fn, args, want in ((csum.csum_partial, (arr, 5), 5), (csum.internet_checksum, (arr,), 0xFFFF),
                               (csum.bpf_l3_csum_replace, (arr, 0, 1, 2, 4), -14)):
            assert fast_of(fn)(*args) == fn.slow(*args) == want


def test_int_subclasses_reach_python():
    """An int subclass (an IntEnum, a bool) is not C's: the checked function answers, with the same bits."""
    import enum

    seed = enum.IntEnum("Seeds", {"SEVEN": 7}).SEVEN
    assert fast_of(csum.csum_partial)(b"abc", seed) is NotImplemented
    assert fast_of(csum.bpf_l3_csum_replace)(bytearray(4), 0, seed, 9, 4) is NotImplemented
    assert csum.csum_partial(b"abc", seed) == csum.csum_partial(b"abc", 7)


def test_fast_paths_follow_the_switch():
    """_speedups.set_fast_paths, driven by csum.engine.use: off, every FastPath calls its Python function."""
    probe = engine._speedups.FastPath(lambda *a: "c", lambda *a: "python")
    shaped = engine._speedups.FastPath(lambda *a: a, lambda *a: "python", 7)
    assert probe() == "c" and shaped(1, 2) == (7, 1, 2)
    for name in engine.ENGINES:
        with engine.use(name):
            assert probe() == ("c" if name == "c" else "python")
    assert probe() == "c"


def test_shaped_fast_path_passes_every_argument_spelling():
    """The shape is put before the call's arguments whether or not the caller leaves a slot for it
    (vectorcall's PY_VECTORCALL_ARGUMENTS_OFFSET): positional, starred, keyword."""
    record = engine._speedups.FastPath(lambda *a, **k: (a, k), lambda *a, **k: "python", "S")
    assert record(1, 2) == (("S", 1, 2), {})
    assert record(*[1, 2], x=3) == (("S", 1, 2), {"x": 3})
    assert record(*range(6), **{"k": 1}) == (("S", *range(6)), {"k": 1})
    # more arguments than any helper takes, and no slot before them: the Python function answers
    assert record(*range(20)) == "python"


def test_profiles_with_fast_paths_stay_values():
    """Equality, hashing, dataclasses.replace, copy and pickling see the fields only; the copy has its fast paths."""
    import copy

    x86 = csum.profile("x86_64")
    for other in (pickle.loads(pickle.dumps(x86)), copy.copy(x86), dataclasses.replace(x86)):
        assert other == x86 and hash(other) == hash(x86)
        assert other.bpf_csum_diff.first == x86.bpf_csum_diff.first and other.bpf_csum_diff.slow.__self__ is other
    assert x86.at("6.1").csum_partial.first == engine.SHAPES["x86_64-5.17"]
    assert not hasattr(x86.at("5.10").csum_partial, "fast")  # x86_64-kleen: Python only
