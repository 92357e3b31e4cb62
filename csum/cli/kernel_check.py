"""``csum kernel-check``: the emulation against the running kernel's helpers, or a Debian kernel of another
architecture booted under QEMU (csum.kernel.check, csum.kernel.qemu)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from .. import schemas
from .args import UsageError, integer, write_text


#: The command's name on the command line.
NAME = "kernel-check"


def add(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """The ``kernel-check`` subcommand's arguments."""
    kc = sub.add_parser(NAME, help="compare the emulation with the running kernel's bpf_csum_diff")
    kc.add_argument("--n", type=integer, default=2000, help="number of cases (default 2000; with --qemu, bpf_csum_diff "
                    "cases per JIT setting, at least the 417 fixed corner cases, plus a third as many l3/l4 "
                    "replace cases)")
    kc.add_argument("--seed", type=integer, default=None, help="random seed, to reproduce a run")
    kc.add_argument("--qemu", metavar="ARCH", help="boot a kernel of Debian architecture ARCH under qemu-system-* "
                    "(armhf, arm64, ppc64el, riscv64, s390x, amd64, i386, mips64el, mipsel, loong64) instead of "
                    "using the running kernel")
    kc.add_argument("--kernel", metavar="IMAGE", help="with --qemu: the kernel image to boot")
    kc.add_argument("--debian", nargs=2, metavar=("RELEASE", "ARCH"),
                    help="fetch Debian RELEASE's kernel for ARCH with apt-get download (e.g. unstable armhf)")
    kc.add_argument("--profile", help="with --qemu: compare with this profile (default: detected from the guest)")
    kc.add_argument("--timeout", type=float, default=1800.0, help="with --qemu: seconds a boot may take")
    kc.add_argument("--log", metavar="FILE", help="with --qemu: keep the guest's console log here")
    kc.add_argument("--append", metavar="ARGS", help="with --qemu: extra kernel command line arguments")
    kc.add_argument("--save-vectors", metavar="FILE", help="with --qemu: write the kernel's answers as a vector file")
    kc.set_defaults(func=run)
    return kc


def run(args: argparse.Namespace) -> int:
    """``csum kernel-check``: the running kernel, or ``--qemu`` / ``--debian``."""
    from .. import kernel
    from ..kernel.check import kernel_check

    if args.qemu is not None or args.debian is not None:
        return _qemu(args)
    if args.kernel is not None or args.profile is not None:
        raise UsageError("--kernel and --profile apply to --qemu runs")

    if not kernel.available():
        raise UsageError(f"the running kernel's helpers are not reachable: {kernel.why_unavailable()}")
    if args.n < 1:
        raise UsageError(f"--n must be at least 1, got {args.n}")
    report = kernel_check(args.n, args.seed, progress=sys.stderr if sys.stderr.isatty() else None)
    print(_json(report) if args.json else report.format_text())
    return 0 if report.ok else 1


def _json(report: Any) -> str:
    """A kernel check's report as --json prints it: the report's own JSON after its schema's name."""
    return json.dumps(schemas.document(NAME, json.loads(report.to_json())), indent=2)


def _qemu(args: argparse.Namespace) -> int:
    import hashlib
    import shlex

    from ..kernel.qemu import check, guest

    if args.debian is not None:
        suite, arch_name = args.debian
        if args.qemu is not None and guest.arch(args.qemu) != guest.arch(arch_name):
            raise UsageError(f"--qemu {args.qemu} and --debian {suite} {arch_name} name different architectures")
        if args.kernel is not None:
            raise UsageError("give --kernel IMAGE or --debian RELEASE ARCH, not both")
        fetched = guest.fetch_debian(suite, arch_name)
        kernel, arch_name = fetched.image, fetched.arch
        provenance = {"package": f"{fetched.package} {fetched.version} (Debian {fetched.suite}, {fetched.arch})",
                      "deb sha256": fetched.deb_sha256, "kernel file": str(fetched.image.name)}
    else:
        if args.kernel is None:
            raise UsageError("--qemu needs --kernel IMAGE or --debian RELEASE ARCH")
        kernel, arch_name = Path(args.kernel), args.qemu
        if not kernel.is_file():
            raise UsageError(f"--kernel: {kernel} is not a file")
        provenance = {"kernel file": kernel.name, "kernel sha256": hashlib.sha256(kernel.read_bytes()).hexdigest()}
    if args.n < 1:
        raise UsageError(f"--n must be at least 1, got {args.n}")
    seed = args.seed if args.seed is not None else 1
    provenance["command"] = "csum kernel-check " + shlex.join(
        (["--debian", *args.debian] if args.debian is not None else ["--qemu", args.qemu, "--kernel", args.kernel])
        + ["--n", str(args.n), "--seed", str(seed)] + (["--profile", args.profile] if args.profile else [])
        + (["--append", args.append] if args.append else []))
    try:
        report, obs = check.kernel_check_qemu(arch_name, kernel, n=args.n, n_replace=max(1, args.n // 3), seed=seed,
                                              forced_profile=args.profile, timeout=args.timeout,
                                              log_path=Path(args.log) if args.log else None, provenance=provenance,
                                              append_extra=args.append or "")
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if args.save_vectors:
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            staged = Path(tmp) / "vectors.txt"
            check.write_vectors(staged, report, obs)
            write_text(Path(args.save_vectors), staged.read_text(), "--save-vectors")
    print(_json(report) if args.json else report.format_text())
    return 0 if report.ok else 1
