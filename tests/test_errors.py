"""csum/errors.py: every error code, triggered through the public API, raised by its one class.

The expected code and class of each trigger come from csum.errors.Code (the one list docs/errors.md
prints); the triggers are inputs chosen by hand to be wrong in one way each. A code used in
csum/ but missing from Code, or a Code entry nobody triggers here, fails this module loudly:
adding a code is one line in Code plus one trigger below. Environment failures run their real code
path with the environment taken away: an empty PATH (no compiler, no qemu), a None entry in sys.modules
(zstandard, fsspec, dask absent), a libbpf path that does not exist, a guest spinning past a 0.5 s
timeout, apt-cache on an empty private state; they skip, saying why, where the tool they use is missing.
"""

from __future__ import annotations

import ctypes.util
import importlib
import re
import shutil
import struct
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from scapy.layers.inet import ICMP, IP, TCP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether

import csum
import csum.batch
import csum.cli.args
import csum.bpf.skb
import csum.capture.dask
import csum.capture.tree
import csum.capture.output
import csum.capture.pcap
import csum.capture.source
import csum.kernel.live
import csum.kernel.prog
import csum.layers
import csum.layers.inet
import csum.rewrite

profile_module = importlib.import_module("csum.profiles")
compare_module = importlib.import_module("csum.crossarch")
from csum import arch, bpf, engine
from csum.errors import Code, CsumError
from csum.kernel import libbpf
from csum.kernel.qemu import debian, guest

SRC = Path(csum.__file__).resolve().parent
UDP4 = bytes(IP(src="192.0.2.1", dst="192.0.2.2", ttl=9) / UDP(sport=1, dport=2) / b"data")
ICMP4 = bytes(IP(src="192.0.2.1", dst="192.0.2.2") / ICMP())
#: Ethernet frames for the BpfMisuse triggers (the layout tests/bpf/test_skb.py uses).
TCP4 = bytes(Ether(dst="02:00:00:00:00:01", src="02:00:00:00:00:02") / IP(src="10.0.0.1", dst="10.0.0.2")
             / TCP(sport=1000, dport=80) / b"payload!")
UDP6 = bytes(Ether(dst="02:00:00:00:00:01", src="02:00:00:00:00:02") / IPv6(src="2001:db8::1", dst="2001:db8::2")
             / UDP(sport=53, dport=5353) / b"abc")
#: A pcapng section header block (28 bytes) whose trailing length says 32.
BAD_SHB = struct.pack("<IIIHHqI", 0x0A0D0D0A, 28, 0x1A2B3C4D, 1, 0, -1, 32)
#: The IPv4 header of UDP4 with ``ihl`` and ``total`` replaced (checksum left as is).


def _ipv4(first: int, total: int, tail: bytes = b"") -> bytes:
    return bytes([first]) + UDP4[1:2] + total.to_bytes(2, "big") + UDP4[4:20] + tail


def _unavailable_kernel(monkeypatch):
    """The kernel module as on a machine without BPF: detection done, no state, a reason."""
    monkeypatch.setattr(csum.kernel.live, "_detected", True)
    monkeypatch.setattr(csum.kernel.live, "_state", None)
    monkeypatch.setattr(csum.kernel.live, "_reason", "simulated: no bpf(2) here")
    return csum.kernel.bpf_csum_diff(b"", b"")


def _rejected_program(monkeypatch):
    """A BPF program the verifier rejects (exit without setting R0): needs a kernel that loads programs."""
    if not csum.kernel.available():
        pytest.skip(f"BPF unavailable: {csum.kernel.why_unavailable()}")
    import platform

    from csum.kernel.syscall import SYSCALL_NR, Bpf

    Bpf(SYSCALL_NR[platform.machine()]).prog_load(bytes([0x95]) + bytes(7), "bad")


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    """One directory for the triggers' files; ``scratch / "cache"`` is a CSUM_CACHE shared by the QEMU triggers."""
    return tmp_path_factory.mktemp("errors")


