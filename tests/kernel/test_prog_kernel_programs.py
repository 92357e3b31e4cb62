"""Two programs of the class ``csum prog --debian`` exists for, on Debian's real kernels booted under QEMU, replayed
on every run.

tests/vectors/qemu-prog/xdp_icmp_nat_diff_carry/ and tc_nat_no_mangled0/ hold the console logs of ``csum prog OBJ.o
--pcap ... --debian bookworm amd64 --debian bookworm arm64 --debian unstable amd64 --save-vectors DIR`` (x86_64 6.1,
arm64 6.1, x86_64 7.2), of ``--debian unstable loong64`` (loong64 7.2, QEMU 10.0.2) and of ``--debian trixie riscv64 --debian bookworm s390x --object-be BE.o`` (riscv64 6.12
with Zbb, big-endian s390x 6.1, the object built with clang -target bpfeb):

* examples/bpf/xdp_icmp_nat_diff_carry.c ("a fold pushed across a carry"): an ICMP full NAT adding two
  ``bpf_csum_diff`` results in 32-bit arithmetic before a full fold;
* examples/bpf/tc_nat_no_mangled0.c ("a UDP checksum that becomes 0 after an update"): tc_nat.c's SNAT without
  ``BPF_F_MARK_MANGLED_0`` on the UDP checksum.

The input frames are tests/prog_frames.py's (the header names the draw; a test checks it). Expected verdicts come
from scapy recomputing each output's checksums (tests/prog_frames.scapy_bad) and from the bytes the kernels stored,
never from csum's model; csum's verdicts, its differ and its helper models are tested against them. The running
kernel runs the same objects for real where BPF is available.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether
from scapy.utils import wrpcap

from csum import cli
from csum.kernel import differ
from csum.kernel.qemu import guest
from csum.kernel.qemu import prog as qprog

import prog_frames as pf

VECTORS = Path(__file__).parents[1] / "vectors" / "qemu-prog"
CARRY = sorted((VECTORS / "xdp_icmp_nat_diff_carry").glob("*.txt"))
ZERO = sorted((VECTORS / "tc_nat_no_mangled0").glob("*.txt"))
CARRY_FRAMES = pf.frames([pf.icmp4_echo, pf.icmp4_error, pf.icmp4_echo, pf.udp4], 80, 35)
ZERO_FRAMES = pf.frames([pf.udp4_to_zero, pf.udp4, pf.tcp4], 60, 35)
#: The machine and release of each recorded kernel, as its uname said.
KERNELS = [("aarch64", "6.1.0-50-arm64"), ("loongarch64", "7.2.13+deb14-loong64"), ("riscv64", "6.12.117+deb13-riscv64"), ("s390x", "6.1.0-50-s390x"),
           ("x86_64", "6.1.0-50-amd64"), ("x86_64", "7.2.13+deb14-amd64")]


def _log(path: Path) -> qprog.GuestLog:
    return qprog.parse_log(path.read_text())


def _short(path: Path) -> str:
    log = _log(path)
    return f"{log.machine} {log.release.split('-')[0].split('+')[0]}"


@pytest.mark.parametrize("paths,frames", [(CARRY, CARRY_FRAMES), (ZERO, ZERO_FRAMES)], ids=["carry", "zero"])
def test_the_recorded_boots_ran_the_drawn_frames(paths, frames):
    """Six kernels each, every frame answered; the IN lines are tests/prog_frames.py's draw, as the headers say."""
    logs = [_log(p) for p in paths]
    assert sorted((lg.machine, lg.release) for lg in logs) == KERNELS
    for lg in logs:
        assert lg.loaded == 0 and lg.done and [lg.inputs[i] for i in sorted(lg.inputs)] == frames
        assert set(lg.results) == set(lg.inputs)


def _bad(path: Path) -> dict[int, set[tuple[str, int]]]:
    """scapy: per packet, the checksums of the kernel's output it computes otherwise (and not already so before)."""
    log = _log(path)
    return {i: bad for i, (_, out) in log.results.items()
            if (bad := pf.scapy_bad(log.inputs[i], out) - pf.scapy_bad(log.inputs[i], log.inputs[i]))}


