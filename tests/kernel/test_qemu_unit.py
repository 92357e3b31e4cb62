"""csum/qemu (the fast layer, no boot): initramfs, BPF program encoding, plan, log parsing, detection.

Independent sources: the ``cpio`` tool (GNU cpio) reads the initramfs; the
running kernel (BPF_PROG_TEST_RUN through :mod:`csum.kernel`, itself checked
against the kernel's selftest vectors) answers the same cases as the runner
built natively; include/uapi/linux/bpf.h's ``struct bpf_insn`` layout for the
big-endian encoding; real console lines from the boots of tests/vectors/qemu.
"""

from __future__ import annotations

import gzip
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

import csum
from csum import kernel
from csum.kernel.qemu import check, guest, plan, programs

RUNNER_ONLY_LOG = """\
[    0.000000] Booting Linux on physical CPU 0x0
CSUM-RUNNER 1
UNAME Linux|7.2.13+deb14-armmp|#1 SMP Debian 7.2.13-1 (2026-10-28)|armv7l
CPU processor\t: 0
CPU model name\t: ARMv7 Processor rev 0 (v7l)
CPU CPU part\t: 0xc0f
JIT 1
JIT-SET 0 0
PROG pkt 0
PROG l3 -13
LOG 0: R1=ctx() R10=fp0
RES 0:probe 0 0 0 3255023682 3255024322 640 \r
RES 0:d1 0 65535 0 3255023682 325502[   12.3] random kernel line
ERR 0:d2 -14
RES 0:r0 0 54 8355 1 2 0 3a6d51de
DONE
"""


def test_initramfs_is_read_by_the_cpio_tool(tmp_path):
    """GNU cpio lists the archive: /init (0755 file), /plan.txt, /dev/console (char device 5,1)."""
    if shutil.which("cpio") is None:
        pytest.skip("the cpio tool is not installed")
    blob = guest.initramfs(b"\x7fELF-runner", "jit 1\n")
    listing = subprocess.run(["cpio", "-itv"], input=blob, capture_output=True, check=True).stdout.decode()
    lines = {line.split()[-1]: line for line in listing.splitlines()}
    assert set(lines) == {"dev", "dev/console", "proc", "init", "plan.txt"}
    assert lines["init"].startswith("-rwxr-xr-x")
    assert lines["dev/console"].startswith("crw-------") and "5,   1" in lines["dev/console"]
    out = tmp_path / "x"
    out.mkdir()
    subprocess.run(["cpio", "-id", "--no-absolute-filenames", "init", "plan.txt"], input=blob, cwd=out,
                   capture_output=True, check=True)
    assert (out / "init").read_bytes() == b"\x7fELF-runner" and (out / "plan.txt").read_text() == "jit 1\n"


def test_read_cpio_round_trip_and_rejects_garbage():
    """read_cpio gives back names, modes, data and device numbers; a non-newc blob is a clear error."""
    files = guest.read_cpio(guest.initramfs(b"abc", "plan"))
    assert files["init"] == (0o100755, b"abc", (0, 0))
    assert files["dev/console"][2] == (5, 1)
    with pytest.raises(csum.CsumValueError, match="not a newc cpio"):
        guest.read_cpio(b"garbage" * 20)


def _zboot(payload: bytes, method: bytes, size: int | None = None) -> bytes:
    """An EFI zboot image laid out as drivers/firmware/efi/libstub/zboot-header.S describes it."""
    head = b"MZ\0\0zimg" + struct.pack("<II", 64, len(payload) if size is None else size) + bytes(8)
    return (head + method.ljust(8, b"\0")).ljust(64, b"\0") + payload


def test_unpack_zboot_gives_the_payload(tmp_path, monkeypatch):
    """An EFI zboot kernel (Debian's loong64 one is zstd) becomes its payload, compressed by Python's gzip
    module or the zstandard package (the independent source); a plain image is booted as it is."""
    monkeypatch.setenv("CSUM_CACHE", str(tmp_path / "cache"))
    kernel = b"MZ\0\0" + bytes(range(256)) * 40
    (tmp_path / "gz").write_bytes(_zboot(gzip.compress(kernel), b"gzip"))
    assert guest.unpack_zboot(tmp_path / "gz").read_bytes() == kernel
    plain = tmp_path / "vmlinux"
    plain.write_bytes(b"\x7fELF" + bytes(60))
    assert guest.unpack_zboot(plain) == plain
    (tmp_path / "cut").write_bytes(_zboot(b"x" * 10, b"gzip", size=11))
    with pytest.raises(csum.CsumValueError, match="outside the 74-byte file"):
        guest.unpack_zboot(tmp_path / "cut")
    (tmp_path / "lz").write_bytes(_zboot(b"x" * 10, b"lzma"))
    with pytest.raises(csum.CsumValueError, match="'lzma' is not gzip or zstd"):
        guest.unpack_zboot(tmp_path / "lz")
    zstandard = pytest.importorskip("zstandard")
    (tmp_path / "zst").write_bytes(_zboot(zstandard.ZstdCompressor().compress(kernel), b"zstd"))
    assert guest.unpack_zboot(tmp_path / "zst").read_bytes() == kernel