def _no_libbpf(monkeypatch, tmp):
    """libbpf not installed: the library found is not there (ctypes really tries to load it and fails)."""
    monkeypatch.setattr(libbpf, "_lib", None)
    monkeypatch.setattr(ctypes.util, "find_library", lambda name: str(tmp / "absent" / "libbpf.so.1"))
    csum.prog.load(str(tmp / "any.o"))


def _need_libbpf():
    try:
        libbpf.library()
    except CsumError as exc:
        pytest.skip(f"libbpf unavailable: {exc}")


def _not_bpf_object(monkeypatch, tmp):
    """The system libbpf refuses a file that is not an ELF object."""
    _need_libbpf()
    path = tmp / "not-bpf.o"
    path.write_bytes(b"this is not an ELF object\n")
    csum.prog.load(str(path))


#: Two XDP programs (never loaded: the choice fails first, so no BPF privilege is needed).
TWO_PROGRAMS = """#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
SEC("xdp") int pass_one(struct xdp_md *ctx) { return XDP_PASS; }
SEC("xdp") int pass_two(struct xdp_md *ctx) { return XDP_PASS; }
char LICENSE[] SEC("license") = "MIT";
"""
#: One XDP program in a legacy section (libbpf < 1.0 guessed its type from the "xdp" prefix).
LEGACY = 'SEC("xdp_prog") int pass_old(struct xdp_md *ctx) { return XDP_PASS; }\nchar LICENSE[] SEC("license") = "MIT";\n'


def _two_programs(tmp, legacy: bool = False) -> str:
    """TWO_PROGRAMS compiled by clang (once per module run), or (``legacy``) one program in a section libbpf >= 1.0
    gives no type; skips without clang, libbpf headers or libbpf."""
    if shutil.which("clang") is None or not Path("/usr/include/bpf/bpf_helpers.h").exists():
        pytest.skip("clang or the libbpf headers are not installed (apt-get install clang libbpf-dev)")
    _need_libbpf()
    from bpf_build import compile_bpf

    name = "legacy" if legacy else "two"
    out = tmp / f"{name}.o"
    if not out.exists():
        (tmp / f"{name}.c").write_text(TWO_PROGRAMS.split('SEC(')[0] + LEGACY if legacy else TWO_PROGRAMS)
        compile_bpf(tmp / f"{name}.c", out)
    return str(out)


def _bad_gzip(tmp, name: str = "bad.pcap.gz", method: int = 8) -> str:
    """A gzip header (RFC 1952; compression ``method``, 8 = deflate) followed by bytes that are not deflate data."""
    path = tmp / name
    path.write_bytes(bytes([0x1F, 0x8B, method]) + bytes(7) + b"\xff" * 32)
    return str(path)


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def _read(name: str) -> bytes:
    with csum.capture.source.open_source(name) as source:
        return source.stream.read()


def _worker_lost():
    """A --jobs worker's pipe closed at its end before it sent anything (the worker was killed)."""
    import multiprocessing

    import csum.capture.parallel

    mine, theirs = multiprocessing.Pipe()
    theirs.close()
    csum.capture.parallel._receive(mine)


def _zstd_without_zstandard(monkeypatch, tmp):
    """zstandard absent (a None entry in sys.modules makes ``import zstandard`` raise ImportError)."""
    monkeypatch.setitem(sys.modules, "zstandard", None)
    path = tmp / "capture.pcap.zst"
    path.write_bytes(bytes.fromhex("28b52ffd") + bytes(16))
    _read(str(path))


def _url_without_fsspec(monkeypatch, tmp):
    monkeypatch.setitem(sys.modules, "fsspec", None)
    _read("s3://bucket/capture.pcap")


