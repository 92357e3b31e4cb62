"""``csum prog --debian``: a user's program on Debian's real kernels booted under QEMU, replayed on every run.

tests/vectors/qemu-prog/ holds the console logs of two runs of ``csum prog xdp_ttl_csum_diff.o --debian ...
--save-vectors`` on the same 200 frames: Debian bookworm (6.1) amd64, arm64, armhf, i386, mips64el, mipsel,
ppc64el and s390x (big-endian: the object built with clang -target bpfeb, given with --object-be), trixie (6.12)
amd64, arm64 and riscv64, unstable (7.2) amd64 and arm64 (examples/bpf/xdp_ttl_csum_diff.c: TTL decremented, the IPv4
header checksum recomputed with bpf_csum_diff and folded once); its xdp_fwd/ and tc_nat_no_pseudo/ hold those
examples on x86_64 6.1 and 7.2 (a seeded map and global; a tc program's CHECKSUM_COMPLETE runs). Each file's header
names the kernel package and its sha256, the qemu command and how the loader was built; its IN lines are the input
frames, its RES and CPL lines each kernel's own answers (BPF_PROG_TEST_RUN in the guest). Expected verdicts come
from scapy recomputing every output's checksums, from the kernels' CHECKSUM_COMPLETE answers and from the bytes the
kernels stored, never from csum's model; csum's judgement and its helper models are tested against them. The boot
itself runs only with CSUM_QEMU_BOOT=1 and the kernel cached (CI neither downloads nor boots).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import jsonschema
import pytest
from scapy.compat import raw
from scapy.layers.inet import IP
from scapy.layers.l2 import Ether

from csum import cli, schemas
from csum.errors import Code, CsumValueError
from csum.kernel import differ
from csum.kernel.prog import judge_run
from csum.kernel.qemu import guest, loader
from csum.kernel.qemu import prog as qprog

VECTORS = Path(__file__).parents[1] / "vectors" / "qemu-prog"
FILES = sorted(VECTORS.glob("*.txt"))
#: The example's program as its guests ran it (the object's bytes are not needed to judge recorded outputs).
PREP = qprog.Prepared("xdp_ttl_csum_diff.o", b"", "ttl_csum_diff", "xdp", "xdp", 0, (), (), None,
                      {"bpf_csum_diff": frozenset({0})})


def _log(path: Path) -> qprog.GuestLog:
    return qprog.parse_log(path.read_text())


def _kernel(path: Path) -> differ.KernelResult:
    return qprog.replay(path, PREP.evidence)


def _scapy_wrong(frame: bytes) -> bool:
    """scapy: the IPv4 header checksum stored in ``frame`` differs from the one it computes from scratch."""
    pkt = Ether(frame)
    if IP not in pkt:
        return False
    again = Ether(frame)
    del again[IP].chksum
    return pkt[IP].chksum != Ether(raw(again))[IP].chksum


def test_the_recorded_boots():
    """Fourteen boots of ten architectures and three releases, each with all 200 packets (the same frames)
    answered."""
    logs = {p.stem: _log(p) for p in FILES}
    assert sorted((lg.machine, lg.release) for lg in logs.values()) == [
        ("aarch64", "6.1.0-50-arm64"), ("aarch64", "6.12.117+deb13-arm64"), ("aarch64", "7.2.13+deb14-arm64"),
        ("armv7l", "6.1.0-50-armmp"), ("i686", "6.1.0-50-686-pae"), ("loongarch64", "7.2.13+deb14-loong64"),
        ("mips", "6.1.0-50-4kc-malta"),
        ("mips64", "6.1.0-50-5kc-malta"), ("ppc64le", "6.1.0-50-powerpc64le"),
        ("riscv64", "6.12.117+deb13-riscv64"), ("s390x", "6.1.0-50-s390x"), ("x86_64", "6.1.0-50-amd64"),
        ("x86_64", "6.12.117+deb13-amd64"), ("x86_64", "7.2.13+deb14-amd64")]
    assert len({tuple(sorted(lg.inputs.items())) for lg in logs.values()}) == 1
    for lg in logs.values():
        assert lg.loaded == 0 and lg.done and len(lg.inputs) == 200 and set(lg.results) == set(lg.inputs)
        assert lg.header["package"].startswith("linux-") and len(lg.header["deb sha256"]) == 64


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_csum_judges_each_guest_output_as_scapy_does(path):
    """The packets csum calls broken are exactly those whose stored IPv4 header checksum scapy's differs from."""
    log = _log(path)
    runs = qprog.judge_log(PREP, sorted(log.inputs.items()), log)
    by_csum = {i for i, r in runs.items() if r.broken}
    by_scapy = {i for i, (_, out) in log.results.items() if _scapy_wrong(out) and not _scapy_wrong(log.inputs[i])}
    assert by_csum == by_scapy


