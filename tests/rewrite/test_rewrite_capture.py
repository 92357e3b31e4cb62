"""csum rewrite / csum.rewrite.rewrite_capture: whole captures through Rules, checksums kept incrementally.

Expected values: scapy's from-scratch rebuild of each packet with the same fields changed (checksums deleted, so
``raw()`` recomputes them); the ``yacryptopan`` package for Crypto-PAn; the residual property checks a wrong checksum
against its own value before the rewrite (RFC 1624: an incremental update carries the error along), judged by
csum.inet.verify's computed value (itself held against scapy). tcprewrite: test_rewrite_tcprewrite.py; the kernel:
test_rewrite_kernel_nat.py, test_rewrite_capture_tc.py; the C engine against the Python one: test_rewrite_fast.py.
"""

from __future__ import annotations

import ipaddress
import json
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from scapy.compat import raw
from scapy.layers.inet import ICMP, IP, TCP, UDP, IPOption_RR
from scapy.layers.inet6 import ICMPv6EchoRequest, IPv6, IPv6ExtHdrHopByHop
from scapy.layers.l2 import Dot1Q, Ether
from scapy.layers.vxlan import VXLAN
from scapy.utils import PcapNgWriter, rdpcap

import csum.engine
from csum import inet
from csum.capture import pcap
from csum.rewrite import rewrite_capture
from csum.cli import main
from csum.errors import CsumValueError
from csum.rewrite.apply import apply
from csum.rewrite.fast import rewrite_chunk
from csum.rewrite.rules import Rules

E = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
KEY = "ab" * 32


def _stacks(a: str, b: str, a6: str, b6: str, sport: int, dport: int, payload: bytes) -> list:
    """One packet of each stack the C engine takes (and the Python engine too)."""
    inner = Ether(src="02:00:00:00:00:03", dst="02:00:00:00:00:04")
    return [E / IP(src=a, dst=b) / TCP(sport=sport, dport=dport) / payload,
            E / IP(src=a, dst=b, options=[IPOption_RR()]) / UDP(sport=sport, dport=dport) / payload,
            E / IPv6(src=a6, dst=b6) / IPv6ExtHdrHopByHop() / UDP(sport=sport, dport=dport) / payload,
            E / Dot1Q(vlan=10) / IP(src=a, dst=b) / ICMP() / payload,
            E / IPv6(src=a6, dst=b6) / ICMPv6EchoRequest() / payload,
            E / IP(src="192.0.2.1", dst=b) / UDP(sport=49152, dport=4789) / VXLAN(vni=1) / inner /
            IP(src=a, dst=b) / TCP(sport=sport, dport=dport) / payload,
            E / IPv6(src=a6, dst=b6) / UDP(sport=49152, dport=4789) / VXLAN(vni=1) / inner /
            IPv6(src=a6, dst=b6) / UDP(sport=sport, dport=dport) / payload]


def _rebuilt(p, rules: Rules):
    """scapy's rebuild of ``p`` with ``rules``' address/port/TTL changes applied at every level, checksums recomputed."""
    p = p.copy()
    for layer in (IP, IPv6):
        i = 1
        while p.getlayer(layer, i) is not None:
            ip = p.getlayer(layer, i)
            for name in ("src", "dst"):
                old = ipaddress.ip_address(getattr(ip, name)).packed
                setattr(ip, name, str(ipaddress.ip_address(rules.address(old, name == "src"))))
            if layer is IP:
                ip.ttl = rules.hop(ip.ttl)
                del ip.chksum
            else:
                ip.hlim = rules.hop(ip.hlim)
            i += 1
    for layer in (TCP, UDP):
        i = 1
        while p.getlayer(layer, i) is not None:
            seg = p.getlayer(layer, i)
            seg.sport, seg.dport = rules.port(6 if layer is TCP else 17, seg.sport), \
                rules.port(6 if layer is TCP else 17, seg.dport)
            if not (layer is UDP and seg.chksum == 0 and p.haslayer(IP) and i == 1 and p.haslayer(VXLAN)):
                del seg.chksum
            i += 1
    for layer, name in ((ICMP, "chksum"), (ICMPv6EchoRequest, "cksum")):
        if p.haslayer(layer):
            delattr(p[layer], name)
    return raw(p)


