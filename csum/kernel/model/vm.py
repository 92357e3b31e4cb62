"""An eBPF interpreter: a program's own instructions, run as the kernel's interpreter runs them
(kernel/bpf/core.c ``___bpf_prog_run``; the instruction set of Documentation/bpf/standardization/
instruction-set.rst, RFC 9669): ALU and ALU64 (signed division and modulo, sign-extending moves and byte swaps of
cpu v4 included), JMP and JMP32, LD_IMM64, LDX/ST/STX (sign-extending loads and atomics included), calls of helpers
and of bpf-to-bpf subprograms (each with its own 512-byte stack), exit.

Memory is flat: each region (a stack frame, the packet, a map's values) lives at its own 4 GiB slot, at an offset
whose residue mod 8 is the kernel's (a buffer's alignment changes some architectures' ``csum_partial``), so pointer
arithmetic and ``data``/``data_end`` comparisons behave as in the kernel. An access outside every region, or past
its bounds, is one the verifier would have refused: it is not modelled. So is anything else this module does not
know (legacy LD_ABS/LD_IND, kfuncs, callbacks, load-acquire/store-release): the run stops with "cannot model: ...".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from typing import Any

from .ctx import Ctx, cannot
from .elf import Order

__all__ = ["Memory", "Region", "Vm", "MAX_INSNS", "STACK_SIZE"]

M64, M32 = (1 << 64) - 1, 0xFFFFFFFF
#: include/linux/filter.h MAX_BPF_STACK; kernel/bpf/verifier.c MAX_CALL_FRAMES.
STACK_SIZE, MAX_CALL_FRAMES = 512, 8
#: kernel/bpf/verifier.c BPF_COMPLEXITY_LIMIT_INSNS: no verified program runs longer on one packet.
MAX_INSNS = 1_000_000
_SLOT = 32
# Instruction classes, sizes, modes, ALU and JMP operations (include/uapi/linux/bpf_common.h, bpf.h).
LD, LDX, ST, STX, ALU, JMP, JMP32, ALU64 = range(8)
_SIZES = {0x00: 4, 0x08: 2, 0x10: 1, 0x18: 8}
_MEM, _MEMSX, _ATOMIC = 0x60, 0x80, 0xC0
_ADD, _SUB, _MUL, _DIV, _OR, _AND, _LSH, _RSH, _NEG, _MOD, _XOR, _MOV, _ARSH, _END = range(0, 0xE0, 0x10)
_JA, _JEQ, _JGT, _JGE, _JSET, _JNE, _JSGT, _JSGE, _CALL, _EXIT, _JLT, _JLE, _JSLT, _JSLE = range(0, 0xE0, 0x10)
_FETCH, _XCHG, _CMPXCHG = 0x01, 0xE0 | 0x01, 0xF0 | 0x01
#: ``src_reg`` of a call: a helper, a bpf-to-bpf call (BPF_PSEUDO_CALL), a kfunc (BPF_PSEUDO_KFUNC_CALL).
PSEUDO_CALL, PSEUDO_KFUNC_CALL = 1, 2


def _signed(value: int, bits: int) -> int:
    return value - (1 << bits) if value >> (bits - 1) & 1 else value


@dataclass
class Region:
    """Bytes the program may address: ``buf`` at address ``slot << 32 | start``; ``lo``..``hi`` the indexes it may
    touch (a packet's data, between its pointers); ``ctx``: the program's context, read field by field."""

    buf: bytearray
    name: str
    start: int = 0
    writable: bool = True
    lo: int = 0
    hi: int = -1
    ctx: Ctx | None = None

    def __post_init__(self) -> None:
        if self.hi < 0:
            self.hi = len(self.buf)


class Memory:
    """The regions of one program's model, by slot; ``order``: the program's CPU byte order."""

    def __init__(self, order: Order) -> None:
        self.order = order
        self.regions: dict[int, Region] = {}

    def add(self, buf: bytearray, name: str, *, start: int = 0, writable: bool = True, ctx: Ctx | None = None) -> int:
        """Place ``buf`` in a new slot (its first byte at an address ``start`` mod 8); its address."""
        slot = len(self.regions) + 1
        self.regions[slot] = Region(buf, name, start, writable, ctx=ctx)
        return slot << _SLOT | start

    def region(self, address: int) -> Region:
        return self.regions[address >> _SLOT]

    def _at(self, address: int, size: int, write: bool) -> tuple[Region, int]:
        region = self.regions.get(address >> _SLOT)
        if region is None:
            raise cannot(f"a {size}-byte {'write' if write else 'read'} at address {address:#x}, in no region "
                         "(the verifier rejects such an access)")
        at = (address & M32) - region.start
        if at < region.lo or at + size > region.hi:
            raise cannot(f"a {size}-byte {'write' if write else 'read'} at offset {at - region.lo} of {region.name} "
                         f"({region.hi - region.lo} bytes; the verifier rejects such an access)")
        if write and not region.writable:
            raise cannot(f"a write to {region.name}, which is read-only")
        return region, at

    def read(self, address: int, size: int) -> bytes:
        region, at = self._at(address, size, False)
        return bytes(region.buf[at:at + size])

    def write(self, address: int, data: bytes) -> None:
        region, at = self._at(address, len(data), True)
        region.buf[at:at + len(data)] = data

    def load(self, address: int, size: int) -> int:
        region, at = self._at(address, size, False)
        if region.ctx is not None:
            return region.ctx.load(at, size)
        return int.from_bytes(region.buf[at:at + size], self.order)

    def store(self, address: int, size: int, value: int) -> None:
        region, at = self._at(address, size, True)
        if region.ctx is not None:
            region.ctx.store(at, size, value & ((1 << 8 * size) - 1))
            return
        region.buf[at:at + size] = (value & ((1 << 8 * size) - 1)).to_bytes(size, self.order)


#: One decoded instruction: (opcode, dst, src, off, imm), ints; a LD_IMM64's imm is the whole 64-bit value (None, with
#: the reason in ``off``'s place, when the load is not modelled, e.g. an extern).
Insn = tuple[int, int, int, Any, Any]
#: A helper: (vm, r1..r5) -> r0.
Helper = Callable[..., int]


class Vm:
    """A program's code (section -> decoded instructions), its call targets ((section, index) of a call ->
    (section, index) it reaches), the memory and the helpers (``helper(id)`` -> a function, or raises)."""

    def __init__(self, code: dict[int, list[Insn]], calls: dict[tuple[int, int], tuple[int, int]], memory: Memory,
                 helper: Callable[[int], Helper]) -> None:
        self.code, self.calls, self.memory, self.helper = code, calls, memory, helper
        self.little = memory.order == "little"
        self._stacks = [memory.add(bytearray(STACK_SIZE), f"stack frame {i}") + STACK_SIZE
                        for i in range(MAX_CALL_FRAMES)]

    def run(self, section: int, start: int, r1: int) -> int:
        """Run from instruction ``start`` of ``section`` with ``r1`` (the context); the program's r0 (u64)."""
        for top in self._stacks:  # each run starts with zeroed stacks (the verifier forbids reading them unwritten)
            region = self.memory.region(top - 1)
            region.buf[:] = bytes(STACK_SIZE)
        regs = [0] * 11
        regs[1], regs[10] = r1, self._stacks[0]
        frames: list[tuple[int, int, list[int]]] = []
        code, pc, steps = self.code[section], start, 0
        mem = self.memory
        while True:
            steps += 1
            if steps > MAX_INSNS:
                raise cannot(f"more than {MAX_INSNS} instructions on one packet (the verifier's limit)")
            try:
                op, dst, src, off, imm = code[pc]
            except IndexError:
                raise cannot("a jump out of the program") from None
            cls = op & 7
            if cls == ALU64 or cls == ALU:
                regs[dst] = self._alu(op, cls == ALU64, regs[dst], regs[src] if op & 8 else imm, off, imm)
                pc += 1
            elif cls == JMP or cls == JMP32:
                jop = op & 0xF0
                if jop == _CALL:
                    if src == PSEUDO_CALL:
                        if len(frames) + 1 >= MAX_CALL_FRAMES:
                            raise cannot("calls nested deeper than 8 frames (the verifier rejects them)")
                        target = self.calls.get((section, pc))
                        if target is None:
                            raise cannot("a bpf-to-bpf call csum cannot resolve")
                        frames.append((section, pc + 1, regs[6:11]))
                        regs[10] = self._stacks[len(frames)]
                        section, pc = target
                        code = self.code[section]
                        continue
                    if src == PSEUDO_KFUNC_CALL:
                        raise cannot("a kfunc call (kernel functions are not modelled)")
                    regs[0] = self.helper(imm)(self, *regs[1:6]) & M64
                    pc += 1
                elif jop == _EXIT:
                    if not frames:
                        return regs[0]
                    section, pc, saved = frames.pop()
                    regs[6:11] = saved
                    code = self.code[section]
                elif jop == _JA:
                    pc += (off if cls == JMP else imm) + 1
                else:
                    a, b = regs[dst], (regs[src] if op & 8 else imm & M64)
                    if cls == JMP32:
                        a, b, bits = a & M32, b & M32, 32
                    else:
                        bits = 64
                    pc += off + 1 if _taken(jop, a, b, bits) else 1
            elif cls == LDX:
                mode, size = op & 0xE0, _SIZES[op & 0x18]
                if mode not in (_MEM, _MEMSX):
                    raise cannot(f"the load instruction {op:#04x}")
                value = mem.load((regs[src] + off) & M64, size)
                regs[dst] = _signed(value, 8 * size) & M64 if mode == _MEMSX else value
                pc += 1
            elif cls == STX or cls == ST:
                mode, size = op & 0xE0, _SIZES[op & 0x18]
                address = (regs[dst] + off) & M64
                if mode == _MEM:
                    mem.store(address, size, regs[src] if cls == STX else imm)
                elif mode == _ATOMIC and cls == STX and size in (4, 8):
                    self._atomic(regs, address, size, src, imm)
                else:
                    raise cannot(f"the store instruction {op:#04x}")
                pc += 1
            elif op == 0x18:  # LD_IMM64
                if imm is None:
                    raise cannot(str(off))
                regs[dst] = imm
                pc += 2
            else:
                raise cannot(f"the instruction {op:#04x} (legacy packet loads LD_ABS/LD_IND are not modelled)")

    def _alu(self, op: int, wide: bool, a: int, b: int, off: int, imm: int | None) -> int:
        aop = op & 0xF0
        if aop == _END:  # the class says which swap, not the width: the register is taken whole
            width = imm or 0
            if width not in (16, 32, 64):
                raise cannot(f"a byte swap of {width} bits")
            v = a & ((1 << width) - 1)
            swap = True if wide else bool(op & 8) == self.little  # BSWAP; TO_BE on a little-endian CPU, TO_LE on big
            return int.from_bytes(v.to_bytes(width // 8, "little"), "big") if swap else v
        bits = 64 if wide else 32
        mask = M64 if wide else M32
        a, b = a & mask, b & mask
        if aop == _ADD:
            r = a + b
        elif aop == _SUB:
            r = a - b
        elif aop == _MUL:
            r = a * b
        elif aop == _DIV or aop == _MOD:
            if off == 1:  # SDIV, SMOD: truncated toward zero, the remainder takes the dividend's sign
                sa, sb = _signed(a, bits), _signed(b, bits)
                if sb == 0:
                    r = 0 if aop == _DIV else a
                else:
                    q = abs(sa) // abs(sb) * (1 if (sa < 0) == (sb < 0) else -1)
                    r = q if aop == _DIV else sa - q * sb
            elif off:
                raise cannot(f"the division instruction {op:#04x} with offset {off}")
            elif b == 0:
                r = 0 if aop == _DIV else a
            else:
                r = a // b if aop == _DIV else a % b
        elif aop == _OR:
            r = a | b
        elif aop == _AND:
            r = a & b
        elif aop == _XOR:
            r = a ^ b
        elif aop == _LSH:
            r = a << (b & (bits - 1))
        elif aop == _RSH:
            r = a >> (b & (bits - 1))
        elif aop == _ARSH:
            r = _signed(a, bits) >> (b & (bits - 1))
        elif aop == _NEG:
            r = -a
        elif aop == _MOV:
            if off in (8, 16, 32) and (wide or off != 32):
                r = _signed(b & ((1 << off) - 1), off)  # MOVSX
            elif off:
                raise cannot(f"the move instruction {op:#04x} with offset {off}")
            else:
                r = b
        else:
            raise cannot(f"the ALU instruction {op:#04x}")
        return r & mask

    def _atomic(self, regs: list[int], address: int, size: int, src: int, imm: int) -> None:
        mask = (1 << 8 * size) - 1
        old = self.memory.load(address, size)
        value = regs[src] & mask
        if imm == _CMPXCHG:
            if old == regs[0] & mask:
                self.memory.store(address, size, value)
            regs[0] = old
            return
        if imm == _XCHG:
            new = value
        else:
            op = imm & ~_FETCH
            if op == _ADD:
                new = old + value
            elif op == _OR:
                new = old | value
            elif op == _AND:
                new = old & value
            elif op == _XOR:
                new = old ^ value
            else:
                raise cannot(f"the atomic operation {imm:#x}")
        self.memory.store(address, size, new)
        if imm & _FETCH:
            regs[src] = old


def _taken(jop: int, a: int, b: int, bits: int) -> bool:
    if jop == _JEQ:
        return a == b
    if jop == _JNE:
        return a != b
    if jop == _JGT:
        return a > b
    if jop == _JGE:
        return a >= b
    if jop == _JLT:
        return a < b
    if jop == _JLE:
        return a <= b
    if jop == _JSET:
        return bool(a & b)
    sa, sb = _signed(a, bits), _signed(b, bits)
    if jop == _JSGT:
        return sa > sb
    if jop == _JSGE:
        return sa >= sb
    if jop == _JSLT:
        return sa < sb
    if jop == _JSLE:
        return sa <= sb
    raise cannot(f"the jump operation {jop:#04x}")
