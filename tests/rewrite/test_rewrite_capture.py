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
from scapy.layers.inet6 import ICMPv6DestUnreach, ICMPv6EchoRequest, IPv6, IPv6ExtHdrHopByHop
from scapy.layers.l2 import ARP, Dot1AD, Dot1Q, Ether
from scapy.layers.vxlan import VXLAN
from scapy.packet import NoPayload
from scapy.utils import PcapNgWriter, rdpcap

import csum.engine
from csum import inet
from csum.capture import pcap
from csum.rewrite import rewrite_capture
from csum.cli import main
from csum.errors import CsumValueError
from csum.layers import table
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


#: Ports whose packets csum/engine/_rewrite.c leaves to the Python engine (csum/layers/table.py): those of embedded
#: packets (OpenFlow, sFlow) and of the UDP tunnels the Python walker follows (VXLAN, which C rewrites, aside).
_PYTHON_PORTS = (set(table.TCP_EMBEDDED) | set(table.UDP_EMBEDDED) | set(table.UDP_TUNNELS)
                 | set(table.UDP_TUNNELS_BY_SOURCE)) - {table.VXLAN_PORT}
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
    if engine == "python":
        assert taken == 0
    elif not {sport, dport} & _PYTHON_PORTS:
        assert taken == len(packets)  # the C engine takes every one of these stacks
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


@pytest.mark.parametrize("engine", ["c", "python"])
def test_an_odd_checksum_offset_leaves_the_packet_alone(tmp_path, capsys, monkeypatch, engine):
    """A PPPoE session whose PPP protocol field is one byte (RFC 1661 6.5, protocol-field compression) puts the IPv4
    header and every checksum after it at odd offsets, which the kernel's bpf_l3/l4_csum_replace refuse (-EFAULT,
    net/core/filter.c): the packet is left alone and counted (``bad-offset``), the output is the input byte for byte
    (the file scapy's rdpcap reads back the same), and there is no traceback. It was an AssertionError from
    csum/rewrite/packet.py until the fuzz target ``command`` ran its seeds."""
    inner = raw(IP(src="10.0.0.1", dst="10.1.0.2") / UDP(sport=7, dport=9) / b"ppp")
    frame = raw(Ether(dst="02:00:00:00:00:01", src="02:00:00:00:00:02", type=0x8864)) + b"\x11\x00\x00\x01" + \
        (1 + len(inner)).to_bytes(2, "big") + b"\x21" + inner
    src, out = tmp_path / "ppp.pcap", tmp_path / "out.pcap"
    src.write_bytes(pcap.to_bytes([frame]))
    if engine == "python":
        monkeypatch.setattr(csum.engine, "crewrite", None)
    assert main(["rewrite", str(src), str(out), "--map-ip", "10.0.0.0/8=11.0.0.0/8", "--jobs", "1"]) == 0
    assert "left alone: 1 bad-offset" in capsys.readouterr().out
    assert out.read_bytes() == src.read_bytes() and raw(rdpcap(str(out))[0]) == frame


def _rebuilt_at(p, rules_fn, level: str):
    """scapy's rebuild of ``p`` with ``rules_fn(ip, depth)`` applied to the IP headers ``level`` selects (depth 0: the
    outermost; ``inner``: every deeper one, tunnelled or quoted; ``all``), every checksum recomputed (an IPv4 UDP
    0 kept: no checksum)."""
    p = p.copy()
    layer, depth = p, -1
    while not isinstance(layer, NoPayload):  # outer to inner (scapy's IPerror, UDPerror ... of a quote are subclasses)
        if isinstance(layer, (IP, IPv6)):
            depth += 1
            if level == "all" or (level == "outer") == (depth == 0):
                rules_fn(layer, depth)
            if isinstance(layer, IP):
                del layer.chksum
        elif isinstance(layer, (TCP, UDP, ICMP)) and not (isinstance(layer, UDP) and layer.chksum == 0):
            del layer.chksum
        elif isinstance(layer, (ICMPv6EchoRequest, ICMPv6DestUnreach)):
            del layer.cksum
        layer = layer.payload
    return raw(p)


