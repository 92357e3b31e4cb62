"""csum.prog and ``csum prog``: the example programs of examples/bpf run on the kernel, checked by csum and by scapy.

Which outputs are broken comes from scapy (checksums recomputed from scratch and compared with the stored
ones), not from csum; the CHECKSUM_COMPLETE verdict comes from the running kernel (EBADMSG), and the test
states which packets must get it (IPv4 TCP/UDP packets, whose checksums cover the rewritten address through
the pseudo-header). Skipped, with the reason, where clang, libbpf or BPF test runs are missing.
"""

from __future__ import annotations

import json

import pytest
from bpf_build import EXAMPLES, compile_bpf, why_not
from scapy.compat import raw
from scapy.layers.inet import ICMP, IP, TCP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether
from scapy.utils import rdpcap, wrpcap

from csum import cli
from csum.kernel import prog
from csum.testing import sample_packets

pytestmark = pytest.mark.skipif(why_not() is not None, reason=str(why_not()))

NEW_SADDR = "192.0.2.1"  # examples/bpf/nat.h
PROGRAMS = ["tc_nat", "tc_nat_no_pseudo", "xdp_nat", "xdp_nat_single_fold"]


@pytest.fixture(scope="module")
def objects(tmp_path_factory):
    out = tmp_path_factory.mktemp("bpf")
    return {name: compile_bpf(EXAMPLES / f"{name}.c", out / f"{name}.o") for name in PROGRAMS}


@pytest.fixture(scope="module")
def frames():
    return [prog.ethernet(p) for p in sample_packets(300, seed=12)]


def _scapy_bad(frame: bytes) -> set[str]:
    """The layers whose stored checksum differs from scapy's recomputation (0x0000/0xffff equal only for UDP)."""
    pkt, bad = Ether(frame), set()
    for layer, name in ((IP, "ipv4"), (TCP, "tcp"), (UDP, "udp"), (ICMP, "icmp")):
        if layer in pkt and not (layer is UDP and pkt[UDP].chksum == 0):
            if layer is ICMP and IP in pkt and pkt[IP].proto != 1:
                continue
            stored = pkt[layer].chksum
            copy = Ether(frame)
            del copy[layer].chksum
            if stored != Ether(raw(copy))[layer].chksum:
                bad.add(name)
    return bad


def _expected_nat(frame: bytes) -> bytes:
    """scapy's from-scratch SNAT of an IPv4 frame (other frames unchanged)."""
    pkt = Ether(frame)
    if IP not in pkt:
        return frame
    pkt[IP].src = NEW_SADDR
    del pkt[IP].chksum
    for layer in (TCP, UDP):
        if layer in pkt:
            del pkt[layer].chksum
    return raw(pkt)


@pytest.mark.parametrize("name", PROGRAMS)
def test_examples_flag_exactly_the_broken_outputs(objects, frames, name, record_property):
    """Invariant: csum.prog flags a checksum of an output packet iff scapy's recomputation disagrees, and a tc
    program's skb->csum iff the kernel's CHECKSUM_COMPLETE run failed; the correct programs' outputs are scapy's
    SNAT byte for byte; the broken ones are broken on a real share of the packets, each with its cause."""
    broken_packets = 0
    with prog.load(str(objects[name])) as program:
        assert program.kind == ("tc" if name.startswith("tc") else "xdp")
        for frame in frames:
            run = program.run(frame)
            found = program.broken(frame, run)
            assert {c.layer for c in found if c.layer != prog.SKB_CSUM} == _scapy_bad(run.packet), frame.hex()
            stale = any(c.layer == prog.SKB_CSUM for c in found)
            v4_pseudo = IP in Ether(frame) and Ether(frame)[IP].proto in (6, 17)
            assert stale == (name == "tc_nat_no_pseudo" and v4_pseudo)
            if name in ("tc_nat", "tc_nat_no_pseudo", "xdp_nat"):
                assert run.packet == _expected_nat(frame)
            if name == "xdp_nat_single_fold":
                assert all("single fold" in c.cause for c in found)
            if name == "tc_nat_no_pseudo" and stale:
                assert "BPF_F_PSEUDO_HDR" in next(c.cause for c in found if c.layer == prog.SKB_CSUM)
            broken_packets += bool(found)
    record_property("kernel_checked", len(frames) * (2 if name.startswith("tc") else 1))
    if name in ("tc_nat", "xdp_nat"):
        assert broken_packets == 0
    else:
        assert broken_packets > len(frames) // 10


