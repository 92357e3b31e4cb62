"""Output files that cannot hurt: regular files only, written beside the target and renamed into place.

:func:`target` decides where ``csum fix`` may write: a regular file or a name
not yet taken; never a device, FIFO, socket or directory; a symbolic link only
when asked to follow it (then the file it points to is replaced and the link
stays); never one of the inputs, however it is spelled (``..``, symbolic or hard
links). :class:`AtomicFile` writes a temporary file in the target's directory,
fsyncs it, gives it the mode (and, for root, the owner) of the file it replaces,
then renames it over the target: readers see the old file or the complete new
one, and on any error (Ctrl-C included) the target is untouched and the
temporary file is gone. A target ending in ``.gz`` is written gzip-compressed.
"""

from __future__ import annotations

import gzip
import io
import os
import stat
import tempfile
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType

from ..errors import Code, CsumValueError

__all__ = ["AtomicFile", "target"]

_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"))


def _refuse(what: str) -> CsumValueError:
    return CsumValueError(what, code=Code.UNSAFE_OUTPUT)


def _kind(mode: int) -> str | None:
    """What a non-regular file is, or None for a regular file."""
    return None if stat.S_ISREG(mode) else next((name for test, name in _KINDS if test(mode)), "not a regular file")


def target(out: str | os.PathLike[str], inputs: Sequence[str | os.PathLike[str]] = (), *,
           follow_symlinks: bool = False) -> Path:
    """The path :class:`AtomicFile` may replace for ``out``, or :class:`CsumValueError` saying why not."""
    path = Path(out)
    try:
        info = path.lstat()
    except FileNotFoundError:
        return path
    if stat.S_ISLNK(info.st_mode):
        if not follow_symlinks:
            raise _refuse(f"OUT {out} is a symbolic link (to {os.readlink(path)}); give --follow-symlinks to "
                          "replace the file it points to")
        path = Path(os.path.realpath(path))
        try:
            info = path.stat()
        except FileNotFoundError:
            return path
    kind = _kind(info.st_mode)
    if kind is not None:
        raise _refuse(f"OUT {out} is {kind}; csum writes only regular files")
    for name in inputs:
        try:
            same = os.path.samestat(os.stat(name), info)
        except OSError:
            continue
        if same:
            raise _refuse(f"OUT {out} is the input {name}: the input is never modified")
    return path


class AtomicFile:
    """A new file for ``path`` (see the module docstring): ``write``, then ``commit``; leaving the ``with``
    block without committing discards it."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._tmp: str | None = None
        self._raw: io.BufferedWriter | None = None
        self._out: io.BufferedWriter | gzip.GzipFile | None = None

    def __enter__(self) -> AtomicFile:
        fd, self._tmp = tempfile.mkstemp(dir=self.path.parent, prefix=f".{self.path.name}.", suffix=".tmp")
        self._raw = os.fdopen(fd, "wb")
        self._out = (gzip.GzipFile(filename=self.path.name[:-3], mode="wb", fileobj=self._raw, mtime=0)
                     if self.path.name.endswith(".gz") else self._raw)
        return self

    def write(self, data: bytes) -> None:
        """Append ``data`` to the new file."""
        self._out.write(data)  # type: ignore[union-attr]

    def commit(self) -> None:
        """Flush and fsync the new file, give it the old file's mode, and rename it over the target."""
        assert self._raw is not None and self._tmp is not None
        if self._out is not self._raw:
            self._out.close()  # type: ignore[union-attr]
        self._raw.flush()
        os.fsync(self._raw.fileno())
        try:
            old = self.path.stat()
        except FileNotFoundError:
            umask = os.umask(0)
            os.umask(umask)
            os.fchmod(self._raw.fileno(), 0o666 & ~umask)
        else:
            if os.geteuid() == 0:
                os.fchown(self._raw.fileno(), old.st_uid, old.st_gid)
            os.fchmod(self._raw.fileno(), stat.S_IMODE(old.st_mode))
        self._raw.close()
        os.replace(self._tmp, self.path)
        self._tmp = None
        directory = os.open(self.path.parent, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._tmp is None:
            return
        try:
            if self._out is not None and self._out is not self._raw:
                try:
                    self._out.close()
                except (OSError, ValueError):
                    pass
            if self._raw is not None:
                self._raw.close()
        finally:
            try:
                os.unlink(self._tmp)
            except FileNotFoundError:
                pass
            self._tmp = None