def _level_frames() -> dict:
    inner = Ether(src="02:00:00:00:00:03", dst="02:00:00:00:00:04")
    return {
        "vxlan4": E / IP(src="10.9.0.1", dst="192.0.2.2", tos=1) / UDP(sport=49152, dport=4789) / VXLAN(vni=1) /
        inner / IP(src="10.0.0.1", dst="10.0.0.2", tos=2) / TCP(sport=80, dport=1234) / b"inner",
        "vxlan6": E / IPv6(src="2001:db8::9", dst="fd00::2") / UDP(sport=49152, dport=4789) / VXLAN(vni=1) / inner /
        IPv6(src="2001:db8::1", dst="2001:db8::2", tc=3) / UDP(sport=1234, dport=80) / b"inner",
        "icmp-error": E / IP(src="10.7.7.7", dst="10.0.0.1") / ICMP(type=3, code=3) /
        IP(src="10.0.0.1", dst="10.7.7.7") / UDP(sport=40000, dport=80) / b"the whole quoted datagram",
        "icmp6-error": E / IPv6(src="2001:db8::7", dst="2001:db8::1") / ICMPv6DestUnreach(code=4) /
        IPv6(src="2001:db8::1", dst="2001:db8::7") / TCP(sport=80, dport=443) / b"the whole quoted datagram",
    }


LEVEL_RULES = Rules(map_ip=["10.0.0.0/8=192.168.0.0/16", "2001:db8::/32=2001:db9::/48"], map_port=["80=8080"], ttl=-1,
                    dscp=10)


def _level_change(ip, depth: int) -> None:
    """LEVEL_RULES written out for scapy: the prefix maps (host bits kept), TTL - 1, DSCP 10 (ECN kept), port 80."""
    for name in ("src", "dst"):
        addr = ipaddress.ip_address(getattr(ip, name))
        for old, new in (("10.0.0.0/8", "192.168.0.0/16"), ("2001:db8::/32", "2001:db9::/48")):
            o, n = ipaddress.ip_network(old), ipaddress.ip_network(new)
            if addr.version == o.version and addr in o:
                addr = ipaddress.ip_address(int(n.network_address) | (int(addr) & int(n.hostmask)))
        setattr(ip, name, str(addr))
    if isinstance(ip, IP):
        ip.ttl, ip.tos = ip.ttl - 1, (10 << 2) | (ip.tos & 3)
    else:
        ip.hlim, ip.tc = ip.hlim - 1, (10 << 2) | (ip.tc & 3)
    l4 = ip.payload
    if isinstance(l4, (TCP, UDP)):
        l4.sport, l4.dport = (8080 if port == 80 else port for port in (l4.sport, l4.dport))


@pytest.mark.parametrize("engine", ["c", "python"])
@pytest.mark.parametrize("level", ["outer", "inner", "all"])
def test_levels_equal_scapy(monkeypatch, engine, level):
    """``--level outer|inner|all``: the rules reach exactly the IP headers the level selects (a VXLAN packet's, an ICMP
    error's quote: IPv4 and IPv6), every checksum as scapy's rebuild with the same fields changed gives it."""
    if engine == "python":
        monkeypatch.setattr(csum.engine, "crewrite", None)
    rules = LEVEL_RULES.merged(level=level)
    for name, p in _level_frames().items():
        p = Ether(raw(p))
        data, _, _ = rewrite_chunk(pcap.parse(pcap.to_bytes([raw(p)])), rules)
        got = data[-len(raw(p)):]
        assert got.hex() == _rebuilt_at(p, _level_change, level).hex(), (name, level)


def test_map_src_reaches_a_quotes_destination():
    """A quote went the other way: with a prefix covering every address, --map-src maps the outer source and the
    quoted destination only, --map-dst the outer destination and the quoted source only; as scapy's rebuild with
    those fields set (and as the kernel's NAT does: test_rewrite_kernel_nat.py)."""
    p = Ether(raw(_level_frames()["icmp-error"]))  # 10.7.7.7 -> 10.0.0.1, quoting 10.0.0.1 -> 10.7.7.7
    for option, outer, quoted, address in (("map_src", "src", "dst", "11.7.7.7"), ("map_dst", "dst", "src", "11.0.0.1")):
        new = apply(raw(p), 1, Rules(**{option: ["10.0.0.0/8=11.0.0.0/8"]}))
        expected = p.copy()
        setattr(expected[IP], outer, address)
        setattr(expected[ICMP].payload, quoted, address)
        assert new is not None and new.hex() == _rebuilt_at(expected, lambda ip, depth: None, "all").hex(), option


