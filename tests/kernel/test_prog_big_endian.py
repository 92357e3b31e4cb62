"""``csum prog --debian RELEASE s390x``: how a big-endian kernel gets the object (``--object-be``, clang -target
bpfeb), and what it says without one; the loader's libraries where bookworm has no port (riscv64, loong64).

The ELF facts are checked against binutils' readelf reading the objects clang built; s390x's recorded answers
(tests/vectors/qemu-prog/s390x-6.1.0-50-s390x.txt) are the guest's own. The boot itself runs only with
CSUM_QEMU_BOOT=1 and the kernel cached.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from csum import cli
from csum.errors import Code, CsumValueError
from csum.kernel.qemu import guest, loader, toolchain
from csum.kernel.qemu import prog as qprog

VECTORS = Path(__file__).parents[1] / "vectors" / "qemu-prog"
S390X = VECTORS / "s390x-6.1.0-50-s390x.txt"


def _objects(tmp_path: Path) -> tuple[Path, Path]:
    """examples/bpf/xdp_ttl_csum_diff.c built for little- and big-endian kernels (skipped without clang or the
    big-endian kernel headers)."""
    from bpf_build import BE_INCLUDE, EXAMPLES, compile_bpf

    if shutil.which("clang") is None or not Path("/usr/include/bpf/bpf_helpers.h").exists():
        pytest.skip("clang and libbpf-dev's headers are needed to build the objects")
    if not (BE_INCLUDE / "asm" / "byteorder.h").exists():
        pytest.skip(f"no big-endian kernel headers in {BE_INCLUDE} (Debian package linux-libc-dev-s390x-cross)")
    src = EXAMPLES / "xdp_ttl_csum_diff.c"
    return compile_bpf(src, tmp_path / "le.o"), compile_bpf(src, tmp_path / "be.o", big_endian=True)


def _readelf(path: Path) -> tuple[str, str]:
    if shutil.which("readelf") is None:
        pytest.skip("binutils' readelf is not installed")
    head = subprocess.run(["readelf", "-h", str(path)], capture_output=True, text=True, check=True).stdout
    fields = dict(line.strip().split(":", 1) for line in head.splitlines() if ":" in line)
    return fields["Data"].strip(), fields["Machine"].strip()


def test_object_be_takes_only_a_big_endian_bpf_object(tmp_path):
    """readelf says which object is big-endian BPF; --object-be takes exactly that one, and says why not the
    others (one line)."""
    le, be = _objects(tmp_path)
    assert _readelf(be) == ("2's complement, big endian", "Linux BPF")
    assert _readelf(le) == ("2's complement, little endian", "Linux BPF")
    assert qprog.read_object_be(str(be)) == be.read_bytes()
    with pytest.raises(CsumValueError, match=r"is not a big-endian BPF object \(build it with clang -target bpfeb\)"):
        qprog.read_object_be(str(le))
    text = tmp_path / "x.o"
    text.write_text("not an object")
    for path, why in ((text, "is not an ELF object"), (tmp_path / "missing.o", "cannot read")):
        with pytest.raises(CsumValueError, match=why) as err:
            qprog.read_object_be(str(path))
        assert err.value.code == Code.BAD_VALUE and "\n" not in str(err.value)


def test_a_big_endian_kernel_without_its_object_is_that_kernels_finding(tmp_path):
    """No --object-be: s390x is not booted (the kernel image is never opened) and its finding says what it needs;
    with seeds encoded little-endian it is refused as well, never passed."""
    le, be = _objects(tmp_path)
    frames = [(0, bytes(60))]
    nowhere = tmp_path / "no-kernel"
    booted = qprog.boot("s390x", nowhere, qprog.prepare(str(le)), frames)
    assert qprog.load_error(booted.log, "ttl_csum_diff") == (
        "not run on s390x: a big-endian kernel needs a big-endian object (clang -target bpfeb), given with "
        "--object-be FILE")
    assert booted.log.results == {} and booted.command == []
    seeded = qprog.prepare(str(le), object_be=str(be))
    seeded = qprog.Prepared(**{**seeded.__dict__, "ctx": bytes(192)})
    assert qprog.big_endian_finding(seeded, "s390x").startswith(
        "not run on s390x: --map/--global/--ctx values are encoded little-endian")
    assert qprog.big_endian_finding(qprog.prepare(str(le), object_be=str(be)), "s390x") is None


def test_object_be_is_a_guest_option(capsys):
    """--object-be without --debian/--qemu: one line, exit 2."""
    assert cli.main(["prog", "x.o", "--object-be", "y.o"]) == 2
    assert "--object-be applies to --debian and --qemu runs" in capsys.readouterr().err


def test_the_recorded_s390x_boot_loaded_the_big_endian_object():
    """The s390x guest (big-endian, uname s390x) loaded the object given with --object-be and answered all 200
    packets; its header names that object and the command."""
    log = qprog.parse_log(S390X.read_text())
    assert log.machine == "s390x" and log.loaded == 0 and len(log.results) == 200
    assert log.header["command"].endswith("--debian bookworm s390x --object-be xdp_ttl_csum_diff.o")
    assert qprog.replay(S390X).byteorder() == "big"


def test_where_bookworm_has_no_port_the_libraries_come_from_unstable(monkeypatch):
    """riscv64 and loong64 link unstable's static libraries with clang-19/lld-19 and unstable's libc; without them
    the error is one line naming the Debian packages. The other architectures keep bookworm's and their cross gcc."""
    assert {a: loader.suite(a) for a in guest.ARCHES} == {
        **{a: "bookworm" for a in guest.ARCHES}, "riscv64": "unstable", "loong64": "unstable"}
    assert toolchain.SYSROOT_SUITE == "unstable"
    monkeypatch.setattr(loader.shutil, "which", lambda name: None)
    for name in ("riscv64", "loong64"):
        with pytest.raises(CsumValueError) as err:
            loader.build_loader(guest.arch(name))
        assert err.value.code == Code.NO_COMPILER and "apt-get install clang-19 lld-19" in str(err.value)
        assert "\n" not in str(err.value)
    with pytest.raises(CsumValueError, match=r"s390x-linux-gnu-gcc not found \(Debian package gcc-s390x-linux-gnu\)"):
        loader.build_loader(guest.arch("s390x"))


