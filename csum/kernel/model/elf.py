"""A reader of the BPF ELF objects clang writes (``clang -target bpf``/``bpfel``/``bpfeb``): sections, symbols and
the ``.rel`` relocations a loader applies, in either byte order.

What :mod:`csum.kernel.model` needs of an object, as libbpf reads it (tools/lib/bpf/libbpf.c
``bpf_object__elf_collect``, ``bpf_program__record_reloc``): a program's instructions (its function symbol in its
section), the ``.text`` subprograms it calls, and for each instruction a relocation names: a map (a symbol of
``.maps``), a global (``.data``/``.rodata``/``.bss`` and their ``.name`` variants:
the section and the offset in it) or a subprogram (``.text``). ELF64 only, as clang writes BPF objects
(include/uapi/linux/elf.h; EM_BPF 247).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Literal

from ...errors import Code, CsumValueError

__all__ = ["Elf", "Order", "Reloc", "Symbol", "read"]

#: A byte order as int.from_bytes takes it.
Order = Literal["little", "big"]

#: include/uapi/linux/elf-em.h.
EM_BPF = 247
_SHT_SYMTAB, _SHT_REL = 2, 9
_STT_FUNC = 2
#: The relocation types of a BPF object (include/uapi/linux/... llvm's BPF.def): 64-bit (LD_IMM64) and 32-bit
#: (a call's immediate), and the ones a loader ignores (R_BPF_64_ABS64/ABS32, in DWARF and BTF sections).
R_BPF_64_64, R_BPF_64_32 = 1, 10


@dataclass(frozen=True)
class Symbol:
    """One ``Elf64_Sym``: its name, section index, value (offset in the section), size and ``STT_*`` type."""

    name: str
    shndx: int
    value: int
    size: int
    type: int


@dataclass(frozen=True)
class Reloc:
    """A relocation of an instruction: its byte offset in the section, its type and the symbol it names."""

    offset: int
    type: int
    symbol: Symbol


@dataclass(frozen=True)
class Elf:
    """A BPF ELF object: byte order, section names and bytes, symbols, relocations by target section."""

    path: str
    order: Order
    names: tuple[str, ...]
    data: tuple[bytes, ...]
    symbols: tuple[Symbol, ...]
    relocs: dict[int, dict[int, Reloc]]

    def section(self, name: str) -> int | None:
        """The index of section ``name``, None when the object has none."""
        return self.names.index(name) if name in self.names else None

    def function(self, name: str) -> Symbol | None:
        """The function symbol ``name`` (a program, or a subprogram of ``.text``)."""
        return next((s for s in self.symbols if s.name == name and s.type == _STT_FUNC and s.shndx), None)


def _bad(path: str, why: str) -> CsumValueError:
    return CsumValueError(f"{path}: not a BPF ELF object ({why})", code=Code.BAD_VALUE)


def read(path: str, data: bytes) -> Elf:
    """Parse ``data``, the bytes of the object ``path``; raises CsumValueError naming it when it is not a 64-bit BPF
    ELF object or is cut short."""
    if data[:4] != b"\x7fELF":
        raise _bad(path, "no ELF magic")
    if data[4] != 2:
        raise _bad(path, "not ELF64")
    if data[5] not in (1, 2):
        raise _bad(path, f"unknown ELF byte order {data[5]}")
    order: Order = "little" if data[5] == 1 else "big"
    e = "<" if order == "little" else ">"
    try:
        machine = struct.unpack_from(e + "H", data, 18)[0]
        if machine != EM_BPF:
            raise _bad(path, f"e_machine {machine}, not EM_BPF {EM_BPF}")
        shoff, = struct.unpack_from(e + "Q", data, 40)
        shentsize, shnum, shstrndx = struct.unpack_from(e + "HHH", data, 58)
        heads = [struct.unpack_from(e + "IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
        blobs = [b"" if h[1] == 8 else data[h[4]:h[4] + h[5]] for h in heads]  # SHT_NOBITS (.bss) holds no bytes
        if any(h[1] != 8 and h[4] + h[5] > len(data) for h in heads):
            raise _bad(path, "a section runs past the end of the file")
        strtab = blobs[shstrndx]
        names = tuple(_str(strtab, h[0]) for h in heads)
        symbols: tuple[Symbol, ...] = ()
        for i, h in enumerate(heads):
            if h[1] == _SHT_SYMTAB:
                strs = blobs[h[6]]
                symbols = tuple(
                    Symbol(_str(strs, n), shndx, value, size, info & 15)
                    for n, info, _, shndx, value, size in struct.iter_unpack(e + "IBBHQQ", blobs[i]))
        relocs: dict[int, dict[int, Reloc]] = {}
        for i, h in enumerate(heads):
            if h[1] == _SHT_REL:
                table = relocs.setdefault(h[7], {})
                for offset, info in struct.iter_unpack(e + "QQ", blobs[i]):
                    table[offset] = Reloc(offset, info & 0xFFFFFFFF, symbols[info >> 32])
    except (struct.error, IndexError):
        raise _bad(path, "cut short") from None
    return Elf(path, order, names, tuple(blobs), symbols, relocs)


def _str(table: bytes, at: int) -> str:
    end = table.find(b"\0", at)
    return table[at:end if end >= 0 else len(table)].decode(errors="replace")
