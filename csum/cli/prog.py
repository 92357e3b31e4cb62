"""``csum prog OBJ.o``: run a user's compiled tc/XDP program on packets with the running kernel and tell the truth
about what it did to every packet (csum.prog)."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

from .. import schemas
from .args import UsageError, check_show, integer
from .prog_states import state_lines

_MAP_ENTRY = re.compile(r"^([A-Za-z_][\w.]*):(.+)$")
_NAMED = re.compile(r"^([A-Za-z_][\w.]*)=(.*)$")


#: The command's name on the command line.
NAME = "prog"


def add(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """The ``prog`` subcommand's arguments."""
    prg = sub.add_parser(NAME, help="run a compiled tc/XDP program on packets (running kernel) and check its checksums")
    prg.add_argument("file", metavar="OBJ.o", help="BPF ELF object (clang -target bpf)")
    which = prg.add_mutually_exclusive_group()
    which.add_argument("--section", help="the program's ELF section (e.g. tc, xdp)")
    which.add_argument("--prog", help="the program's function name")
    prg.add_argument("--type", choices=("tc", "xdp"),
                     help="the program's type, for a section libbpf >= 1.0 does not know (SEC(\"xdp_prog\") ...)")
    prg.add_argument("--map", action="append", default=[], metavar="NAME=FILE.json|NAME:KEY=VALUE",
                     help="seed a map after load: entries from a JSON file, or one key/value (repeatable)")
    prg.add_argument("--global", dest="globals", action="append", default=[], metavar="NAME=VALUE",
                     help="set a .rodata/.data/.bss global before load (repeatable)")
    prg.add_argument("--ctx", action="append", default=[], metavar="FIELD=VALUE",
                     help="tc context field the test run takes: mark, priority, ingress_ifindex, ifindex (repeatable)")
    prg.add_argument("--pcap", metavar="IN", help="packets from a pcap/pcapng file (default: csum.testing.packets())")
    prg.add_argument("--out", metavar="OUT.pcap", help="write the output packets to a new pcap file")
    prg.add_argument("--count", type=integer, default=200, help="packets to generate without --pcap (default 200)")
    prg.add_argument("--seed", type=integer, default=0, help="seed of the generated packets (default 0)")
    prg.add_argument("--show", type=integer, default=10, help="list at most this many broken packets (default 10)")
    prg.add_argument("--csum-state", action="append", default=[], metavar="STATE",
                     choices=("none", "unnecessary", "complete", "partial", "all"),
                     help="tc: also judge the program on an skb arriving as CHECKSUM_NONE, UNNECESSARY, COMPLETE or "
                     "PARTIAL (none|unnecessary|complete|partial|all; repeatable): run by the kernel where its test "
                     "runs can make the state, modelled by csum where they cannot (the output says which)")
    prg.add_argument("--debian", nargs=2, action="append", default=[], metavar=("RELEASE", "ARCH"),
                     help="also run the program on Debian RELEASE's kernel for ARCH, booted under QEMU (as kernel-check "
                     "--debian: bookworm, trixie, unstable; amd64, arm64 ...); repeatable")
    prg.add_argument("--qemu", metavar="ARCH", help="with --kernel: also run the program on that kernel image of Debian "
                     "architecture ARCH (one's own build), booted under QEMU")
    prg.add_argument("--kernel", metavar="IMAGE", help="with --qemu: the kernel image to boot")
    prg.add_argument("--object-be", metavar="FILE",
                     help="with --debian/--qemu: the same program built with clang -target bpfeb, which big-endian "
                     "kernels (s390x) load; without it they do not run the program")
    prg.add_argument("--model", action="append", default=[], metavar="ARCH:RELEASE",
                     help="also run the program in csum's model of Debian architecture ARCH and kernel RELEASE (the "
                     "words of --debian, or a release like 6.6), without QEMU or root: an eBPF interpreter with "
                     "csum's helper models; what it cannot model it says so (repeatable)")
    prg.add_argument("--timeout", type=float, default=1200.0, help="with --debian/--qemu: seconds a boot may take")
    prg.add_argument("--save-vectors", metavar="DIR", help="with --debian/--qemu: write each guest's answers to DIR/ARCH-KERNEL.txt "
                     "(the format of tests/vectors/qemu-prog)")
    prg.set_defaults(func=run)
    return prg


