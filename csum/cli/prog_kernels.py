"""``csum prog OBJ.o --debian RELEASE ARCH ... [--qemu ARCH --kernel IMAGE] [--model ARCH:RELEASE ...]``: one program
on the running kernel, on Debian's kernels (or one's own) booted under QEMU and in csum's models of other
architectures and releases, the results per kernel, then the packets whose output differs between kernels, with the
cause (csum.kernel.across: the logic; here its options and its report)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from .. import schemas
from .args import UsageError
from .prog_states import state_lines


def _seed_options(args: argparse.Namespace) -> list[str]:
    """The options that chose and seeded the program, as given (for a recorded boot's command line)."""
    out = []
    for option, given in (("--section", args.section), ("--prog", args.prog), ("--type", args.type),
                          ("--object-be", args.object_be and Path(args.object_be).name)):
        if given is not None:
            out += [option, given]
    for option, items in (("--map", args.map), ("--global", args.globals), ("--ctx", args.ctx)):
        for item in items:
            out += [option, item]
    return out


def _kernel_lines(k: Any) -> list[str]:
    how = "" if k.seconds is None else f"; booted and run in {k.seconds:.1f} s"
    lines = [f"\nkernel {k.label} ({k.name}: {k.source}{how}); bpf_csum_diff {k.csum_diff_kind}"]
    if k.error:
        return lines + [f"  {k.error}"]
    s = k.summary
    lines.append(f"  {s.line()}" + (f", {s.kept_bad} kept bad" if s.kept_bad else ""))
    lines += [f"  cause {m}: reproduced on {n} of {s.broken} broken packets" for m, n in s.causes]
    if s.unexplained:
        lines.append(f"  {s.unexplained} broken packets not reproduced by any simulated mistake")
    return lines


def run_kernels(args: argparse.Namespace, maps: dict[str, Any], globals_: dict[str, Any], ctx: dict[str, Any],
                packets: Any) -> int:
    """``csum prog OBJ.o --debian RELEASE ARCH ... [--qemu ARCH --kernel IMAGE]``."""
    from ..kernel.across import across_kernels, targets

    if args.out is not None:
        raise UsageError("--out applies to a run on the running kernel alone, not with --debian, --qemu or --model")
    boots = targets(args.debian, None if args.qemu is None else (args.qemu, args.kernel))
    found = across_kernels(args.file, packets, section=args.section, prog=args.prog, type=args.type, maps=maps,
                           globals=globals_, ctx=ctx, object_be=args.object_be, boots=boots, models=args.model,
                           csum_states=args.csum_state, timeout=args.timeout, save_vectors=args.save_vectors,
                           command=_seed_options(args), states_name="--csum-state")
    if args.json:
        print(json.dumps(schemas.document("prog-kernels", found.as_json()), indent=2))
    else:
        print("\n".join(_lines(args, found)))
    return 1 if found.failed else 0


def _lines(args: argparse.Namespace, found: Any) -> list[str]:
    """The text report across kernels: each kernel, then the packets whose output differs."""
    prep, kernels, differs = found.prep, found.kernels, found.differs
    lines = [f"{args.file}: program {prep.program} (section {prep.section}, {prep.kind}); packets: {found.source}; "
             f"{len(kernels)} kernels"]
    lines += [f"note: {n}" for n in found.notes]
    for k in kernels:
        lines += _kernel_lines(k)
        if found.states[k.label]:
            lines += state_lines(found.states[k.label], "  ")
    ran = [k.label for k in kernels if not k.error]
    if len(ran) < 2:
        lines.append("\nfewer than two kernels ran the program: nothing to compare")
        return lines
    packets = sorted({d.index for d in differs})
    lines.append(f"\n{len(packets)} packets whose output differs between {', '.join(ran)}")
    for d in differs[:args.show]:
        values = ", ".join(f"{label}: {v}" for label, v in d.values.items())
        lines += [f"packet #{d.index}, {d.field}: {values}", f"  {d.cause}"]
    if len(differs) > args.show:
        lines.append(f"... {len(differs) - args.show} more (--show)")
    return lines