RULES = Rules(map_ip=["10.0.0.0/8=192.168.0.0/16", "2001:db8::/32=2001:db9::/48"], map_port=["80=8080"], ttl=-1)
addresses4 = st.integers(0, 2**32 - 1).map(lambda n: str(ipaddress.IPv4Address(n)))
addresses6 = st.integers(0, 2**128 - 1).map(lambda n: str(ipaddress.IPv6Address(n)))


@pytest.mark.parametrize("engine", ["c", "python"])
@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
# scapy builds and rebuilds seven stacks per example: 40 (x2 engines) keep CI fast; the monkeypatch is the same for every input
@given(a=st.one_of(st.just("10.0.0.1"), addresses4), b=addresses4, a6=st.one_of(st.just("2001:db8::1"), addresses6),
       b6=addresses6, sport=st.sampled_from([80, 0, 65535, 1234]), dport=st.integers(0, 65535),
       payload=st.binary(max_size=40))
def test_equals_scapy_rebuild(monkeypatch, engine, a, b, a6, b6, sport, dport, payload):
    """A capture whose checksums are right comes out equal to scapy's from-scratch rebuild of every packet, with the
    C engine and with the Python engine alone."""
    if engine == "python":
        monkeypatch.setattr(csum.engine, "crewrite", None)
    elif csum.engine.crewrite is None:
        pytest.skip("the C extension csum.engine._rewrite is not built")
    packets = [Ether(raw(p)) for p in _stacks(a, b, a6, b6, sport, dport, payload)]
    for p in packets:
        got = apply(raw(p), 1, RULES) or raw(p)
        assert got == _rebuilt(p, RULES), p.summary()
    chunk = pcap.parse(pcap.to_bytes([raw(p) for p in packets]))
    data, _, taken = rewrite_chunk(chunk, RULES)
    assert taken == (len(packets) if engine == "c" else 0)  # the C engine takes every one of these stacks
    for i in range(len(chunk)):
        s, n = int(chunk.offsets[i]), int(chunk.caplens[i])
        assert data[s:s + n] == _rebuilt(packets[i], RULES)


def _l4(packet: bytes) -> list:
    return [r for r in inet.verify(packet) if r.layer in ("tcp", "udp")]


@settings(max_examples=300)
@given(error=st.integers(1, 0xFFFE), sport=st.integers(0, 65535), src=addresses4)
@example(error=1, sport=80, src="10.0.0.1")
@example(error=0xFFFE, sport=80, src="10.255.255.255")
def test_a_wrong_checksum_stays_wrong_by_the_same_residual(error, sport, src):
    """A TCP checksum off by ``error`` (one's complement) before the rewrite is off by the same amount after it:
    stored minus computed (both as the naive RFC 1071 model gives them) is unchanged."""
    frame = bytearray(raw(E / IP(src=src, dst="10.9.9.9") / TCP(sport=sport, dport=80) / b"payload"))
    good = int.from_bytes(frame[50:52], "big")
    frame[50:52] = ((good + error) % 0xFFFF or 0xFFFF).to_bytes(2, "big")  # off by error in one's complement
    before = _l4(bytes(frame))[0]
    for engine in (csum.engine.crewrite, None):
        saved, csum.engine.crewrite = csum.engine.crewrite, engine
        try:
            chunk = pcap.parse(pcap.to_bytes([bytes(frame)]))
            data, _, _ = rewrite_chunk(chunk, RULES)
            s = int(chunk.offsets[0])
            new = data[s:s + len(frame)]
        finally:
            csum.engine.crewrite = saved
        after = _l4(new)[0]
        assert after.status.value == "bad"
        assert (after.stored - after.computed) % 0xFFFF == (before.stored - before.computed) % 0xFFFF == error