def test_the_carry_breaks_only_where_bpf_csum_diff_is_unfolded():
    """scapy's verdict on the kernels' outputs: the ICMP full NAT rewrites the 60 IPv4 ICMP packets (40 echo, 20
    errors); x86_64 6.1 (legacy, unfolded) stores a wrong IPv4 header checksum in 34 of them, riscv64 6.12 (Zbb:
    0xffffXXXX for sums >= 0x8000) in 27, s390x 6.1 (big-endian, unfolded) in 33, arm64 6.1 (legacy, folded) and
    x86_64 7.2 and loong64 7.2 (homogenized) in none."""
    found = {}
    for path in CARRY:
        log = _log(path)
        changed = sum(out != log.inputs[i] for i, (_, out) in log.results.items())
        bad = _bad(path)
        assert all(b == {("ipv4", 14)} for b in bad.values())
        found[_short(path)] = (changed, len(bad), log.csum_diff_kind)
    assert found == {"x86_64 6.1.0": (60, 34, "legacy"), "aarch64 6.1.0": (60, 0, "legacy"),
                     "x86_64 7.2.13": (60, 0, "homogenized"), "riscv64 6.12.117": (60, 27, "legacy"),
                     "s390x 6.1.0": (60, 33, "legacy"), "loongarch64 7.2.13": (60, 0, "homogenized")}


@pytest.mark.parametrize("path", CARRY + ZERO, ids=[f"{p.parent.name}-{p.stem}" for p in CARRY + ZERO])
def test_csum_judges_each_guest_output_as_scapy_does(path):
    """The packets csum calls broken are exactly those where scapy computes another checksum than the kernel
    stored (a UDP checksum of 0 after the update counts, scapy computing 0xffff there)."""
    kind = "tc" if path in ZERO else "xdp"
    log = _log(path)
    prep = qprog.Prepared(path.name, b"", "p", kind, kind, 0, (), (), None, None)
    runs = qprog.judge_log(prep, sorted(log.inputs.items()), log)
    assert {i for i, r in runs.items() if any(c.layer != "skb->csum" for c in r.broken)} == set(_bad(path))


@pytest.mark.parametrize("path", CARRY, ids=[p.stem for p in CARRY])
def test_each_kernels_helper_model_gives_its_outputs(path):
    """csum's bpf_csum_diff model of each kernel, called as the program calls it (source and destination address,
    the results added in 32 bits, the old checksum added with its carry, folded fully), gives every stored IPv4
    header checksum of the 60 rewritten packets (in the kernel's byte order; riscv64's profile chosen from the guest's
    /proc/cpuinfo)."""
    kernel = qprog.replay(path)
    helper, order = kernel.helper(), kernel.byteorder()
    assert helper is not None
    log = _log(path)
    checked = 0
    for i, (_, out) in log.results.items():
        before = log.inputs[i]
        if out == before:
            continue
        total = (helper(before[26:30], out[26:30], 0) + helper(before[30:34], out[30:34], 0)) & 0xFFFFFFFF
        total += ~int.from_bytes(before[24:26], order) & 0xFFFF  # type: ignore[arg-type]
        while total >> 16:
            total = (total & 0xFFFF) + (total >> 16)
        assert out[24:26] == (~total & 0xFFFF).to_bytes(2, order), i  # type: ignore[arg-type]
        checked += 1
    assert checked == 60


def test_the_differ_names_the_lost_carry():
    """The packets whose stored bytes differ between the six kernels are those x86_64 6.1, riscv64 or s390x broke
    (56), and each cause is reproduced by replaying the two calls with each kernel's model, naming the carry out of
    bit 31; where folding the whole header's sum once gives the same bytes on every kernel too (a different program
    shape), the cause names both, never one alone."""
    kernels = [qprog.replay(p) for p in CARRY]
    logs = [_log(p) for p in CARRY]
    differing = {i for i in logs[0].inputs if len({lg.results[i][1] for lg in logs}) > 1}
    found = differ.differences(kernels, None, logs[0].inputs)
    assert {d.index for d in found} == differing == {i for p in CARRY for i in _bad(p)} and len(differing) == 56
    carry = "the program calls bpf_csum_diff once per rewritten 32-bit word of the ipv4 header (2 calls), adds the " \
        "results in 32-bit arithmetic"
    for d in found:
        assert d.field == "ipv4 checksum at 24" and len(d.values) == 6
        assert d.cause.startswith(f"reproduced: {carry}") or d.cause.startswith(
            "reproduced by either of two program shapes, which these outputs do not tell apart: (1) the program sums "
            f"the ipv4 header with bpf_csum_diff and folds the result once") and f"; or (2) {carry}" in d.cause
        assert "aarch64 6.1.0-50-arm64" in d.cause and "carries out of bit 31" in d.cause
    # without the inputs only the whole-header shape can be replayed: the 3 packets it also gives, the 53 others
    # not reproduced
    alone = [d.cause.split(":")[0] for d in differ.differences(kernels, None)]
    assert alone.count("reproduced") == 3 == sum(d.cause.startswith("reproduced by either") for d in found)
    assert alone.count("not reproduced by replaying bpf_csum_diff with each kernel's model (bpf_csum_diff on x86_64 "
                       "6.1.0-50-amd64") == 53


