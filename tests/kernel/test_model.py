"""``csum prog --model ARCH:RELEASE``: csum's model of a kernel (csum.kernel.model) against real kernels' answers.

The expected outputs are the real kernels': tests/vectors/qemu-prog holds what Debian's kernels (x86_64, i386,
arm64, armhf, mips64el, mipsel, ppc64el; 6.1, 6.12, 7.2) returned and wrote for 200 frames through
BPF_PROG_TEST_RUN under QEMU (examples/bpf/xdp_ttl_csum_diff.c; xdp_fwd.c with a seeded map and global;
tc_nat_no_pseudo.c with each kernel's CHECKSUM_COMPLETE verdict). The model runs the same example sources, compiled
here with clang (the recorded objects' sha256 differ with the clang version; the instructions' meaning does not), on
the same frames, and must give every return value and every output byte, and the same stale skb->csum verdict.
The ISA's corner cases are checked against the values the instruction-set document states (RFC 9669,
Documentation/bpf/standardization/instruction-set.rst); tests/kernel/test_model_kernel.py holds the model to the
running kernel.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from bpf_build import EXAMPLES, compile_bpf, why_not_build
from csum import cli
from csum.errors import Code, CsumValueError
from csum.kernel import model
from csum.kernel.model import elf as model_elf
from csum.kernel.model.ctx import Ctx
from csum.kernel.model.link import decode
from csum.kernel.model.vm import Memory, Vm
from csum.kernel.qemu import prog as qprog

VECTORS = Path(__file__).parents[1] / "vectors" / "qemu-prog"
#: (vector file, example source, seeds as the recorded command gave them).
_FWD_SEEDS = {"maps": {"backends": [("0.0.0.0", "192.0.2.80")]}, "globals": {"drop_unknown": "1"}}
CASES = ([(p, "xdp_ttl_csum_diff", {}) for p in sorted(VECTORS.glob("*.txt"))]
         + [(p, "xdp_fwd", _FWD_SEEDS) for p in sorted((VECTORS / "xdp_fwd").glob("*.txt"))]
         + [(p, "tc_nat_no_pseudo", {}) for p in sorted((VECTORS / "tc_nat_no_pseudo").glob("*.txt"))])

needs_build = pytest.mark.skipif(why_not_build() is not None, reason=str(why_not_build()))


@pytest.fixture(scope="module")
def objects(tmp_path_factory):
    if why_not_build() is not None:
        pytest.skip(str(why_not_build()))
    out = tmp_path_factory.mktemp("model")
    names = ("xdp_ttl_csum_diff", "xdp_fwd", "tc_nat_no_pseudo", "tc_encap")
    return {name: str(compile_bpf(EXAMPLES / f"{name}.c", out / f"{name}.o")) for name in names}


def _model_words(log: qprog.GuestLog, arch: str) -> str:
    """``amd64:6.1`` for a guest that reported 6.1.0-50-amd64."""
    major, minor = log.release.split("-")[0].split("+")[0].split(".")[:2]
    return f"{arch}:{major}.{minor}"


@needs_build
@pytest.mark.parametrize("path,source,seeds", CASES, ids=[f"{p.parent.name}/{p.stem}" for p, _, _ in CASES])
def test_the_model_gives_every_recorded_kernels_answers(objects, path, source, seeds):
    """Every return value and output byte a real kernel gave (RES lines), and for a tc program its CHECKSUM_COMPLETE
    verdict (CPL: -EBADMSG = stale), on every recorded architecture and release, the model taking the CPU variant
    the guest's /proc/cpuinfo names (riscv64 with Zbb). The s390x guest ran a big-endian build of the program, which
    this host's libbpf cannot open: the model says it cannot model the little-endian object there, never passes."""
    log = qprog.parse_log(path.read_text())
    arch = path.stem.split("-")[0]
    kernel = model.model_kernel(_model_words(log, arch), objects[source], sorted(log.inputs.items()),
                                profile_name=log.profile_name("big" if arch == "s390x" else "little"), **seeds)
    if arch == "s390x":  # the guest ran a bpfeb build (--object-be): the model refuses a little-endian object there
        assert kernel.error is not None and kernel.error.startswith("cannot model") and "big-endian" in kernel.error
        return
    assert kernel.error is None and len(kernel.runs) == len(log.results) == 200
    assert {i: (r.retval, r.packet) for i, r in kernel.runs.items()} == log.results
    if log.complete:
        assert {i: r.stale for i, r in kernel.runs.items()} == {i: rc == -74 for i, rc in log.complete.items()}


