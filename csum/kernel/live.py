"""The running kernel's checksum helpers (net/core/filter.c), called through BPF_PROG_TEST_RUN.

Four small BPF_PROG_TYPE_SCHED_CLS programs are assembled in Python
(:mod:`csum.kernel.insn`), loaded once and run with net/bpf/test_run.c:

* ``csum_diff``: ``bpf_csum_diff(data, fs, data + MAX_DIFF_SIZE, ts, seed)`` where
  ``fs``, ``ts`` and ``seed`` come in ``skb->cb[0..2]``; the s64 result goes out
  in ``cb[0]`` (low) and ``cb[1]`` (high). The verifier needs the sizes bounded,
  not constant: the program checks ``fs, ts <= MAX_DIFF_SIZE``.
* ``l3_csum_replace`` / ``l4_csum_replace``: ``offset, from, to`` in ``cb[0..2]``,
  64-bit ``flags`` in ``cb[3]`` (low) and ``cb[4]`` (high); the helper's int
  result is the program's return value, the rewritten packet is ``data_out``.
* ``skb_ops``: up to :data:`MAX_OPS` helper calls described in an array map (see
  :func:`skb_run`), each result and the final ``skb->csum`` written back to it.

Test-run skbs start as ``CHECKSUM_NONE`` (net/bpf/test_run.c builds them with
``build_skb``), so ``bpf_l4_csum_replace`` never updates ``skb->csum`` there.
:func:`skb_run` runs a list of helper calls (:data:`csum.skb.Op`) on one skb,
CHECKSUM_COMPLETE by default (BPF_F_TEST_SKB_CHECKSUM_COMPLETE, Linux >= 6.11), and
reads ``skb->csum`` back with ``bpf_csum_update(skb, 0)``; the calls and their
results travel through a one-entry array map, which survives a run that fails
with EBADMSG (a stale ``skb->csum``).
``skb->data`` is at ``NET_SKB_PAD + NET_IP_ALIGN`` in a kmalloc'd buffer: 8-byte
aligned on x86_64 (NET_IP_ALIGN is 0 there), so ``from`` and ``to`` are too.
Needs Linux on x86_64 or aarch64 with CAP_BPF and CAP_NET_ADMIN (or root).
"""

from __future__ import annotations

import atexit
import ctypes
import errno
import platform
import struct
import threading
from dataclasses import dataclass
from typing import Any, Literal, Sequence

from ..arch.profiles import profile_for_machine
from ..bpf.skb import DIFF, Op
from ..core.inputs import as_view, check_uint
from ..errors import Code, CsumError, CsumValueError, KernelUnavailable
from . import insn as I
from .syscall import BPF_F_TEST_SKB_CHECKSUM_COMPLETE, SKB_CB, SKB_DATA, SKB_DATA_END, SYSCALL_NR, Bpf, BpfError, SkbRun

__all__ = [
    "MAX_DIFF_SIZE", "MAX_OPS", "BpfError", "KernelUnavailable", "RunningProfile", "SkbRunResult", "available",
    "bpf_csum_diff", "close", "l3_csum_replace", "l4_csum_replace", "running_profile", "skb_run", "why_unavailable",
]

#: Largest ``from`` and largest ``to`` (each) :func:`bpf_csum_diff` accepts.
MAX_DIFF_SIZE = 1024
#: Largest packet a test run takes on x86_64: net/bpf/test_run.c bpf_test_init allows PAGE_SIZE (4096)
#: minus headroom (NET_SKB_PAD 64 + NET_IP_ALIGN 0) minus tailroom (aligned skb_shared_info, 320).
_MAX_PACKET = 3712
_ETH_HLEN = 14

# enum bpf_func_id, include/uapi/linux/bpf.h.
_BPF_FUNC_l3_csum_replace = 10
_BPF_FUNC_l4_csum_replace = 11
_BPF_FUNC_csum_diff = 28
_BPF_FUNC_map_lookup_elem = 1
_BPF_FUNC_skb_store_bytes = 9
_BPF_FUNC_csum_update = 40
_BPF_FUNC_csum_level = 135

