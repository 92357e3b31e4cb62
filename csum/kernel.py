"""The running kernel's checksum helpers (net/core/filter.c), called through BPF_PROG_TEST_RUN.

Three tiny BPF_PROG_TYPE_SCHED_CLS programs are assembled in Python
(:mod:`csum._bpf_insn`), loaded once and run with net/bpf/test_run.c:

* ``csum_diff``: ``bpf_csum_diff(data, fs, data + MAX_DIFF_SIZE, ts, seed)`` where
  ``fs``, ``ts`` and ``seed`` come in ``skb->cb[0..2]``; the s64 result goes out
  in ``cb[0]`` (low) and ``cb[1]`` (high). The verifier needs the sizes bounded,
  not constant: the program checks ``fs, ts <= MAX_DIFF_SIZE``.
* ``l3_csum_replace`` / ``l4_csum_replace``: ``offset, from, to`` in ``cb[0..2]``,
  64-bit ``flags`` in ``cb[3]`` (low) and ``cb[4]`` (high); the helper's int
  result is the program's return value, the rewritten packet is ``data_out``.

Test-run skbs start as ``CHECKSUM_NONE`` (net/bpf/test_run.c builds them with
``build_skb``), so ``bpf_l4_csum_replace`` never updates ``skb->csum`` here.
``skb->data`` is at ``NET_SKB_PAD + NET_IP_ALIGN`` in a kmalloc'd buffer: 8-byte
aligned on x86_64 (NET_IP_ALIGN is 0 there), so ``from`` and ``to`` are too.
Needs Linux on x86_64 or aarch64 with CAP_BPF and CAP_NET_ADMIN (or root).
"""

from __future__ import annotations

import atexit
import errno
import platform
import threading
from dataclasses import dataclass
from typing import Any, Literal

from . import _bpf_insn as I
from ._bpf_syscall import SKB_CB, SKB_DATA, SKB_DATA_END, SYSCALL_NR, Bpf, BpfError, SkbRun
from ._check import as_view, check_uint
from .errors import CsumError, CsumValueError

__all__ = [
    "MAX_DIFF_SIZE", "BpfError", "KernelUnavailable", "RunningProfile", "available", "bpf_csum_diff",
    "close", "l3_csum_replace", "l4_csum_replace", "running_profile", "why_unavailable",
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

#: uname machine -> csum profile name (see csum.profile_names()).
_PROFILE_NAMES = {
    "x86_64": "x86_64", "amd64": "x86_64", "aarch64": "arm64", "arm64": "arm64",
    "i386": "i386", "i486": "i386", "i586": "i386", "i686": "i386", "riscv64": "riscv64",
    "ppc64": "powerpc64", "ppc64le": "powerpc64le", "s390x": "s390x", "loongarch64": "loongarch64",
    "parisc": "parisc", "parisc64": "parisc", "mips": "mips", "mips64": "mips",
}


class KernelUnavailable(CsumError, RuntimeError):
    """The running kernel's helpers cannot be called here; the message says why."""

    code = "kernel-unavailable"


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
        return RunningProfile(_PROFILE_NAMES.get(machine, machine), machine, release,
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
            raise CsumValueError(f"{name} must be at most {MAX_DIFF_SIZE} bytes, got {len(view)}", code="too-large")
    return _kernel().csum_diff(frm_view, to_view, check_uint(seed, 32, "seed"))


def _csum_replace(which: str, packet: Any, offset: int, frm: int, to: int, flags: int) -> tuple[int, bytes]:
    view = as_view(packet, "packet")
    if not _ETH_HLEN <= len(view) <= _MAX_PACKET:
        raise CsumValueError(f"packet must be {_ETH_HLEN}..{_MAX_PACKET} bytes (an Ethernet frame), "
                             f"got {len(view)}", code="bad-length")
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


def close() -> None:
    """Close the loaded programs; the next call loads them again."""
    global _state, _reason, _detected
    with _detect_lock:
        if _state is not None:
            _state.close()
        _state, _reason, _detected = None, None, False


atexit.register(close)