@needs_build
def test_another_architectures_model_does_not_give_them(objects):
    """The comparison tells architectures apart: x86_64's 6.1 model (legacy bpf_csum_diff, unfolded) on the frames
    arm64's 6.1 kernel ran gives 17 other outputs than arm64 wrote, and arm64's model gives none."""
    log = qprog.parse_log((VECTORS / "arm64-6.1.0-50-arm64.txt").read_text())
    frames = sorted(log.inputs.items())
    for words, wrong in (("amd64:bookworm", 17), ("arm64:bookworm", 0)):
        runs = model.model_kernel(words, objects["xdp_ttl_csum_diff"], frames).runs
        assert sum((r.retval, r.packet) != log.results[i] for i, r in runs.items()) == wrong, words


@needs_build
def test_an_unmodelled_helper_is_never_passed(objects):
    """examples/bpf/tc_encap.c calls bpf_skb_adjust_room (its source says so), which csum's Skb does not model: each
    IPv4 packet it would encapsulate is "cannot model", no packet of it passes, and the kernel's result says so."""
    log = qprog.parse_log((VECTORS / "amd64-6.1.0-50-amd64.txt").read_text())
    frames = sorted(log.inputs.items())
    kernel = model.model_kernel("amd64:bookworm", objects["tc_encap"], frames)
    cannot = [i for i, r in kernel.runs.items() if r.action == model.CANNOT]
    assert cannot and all("bpf_skb_adjust_room (50)" in kernel.runs[i].error for i in cannot)
    assert all(kernel.runs[i].results[0].status == "unjudged" and not kernel.runs[i].broken for i in cannot)
    assert kernel.error.startswith(f"cannot model {len(cannot)} of 200 packets: helper bpf_skb_adjust_room (50)")
    assert kernel.summary.unjudged == len(cannot)


