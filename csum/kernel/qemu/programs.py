"""The BPF programs ``csum kernel-check --qemu`` runs in the guest, assembled on the host.

Each is a ``BPF_PROG_TYPE_SCHED_CLS`` program run with ``BPF_PROG_TEST_RUN``
(net/bpf/test_run.c); arguments come in ``__sk_buff.cb[0..4]`` and results go
out there (test_run copies ``cb`` both ways):

* ``diff_pkt``: ``bpf_csum_diff(data + cb[3], cb[0], data + cb[4], cb[1], cb[2])``,
  pointers *into the packet* at chosen offsets, as a program passing header
  fields in place does. The packet's first byte sits at ``NET_SKB_PAD +
  NET_IP_ALIGN`` in a kmalloc'd buffer, so an offset picks an address mod 8.
* ``diff_stack_F_T``: the same bytes first copied with ``bpf_skb_load_bytes``
  to the program's stack, ``from`` at ``r10 - 512 + F`` and ``to`` at
  ``r10 - 256 + T``, as a program building its buffers on the stack does.

Both store the helper's s64 result in ``cb[0]`` (low) and ``cb[1]`` (high), and
the low 32 bits of the two buffer addresses in ``cb[2]`` and ``cb[3]`` (a
pointer stored into the context: allowed for root, which is what the runner
is), so the host knows the real alignment instead of guessing it.
The l3/l4 replace programs are those of :mod:`csum.kernel`.

Instructions are encoded little-endian by :mod:`csum.kernel.insn`;
:func:`to_order` re-encodes them for big-endian CPUs (s390x), where
``struct bpf_insn``'s register nibbles and its ``off``/``imm`` fields are laid
out the other way round.
"""

from __future__ import annotations

import struct
from typing import Literal, Union

from .. import insn as I
from ..live import _BPF_FUNC_csum_diff, _BPF_FUNC_l3_csum_replace, _BPF_FUNC_l4_csum_replace, _csum_replace_insns
from ..syscall import SKB_CB, SKB_DATA, SKB_DATA_END

#: Largest ``from`` and ``to`` the packet program takes (each), and the stack program.
MAX_PKT = 600
MAX_STACK = 248
#: Offsets in the test packet: ``from`` starts in ``[0, TO_BASE)``, ``to`` in ``[TO_BASE, TO_BASE + 64)``.
TO_BASE = 640
MAX_OFFSET = 2047
PACKET_SIZE = TO_BASE + 8 + MAX_PKT

_BPF_FUNC_skb_load_bytes = 26
_ST_MEM_DW, _ALU64_ADD_X, _JLT_K, _JNE_K = 0x7A, 0x0F, 0xA5, 0x55


def _cb(i: int) -> int:
    return SKB_CB + 4 * i


Item = Union[bytes, str, tuple[str, str, int, int]]


def _asm(items: list[Item]) -> bytes:
    """Resolve labels: a str marks a place; ``(op, label, dst, imm_or_src)`` jumps there.

    ``op`` is ``jgt`` / ``jlt`` / ``jne`` (against an immediate) or ``jgt_reg``.
    """
    where, pc = {}, 0
    for item in items:
        if isinstance(item, str):
            where[item] = pc
        else:
            pc += 1
    out, pc = [], 0
    for item in items:
        if isinstance(item, str):
            continue
        if isinstance(item, tuple):
            op, label, dst, arg = item
            off = where[label] - pc - 1
            if op == "jgt":
                item = I.jgt_imm(dst, arg, off)
            elif op == "jgt_reg":
                item = I.jgt_reg(dst, arg, off)
            else:
                item = I._insn(_JLT_K if op == "jlt" else _JNE_K, dst, off=off, imm=arg)
        out.append(item)
        pc += 1
    return b"".join(out)


def _add_reg(dst: int, src: int) -> bytes:
    return I._insn(_ALU64_ADD_X, dst, src)


def _finish() -> list[Item]:
    """Store r1/r3 (the buffers) in cb[2]/cb[3], call bpf_csum_diff, result to cb[0..1]."""
    return [
        I.stx_w(6, _cb(2), 1), I.stx_w(6, _cb(3), 3),
        I.call(_BPF_FUNC_csum_diff),
        I.stx_w(6, _cb(0), 0), I.rsh64_imm(0, 32), I.stx_w(6, _cb(1), 0),
        I.mov64_imm(0, 0), I.exit_(),
        "bad", I.mov64_imm(0, 1), I.exit_(),
    ]


