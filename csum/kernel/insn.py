"""A minimal eBPF assembler: ``struct bpf_insn`` encoding, from include/uapi/linux/bpf.h.

Only the instructions :mod:`csum.kernel` needs (64-bit moves and ALU, 32/64-bit
loads and stores, conditional jumps, helper calls, exit, and the 16-byte load of
a map fd), plus :class:`Program`, which resolves jump labels. Each function returns one 8-byte instruction as a little-endian CPU
lays it out: ``u8 code; u8 dst_reg:4, src_reg:4; s16 off; s32 imm``.
Opcode values are those of include/uapi/linux/bpf_common.h and bpf.h.

The one decoder, :func:`helper_calls`, reads a compiled program the other way: which helpers it calls and, where
the instructions show it, the constant its fifth argument (r5: the flags of bpf_l3/l4_csum_replace and
bpf_skb_store_bytes) holds at the call.
"""

from __future__ import annotations

import struct
from typing import NamedTuple

# Instruction classes (bpf_common.h, bpf.h).
_LD, _LDX, _ST, _STX, _JMP, _ALU64 = 0x00, 0x01, 0x02, 0x03, 0x05, 0x07
# Sizes and modes of loads and stores.
_W, _DW, _IMM, _MEM = 0x00, 0x18, 0x00, 0x60
#: ``src_reg`` of a 16-byte load whose immediate is a map fd (BPF_PSEUDO_MAP_FD).
_PSEUDO_MAP_FD = 1
# Operand source: immediate (K) or register (X).
_K, _X = 0x00, 0x08
# ALU operations.
_ADD, _OR, _LSH, _RSH, _MOV = 0x00, 0x40, 0x60, 0x70, 0xB0
# Jump operations.
_JA, _JEQ, _JGT, _CALL, _EXIT = 0x00, 0x10, 0x20, 0x80, 0x90

_INSN = struct.Struct("<BBhi")


def _insn(code: int, dst: int = 0, src: int = 0, off: int = 0, imm: int = 0) -> bytes:
    return _INSN.pack(code, (src << 4) | dst, off, imm)


def mov64_reg(dst: int, src: int) -> bytes:
    """``dst = src``."""
    return _insn(_ALU64 | _MOV | _X, dst, src)


def mov64_imm(dst: int, imm: int) -> bytes:
    """``dst = imm`` (sign-extended s32)."""
    return _insn(_ALU64 | _MOV | _K, dst, imm=imm)


def add64_imm(dst: int, imm: int) -> bytes:
    """``dst += imm``."""
    return _insn(_ALU64 | _ADD | _K, dst, imm=imm)


def add64_reg(dst: int, src: int) -> bytes:
    """``dst += src``."""
    return _insn(_ALU64 | _ADD | _X, dst, src)


def or64_reg(dst: int, src: int) -> bytes:
    """``dst |= src``."""
    return _insn(_ALU64 | _OR | _X, dst, src)


def lsh64_imm(dst: int, imm: int) -> bytes:
    """``dst <<= imm``."""
    return _insn(_ALU64 | _LSH | _K, dst, imm=imm)


def rsh64_imm(dst: int, imm: int) -> bytes:
    """``dst >>= imm`` (logical)."""
    return _insn(_ALU64 | _RSH | _K, dst, imm=imm)


def ldx_w(dst: int, src: int, off: int) -> bytes:
    """``dst = *(u32 *)(src + off)``."""
    return _insn(_LDX | _MEM | _W, dst, src, off)


def ldx_dw(dst: int, src: int, off: int) -> bytes:
    """``dst = *(u64 *)(src + off)``."""
    return _insn(_LDX | _MEM | _DW, dst, src, off)


def stx_w(dst: int, off: int, src: int) -> bytes:
    """``*(u32 *)(dst + off) = src``."""
    return _insn(_STX | _MEM | _W, dst, src, off)


def stx_dw(dst: int, off: int, src: int) -> bytes:
    """``*(u64 *)(dst + off) = src``."""
    return _insn(_STX | _MEM | _DW, dst, src, off)


def st_w(dst: int, off: int, imm: int) -> bytes:
    """``*(u32 *)(dst + off) = imm``."""
    return _insn(_ST | _MEM | _W, dst, off=off, imm=imm)


def ld_map_fd(dst: int, fd: int) -> bytes:
    """``dst = map`` (16 bytes: BPF_LD | BPF_DW | BPF_IMM with src_reg BPF_PSEUDO_MAP_FD)."""
    return _insn(_LD | _DW | _IMM, dst, _PSEUDO_MAP_FD, imm=fd) + _insn(0)


def jgt_reg(dst: int, src: int, off: int) -> bytes:
    """``if dst > src (unsigned) goto pc + 1 + off``."""
    return _insn(_JMP | _JGT | _X, dst, src, off)


def jgt_imm(dst: int, imm: int, off: int) -> bytes:
    """``if dst > imm (unsigned) goto pc + 1 + off``."""
    return _insn(_JMP | _JGT | _K, dst, off=off, imm=imm)


def jeq_imm(dst: int, imm: int, off: int) -> bytes:
    """``if dst == imm goto pc + 1 + off``."""
    return _insn(_JMP | _JEQ | _K, dst, off=off, imm=imm)