@needs_build
def test_the_cli_reports_a_model_it_cannot_run_and_fails(objects, tmp_path, capsys, monkeypatch):
    """--model with an unmodelled helper: exit status 1 and the kernel entry's error, never a pass."""
    from csum import kernel as running

    monkeypatch.setattr(running, "available", lambda: False)
    monkeypatch.setattr(running, "why_unavailable", lambda: "test")
    assert cli.main(["prog", objects["tc_encap"], "--model", "amd64:bookworm", "--count", "30", "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    entry = doc["kernels"][1]
    assert entry["kernel"] == "model x86_64 6.1" and entry["release"] == "bookworm" and entry["model"] is True
    assert entry["error"].startswith("cannot model ") and "bpf_skb_adjust_room" in entry["error"]


@needs_build
def test_the_cli_compares_models_without_root(objects, capsys, monkeypatch):
    """Without the running kernel: two models' runs, and the packets whose outputs differ between them with the
    replayed cause (17 of the recorded frames, as the real bookworm kernels differ: amd64 broken, arm64 right)."""
    from csum import kernel as running
    from scapy.layers.l2 import Ether
    from scapy.utils import wrpcap

    monkeypatch.setattr(running, "available", lambda: False)
    monkeypatch.setattr(running, "why_unavailable", lambda: "no root here")
    log = qprog.parse_log((VECTORS / "amd64-6.1.0-50-amd64.txt").read_text())
    pcap = Path(objects["tc_encap"]).parent / "in.pcap"
    wrpcap(str(pcap), [Ether(log.inputs[i]) for i in sorted(log.inputs)])
    assert cli.main(["prog", objects["xdp_ttl_csum_diff"], "--pcap", str(pcap), "--model", "amd64:bookworm",
                     "--model", "arm64:bookworm", "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    kernels = {k["kernel"]: k for k in doc["kernels"]}
    assert kernels["model x86_64 6.1"]["broken_packets"] == 17 and kernels["model aarch64 6.1"]["broken_packets"] == 0
    assert kernels["model x86_64 6.1"]["csum_diff"] == "legacy"
    assert len(doc["differs"]) == 17 and all("reproduced: the program sums the ipv4 header" in d["cause"]
                                              for d in doc["differs"])


@pytest.mark.parametrize("words", ["amd64", "amd64:", "sparc:bookworm", "amd64:wheezy", "amd64:6", "amd64:6.x"])
def test_a_bad_model_is_a_usage_error_naming_the_words(words, capsys):
    """A bad ARCH:RELEASE: exit 2 and one line naming --model, the architectures and the releases of --debian."""
    assert cli.main(["prog", "x.o", "--model", words]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "--model" in err
    assert "amd64, arm64, armhf, i386, loong64, mips64el, mipsel, ppc64el, riscv64, s390x" in err
    assert "bookworm, trixie, unstable" in err


def test_save_vectors_with_a_model_alone_is_a_usage_error(capsys):
    """--save-vectors keeps real kernels' answers; with --model alone there are none to keep."""
    assert cli.main(["prog", "x.o", "--model", "amd64:bookworm", "--save-vectors", "."]) == 2
    assert "--save-vectors applies to --debian and --qemu runs" in capsys.readouterr().err


def test_the_model_words_choose_the_profile():
    """Debian's words and release numbers: bookworm ships 6.1, trixie 6.12; amd64 is x86_64, mipsel is mips."""
    assert model.parse("amd64:bookworm")[2:] == ("6.1", model.parse("x86_64:6.1")[3])
    assert model.parse("arm64:trixie")[3].name == "arm64" and model.parse("arm64:trixie")[2] == "6.12"
    assert model.parse("mipsel:6.6")[3].name == "mipsel" and model.parse("s390x:6.1")[3].endian == "big"


def test_an_object_that_is_not_bpf_elf_names_the_file(tmp_path):
    """Not ELF, not ELF64, not EM_BPF, cut short: a CsumValueError naming the file, never a traceback."""
    elf64_x86 = b"\x7fELF\x02\x01\x01" + bytes(9) + struct.pack("<HH", 1, 62) + bytes(44)
    for data, why in ((b"hello", "no ELF magic"), (b"\x7fELF\x01\x01" + bytes(60), "not ELF64"),
                      (elf64_x86, "e_machine 62"), (b"\x7fELF\x02\x01\x01" + bytes(9) + struct.pack("<HH", 1, 247),
                                                    "cut short")):
        with pytest.raises(CsumValueError, match=f"x.o: not a BPF ELF object \\({why}"):
            model_elf.read("x.o", data)


@needs_build
def test_a_little_endian_object_on_a_big_endian_model_is_not_modelled(objects):
    """clang -target bpf writes the host's (little-endian) byte order; s390x runs big-endian objects only."""
    kernel = model.model_kernel("s390x:bookworm", objects["xdp_ttl_csum_diff"], [(0, bytes(60))])
    assert kernel.error == ("cannot model: a little-endian object on s390x, a big-endian CPU (build it with clang "
                            "-target bpfeb)") and kernel.runs == {}


# The instruction set, by the values RFC 9669 states.

def _insn(code: int, dst: int = 0, src: int = 0, off: int = 0, imm: int = 0) -> bytes:
    return struct.pack("<BBhi", code, src << 4 | dst, off, imm)


def _run(*insns: bytes, r1: int = 0) -> int:
    """r0 after the straight-line ``insns`` (then exit), in the model's VM."""
    memory = Memory("little")
    vm = Vm({0: decode(b"".join(insns) + _insn(0x95), "little")}, {}, memory, lambda i: None)  # type: ignore[arg-type]
    return vm.run(0, 0, r1)


def _ld64(dst: int, value: int) -> bytes:
    """LD_IMM64: the low half in the first instruction's imm, the high half in the second's."""
    return struct.pack("<BBhI", 0x18, dst, 0, value & 0xFFFFFFFF) + struct.pack("<BBhI", 0, 0, 0, value >> 32)


@pytest.mark.parametrize("insns,expected,rule", [
    ((_insn(0xB7, 0, imm=-7), _insn(0x37, 0, off=1, imm=2)), (-3) & (2**64 - 1), "SDIV truncates toward zero"),
    ((_insn(0xB7, 0, imm=-7), _insn(0x97, 0, off=1, imm=2)), (-1) & (2**64 - 1), "SMOD: the dividend's sign"),
    ((_insn(0xB7, 0, imm=7), _insn(0xB7, 1, imm=0), _insn(0x3F, 0, 1)), 0, "DIV by a zero register gives 0"),
    ((_insn(0xB7, 0, imm=7), _insn(0xB7, 1, imm=0), _insn(0x9F, 0, 1)), 7, "MOD by zero leaves dst"),
    ((_ld64(0, 0xFFFFFFFF00000007), _insn(0xB7, 1, imm=0), _insn(0x9C, 0, 1)), 7,
     "32-bit MOD by zero: dst's low half, zero-extended"),
    ((_insn(0xB7, 0, imm=0x80), _insn(0xBF, 0, 0, off=8)), 2**64 - 0x80, "MOVSX from 8 bits"),
    ((_insn(0xB7, 0, imm=0x8000), _insn(0xBC, 0, 0, off=16)), 0xFFFF8000, "32-bit MOVSX zero-extends"),
    ((_ld64(0, 0x0102030405060708), _insn(0xD7, 0, imm=64)), 0x0807060504030201, "BSWAP64"),
    ((_ld64(0, 0x0102030405060708), _insn(0xD4, 0, imm=16)), 0x0708, "TO_LE16 on little-endian: truncate"),
    ((_ld64(0, 0x0102030405060708), _insn(0xD4, 0, imm=64)), 0x0102030405060708,
     "TO_LE64: the whole register, though its class is ALU"),
    ((_ld64(0, 0x0102030405060708), _insn(0xDC, 0, imm=32)), 0x08070605, "TO_BE32 on little-endian: swap"),
    ((_insn(0xB7, 0, imm=-16), _insn(0xC7, 0, imm=2)), (-4) & (2**64 - 1), "ARSH keeps the sign"),
    ((_insn(0xB7, 0, imm=-16), _insn(0xC4, 0, imm=2)), 0xFFFFFFFC, "ARSH32 on the low half, zero-extended"),
    ((_insn(0xB7, 0, imm=-1), _insn(0x04, 0, imm=1)), 0, "ADD32 wraps and zero-extends"),
    ((_insn(0xB7, 0, imm=1), _insn(0xB7, 1, imm=65), _insn(0x6F, 0, 1)), 2, "LSH64 masks the count to 6 bits"),
])
def test_the_isa_as_rfc_9669_states_it(insns, expected, rule):
    """Each value as RFC 9669 section 4 states it (the rule is the case's id)."""
    assert _run(*insns) == expected, rule


def test_memory_outside_every_region_is_not_modelled():
    """A load through a pointer in no region (the verifier would reject the program) stops the run."""
    with pytest.raises(CsumValueError, match="cannot model: a 4-byte read at address 0x1234") as info:
        _run(_insn(0xB7, 1, imm=0x1234), _insn(0x61, 0, 1))
    assert info.value.code == Code.NOT_MODELLED


def test_a_context_field_the_test_run_value_of_is_unknown_is_not_modelled():
    """__sk_buff's napi_id (offset 84): its value in a test run is not modelled."""
    memory = Memory("little")
    ctx = Ctx("tc", {}, "little", None)
    address = memory.add(bytearray(192), "ctx", ctx=ctx)
    code = decode(_insn(0x61, 0, 1, off=84) + _insn(0x95), "little")
    vm = Vm({0: code}, {}, memory, lambda i: None)  # type: ignore[arg-type]
    with pytest.raises(CsumValueError, match="cannot model: a 4-byte access to struct __sk_buff at offset 84"):
        vm.run(0, 0, address)


@needs_build
def test_the_cli_refuses_an_object_that_is_not_bpf_in_one_line(tmp_path, capsys):
    """An x86-64 ELF header (no BPF object): exit 2, one line naming the file, never a traceback."""
    path = tmp_path / "host.o"
    path.write_bytes(b"\x7fELF\x02\x01\x01" + bytes(9) + struct.pack("<HH", 1, 62) + bytes(100))
    assert cli.main(["prog", str(path), "--model", "amd64:bookworm", "--count", "3"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(path) in err and "Traceback" not in err


@needs_build
def test_bpf_f_ipv6_is_refused_before_6_16(tmp_path):
    """tests/kernel/mistakes/tc_ipv6_flags.c with BPF_F_IPV6 (its correct form, where the flag exists): before 6.16
    net/core/filter.c's bpf_l4_csum_replace takes no BPF_F_IPV6 (the flag and its mask entry came with 6.16) and
    returns -EINVAL, so the address is rewritten and the TCP checksum left as it was: scapy finds every output's
    TCP checksum wrong on 6.12 and right on 6.16."""
    import prog_frames as pf
    from scapy.layers.inet6 import IPv6
    from scapy.layers.l2 import Ether

    source = Path(__file__).resolve().parent / "mistakes" / "tc_ipv6_flags.c"
    obj = str(compile_bpf(source, tmp_path / "ipv6.o", "IPV6_FLAG=BPF_F_IPV6"))
    frames = list(enumerate(pf.frames([pf.tcp6], 10, seed=1)))

    def tcp_ok(packet: bytes) -> bool:
        again = Ether(packet)
        del again[IPv6].payload.chksum
        return Ether(packet)[IPv6].payload.chksum == Ether(bytes(again))[IPv6].payload.chksum

    for words, right in (("amd64:6.12", False), ("amd64:6.16", True)):
        runs = model.model_kernel(words, obj, frames).runs
        assert all(r.changed and tcp_ok(r.packet) == right for r in runs.values()), words


def test_a_model_beside_a_booted_kernel_gives_its_bytes(monkeypatch, tmp_path, capsys):
    """--debian bookworm amd64 (the recorded boot: the real kernel's outputs) with --model amd64:bookworm: the model
    breaks the same packets, and every differing field has the booted kernel's value on the model too."""
    from bpf_build import why_not
    from test_prog_kernels import _cli_with_recorded_boots

    if why_not() is not None:
        pytest.skip(str(why_not()))
    obj, pcap = _cli_with_recorded_boots(monkeypatch, tmp_path)
    assert cli.main(["prog", obj, "--pcap", pcap, "--debian", "bookworm", "amd64", "--model", "amd64:bookworm",
                     "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    booted, modelled = doc["kernels"][1], doc["kernels"][2]
    assert modelled["name"] == "model amd64:bookworm" and booted["broken"] == modelled["broken"] != []
    assert doc["differs"] and all(d["values"]["model x86_64 6.1"] == d["values"]["x86_64 6.1.0-50-amd64"]
                                  for d in doc["differs"])
