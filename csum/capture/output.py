"""Output files that cannot hurt: regular files only, written unseen and renamed into place.

:func:`target` decides where ``csum fix`` may write: a regular file or a name
not yet taken; never a device, FIFO, socket or directory; a symbolic link only
when asked to follow it (then the file it points to is replaced and the link
stays); never one of the inputs, however it is spelled (``..``, symbolic or hard
links); a read-only file only when forced; a name the file system can hold (its NAME_MAX, 255 bytes
on Linux's file systems), refused before anything is read. :class:`AtomicFile` writes the new file in
the target's directory as an unnamed file (``O_TMPFILE``, where the file system has it; else a hidden
``.csum-XXXXXXXX.tmp``, a name that does not grow with the target's), fsyncs it, gives it the mode (and,
for root, the owner) of the file it replaces, then names it and renames it over the target: readers see
the old file or the complete new one; on any error (Ctrl-C included) the target is untouched and no
temporary file is left, and a process killed outright leaves none either (but for the instant between
naming the file and the rename, on file systems without ``O_TMPFILE``). A target ending in ``.gz``,
``.bz2``, ``.xz`` or ``.zst`` (any case) is written compressed in that format (``.zst`` needs the
``[zstd]`` extra, and is refused before anything is written without it).
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import secrets
import stat
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from types import TracebackType
from typing import BinaryIO

from ..errors import Code, CsumValueError
from .source import zstandard

__all__ = ["BY_NAME", "AtomicFile", "compression_of_name", "target", "write_text"]

_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"))


def _refuse(what: str) -> CsumValueError:
    return CsumValueError(what, code=Code.UNSAFE_OUTPUT)


def _kind(mode: int) -> str | None:
    """What a non-regular file is, or None for a regular file."""
    return None if stat.S_ISREG(mode) else next((name for test, name in _KINDS if test(mode)), "not a regular file")


def target(out: str | os.PathLike[str], inputs: Sequence[str | os.PathLike[str]] = (), *,
           follow_symlinks: bool = False, force: bool = False, what: str = "OUT") -> Path:
    """The path :class:`AtomicFile` may replace for ``out``, or :class:`CsumValueError` saying why not; ``force``
    accepts a read-only file; ``what`` names ``out`` in the message."""
    if not os.fspath(out):  # Path("") is ".", the current directory: "OUT  is a directory" before
        raise _refuse(f"{what} is empty: give a file name")
    path = Path(out)
    _check_name(path, out, what)
    try:
        info = path.lstat()
    except FileNotFoundError:
        return path
    except OSError as exc:  # a component that is not a directory, a loop of links, no permission ...
        raise _refuse(f"{what} {out}: {exc.strerror or exc}") from None
    if stat.S_ISLNK(info.st_mode):
        if not follow_symlinks:
            raise _refuse(f"{what} {out} is a symbolic link (to {os.readlink(path)}); give --follow-symlinks to "
                          "replace the file it points to")
        path = Path(os.path.realpath(path))
        _check_name(path, out, what)
        try:
            info = path.stat()
        except FileNotFoundError:
            return path
    kind = _kind(info.st_mode)
    if kind is not None:
        raise _refuse(f"{what} {out} is {kind}; csum writes only regular files")
    for name in inputs:
        try:
            same = os.path.samestat(os.stat(name), info)
        except OSError:
            continue
        if same:
            raise _refuse(f"{what} {out} is the input {name}: the input is never modified")
    if not force and (not info.st_mode & 0o222 or not os.access(path, os.W_OK)):
        raise _refuse(f"{what} {out} is read-only (mode {stat.S_IMODE(info.st_mode):04o}); csum replaces a "
                      "read-only file only when forced (csum fix --force), else make it writable or choose another name")
    return path


def _check_name(path: Path, out: str | os.PathLike[str], what: str) -> None:
    """Refuse a file name longer than its directory's file system holds (NAME_MAX)."""
    size = len(os.fsencode(path.name))
    try:
        limit = os.pathconf(path.parent, "PC_NAME_MAX")
    except (OSError, ValueError):  # the directory does not exist (the write will say so), or no such limit
        limit = 255
    if size > limit:
        raise _refuse(f"{what} {out}: its name is {size} bytes, more than the {limit} the file system holds")


#: File-name suffixes (any case) -> the compression a target so named is written in.
SUFFIXES = {".gz": "gzip", ".bz2": "bzip2", ".xz": "xz", ".zst": "zstd"}


def compression_of_name(name: str) -> str | None:
    """The compression a target named ``name`` is written in by default (by its suffix, any case), or None."""
    lower = name.lower()
    return next((kind for suffix, kind in SUFFIXES.items() if lower.endswith(suffix)), None)


