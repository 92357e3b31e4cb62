"""``csum bench``: run the benchmarks (``python -m bench``) from a source checkout."""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

from .args import UsageError

#: What the benchmarks import to measure csum against (the ``[bench]`` extra; matplotlib, its plot, is optional).
PEERS = ("scapy", "dpkt")


#: The command's name on the command line.
NAME = "bench"


def add(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """The ``bench`` subcommand's arguments."""
    bench = sub.add_parser(NAME, help="run the benchmarks (python -m bench, from a source checkout)")
    bench.add_argument("--quick", action="store_true", help="the short run CI uses")
    bench.set_defaults(func=run)
    return bench


def bench_root() -> Path | None:
    """The directory from which ``python -m bench`` runs: where the bench package is importable from."""
    spec = importlib.util.find_spec("bench")
    if spec is not None and spec.origin and (Path(spec.origin).parent / "__main__.py").exists():
        return Path(spec.origin).parent.parent
    checkout = Path(__file__).resolve().parents[2]
    return checkout if (checkout / "bench" / "__main__.py").exists() else None


def run(args: argparse.Namespace) -> int:
    """``csum bench [--quick]``."""
    root = bench_root()
    if root is None:
        raise UsageError("the bench package is not here: run from a source checkout of csum (bench/ is not installed)")
    missing = [name for name in PEERS if _absent(name)]
    if missing:
        raise UsageError(f"the benchmarks need {' and '.join(missing)}: pip install 'linux-csum[bench]'")
    import subprocess  # here: the parser imports this module for every command (tests/test_startup.py)

    command = [sys.executable, "-m", "bench"] + (["--quick"] if args.quick else []) + (["--json"] if args.json else [])
    return subprocess.run(command, cwd=root, check=False).returncode


def _absent(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is None
    except (ImportError, ValueError):  # a None entry in sys.modules, a broken parent package
        return True