def diff_pkt() -> bytes:
    """``bpf_csum_diff`` on two pointers into the packet (see the module docstring)."""
    return _asm([
        I.mov64_reg(6, 1),
        I.ldx_w(7, 6, _cb(3)), I.ldx_w(8, 6, _cb(4)),
        ("jgt", "bad", 7, MAX_OFFSET), ("jgt", "bad", 8, MAX_OFFSET),
        I.ldx_w(1, 6, SKB_DATA), I.ldx_w(9, 6, SKB_DATA_END),
        I.mov64_reg(3, 1), _add_reg(1, 7), _add_reg(3, 8),
        I.mov64_reg(0, 1), I.add64_imm(0, MAX_PKT), ("jgt_reg", "bad", 0, 9),
        I.mov64_reg(0, 3), I.add64_imm(0, MAX_PKT), ("jgt_reg", "bad", 0, 9),
        I.ldx_w(2, 6, _cb(0)), I.ldx_w(4, 6, _cb(1)), I.ldx_w(5, 6, _cb(2)),
        ("jgt", "bad", 2, MAX_PKT), ("jgt", "bad", 4, MAX_PKT),
        *_finish(),
    ])


def _load_to_stack(size_reg: int, off_cb: int, frame_off: int, skip: str) -> list[Item]:
    """``if size: bpf_skb_load_bytes(skb, cb[off_cb], r10 + frame_off, size)``; failure jumps to bad."""
    return [
        ("jlt", skip, size_reg, 1),
        I.mov64_reg(1, 6), I.ldx_w(2, 6, _cb(off_cb)), I.mov64_reg(3, 10), I.add64_imm(3, frame_off),
        I.mov64_reg(4, size_reg), I.call(_BPF_FUNC_skb_load_bytes), ("jne", "bad", 0, 0),
        skip,
    ]


def diff_stack(frm_skew: int, to_skew: int) -> bytes:
    """``bpf_csum_diff`` on stack copies at ``r10 - 512 + frm_skew`` and ``r10 - 256 + to_skew``."""
    if not (0 <= frm_skew < 8 and 0 <= to_skew < 8):
        raise ValueError("stack skews are 0..7")
    frm_at, to_at = -512 + frm_skew, -256 + to_skew
    zero = [I._insn(_ST_MEM_DW, 10, off=-8 * k) for k in range(1, 65)]
    return _asm([
        I.mov64_reg(6, 1), *zero,
        I.ldx_w(7, 6, _cb(0)), I.ldx_w(8, 6, _cb(1)),
        ("jgt", "bad", 7, MAX_STACK), ("jgt", "bad", 8, MAX_STACK),
        *_load_to_stack(7, 3, frm_at, "from_done"),
        *_load_to_stack(8, 4, to_at, "to_done"),
        I.mov64_reg(1, 10), I.add64_imm(1, frm_at), I.mov64_reg(2, 7),
        I.mov64_reg(3, 10), I.add64_imm(3, to_at), I.mov64_reg(4, 8), I.ldx_w(5, 6, _cb(2)),
        *_finish(),
    ])


def l3_replace() -> bytes:
    """``bpf_l3_csum_replace(skb, cb[0], cb[1], cb[2], cb[4] << 32 | cb[3])``, its result returned."""
    return _csum_replace_insns(_BPF_FUNC_l3_csum_replace)


def l4_replace() -> bytes:
    """``bpf_l4_csum_replace`` with the arguments of :func:`l3_replace`."""
    return _csum_replace_insns(_BPF_FUNC_l4_csum_replace)


_INSN = struct.Struct("<BBhi")


def to_order(insns: bytes, order: Literal["little", "big"]) -> bytes:
    """``insns`` (little-endian ``struct bpf_insn``s) as a CPU of byte order ``order`` lays them out."""
    if order == "little":
        return insns
    out = bytearray()
    for code, regs, off, imm in _INSN.iter_unpack(insns):
        out += struct.pack(">BBhi", code, ((regs & 0xF) << 4) | (regs >> 4), off, imm)
    return bytes(out)