#: Most helper calls one :func:`skb_run` makes, and most bytes a store or each side of a diff takes.
MAX_OPS = 8
_MAX_OP_BYTES = 16
# The map value: MAX_OPS op records, then one s64 result per op, then skb->csum and the csum_level query.
# An op record: u32 kind, u32 offset, u64 from, u64 to, u64 flags, u32 use_diff, u32 size_a, u32 size_b,
# u32 pad, u8 a[16], u8 b[16].
_OP = struct.Struct("<IIQQQIII4x16s16s")
_KINDS = {"bpf_l3_csum_replace": 1, "bpf_l4_csum_replace": 2, "bpf_skb_store_bytes": 3, "bpf_csum_update": 4,
          "bpf_csum_level": 5, "bpf_csum_diff": 6}
_RESULTS = MAX_OPS * _OP.size
_FINAL = _RESULTS + 8 * MAX_OPS
_VALUE_SIZE = _FINAL + 16

@dataclass(frozen=True)
class RunningProfile:
    """What runs here: csum profile ``name`` (from ``uname -m``), kernel release and bpf_csum_diff flavour."""

    name: str
    machine: str
    release: str
    version: tuple[int, int]
    #: "homogenized" (Linux >= 6.13: any size, 16-bit result) or "legacy" (scratch buffer,
    #: -EINVAL unless sizes are multiples of 4), found by probing the helper.
    csum_diff_kind: Literal["homogenized", "legacy"]


def _cb(off: int) -> int:
    return SKB_CB + 4 * off


def _csum_diff_insns() -> bytes:
    bad = 19
    return b"".join([
        I.mov64_reg(6, 1),
        I.ldx_w(2, 6, _cb(0)),             # from_size
        I.ldx_w(4, 6, _cb(1)),             # to_size
        I.ldx_w(5, 6, _cb(2)),             # seed
        I.ldx_w(1, 6, SKB_DATA),           # from = skb->data
        I.ldx_w(7, 6, SKB_DATA_END),
        I.mov64_reg(3, 1),
        I.add64_imm(3, MAX_DIFF_SIZE),     # to = from + MAX_DIFF_SIZE
        I.mov64_reg(0, 1),
        I.add64_imm(0, 2 * MAX_DIFF_SIZE),
        I.jgt_reg(0, 7, bad - 11),         # 10: packet too short
        I.jgt_imm(2, MAX_DIFF_SIZE, bad - 12),
        I.jgt_imm(4, MAX_DIFF_SIZE, bad - 13),
        I.call(_BPF_FUNC_csum_diff),
        I.stx_w(6, _cb(0), 0),
        I.rsh64_imm(0, 32),
        I.stx_w(6, _cb(1), 0),
        I.mov64_imm(0, 0),
        I.exit_(),
        I.mov64_imm(0, 1),                 # 19: bad
        I.exit_(),
    ])


def _csum_replace_insns(helper_id: int) -> bytes:
    return b"".join([
        I.ldx_w(2, 1, _cb(0)),             # offset
        I.ldx_w(3, 1, _cb(1)),             # from
        I.ldx_w(4, 1, _cb(2)),             # to
        I.ldx_w(5, 1, _cb(4)),
        I.lsh64_imm(5, 32),
        I.ldx_w(0, 1, _cb(3)),
        I.or64_reg(5, 0),                  # flags = cb[4] << 32 | cb[3]
        I.call(helper_id),
        I.exit_(),
    ])


