"""The text reports of ``csum compare``: csum/arch/crossarch.py's rows as tables (the CLI prints them).

csum.crossarch computes (its functions return rows of data, also ``--json``); this module only
lays the rows out for a terminal, with the legend explaining each column.
"""

from __future__ import annotations

from ..arch.crossarch import FunctionRow, Row
from ..core.partial import internet_checksum


def _mark(ok: bool) -> str:
    """A comparison's cell: same or DIFF."""
    return "same" if ok else "DIFF"


def partial_table(rows: list[Row], label: str, data: bytes, seed: int, align: int) -> str:
    """The csum_partial / bpf_csum_diff table of :func:`csum.crossarch.compare`'s rows for ``data``."""
    width = max([len("profile"), *(len(r.profile) for r in rows)])
    lines = [
        f"input: {label}, {len(data)} bytes at address {align} mod 8, seed {seed:#010x}; "
        f"internet checksum (wire) {internet_checksum(data):#06x}",
        "bpf_csum_diff pushes the input (from = empty, to = input).",
        "",
        f"{'profile':<{width}} {'endian':<6}  {'csum_partial':<10} {'bits':<4} {'field':<5}  "
        f"{'legacy diff':<12} {'bits':<4}  {'homogenized':<11} {'field':<5} {'addr':<4}",
    ]
    for r in rows:
        legacy = f"{r.legacy_diff:#010x}" if r.legacy_diff >= 0 else f"{r.legacy_diff} EINVAL"
        lines.append(
            f"{r.profile:<{width}} {r.endian:<6}  {r.csum_partial:#010x}   {_mark(r.same_bits_as_reference):<4} "
            f"{_mark(r.same_wire_as_generic):<5}  {legacy:<12} {_mark(r.legacy_same_as_reference):<4}  "
            f"{r.homogenized_diff:#06x}      {_mark(r.homogenized_same_wire):<5} "
            f"{'DEP' if r.homogenized_align_dependent else '-'}"
        )
    lines += [
        "",
        "bits: same u32 as the generic code of that byte order (generic / generic-be).",
        "field: same two checksum-field bytes as generic little-endian, once folded to 16 bits.",
        "addr: DEP if the homogenized helper gives another result with the input at another address mod 8,",
        "      pushed (to) or pulled (from); --align sets the address used above.",
    ]
    return "\n".join(lines)


def function_table(rows: list[FunctionRow], fn: str, what: str) -> str:
    """The table of :func:`csum.crossarch.compare_function`'s rows for primitive ``fn`` on input ``what``."""
    width = max([len("profile"), *(len(r.profile) for r in rows)])
    digits = 8 if fn == "csum_tcpudp_nofold" else 4
    lines = [f"{fn}: {what}", "", f"{'profile':<{width}} {'endian':<6}  {'value':<{digits + 2}} {'bits':<4} field"]
    lines += [f"{r.profile:<{width}} {r.endian:<6}  {r.value:#0{digits + 2}x} {_mark(r.same_bits_as_reference):<4} "
              f"{_mark(r.same_field_as_generic)}" for r in rows]
    lines += ["", "bits: same value as the generic code of that byte order (generic / generic-be).",
              "field: same two checksum-field bytes as generic little-endian"
              + (" once folded (csum_from32to16)." if fn == "csum_tcpudp_nofold" else ".")]
    return "\n".join(lines)
