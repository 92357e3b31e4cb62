"""csum/capture/output.py: where fix may write, and atomic replacement (POSIX file semantics are the reference)."""

from __future__ import annotations

import os
import stat

import pytest

from csum.capture.output import AtomicFile, target
from csum.errors import CsumValueError


def test_target_accepts_new_and_regular_files_only(tmp_path):
    """A new name or a regular file is accepted; FIFO, device (os.mknod in tmp), directory refused."""
    assert target(tmp_path / "new") == tmp_path / "new"
    (tmp_path / "f").write_bytes(b"x")
    assert target(tmp_path / "f") == tmp_path / "f"
    os.mkfifo(tmp_path / "p")
    os.mknod(tmp_path / "d", stat.S_IFCHR | 0o600, os.makedev(1, 3))
    for name, what in (("p", "a FIFO"), ("d", "a character device"), ("", "a directory")):
        with pytest.raises(CsumValueError, match=what):
            target(tmp_path / name)


def test_target_symlinks_and_inputs(tmp_path):
    """A symlink is refused unless followed (then its target, even a dangling one, is returned); an input,
    reached through a symlink or a hard link, is refused."""
    src = tmp_path / "in"
    src.write_bytes(b"x")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    with pytest.raises(CsumValueError, match="symbolic link"):
        target(tmp_path / "dangling")
    assert target(tmp_path / "dangling", follow_symlinks=True) == tmp_path / "nowhere"
    (tmp_path / "sym").symlink_to(src)
    os.link(src, tmp_path / "hard")
    for out in ("sym", "hard"):
        with pytest.raises(CsumValueError, match="is the input"):
            target(tmp_path / out, [src], follow_symlinks=True)


def test_atomic_file_keeps_mode_and_leaves_nothing_on_error(tmp_path):
    """commit() replaces the file keeping its mode; an exception before commit leaves the old file and no temp."""
    path = tmp_path / "out"
    path.write_bytes(b"old")
    os.chmod(path, 0o604)
    with AtomicFile(path) as out:
        out.write(b"new")
        out.commit()
    assert path.read_bytes() == b"new" and stat.S_IMODE(path.stat().st_mode) == 0o604
    with pytest.raises(KeyboardInterrupt):
        with AtomicFile(path) as out:
            out.write(b"partial")
            raise KeyboardInterrupt
    with AtomicFile(path) as out:
        out.write(b"never committed")
    assert path.read_bytes() == b"new" and os.listdir(tmp_path) == ["out"]
