"""csum/errors.py: every error code, triggered through the public API, raised by its one class.

The expected code and class of each trigger come from csum.errors.Code (the one list the README
prints); the triggers are inputs chosen by hand to be wrong in one way each. A code used in
csum/ but missing from Code, or a Code entry nobody triggers here, fails this module loudly:
adding a code is one line in Code plus one trigger below.
"""

from __future__ import annotations

import importlib
import re
import struct
from pathlib import Path

import numpy as np
import pytest
from scapy.layers.inet import ICMP, IP, TCP, UDP

import csum
import csum.batch
import csum.inet
import csum.kernel
import csum.pcap
import csum.rewrite

profile_module = importlib.import_module("csum.profile")  # csum.profile the attribute is the function
from csum import _engine, arch
from csum.errors import Code, CsumError

SRC = Path(csum.__file__).resolve().parent
UDP4 = bytes(IP(src="192.0.2.1", dst="192.0.2.2", ttl=9) / UDP(sport=1, dport=2) / b"data")
ICMP4 = bytes(IP(src="192.0.2.1", dst="192.0.2.2") / ICMP())
#: A pcapng section header block (28 bytes) whose trailing length says 32.
BAD_SHB = struct.pack("<IIIHHqI", 0x0A0D0D0A, 28, 0x1A2B3C4D, 1, 0, -1, 32)
#: The IPv4 header of UDP4 with ``ihl`` and ``total`` replaced (checksum left as is).


def _ipv4(first: int, total: int, tail: bytes = b"") -> bytes:
    return bytes([first]) + UDP4[1:2] + total.to_bytes(2, "big") + UDP4[4:20] + tail


def _unavailable_kernel(monkeypatch):
    """The kernel module as on a machine without BPF: detection done, no state, a reason."""
    monkeypatch.setattr(csum.kernel, "_detected", True)
    monkeypatch.setattr(csum.kernel, "_state", None)
    monkeypatch.setattr(csum.kernel, "_reason", "simulated: no bpf(2) here")
    return csum.kernel.bpf_csum_diff(b"", b"")


def _rejected_program(monkeypatch):
    """A BPF program the verifier rejects (exit without setting R0): needs a kernel that loads programs."""
    if not csum.kernel.available():
        pytest.skip(f"BPF unavailable: {csum.kernel.why_unavailable()}")
    from csum._bpf_syscall import Bpf, SYSCALL_NR
    import platform

    Bpf(SYSCALL_NR[platform.machine()]).prog_load(bytes([0x95]) + bytes(7), "bad")


#: Code -> the calls that must raise it (every raise site of a code shared by modules, where cheap).
TRIGGERS = {
    Code.BAD_TYPE: [lambda: csum.csum_add(1.0, 1), lambda: csum.profile(3),
                    lambda: csum.rewrite.rewrite(ICMP4, fields=[1])],
    Code.BAD_VALUE: [lambda: csum.inet.verify(UDP4, link="token-ring")],
    Code.NOT_A_BUFFER: [lambda: csum.internet_checksum("text"), lambda: csum.internet_checksum_iov(b"one")],
    Code.NOT_CONTIGUOUS: [lambda: csum.internet_checksum(memoryview(b"abcd")[::2])],
    Code.OUT_OF_RANGE: [lambda: csum.csum_partial(b"", -1), lambda: csum.ip_fast_csum(UDP4, 4),
                        lambda: csum.batch.csum_partials(np.zeros((2, 4), np.uint8), np.array([0, 1 << 33]))],
    Code.BAD_WIDTH: [lambda: csum.csum_replace16(0, b"abc", bytes(16)),
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
    Code.BAD_ENGINE: [lambda: _engine._choose("fortran")],
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
    Code.TTL_EXPIRED: [lambda: csum.rewrite.rewrite(bytes(IP(ttl=0) / UDP()), decrement_ttl=True)],
    Code.NOT_A_CAPTURE: [lambda: csum.pcap.parse(b"this is not a capture")],
    Code.BAD_BLOCK: [lambda: csum.pcap.parse(BAD_SHB + bytes(4))],
}

CASES = [(code, i) for code, calls in TRIGGERS.items() for i in range(len(calls))]


@pytest.mark.parametrize("code, i", CASES, ids=[f"{c.value}-{i}" for c, i in CASES])
def test_every_code_is_raised_by_its_one_class(code, i, monkeypatch):
    """Each trigger raises a CsumError whose code is ``code`` and whose class is the one Code names."""
    call = TRIGGERS[code][i]
    with pytest.raises(CsumError) as err:
        call(monkeypatch) if call.__code__.co_argcount else call()
    assert err.value.code == code and err.value.code == code.value
    assert type(err.value).__name__ == code.kind, (code, type(err.value))
    assert "\n" not in str(err.value) or code is Code.BPF_FAILED  # one line (the verifier log follows)


def test_every_registered_code_has_a_trigger():
    """No Code entry goes untested: add its trigger to TRIGGERS."""
    assert set(Code) == set(TRIGGERS)


def _codes_in_source() -> dict[str, set[str]]:
    """Every code string csum/ passes: ``code="x"``, ``code = "x"`` class defaults, ``Code.X`` and the
    ``_bad(..., "x")`` / ``_malformed(..., "x")`` helpers of csum/pcap.py and csum/_packet.py."""
    found: dict[str, set[str]] = {}
    for path in sorted(SRC.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        names = re.findall(r'\bcode\s*[:=]\s*(?:str\s*=\s*)?"([a-z0-9-]+)"', text)
        names += [m.lower().replace("_", "-") for m in re.findall(r"\bCode\.([A-Z0-9_]+)\b", text)]
        names += re.findall(r'(?:_bad|_malformed)\((?:[^()]|\([^()]*\))*?,\s*"([a-z0-9-]+)"\)', text, re.S)
        for name in names:
            found.setdefault(name, set()).add(path.relative_to(SRC).as_posix())
    return found


def test_every_code_in_the_source_is_registered():
    """A code string in csum/ that is not a Code value fails here, naming the file: register it in Code."""
    unregistered = {name: sorted(where) for name, where in _codes_in_source().items()
                    if name not in Code._value2member_map_ and name != "error"}
    assert not unregistered, f"codes used but not in csum.errors.Code: {unregistered}"


def test_codes_compare_as_strings():
    """A StrEnum: old ``code="..."`` strings and ``.code == "..."`` comparisons keep working."""
    assert Code.BAD_WIDTH == "bad-width" and f"{Code.BAD_WIDTH}" == "bad-width"
    err = csum.CsumValueError("x", code="bad-width")
    assert err.code is Code.BAD_WIDTH and err.code == "bad-width"
    assert csum.CsumValueError("x", code="someone-elses").code == "someone-elses"


def test_readme_lists_every_code_with_its_class():
    """The README's error table is generated from Code (tools/readme_errors.py prints it): same rows."""
    readme = (SRC.parent / "README.md").read_text(encoding="utf-8")
    for code in Code:
        assert f"| `{code.value}` | `{code.kind}` | {code.meaning} |" in readme, code