def test_which_kernels_break_the_single_fold():
    """From the kernels' outputs (scapy's verdict): 17 of 88 rewritten packets break on every little-endian legacy
    kernel but arm64's and riscv64's (x86_64 6.1 and Debian's 6.12, i386, armhf, mips64el, mipsel and ppc64el 6.1),
    41 on riscv64 6.12 (Zbb: its csum_partial returns 0xffffXXXX for sums >= 0x8000), 19 on big-endian s390x 6.1,
    none on 7.2 (loong64's too) nor on arm64; the bpf_csum_diff probes say legacy on 6.1 and 6.12, homogenized on 7.2."""
    found = {}
    for path in FILES:
        log = _log(path)
        changed = sum(out != log.inputs[i] for i, (_, out) in log.results.items())
        wrong = sum(_scapy_wrong(out) for _, out in log.results.values())
        found[(log.machine, log.release.split("+")[0].split("-")[0])] = (changed, wrong, log.csum_diff_kind)
    assert found == {("x86_64", "6.1.0"): (88, 17, "legacy"), ("x86_64", "6.12.117"): (88, 17, "legacy"),
                     ("x86_64", "7.2.13"): (88, 0, "homogenized"), ("aarch64", "6.1.0"): (88, 0, "legacy"),
                     ("aarch64", "6.12.117"): (88, 0, "legacy"), ("aarch64", "7.2.13"): (88, 0, "homogenized"),
                     ("armv7l", "6.1.0"): (88, 17, "legacy"), ("i686", "6.1.0"): (88, 17, "legacy"),
                     ("ppc64le", "6.1.0"): (88, 17, "legacy"), ("mips64", "6.1.0"): (88, 17, "legacy"),
                     ("mips", "6.1.0"): (88, 17, "legacy"), ("riscv64", "6.12.117"): (88, 41, "legacy"),
                     ("s390x", "6.1.0"): (88, 19, "legacy"), ("loongarch64", "7.2.13"): (88, 0, "homogenized")}


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_each_kernels_helper_model_gives_its_outputs(path):
    """csum's bpf_csum_diff model of the kernel (profile and release, legacy or homogenized as probed), folded once
    as the program does, gives the checksum every rewritten packet got from the real kernel (stored in the kernel's
    byte order; riscv64's profile chosen by the guest's /proc/cpuinfo and riscv_hwprobe, as kernel-check does)."""
    k = _kernel(path)
    helper = k.helper()
    assert helper is not None
    log = _log(path)
    checked = 0
    for i, (_, out) in log.results.items():
        if out == log.inputs[i]:
            continue
        header = out[14:24] + b"\0\0" + out[26:34]
        csum = helper(b"", header, 0)
        once = ~((csum & 0xFFFF) + (csum >> 16)) & 0xFFFF
        assert out[24:26] == once.to_bytes(2, k.byteorder()), i  # type: ignore[arg-type]
        checked += 1
    assert checked == 88


def test_differences_are_the_lost_carries():
    """The packets whose output differs between the eleven kernels are those whose stored bytes differ, and each
    cause is reproduced by the replay, naming the kernels whose bpf_csum_diff is unfolded."""
    eleven = [p for p in FILES if not p.stem.startswith(("riscv64", "s390x", "loong64"))]
    kernels = [_kernel(p) for p in eleven]
    logs = [_log(p) for p in eleven]
    differing = {i for i in logs[0].inputs if len({lg.results[i][1] for lg in logs}) > 1}
    found = differ.differences(kernels, PREP.evidence)
    assert {d.index for d in found} == differing and len(differing) == 17
    for d in found:
        assert d.field == "ipv4 checksum at 24" and len(d.values) == 11
        assert d.cause.startswith("reproduced: the program sums the ipv4 header with bpf_csum_diff and folds")
        assert ("on x86_64 6.1.0-50-amd64, x86_64 6.12.117+deb13-amd64, armv7l 6.1.0-50-armmp, i686 6.1.0-50-686-pae, "
                "mips64 6.1.0-50-5kc-malta, mips 6.1.0-50-4kc-malta, ppc64le 6.1.0-50-powerpc64le (legacy) it returns") \
            in d.cause
        assert "unfolded here on x86_64, armv7l, i686, mips64, mips, ppc64le, folded on aarch64" in d.cause


