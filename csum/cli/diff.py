"""``csum diff``: bpf_csum_diff of two buffers on one profile, and what the l3/l4 replace helpers then write."""

from __future__ import annotations

import argparse
import json

from .. import bpf, schemas
from .args import UsageError, align, hex_bytes, integer


#: The command's name on the command line.
NAME = "diff"


def add(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """The ``diff`` subcommand's arguments."""
    diff = sub.add_parser(NAME, help="bpf_csum_diff of two buffers and what the l3/l4 replace helpers then write")
    diff.add_argument("--from", dest="frm", required=True, metavar="HEX", help="bytes taken out (hex; '' for none)")
    diff.add_argument("--to", required=True, metavar="HEX", help="bytes put in (hex; '' for none)")
    diff.add_argument("--seed", type=integer, default=0, help="32-bit seed (default 0)")
    diff.add_argument("--profile", default="generic", help="architecture profile (default generic)")
    diff.add_argument("--from-align", type=align, default=0, metavar="N", help="address of from mod 8 (default 0)")
    diff.add_argument("--to-align", type=align, default=0, metavar="N", help="address of to mod 8 (default 0)")
    diff.add_argument("--sum", metavar="HEX16", help="current checksum field, 2 bytes as in the packet")
    diff.set_defaults(func=run)
    return diff


_L4_FLAGS = (
    (0, "0"),
    (bpf.BPF_F_PSEUDO_HDR, "BPF_F_PSEUDO_HDR"),
    (bpf.BPF_F_MARK_MANGLED_0, "BPF_F_MARK_MANGLED_0"),
    (bpf.BPF_F_PSEUDO_HDR | bpf.BPF_F_MARK_MANGLED_0, "BPF_F_PSEUDO_HDR|BPF_F_MARK_MANGLED_0"),
)


_SKB = ((bpf.CHECKSUM_NONE, "not PARTIAL"), (bpf.CHECKSUM_PARTIAL, "PARTIAL"))


def _replaced(helper: str, field: bytes, diff: int, flags: int, ip_summed: int) -> str | None:
    """The field bytes bpf_<helper>_csum_replace(skb, off, 0, diff, flags) leaves (csum.bpf), as hex."""
    if diff < 0:
        return None
    pkt = bytearray(field)
    if helper == "l3":
        code = bpf.bpf_l3_csum_replace(pkt, 0, 0, diff, flags)
    else:
        code = bpf.bpf_l4_csum_replace(pkt, 0, 0, diff, flags, ip_summed=ip_summed)
    return pkt.hex() if code == 0 else f"error {code}"


def run(args: argparse.Namespace) -> int:
    """``csum diff``."""
    from ..arch.crossarch import align_dependence  # with the profiles: only where diff runs
    from ..arch.profiles import profile

    frm, to = hex_bytes(args.frm), hex_bytes(args.to)
    prof = profile(args.profile)
    homog = prof.bpf_csum_diff(frm, to, args.seed, frm_align=args.from_align, to_align=args.to_align)
    legacy = prof.bpf_csum_diff_legacy(frm, to, args.seed)
    by_value = align_dependence(prof, frm, to, args.seed)
    out: dict[str, object] = {"profile": prof.name, "endian": prof.endian, "from": frm.hex(), "to": to.hex(),
                              "seed": args.seed, "from_align": args.from_align, "to_align": args.to_align,
                              "homogenized": homog, "legacy": legacy,
                              "homogenized_by_align": {f"{v:#06x}": pairs for v, pairs in sorted(by_value.items())}}
    rows: list[dict[str, object]] = []
    if args.sum is not None:
        field = hex_bytes(args.sum)
        if len(field) != 2:
            raise UsageError(f"--sum must be 2 bytes (the checksum field as in the packet), got {len(field)}")
        if prof.endian != "little":
            raise UsageError(f"--sum: the l3/l4 replace helpers are emulated for little-endian CPUs, "
                              f"{prof.name} is {prof.endian}-endian")
        out["sum"] = field.hex()
        cases = [("l3", 0, "0", bpf.CHECKSUM_NONE, "any")]
        cases += [("l4", f, name, skb, skb_name) for f, name in _L4_FLAGS for skb, skb_name in _SKB]
        for helper, flags, name, skb, skb_name in cases:
            rows.append({"helper": helper, "flags": flags, "flag_names": name, "ip_summed": skb_name,
                         "homogenized": _replaced(helper, field, homog, flags, skb),
                         "legacy": _replaced(helper, field, legacy, flags, skb)})
        out["replace"] = rows
    if args.json:
        print(json.dumps(schemas.document(NAME, out), indent=2))
        return 0
    legacy_text = f"{legacy:#010x}" if legacy >= 0 else f"{legacy} (EINVAL: sizes must be multiples of 4, 512 bytes at most)"
    lines = [
        f"bpf_csum_diff on {prof.name} ({prof.endian}-endian): from {frm.hex() or '(empty)'} ({len(frm)} bytes) "
        f"to {to.hex() or '(empty)'} ({len(to)} bytes), seed {args.seed:#010x}",
        f"  homogenized (Linux >= 6.13): {homog:#06x}  (from at address {args.from_align} mod 8, "
        f"to at {args.to_align} mod 8: read in place)",
        f"  legacy      (Linux <= 6.12): {legacy_text}  (copied to an aligned scratch buffer: address-independent)",
        "  homogenized at other addresses: " + ("the same at all 64 (from, to) alignments" if len(by_value) == 1
                                                else "DEPENDS on them: " + "; ".join(
            f"{v:#06x} at {len(pairs)} of 64, e.g. from {pairs[0][0]} to {pairs[0][1]}"
            for v, pairs in sorted(by_value.items()))),
    ]
    if rows:
        lines += ["", f"checksum field {field.hex()} after bpf_l3/l4_csum_replace(skb, off, 0, diff, flags) "
                  "(field bytes as in the packet):",
                  f"  {'helper':<6}  {'flags':<37} {'skb ip_summed':<13}  {'homogenized':<11}  legacy"]
        lines += [f"  {r['helper']:<6}  {r['flag_names']:<37} {r['ip_summed']:<13}  {r['homogenized']:<11}  "
                  f"{r['legacy'] or '-'}" for r in rows]
    print("\n".join(lines))
    return 0
