"""Real kernels of other architectures as the judge: the answers of Debian's kernels booted under QEMU.

Every file in tests/vectors/qemu/ was written by ``csum kernel-check --qemu ...
--save-vectors`` from one boot (header: Debian package, version, .deb sha256,
the qemu command, uname, CPU features, JIT). Each line is the kernel's own
answer (bpf_csum_diff through BPF_PROG_TEST_RUN with the buffers' addresses
mod 8 as measured in the guest; bpf_l3/l4_csum_replace return code and packet),
never csum's. The suite replays them against the emulation on every run.
The boot itself is tested only when CSUM_QEMU_BOOT=1 and a kernel is cached.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import csum
from csum.errors import Code
from csum.kernel.qemu import check, guest
from csum.kernel.qemu.check import Observation
from csum.kernel.qemu.plan import DiffCase

VECTORS = sorted((Path(__file__).parents[1] / "vectors" / "qemu").glob("*.txt"))


def _load(path: Path) -> tuple[check.VectorFile, csum.Profile]:
    vf = check.read_vectors(path)
    return vf, csum.profile(vf.header["profile"], kernel=vf.header["kernel"])


def test_there_are_vectors_from_at_least_three_foreign_arches():
    """Boots of armhf, ppc64el and more are committed (the issue's 'done when')."""
    machines = {check.read_vectors(p).header["uname"].split()[-1] for p in VECTORS}
    assert {"armv7l", "ppc64le"} <= machines and len(machines - {"x86_64"}) >= 3


@pytest.mark.parametrize("path", VECTORS, ids=[p.stem for p in VECTORS])
def test_emulation_gives_the_booted_kernels_answers(path):
    """Every answer of the booted kernel equals the emulation of the profile its header names."""
    vf, prof = _load(path)
    kind = vf.header["csum_diff"]
    bad = [(o, check.emulate(prof, kind, o)) for o in vf.observations if not check.agrees(prof, kind, o)[0]]
    assert not bad, f"{len(bad)} of {len(vf.observations)} disagree, first: {bad[0]}"
    assert len(vf.observations) >= 500


def _aligned(o: Observation) -> Observation:
    return Observation(o.jit, o.case, o.value)


@pytest.mark.parametrize("path", [p for p in VECTORS if p.stem in ("armhf-7.2", "ppc64el-7.2",
                                                                     "riscv64-7.2-slow-unaligned")],
                         ids=lambda p: p.stem)
def test_homogenized_answers_depend_on_the_address(path):
    """On armhf, ppc64el and riscv64 (slow unaligned access) some answers are only reproduced at the measured
    addresses, not assuming aligned buffers."""
    vf, prof = _load(path)
    assert vf.header["csum_diff"] == "homogenized"
    diffs = [o for o in vf.observations if isinstance(o.case, DiffCase)]
    wrong_if_aligned = [o for o in diffs if check.emulate(prof, "homogenized", _aligned(o))[0] != o.value]
    assert len(wrong_if_aligned) >= 10
    assert all(o.frm_align or o.to_align for o in wrong_if_aligned)


@pytest.mark.parametrize("path", [p for p in VECTORS if check.read_vectors(p).header["csum_diff"] == "legacy"],
                         ids=lambda p: p.stem)
def test_legacy_answers_never_depend_on_the_address(path):
    """The legacy helper copies into its scratch buffer: the answers are those at address 0 mod 8."""
    vf, prof = _load(path)
    for o in vf.observations:
        if isinstance(o.case, DiffCase):
            assert check.emulate(prof, "legacy", _aligned(o))[0] == o.value


def _cached_kernel(arch: str) -> Path | None:
    for pattern in (f"kernels/*_{arch}/boot/vmlinu[xz]-*", f"kernels/*_{arch}/usr/lib/modules/*/vmlinu[xz]"):
        found = sorted(guest.cache_dir().glob(pattern))
        if found:
            return found[-1]
    return None


@pytest.mark.parametrize("arch", ["armhf", "ppc64el", "mips64el", "mipsel", "loong64"])
def test_boot_a_cached_kernel(arch):
    """A short real boot (40 cases) agrees with the emulation; needs CSUM_QEMU_BOOT=1, qemu and a cached kernel."""
    if os.environ.get("CSUM_QEMU_BOOT") != "1":
        pytest.skip("set CSUM_QEMU_BOOT=1 to boot cached kernels under QEMU (CI neither downloads nor boots)")
    a = guest.arch(arch)
    kernel = _cached_kernel(a.debian)
    if kernel is None:
        pytest.skip(f"no {arch} kernel cached under {guest.cache_dir()} (csum kernel-check --debian unstable {arch})")
    try:
        guest.qemu_version(a)
        guest.build_runner(a)  # the cross gcc, or (loong64 on Debian 12) clang-19 with Debian's loong64 libc
    except csum.CsumValueError as exc:
        if exc.code not in (Code.NO_QEMU, Code.NO_COMPILER):
            raise
        pytest.skip(str(exc))
    report, obs = check.kernel_check_qemu(arch, kernel, n=40, n_replace=15, seed=3, timeout=600)
    assert report.ok, report.format_text()
    assert len(obs) >= 2 * 40


def test_riscv64_slow_unaligned_needs_the_c_folded_misaligned_path():
    """Debian's 7.2.13 riscv64 kernel with unaligned_scalar_speed=slow: riscv64-zbb (Zbb fold on misaligned
    buffers too) gets 120 answers wrong; riscv64-zbb-cfold-misaligned gets none (the test above)."""
    vf = check.read_vectors(Path(__file__).parents[1] / "vectors" / "qemu" / "riscv64-7.2-slow-unaligned.txt")
    zbb = csum.profile("riscv64-zbb", kernel="7.2")
    wrong = [o for o in vf.observations if not check.agrees(zbb, "homogenized", o)[0]]
    assert sum(len(o.jit.split(",")) for o in wrong) == 120
    assert all(isinstance(o.case, DiffCase) and (o.frm_align % 8 or o.to_align % 8) for o in wrong)


@pytest.mark.parametrize("stem", ["mips64el-6.1", "mipsel-6.1"])
def test_mips_kernels_are_not_generic(stem):
    """Debian bookworm's malta kernels (legacy helper): the mips profiles give all 2,404 answers; generic
    (lib/checksum.c, what MIPS R6 builds) gets 514 of them wrong, all bpf_csum_diff answers (csum_partial.S
    returns an unfolded 32-bit sum); its l3/l4 replace answers (MIPS's own csum_fold) are generic's."""
    vf = check.read_vectors(Path(__file__).parents[1] / "vectors" / "qemu" / f"{stem}.txt")
    assert vf.header["csum_diff"] == "legacy" and vf.header["qemu"].startswith("QEMU emulator version")
    generic = csum.profile("generic", kernel="6.1")
    wrong = [o for o in vf.observations if not check.agrees(generic, "legacy", o)[0]]
    assert sum(len(o.jit.split(",")) for o in wrong) == 514
    assert all(isinstance(o.case, DiffCase) for o in wrong)
    assert any(o.value > 0xFFFF for o in wrong)


def test_loong64_kernel_is_generic():
    """Debian unstable's 7.2.13 loong64 kernel (QEMU 10.0.2, the runner built by clang-19 against Debian's loong64
    libc): loongarch64 and generic give all 5,336 answers (arch/loongarch/lib/csum.c, arm64's do_csum:
    lib/checksum.c's bits); the profiles of the unfolded-sum arches get some of its 0x0000-vs-0xffff answers
    wrong (x86_64 268, mipsel 212)."""
    vf = check.read_vectors(Path(__file__).parents[1] / "vectors" / "qemu" / "loong64-7.2.txt")
    assert vf.header["csum_diff"] == "homogenized" and vf.header["uname"].endswith("loongarch64")
    assert vf.header["command"] == "csum kernel-check --debian unstable loong64 --n 2000 --seed 1"
    assert vf.header["runner"].startswith("Debian clang version 19") and "libc6-dev" in vf.header["runner"]
    assert sum(len(o.jit.split(",")) for o in vf.observations) == 5336

    def wrong(name: str) -> int:
        prof = csum.profile(name, kernel="7.2")
        return sum(len(o.jit.split(",")) for o in vf.observations if not check.agrees(prof, "homogenized", o)[0])
    assert wrong("generic") == 0 and wrong("x86_64") == 268 and wrong("mipsel") == 212
