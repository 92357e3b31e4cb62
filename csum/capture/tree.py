"""The captures in a directory tree, found by their magic bytes (``csum verify DIR``, ``fix DIR OUTDIR``,
``rewrite DIR OUTDIR``, :mod:`csum.dask` given a directory).

:func:`captures` walks ``root`` depth first, each directory's entries sorted by name, so the files come in the
order of their sorted relative paths, the same on every run. A regular file is a capture when its first four bytes,
once decompressed (gzip, bzip2, xz, zstd: :mod:`csum.capture.source`, by magic as well), are a pcap magic in either
byte order or a pcapng section header (:func:`csum.capture.pcap.is_capture`): names and suffixes are never looked
at. Other files (text, images, a gzip of something else, an empty file) are skipped and counted; so are FIFOs,
sockets and devices, never opened (a FIFO would block). A file that cannot be opened or decompressed far enough to
tell is listed as a capture: checking it then says why it cannot be read, rather than it vanishing from the report.

Symbolic links are not followed unless ``follow_symlinks``: each link met in the tree (to a file or a directory) is
then counted as skipped, as ``find`` does without ``-L``; ``root`` itself is followed, having been named. With
``follow_symlinks``, links to files are read and links to directories walked; a directory met again inside itself
(a loop of links) and a link that resolves to itself (ELOOP) are a :class:`CsumValueError` (code ``bad-tree``), as
is a directory that cannot be listed: one line naming it, raised before any capture is read.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field

from ..errors import Code, CsumValueError
from .pcap import is_capture
from .source import open_source

__all__ = ["Tree", "captures"]


@dataclass(frozen=True)
class Tree:
    """What :func:`captures` found under ``root``: the captures' paths relative to it (``/``-separated, sorted), the
    files skipped as not captures (or not regular files), and the symbolic links not followed."""

    root: str
    files: list[str]
    skipped: int = 0
    links: int = 0
    #: Each capture's compression (a csum.capture.source.COMPRESSIONS name, or None), by its relative path: fix and
    #: rewrite write each copy in its input's.
    compression: dict[str, str | None] = field(default_factory=dict)

    def paths(self) -> list[str]:
        """The captures' paths as ``root`` joined to each relative path."""
        return [os.path.join(self.root, rel) for rel in self.files]


def _probe(path: str) -> tuple[bool, str | None]:
    """Whether the regular file ``path`` starts, once decompressed, with a capture's magic (True too when it cannot
    be opened or decompressed far enough to tell: checking it says why), and its compression (None when it cannot be
    opened)."""
    try:
        with open_source(path) as source:
            compression = source.compression
            head = source.stream.read(4)
    except (OSError, CsumValueError):
        return True, None
    return is_capture(head), compression


def _bad(what: str) -> CsumValueError:
    return CsumValueError(what, code=Code.BAD_TREE)


def captures(root: str | os.PathLike[str], *, follow_symlinks: bool = False) -> Tree:
    """The captures under the directory ``root`` (see the module docstring)."""
    top = os.fspath(root)
    files: list[str] = []
    compression: dict[str, str | None] = {}
    counts = [0, 0]  # skipped, links not followed

    def walk(directory: str, rel: str, ancestors: tuple[tuple[int, int], ...]) -> None:
        try:
            with os.scandir(directory) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            raise _bad(f"cannot list the directory {directory}: {exc.strerror or exc}") from None
        for entry in entries:
            name = f"{rel}{entry.name}"
            link = entry.is_symlink()
            if link and not follow_symlinks:
                counts[1] += 1
                continue
            try:
                info = os.stat(entry.path) if link else entry.stat(follow_symlinks=False)
            except FileNotFoundError:  # a link to nothing, or a file removed while walking
                counts[0] += 1
                continue
            except OSError as exc:
                raise _bad(f"cannot follow {entry.path}: {exc.strerror or exc}") from None
            if stat.S_ISDIR(info.st_mode):
                key = (info.st_dev, info.st_ino)
                if key in ancestors:
                    raise _bad(f"{entry.path} is a loop of symbolic links: it leads back to a directory that "
                               "contains it")
                walk(entry.path, f"{name}/", (*ancestors, key))
            elif stat.S_ISREG(info.st_mode) and (probed := _probe(entry.path))[0]:
                files.append(name)
                compression[name] = probed[1]
            else:
                counts[0] += 1

    try:
        info = os.stat(top)
    except OSError as exc:
        raise _bad(f"cannot read the directory {top}: {exc.strerror or exc}") from None
    walk(top, "", ((info.st_dev, info.st_ino),))
    return Tree(top, files, counts[0], counts[1], compression)