def _skb_ops_insns(map_fd: int) -> bytes:
    """Run the op records of the map value in order; store each result, then skb->csum and the csum_level query.

    r6 = ctx, r8 = map value, r9 = the last csum_diff result (used by ops whose use_diff is set).
    """
    p = I.Program()
    p.emit(I.mov64_reg(6, 1), I.st_w(10, -4, 0), I.ld_map_fd(1, map_fd), I.mov64_reg(2, 10), I.add64_imm(2, -4),
           I.call(_BPF_FUNC_map_lookup_elem))
    p.jump(lambda o: I.jeq_imm(0, 0, o), "fail")
    p.emit(I.mov64_reg(8, 0), I.mov64_imm(9, 0))
    for i in range(MAX_OPS):
        base, nxt = i * _OP.size, f"next{i}"
        p.emit(I.ldx_w(1, 8, base))
        p.jump(lambda o: I.jeq_imm(1, 0, o), "done")
        for kind in sorted(_KINDS.values()):
            p.jump(lambda o, k=kind: I.jeq_imm(1, k, o), f"k{kind}_{i}")
        p.jump(I.ja, nxt)
        for kind, helper in ((1, _BPF_FUNC_l3_csum_replace), (2, _BPF_FUNC_l4_csum_replace)):
            p.label(f"k{kind}_{i}")
            p.emit(I.mov64_reg(1, 6), I.ldx_w(2, 8, base + 4), I.ldx_dw(3, 8, base + 8), I.ldx_dw(4, 8, base + 16),
                   I.ldx_w(5, 8, base + 32), I.jeq_imm(5, 0, 1), I.mov64_reg(4, 9), I.ldx_dw(5, 8, base + 24),
                   I.call(helper))
            p.jump(I.ja, f"res{i}")
        p.label(f"k3_{i}")  # skb_store_bytes(skb, offset, a, size_a in 1..16, flags)
        p.emit(I.mov64_reg(1, 6), I.ldx_w(2, 8, base + 4), I.mov64_reg(3, 8), I.add64_imm(3, base + 48),
               I.ldx_w(4, 8, base + 36), I.add64_imm(4, -1))
        p.jump(lambda o: I.jgt_imm(4, _MAX_OP_BYTES - 1, o), nxt)
        p.emit(I.add64_imm(4, 1), I.ldx_dw(5, 8, base + 24), I.call(_BPF_FUNC_skb_store_bytes))
        p.jump(I.ja, f"res{i}")
        for kind, helper in ((4, _BPF_FUNC_csum_update), (5, _BPF_FUNC_csum_level)):
            p.label(f"k{kind}_{i}")
            p.emit(I.mov64_reg(1, 6), I.ldx_dw(2, 8, base + 8), I.call(helper))
            p.jump(I.ja, f"res{i}")
        p.label(f"k6_{i}")  # csum_diff(a, size_a, b, size_b, seed = from)
        p.emit(I.mov64_reg(1, 8), I.add64_imm(1, base + 48), I.ldx_w(2, 8, base + 36))
        p.jump(lambda o: I.jgt_imm(2, _MAX_OP_BYTES, o), nxt)
        p.emit(I.mov64_reg(3, 8), I.add64_imm(3, base + 64), I.ldx_w(4, 8, base + 40))
        p.jump(lambda o: I.jgt_imm(4, _MAX_OP_BYTES, o), nxt)
        p.emit(I.ldx_dw(5, 8, base + 8), I.call(_BPF_FUNC_csum_diff), I.mov64_reg(9, 0))
        p.label(f"res{i}")
        p.emit(I.stx_dw(8, _RESULTS + 8 * i, 0))
        p.label(nxt)
    p.label("done")
    p.emit(I.mov64_reg(1, 6), I.mov64_imm(2, 0), I.call(_BPF_FUNC_csum_update), I.stx_dw(8, _FINAL, 0),
           I.mov64_reg(1, 6), I.mov64_imm(2, 0), I.call(_BPF_FUNC_csum_level), I.stx_dw(8, _FINAL + 8, 0),
           I.mov64_imm(0, 0), I.exit_())
    p.label("fail")
    p.emit(I.mov64_imm(0, 1), I.exit_())
    return p.assemble()


@dataclass(frozen=True)
class SkbRunResult:
    """What :func:`skb_run` saw: each call's return value (s64), ``skb->csum`` after them (the s64
    ``bpf_csum_update(skb, 0)`` returned: -524 ENOTSUPP off CHECKSUM_COMPLETE), the csum_level query
    (-13 EACCES off CHECKSUM_UNNECESSARY), the run's errno (0, or EBADMSG for a stale skb->csum) and the
    packet afterwards (None when the run failed)."""

    results: tuple[int, ...]
    csum: int
    csum_level: int
    errno: int
    packet: bytes | None


