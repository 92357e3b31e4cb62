"""csum/capture/output.py: where fix may write, and atomic replacement (POSIX file semantics are the reference)."""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
import stat
import sys

import pytest

from csum.capture.output import AtomicFile, target
from csum.errors import Code, CsumValueError


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


def _unzstd(blob: bytes) -> bytes:
    return pytest.importorskip("zstandard").ZstdDecompressor().decompressobj().decompress(blob)


#: OUT's suffix -> the format's own decompressor (the reference for what AtomicFile wrote).
DECOMPRESS = {".gz": gzip.decompress, ".bz2": bz2.decompress, ".xz": lzma.decompress, ".zst": _unzstd}


@pytest.mark.parametrize("suffix", list(DECOMPRESS))
def test_out_is_compressed_by_its_suffix(suffix, tmp_path):
    """OUT ending in .gz/.bz2/.xz/.zst (any case): the bytes written, compressed in that format (its own
    decompressor gives them back); any other name is written as it is."""
    data = bytes(range(256)) * 100
    for name in (f"out{suffix}", f"OUT{suffix.upper()}"):
        with AtomicFile(tmp_path / name) as out:
            out.write(data[:1000])
            out.write(data[1000:])
            out.commit()
        blob = (tmp_path / name).read_bytes()
        assert blob != data and DECOMPRESS[suffix](blob) == data
    with AtomicFile(tmp_path / f"out{suffix}.pcap") as out:
        out.write(data)
        out.commit()
    assert (tmp_path / f"out{suffix}.pcap").read_bytes() == data


def test_zst_out_without_zstandard_is_refused_before_anything_is_written(tmp_path, monkeypatch):
    """No zstandard package (a None entry in sys.modules): OUT.zst is refused in one line naming the extra, and no
    file appears."""
    monkeypatch.setitem(sys.modules, "zstandard", None)
    with pytest.raises(CsumValueError) as err:
        with AtomicFile(tmp_path / "out.pcap.zst"):
            pass
    assert err.value.code == Code.MISSING_ZSTD and "linux-csum[zstd]" in str(err.value)
    assert os.listdir(tmp_path) == []


def test_no_named_temporary_while_writing(tmp_path):
    """While the new file is written nothing new appears in the directory (an unnamed O_TMPFILE file where the
    file system has them, as tmpfs and ext4 do): a process killed then leaves nothing behind."""
    path = tmp_path / "out"
    with AtomicFile(path) as out:
        out.write(b"x" * 100000)
        assert os.listdir(tmp_path) == []
        out.commit()
    assert os.listdir(tmp_path) == ["out"] and path.read_bytes() == b"x" * 100000


def test_read_only_out_is_refused_unless_forced(tmp_path):
    """A regular OUT without write permission (mode 0444; root may write it, csum still refuses) is refused,
    naming --force; with force=True it is accepted."""
    path = tmp_path / "ro"
    path.write_bytes(b"keep")
    os.chmod(path, 0o444)
    with pytest.raises(CsumValueError, match=r"read-only \(mode 0444\).*--force"):
        target(path)
    assert target(path, force=True) == path
    os.chmod(path, 0o644)
    assert target(path) == path


def test_out_names_up_to_the_file_systems_limit(tmp_path):
    """Names of 242 to 255 bytes (NAME_MAX, pathconf) are written (the temporary file's name does not grow with
    OUT's); 256 bytes is refused in one line naming the limit, before anything is created."""
    limit = os.pathconf(tmp_path, "PC_NAME_MAX")
    assert limit == 255
    for n in (242, 250, 255):
        path = tmp_path / ("n" * (n - 5) + ".pcap")
        with AtomicFile(target(path)) as out:
            out.write(b"data")
            out.commit()
        assert path.read_bytes() == b"data"
        path.unlink()
    with pytest.raises(CsumValueError, match="256 bytes, more than the 255"):
        target(tmp_path / ("n" * 251 + ".pcap"))
    assert os.listdir(tmp_path) == []
