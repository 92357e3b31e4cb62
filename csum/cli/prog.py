"""``csum prog OBJ.o``: run a user's compiled tc/XDP program on packets with the running kernel and check what it did
to their checksums (csum.prog)."""

from __future__ import annotations

import argparse
import json

from .args import UsageError, check_show, integer


def add(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """The ``prog`` subcommand's arguments."""
    prg = sub.add_parser("prog", help="run a compiled tc/XDP program on packets (running kernel) and check its checksums")
    prg.add_argument("file", metavar="OBJ.o", help="BPF ELF object (clang -target bpf)")
    which = prg.add_mutually_exclusive_group()
    which.add_argument("--section", help="the program's ELF section (e.g. tc, xdp)")
    which.add_argument("--prog", help="the program's function name")
    prg.add_argument("--pcap", metavar="IN", help="packets from a pcap/pcapng file (default: csum.testing.packets())")
    prg.add_argument("--out", metavar="OUT.pcap", help="write the output packets to a new pcap file")
    prg.add_argument("--count", type=integer, default=200, help="packets to generate without --pcap (default 200)")
    prg.add_argument("--seed", type=integer, default=0, help="seed of the generated packets (default 0)")
    prg.add_argument("--show", type=integer, default=10, help="list at most this many broken packets (default 10)")
    prg.set_defaults(func=run)
    return prg


def _packets(args: argparse.Namespace) -> tuple[list[tuple[int, bytes]], str]:
    """(index, frame) pairs from --pcap (Ethernet, or raw IP given a header) or from csum.testing.packets()."""
    from ..capture import pcap
    from ..kernel.prog import ethernet

    if args.pcap is None:
        try:
            from ..testing import sample_packets
        except ImportError:
            raise UsageError("without --pcap the packets come from csum.testing.packets(), which needs "
                              "hypothesis (pip install hypothesis)") from None
        drawn = sample_packets(args.count, seed=args.seed)
        return [(i, ethernet(p)) for i, p in enumerate(drawn)], \
            f"csum.testing.packets(), {len(drawn)} drawn with seed {args.seed}"
    try:
        cap = pcap.read(args.pcap)
    except OSError as exc:
        raise UsageError(f"cannot read {args.pcap}: {exc.strerror}") from None
    raw_ip = (pcap.LINKTYPE_RAW, pcap.LINKTYPE_IPV4, pcap.LINKTYPE_IPV6)
    frames = [(i, bytes(cap.packet(i)) if cap.linktypes[i] == pcap.LINKTYPE_ETHERNET else ethernet(bytes(cap.packet(i))))
              for i in range(len(cap)) if not cap.is_cut(i) and (cap.linktypes[i] == pcap.LINKTYPE_ETHERNET
                                                                 or cap.linktypes[i] in raw_ip)]
    return frames, f"{args.pcap}, {len(frames)} of {len(cap)} packets (Ethernet or raw IP, not cut)"


def run(args: argparse.Namespace) -> int:
    """``csum prog OBJ.o``."""
    from ..kernel import prog

    check_show(args)
    if args.count < 1:
        raise UsageError(f"--count must be at least 1, got {args.count}")
    from ..capture import pcap
    from ..capture.output import AtomicFile, target

    out = None if args.out is None else target(args.out, [] if args.pcap is None else [args.pcap])
    frames, source = _packets(args)
    with prog.load(args.file, section=args.section, prog=args.prog) as program:
        runs = [(i, frame, program.run(frame)) for i, frame in frames]
        broken = [(i, frame, run, program.broken(frame, run)) for i, frame, run in runs]
        broken = [b for b in broken if b[3]]
        info, name = program.info, program.retval_name
    if out is not None:
        try:
            with AtomicFile(out) as new:
                new.write(pcap.to_bytes([run.packet for _, _, run in runs]))
                new.commit()
        except OSError as exc:
            raise UsageError(f"cannot write {args.out}: {exc.strerror}") from None
    runs_note = "each on a CHECKSUM_NONE and a CHECKSUM_COMPLETE skb" if info.kind == "tc" else "one run each"
    if args.json:
        doc = {"object": args.file, "program": info.name, "section": info.section, "type": info.kind,
               "source": source, "packets": len(runs), "broken_packets": len(broken),
               "broken": [{"index": i, "retval": run.retval, "retval_name": name(run.retval), "input": frame.hex(),
                           "output": run.packet.hex(),
                           "checks": [{"layer": c.layer, "offset": c.offset, "stored": c.stored,
                                       "expected": c.expected, "reason": c.reason, "cause": c.cause} for c in bad]}
                          for i, frame, run, bad in broken[:args.show]]}
        if args.out is not None:
            doc["out"] = args.out
        print(json.dumps(doc, indent=2))
        return 1 if broken else 0
    lines = [f"{args.file}: program {info.name} (section {info.section}, {info.kind}); packets: {source}; "
             f"{runs_note}"]
    for i, frame, run, bad in broken[:args.show]:
        lines.append(f"\npacket #{i}: {name(run.retval)}")
        for c in bad:
            if c.layer == prog.SKB_CSUM:
                lines.append("  skb->csum: stale on a CHECKSUM_COMPLETE skb (the kernel's test run: EBADMSG); "
                             "the bytes may be right, the stack drops the packet")
            else:
                stored = "none" if c.stored is None else f"{c.stored:#06x}"
                expected = "?" if c.expected is None else f"{c.expected:#06x}"
                lines.append(f"  {c.layer} checksum (header at {c.offset}): stored {stored}, expected {expected} "
                             f"({c.reason})")
            if c.cause:
                lines.append(f"    likely cause: {c.cause}")
        lines += [f"  in:  {frame.hex()}", f"  out: {run.packet.hex()}"]
    if len(broken) > args.show:
        lines.append(f"\n... {len(broken) - args.show} more (--show)")
    lines.append(f"\n{len(broken)} of {len(runs)} packets broken by {info.name}" if broken else
                 f"\nall {len(runs)} output packets have correct checksums"
                 + (" and skb->csum" if info.kind == "tc" else ""))
    if args.out is not None:
        lines.append(f"wrote {args.out}: {len(runs)} output packets")
    print("\n".join(lines))
    return 1 if broken else 0