def test_riscv64_and_s390x_differences_are_reproduced_too():
    """With riscv64 6.12 (Zbb), big-endian s390x 6.1 and loong64 7.2 beside the eleven, 58 packets differ (the stored bytes say
    so) and every cause is reproduced by the replay, each naming riscv64 or s390x where their sums lose the carry."""
    kernels = [_kernel(p) for p in FILES]
    logs = [_log(p) for p in FILES]
    differing = {i for i in logs[0].inputs if len({lg.results[i][1] for lg in logs}) > 1}
    found = differ.differences(kernels, PREP.evidence)
    assert {d.index for d in found} == differing and len(differing) == 58
    assert all(d.cause.startswith("reproduced") and len(d.values) == 14 for d in found)
    assert sum("riscv64 6.12.117+deb13-riscv64 (legacy) it returns 0xffff" in d.cause for d in found) == 41


def test_a_difference_the_replay_does_not_give_is_not_claimed():
    """Swap one kernel's output for another value: the replay no longer gives it, and the cause says so."""
    kernels = [_kernel(p) for p in FILES[:2]]
    index = next(i for i in sorted(kernels[0].runs) if kernels[0].runs[i].changed)
    run = kernels[0].runs[index]
    bent = run.packet[:24] + bytes([run.packet[24] ^ 0x10]) + run.packet[25:]
    kernels[0].runs[index] = judge_run("xdp", _log(FILES[0]).inputs[index], 2, bent, None, PREP.evidence)
    found = [d for d in differ.differences(kernels, PREP.evidence) if d.index == index]
    assert found and found[0].cause.startswith("not reproduced")


FWD = sorted((VECTORS / "xdp_fwd").glob("*.txt"))
TC = sorted((VECTORS / "tc_nat_no_pseudo").glob("*.txt"))


@pytest.mark.parametrize("path", FWD, ids=[p.stem for p in FWD])
def test_a_seeded_map_and_global_reach_the_guest(path):
    """examples/bpf/xdp_fwd.c with ``--map backends=`` {0.0.0.0: 192.0.2.80} and ``--global drop_unknown=1`` on
    x86_64 6.1 and 7.2: scapy reads the kernel's outputs: exactly the IPv4 packets to 0.0.0.0 (no options) come
    out to 192.0.2.80 with XDP_TX, every other is XDP_DROP; with the global unset they would pass (XDP_PASS), with
    the map empty none would be rewritten. csum finds none broken, as scapy's recomputed checksums say."""
    log = _log(path)
    assert log.status == {"PROG xdp_fwd": 0, "INIT xdp_fwd.rodata": 0, "MAP backends": 0} and log.loaded == 0
    kernel = qprog.replay(path)
    for i, frame in log.inputs.items():
        retval, out = log.results[i]
        pkt = Ether(frame)
        to_backend = IP in pkt and pkt[IP].dst == "0.0.0.0" and pkt[IP].ihl == 5
        assert retval == (3 if to_backend else 1), i  # XDP_TX, XDP_DROP
        if to_backend:
            assert Ether(out)[IP].dst == "192.0.2.80" and not _scapy_wrong(out)
        assert not kernel.runs[i].broken
    assert kernel.summary.line() == "31 of 200 packets changed, 169 dropped, 0 broken"