@pytest.mark.parametrize("engine", ["c", "python"])
def test_mac_and_vlan_rules_equal_scapy(monkeypatch, engine):
    """--mac-src (every frame), --mac-dst OLD=NEW (frames to OLD only) and --vlan-retag on one tag and on both tags
    of a QinQ frame (priority and DEI bits kept) give scapy's frame with those fields set; they act on the outer
    Ethernet header only (a VXLAN packet's inner MACs stay), and on frames without IP too (ARP)."""
    if engine == "python":
        monkeypatch.setattr(csum.engine, "crewrite", None)
    rules = Rules(mac_src="02:aa:00:00:00:01", mac_dst="02:00:00:00:00:02=02:bb:00:00:00:02",
                  vlan_retag=["10=20", "100=4000"])
    other = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:09")
    frames = [E / IP(src="192.0.2.1", dst="192.0.2.2") / TCP() / b"x",
              other / IP() / UDP() / b"not to OLD",
              E / Dot1Q(prio=5, dei=1, vlan=10) / IP() / UDP() / b"tagged",
              E / Dot1AD(prio=3, vlan=100) / Dot1Q(prio=1, vlan=10) / IPv6() / UDP() / b"QinQ",
              E / Dot1Q(vlan=11) / IP() / ICMP() / b"another VLAN",
              _level_frames()["vxlan4"],
              E / ARP(psrc="192.0.2.1", pdst="192.0.2.2")]
    chunk = pcap.parse(pcap.to_bytes([raw(f) for f in frames]))
    data, _, _ = rewrite_chunk(chunk, rules)
    for i, f in enumerate(frames):
        expected = Ether(raw(f))
        expected.src = "02:aa:00:00:00:01"
        if expected.dst == "02:00:00:00:00:02":
            expected.dst = "02:bb:00:00:00:02"
        for tag in (Dot1AD, Dot1Q):
            if expected.haslayer(tag) and expected[tag].vlan in (10, 100):
                expected[tag].vlan = {10: 20, 100: 4000}[expected[tag].vlan]
        s, n = int(chunk.offsets[i]), int(chunk.caplens[i])
        assert data[s:s + n].hex() == raw(expected).hex(), f.summary()


def test_jobs_give_the_bytes_and_counts_of_one_process(tmp_path, capsys):
    """``--jobs 3`` over many small chunks (each rewritten in a forked worker: the C engine, the Python engine for the
    packets it hands over, Crypto-PAn) writes the file and the JSON counts ``--jobs 1`` writes; the expected bytes of
    every packet are scapy's rebuild (test_equals_scapy_rebuild), here the one-process run is the reference."""
    frames = [raw(p) for k in range(40) for p in _stacks(f"10.0.{k}.1", "10.9.9.9", f"2001:db8::{k + 1:x}",
                                                          "2001:db8::ffff", 80, 1000 + k, bytes(k))]
    frames += [raw(p) for p in _level_frames().values()] + [raw(E / ARP())]
    src = tmp_path / "in.pcap"
    src.write_bytes(pcap.to_bytes(frames))
    rules = ["--map-ip", "10.0.0.0/8=192.168.0.0/16", "--map-port", "80=8080", "--ttl", "-1", "--anonymize", KEY,
             "--json"]
    outs = []
    for jobs in ("1", "3"):
        dst = tmp_path / f"out{jobs}.pcap"
        assert main(["rewrite", str(src), str(dst), "--jobs", jobs, "--chunk-bytes", "2000", *rules]) == 0
        doc = json.loads(capsys.readouterr().out)
        doc.pop("out")
        outs.append((dst.read_bytes(), doc))
    assert outs[0] == outs[1]
    assert outs[0][1]["packets"] == len(frames) and outs[0][1]["fast_path"] > 0


def _damaged(frames: list[bytes]) -> list[bytes]:
    """``frames`` with a checksum byte (IPv4 header or transport) flipped in every other one, and an ICMP error
    quoting a TCP segment, its inner checksum wrong."""
    out = []
    for k, f in enumerate(frames):
        g = bytearray(f)
        if k % 2:
            r = [r for r in inet.verify(bytes(g), link="ethernet") if r.field is not None][-1]
            g[r.field] ^= 0x5A
        out.append(bytes(g))
    quoted = IP(src="10.0.0.2", dst="10.0.0.1") / TCP(sport=80, dport=1234) / b"quoted"
    quoted = bytearray(raw(quoted))
    quoted[20 + 16] ^= 0x33  # the quoted TCP checksum
    out.append(raw(E / IP(src="10.0.0.9", dst="10.0.0.1") / ICMP(type=3, code=4) / bytes(quoted)))
    return out