def test_big_endian_insns_follow_the_uapi_layout():
    """struct bpf_insn on big-endian: code, then dst_reg in the HIGH nibble, off and imm big-endian."""
    le = struct.pack("<BBhi", 0xB7, (2 << 4) | 1, -3, 0x12345678)  # dst 1, src 2
    assert programs.to_order(le, "big") == bytes([0xB7, 0x12]) + struct.pack(">hi", -3, 0x12345678)
    assert programs.to_order(le, "little") == le


def test_plan_lines_and_case_packets():
    """Each case becomes one `run` line per JIT mode; programs are loaded after every `jit` line."""
    cases = plan.make_cases(80, 10, seed=5)
    text = plan.plan_text(cases, "little")
    lines = text.splitlines()
    assert lines[0] == "jit 0" and lines.count("jit 1") == 1
    assert sum(line.startswith("prog ") for line in lines) == 2 * (3 + len(plan.STACK_SKEWS))
    runs = [line for line in lines if line.startswith("run ")]
    assert len(runs) == 2 * len(cases)
    first = next(c for c in cases if isinstance(c, plan.DiffCase) and c.to)
    pkt = first.packet()
    assert pkt[first.to_off:first.to_off + len(first.to)] == first.to and len(pkt) == programs.PACKET_SIZE
    assert plan.make_cases(80, 10, seed=5) == cases  # reproducible


def test_parse_log_skips_mangled_lines():
    """Kernel lines interleaved with the runner's are ignored; a mangled RES line counts as missing."""
    log = plan.parse_log(RUNNER_ONLY_LOG)
    assert log.release == "7.2.13+deb14-armmp" and log.machine == "armv7l" and log.done
    assert log.jit_initial == "1" and log.jit_set == {"0": 0} and log.progs == {"pkt": 0, "l3": -13}
    assert log.verifier_log == ["0: R1=ctx() R10=fp0"]
    assert set(log.results) == {"0:probe", "0:r0"} and log.errors == {"0:d2": -14}
    assert log.results["0:r0"].data == bytes.fromhex("3a6d51de")


def test_detect_profile_from_the_guest():
    """uname -m and /proc/cpuinfo pick the profile: armv7l -> arm; riscv64 with _zbb in isa -> riscv64-zbb."""
    log = plan.parse_log(RUNNER_ONLY_LOG)
    assert check.detect_profile(log, "little") == "arm" and check.csum_diff_kind(log) == "homogenized"
    rv = plan.GuestLog(uname=("Linux", "7.2.13+deb14-riscv64", "#1", "riscv64"),
                       cpuinfo=["isa\t\t: rv64imafdch_zicbom_zicboz_zicntr_zba_zbb_zbc_zbs_sstc"])
    assert check.detect_profile(rv, "little") == "riscv64-zbb-cfold-misaligned"  # no hwprobe answer: not known fast
    rv.hwprobe[9] = 3  # RISCV_HWPROBE_MISALIGNED_SCALAR_FAST
    assert check.detect_profile(rv, "little") == "riscv64-zbb-fast-unaligned"
    assert check.detect_profile(plan.GuestLog(uname=("Linux", "6.1.0", "#1", "riscv64"),
                                              cpuinfo=["isa\t\t: rv64imafdc"]), "little") == "riscv64"
    s390 = plan.GuestLog(uname=("Linux", "7.2", "#1", "s390x"), cpuinfo=["features\t: esan3 zarch stfle msa"])
    assert check.detect_profile(s390, "big") == "s390x" and check.cpu_features(s390)["vector facility (vx)"] == "no"
    assert check.release_version("7.2.13+deb14-armmp") == "7.2"


def test_detect_profile_on_mips_needs_the_byte_order():
    """Both MIPS byte orders say ``mips`` (uname lines of the bookworm malta boots: ``mips`` for the 4kc-malta
    mipsel kernel, ``mips64`` for the 5kc-malta mips64el one); the guest's order picks the profile, and a
    big-endian ``mips64`` (no profile) is not taken for the little-endian one."""
    def guest(machine: str) -> plan.GuestLog:
        return plan.GuestLog(uname=("Linux", "6.1.0-50-malta", "#1", machine), cpuinfo=["cpu model\t\t: MIPS 5KE V0.0"])
    assert check.detect_profile(guest("mips"), "little") == "mipsel"
    assert check.detect_profile(guest("mips"), "big") == "mips"
    assert check.detect_profile(guest("mips64"), "little") == "mips64el"
    assert check.detect_profile(guest("mips64"), "big") == "mips64"  # the machine itself: profile() refuses it
    assert check.cpu_features(guest("mips64"))["cpu model"] == "MIPS 5KE V0.0"