def ja(off: int) -> bytes:
    """``goto pc + 1 + off``."""
    return _insn(_JMP | _JA, off=off)


def call(helper_id: int) -> bytes:
    """Call helper ``helper_id`` (an ``enum bpf_func_id`` value); arguments in r1..r5, result in r0."""
    return _insn(_JMP | _CALL, imm=helper_id)


def exit_() -> bytes:
    """Return r0."""
    return _insn(_JMP | _EXIT)


class Program:
    """Instructions with forward and backward jump labels: ``emit`` bytes, ``label`` a place, ``jump`` to one.

    ``jump(make, label)`` takes a function of the jump offset (e.g. ``lambda o: jeq_imm(1, 0, o)``)
    and fills the offset in :meth:`assemble`, once every label is placed.
    """

    def __init__(self) -> None:
        self._code: list[bytes | tuple[object, str]] = []
        self._labels: dict[str, int] = {}
        self._slots = 0

    def emit(self, *insns: bytes) -> None:
        for insn in insns:
            self._code.append(insn)
            self._slots += len(insn) // 8

    def jump(self, make: object, label: str) -> None:
        self._code.append((make, label))
        self._slots += 1

    def label(self, name: str) -> None:
        if name in self._labels:
            raise ValueError(f"label {name!r} placed twice")
        self._labels[name] = self._slots

    def assemble(self) -> bytes:
        out, pc = [], 0
        for item in self._code:
            if isinstance(item, bytes):
                out.append(item)
                pc += len(item) // 8
            else:
                make, label = item
                out.append(make(self._labels[label] - pc - 1))  # type: ignore[operator]
                pc += 1
        return b"".join(out)


class HelperCall(NamedTuple):
    """A helper call site of a compiled program: its slot, ``enum bpf_func_id``, and the constants r5 may hold
    there (None: on some path into the call r5 is not a constant the instructions show)."""

    pc: int
    helper: int
    r5: frozenset[int] | None


_LD_IMM64 = _LD | _DW | _IMM
_CLASS, _JMP32 = 0x07, 0x06
_MOV_IMM = (0xB4, 0xB7)  # BPF_ALU | BPF_MOV | BPF_K, BPF_ALU64 | BPF_MOV | BPF_K
_MAX_STEPS = 512


class _Code:
    def __init__(self, code: bytes) -> None:
        #: One entry per 8-byte slot; the second slot of a 16-byte load is None.
        self.slots: list[tuple[int, int, int, int] | None] = []
        while 8 * len(self.slots) + 8 <= len(code):
            code_, regs, off, imm = _INSN.unpack_from(code, 8 * len(self.slots))
            self.slots.append((code_, regs, off, imm))
            if code_ == _LD_IMM64:
                self.slots.append(None)
        self.preds: dict[int, list[int]] = {}
        for i, insn in enumerate(self.slots):
            if insn is None:
                continue
            code_, op = insn[0], insn[0] & 0xF0
            if code_ & _CLASS in (_JMP, _JMP32) and op not in (_CALL, _EXIT):
                off = insn[3] if code_ == _JMP32 | _JA else insn[2]  # gotol keeps its offset in imm
                self.preds.setdefault(i + 1 + off, []).append(i)
            if not (code_ & _CLASS in (_JMP, _JMP32) and op in (_JA, _EXIT)):
                nxt = i + (2 if code_ == _LD_IMM64 else 1)
                self.preds.setdefault(nxt, []).append(i)

    def r5(self, call_pc: int) -> frozenset[int] | None:
        """The constants r5 may hold when ``call_pc`` runs, following every path back to where r5 is set."""
        found: set[int] = set()
        todo, seen = [call_pc], {call_pc}
        steps = 0
        while todo:
            at = todo.pop()
            preds = self.preds.get(at, [])
            if not preds:
                return None  # the program's entry: r5 was never set on this path
            for q in preds:
                steps += 1
                insn = self.slots[q]
                if insn is None or steps > _MAX_STEPS:
                    return None
                code, regs, _, imm = insn
                cls, op = code & _CLASS, code & 0xF0
                if cls in (_JMP, _JMP32) and op in (_CALL, _EXIT):
                    return None  # a call leaves r5 undefined
                if regs & 0x0F == 5 and cls in (0x04, _ALU64, _LDX, _LD):
                    if code not in _MOV_IMM:
                        return None
                    found.add(imm & 0xFFFFFFFF)
                elif q not in seen:
                    seen.add(q)
                    todo.append(q)
        return frozenset(found)


def helper_calls(code: bytes) -> list[HelperCall]:
    """Every helper call (BPF_JMP | BPF_CALL with src_reg 0) in ``code`` with the constants r5 may hold there.

    The paths into a call are followed back through jumps (BPF_JMP / BPF_JMP32) to the ``mov r5, imm`` that
    sets r5 on each; any other write to r5, a call on the way or the program's entry makes it unknown (None).
    """
    prog = _Code(code)
    return [HelperCall(i, insn[3], prog.r5(i)) for i, insn in enumerate(prog.slots)
            if insn is not None and insn[0] == _JMP | _CALL and insn[1] >> 4 == 0]
