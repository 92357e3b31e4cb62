"""The ``csum`` command line (also ``python -m csum``).

Exit codes: 0 ok, 1 some check failed, 2 usage or input error. Expected errors
print one line ``csum: <what> failed for <input>: <reason>`` on stderr, never
a traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Sequence

from . import __version__
from ._engine import ENGINE
from .compare import Row, compare
from .errors import CsumError
from .partial import internet_checksum
from .sample import SAMPLE_PACKET


class _UsageError(Exception):
    pass


def _int(text: str) -> int:
    try:
        return int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r} (decimal or 0x-prefixed hex)") from None


def _hex(text: str) -> bytes:
    cleaned = "".join(text.split()).replace(":", "")
    if cleaned.startswith(("0x", "0X")):
        cleaned = cleaned[2:]
    try:
        return bytes.fromhex(cleaned)
    except ValueError:
        raise _UsageError(f"not a hex string: {text[:40]!r}") from None


def _mark(ok: bool) -> str:
    return "same" if ok else "DIFF"


def _compare_text(rows: list[Row], label: str, data: bytes, seed: int) -> str:
    width = max([len("profile"), *(len(r.profile) for r in rows)])
    lines = [
        f"input: {label}, {len(data)} bytes, seed {seed:#010x}; internet checksum (wire) {internet_checksum(data):#06x}",
        "bpf_csum_diff pushes the input (from = empty, to = input).",
        "",
        f"{'profile':<{width}} {'endian':<6}  {'csum_partial':<10} {'bits':<4} {'field':<5}  "
        f"{'legacy diff':<12} {'bits':<4}  {'homogenized':<11} {'field':<5}",
    ]
    for r in rows:
        legacy = f"{r.legacy_diff:#010x}" if r.legacy_diff >= 0 else f"{r.legacy_diff} EINVAL"
        lines.append(
            f"{r.profile:<{width}} {r.endian:<6}  {r.csum_partial:#010x}   {_mark(r.same_bits_as_reference):<4} "
            f"{_mark(r.same_wire_as_generic):<5}  {legacy:<12} {_mark(r.legacy_same_as_reference):<4}  "
            f"{r.homogenized_diff:#06x}      {_mark(r.homogenized_same_wire)}"
        )
    lines += [
        "",
        "bits: same u32 as the generic code of that byte order (generic / generic-be).",
        "field: same two checksum-field bytes as generic little-endian, once folded to 16 bits.",
    ]
    return "\n".join(lines)


def _cmd_compare(args: argparse.Namespace) -> int:
    if args.file is not None and args.hex is not None:
        raise _UsageError("give HEX or --file, not both")
    if args.file is not None:
        try:
            data = Path(args.file).read_bytes()
        except OSError as exc:
            raise _UsageError(f"cannot read {args.file}: {exc.strerror}") from None
        label = args.file
    elif args.hex is not None:
        data, label = _hex(args.hex), "hex input"
    else:
        data, label = SAMPLE_PACKET, "embedded sample (IPv4/TCP SYN)"
    names = [n.strip() for n in args.profiles.split(",") if n.strip()] if args.profiles else None
    rows = compare(data, args.seed, names)
    if args.json:
        print(json.dumps({"input": data.hex(), "seed": args.seed, "rows": [r.as_dict() for r in rows]}, indent=2))
    else:
        print(_compare_text(rows, label, data, args.seed))
    return 0


def _cmd_kernel_check(args: argparse.Namespace) -> int:
    from . import kernel
    from .kernel_check import kernel_check

    if not kernel.available():
        raise _UsageError(f"the running kernel's helpers are not reachable: {kernel.why_unavailable()}")
    if args.n < 1:
        raise _UsageError(f"--n must be at least 1, got {args.n}")
    report = kernel_check(args.n, args.seed, progress=sys.stderr)
    print(report.to_json() if args.json else report.format_text())
    return 0 if report.ok else 1


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="csum", description="The Internet checksum as each Linux architecture computes it.")
    parser.add_argument("--version", action="version", version=f"csum {__version__} (engine: {ENGINE})")
    sub = parser.add_subparsers(dest="command")
    cmp_ = sub.add_parser("compare", help="csum_partial and bpf_csum_diff of one input on every architecture")
    cmp_.add_argument("hex", nargs="?", help="input bytes as hex (default: the embedded sample packet)")
    cmp_.add_argument("--file", help="read the input bytes from a file")
    cmp_.add_argument("--seed", type=_int, default=0, help="32-bit seed (default 0)")
    cmp_.add_argument("--profiles", help="comma-separated profile names (default: all)")
    cmp_.add_argument("--json", action="store_true", help="machine-readable output")
    cmp_.set_defaults(func=_cmd_compare)
    kc = sub.add_parser("kernel-check", help="compare the emulation with the running kernel's bpf_csum_diff")
    kc.add_argument("--n", type=_int, default=2000, help="number of cases (default 2000)")
    kc.add_argument("--seed", type=_int, default=None, help="random seed, to reproduce a run")
    kc.add_argument("--json", action="store_true", help="machine-readable output")
    kc.set_defaults(func=_cmd_kernel_check)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit code."""
    parser = _parser()
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv) or ["compare"])
    try:
        return int(args.func(args))
    except BrokenPipeError:  # output piped into `head` and the like: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except (_UsageError, CsumError) as exc:
        print(f"csum: {args.command} failed for {getattr(args, 'file', None) or 'input'}: {exc}", file=sys.stderr)
        return 2