def test_cause_pseudo_header_zero_corner_and_udp6_zero():
    """Likely causes from the numbers (no kernel): an L4 checksum not updated for the address (off by exactly the
    pseudo-header change), ICMP 0x0000 where 0xffff is computed, UDP/IPv6 stored 0 (MARK_ENFORCE missing)."""
    ether = Ether(dst="02:00:00:00:00:01", src="02:00:00:00:00:02")
    before = raw(ether / IP(src="10.0.0.1", dst="10.0.0.2") / TCP(sport=1, dport=2) / b"data")
    stale_l4 = Ether(before)
    stale_l4[IP].src = NEW_SADDR
    del stale_l4[IP].chksum
    stale_l4[TCP].chksum = Ether(before)[TCP].chksum  # the L4 checksum left as it was
    after = raw(stale_l4)
    check = next(c for c in prog.verify_frame(after) if c.layer == "tcp")
    assert "pseudo-header change" in prog._cause(check, before, after)
    zero = raw(ether / IP(src="10.0.0.1", dst="10.0.0.2") / ICMP(type=0, code=0, id=0, seq=0, chksum=0) / bytes(8))
    check = next(c for c in prog.verify_frame(zero) if c.layer == "icmp")
    assert check.ok is False and "0x0000 vs 0xffff" in prog._cause(check, zero, zero)
    udp6 = raw(ether / IPv6(src="::1", dst="::2") / UDP(sport=1, dport=2, chksum=0) / b"x")
    check = next(c for c in prog.verify_frame(udp6) if c.layer == "udp")
    assert "BPF_F_MARK_ENFORCE" in prog._cause(check, udp6, udp6)


def test_load_errors_name_the_problem(objects, tmp_path):
    """A missing object, a name that is not there and an ambiguous choice give one clear error each."""
    with pytest.raises(prog.LibbpfError, match="cannot open"):
        prog.load(str(tmp_path / "missing.o"))
    with pytest.raises(prog.CsumValueError, match="no program named 'nope'.*tc_snat"):
        prog.load(str(objects["tc_nat"]), prog="nope")
    with pytest.raises(prog.CsumValueError, match="no program in section 'xdp'"):
        prog.load(str(objects["tc_nat"]), section="xdp")
    with prog.load(str(objects["tc_nat"]), section="tc") as program:
        assert program.info.name == "tc_snat"


def test_cli_prog_exit_codes_json_pcap_and_out(objects, tmp_path, capsys):
    """csum prog: exit 1 and the broken packets for a broken program, 0 for a correct one; --pcap reads a capture
    (scapy-written), --out writes the output packets (scapy reads them back equal to the runs); --json."""
    assert cli.main(["prog", str(objects["tc_nat"]), "--count", "40"]) == 0
    assert "all 40 output packets have correct checksums and skb->csum" in capsys.readouterr().out
    assert cli.main(["prog", str(objects["xdp_nat_single_fold"]), "--count", "40", "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["type"] == "xdp" and doc["broken_packets"] > 0
    assert all("single fold" in c["cause"] for b in doc["broken"] for c in b["checks"])
    pcap_in, pcap_out = tmp_path / "in.pcap", tmp_path / "out.pcap"
    frames = [prog.ethernet(p) for p in sample_packets(20, seed=3)]
    wrpcap(str(pcap_in), [Ether(f) for f in frames])
    assert cli.main(["prog", str(objects["tc_nat_no_pseudo"]), "--pcap", str(pcap_in), "--out", str(pcap_out)]) == 1
    text = capsys.readouterr().out
    assert "skb->csum: stale" in text and f"wrote {pcap_out}: 20 output packets" in text
    assert [raw(p) for p in rdpcap(str(pcap_out))] == [_expected_nat(f) for f in frames]
    assert cli.main(["prog", str(objects["tc_nat"]), "--pcap", str(pcap_in), "--out", str(pcap_in)]) == 2
    assert "input is never modified" in capsys.readouterr().err
    assert cli.main(["prog", str(tmp_path / "missing.o")]) == 2
    assert "csum: prog failed for" in capsys.readouterr().err


def test_verifier_rejection_is_reported_with_its_log(tmp_path, capsys):
    """A program the verifier rejects: exit 2, one line saying so, then the verifier's own log lines."""
    src = tmp_path / "bad.c"
    src.write_text('#include <linux/bpf.h>\n#include <bpf/bpf_helpers.h>\n'
                   'SEC("tc") int bad(struct __sk_buff *s) { return *(int *)(long)s->data; }\n'
                   'char LICENSE[] SEC("license") = "GPL";\n')
    obj = compile_bpf(src, tmp_path / "bad.o")
    assert cli.main(["prog", str(obj), "--count", "1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"csum: prog failed for {obj}: libbpf cannot load program 'bad' of {obj}: "
                          "the verifier rejected it\n")
    assert "invalid access to packet" in err
