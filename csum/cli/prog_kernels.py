"""``csum prog OBJ.o --debian RELEASE ARCH ... [--qemu ARCH --kernel IMAGE] [--model ARCH:RELEASE ...]``: one program
on the running kernel, on Debian's kernels (or one's own) booted under QEMU and in csum's models of other
architectures and releases, the results per kernel, then the packets whose output differs between kernels, with the
cause (csum.kernel.qemu.prog, csum.kernel.model, csum.kernel.differ)."""

from __future__ import annotations

import argparse
import hashlib
import json
import platform
import shlex
from pathlib import Path
from typing import Any

from .. import schemas
from .args import UsageError
from .prog_states import state_doc, state_lines, states_fail, states_of


def _running(frames: list[tuple[int, bytes]], maps: dict[str, Any], globals_: dict[str, Any],
             ctx: dict[str, Any], args: argparse.Namespace) -> Any:
    """The running kernel's result; its error says why it did not run (no root, no BPF, the object's load)."""
    from .. import kernel
    from ..errors import LibbpfError
    from ..kernel import prog
    from ..kernel.differ import KernelResult

    machine, release = platform.machine(), platform.release()
    if not kernel.available():
        return KernelResult("running", "", machine, release, "unknown", {},
                            f"not run here: {kernel.why_unavailable()}", "the running kernel")
    kind = kernel.running_profile().csum_diff_kind
    try:
        with prog.load(args.file, section=args.section, prog=args.prog, type=args.type, maps=maps, globals=globals_,
                       ctx=ctx) as program:
            runs = {i: program.run(frame) for i, frame in frames}
    except LibbpfError as exc:
        return KernelResult("running", "", machine, release, kind, {},
                            f"does not load on {release}: {str(exc).splitlines()[0]}", "the running kernel")
    return KernelResult("running", "", machine, release, kind, runs, None, "the running kernel")


def _booted(name: str, arch_name: str, image: Path, package: str, sha256: str, how: list[str], prep: Any,
            frames: list[tuple[int, bytes]], source: str, args: argparse.Namespace) -> Any:
    """One boot of ``image`` (``package``: what it is; ``sha256``: its package's or its own; ``how``: the options
    that name it) judged."""
    from ..kernel.differ import KernelResult
    from ..kernel.qemu import guest
    from ..kernel.qemu import prog as qprog

    a = guest.arch(arch_name)
    booted = qprog.boot(a.debian, image, prep, frames, timeout=args.timeout)
    log = booted.log
    if args.save_vectors is not None and log.refused is None:
        import tempfile

        from .args import write_text

        provenance = {"package": package, "deb sha256" if "Debian" in package else "kernel sha256": sha256,
                      "object": _object_line(args, prep, a.order),
                      "program": f"{prep.program} (section {prep.section}, {prep.kind})", "packets": source,
                      "command": shlex.join(["csum", "prog", Path(args.file).name, *how, *_seed_options(args)])}
        with tempfile.TemporaryDirectory() as tmp:
            staged = Path(tmp) / "log.txt"
            qprog.record(staged, booted, frames, provenance)
            write_text(Path(args.save_vectors) / f"{a.debian}-{log.release or 'unknown'}.txt", staged.read_text(),
                       "--save-vectors")
    error = qprog.load_error(log, prep.program)
    runs = {} if error else qprog.judge_log(prep, frames, log)
    missing = len(frames) - len(runs)
    if not error and missing:
        error = f"{missing} of {len(frames)} packets have no answer in the console log"
    return KernelResult(name, a.debian, log.machine or a.debian, log.release or "unknown", log.csum_diff_kind, runs,
                        error, package, None if log.refused else booted.seconds, log.profile_name(a.order))


def _object_line(args: argparse.Namespace, prep: Any, order: str) -> str:
    """The object the guest loaded: ``OBJ.o (sha256 ...)``, or a big-endian guest's ``--object-be`` file."""
    name, data = (args.object_be, prep.data_be) if order == "big" else (args.file, prep.data)
    return f"{Path(name).name} (sha256 {hashlib.sha256(data).hexdigest()})"


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


def _targets(args: argparse.Namespace) -> list[tuple[str, str, Path, str, str, list[str]]]:
    """(name, arch, image, package, sha256, options) of every kernel to boot: --debian ones fetched (once), then
    --qemu's."""
    from ..kernel.qemu import guest

    out = []
    for suite, arch_name in args.debian:
        fetched = guest.fetch_debian(suite, guest.arch(arch_name).debian)
        out.append((f"{suite} {fetched.arch}", fetched.arch, fetched.image,
                    f"{fetched.package} {fetched.version} (Debian {fetched.suite}, {fetched.arch})",
                    fetched.deb_sha256, ["--debian", suite, fetched.arch]))
    if args.qemu is not None:
        image = Path(args.kernel)
        out.append((f"{image.name} {guest.arch(args.qemu).debian}", guest.arch(args.qemu).debian, image,
                    f"{image.name} (--kernel)", hashlib.sha256(image.read_bytes()).hexdigest(),
                    ["--qemu", guest.arch(args.qemu).debian, "--kernel", image.name]))
    return out


