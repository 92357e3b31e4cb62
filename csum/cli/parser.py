"""The ``csum`` argument parser: the top-level options, then each command module's own (``add(sub)``)."""

from __future__ import annotations

import argparse

from . import bench, compare, diff, fix, kernel_check, prog, rewrite, verify

#: The commands, in the order ``csum --help`` lists them.
COMMANDS = (compare, kernel_check, diff, verify, fix, rewrite, prog, bench)


def build() -> argparse.ArgumentParser:
    """The parser of ``csum``: ``args.func(args)`` runs the chosen command."""
    parser = argparse.ArgumentParser(prog="csum", description="The Internet checksum as each Linux architecture computes it.")
    parser.add_argument("--version", action="store_true", help="show the version and the summing engine, then exit")
    parser.add_argument("--json", dest="json_top", action="store_true", help="machine-readable output (also after "
                        "the command)")
    sub = parser.add_subparsers(dest="command")
    for command in COMMANDS:
        command.add(sub).add_argument("--json", action="store_true", help="machine-readable output")
    return parser