def test_boot_bookworm_s390x_gives_the_recorded_outputs(tmp_path):
    """A real boot of Debian bookworm's s390x 6.1 (cached) with the big-endian object gives the recorded outputs;
    needs CSUM_QEMU_BOOT=1, qemu-system-misc, gcc-s390x-linux-gnu and clang."""
    if os.environ.get("CSUM_QEMU_BOOT") != "1":
        pytest.skip("set CSUM_QEMU_BOOT=1 to boot cached kernels under QEMU (CI neither downloads nor boots)")
    le, be = _objects(tmp_path)
    found = sorted(guest.cache_dir().glob("kernels/linux-image-6.1.*_s390x/boot/vmlinuz-*"))
    if not found:
        pytest.skip(f"no bookworm s390x kernel cached under {guest.cache_dir()} (csum kernel-check --debian "
                    "bookworm s390x)")
    recorded = qprog.parse_log(S390X.read_text())
    frames = sorted(recorded.inputs.items())[:60]
    booted = qprog.boot("s390x", found[-1], qprog.prepare(str(le), object_be=str(be)), frames, timeout=600)
    assert booted.log.probe == -22 and booted.log.loaded == 0
    assert {i: booted.log.results[i] for i, _ in frames} == {i: recorded.results[i] for i, _ in frames}


def test_without_object_be_s390x_is_reported_and_fails_the_run(monkeypatch, tmp_path, capsys):
    """``csum prog OBJ --debian bookworm s390x --json`` without --object-be: the kernel's entry carries the finding
    and nothing else, no QEMU runs (the kernel is a name only), and the exit status is 1."""
    le, _ = _objects(tmp_path)
    monkeypatch.setattr(guest, "fetch_debian", lambda suite, arch: guest.DebianKernel(
        tmp_path / "no-kernel", "linux-image-test", "1", "0" * 64, suite, arch))
    assert cli.main(["prog", str(le), "--debian", "bookworm", "s390x", "--count", "4", "--json"]) == 1
    import json

    s390x = json.loads(capsys.readouterr().out)["kernels"][1]
    assert s390x["error"].startswith("not run on s390x: a big-endian kernel needs a big-endian object")
    assert s390x["packets"] == 0 and s390x["boot_seconds"] is None


def test_the_docs_architectures_table_is_the_code():
    """docs/other-kernels.md's table of architectures says what guest.ARCHES and loader.suite do, for all ten."""
    page = (Path(__file__).parents[2] / "docs" / "other-kernels.md").read_text()
    table = page.split("### Architectures", 1)[1].split("\n\n", 2)[1]
    rows = {cells[0]: cells for line in table.splitlines()[2:]
            if (cells := [c.strip().strip("`") for c in line.strip("|").split("|")])}
    assert set(rows) == set(guest.ARCHES)
    for name, a in guest.ARCHES.items():
        _, _, qemu, built, libs, order, _ = rows[name]
        assert qemu == " ".join((a.qemu, *a.machine[:4])), name
        assert libs.startswith(loader.suite(name)) and order.strip("*").startswith(a.order)
        assert built == (a.cc if loader.suite(name) == "bookworm" else "clang-19`, `lld-19"), name
