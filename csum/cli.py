"""The ``csum`` command line (also ``python -m csum``).

Exit codes: 0 ok, 1 some check failed, 2 usage or input error. Expected errors
print one line ``csum: <what> failed for <input>: <reason>`` on stderr, never
a traceback.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Sequence, TextIO

from . import __version__, bpf
from ._engine import ENGINE
from .compare import Row, compare
from .errors import CsumError
from .profile import profile
from .partial import internet_checksum
from .sample import SAMPLE_PACKET

if TYPE_CHECKING:  # numpy-backed modules are imported when verify/fix run, keeping other commands' start-up light
    from . import pcap
    from ._cli_verify import Report


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


def _cmd_diff(args: argparse.Namespace) -> int:
    frm, to = _hex(args.frm), _hex(args.to)
    prof = profile(args.profile)
    homog, legacy = prof.bpf_csum_diff(frm, to, args.seed), prof.bpf_csum_diff_legacy(frm, to, args.seed)
    out: dict[str, object] = {"profile": prof.name, "endian": prof.endian, "from": frm.hex(), "to": to.hex(),
                              "seed": args.seed, "homogenized": homog, "legacy": legacy}
    rows: list[dict[str, object]] = []
    if args.sum is not None:
        field = _hex(args.sum)
        if len(field) != 2:
            raise _UsageError(f"--sum must be 2 bytes (the checksum field as in the packet), got {len(field)}")
        if prof.endian != "little":
            raise _UsageError(f"--sum: the l3/l4 replace helpers are emulated for little-endian CPUs, "
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
        print(json.dumps(out, indent=2))
        return 0
    legacy_text = f"{legacy:#010x}" if legacy >= 0 else f"{legacy} (EINVAL: sizes must be multiples of 4, 512 bytes at most)"
    lines = [
        f"bpf_csum_diff on {prof.name} ({prof.endian}-endian): from {frm.hex() or '(empty)'} ({len(frm)} bytes) "
        f"to {to.hex() or '(empty)'} ({len(to)} bytes), seed {args.seed:#010x}",
        f"  homogenized (Linux >= 6.13): {homog:#06x}",
        f"  legacy      (Linux <= 6.12): {legacy_text}",
    ]
    if rows:
        lines += ["", f"checksum field {field.hex()} after bpf_l3/l4_csum_replace(skb, off, 0, diff, flags) "
                  "(field bytes as in the packet):",
                  f"  {'helper':<6}  {'flags':<37} {'skb ip_summed':<13}  {'homogenized':<11}  legacy"]
        lines += [f"  {r['helper']:<6}  {r['flag_names']:<37} {r['ip_summed']:<13}  {r['homogenized']:<11}  "
                  f"{r['legacy'] or '-'}" for r in rows]
    print("\n".join(lines))
    return 0


def _progress(size: int, stream: TextIO) -> pcap.Progress | None:
    """A progress line on ``stream`` for files of 16 MiB and more, only when it is a terminal."""
    if size < 16 << 20 or not stream.isatty():
        return None

    def show(done: int, total: int) -> None:
        stream.write(f"\rcsum: {100 * done // max(total, 1):3d}% ")
        stream.flush()

    return show


def _load(name: str) -> tuple[pcap.Capture, Report]:
    from . import _cli_verify, pcap

    path = Path(name)
    try:
        size = path.stat().st_size
        bar = _progress(size, sys.stderr)
        cap = pcap.read(path, bar)
        report = _cli_verify.check(cap, bar)
    except OSError as exc:
        raise _UsageError(f"cannot read {name}: {exc.strerror}") from None
    if bar is not None:
        sys.stderr.write("\r" + " " * 12 + "\r")
    return cap, report


def _malformed(args: argparse.Namespace, report: Report) -> int:
    bad = report.malformed
    if not bad:
        return 0
    index, why = bad[0]
    print(f"csum: {args.command} failed for {args.file}: {len(bad)} malformed packet(s), first #{index}: {why}",
          file=sys.stderr)
    return 2


def _check_show(args: argparse.Namespace) -> None:
    if args.show < 0:
        raise _UsageError(f"--show must be 0 or more, got {args.show}")


def _cmd_verify(args: argparse.Namespace) -> int:
    from . import _cli_verify

    _check_show(args)
    if args.format == "jsonl":
        return _verify_jsonl(args)
    cap, report = _load(args.file)
    if args.json or args.format == "json":
        print(json.dumps(_cli_verify.as_json(report, cap, args.file, args.show), indent=2))
    else:
        print(_cli_verify.as_text(report, cap, args.file, args.show))
    return _malformed(args, report) or _verdict(args, report)


def _verdict(args: argparse.Namespace, report: Report) -> int:
    """1 when a checksum is bad (with --strict: or holds transmit offload's pseudo-header sum), else 0."""
    return 1 if report.bad or (args.strict and report.offload) else 0


def _verify_jsonl(args: argparse.Namespace) -> int:
    """``verify --format jsonl``: one JSON object per checksum field, in packet order, then the usual exit code."""
    from . import _cli_verify, pcap

    write = sys.stdout.write

    def sink(index: int, results: list) -> None:
        for r in results:
            write(json.dumps(_cli_verify.jsonl_row(index, r)) + "\n")

    try:
        report = _cli_verify.check(pcap.read(Path(args.file)), sink=sink)
    except OSError as exc:
        raise _UsageError(f"cannot read {args.file}: {exc.strerror}") from None
    return _malformed(args, report) or _verdict(args, report)


def _cmd_fix(args: argparse.Namespace) -> int:
    from . import _cli_verify, pcap

    _check_show(args)
    src, dst = Path(args.file), Path(args.out)
    if src.resolve() == dst.resolve() or (dst.exists() and src.exists() and os.path.samefile(src, dst)):
        raise _UsageError("OUT must differ from IN: the input is never modified")
    cap, report = _load(args.file)
    try:
        pcap.write_atomic(dst, pcap.patched(cap, report.patches))
    except OSError as exc:
        raise _UsageError(f"cannot write {args.out}: {exc.strerror}") from None
    fixed = sorted({i for i, _ in report.bad})
    if args.json:
        doc = _cli_verify.as_json(report, cap, args.file, args.show)
        doc.update(out=args.out, fixed_checksums=len(report.patches), fixed_packets=len(fixed))
        print(json.dumps(doc, indent=2))
    else:
        print(_cli_verify.as_text(report, cap, args.file, args.show))
        print(f"\nwrote {args.out}: {len(report.patches)} checksums corrected in {len(fixed)} packets; "
              f"every other byte copied unchanged (cut and malformed packets included)")
    return _malformed(args, report)


def _bench_root() -> Path | None:
    """The directory from which ``python -m bench`` runs: where the bench package is importable from."""
    spec = importlib.util.find_spec("bench")
    if spec is not None and spec.origin and (Path(spec.origin).parent / "__main__.py").exists():
        return Path(spec.origin).parent.parent
    checkout = Path(__file__).resolve().parent.parent
    return checkout if (checkout / "bench" / "__main__.py").exists() else None


def _cmd_bench(args: argparse.Namespace) -> int:
    root = _bench_root()
    if root is None:
        raise _UsageError("the bench package is not here: run from a source checkout of csum (bench/ is not installed)")
    command = [sys.executable, "-m", "bench"] + (["--quick"] if args.quick else [])
    return subprocess.run(command, cwd=root, check=False).returncode


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
    diff = sub.add_parser("diff", help="bpf_csum_diff of two buffers and what the l3/l4 replace helpers then write")
    diff.add_argument("--from", dest="frm", required=True, metavar="HEX", help="bytes taken out (hex; '' for none)")
    diff.add_argument("--to", required=True, metavar="HEX", help="bytes put in (hex; '' for none)")
    diff.add_argument("--seed", type=_int, default=0, help="32-bit seed (default 0)")
    diff.add_argument("--profile", default="generic", help="architecture profile (default generic)")
    diff.add_argument("--sum", metavar="HEX16", help="current checksum field, 2 bytes as in the packet")
    diff.add_argument("--json", action="store_true", help="machine-readable output")
    diff.set_defaults(func=_cmd_diff)
    ver = sub.add_parser("verify", help="check every Internet checksum (IPv4, TCP, UDP, ICMP, tunnels ...) in a pcap "
                         "or pcapng file")
    ver.add_argument("file", metavar="FILE")
    ver.add_argument("--format", choices=("text", "json", "jsonl"), default="text",
                     help="text (default), json (the summary, like --json) or jsonl (one object per checksum field)")
    ver.add_argument("--strict", action="store_true",
                     help="count transmit-offload checksums (the pseudo-header sum the NIC completes) as bad")
    fix = sub.add_parser("fix", help="copy a capture with every wrong checksum corrected")
    fix.add_argument("file", metavar="IN")
    fix.add_argument("out", metavar="OUT")
    for cmd, func in ((ver, _cmd_verify), (fix, _cmd_fix)):
        cmd.add_argument("--show", type=_int, default=10, help="list at most this many bad packets (default 10)")
        cmd.add_argument("--json", action="store_true", help="machine-readable output")
        cmd.set_defaults(func=func)
    bench = sub.add_parser("bench", help="run the benchmarks (python -m bench, from a source checkout)")
    bench.add_argument("--quick", action="store_true", help="the short run CI uses")
    bench.set_defaults(func=_cmd_bench)
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