@pytest.mark.parametrize("path", TC, ids=[p.stem for p in TC])
def test_the_guests_checksum_complete_verdict_is_csums(path):
    """examples/bpf/tc_nat_no_pseudo.c (SNAT without BPF_F_PSEUDO_HDR) on x86_64 6.1 and 7.2: the kernel's own
    CHECKSUM_COMPLETE run (BPF_F_TEST_SKB_CHECKSUM_COMPLETE, which Debian's 6.1.176 has too) says EBADMSG on 73
    packets; csum's skb->csum verdict is broken on exactly those, and the missing flag is reproduced on each (with the
    object's instructions unread, two other mistakes that give the same bytes are not ruled out)."""
    log = _log(path)
    stale = {i for i, rc in log.complete.items() if rc == -74}
    assert len(stale) == 73 and set(log.complete.values()) == {0, -74}
    kernel = qprog.replay(path)
    assert {i for i, r in kernel.runs.items() if any(c.layer == "skb->csum" for c in r.broken)} == stale
    assert dict(kernel.summary.causes)["pseudo-hdr-missing"] == 73


def test_plan_and_log_round_trip():
    """The plan names the object, program, seeds and packets; a log's lines parse back to the same log."""
    prep = qprog.Prepared("x.o", b"", "p", "tc", "tc", 3, (("x.rodata", b"\x01\x02"),), (("m", b"\0" * 4, b"\7"),),
                          bytes(192), None)
    plan = qprog.plan_text(prep, [(5, b"\xaa\xbb")]).splitlines()
    assert plan == ["obj /x.o", "prog p 3", "init x.rodata 0102", "load", "map m 00000000 07",
                    f"ctx {'00' * 192}", "pkt 5 aabb"]
    log = _log(FILES[0])
    again = qprog.parse_log("\n".join(log.lines()))
    assert (again.uname, again.probe, again.results, again.loaded) == (log.uname, log.probe, log.results, log.loaded)


def test_a_program_that_does_not_load_is_that_kernels_finding():
    """The loader's LOAD -errno and libbpf's log become the kernel's finding, naming the helper it lacks."""
    text = ("UNAME Linux|6.1.0-50-amd64|#1|x86_64\nPROBE -22\nOPEN 0\nPROG p 0\nLOAD -22\n"
            "LOG libbpf: prog 'p': BPF program load failed: Invalid argument\nLOG unknown func bpf_foo#999\nDONE\n")
    assert qprog.load_error(qprog.parse_log(text), "p") == "does not load on 6.1.0-50-amd64: unknown func bpf_foo#999"
    assert qprog.load_error(qprog.parse_log("UNAME Linux|6.1|#1|x86_64\nOPEN 0\n"), "p").startswith(
        "the loader never reached the load")


def test_complete_run_answers():
    """A tc program's CHECKSUM_COMPLETE run: 0 fresh, -EBADMSG stale, -EINVAL (no flag before 6.11) not judged."""
    frame = bytes.fromhex(FILES[0].read_text().split("IN 0 ")[1].split()[0])
    prep = qprog.Prepared("x.o", b"", "p", "tc", "tc", 0, (), (), None, None)
    for rc, stale in ((0, False), (-74, True), (-22, None)):
        log = qprog.parse_log(f"RES 0 0 {frame.hex()}\nCPL 0 {rc}\n")
        assert qprog.judge_log(prep, [(0, frame)], log)[0].stale is stale


def test_unknown_architecture_and_misplaced_options_are_usage_errors(capsys):
    """One line naming the argument, exit 2, nothing booted."""
    assert cli.main(["prog", "x.o", "--debian", "bookworm", "vax"]) == 2
    err = capsys.readouterr().err.strip()
    assert "--debian bookworm vax: unknown architecture" in err and "\n" not in err
    assert cli.main(["prog", "x.o", "--save-vectors", "d"]) == 2
    assert "--save-vectors applies to --debian and --qemu runs" in capsys.readouterr().err
    assert cli.main(["prog", "x.o", "--qemu", "amd64"]) == 2
    assert "--qemu ARCH and --kernel IMAGE go together" in capsys.readouterr().err
    assert cli.main(["prog", "x.o", "--qemu", "amd64", "--kernel", "no-such-image"]) == 2
    assert "--kernel: no-such-image is not a file" in capsys.readouterr().err
    assert cli.main(["prog", "x.o", "--debian", "bookworm", "amd64", "--save-vectors", "no-such-dir"]) == 2
    assert "--save-vectors: no-such-dir is not a directory" in capsys.readouterr().err


