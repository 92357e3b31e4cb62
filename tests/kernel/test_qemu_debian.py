"""csum/kernel/qemu/debian.py: a package's .deb, checked against the archive's SHA256, and extracted once.

Independent sources: ``apt-cache show``'s fields as Debian's archive writes them
(Version, Architecture, SHA256, Depends; the entry below is the unstable loong64
libc6-dev the committed loong64 boot's runner was linked with), Python's hashlib
for the digest of the bytes, and ``dpkg-deb --build`` for a real .deb to extract.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess

import pytest

import csum
from csum.errors import Code
from csum.kernel.qemu import debian

SHOW = """Package: libc6-dev
Source: glibc
Version: 2.43-7
Architecture: loong64
Depends: libc6 (= 2.43-7), libc-dev-bin (= 2.43-7), linux-libc-dev
Filename: pool/main/g/glibc/libc6-dev_2.43-7_loong64.deb
SHA256: {sha256}
"""


def _show(monkeypatch, sha256: str) -> list[tuple[str, ...]]:
    """debian.apt answering ``apt-cache show`` with SHOW; returns the calls it got (a download would be one)."""
    calls: list[tuple[str, ...]] = []

    def fake(suite, arch, *args, cwd=None):
        calls.append(args)
        return SHOW.format(sha256=sha256) if args[0] == "apt-cache" else ""
    monkeypatch.setattr(debian, "apt", fake)
    return calls


def test_download_checks_the_archive_sha256(monkeypatch, tmp_path):
    """A cached .deb whose bytes hash to the archive's SHA256 is taken (no download); other bytes are refused."""
    monkeypatch.setenv("CSUM_CACHE", str(tmp_path))
    (tmp_path / "debs").mkdir()
    deb = tmp_path / "debs" / "libc6-dev_2.43-7_loong64.deb"
    deb.write_bytes(b"!<arch>\nthe package")
    calls = _show(monkeypatch, hashlib.sha256(deb.read_bytes()).hexdigest())
    got = debian.download("unstable", "loong64", "libc6-dev")
    assert (got.path, got.version, got.depends) == (deb, "2.43-7", ("libc6", "libc-dev-bin", "linux-libc-dev"))
    assert got.describe() == f"libc6-dev 2.43-7 (sha256 {hashlib.sha256(deb.read_bytes()).hexdigest()})"
    assert [c[0] for c in calls] == ["apt-cache"]
    _show(monkeypatch, "0" * 64)
    with pytest.raises(csum.CsumValueError, match="has sha256 .*, the unstable archive says 0000") as err:
        debian.download("unstable", "loong64", "libc6-dev")
    assert err.value.code == Code.APT_FAILED


def test_extract_unpacks_once_and_names_the_packages(monkeypatch, tmp_path):
    """dpkg-deb -x of a .deb built by dpkg-deb --build; the tree's manifest names it; a second call reuses it."""
    if shutil.which("dpkg-deb") is None:
        pytest.skip("dpkg-deb is not installed")
    pkg = tmp_path / "pkg"
    (pkg / "DEBIAN").mkdir(parents=True)
    (pkg / "DEBIAN" / "control").write_text("Package: t\nVersion: 1\nArchitecture: all\nMaintainer: t <t@t>\n"
                                            "Description: t\n")
    (pkg / "usr" / "include").mkdir(parents=True)
    (pkg / "usr" / "include" / "t.h").write_text("#define T 1\n")
    subprocess.run(["dpkg-deb", "--build", "--root-owner-group", str(pkg), str(tmp_path / "t_1_all.deb")],
                   check=True, capture_output=True)
    deb = debian.Deb(tmp_path / "t_1_all.deb", "t", "1", "ab", "unstable", "loong64")
    tree = debian.extract([deb], tmp_path / "tree")
    assert (tree / "usr" / "include" / "t.h").read_text() == "#define T 1\n"
    assert (tree / debian.MANIFEST).read_text() == "t 1 (sha256 ab)\n"
    (tree / "usr" / "include" / "t.h").write_text("kept")
    assert debian.extract([deb], tmp_path / "tree") == tree and (tree / "usr" / "include" / "t.h").read_text() == "kept"


def test_update_refreshes_lists_older_than_the_max_age(monkeypatch, tmp_path):
    """``apt-get update`` runs the first time, not again while the lists are younger than LISTS_MAX_AGE, and again
    once they are older (their stamp's mtime set back by hand)."""
    import os
    import time

    monkeypatch.setenv("CSUM_CACHE", str(tmp_path))
    calls: list[tuple[str, ...]] = []
    monkeypatch.setattr(debian, "apt", lambda suite, arch, *args, cwd=None: calls.append(args) or "")
    debian.update("bookworm", "amd64")
    debian.update("bookworm", "amd64")
    assert calls == [("apt-get", "update")]
    old = time.time() - debian.LISTS_MAX_AGE - 1
    os.utime(tmp_path / "apt" / "bookworm-amd64" / "updated", (old, old))
    debian.update("bookworm", "amd64")
    assert calls == [("apt-get", "update")] * 2
    debian.update("trixie", "amd64")  # another suite has lists of its own
    assert len(calls) == 3