def _s64(value: int) -> int:
    return value - (1 << 64) if value >> 63 else value


def _encode(op: Op) -> bytes:
    name = op[0]
    kind = _KINDS.get(name)
    if kind is None:
        raise CsumValueError(f"ops: unknown helper {name!r} (one of {', '.join(_KINDS)})", code=Code.BAD_VALUE)
    offset = frm = to = flags = use_diff = 0
    a = b = b""
    if kind in (1, 2):
        offset, frm, to, flags = op[1:]
        use_diff, to = (1, 0) if to == DIFF else (0, to)
    elif kind == 3:
        offset, a, flags = op[1], as_view(op[2], "store bytes").tobytes(), op[3]
        if not 1 <= len(a) <= _MAX_OP_BYTES:
            raise CsumValueError(f"ops: skb_store_bytes takes 1..{_MAX_OP_BYTES} bytes here, got {len(a)}",
                                 code=Code.BAD_LENGTH)
    elif kind in (4, 5):
        frm = op[1]
    else:
        a, b, frm = as_view(op[1], "diff from").tobytes(), as_view(op[2], "diff to").tobytes(), op[3]
        if max(len(a), len(b)) > _MAX_OP_BYTES:
            raise CsumValueError(f"ops: csum_diff takes at most {_MAX_OP_BYTES} bytes a side here", code=Code.BAD_LENGTH)
    return _OP.pack(kind, check_uint(offset, 32, "offset"), check_uint(frm, 64, "from"), check_uint(to, 64, "to"),
                    check_uint(flags, 64, "flags"), use_diff, len(a), len(b), a, b)


class _Kernel:
    """Loaded programs, test-run buffers and the probed profile; one per process."""

    def __init__(self, machine: str) -> None:
        self.bpf = Bpf(SYSCALL_NR[machine])
        self.fds: dict[str, int] = {}
        self.lock = threading.Lock()
        self.run = SkbRun(self.bpf, max(2 * MAX_DIFF_SIZE, _MAX_PACKET))
        try:
            self.fds["csum_diff"] = self.bpf.prog_load(_csum_diff_insns(), "csum_diff")
            self.fds["l3"] = self.bpf.prog_load(_csum_replace_insns(_BPF_FUNC_l3_csum_replace), "l3_csum_replace")
            self.fds["l4"] = self.bpf.prog_load(_csum_replace_insns(_BPF_FUNC_l4_csum_replace), "l4_csum_replace")
            self.fds["map"] = self.bpf.array_map(_VALUE_SIZE)
            self.fds["skb_ops"] = self.bpf.prog_load(_skb_ops_insns(self.fds["map"]), "skb_ops")
            self.value = ctypes.create_string_buffer(_VALUE_SIZE)
            self.profile = self._probe(machine)
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        for fd in self.fds.values():
            self.bpf.close_fd(fd)
        self.fds.clear()

    def csum_diff(self, frm: memoryview, to: memoryview, seed: int) -> int:
        data = self.run.data_in
        with self.lock:
            data[0:len(frm)] = frm
            data[MAX_DIFF_SIZE:MAX_DIFF_SIZE + len(to)] = to
            if self.run.run(self.fds["csum_diff"], 2 * MAX_DIFF_SIZE, (len(frm), len(to), seed)):
                raise BpfError("csum_diff program refused its input", errno=errno.EINVAL)
            lo, hi = self.run.cb_out()[:2]
        value = hi << 32 | lo
        return value - (1 << 64) if value >> 63 else value

    def csum_replace(self, which: str, packet: memoryview, offset: int, frm: int, to: int,
                     flags: int) -> tuple[int, bytes]:
        size = len(packet)
        with self.lock:
            self.run.data_in[0:size] = packet
            ret = self.run.run(self.fds[which], size, (offset, frm, to, flags & 0xFFFFFFFF, flags >> 32),
                               size_out=size)
            out = self.run.data_out[0:size].tobytes()
        return (ret - (1 << 32) if ret >> 31 else ret), out

    def skb_run(self, packet: memoryview, records: bytes, count: int, complete: bool) -> SkbRunResult:
        size = len(packet)
        with self.lock:
            ctypes.memset(self.value, 0, _VALUE_SIZE)
            self.value[0:len(records)] = records  # type: ignore[call-overload]  # typeshed: c_char slices take bytes
            self.bpf.map_write(self.fds["map"], self.value)
            self.run.data_in[0:size] = packet
            err, out = 0, None
            try:
                if self.run.run(self.fds["skb_ops"], size, (), size_out=size,
                                flags=BPF_F_TEST_SKB_CHECKSUM_COMPLETE if complete else 0):
                    raise BpfError("skb_ops program found no map value", errno=errno.EFAULT)
                out = self.run.data_out[0:size].tobytes()
            except BpfError as exc:
                if exc.errno != errno.EBADMSG:
                    raise
                err = exc.errno
            self.bpf.map_read(self.fds["map"], self.value)
            raw = self.value.raw
        results = struct.unpack_from(f"<{MAX_OPS}Q", raw, _RESULTS)[:count]
        csum, level = struct.unpack_from("<QQ", raw, _FINAL)
        return SkbRunResult(tuple(_s64(r) for r in results), _s64(csum), _s64(level), err, out)

    def _probe(self, machine: str) -> RunningProfile:
        """Legacy helpers refuse a 1-byte ``from`` (-EINVAL); homogenized ones fold every result to 16 bits."""
        odd = self.csum_diff(memoryview(b"\0"), memoryview(b""), 0)
        wide = self.csum_diff(memoryview(b""), memoryview(b"\xff" * 4), 0)
        kind: Literal["homogenized", "legacy"]
        if odd == -errno.EINVAL:
            kind = "legacy"
        elif 0 <= odd <= 0xFFFF and 0 <= wide <= 0xFFFF:
            kind = "homogenized"
        else:
            raise KernelUnavailable(f"bpf_csum_diff behaves like neither flavour: odd-size probe gave {odd}, "
                                    f"4-byte probe gave {wide:#x}")
        release = platform.release()
        nums = [int(part) for part in release.split("-")[0].split(".")[:2] if part.isdigit()]
        version = (nums + [0, 0])[:2]
        return RunningProfile(profile_for_machine(machine) or machine, machine, release,
                              (version[0], version[1]), kind)