def _dask_without_dask(monkeypatch, tmp):
    monkeypatch.setitem(sys.modules, "dask", None)
    monkeypatch.setitem(sys.modules, "dask.distributed", None)
    csum.capture.dask.verify_cli("local", [str(tmp / "capture.pcap")], 1)


def _rows_without_pyarrow(monkeypatch, tmp):
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    csum.scan.to_arrow(tmp / "capture.pcap")


def _arm64(*tools: str) -> guest.Arch:
    """arm64's Arch; skips where its cross compiler or qemu (as named in ``tools``) is missing."""
    a = guest.arch("arm64")
    for tool in tools:
        if shutil.which(getattr(a, tool)) is None:
            pytest.skip(f"{getattr(a, tool)} is not installed")
    return a


def _empty_path(monkeypatch, tmp):
    """PATH holding only an empty directory, so shutil.which finds no compiler and no qemu."""
    (tmp / "empty-bin").mkdir(exist_ok=True)
    monkeypatch.setenv("PATH", str(tmp / "empty-bin"))


def _disk_full(monkeypatch, tmp):
    """fix's output on a full disk: the AtomicFile's write fails with ENOSPC (as the kernel reports it)."""
    import errno

    from csum.cli.scans import Sink

    def full(data: bytes) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    with csum.capture.output.AtomicFile(tmp / "out.pcap") as out:
        monkeypatch.setattr(out, "write", full)
        Sink(out, "out.pcap").write(b"x")


def _no_compiler(monkeypatch, tmp):
    monkeypatch.setenv("CSUM_CACHE", str(tmp / "uncached"))  # no runner built yet
    _empty_path(monkeypatch, tmp)
    guest.build_runner(guest.arch("arm64"))


def _build_fails(monkeypatch, tmp):
    """The real cross compiler given a runner source that does not compile."""
    a = _arm64("cc")
    monkeypatch.setenv("CSUM_CACHE", str(tmp / "broken-source"))
    monkeypatch.setattr(guest, "runner_source", lambda: b"#error this runner does not compile\n")
    guest.build_runner(a)


def _no_qemu(monkeypatch, tmp):
    _empty_path(monkeypatch, tmp)
    guest.boot(guest.arch("arm64"), tmp / "Image", "")


def _boot(monkeypatch, tmp, kernel: Path, timeout: float):
    """A real qemu-system-aarch64 boot of ``kernel`` with the real runner (built once into scratch/cache)."""
    a = _arm64("cc", "qemu")
    monkeypatch.setenv("CSUM_CACHE", str(tmp / "cache"))
    guest.boot(a, kernel, "", timeout=timeout)


def _guest_spins(monkeypatch, tmp):
    """A raw arm64 image of one instruction, ``b .`` (0x14000000): the guest loops until the timeout."""
    kernel = tmp / "spin.img"
    kernel.write_bytes((0x14000000).to_bytes(4, "little"))
    _boot(monkeypatch, tmp, kernel, timeout=0.5)


def _no_kernel_image(monkeypatch, tmp):
    """qemu exits at once ("could not load kernel"): the runner never starts."""
    _boot(monkeypatch, tmp, tmp / "no-such-Image", timeout=60)


def _apt_finds_nothing(monkeypatch, tmp):
    """The real apt-cache on a fresh private state (no package lists, no network) finds no package."""
    if shutil.which("apt-cache") is None:
        pytest.skip("apt-cache is not installed")
    monkeypatch.setenv("CSUM_CACHE", str(tmp / "apt-cache"))
    debian.apt("bookworm", "arm64", "apt-cache", "show", "--no-all-versions", "linux-image-arm64")


#: Code -> the calls that must raise it (every raise site of a code shared by modules, where cheap).
def _rules(**kwargs):
    from csum.rewrite.rules import Rules

    return Rules(**kwargs)


def _no_cryptography(m):
    import sys

    m.setitem(sys.modules, "cryptography.hazmat.primitives.ciphers", None)
    return _rules(anonymize="ab" * 32)