def test_a_missing_cross_compiler_names_its_package(monkeypatch):
    """Without aarch64-linux-gnu-gcc the error is one line naming Debian's gcc-aarch64-linux-gnu."""
    monkeypatch.setattr(loader.shutil, "which", lambda name: None)
    with pytest.raises(CsumValueError) as err:
        loader.build_loader(guest.arch("arm64"))
    assert err.value.code == Code.NO_COMPILER and "gcc-aarch64-linux-gnu" in str(err.value)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("first,boots", [("QEMU emulator version 7.2.22 (Debian 1:7.2+dfsg-7+deb12u18)", False),
                                         ("QEMU emulator version 10.0.2 (Debian 1:10.0.2+ds-2+deb13u1~bpo12+1)", True)])
def test_loong64_boots_only_on_qemu_10(monkeypatch, tmp_path, first, boots):
    """Debian's loong64 kernel is an EFI zboot image that QEMU 7.2 (Debian 12's) cannot load on the loongarch virt
    machine and QEMU 10.0.2 (bookworm-backports', which booted tests/vectors/qemu-prog/loong64-*.txt) boots: with the
    first line of ``qemu-system-loongarch64 --version`` as Debian's packages print it, 7.2 is refused in one line
    naming the version needed and where it comes from, before any loader is built; 10.0 goes on to build it."""
    import subprocess

    monkeypatch.setattr(guest.shutil, "which", lambda name: "/usr/bin/" + name)
    monkeypatch.setattr(guest.subprocess, "run",
                        lambda *a, **k: subprocess.CompletedProcess(a[0], 0, first + "\nCopyright", ""))

    def built(a):
        raise CsumValueError("loader reached", code=Code.NO_COMPILER)

    monkeypatch.setattr(qprog, "build_loader", built)
    prep = qprog.Prepared("x.o", b"", "p", "xdp", "xdp", 0, (), (), None, None)
    with pytest.raises(CsumValueError) as err:
        qprog.boot("loong64", tmp_path / "vmlinuz", prep, [])
    if boots:
        assert str(err.value) == "loader reached"
    else:
        assert err.value.code == Code.NO_QEMU and "\n" not in str(err.value)
        assert "7.2.22" in str(err.value) and "QEMU >= 10.0" in str(err.value)
        assert "bookworm-backports qemu-system-misc" in str(err.value)

def _cli_with_recorded_boots(monkeypatch, tmp_path):
    """``csum prog --debian`` with each boot served from the recorded logs (the running kernel runs for real)."""
    from bpf_build import EXAMPLES, compile_bpf, why_not

    if why_not() is not None:
        pytest.skip(str(why_not()))
    obj = compile_bpf(EXAMPLES / "xdp_ttl_csum_diff.c", tmp_path / "xdp_ttl_csum_diff.o")
    logs = {(p.stem.split("-")[0], p.stem.split("-")[1].split(".")[0] + "." + p.stem.split(".")[1]): p
            for p in FILES}

    def fetch(suite, arch):
        release = {"bookworm": "6.1", "trixie": "6.12", "unstable": "7.2"}[suite]
        return guest.DebianKernel(logs[(arch, release)], "linux-image-test", "1", "0" * 64, suite, arch)

    def boot(arch, kernel, prep, frames, **kw):
        log = qprog.parse_log(kernel.read_text())
        assert [f for _, f in frames] == [log.inputs[i] for i in sorted(log.inputs)]
        return qprog.Booted(log, "", [], "recorded", 1.0)

    monkeypatch.setattr(guest, "fetch_debian", fetch)
    monkeypatch.setattr(qprog, "boot", boot)
    pcap = tmp_path / "in.pcap"
    from scapy.utils import wrpcap

    log = _log(FILES[0])
    wrpcap(str(pcap), [Ether(log.inputs[i]) for i in sorted(log.inputs)])
    return str(obj), str(pcap)