def test_offload_partial_sum_stays_a_partial_sum():
    """A TCP field holding transmit offload's pseudo-header sum (CHECKSUM_PARTIAL) holds the new pseudo-header's sum
    after an address change: csum.inet.verify (itself checked against scapy) still calls it offload."""
    from packets import offload_tcp

    frame = offload_tcp()
    assert [r.status.value for r in _l4(frame)] == ["offload"]
    new = apply(frame, 101, Rules(map_ip=["0.0.0.0/0=198.51.100.0/24"]))
    assert new is not None and [r.status.value for r in _l4(new)] == ["offload"]


def test_cryptopan_equals_yacryptopan():
    """Every address of 2,000 random IPv4 and IPv6 ones anonymizes as yacryptopan (the reference package) does."""
    yacryptopan = pytest.importorskip("yacryptopan", reason="yacryptopan (the [test] extra) is not installed")
    import random

    from csum.rewrite.cryptopan import CryptoPAn

    key = bytes.fromhex(KEY)
    ours, theirs, rng = CryptoPAn(key), yacryptopan.CryptoPAn(key), random.Random(25)
    for _ in range(1000):
        for addr in (ipaddress.IPv4Address(rng.getrandbits(32)), ipaddress.IPv6Address(rng.getrandbits(128))):
            assert str(ipaddress.ip_address(ours.anonymize_packed(addr.packed))) == theirs.anonymize(str(addr))


def _frames() -> list[bytes]:
    return [raw(p) for p in _stacks("10.0.0.1", "10.0.0.2", "2001:db8::1", "2001:db8::2", 1234, 80, b"data")]