TRIGGERS = {
    Code.BAD_TYPE: [lambda: csum.csum_add(1.0, 1), lambda: csum.profile(3),
                    lambda: csum.rewrite.rewrite(ICMP4, fields=[1])],
    Code.BAD_VALUE: [lambda: csum.inet.verify(UDP4, link="token-ring")],
    Code.NOT_A_BUFFER: [lambda: csum.internet_checksum("text"), lambda: csum.internet_checksum_iov(b"one")],
    Code.NOT_CONTIGUOUS: [lambda: csum.internet_checksum(memoryview(b"abcd")[::2])],
    Code.OUT_OF_RANGE: [lambda: csum.csum_partial(b"", -1), lambda: csum.ip_fast_csum(UDP4, 4),
                        lambda: csum.batch.csum_partials(np.zeros((2, 4), np.uint8), np.array([0, 1 << 33]))],
    Code.BAD_WIDTH: [lambda: csum.inet_proto_csum_replace16(0, b"abc", bytes(16)),
                     lambda: csum.batch.ones_sums(np.zeros((1, 4), np.uint8), 64)],
    Code.BAD_BYTEORDER: [lambda: csum.batch.ones_sums(np.zeros((1, 4), np.uint8), 16, "middle")],
    Code.BAD_ADDRESS: [lambda: csum.csum_tcpudp_nofold("nonsense", "192.0.2.2", 8, 17),
                       lambda: csum.rewrite.rewrite(UDP4, saddr="nonsense"),
                       lambda: csum.rewrite.rewrite(UDP4, saddr="2001:db8::1")],
    Code.READ_ONLY: [lambda: csum.bpf_l3_csum_replace(bytes(UDP4), 10, 0, 1, 2)],
    Code.NOT_AN_ARRAY: [lambda: csum.batch.internet_checksums([[1, 2]])],
    Code.BAD_ARRAY: [lambda: csum.batch.internet_checksums(np.zeros((2, 2), np.uint16))],
    Code.BAD_SHAPE: [lambda: csum.batch.internet_checksums_ragged(b"abcd", [0, 1], [1])],
    Code.UNKNOWN_PROFILE: [lambda: csum.profile("vax")],
    Code.BAD_PROFILE: [lambda: profile_module.parse_profile("name = [", "broken.toml")],
    Code.BAD_RELEASE: [lambda: csum.profile("x86_64", kernel="five")],
    Code.UNKNOWN_ALGORITHM: [lambda: arch.algorithm("no-such-algorithm")],
    Code.DUPLICATE: [lambda: arch.register(arch.algorithm_names()[0])(lambda view, seed, align: 0)],
    Code.BAD_ENGINE: [lambda: engine._choose("fortran")],
    Code.KERNEL_UNAVAILABLE: [_unavailable_kernel],
    Code.BPF_FAILED: [_rejected_program],
    Code.TOO_LARGE: [lambda: csum.kernel.bpf_csum_diff(bytes(1 << 16), b"")],
    Code.BAD_LENGTH: [lambda: csum.kernel.l3_csum_replace(b"short", 0, 0, 0, 0),
                      lambda: csum.inet.verify(_ipv4(0x45, 10))],
    Code.TRUNCATED: [lambda: csum.inet.verify(UDP4[:12]), lambda: csum.ip_fast_csum(UDP4[:16], 5),
                     lambda: csum.pcap.parse(bytes.fromhex("d4c3b2a1") + bytes(8))],
    Code.NOT_IP: [lambda: csum.inet.verify(bytes([0x70]) + UDP4[1:])],
    Code.BAD_VERSION: [lambda: csum.inet.verify(b"\x02" * 12 + b"\x86\xdd" + UDP4, link="ethernet")],
    Code.BAD_IHL: [lambda: csum.inet.verify(_ipv4(0x44, 28))],
    Code.BAD_OPTION: [lambda: csum.inet.verify(_ipv4(0x46, 32, bytes([7, 1, 0, 0])) + UDP4[20:])],
    Code.BAD_PACKET: [lambda: csum.rewrite.rewrite(UDP(sport=1, dport=2), sport=3)],
    Code.BAD_OFFSET: [lambda: csum.rewrite.rewrite(UDP4, fields=[csum.rewrite.FieldChange(2000, b"ab")])],
    Code.NO_LAYER: [lambda: csum.inet.compute(UDP4, "tcp")],
    Code.NOT_APPLICABLE: [lambda: csum.inet.compute(bytes(IP(src="192.0.2.1", dst="192.0.2.2", flags="MF")
                                                          / UDP() / b"x"), "udp")],
    Code.NO_L4_CHECKSUM: [lambda: csum.rewrite.rewrite(bytes(IP(proto=99) / b"abcd"),
                                                       fields=[csum.rewrite.FieldChange(20, b"ab")])],
    Code.NO_PORTS: [lambda: csum.rewrite.rewrite(ICMP4, sport=1)],
    Code.NO_QUOTE: [lambda: csum.rewrite.rewrite(UDP4, quoted={"saddr": "192.0.2.9"})],
    Code.NO_TUNNEL: [lambda: csum.rewrite.rewrite(UDP4, inner={"saddr": "192.0.2.9"})],
    Code.NO_ICMP_ID: [lambda: csum.rewrite.rewrite(UDP4, icmp_id=7)],
    Code.TTL_EXPIRED: [lambda: csum.rewrite.rewrite(bytes(IP(ttl=0) / UDP()), decrement_ttl=True)],
    Code.NOT_A_CAPTURE: [lambda: csum.pcap.parse(b"this is not a capture")],
    Code.BAD_BLOCK: [lambda: csum.pcap.parse(BAD_SHB + bytes(4))],
    Code.UNSUPPORTED_LINK: [lambda: csum.layers.layout(memoryview(UDP4), 147)],
    Code.BAD_COMPRESSION: [lambda m, tmp: _read(_bad_gzip(tmp)), lambda m, tmp: _read(_bad_gzip(tmp, "m7.gz", 7)),
                           lambda m, tmp: _read(str(_write(tmp / "bad.bz2", b"BZh9" + b"\x00" * 32))),
                           lambda m, tmp: _read(str(_write(tmp / "bad.xz", bytes.fromhex("fd377a585a00") + bytes(32))))],
    Code.MISSING_ZSTD: [_zstd_without_zstandard],
    Code.MISSING_FSSPEC: [_url_without_fsspec],
    Code.MISSING_DASK: [_dask_without_dask],
    Code.MISSING_ARROW: [_rows_without_pyarrow],
    Code.UNREADABLE: [lambda m, tmp: csum.capture.dask._verify_one(str(tmp / "no-such.pcap"), csum.pcap.CHUNK_BYTES)],
    Code.WORKER_LOST: [_worker_lost],
    Code.BAD_TREE: [lambda m, tmp: csum.capture.tree.captures(tmp / "no-such-directory")],
    Code.UNSAFE_OUTPUT: [lambda m, tmp: csum.capture.output.target(tmp),
                         lambda m, tmp: csum.capture.output.target(_bad_gzip(tmp), [_bad_gzip(tmp)])],
    Code.NOT_MODELLED: [lambda: csum.skb.Skb(bytes(64), ip_summed=bpf.CHECKSUM_PARTIAL)
                        .bpf_skb_store_bytes(20, b"ab", csum.skb.BPF_F_RECOMPUTE_CSUM)],
    Code.BAD_FUNCTION: [lambda: compare_module.compare_function("csum_nope")],
    Code.LIBBPF_FAILED: [_no_libbpf, _not_bpf_object],
    Code.NO_PROGRAM: [lambda m, tmp: csum.prog.load(_two_programs(tmp), prog="pass_three"),
                      lambda m, tmp: csum.prog.load(_two_programs(tmp), section="tc")],
    Code.AMBIGUOUS: [lambda m, tmp: csum.prog.load(_two_programs(tmp))],
    Code.PROG_TYPE: [lambda m, tmp: csum.prog.load(_two_programs(tmp, legacy=True))],
    Code.NO_MAP: [lambda m, tmp: csum.prog.load(_two_programs(tmp), prog="pass_one", maps={"nope": {}}),
                  lambda m, tmp: csum.prog.load(_two_programs(tmp), prog="pass_one", globals={"nope": 1})],
    Code.UNKNOWN_ARCH: [lambda: guest.arch("vax")],
    Code.NO_COMPILER: [_no_compiler],
    Code.BUILD_FAILED: [_build_fails],
    Code.BAD_CPIO: [lambda: guest.read_cpio(b"not a cpio archive")],
    Code.NO_QEMU: [_no_qemu],
    Code.TIMEOUT: [_guest_spins],
    Code.BOOT_FAILED: [_no_kernel_image],
    Code.APT_FAILED: [_apt_finds_nothing],
    Code.USAGE: [lambda: csum.cli.args.hex_bytes("0xzz")],
    Code.WRITE_FAILED: [_disk_full],
    Code.BAD_RULE: [lambda: _rules(map_ip=["10.0.0.0/8"]), lambda: _rules(map_port=["http=80"])],
    Code.OVERLAPPING_RULES: [lambda: _rules(map_ip=["10.0.0.0/8=1.0.0.0/8", "10.1.0.0/16=2.0.0.0/16"])],
    Code.MISSING_CRYPTOGRAPHY: [_no_cryptography],
}