def _seeds(args: argparse.Namespace) -> tuple[dict[str, list[Any]], dict[str, Any], dict[str, Any]]:
    """--map, --global and --ctx as csum.prog.load's maps=, globals= and ctx=."""
    from ..kernel import seed

    maps: dict[str, list[Any]] = {}
    for text in args.map:
        entry, named = _MAP_ENTRY.match(text), _NAMED.match(text)
        if entry and "=" in entry.group(2):
            key, _, value = entry.group(2).rpartition("=")
            maps.setdefault(entry.group(1), []).append((key, value))
        elif named:
            maps.setdefault(named.group(1), []).extend(seed.read_map_file(named.group(2), f"--map {named.group(1)}"))
        else:
            raise UsageError(f"--map {text!r}: give NAME=FILE.json or NAME:KEY=VALUE")
    found = []
    for option, items in (("--global", args.globals), ("--ctx", args.ctx)):
        pairs: dict[str, Any] = {}
        for text in items:
            named = _NAMED.match(text)
            if not named:
                raise UsageError(f"{option} {text!r}: give NAME=VALUE")
            pairs[named.group(1)] = named.group(2)
        found.append(pairs)
    return maps, found[0], found[1]


def _packets(args: argparse.Namespace) -> Any:
    """--pcap's frames (Ethernet, or raw IP given a header) or csum.testing.packets()'s (csum.prog.sample_frames)."""
    from ..kernel.prog_run import sample_frames

    try:
        return sample_frames(args.pcap, count=args.count, seed=args.seed)
    except OSError as exc:
        raise UsageError(f"cannot read {args.pcap}: {exc.strerror}") from None


def _value(v: int | None) -> str:
    return "none" if v is None else f"{v:#06x}"


def _check_lines(c: Any) -> list[str]:
    from ..kernel import prog

    if c.layer == prog.SKB_CSUM:
        lines = ["  skb->csum: stale on a CHECKSUM_COMPLETE skb (the kernel's test run: EBADMSG); the stack drops "
                 "the packet"]
    elif c.layer == "packet":
        lines = [f"  {c.reason}"]
    else:
        added = " (a header the program added)" if c.was is None else ""
        lines = [f"  {c.layer} checksum (header at {c.offset}){added}: stored {_value(c.stored)}, expected "
                 f"{_value(c.expected)} ({c.reason}): {c.status}"]
        if c.status == "kept-bad":
            lines[0] += " (the input's was wrong by the same amount)"
    if c.cause:
        lines.append(f"    {c.cause}")
    return lines


def run(args: argparse.Namespace) -> int:
    """``csum prog OBJ.o``: on the running kernel (csum.prog.judge_program), or across kernels (prog_kernels)."""
    from ..capture import pcap
    from ..capture.output import AtomicFile, target
    from ..kernel.prog_run import judge_program

    check_show(args)
    if args.count < 1:
        raise UsageError(f"--count must be at least 1, got {args.count}")
    if (args.qemu is None) != (args.kernel is None):
        raise UsageError("--qemu ARCH and --kernel IMAGE go together")
    if args.debian or args.qemu is not None or args.model:
        from .prog_kernels import run_kernels

        _check_kernel_options(args)
        return run_kernels(args, *_seeds(args), _packets(args))
    if args.save_vectors is not None:
        raise UsageError("--save-vectors applies to --debian and --qemu runs")
    if args.object_be is not None:
        raise UsageError("--object-be applies to --debian and --qemu runs")
    out = None if args.out is None else target(args.out, [] if args.pcap is None else [args.pcap])
    maps, globals_, ctx = _seeds(args)
    judged = judge_program(args.file, _packets(args), section=args.section, prog=args.prog, type=args.type,
                           maps=maps, globals=globals_, ctx=ctx, csum_states=args.csum_state,
                           states_name="--csum-state")
    if out is not None:
        try:
            with AtomicFile(out) as new:
                new.write(pcap.to_bytes([run.packet for _, _, run in judged.runs]))
                new.commit()
        except OSError as exc:
            raise UsageError(f"cannot write {args.out}: {exc.strerror}") from None
    if args.json:
        doc = schemas.document("prog", judged.as_json())
        if args.out is not None:
            doc["out"] = args.out
        print(json.dumps(doc, indent=2))
    else:
        print("\n".join(_lines(args, judged)))
    return 1 if judged.failed else 0


