"""``csum compare``: one input through every profile (csum.crossarch computes, this module lays out the tables).

csum.crossarch's functions return rows of data (also ``--json``); the tables here add the legend explaining each
column.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING

from .. import schemas
from ..arch import FUNCTIONS
from ..core.partial import internet_checksum
from .args import UsageError, align, hex_bytes, integer
from .sample import SAMPLE_PACKET

if TYPE_CHECKING:  # csum.crossarch (and its profiles) only when compare runs: the other commands start without it
    from ..arch.crossarch import FunctionRow, Row


#: The command's name on the command line.
NAME = "compare"


def add(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """The ``compare`` subcommand's arguments."""
    cmp_ = sub.add_parser(NAME, help="csum_partial and bpf_csum_diff of one input on every architecture")
    cmp_.add_argument("hex", nargs="?", help="input bytes as hex (default: the embedded sample packet)")
    cmp_.add_argument("--file", help="read the input bytes from a file")
    cmp_.add_argument("--seed", type=integer, default=0, help="32-bit seed (default 0)")
    cmp_.add_argument("--profiles", help="comma-separated profile names (default: all)")
    cmp_.add_argument("--align", type=align, default=0, help="the input's address mod 8 (0..7, default 0)")
    cmp_.add_argument("--function", default="csum_partial", choices=("csum_partial", *FUNCTIONS),
                      help="the primitive to compare (default csum_partial: the csum_partial/bpf_csum_diff table); "
                      "csum_tcpudp_* and csum_ipv6_magic take --saddr/--daddr/--len/--proto and --seed as the sum "
                      "(IPv6 defaults 2001:db8::1 -> ::2), ip_fast_csum the "
                      "input as an IPv4 header, csum_fold folds --seed")
    cmp_.add_argument("--saddr", metavar="HEX", help="source address, 4 (or 16) bytes (default: the sample's)")
    cmp_.add_argument("--daddr", metavar="HEX", help="destination address, 4 (or 16) bytes (default: the sample's)")
    cmp_.add_argument("--len", type=integer, help="pseudo-header length (default: the sample's TCP length)")
    cmp_.add_argument("--proto", type=integer, help="pseudo-header protocol (default: the sample's, 6)")
    cmp_.set_defaults(func=run)
    return cmp_


def run(args: argparse.Namespace) -> int:
    """``csum compare``: csum_partial and bpf_csum_diff (or ``--function``) of one input on every profile."""
    if args.file is not None and args.hex is not None:
        raise UsageError("give HEX or --file, not both")
    if args.file is not None:
        try:
            data = Path(args.file).read_bytes()
        except OSError as exc:
            raise UsageError(f"cannot read {args.file}: {exc.strerror}") from None
        label = args.file
    elif args.hex is not None:
        data, label = hex_bytes(args.hex), "hex input"
    else:
        data, label = SAMPLE_PACKET, "embedded sample (IPv4/TCP SYN)"
    names = [n.strip() for n in args.profiles.split(",") if n.strip()] if args.profiles else None
    if args.function != "csum_partial":
        return _function(args, data, label, names)
    from ..arch.crossarch import compare

    rows = compare(data, args.seed, names, align=args.align)
    if args.json:
        print(json.dumps(schemas.document(NAME, {"input": data.hex(), "seed": args.seed, "align": args.align,
                                                 "rows": [r.as_dict() for r in rows]}), indent=2))
    else:
        print(partial_table(rows, label, data, args.seed, args.align))
    return 0


def _function(args: argparse.Namespace, data: bytes, label: str, names: list[str] | None) -> int:
    """``csum compare --function NAME``: one primitive on every profile."""
    fn = args.function
    ihl = SAMPLE_PACKET[0] & 0xF
    if fn == "ip_fast_csum" and args.hex is None and args.file is None:
        data, label = SAMPLE_PACKET[:4 * ihl], "the embedded sample's IPv4 header"
    if fn == "ip_fast_csum" and (len(data) < 20 or len(data) % 4 or len(data) > 60):
        raise UsageError(f"--function ip_fast_csum needs an IPv4 header of 20..60 bytes (a multiple of 4), "
                          f"got {len(data)}")
    from ..layers.table import ADDR_SIZES

    size, v6 = (ADDR_SIZES[6], True) if fn == "csum_ipv6_magic" else (ADDR_SIZES[4], False)
    saddr = hex_bytes(args.saddr) if args.saddr else bytes.fromhex("20010db8" + "00" * 11 + "01") if v6 else SAMPLE_PACKET[12:16]
    daddr = hex_bytes(args.daddr) if args.daddr else bytes.fromhex("20010db8" + "00" * 11 + "02") if v6 else SAMPLE_PACKET[16:20]
    for name, addr in (("--saddr", saddr), ("--daddr", daddr)):
        if len(addr) != size:
            raise UsageError(f"{name} must be {size} bytes (hex, network order) for {fn}, got {len(addr)}")
    length = args.len if args.len is not None else len(SAMPLE_PACKET) - 4 * ihl
    proto = args.proto if args.proto is not None else SAMPLE_PACKET[9]
    if not 0 <= length <= 0xFFFFFFFF or not 0 <= proto <= 0xFF:
        raise UsageError(f"--len must be a u32 and --proto a u8, got {length} and {proto}")
    from ..arch.crossarch import compare_function

    rows = compare_function(fn, data=data, seed=args.seed, saddr=saddr, daddr=daddr, length=length, proto=proto,
                            profiles=names)
    if fn.startswith(("csum_tcpudp", "csum_ipv6")):
        what = f"saddr {saddr.hex()} daddr {daddr.hex()} len {length} proto {proto} sum {args.seed:#010x}"
    elif fn == "ip_fast_csum":
        what = f"{label}, {len(data)} bytes ({len(data) // 4} words)"
    else:
        what = f"sum {args.seed:#010x}"
    if args.json:
        print(json.dumps(schemas.document(NAME, {"function": fn, "input": what, "rows": [r.as_dict() for r in rows]}),
                         indent=2))
        return 0
    print(function_table(rows, fn, what))
    return 0


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
