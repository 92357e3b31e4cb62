"""``python -m bench.prog_kernels [--kernel RELEASE:ARCH ...] [--packets N] [--out JSON]``: how long ``csum prog
OBJ --debian ...`` takes for the running kernel plus N cached Debian kernels booted under QEMU (TCG).

The program is examples/bpf/xdp_ttl_csum_diff.c (built with clang), the packets ``csum.testing.packets()`` (200,
seed 0). The whole command runs once, in this process, as a user types it (``csum prog OBJ --count N --debian R A
... --json``): its wall time "in all", and each booted kernel's own wall time (boot, load and every packet's test run
in one guest: the ``boot_seconds`` csum measures per kernel). The running kernel's share is timed alone, the same
command without ``--debian``. Each kernel boots once and all packets go through that one guest run.

A kernel is used only when it is cached (its Debian package downloaded and extracted under ``$CSUM_CACHE`` or
~/.cache/csum, as ``csum kernel-check --debian`` and ``csum prog --debian`` leave it); the others are skipped with a
message, and nothing is downloaded. Results go to bench/results/prog_kernels.json with the machine and the 1-minute
load average before and after (a shared machine: 2 cores, other work running).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from .run import machine, publish

RESULTS = Path(__file__).resolve().parent / "results"
EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "bpf" / "xdp_ttl_csum_diff.c"
#: The default kernels (RELEASE:ARCH), three releases of x86_64.
KERNELS = ("bookworm:amd64", "trixie:amd64", "unstable:amd64")


def cached(suite: str, debian_arch: str) -> str | None:
    """Why Debian ``suite``'s kernel for ``debian_arch`` is not cached (None when it is), asking apt's cached lists
    only: no network."""
    from csum.errors import CsumValueError
    from csum.kernel.qemu import guest
    from csum.kernel.qemu.debian import apt, cache_dir, depends

    lists = cache_dir() / "apt" / f"{suite}-{debian_arch}" / "lists"
    if not any(lists.glob("*Packages*")):
        return f"no apt lists cached for {suite} {debian_arch}"
    a = guest.arch(debian_arch)
    try:
        meta = apt(suite, a.debian, "apt-cache", "show", "--no-all-versions", f"linux-image-{a.flavour}")
    except CsumValueError as exc:
        return str(exc)
    package = next((d for d in depends(meta) if d.startswith("linux-image-")), None)
    if package is None or not any((cache_dir() / "debs").glob(f"{package}_*.deb")):
        return f"{package or 'its kernel package'} not downloaded"
    return None


def _csum(argv: list[str]) -> tuple[float, dict[str, Any]]:
    """(wall seconds, the JSON document) of ``csum ARGV --json`` run in this process."""
    from csum import cli

    out = io.StringIO()
    start = time.perf_counter()
    with contextlib.redirect_stdout(out):
        code = cli.main([*argv, "--json"])
    wall = time.perf_counter() - start
    if code not in (0, 1):
        raise SystemExit(f"bench: csum {' '.join(argv)} exited {code}")
    return wall, json.loads(out.getvalue())


def run(kernels: list[str], packets: int) -> dict[str, Any]:
    load = [os.getloadavg()[0]]
    targets, skipped = [], []
    for name in kernels:
        suite, _, arch = name.partition(":")
        why = cached(suite, arch)
        if why is None:
            targets += ["--debian", suite, arch]
        else:
            skipped.append({"kernel": name, "why": why})
            print(f"bench: skipping {name}: {why}", file=sys.stderr)
    with tempfile.TemporaryDirectory() as tmp:
        obj = Path(tmp) / "xdp_ttl_csum_diff.o"
        subprocess.run(["clang", "-O2", "-g", "-target", "bpf", f"-I/usr/include/{platform.machine()}-linux-gnu",
                        "-c", str(EXAMPLE), "-o", str(obj)], check=True)
        base = ["prog", str(obj), "--count", str(packets), "--seed", "0"]
        running_wall, alone = _csum(base)
        total, doc = _csum([*base, *targets]) if targets else (running_wall, {"kernels": [], "differs": []})
    rows = [{"kernel": "running", "arch": platform.machine(), "release": platform.release(),
             "packets": alone["packets"], "broken_packets": alone["broken_packets"], "error": None,
             "seconds": round(running_wall, 1)}]
    rows += [{"kernel": k["name"], "arch": k["arch"], "release": k["kernel"], "packets": k["packets"],
              "broken_packets": k["broken_packets"], "error": k["error"], "seconds": round(k["boot_seconds"], 1)}
             for k in doc["kernels"] if k["boot_seconds"] is not None]
    load.append(os.getloadavg()[0])
    return {"machine": machine(), "load_average": load, "program": EXAMPLE.name, "packets": packets,
            "kernels": rows, "skipped": skipped, "total_seconds": round(total, 1), "booted": len(rows) - 1,
            "differs": len(doc["differs"])}


def table(results: dict[str, Any]) -> str:
    lines = ["| kernel | uname -r | packets | broken | wall s |", "| --- | --- | ---: | ---: | ---: |"]
    for r in results["kernels"]:
        lines.append(f"| {r['kernel']} ({r['arch']}) | {r['release']} | {r['packets']} | {r['broken_packets']} | "
                     f"{r['seconds']} |")
    rest = results["total_seconds"] - sum(r["seconds"] for r in results["kernels"])
    lines.append(f"| the rest (each release's apt lists when older than 6 hours, the loaders, judging) | | | | {rest:.1f} |")
    lines.append(f"| **in all** (one `csum prog` command) | | | | **{results['total_seconds']}** |")
    skipped = "; ".join(f"{s['kernel']}: {s['why']}" for s in results["skipped"])
    lines.append(f"\n{results['program']}, {results['packets']} packets; {results['booted']} kernels booted under "
                 f"QEMU (TCG), each once; {results['differs']} differences between kernels"
                 + (f"; skipped (not cached): {skipped}" if skipped else "")
                 + f"; 1-minute load average {' / '.join(f'{x:.2f}' for x in results['load_average'])} before / after")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.prog_kernels", description=__doc__.split("\n\n")[0])
    parser.add_argument("--kernel", action="append", metavar="RELEASE:ARCH",
                        help=f"a Debian kernel to boot (repeatable; default: {', '.join(KERNELS)})")
    parser.add_argument("--packets", type=int, default=200, help="packets through every kernel (default 200)")
    parser.add_argument("--out", type=Path, default=RESULTS / "prog_kernels.json", help="where to write the JSON")
    args = parser.parse_args(argv)
    return publish(run(args.kernel or list(KERNELS), args.packets), args.out, table)


if __name__ == "__main__":
    sys.exit(main())