#: The BpfMisuse warnings (csum/bpf/misuse.py): a legal helper call that is almost surely a bug, one per code.
#: On TCP4 and UDP6 above; tests/bpf/test_skb.py checks the cases beside each (the calls that stay
#: silent).
_PORT, _NEW_PORT = int.from_bytes(TCP4[34:36], "little"), int.from_bytes((2000).to_bytes(2, "big"), "little")
WARNINGS = {
    Code.SIZE_MISSING: lambda: csum.bpf_l3_csum_replace(bytearray(TCP4), 24, 0x0A000001, 0xC0000207, 0),
    Code.WIDE_FOR_SIZE_2: lambda: csum.bpf_l4_csum_replace(bytearray(TCP4), 24, 0x0A000001, 0xC0000207, 2),
    Code.PSEUDO_ON_NON_PSEUDO: lambda: csum.bpf_l4_csum_replace(bytearray(TCP4), 50, _PORT, _NEW_PORT,
                                                                2 | csum.BPF_F_PSEUDO_HDR),
    Code.MANGLED0_ON_TCP: lambda: csum.bpf_l4_csum_replace(bytearray(TCP4), 50, _PORT, _NEW_PORT,
                                                           2 | csum.BPF_F_MARK_MANGLED_0),
    Code.IPV6_FLAG_MISSING: lambda: csum.bpf_l4_csum_replace(bytearray(UDP6), 60, 0, 0x1234, csum.BPF_F_PSEUDO_HDR),
    Code.IPV6_FLAG_ON_IPV4: lambda: csum.bpf_l4_csum_replace(bytearray(TCP4), 50, 0, 0x1234,
                                                             csum.BPF_F_PSEUDO_HDR | csum.BPF_F_IPV6),
}