@pytest.mark.parametrize("args", [["--ttl", "-1"], ["--map-ip", "10.0.0.0/8=192.168.0.0/16", "--map-port", "80=8080"],
                                  ["--map-ip", "2001:db8::/32=2001:db9::/48", "--ttl", "7"]])
def test_rewrite_fix_is_fix_then_rewrite(tmp_path, args):
    """``csum rewrite IN OUT --fix`` writes the bytes of ``csum fix IN T`` then ``csum rewrite T OUT`` run as two
    commands (the differential issue 31 asks of a one-pass --fix), on scapy-built captures with wrong checksums; and
    every checksum of OUT is right as scapy recomputes it (the independent reference)."""
    src, fixed, two, one = (tmp_path / n for n in ("in.pcap", "fixed.pcap", "two.pcap", "one.pcap"))
    src.write_bytes(pcap.to_bytes(_damaged(_frames())))
    assert main(["fix", str(src), str(fixed), "-q"]) in (0, 1)
    assert main(["rewrite", str(fixed), str(two), *args, "-q"]) == 0
    assert main(["rewrite", str(src), str(one), *args, "--fix", "-q"]) == 0
    assert one.read_bytes() == two.read_bytes() != src.read_bytes()
    for p in rdpcap(str(one)):
        again = p.copy()
        for layer in (IP, TCP, UDP, ICMP):
            k = 1
            while again.getlayer(layer, k) is not None:
                del again.getlayer(layer, k).chksum  # the quote (IPerror, TCPerror) is kept as it is
                k += 1
        assert raw(Ether(raw(again))) == raw(p)


@pytest.mark.parametrize("fix", [False, True])
def test_a_damaged_capture_is_not_written_without_keep_going(tmp_path, capsys, fix):
    """Two packets, then a record whose caplen runs 4 GiB past the file (damaged, not a truncated last record) and
    frame bytes after it: `csum rewrite --map-ip` exits 2 with one line and writes no OUT (it used to write the two
    packets rewritten and the rest copied unchanged, the second frame's real addresses with them); --keep-going
    writes that, as before: the two packets are scapy's rebuild with the new addresses, the rest IN's bytes.
    rewrite_capture says the same (written False, dst absent)."""
    frames = [E / IP(src="10.0.0.1", dst="10.0.0.2") / TCP(sport=1, dport=2) / b"one",
              E / IP(src="10.0.0.1", dst="10.0.0.3") / UDP(sport=3, dport=4) / b"two"]
    good = pcap.to_bytes([raw(f) for f in frames])
    lying = (0).to_bytes(8, "little") + (0xFFFFFFFF).to_bytes(4, "little") + (60).to_bytes(4, "little")
    src, out = tmp_path / "in.pcap", tmp_path / "out.pcap"
    src.write_bytes(good + lying + raw(frames[1]))
    rules = ["--map-ip", "10.0.0.0/8=192.168.0.0/16", *(["--fix"] if fix else [])]
    assert main(["rewrite", str(src), str(out), *rules]) == 2
    printed, err = capsys.readouterr()
    assert printed.endswith(f": {out} not written\n") and "wrote" not in printed, printed
    assert err.count("\n") == 1 and err.startswith(f"csum: rewrite failed for {src}: ")
    assert err.endswith(f"; {out} not written (--keep-going writes it)\n") and not out.exists()
    assert main(["rewrite", str(src), str(out), *rules, "-q", "--keep-going"]) == 2
    assert "; --keep-going: wrote " in capsys.readouterr().err
    expected = pcap.to_bytes([_rebuilt(f, Rules(map_ip=["10.0.0.0/8=192.168.0.0/16"])) for f in frames])
    assert out.read_bytes() == expected + lying + raw(frames[1])
    out.unlink()
    result = rewrite_capture(str(src), str(out), Rules(map_ip=["10.0.0.0/8=192.168.0.0/16"]), fix=fix)
    assert not result.written and result.as_json()["out"] is None and not out.exists()
