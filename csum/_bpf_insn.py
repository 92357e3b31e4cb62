"""A minimal eBPF assembler: ``struct bpf_insn`` encoding, from include/uapi/linux/bpf.h.

Only the instructions :mod:`csum.kernel` needs (64-bit moves and ALU with an
immediate, 32-bit context loads and stores, conditional jumps, helper calls,
exit). Each function returns one 8-byte instruction as a little-endian CPU
lays it out: ``u8 code; u8 dst_reg:4, src_reg:4; s16 off; s32 imm``.
Opcode values are those of include/uapi/linux/bpf_common.h and bpf.h.
"""

from __future__ import annotations

import struct

# Instruction classes (bpf_common.h, bpf.h).
_LDX, _STX, _JMP, _ALU64 = 0x01, 0x03, 0x05, 0x07
# Sizes and modes of loads and stores.
_W, _MEM = 0x00, 0x60
# Operand source: immediate (K) or register (X).
_K, _X = 0x00, 0x08
# ALU operations.
_ADD, _OR, _LSH, _RSH, _MOV = 0x00, 0x40, 0x60, 0x70, 0xB0
# Jump operations.
_JGT, _CALL, _EXIT = 0x20, 0x80, 0x90

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


def stx_w(dst: int, off: int, src: int) -> bytes:
    """``*(u32 *)(dst + off) = src``."""
    return _insn(_STX | _MEM | _W, dst, src, off)


def jgt_reg(dst: int, src: int, off: int) -> bytes:
    """``if dst > src (unsigned) goto pc + 1 + off``."""
    return _insn(_JMP | _JGT | _X, dst, src, off)


def jgt_imm(dst: int, imm: int, off: int) -> bytes:
    """``if dst > imm (unsigned) goto pc + 1 + off``."""
    return _insn(_JMP | _JGT | _K, dst, off=off, imm=imm)


def call(helper_id: int) -> bytes:
    """Call helper ``helper_id`` (an ``enum bpf_func_id`` value); arguments in r1..r5, result in r0."""
    return _insn(_JMP | _CALL, imm=helper_id)


def exit_() -> bytes:
    """Return r0."""
    return _insn(_JMP | _EXIT)