@pytest.mark.parametrize("code", list(WARNINGS), ids=[c.value for c in WARNINGS])
def test_every_misuse_code_is_warned_by_its_one_class(code):
    """Each misuse trigger warns exactly once, a BpfMisuse carrying ``code`` (the class Code names)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        WARNINGS[code]()
    assert [(type(w.message).__name__, w.message.code) for w in caught] == [(code.kind, code)]


CASES = [(code, i) for code, calls in TRIGGERS.items() for i in range(len(calls))]


@pytest.mark.parametrize("code, i", CASES, ids=[f"{c.value}-{i}" for c, i in CASES])
def test_every_code_is_raised_by_its_one_class(code, i, monkeypatch, scratch):
    """Each trigger raises a CsumError whose code is ``code`` and whose class is the one Code names.

    A trigger takes no argument, ``monkeypatch``, or ``monkeypatch`` and a scratch directory."""
    call = TRIGGERS[code][i]
    with pytest.raises(CsumError) as err:
        call(*(monkeypatch, scratch)[:call.__code__.co_argcount])
    assert err.value.code == code and err.value.code == code.value
    assert type(err.value).__name__ == code.kind, (code, type(err.value))
    # one line, but for the logs that follow it: the verifier's, the guest console's, the compiler's, apt's
    assert "\n" not in str(err.value) or code in (Code.BPF_FAILED, Code.BOOT_FAILED, Code.BUILD_FAILED,
                                                  Code.APT_FAILED)


def test_every_registered_code_has_a_trigger():
    """No Code entry goes untested: add its trigger to TRIGGERS (an error) or WARNINGS (a BpfMisuse)."""
    assert set(Code) == set(TRIGGERS) | set(WARNINGS) and not set(TRIGGERS) & set(WARNINGS)


def test_no_code_is_a_raw_string():
    """Every code csum/ raises or warns is a Code member: no ``code="x"``, no ``code = "x"`` class default, no
    string handed to the walker's or the pcap reader's error helpers (``_Bad("x", ...)``, ``_bad(..., "x")``)."""
    values = "|".join(re.escape(c.value) for c in Code)
    raw = []
    for path in sorted(SRC.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        for pattern in (r'\bcode\s*[:=]\s*(?:str\s*=\s*)?"[a-z0-9-]+"', rf'_Bad\("({values})"',
                        rf'_bad\((?:[^()]|\([^()]*\))*?,\s*"({values})"\)', rf'(?:==|!=)\s*"({values})"'):
            raw += [f"{path.relative_to(SRC)}: {m.group(0)}" for m in re.finditer(pattern, text, re.S)]
    assert not raw, raw


def test_every_code_named_in_the_source_exists():
    """``Code.X`` in csum/ names a member (a typo would only fail where it is raised)."""
    names = {m for path in SRC.rglob("*.py") for m in re.findall(r"\bCode\.([A-Z0-9_]+)\b", path.read_text())}
    assert names and names <= set(Code.__members__), names - set(Code.__members__)


def test_every_exception_class_lives_in_errors():
    """errors.py owns every exception and warning class csum raises (the walker's private control-flow signals
    _Bad and _Cut aside: they never leave csum/layers/walk.py)."""
    import ast

    found = []
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef) and any(
                    getattr(b, "id", getattr(b, "attr", "")).endswith(("Error", "Exception", "Warning", "Misuse"))
                    for b in node.bases) and path.name != "errors.py" and not node.name.startswith("_"):
                found.append(f"{path.relative_to(SRC)}: {node.name}")
    assert not found, found


def test_codes_compare_as_strings():
    """A StrEnum: ``.code == "..."`` comparisons (users' code, JSON output) keep working."""
    assert Code.BAD_WIDTH == "bad-width" and f"{Code.BAD_WIDTH}" == "bad-width"
    err = csum.CsumValueError("x", code=Code.BAD_WIDTH)
    assert err.code is Code.BAD_WIDTH and err.code == "bad-width"


def test_docs_list_every_code_with_its_class():
    """The error table of docs/errors.md is generated from Code (tools/gen_error_table.py prints it): same rows."""
    page = (SRC.parent / "docs" / "errors.md").read_text(encoding="utf-8")
    for code in Code:
        assert f"| `{code.value}` | `{code.kind}` | {code.meaning} |" in page, code