def test_arch_table_and_errors():
    """Every listed architecture has its qemu binary named; an unknown one is a one-line error."""
    assert set(guest.ARCHES) == {"armhf", "arm64", "ppc64el", "riscv64", "s390x", "amd64", "i386", "mips64el",
                                 "mipsel", "loong64"}
    assert guest.arch("aarch64").debian == "arm64" and guest.arch("ppc64le").debian == "ppc64el"
    assert guest.arch("loongarch64").debian == "loong64"
    with pytest.raises(csum.CsumValueError, match="unknown architecture 'mips64'"):
        guest.arch("mips64")  # big-endian 64-bit MIPS: Debian has no such port, and it is not mips64el
    with pytest.raises(csum.CsumValueError, match="unknown architecture 'vax'"):
        guest.arch("vax")
    cmd = guest.qemu_command(guest.arch("s390x"), Path("k"), Path("i"))
    assert "max,vx=off" in cmd and cmd[-1].startswith("console=ttysclp0")
    assert guest.qemu_command(guest.arch("loong64"), Path("k"), Path("i"))[-1].endswith("initcall_blacklist=i8042_init")
    malta = guest.qemu_command(guest.arch("mipsel"), Path("k"), Path("i"))
    assert malta[malta.index("-vga") + 1] == "none"  # malta's default Cirrus VGA needs a ROM file (qemu-system-data)


@pytest.fixture(scope="module")
def host_runner(tmp_path_factory):
    if not kernel.available():
        pytest.skip(f"the running kernel's BPF helpers are unavailable: {kernel.why_unavailable()}")
    if shutil.which("gcc") is None:
        pytest.skip("gcc is not installed")
    out = tmp_path_factory.mktemp("runner") / "runner"
    src = out.with_suffix(".c")
    src.write_bytes(guest.runner_source())
    subprocess.run(["gcc", "-O2", "-o", str(out), str(src)], check=True, capture_output=True)
    return out


def test_runner_on_this_kernel_agrees_with_csum_kernel(host_runner, tmp_path):
    """The runner, built natively and run as a plain process, gets the running kernel's own answers.

    Expected values: csum.kernel (the same kernel through Python's bpf(2) path), not the emulation.
    """
    cases = plan.make_cases(150, 60, seed=11)
    (tmp_path / "plan.txt").write_text(plan.plan_text(cases, "little", jit_modes=("1",)))
    out = subprocess.run([str(host_runner), str(tmp_path / "plan.txt")], capture_output=True, text=True, check=True)
    log = plan.parse_log(out.stdout)
    obs, missing = check.observations(log, cases)
    assert missing == 0 and len(obs) == len(cases)
    for o in obs:
        c = o.case
        if isinstance(c, plan.DiffCase):
            assert o.value == kernel.bpf_csum_diff(c.frm, c.to, c.seed), c
        else:
            fn = kernel.l3_csum_replace if c.helper == "l3" else kernel.l4_csum_replace
            assert (o.value, o.data) == fn(c.packet, c.offset, c.frm, c.to, c.flags), c
    seen = {(o.frm_align, o.to_align) for o in obs if isinstance(o.case, plan.DiffCase) and o.case.where == "pkt"}
    assert len(seen) > 40  # the measured addresses cover most of the 64 alignment pairs


def test_evaluate_reports_a_mismatch_as_a_reproducible_case():
    """A wrong kernel answer (flipped here) is reported with a `csum diff` command that reproduces the call."""
    case = plan.DiffCase("d1", "pkt", b"\xff" * 8, b"", 0, 0, programs.TO_BASE)
    text = ("CSUM-RUNNER 1\nUNAME Linux|7.2.13|#1|ppc64le\n"
            "RES 0:probe 0 0 0 64 704 640\n"
            "RES 0:d1 0 0 0 66 704 640\n")  # from at 66 = 2 mod 8: the kernel gives 0xffff there, not 0
    probe = plan.DiffCase("probe", "pkt", b"\0", b"", 0, 0, programs.TO_BASE)
    report = check.evaluate(plan.parse_log(text), [probe, case], arch="ppc64el", kernel_image="x")
    assert not report.ok and len(report.mismatches) == 1
    m = report.mismatches[0]
    assert m.kernel == "0x0" and m.emulated == "0xffff" and "@2 mod 8" in m.call
    assert m.reproduce == ("csum diff --profile powerpc64le --from 'ffffffffffffffff' --to '' --seed 0x0 "
                           "--from-align 2 --to-align 0")
    assert report.alignment_dependent == 1
