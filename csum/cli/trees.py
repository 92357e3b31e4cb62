"""Directories on the command line: ``csum verify DIR``, ``csum fix DIR OUTDIR``, ``csum rewrite DIR OUTDIR``.

A directory given as an input stands for the captures under it (:func:`csum.capture.tree.captures`: found by their
magic bytes, in sorted order); fix and rewrite write each one's output at the same relative path under OUTDIR
(:func:`outputs`), which is created if missing and only ever receives new files: an output that exists already is
refused before anything is read, unless ``--force``.
"""

from __future__ import annotations

import argparse
import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import CsumError
from .args import UsageError

if TYPE_CHECKING:
    from ..capture.tree import Tree

__all__ = ["Listing", "expand", "is_dir", "outputs", "skipped_text", "tree"]


class Listing:
    """The directories among the inputs, listed (``trees``, in the order given), and what they held besides captures:
    files skipped, symbolic links not followed."""

    def __init__(self, trees: list[Tree] | None = None) -> None:
        self.trees: list[Tree] = trees or []

    @property
    def skipped(self) -> int:
        return sum(t.skipped for t in self.trees)

    @property
    def links(self) -> int:
        return sum(t.links for t in self.trees)

    def as_json(self) -> dict[str, int]:
        """The ``directories`` object of the --json reports."""
        return {"directories": len(self.trees), "skipped_files": self.skipped, "symlinks_not_followed": self.links}


def is_dir(name: str) -> bool:
    """Whether the input ``name`` is a directory (standard input and URLs are not)."""
    return name != "-" and "://" not in name and os.path.isdir(name)


def tree(name: str, follow_symlinks: bool) -> Tree:
    """The captures under the directory ``name`` (csum.capture.tree), or the one-line usage error: the directory
    cannot be listed, a loop of links, no capture in it."""
    from ..capture.tree import captures

    try:
        found = captures(name, follow_symlinks=follow_symlinks)
    except CsumError as exc:
        raise UsageError(str(exc)) from None
    if not found.files:
        raise UsageError(f"{name}: no capture found (no pcap or pcapng magic, compressed or not; "
                         f"{skipped_text(found.skipped, found.links)})")
    return found


def expand(args: argparse.Namespace) -> Listing:
    """Replace each directory of ``args.files`` by the captures under it, in place; what else they held."""
    listing = Listing()
    files: list[str] = []
    for name in args.files:
        if not is_dir(name):
            files.append(name)
            continue
        args.current = name  # what a one-line error names
        found = tree(name, args.follow_symlinks)
        listing.trees.append(found)
        files.extend(found.paths())
    args.files = files
    return listing


def skipped_text(skipped: int, links: int) -> str:
    """``"3 files skipped (not captures), 1 symbolic link not followed"``."""
    text = f"{skipped} file{'' if skipped == 1 else 's'} skipped (not captures)"
    if links:
        text += f", {links} symbolic link{'' if links == 1 else 's'} not followed (--follow-symlinks follows them)"
    return text


def outputs(root: str, rels: list[str], outdir: str, *, force: bool, follow_symlinks: bool) -> list[Path]:
    """Where fix or rewrite writes each capture ``root/rel``: ``outdir/rel``, each checked by
    :func:`csum.capture.output.target`; an existing one is refused unless ``force``. OUTDIR must not be inside
    ``root``, nor ``root`` inside it (the outputs would be read as inputs on the next run, or replace them)."""
    from ..capture.output import target

    try:
        info = os.lstat(outdir)
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise UsageError(f"OUTDIR {outdir}: {exc.strerror or exc}") from None
    else:
        if stat.S_ISLNK(info.st_mode) and not follow_symlinks:
            raise UsageError(f"OUTDIR {outdir} is a symbolic link; give --follow-symlinks to write where it points")
        if not os.path.isdir(outdir):
            raise UsageError(f"OUTDIR {outdir} exists and is not a directory")
    inside, out = os.path.realpath(root), os.path.realpath(outdir)
    if os.path.commonpath([inside, out]) in (inside, out):
        raise UsageError(f"OUTDIR {outdir} and IN {root} are one inside the other: give an OUTDIR outside IN")
    paths = []
    for rel in rels:
        path = os.path.join(outdir, rel)
        if os.path.lexists(path) and not force:
            raise UsageError(f"OUTDIR: {path} exists; csum writes only new files into an output directory "
                             "(--force replaces them)")
        try:
            paths.append(target(path, [os.path.join(root, rel)], follow_symlinks=follow_symlinks, force=force,
                                what="OUTDIR:"))
        except CsumError as exc:
            raise UsageError(str(exc)) from None
    return paths
