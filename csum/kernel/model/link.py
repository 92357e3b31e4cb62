"""A program's code as the model runs it: the instructions of its section and of ``.text`` decoded, with the
relocations libbpf would apply (tools/lib/bpf/libbpf.c ``bpf_program__record_reloc``, ``bpf_object__reloc_code``)
resolved to the model's addresses: a map's reference, a global's address in its internal map, a subprogram's
first instruction. What cannot be resolved (an extern, a callback's address) stays in the code as an error that
stops a run only if the run reaches it.
"""

from __future__ import annotations

import struct
from collections.abc import Callable

from .ctx import cannot
from .elf import R_BPF_64_32, R_BPF_64_64, Elf, Order
from .vm import Insn, PSEUDO_CALL

__all__ = ["DATA_PREFIXES", "MAP_SECTIONS", "check_core", "decode", "link"]

M32 = 0xFFFFFFFF
#: The section of map definitions: BTF-defined ``.maps`` (libbpf >= 1.0 refuses to open the legacy ``maps`` section,
#: so no object the model gets has one).
MAP_SECTIONS = (".maps",)
#: Sections of globals (libbpf's internal maps).
DATA_PREFIXES = (".data", ".rodata", ".bss")


def is_data(name: str) -> bool:
    return any(name == p or name.startswith(p + ".") for p in DATA_PREFIXES)


def decode(raw: bytes, order: Order) -> list[Insn]:
    """``struct bpf_insn`` records (``order``: the object's byte order, which also orders the register nibbles) as
    the VM's tuples; a LD_IMM64's imm is its whole 64-bit value."""
    e = "<" if order == "little" else ">"
    out: list[Insn] = []
    for code, regs, off, imm in struct.iter_unpack(e + "BBhi", raw[:len(raw) // 8 * 8]):
        dst, src = (regs & 15, regs >> 4) if order == "little" else (regs >> 4, regs & 15)
        out.append((code, dst, src, off, imm))
    for pc, (code, dst, src, off, imm) in enumerate(out[:-1]):
        if code == 0x18:
            out[pc] = (code, dst, src, "", (imm & M32) | (out[pc + 1][4] & M32) << 32)
    return out


def link(elf: Elf, section: int, map_ref: Callable[[str], int | None],
         data_address: Callable[[str, int], int | None]) -> tuple[dict[int, list[Insn]], dict[tuple[int, int],
                                                                                           tuple[int, int]]]:
    """(code, calls) of the program in ``section`` and every section its calls reach; ``map_ref(name)``: the
    address of map ``name``'s reference; ``data_address(section, offset)``: a global's address (None: unknown)."""
    code: dict[int, list[Insn]] = {}
    calls: dict[tuple[int, int], tuple[int, int]] = {}
    todo = [section]
    while todo:
        sec = todo.pop()
        if sec in code:
            continue
        insns = code[sec] = decode(elf.data[sec], elf.order)
        relocs = elf.relocs.get(sec, {})
        for pc, (op, dst, src, off, imm) in enumerate(insns):
            rel = relocs.get(pc * 8)
            if op == 0x18 and pc + 1 < len(insns):
                if rel is not None and rel.type == R_BPF_64_64:
                    value, why = _imm64(elf, rel.symbol, imm, map_ref, data_address)
                    insns[pc] = (op, dst, src, why, value)
                elif src:
                    insns[pc] = (op, dst, src, f"a 64-bit load of kind {src} in the object", None)
            elif op & 7 == 5 and op & 0xF0 == 0x80 and src == PSEUDO_CALL:
                if rel is not None and rel.type == R_BPF_64_32:
                    target = rel.symbol.shndx
                    calls[(sec, pc)] = (target, rel.symbol.value // 8 + imm + 1)
                    todo.append(target)
                else:
                    calls[(sec, pc)] = (sec, pc + imm + 1)
    return code, calls


def _imm64(elf: Elf, sym: object, imm: int, map_ref: Callable[[str], int | None],
           data_address: Callable[[str, int], int | None]) -> tuple[int | None, str]:
    from .elf import Symbol

    assert isinstance(sym, Symbol)
    name = elf.names[sym.shndx] if 0 < sym.shndx < len(elf.names) else ""
    if not sym.shndx:
        return None, f"the extern {sym.name} (kconfig and kernel symbols are not modelled)"
    if name in MAP_SECTIONS:
        address = map_ref(sym.name)
        return (address, "") if address is not None else (None, f"map {sym.name}, which libbpf does not list")
    if is_data(name):
        address = data_address(name, (imm & M32) + sym.value)
        return (address, "") if address is not None else (None, f"the globals of {name}, which libbpf does not list")
    return None, f"the address of {sym.name or name} (callbacks are not modelled)"


def check_core(elf: Elf) -> None:
    """Raise "cannot model" when the object has CO-RE relocations (``.BTF.ext``'s core_relo section: field offsets
    libbpf would rewrite for the target kernel)."""
    at = elf.section(".BTF.ext")
    if at is None:
        return
    raw = elf.data[at]
    e = "<" if elf.order == "little" else ">"
    if len(raw) < 8:
        return
    hdr_len = struct.unpack_from(e + "I", raw, 4)[0]
    if hdr_len >= 32 and len(raw) >= 32 and struct.unpack_from(e + "I", raw, 28)[0]:
        raise cannot("CO-RE relocations (field offsets libbpf rewrites for each kernel's BTF)")
