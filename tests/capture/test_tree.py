"""csum/capture/tree.py: the captures under a directory, found by their magic bytes, in sorted order.

Expected values: which files are captures is decided by how this test wrote them (tests/captures.py writes pcap and
pcapng from the format drafts; the modified-pcap magic a1b2cd34 is libpcap's sf-pcap.c list; compression by Python's
gzip, bz2, lzma and zstandard); where tshark is installed, each uncompressed or gzip file found must be one tshark
opens and each text file one it refuses. The order expected is Python's sort of the relative paths split at ``/``.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
import shutil
import struct
import subprocess

import pytest
from captures import pcap_bytes, pcapng_bytes
from hypothesis import given, settings
from hypothesis import strategies as st
from scapy.all import IP, UDP, Ether, raw

from csum.capture.tree import captures
from csum.errors import Code, CsumValueError

FRAME = raw(Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") / IP(src="192.0.2.1", dst="192.0.2.2") / UDP())
PCAP = pcap_bytes([FRAME])


def _zstd(data: bytes) -> bytes:
    zstandard = pytest.importorskip("zstandard")
    return zstandard.ZstdCompressor().compress(data)


#: relative path -> (bytes, whether a capture); no name says what a file is.
FILES = {
    "le.pcap": (PCAP, True),
    "be": (pcap_bytes([FRAME], endian=">"), True),
    "nano/x.bin": (pcap_bytes([FRAME], nano=True), True),
    "nano/y.bin": (pcap_bytes([FRAME], endian=">", nano=True), True),
    "modified.dat": (struct.pack("<IHHiIII", 0xA1B2CD34, 2, 4, 0, 0, 65535, 1), True),
    "ng/a.pcapng": (pcapng_bytes([(1, FRAME, len(FRAME))]), True),
    "z/cap.txt": (gzip.compress(PCAP), True),
    "z/b": (bz2.compress(PCAP), True),
    "z/x": (lzma.compress(PCAP), True),
    "notes.pcap": (b"GET / HTTP/1.1\r\n", False),
    "empty.pcap": (b"", False),
    "z/log.gz": (gzip.compress(b"a log, not a capture\n"), False),
    "z/tiny": (b"\xd4\xc3", False),
}


@pytest.fixture
def tree(tmp_path):
    for rel, (data, _) in FILES.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(data)
    (tmp_path / "z/cap.zst").write_bytes(_zstd(PCAP))
    return tmp_path


def _sorted(rels):
    return sorted(rels, key=lambda r: r.split("/"))


def test_captures_are_found_by_magic_in_sorted_order(tree):
    """Every pcap variant, pcapng, and gzip/bzip2/xz/zstd of a pcap is found whatever its name; text, an empty
    file, a gzip of text and a 2-byte file are skipped and counted; paths come sorted component by component."""
    found = captures(tree)
    expected = _sorted([rel for rel, (_, yes) in FILES.items() if yes] + ["z/cap.zst"])
    assert found.files == expected
    assert found.skipped == sum(not yes for _, yes in FILES.values()) and found.links == 0
    assert found.paths() == [os.path.join(tree, rel) for rel in expected]


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark is not installed")
def test_tshark_opens_what_is_found_and_refuses_what_is_skipped(tree):
    """tshark -r (libwiretap, which reads pcap, pcapng and gzip) opens every uncompressed or gzip capture found, and
    refuses the text file csum skipped."""
    found = set(captures(tree).files)
    for rel in ["le.pcap", "be", "nano/x.bin", "ng/a.pcapng", "z/cap.txt", "notes.pcap"]:
        ok = subprocess.run(["tshark", "-r", str(tree / rel), "-c", "1"], capture_output=True, timeout=60)
        assert (ok.returncode == 0) == (rel in found), (rel, ok.stderr)


def test_symbolic_links_are_not_followed_unless_asked(tree, tmp_path_factory):
    """A link to a directory of captures and a link to a capture: counted and skipped by default (find without -L);
    followed with follow_symlinks (the linked capture found under both names)."""
    other = tmp_path_factory.mktemp("elsewhere")
    (other / "far.pcap").write_bytes(PCAP)
    (tree / "linked").symlink_to(other, target_is_directory=True)
    (tree / "alias").symlink_to(tree / "le.pcap")
    plain = captures(tree)
    assert plain.links == 2 and "linked/far.pcap" not in plain.files and "alias" not in plain.files
    followed = captures(tree, follow_symlinks=True)
    assert followed.links == 0 and followed.files == _sorted([*plain.files, "linked/far.pcap", "alias"])


def test_a_loop_of_links_is_one_error(tree):
    """A link back to an ancestor directory, and a link to itself (ELOOP), followed: CsumValueError bad-tree naming
    the link; not followed, each is one more link skipped."""
    (tree / "nano" / "up").symlink_to(tree, target_is_directory=True)
    assert captures(tree).links == 1
    with pytest.raises(CsumValueError, match=r"nano/up is a loop of symbolic links") as info:
        captures(tree, follow_symlinks=True)
    assert info.value.code == Code.BAD_TREE
    (tree / "nano" / "up").unlink()
    (tree / "self").symlink_to(tree / "self")
    with pytest.raises(CsumValueError, match=r"cannot follow .*self: Too many levels of symbolic links"):
        captures(tree, follow_symlinks=True)


def test_fifos_are_skipped_never_opened(tree):
    """A FIFO in the tree would block a reader forever: it is counted as skipped without being opened."""
    os.mkfifo(tree / "pipe")
    assert captures(tree).skipped == sum(not yes for _, yes in FILES.values()) + 1


def test_a_missing_root_is_one_error(tmp_path):
    """A directory that does not exist: bad-tree naming it."""
    with pytest.raises(CsumValueError, match=r"cannot read the directory .*/gone: No such file") as info:
        captures(tmp_path / "gone")
    assert info.value.code == Code.BAD_TREE


@settings(max_examples=50, deadline=None)
@given(st.lists(st.text(alphabet="ab.-_/", min_size=1, max_size=8), min_size=1, max_size=8, unique=True))
def test_the_order_is_the_sorted_relative_paths(names):
    """Any set of nested names: the captures come in the order of their relative paths sorted component by
    component (Python's sort of the split paths), whatever order the file system lists them in."""
    import tempfile

    rels = set()
    with tempfile.TemporaryDirectory() as root:
        for name in names:
            parts = [p for p in name.split("/") if p not in ("", ".", "..")]
            if not parts:
                continue
            path = os.path.join(root, *parts)
            if any(os.path.isfile(os.path.join(root, *parts[:k])) for k in range(1, len(parts) + 1)) or \
                    os.path.isdir(path):
                continue
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as f:
                f.write(PCAP)
            rels.add("/".join(parts))
        assert captures(root).files == _sorted(rels)
