"""Fuzz target: the summing entry points of csum/engine/_speedups.c against the pure-Python engine
(``csum.engine.ENGINES["python"]``, csum/engine/native.py), at every length and alignment.

The input's first 16 bytes choose (zeros where it is shorter): the buffer's address offset from an 8-byte boundary
and the word (width 8/16/32/64, byte order), ``align`` and the number of rows, a 32-bit seed, the block size of
``ones_sum_blocked`` and four rows (offset, length) of ``ones_sum_many`` (some outside the buffer); the rest is the
buffer, placed at that offset so that it ends where its allocation ends. Checked: ``ones_sum``,
``ones_sum_blocked``, ``ones_sum_many`` (the same sums, or the same exception class), ``partial`` of the generic
shape (lib/checksum.c csum_partial: the Python engine's 16-bit little-endian sum plus the seed, end-around) and the
FastPaths bound on them (``csum.engine.ones_sum``, ``csum.csum_partial``); ``partial`` of the shape the input's byte 15
picks (every architecture's csum_partial C computes: csum/engine/_arith.c) against that algorithm's Python function
(csum/arch) under the numpy engine. Then the loop helpers' C fast paths
(csum/engine/_arith.c) against their Python bodies (``_speedups.set_fast_paths(False)``): ``internet_checksum``
(and its bytes twin) of the buffer, both ``bpf_csum_diff`` forms and ``inet_proto_csum_replace16`` of the buffer cut in
two, ``csum_replace2/4``, and ``bpf_l3/l4_csum_replace`` on a copy of the buffer at an offset, size and flags the
input picks (return codes and the patched bytes).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np
from fuzz_common import assert_equal

import csum
from csum import engine
from csum.arch import algorithm
from csum.core.arith import add32
from csum.core.partial import GENERIC_LE

WIDTHS = (8, 16, 32, 64)


def _placed(payload: bytes, offset: int) -> memoryview:
    """``payload`` at ``offset`` bytes past an 8-byte boundary, ending where its allocation ends."""
    base = np.zeros(offset + len(payload), dtype=np.uint8)
    base[offset:] = np.frombuffer(payload, dtype=np.uint8)
    return memoryview(base)[offset:]


def _many(fn, view: memoryview, offsets: np.ndarray, lengths: np.ndarray, width: int, order: str) -> object:
    out = np.zeros(len(offsets), dtype=np.uint64)
    try:
        fn(view, offsets, lengths, out, width, order)
    except (ValueError, TypeError) as exc:
        return type(exc).__name__
    return out.tolist()


def one_input(data: bytes) -> None:
    c, py = engine.ENGINES.get("c"), engine.ENGINES["python"]
    assert c is not None and engine._speedups is not None, "csum.engine._speedups is not built"
    head = data[:16].ljust(16, b"\0")
    offset, width, order = head[0] & 7, WIDTHS[(head[0] >> 3) & 3], "big" if head[0] & 32 else "little"
    align, nrows, seed, block = head[1] & 7, (head[1] >> 3) & 7, int.from_bytes(head[2:6], "little"), 8 * (1 + head[6])
    view = _placed(data[16:], offset)
    want = py.ones_sum(view, width, order)
    assert_equal(c.ones_sum(view, width, order), want, f"ones_sum(width={width}, {order}, offset={offset})")
    assert_equal(engine.ones_sum(view, width, order), want, "csum.engine.ones_sum (FastPath)")
    assert_equal(engine._speedups.ones_sum_blocked(view, width, order, block), want, f"ones_sum_blocked({block})")
    n = len(view)
    rows = [(head[7 + 2 * k] * (n + 2) // 255, head[8 + 2 * k] * (n + 2) // 255) for k in range(min(nrows, 4))]
    offsets = np.array([r[0] for r in rows], dtype=np.int64)
    lengths = np.array([r[1] for r in rows], dtype=np.int64)
    assert_equal(_many(c.ones_sum_many, view, offsets, lengths, width, order),
                 _many(py.ones_sum_many, view, offsets, lengths, width, order), f"ones_sum_many({rows})")
    partial = add32(py.ones_sum(view, 16, "little"), seed)
    generic = engine.SHAPES[GENERIC_LE]
    assert_equal(engine._speedups.partial(generic, view, seed, align=align), partial, f"partial(seed={seed})")
    assert_equal(csum.csum_partial(view, seed, align=align), partial, "csum.csum_partial (FastPath)")
    name = list(engine.SHAPES)[head[15] % len(engine.SHAPES)]
    with engine.use("numpy"):  # numpy's sums: another implementation than the C under test, and fast
        want_shape = algorithm(name)(view, seed, align)
    assert_equal(engine._speedups.partial(engine.SHAPES[name], view, seed, align=align), want_shape,
                 f"partial({name!r}, seed={seed}, align={align})")
    _helpers(view, head, seed)


def _answer(call: Callable[[], object]) -> object:
    """What ``call`` returns, or its exception's class name (C and Python must raise the same one)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # BpfMisuse: a warning about the call, not part of the answer
            return call()
    except (ValueError, TypeError, OverflowError) as exc:
        return type(exc).__name__


def _both(what: str, call: Callable[[], object]) -> None:
    """``call`` through the C fast paths and through the Python bodies give the same answer."""
    got = _answer(call)
    saved = engine._speedups.set_fast_paths(False)
    try:
        want = _answer(call)
    finally:
        engine._speedups.set_fast_paths(saved)
    assert_equal(got, want, what)


def _helpers(view: memoryview, head: bytes, seed: int) -> None:
    n = len(view)
    cut = head[7] * (n + 1) // 256
    frm, to = view[:cut], view[cut:]
    _both("internet_checksum", lambda: csum.internet_checksum(view))
    _both("internet_checksum_bytes", lambda: csum.internet_checksum_bytes(view))
    _both(f"bpf_csum_diff(cut={cut})", lambda: csum.bpf_csum_diff(frm, to, seed))
    _both(f"bpf_csum_diff_legacy(cut={cut})", lambda: csum.bpf_csum_diff_legacy(frm, to, seed))
    _both("inet_proto_csum_replace16", lambda: csum.inet_proto_csum_replace16(seed & 0xFFFF, frm, to))
    old, new = seed & 0xFFFF, int.from_bytes(head[8:10], "little")
    _both("csum_replace2", lambda: csum.csum_replace2(old, seed >> 16, new))
    _both("csum_replace4", lambda: csum.csum_replace4(old, seed, int.from_bytes(head[8:12], "little")))
    offset = head[12] * (n + 2) // 255
    flags = head[13] | (head[14] << 8)  # size bits, BPF_F_PSEUDO_HDR, MARK_MANGLED_0, MARK_ENFORCE, IPV6, ... and junk
    for name, fn in (("bpf_l3_csum_replace", csum.bpf_l3_csum_replace), ("bpf_l4_csum_replace", csum.bpf_l4_csum_replace)):
        def patch(fn: Callable[..., int] = fn) -> tuple[int, bytes]:
            pkt = bytearray(view)
            return fn(pkt, offset, old, seed, flags), bytes(pkt)
        _both(f"{name}(offset={offset}, flags={flags:#x})", patch)