_state: _Kernel | None = None
_reason: str | None = None
_detected = False
_detect_lock = threading.Lock()


def _describe(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.errno == errno.EPERM:
        return f"no permission to load BPF programs (needs CAP_BPF and CAP_NET_ADMIN, or root): {exc}"
    if isinstance(exc, OSError) and exc.errno == errno.ENOSYS:
        return "the kernel has no bpf(2) system call (CONFIG_BPF_SYSCALL off)"
    if isinstance(exc, BpfError) and "unknown func" in exc.log:
        return f"a checksum helper is missing from this kernel: {exc}"
    return f"{type(exc).__name__}: {exc}"


def _kernel() -> _Kernel:
    global _state, _reason, _detected
    with _detect_lock:
        if not _detected:
            _detected = True
            machine = platform.machine()
            if platform.system() != "Linux":
                _reason = f"not Linux (this is {platform.system() or 'unknown'})"
            elif machine not in SYSCALL_NR:
                _reason = f"no bpf(2) syscall number known for machine {machine!r} (supported: x86_64, aarch64)"
            else:
                try:
                    _state = _Kernel(machine)
                except (OSError, CsumError) as exc:
                    _reason = _describe(exc)
    if _state is None:
        raise KernelUnavailable(f"the running kernel's BPF checksum helpers are unavailable: {_reason}")
    return _state


def available() -> bool:
    """Whether this process can call the running kernel's BPF checksum helpers (detected once)."""
    try:
        _kernel()
    except KernelUnavailable:
        return False
    return True


def why_unavailable() -> str | None:
    """Why :func:`available` is False, or None when it is True."""
    return None if available() else _reason


def running_profile() -> RunningProfile:
    """The running machine as a csum profile, with the probed bpf_csum_diff flavour."""
    return _kernel().profile


def bpf_csum_diff(frm: Any, to: Any, seed: int = 0) -> int:
    """What the running kernel's ``bpf_csum_diff`` (net/core/filter.c) returns, as a signed s64.

    ``frm`` and ``to`` are buffers of 0..MAX_DIFF_SIZE bytes each, ``seed`` a u32 (``__wsum``).
    Legacy kernels return -22 (-EINVAL) for sizes that are not multiples of 4.
    """
    frm_view, to_view = as_view(frm, "frm"), as_view(to, "to")
    for name, view in (("frm", frm_view), ("to", to_view)):
        if len(view) > MAX_DIFF_SIZE:
            raise CsumValueError(f"{name} must be at most {MAX_DIFF_SIZE} bytes, got {len(view)}", code=Code.TOO_LARGE)
    return _kernel().csum_diff(frm_view, to_view, check_uint(seed, 32, "seed"))


def _csum_replace(which: str, packet: Any, offset: int, frm: int, to: int, flags: int) -> tuple[int, bytes]:
    view = as_view(packet, "packet")
    if not _ETH_HLEN <= len(view) <= _MAX_PACKET:
        raise CsumValueError(f"packet must be {_ETH_HLEN}..{_MAX_PACKET} bytes (an Ethernet frame), "
                             f"got {len(view)}", code=Code.BAD_LENGTH)
    return _kernel().csum_replace(which, view, check_uint(offset, 32, "offset"), check_uint(frm, 32, "frm"),
                                  check_uint(to, 32, "to"), check_uint(flags, 64, "flags"))


def l3_csum_replace(packet: Any, offset: int, frm: int, to: int, flags: int) -> tuple[int, bytes]:
    """Run the kernel's ``bpf_l3_csum_replace`` (net/core/filter.c) on a copy of ``packet``.

    ``frm``/``to`` are u32s as the helper gets them on a little-endian CPU (a 2-byte
    field ``b0 b1`` is ``int.from_bytes(field, "little")``). Returns the helper's int
    return code (0 or a negative errno) and the packet as the program left it.
    """
    return _csum_replace("l3", packet, offset, frm, to, flags)


def l4_csum_replace(packet: Any, offset: int, frm: int, to: int, flags: int) -> tuple[int, bytes]:
    """Run the kernel's ``bpf_l4_csum_replace`` (net/core/filter.c) on a copy of ``packet``.

    Arguments and result as for :func:`l3_csum_replace`.
    """
    return _csum_replace("l4", packet, offset, frm, to, flags)


def skb_run(packet: Any, ops: Sequence[Op], *, checksum_complete: bool = True) -> SkbRunResult:
    """Run helper calls (:data:`csum.skb.Op`, at most :data:`MAX_OPS`) on one test-run skb of the running kernel.

    ``packet`` is an Ethernet frame (the network header at 14). With ``checksum_complete`` the skb is
    CHECKSUM_COMPLETE with ``skb->csum`` summed from the network header (net/bpf/test_run.c); the run's
    closing check then reports a stale ``skb->csum`` as ``errno == EBADMSG`` (the results are still read).
    Compare with :meth:`csum.skb.Skb.run` on ``Skb.checksum_complete(packet, arch=<running profile>)``.
    """
    view = as_view(packet, "packet")
    if not _ETH_HLEN <= len(view) <= _MAX_PACKET:
        raise CsumValueError(f"packet must be {_ETH_HLEN}..{_MAX_PACKET} bytes (an Ethernet frame), "
                             f"got {len(view)}", code=Code.BAD_LENGTH)
    if len(ops) > MAX_OPS:
        raise CsumValueError(f"ops: at most {MAX_OPS} helper calls per run, got {len(ops)}", code=Code.TOO_LARGE)
    records = b"".join(_encode(op) for op in ops)
    return _kernel().skb_run(view, records, len(ops), checksum_complete)


def close() -> None:
    """Close the loaded programs; the next call loads them again."""
    global _state, _reason, _detected
    with _detect_lock:
        if _state is not None:
            _state.close()
        _state, _reason, _detected = None, None, False


atexit.register(close)