def test_cli_json_reports_each_kernel_and_the_differences(monkeypatch, tmp_path, capsys):
    """--json: one entry per kernel with the issue's fields, and the differing packets with values and cause."""
    obj, pcap = _cli_with_recorded_boots(monkeypatch, tmp_path)
    code = cli.main(["prog", obj, "--pcap", pcap, "--debian", "bookworm", "amd64", "--debian", "unstable", "amd64",
                     "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 1
    # the versioned schema (csum/schemas/prog-kernels.json), checked by the jsonschema package
    assert next(iter(doc)) == "schema" and doc["schema"] == "csum.prog-kernels/1"
    jsonschema.Draft202012Validator(schemas.schema("prog-kernels")).validate(doc)
    kernels = {k["kernel"]: k for k in doc["kernels"]}
    assert kernels["6.1.0-50-amd64"]["broken_packets"] == 17 and kernels["7.2.13+deb14-amd64"]["broken_packets"] == 0
    assert kernels["6.1.0-50-amd64"]["csum_diff"] == "legacy" and kernels["6.1.0-50-amd64"]["release"] == "bookworm"
    assert {"arch", "release", "kernel", "packets", "changed", "dropped", "broken_packets", "causes"} <= \
        set(doc["kernels"][0])
    assert len(doc["differs"]) == 17
    assert all(set(d["values"]) >= {"x86_64 6.1.0-50-amd64", "x86_64 7.2.13+deb14-amd64"} for d in doc["differs"])


def test_cli_text_lists_kernels_then_differences(monkeypatch, tmp_path, capsys):
    """Text: a block per kernel, then the packets that differ with the cause."""
    obj, pcap = _cli_with_recorded_boots(monkeypatch, tmp_path)
    assert cli.main(["prog", obj, "--pcap", pcap, "--debian", "bookworm", "amd64", "--show", "1"]) == 1
    out = capsys.readouterr().out
    assert "kernel x86_64 6.1.0-50-amd64 (bookworm amd64" in out and "88 of 200 packets changed, 0 dropped, 17 broken" in out
    assert "17 packets whose output differs between" in out and "reproduced: the program sums the ipv4 header" in out


def test_cli_qemu_kernel_boots_ones_own_image(monkeypatch, tmp_path, capsys):
    """--qemu ARCH --kernel IMAGE: the image's file name and sha256 name the kernel; --save-vectors records it."""
    obj, pcap = _cli_with_recorded_boots(monkeypatch, tmp_path)
    image = FILES[0]
    assert cli.main(["prog", obj, "--pcap", pcap, "--qemu", "x86_64", "--kernel", str(image), "--json",
                     "--save-vectors", str(tmp_path)]) == 1
    doc = json.loads(capsys.readouterr().out)
    booted = doc["kernels"][1]
    assert booted["source"] == f"{image.name} (--kernel)" and booted["release"] is None
    assert booted["broken_packets"] == 17
    saved = qprog.parse_log((tmp_path / "amd64-6.1.0-50-amd64.txt").read_text())
    assert saved.header["command"].endswith(f"--qemu amd64 --kernel {image.name}") and len(saved.inputs) == 200


def test_boot_bookworm_amd64_gives_the_recorded_outputs(tmp_path):
    """A real boot of Debian bookworm's x86_64 6.1 (cached) with the example gives the recorded outputs; needs
    CSUM_QEMU_BOOT=1, qemu-system-x86, libbpf-dev's libbpf.a and clang."""
    if os.environ.get("CSUM_QEMU_BOOT") != "1":
        pytest.skip("set CSUM_QEMU_BOOT=1 to boot cached kernels under QEMU (CI neither downloads nor boots)")
    from bpf_build import EXAMPLES, compile_bpf, why_not

    if why_not() is not None:
        pytest.skip(str(why_not()))
    found = sorted(guest.cache_dir().glob("kernels/linux-image-6.1.*_amd64/boot/vmlinuz-*"))
    if not found:
        pytest.skip(f"no bookworm amd64 kernel cached under {guest.cache_dir()} (csum kernel-check --debian "
                    "bookworm amd64)")
    obj = compile_bpf(EXAMPLES / "xdp_ttl_csum_diff.c", tmp_path / "xdp_ttl_csum_diff.o")
    recorded = _log(VECTORS / "amd64-6.1.0-50-amd64.txt")
    frames = sorted(recorded.inputs.items())[:60]
    booted = qprog.boot("amd64", found[-1], qprog.prepare(str(obj)), frames, timeout=600)
    assert booted.log.probe == -22 and booted.log.loaded == 0
    assert {i: booted.log.results[i] for i, _ in frames} == {i: recorded.results[i] for i, _ in frames}