def _kernel_doc(k: Any, found: list[Any], asked: bool) -> dict[str, Any]:
    s = k.summary
    broken = sorted(i for i, r in k.runs.items() if r.broken)
    states = {"csum_states": [state_doc(st) for st in found]} if asked else {}
    release = k.name.split()[0] if "Debian" in k.source else "running" if not k.debian_arch else None
    if k.model:
        release = k.name.partition(":")[2]
    return {**states, "name": k.name, "arch": k.machine, "release": release,
            "kernel": k.label if k.model else k.release, "model": k.model, "source": k.source,
            "csum_diff": k.csum_diff_kind, "error": k.error,
            "boot_seconds": None if k.seconds is None else round(k.seconds, 1),
            "packets": s.packets, "changed": s.changed, "dropped": s.dropped, "broken_packets": s.broken,
            "kept_bad_packets": s.kept_bad, "unjudged": s.unjudged, "causes": dict(s.causes), "named": list(s.named),
            "unexplained": s.unexplained, "broken": broken}


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
                frames: list[tuple[int, bytes]], source: str) -> int:
    """``csum prog OBJ.o --debian RELEASE ARCH ... [--qemu ARCH --kernel IMAGE]``."""
    from ..kernel import prog
    from ..kernel.differ import differences
    from ..kernel.model import model_kernel
    from ..kernel.qemu import prog as qprog

    if args.out is not None:
        raise UsageError("--out applies to a run on the running kernel alone, not with --debian, --qemu or --model")
    prep = qprog.prepare(args.file, section=args.section, prog=args.prog, type=args.type, maps=maps,
                         globals=globals_, ctx=ctx, object_be=args.object_be)
    if args.csum_state and prep.kind != "tc":
        raise UsageError(f"--csum-state: {args.file}'s program {prep.program} is {prep.kind}; checksum states are "
                         "those of a tc program's skb")
    kernels = [_running(frames, maps, globals_, ctx, args)]
    kernels += [_booted(*target, prep, frames, source, args) for target in _targets(args)]
    kernels += [model_kernel(text, args.file, frames, section=args.section, prog=args.prog, type=args.type, maps=maps,
                             globals=globals_, ctx=ctx) for text in args.model]
    inputs = dict(frames)
    found = {k.label: states_of(args.csum_state, [(i, inputs[i], r) for i, r in sorted(k.runs.items())],
                                prep.evidence) if k.runs else [] for k in kernels}
    differs = differences(kernels, prep.evidence, inputs)
    notes = []
    if prep.pinned:
        notes.append("maps the object asks to pin (LIBBPF_PIN_BY_NAME), loaded fresh on every kernel, not pinned and "
                     "not reused: " + ", ".join(prep.pinned))
    if not any(r.changed or r.dropped for k in kernels for r in k.runs.values()):
        notes.append("the program changed no packet and dropped none on any kernel, so nothing it does was tested (a "
                     "program that needs its maps or globals seeded does nothing without them: --map, --global)")
    if prep.kind == "tc" and not any(st.state == "partial" for f in found.values() for st in f):
        notes.append(prog.PARTIAL_NOTE + "; a kernel without BPF_F_TEST_SKB_CHECKSUM_COMPLETE (before 6.11, where not "
                     "backported) makes no CHECKSUM_COMPLETE run, and skb->csum is not judged there")
    bad = any(k.error and not k.error.startswith("not run here") or any(r.broken for r in k.runs.values())
              for k in kernels) or any(states_fail(f) for f in found.values())
    if args.json:
        print(json.dumps(schemas.document("prog-kernels", {"object": args.file, "program": prep.program, "section": prep.section, "type": prep.kind,
                          "source": source, "notes": notes, "kernels": [_kernel_doc(k, found[k.label], bool(args.csum_state)) for k in kernels],
                          "differs": [{"index": d.index, "field": d.field, "values": d.values, "cause": d.cause}
                                      for d in differs]}), indent=2))
        return 1 if bad or differs else 0
    lines = [f"{args.file}: program {prep.program} (section {prep.section}, {prep.kind}); packets: {source}; "
             f"{len(kernels)} kernels"]
    lines += [f"note: {n}" for n in notes]
    for k in kernels:
        lines += _kernel_lines(k)
        if found[k.label]:
            lines += state_lines(found[k.label], "  ")
    ran = [k.label for k in kernels if not k.error]
    if len(ran) < 2:
        lines.append("\nfewer than two kernels ran the program: nothing to compare")
    else:
        packets = sorted({d.index for d in differs})
        lines.append(f"\n{len(packets)} packets whose output differs between {', '.join(ran)}")
        for d in differs[:args.show]:
            values = ", ".join(f"{label}: {v}" for label, v in d.values.items())
            lines += [f"packet #{d.index}, {d.field}: {values}", f"  {d.cause}"]
        if len(differs) > args.show:
            lines.append(f"... {len(differs) - args.show} more (--show)")
    print("\n".join(lines))
    return 1 if bad or differs else 0