def _check_kernel_options(args: argparse.Namespace) -> None:
    """--model, --debian, --qemu, --kernel and --save-vectors name what exists."""
    from ..errors import CsumValueError
    from ..kernel import model
    from ..kernel.qemu import guest

    for text in args.model:
        try:
            model.parse(text)
        except CsumValueError as exc:
            raise UsageError(str(exc)) from None
    for option, arch_name in [(f"--debian {suite}", a) for suite, a in args.debian] + \
            ([("--qemu", args.qemu)] if args.qemu is not None else []):
        try:
            guest.arch(arch_name)
        except CsumValueError:
            raise UsageError(f"{option} {arch_name}: unknown architecture; known: "
                             f"{', '.join(sorted(guest.ARCHES))}") from None
    if args.kernel is not None and not Path(args.kernel).is_file():
        raise UsageError(f"--kernel: {args.kernel} is not a file")
    if args.save_vectors is not None and not (args.debian or args.qemu):
        raise UsageError("--save-vectors applies to --debian and --qemu runs (a model's answers are not a kernel's)")
    if args.save_vectors is not None and not Path(args.save_vectors).is_dir():
        raise UsageError(f"--save-vectors: {args.save_vectors} is not a directory")


def _lines(args: argparse.Namespace, judged: Any) -> list[str]:
    """The text report of ``csum prog`` on the running kernel."""
    summary, found = judged.summary, judged.states
    runs_note = "each on a CHECKSUM_NONE and a CHECKSUM_COMPLETE skb" if judged.kind == "tc" else "one run each"
    lines = [f"{args.file}: program {judged.info.name} (section {judged.info.section}, {judged.kind}); packets: "
             f"{judged.source}; {runs_note}"]
    lines += [f"note: {n}" for n in judged.notes]
    broken = judged.broken
    for i, frame, run in broken[:args.show]:
        lines += _broken_lines(i, frame, run)
    if len(broken) > args.show:
        lines.append(f"\n... {len(broken) - args.show} more (--show)")
    lines.append(f"\n{summary.line()}" + (f", {summary.kept_bad} kept bad" if summary.kept_bad else "")
                 + (f"; {summary.unjudged} checksums csum cannot judge here" if summary.unjudged else ""))
    for mistake, n in summary.causes:
        lines.append(f"cause {mistake}: reproduced on {n} of {summary.broken} broken packets")
    if summary.named:
        lines.append(f"named: {', '.join(summary.named)} (reproduced on every broken packet)")
    if summary.unexplained:
        lines.append(f"{summary.unexplained} broken packets not reproduced by any simulated mistake")
    if found:
        lines.append("")
        lines += state_lines(found, "")
    if args.out is not None:
        lines.append(f"wrote {args.out}: {len(judged.runs)} output packets")
    return lines


def _broken_lines(i: int, frame: bytes, run: Any) -> list[str]:
    """One broken packet: its action, the checksums not ok, the layers it lost, its bytes in and out."""
    size = f", {len(frame)} -> {len(run.packet)} bytes" if len(frame) != len(run.packet) else ""
    lines = [f"\npacket #{i}: {run.action}, {'changed' if run.changed else 'unchanged'}{size}"]
    for c in run.results:
        if c.status != "ok":
            lines += _check_lines(c)
    if run.removed:
        lines.append(f"  layers the output no longer has: {', '.join(run.removed)}")
    return lines + [f"  in:  {frame.hex()}", f"  out: {run.packet.hex()}"]