def _compressor(name: str, kind: str | None) -> Callable[[BinaryIO], BinaryIO] | None:
    """How to compress into the file ``name`` in ``kind`` (a csum.capture.source.COMPRESSIONS name), or None to
    write it as it is."""
    if kind == "gzip":
        inner = name[:-3] if name.lower().endswith(".gz") else name
        return lambda raw: gzip.GzipFile(filename=inner, mode="wb", fileobj=raw,  # type: ignore[return-value]
                                         mtime=0)
    if kind == "bzip2":
        return lambda raw: bz2.BZ2File(raw, "wb")  # type: ignore[return-value]
    if kind == "xz":
        return lambda raw: lzma.LZMAFile(raw, "wb", format=lzma.FORMAT_XZ)  # type: ignore[return-value]
    if kind == "zstd":
        module = zstandard(f"OUT {name} ends in .zst" if name.lower().endswith(".zst") else
                           f"OUT {name} is to be zstd, as its input")
        return lambda raw: module.ZstdCompressor(write_checksum=True).stream_writer(raw, closefd=False)
    return None


#: :class:`AtomicFile`'s default ``compression``: the one the target's name says (:func:`compression_of_name`).
BY_NAME = "by-name"


#: Unnamed temporary files: O_TMPFILE (Linux), named at commit through /proc/self/fd.
_UNNAMED = hasattr(os, "O_TMPFILE") and os.path.isdir("/proc/self/fd")


class AtomicFile:
    """A new file for ``path`` (see the module docstring): ``write``, then ``commit``; leaving the ``with``
    block without committing discards it. ``compression``: gzip, bzip2, xz, zstd or None (as it is), instead of the
    one the name says (``fix DIR OUTDIR``: each copy compressed as its input is)."""

    def __init__(self, path: str | os.PathLike[str], compression: str | None = BY_NAME) -> None:
        self.path = Path(path)
        self.compression = compression_of_name(self.path.name) if compression == BY_NAME else compression
        self._fd: int | None = None
        self._tmp: str | None = None  # the temporary file's name, once it has one
        self._raw: io.BufferedWriter | None = None
        self._out: BinaryIO | None = None

    def __enter__(self) -> AtomicFile:
        compress = _compressor(self.path.name, self.compression)
        directory = str(self.path.parent)
        if _UNNAMED:
            try:
                self._fd = os.open(directory, os.O_WRONLY | os.O_TMPFILE | os.O_CLOEXEC, 0o600)
            except OSError:  # a file system without O_TMPFILE (EOPNOTSUPP): a named temporary below
                pass
        if self._fd is None:
            self._fd, self._tmp = tempfile.mkstemp(dir=directory, prefix=".csum-", suffix=".tmp")
        self._raw = os.fdopen(self._fd, "wb", closefd=False)
        self._out = self._raw if compress is None else compress(self._raw)
        return self

    def write(self, data: bytes) -> None:
        """Append ``data`` to the new file."""
        self._out.write(data)  # type: ignore[union-attr]

    def commit(self) -> None:
        """Flush and fsync the new file, give it the old file's mode, and rename it over the target."""
        assert self._raw is not None and self._fd is not None
        if self._out is not self._raw:
            self._out.close()  # type: ignore[union-attr]
        self._raw.flush()
        fd = self._fd
        os.fsync(fd)
        try:
            old = self.path.stat()
        except FileNotFoundError:
            umask = os.umask(0)
            os.umask(umask)
            os.fchmod(fd, 0o666 & ~umask)
        else:
            if os.geteuid() == 0:
                os.fchown(fd, old.st_uid, old.st_gid)
            os.fchmod(fd, stat.S_IMODE(old.st_mode))
        directory = os.open(self.path.parent, os.O_RDONLY | os.O_DIRECTORY)
        try:
            if self._tmp is None:
                self._tmp = self._name(fd, directory)
            os.replace(self._tmp, self.path)
            self._tmp = None
            self._close()
            os.fsync(directory)
        finally:
            os.close(directory)

    def _name(self, fd: int, directory: int) -> str:
        """Give the unnamed file a hidden name beside the target: linkat(2) of /proc/self/fd/N, following it."""
        while True:
            name = f".csum-{secrets.token_hex(4)}.tmp"
            try:
                os.link(f"/proc/self/fd/{fd}", name, dst_dir_fd=directory, follow_symlinks=True)
                return str(self.path.parent / name)
            except FileExistsError:
                continue

    def _close(self) -> None:
        raw, fd, self._raw, self._fd = self._raw, self._fd, None, None
        try:
            if raw is not None:
                raw.close()
        finally:
            if fd is not None:
                os.close(fd)

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._fd is None and self._tmp is None:
            return
        try:
            if self._out is not None and self._out is not self._raw:
                try:
                    self._out.close()
                except (OSError, ValueError):
                    pass
            try:
                self._close()
            except OSError:
                pass
        finally:
            if self._tmp is not None:
                try:
                    os.unlink(self._tmp)
                except FileNotFoundError:
                    pass
                self._tmp = None


def write_text(path: str | os.PathLike[str], text: str, what: str) -> None:
    """Write ``text`` to ``path`` as csum fix writes OUT (:func:`target`, :class:`AtomicFile`: a regular file,
    replaced atomically); ``what`` names the option or argument in the error (CsumValueError)."""
    try:
        with AtomicFile(target(path)) as out:
            out.write(text.encode())
            out.commit()
    except OSError as exc:
        raise CsumValueError(f"{what}: cannot write {path}: {exc.strerror or exc}") from None
    except ValueError as exc:  # target's refusal (a CsumValueError) among them
        raise CsumValueError(f"{what}: {exc}", code=getattr(exc, "code", Code.BAD_VALUE)) from None