def test_a_udp_checksum_that_becomes_zero_is_broken_on_every_kernel():
    """tc_nat_no_mangled0 on the six kernels: the 20 UDP datagrams whose checksum, once SNATed, computes to 0 come
    out with 0x0000 ("no checksum", RFC 768; scapy computes 0xffff), the same bytes on every kernel; csum calls
    exactly those broken, with the missing BPF_F_MARK_MANGLED_0 reproduced on each, and no packet differs."""
    kernels = [qprog.replay(p) for p in ZERO]
    for path, kernel in zip(ZERO, kernels):
        log = _log(path)
        zeroed = {i for i, (_, out) in log.results.items()
                  if UDP in Ether(out) and Ether(out)[UDP].chksum == 0 and Ether(log.inputs[i])[UDP].chksum != 0}
        assert zeroed == set(range(0, 60, 3)) == set(_bad(path))
        assert all(Ether(log.results[i][1])[IP].src == pf.NEW4 for i in zeroed)
        assert {i for i, r in kernel.runs.items() if r.broken} == zeroed
        assert dict(kernel.summary.causes) == {"udp0-not-mangled": 20}
    assert differ.differences(kernels, None, _log(ZERO[0]).inputs) == []


def _compiled(tmp_path: Path, name: str) -> Path:
    from bpf_build import EXAMPLES, compile_bpf, why_not

    if why_not() is not None:
        pytest.skip(str(why_not()))
    return compile_bpf(EXAMPLES / f"{name}.c", tmp_path / f"{name}.o")


@pytest.mark.parametrize("name,paths", [("xdp_icmp_nat_diff_carry", CARRY), ("tc_nat_no_mangled0", ZERO)])
def test_the_running_kernel_gives_the_homogenized_kernels_bytes(tmp_path, name, paths):
    """The running kernel (BPF_PROG_TEST_RUN here) stores the bytes Debian's x86_64 7.2 stored (both homogenized)
    for every frame; skipped without root, BPF or clang."""
    from csum import kernel
    from csum.kernel import prog

    obj = _compiled(tmp_path, name)
    if kernel.running_profile().csum_diff_kind != "homogenized":
        pytest.skip("the running kernel's bpf_csum_diff is not the homogenized one")
    log = _log(next(p for p in paths if "7.2" in p.stem))
    with prog.load(str(obj)) as program:
        for i, frame in sorted(log.inputs.items()):
            run = program.run(frame)
            assert (run.retval, run.packet) == log.results[i], i


def test_cli_names_the_carry_across_kernels(monkeypatch, tmp_path, capsys):
    """``csum prog xdp_icmp_nat_diff_carry.o --debian bookworm amd64 --debian bookworm arm64 --json`` with the boots
    served from the recordings: 34 broken on x86_64 6.1, none on arm64, and the 34 differing packets' causes
    reproduced."""
    obj = _compiled(tmp_path, "xdp_icmp_nat_diff_carry")
    by_arch = {p.stem.split("-")[0]: p for p in CARRY if "6.1.0" in p.stem}

    def fetch(suite, arch):
        return guest.DebianKernel(by_arch[arch], "linux-image-test", "1", "0" * 64, suite, arch)

    def boot(arch, kernel, prep, frames, **kw):
        return qprog.Booted(_log(kernel), "", [], "recorded", 1.0)

    monkeypatch.setattr(guest, "fetch_debian", fetch)
    monkeypatch.setattr(qprog, "boot", boot)
    pcap = tmp_path / "in.pcap"
    wrpcap(str(pcap), [Ether(f) for f in CARRY_FRAMES])
    assert cli.main(["prog", str(obj), "--pcap", str(pcap), "--debian", "bookworm", "amd64", "--debian", "bookworm",
                     "arm64", "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    booted = {k["kernel"]: k["broken_packets"] for k in doc["kernels"][1:]}
    assert booted == {"6.1.0-50-amd64": 34, "6.1.0-50-arm64": 0}
    carried = [d for d in doc["differs"] if "x86_64 6.1.0-50-amd64" in d["values"]]
    assert len({d["index"] for d in carried}) == 34
    assert all(d["cause"].startswith("reproduced") and "carries out of bit 31" in d["cause"] for d in carried)


def test_a_carry_the_replay_does_not_give_is_not_claimed():
    """Bend x86_64 6.1's stored checksum of one differing packet: the two-call replay no longer gives it, and the
    cause says "not reproduced"."""
    from csum.kernel.prog import judge_run

    kernels = [qprog.replay(p) for p in CARRY]
    inputs = _log(CARRY[0]).inputs
    index = min(_bad(CARRY[0]))
    run = kernels[0].runs[index]
    bent = run.packet[:24] + bytes([run.packet[24] ^ 0x10]) + run.packet[25:]
    kernels[0].runs[index] = judge_run("xdp", inputs[index], run.retval, bent, None, None)
    found = [d for d in differ.differences(kernels, None, inputs) if d.index == index]
    assert found and found[0].cause.startswith("not reproduced")