def test_cli_rewrites_and_reports(tmp_path, capsys):
    """``csum rewrite`` writes every packet rewritten (the rebuild's bytes), the JSON report counts them, and the
    output verifies clean; with --anonymize, addresses map as yacryptopan says."""
    src, dst = tmp_path / "in.pcap", tmp_path / "out.pcap"
    src.write_bytes(pcap.to_bytes(_frames()))
    assert main(["rewrite", str(src), str(dst), "--map-ip", "10.0.0.0/8=192.168.0.0/16", "--map-ip",
                 "2001:db8::/32=2001:db9::/48", "--map-port", "80=8080", "--ttl", "-1", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["packets"] == doc["changed_packets"] == 7 and doc["checksums"]["left_alone"] == {}
    got = [raw(p) for p in rdpcap(str(dst))]
    assert got == [_rebuilt(Ether(f), RULES) for f in _frames()]
    assert main(["verify", str(dst)]) == 0


def test_pcapng_blocks_and_comments_are_kept(tmp_path):
    """A pcapng file's every byte but the rewritten fields is copied: its comment and section header survive."""
    src, dst = tmp_path / "in.pcapng", tmp_path / "out.pcapng"
    frames = [Ether(f) for f in _frames()]
    frames[0].comment = b"keep me"
    with PcapNgWriter(str(src)) as w:
        for f in frames:
            w.write(f)
    rewrite_capture(str(src), str(dst), Rules(ttl=9))
    a, b = src.read_bytes(), dst.read_bytes()
    assert len(a) == len(b) and b"keep me" in b
    assert [i for i in range(len(a)) if a[i] != b[i]]  # something changed ...
    assert [raw(p) for p in rdpcap(str(dst))] == [_rebuilt(f, Rules(ttl=9)) for f in frames]  # ... the TTLs only


def test_fix_corrects_too(tmp_path, capsys):
    """--fix rewrites, then corrects the checksum that was wrong; without it the wrong one stays wrong."""
    frame = bytearray(_frames()[0])
    frame[50:52] = b"\x12\x34"
    src = tmp_path / "in.pcap"
    src.write_bytes(pcap.to_bytes([bytes(frame)]))
    assert main(["rewrite", str(src), str(tmp_path / "a.pcap"), "--ttl", "3", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["checksums"]["fixed"] == 0
    assert main(["verify", str(tmp_path / "a.pcap")]) == 1
    capsys.readouterr()
    assert main(["rewrite", str(src), str(tmp_path / "b.pcap"), "--ttl", "3", "--fix", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["checksums"]["fixed"] == 1
    assert main(["verify", str(tmp_path / "b.pcap")]) == 0


def test_stdin_stdout_and_compressed(tmp_path):
    """``-`` reads standard input and writes standard output; gzip input is read: the bytes equal a file-to-file
    rewrite's."""
    import gzip

    src = tmp_path / "in.pcap.gz"
    src.write_bytes(gzip.compress(pcap.to_bytes(_frames())))
    rewrite_capture(str(src), str(tmp_path / "ref.pcap"), RULES)
    args = ["--map-ip", "10.0.0.0/8=192.168.0.0/16", "--map-ip", "2001:db8::/32=2001:db9::/48", "--map-port",
            "80=8080", "--ttl", "-1"]
    run = subprocess.run([sys.executable, "-m", "csum", "rewrite", "-", "-", *args], input=src.read_bytes(),
                         capture_output=True, check=True)
    assert run.stdout == (tmp_path / "ref.pcap").read_bytes()


@pytest.mark.parametrize("argv, message", [
    (["--map-ip", "10.0.0.0/8"], "OLD=NEW"),
    (["--map-ip", "10.0.0.0/8=2001:db8::/32"], "IPv4 prefix to an IPv6"),
    (["--map-ip", "10.0.0.0/8=1.0.0.0/8", "--map-src", "10.1.0.0/16=2.0.0.0/16"], "overlap"),
    (["--map-port", "tcp:80"], "port map"),
    (["--ttl", "300"], "ttl"),
    (["--anonymize", "abc"], "64 hex digits"),
])
def test_bad_rules_are_one_line_exit_2_nothing_touched(tmp_path, capsys, argv, message):
    """An unparsable rule, a map to the other family, overlapping prefixes ...: one line, exit 2, OUT not made."""
    src, dst = tmp_path / "in.pcap", tmp_path / "out.pcap"
    src.write_bytes(pcap.to_bytes(_frames()))
    assert main(["rewrite", str(src), str(dst), *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err and not dst.exists()


def test_unwritable_out_is_one_line_exit_2(tmp_path, capsys):
    """OUT in a directory that does not exist, or a directory: exit 2, one line; IN is untouched."""
    src = tmp_path / "in.pcap"
    src.write_bytes(pcap.to_bytes(_frames()))
    before = src.read_bytes()
    for out in (tmp_path / "no" / "out.pcap", tmp_path):
        assert main(["rewrite", str(src), str(out), "--ttl", "3"]) == 2
        assert capsys.readouterr().err.count("\n") == 1
    assert main(["rewrite", str(src), str(src), "--ttl", "3"]) == 2
    assert src.read_bytes() == before


def test_rules_file(tmp_path):
    """A TOML rules file gives the same rules as the options; an unknown key is a bad-rule error."""
    f = tmp_path / "rules.toml"
    f.write_text('map-ip = ["10.0.0.0/8=192.168.0.0/16", "2001:db8::/32=2001:db9::/48"]\n'
                 'map-port = {80 = 8080}\nttl = -1\n')
    assert Rules.from_toml(f) == RULES
    f.write_text("mapip = []\n")
    with pytest.raises(CsumValueError) as err:
        Rules.from_toml(f)
    assert err.value.code == "bad-rule"


def test_left_alone_cut_packets_are_counted(tmp_path):
    """A packet cut before its TCP checksum keeps it (and the report says why); its IPv4 header is still patched."""
    frame = _frames()[0]
    src = tmp_path / "cut.pcap"
    data = bytearray(pcap.to_bytes([frame]))
    data[32:36] = (45).to_bytes(4, "little")  # caplen 45: the TCP checksum at 50 is not captured
    src.write_bytes(bytes(data[:16 + 24 + 45]))
    result = rewrite_capture(str(src), str(tmp_path / "out.pcap"), Rules(map_ip=["10.0.0.0/8=11.0.0.0/8"]))
    assert result.outcome.left_alone == {"not-captured": 1} and result.outcome.kept == 1
