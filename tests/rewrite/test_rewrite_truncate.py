"""``csum rewrite --truncate --mtu N`` (csum/rewrite/truncate.py; records resized by csum.capture.pcap.resized).

Expected values: ``tcprewrite --mtu=N --mtu-trunc`` (Debian's tcpreplay 4.4; skipped with the reason where it is not
installed: ``.ci/run`` installs it) on the same scapy-built capture, byte for byte and record length for record
length; scapy's checksum computation (``in4_chksum`` / ``in6_chksum`` and its rebuild of a layer whose checksum is
deleted) where csum differs from tcprewrite and for the residuals a cut keeps (hypothesis, 300 examples); tshark's and scapy's readings of the pcapng csum writes.
"""

from __future__ import annotations

import random
import shutil
import subprocess

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scapy.compat import raw
from scapy.layers.inet import ICMP, IP, TCP, UDP, in4_chksum
from scapy.layers.inet6 import ICMPv6EchoRequest, IPv6, in6_chksum
from scapy.layers.l2 import ARP, Dot1Q, Ether
from scapy.layers.vxlan import VXLAN
from scapy.utils import PcapNgWriter, checksum

from csum import inet
from csum.capture import pcap
from csum.cli import main
from csum.errors import CsumValueError

E = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
tcprewrite = pytest.mark.skipif(shutil.which("tcprewrite") is None,
                                reason="tcprewrite (Debian's tcpreplay) is not installed")


def _frames(rng: random.Random, n: int) -> list[bytes]:
    """IPv4 and IPv6 TCP, UDP, ICMP / ICMPv6 echo frames (a fifth VLAN-tagged) of 0..1400 payload bytes, every
    checksum right; and ARP frames with a long trailer (not IP: cut without more)."""
    frames = []
    for _ in range(n):
        if rng.random() < 0.05:
            frames.append(raw(E / ARP(psrc="10.0.0.1", pdst="10.0.0.2")) + rng.randbytes(rng.randrange(0, 600)))
            continue
        v6 = rng.random() < 0.5
        ip = IPv6(src="2001:db8::1", dst="2001:db8::2", hlim=64) if v6 else \
            IP(src="10.0.0.1", dst="10.0.0.2", id=rng.getrandbits(16))
        l4 = rng.choice([TCP(sport=rng.randrange(1, 65536), dport=443, seq=rng.getrandbits(32)),
                         UDP(sport=rng.randrange(1, 65536), dport=53),
                         ICMPv6EchoRequest(id=rng.getrandbits(16)) if v6 else ICMP(id=rng.getrandbits(16))])
        link = E / Dot1Q(vlan=rng.randrange(1, 4095)) if rng.random() < 0.2 else E
        frames.append(raw(link / ip / l4 / rng.randbytes(rng.randrange(0, 1400))))
    return frames


def _records(path) -> list[tuple[bytes, int]]:
    capture = pcap.read(path)
    return [(bytes(capture.packet(i)), int(capture.origlens[i])) for i in range(len(capture))]


def _ip_at(frame: bytes) -> int:
    return 18 if frame[12:14] == b"\x81\x00" else 14


def _udp_fixed(frame: bytes) -> bytes:
    """``frame`` (tcprewrite's cut UDP datagram) with the UDP Length saying what is left and the checksum scapy
    computes for it: what csum writes where tcprewrite leaves the Length as it was."""
    packet = Ether(frame)
    packet[UDP].len, packet[UDP].chksum = None, None
    return raw(packet)


@tcprewrite
@pytest.mark.parametrize("mtu", [68, 101, 576, 1000])
def test_truncate_equals_tcprewrite_mtu_trunc(tmp_path, mtu):
    """300 frames through ``csum rewrite --truncate --mtu N`` and ``tcprewrite --mtu=N --mtu-trunc``: the same
    records (captured and original lengths: the link header and N bytes where the frame was longer), the same bytes
    from the EtherType on (tcprewrite writes multicast MACs into IPv6 frames), TCP, ICMP, ICMPv6, IPv6 and VLAN
    included; but UDP, where csum also sets the UDP Length to what is left (tcprewrite leaves it, so its datagram
    claims bytes it no longer has), with the checksum scapy computes for that. Every checksum csum writes is right
    (csum.inet.verify), as scapy's rebuild of tcprewrite's output confirms for tcprewrite's."""
    rng = random.Random(mtu)
    frames = _frames(rng, 300)
    src = tmp_path / "in.pcap"
    src.write_bytes(pcap.to_bytes(frames))
    subprocess.run(["tcprewrite", f"--infile={src}", f"--outfile={tmp_path / 't.pcap'}", f"--mtu={mtu}",
                    "--mtu-trunc"], check=True, capture_output=True)
    assert main(["rewrite", str(src), str(tmp_path / "c.pcap"), "--truncate", "--mtu", str(mtu), "--quiet"]) == 0
    theirs, ours = _records(tmp_path / "t.pcap"), _records(tmp_path / "c.pcap")
    assert len(theirs) == len(ours) == len(frames)
    cut = udp = 0
    for i, (f, (t, t_orig), (o, o_orig)) in enumerate(zip(frames, theirs, ours)):
        assert (len(o), o_orig) == (len(t), t_orig) == ((len(f), len(f)) if len(f) <= _ip_at(f) + mtu else
                                                           (_ip_at(f) + mtu,) * 2), i
        cut += len(o) < len(f)
        packet = Ether(f)
        if packet.haslayer(UDP) and len(o) < len(f):
            udp += 1
            assert o[12:].hex() == _udp_fixed(t)[12:].hex(), (i, packet.summary())
            assert Ether(t)[UDP].len == packet[UDP].len != Ether(o)[UDP].len  # tcprewrite: the old Length
        else:
            assert o[12:].hex() == t[12:].hex(), (i, packet.summary())
        if packet.haslayer(IP) or packet.haslayer(IPv6):
            assert all(r.ok for r in inet.verify(o)), (i, packet.summary())
    assert cut > 60 and udp > 15  # a fifth to all of the frames are longer than the MTU


@tcprewrite
def test_truncate_differences_from_tcprewrite(tmp_path):
    """Where the two differ, each checked: a wrong TCP checksum keeps its residual through csum's cut (scapy's
    in4_chksum over the segment with its stored checksum gives the same before and after) where tcprewrite
    recomputes it right; the first fragment of a UDP datagram keeps its checksum (it covers the whole datagram,
    which lost bytes: counted as left alone) where tcprewrite writes 0; an IPv4 datagram that ends within the MTU
    keeps its Total Length when its frame's trailer is cut, where tcprewrite sets it to the MTU."""
    wrong = bytearray(raw(E / IP(src="10.0.0.1", dst="10.0.0.2") / TCP(dport=80) / bytes(range(200))))
    wrong[14 + 20 + 16] ^= 0x21
    first = raw(E / IP(src="10.0.0.1", dst="10.0.0.2", flags="MF", id=7) / UDP(dport=53) / bytes(300))
    short = raw(E / IP(src="10.0.0.1", dst="10.0.0.2") / UDP(dport=53) / b"dns") + bytes(150)
    src = tmp_path / "in.pcap"
    src.write_bytes(pcap.to_bytes([bytes(wrong), first, short]))
    subprocess.run(["tcprewrite", f"--infile={src}", f"--outfile={tmp_path / 't.pcap'}", "--mtu=100", "--mtu-trunc"],
                   check=True, capture_output=True)
    assert main(["rewrite", str(src), str(tmp_path / "c.pcap"), "--truncate", "--mtu", "100", "--json"]) == 0
    (t_wrong, _), (t_first, _), (t_short, _) = _records(tmp_path / "t.pcap")
    (o_wrong, _), (o_first, _), (o_short, _) = _records(tmp_path / "c.pcap")

    def residual(frame: bytes) -> int:
        packet = Ether(frame)
        return in4_chksum(6, packet[IP], raw(packet[IP].payload)[:packet[IP].len - 20])
    assert residual(bytes(wrong)) == residual(o_wrong) != 0 and residual(t_wrong) == 0
    assert Ether(t_first)[UDP].chksum == 0 and Ether(o_first)[UDP].chksum == Ether(first)[UDP].chksum != 0
    assert Ether(t_short)[IP].len == 100 and Ether(o_short)[IP].len == Ether(short)[IP].len == 31
    assert len(t_short) == len(o_short) == 114


def test_truncate_keeps_an_offload_partial_sum_partial(tmp_path):
    """A transmit-offload TCP field (the pseudo-header sum, as a sender with checksum offload captures it) cut by
    the MTU holds the pseudo-header sum of the new length: scapy's in6_chksum of an empty segment with the new
    length (its complement), the value Linux's tcp_v6_send_check stores."""
    segment = TCP(sport=1, dport=2) / bytes(range(256))
    frame = E / IPv6(src="2001:db8::1", dst="2001:db8::2") / segment
    full = bytearray(raw(frame))
    tcp_len = len(raw(segment))
    partial = (~in6_chksum(6, frame[IPv6], b"\0" * tcp_len)) & 0xFFFF  # the pseudo-header sum of that length
    full[14 + 40 + 16:14 + 40 + 18] = partial.to_bytes(2, "big")
    src = tmp_path / "in.pcap"
    src.write_bytes(pcap.to_bytes([bytes(full)]))
    assert main(["rewrite", str(src), str(tmp_path / "c.pcap"), "--truncate", "--mtu", "100", "--quiet"]) == 0
    ((out, _),) = _records(tmp_path / "c.pcap")
    cut = Ether(out)
    assert cut[IPv6].plen == 60
    assert cut[TCP].chksum == (~in6_chksum(6, cut[IPv6], b"\0" * 60)) & 0xFFFF


def test_truncate_rewrites_pcapng_blocks(tmp_path):
    """A pcapng capture: each Enhanced Packet Block is resized (captured and original length, padding, its
    comment option kept, the trailing length), so tshark and scapy read the packets csum cut from the pcap form of
    the same capture, with the comments."""
    rng = random.Random(7)
    frames = _frames(rng, 60)
    ng = tmp_path / "in.pcapng"
    with PcapNgWriter(str(ng)) as writer:
        for i, frame in enumerate(frames):
            packet = Ether(frame)
            packet.comment = f"packet {i}".encode()
            packet.time = 1_700_000_000 + i
            writer.write(packet)
    flat = tmp_path / "in.pcap"
    flat.write_bytes(pcap.to_bytes(frames))
    assert main(["rewrite", str(ng), str(tmp_path / "c.pcapng"), "--truncate", "--mtu", "300", "--quiet"]) == 0
    assert main(["rewrite", str(flat), str(tmp_path / "c.pcap"), "--truncate", "--mtu", "300", "--quiet"]) == 0
    want = _records(tmp_path / "c.pcap")
    assert sum(len(p) < len(f) for (p, _), f in zip(want, frames)) > 20
    from scapy.utils import rdpcap

    got = rdpcap(str(tmp_path / "c.pcapng"))
    assert [(raw(p), p.wirelen) for p in got] == want
    assert [p.comment for p in got] == [f"packet {i}".encode() for i in range(len(frames))]
    if shutil.which("tshark"):
        run = subprocess.run(["tshark", "-r", str(tmp_path / "c.pcapng"), "-T", "fields", "-e", "frame.cap_len",
                              "-e", "frame.len", "-e", "frame.comment"], capture_output=True, text=True, check=True)
        rows = [line.split("\t") for line in run.stdout.splitlines()]
        assert [(int(c), int(w)) for c, w, _ in rows] == [(len(p), w) for p, w in want]


@pytest.mark.parametrize("args, says", [(["--mtu", "1000"], "--mtu"), (["--truncate", "--mtu", "67"], "--mtu"),
                                        (["--truncate", "--mtu", "x"], "--mtu")])
def test_truncate_bad_arguments(tmp_path, capsys, args, says):
    """--mtu without --truncate, an MTU below RFC 791's 68 bytes or not a number: one line naming --mtu, exit 2,
    nothing written."""
    src = tmp_path / "in.pcap"
    src.write_bytes(pcap.to_bytes([raw(E / IP() / TCP())]))
    assert main(["rewrite", str(src), str(tmp_path / "out.pcap"), *args]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and says in err[0] and not (tmp_path / "out.pcap").exists()


def test_truncate_big_endian_pcap_and_simple_packet_blocks(tmp_path):
    """The other record layouts ``--truncate`` resizes: a big-endian pcap and a big-endian pcapng of Simple Packet
    Blocks (original length only; pcapng 4.4), built here with struct from the frames. Both come out as the
    little-endian pcap does (that one checked against tcprewrite above): the big-endian pcap as scapy reads it, the
    Simple Packet Blocks as Wireshark's editcap converts them to pcap."""
    import struct

    from scapy.utils import rdpcap

    frames = _frames(random.Random(11), 40)
    (tmp_path / "le.pcap").write_bytes(pcap.to_bytes(frames))
    be = [struct.pack(">IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 262144, 1)]
    be += [struct.pack(">IIII", 0, 0, len(f), len(f)) + f for f in frames]
    (tmp_path / "be.pcap").write_bytes(b"".join(be))
    shb = struct.pack(">IIIHHq", 0x0A0D0D0A, 28, 0x1A2B3C4D, 1, 0, -1) + struct.pack(">I", 28)
    idb = struct.pack(">IIHHI", 1, 20, 1, 0, 0) + struct.pack(">I", 20)
    spbs = [struct.pack(">III", 3, 16 + len(f) + (-len(f) % 4), len(f)) + f + bytes(-len(f) % 4)
            + struct.pack(">I", 16 + len(f) + (-len(f) % 4)) for f in frames]
    (tmp_path / "spb.pcapng").write_bytes(shb + idb + b"".join(spbs))
    for name in ("le.pcap", "be.pcap", "spb.pcapng"):
        assert main(["rewrite", str(tmp_path / name), str(tmp_path / f"cut-{name}"), "--truncate", "--mtu", "200",
                     "--quiet"]) == 0
    want = _records(tmp_path / "cut-le.pcap")
    assert sum(len(p) < len(f) for (p, _), f in zip(want, frames)) > 20
    assert [(raw(p), p.wirelen) for p in rdpcap(str(tmp_path / "cut-be.pcap"))] == want
    if shutil.which("editcap"):
        subprocess.run(["editcap", "-F", "pcap", str(tmp_path / "cut-spb.pcapng"), str(tmp_path / "spb.pcap")],
                       check=True, capture_output=True)
        assert [(raw(p), p.wirelen) for p in rdpcap(str(tmp_path / "spb.pcap"))] == want
    assert _records(tmp_path / "cut-spb.pcapng") == want


def _residual(frame: bytes) -> int:
    """scapy's checksum over the transport layer of ``frame`` with its stored checksum in it (0: right; else the
    residual), the pseudo-header from the IP header's addresses and the bytes the frame holds."""
    packet = Ether(frame)
    if packet.haslayer(IPv6):
        ip = packet[IPv6]
        return in6_chksum(ip.nh, ip, raw(ip.payload)[:ip.plen])
    ip = packet[IP]
    data = raw(ip.payload)[:ip.len - ip.ihl * 4]
    if ip.proto == 1:
        from scapy.utils import checksum
        return checksum(data)
    return in4_chksum(ip.proto, ip, data)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(v6=st.booleans(), kind=st.sampled_from(["tcp", "udp", "icmp"]), size=st.integers(0, 1400),
       flip=st.integers(0, 0xFFFF), mtu=st.integers(68, 1500), seed=st.integers(0, 2**32 - 1))
def test_truncate_keeps_each_residual(v6, kind, size, flip, mtu, seed):
    """Whatever the frame, the MTU and how wrong its transport checksum is, the cut frame's checksum is wrong by
    the same residual (right stays right): scapy's in4_chksum / in6_chksum / checksum over the transport layer
    before and after; the IPv4 header checksum stays right (scapy's rebuild)."""
    rng = random.Random(seed)
    ip = IPv6(src="2001:db8::1", dst="2001:db8::2") if v6 else IP(src="10.0.0.1", dst="10.0.0.2")
    l4 = {"tcp": TCP(sport=1, dport=2), "udp": UDP(sport=3, dport=4),
          "icmp": ICMPv6EchoRequest() if v6 else ICMP()}[kind]
    frame = bytearray(raw(E / ip / l4 / rng.randbytes(size)))
    at = 14 + (40 if v6 else 20) + {"tcp": 16, "udp": 6, "icmp": 2}[kind]
    frame[at:at + 2] = (int.from_bytes(frame[at:at + 2], "big") ^ flip).to_bytes(2, "big")
    if kind == "udp" and not v6 and frame[at:at + 2] == b"\0\0":
        frame[at + 1] = 1  # not UDP's "no checksum"
    before = _residual(bytes(frame))
    capture = pcap.parse(pcap.to_bytes([bytes(frame)]))
    from csum.rewrite.rules import Rules
    from csum.rewrite.truncate import truncate_chunk

    cut, out = truncate_chunk(capture, Rules(truncate=mtu))
    got = bytes(cut.packet(0))
    assert len(got) == min(len(frame), 14 + mtu) == int(cut.origlens[0])
    assert _residual(got) == before
    if not v6:
        rebuilt = Ether(got)
        rebuilt[IP].chksum = None
        assert raw(Ether(raw(rebuilt)))[14:34] == got[14:34]


def test_truncate_from_a_rules_file(tmp_path):
    """``truncate = N`` in a --rules TOML file cuts as ``--truncate --mtu N`` does (the same output bytes), and an
    MTU below 68 in the file is a one-line ``bad-rule`` error, exit 2. Expected: the --truncate run's bytes, which
    the tcprewrite comparison above checks."""
    frames = _frames(random.Random(3), 30)
    src = tmp_path / "in.pcap"
    src.write_bytes(pcap.to_bytes(frames))
    (tmp_path / "rules.toml").write_text("truncate = 200\n")
    (tmp_path / "bad.toml").write_text("truncate = 20\n")
    assert main(["rewrite", str(src), str(tmp_path / "a.pcap"), "--rules", str(tmp_path / "rules.toml"), "-q"]) == 0
    assert main(["rewrite", str(src), str(tmp_path / "b.pcap"), "--truncate", "--mtu", "200", "-q"]) == 0
    assert (tmp_path / "a.pcap").read_bytes() == (tmp_path / "b.pcap").read_bytes() != src.read_bytes()
    assert main(["rewrite", str(src), str(tmp_path / "c.pcap"), "--rules", str(tmp_path / "bad.toml")]) == 2
    assert not (tmp_path / "c.pcap").exists()


def test_truncate_counts_what_it_leaves(tmp_path, capsys):
    """What --truncate cannot fix is cut and counted, never passed as fixed: an IPv4 header with an IHL of 3
    (malformed: cut, its lengths as they were, ``malformed``), a UDP first fragment (``fragment``), the packet a
    VXLAN tunnel carries (``not-captured``: its lengths count the bytes cut off; the outer checksums are right), a
    frame on a link type csum does not walk (left whole, ``unsupported``). Expected: the lengths of the frames scapy built, and
    their bytes where csum leaves them."""
    bad = bytearray(raw(E / IP(src="10.0.0.1", dst="10.0.0.2") / UDP() / bytes(300)))
    bad[14] = 0x43
    first = raw(E / IP(src="10.0.0.1", dst="10.0.0.2", flags="MF") / UDP() / bytes(300))
    vxlan = raw(E / IP(src="192.0.2.1", dst="192.0.2.2") / UDP(sport=49152, dport=4789) / VXLAN(vni=1) / Ether() /
                IP(src="10.0.0.1", dst="10.0.0.2") / TCP() / bytes(300))
    src = tmp_path / "in.pcap"
    src.write_bytes(pcap.to_bytes([bytes(bad), first, vxlan]))
    assert main(["rewrite", str(src), str(tmp_path / "out.pcap"), "--truncate", "--mtu", "100", "--json"]) == 0
    import json

    doc = json.loads(capsys.readouterr().out)
    assert doc["truncated_packets"] == 3
    assert doc["checksums"]["left_alone"] == {"fragment": 1, "malformed": 1, "not-captured": 1}
    (cut_bad, _), (cut_first, _), (cut_vxlan, _) = _records(tmp_path / "out.pcap")
    with pytest.raises(CsumValueError, match=r"^inside eth/ipv4/udp: truncated: IPv4 total length 340 "):
        inet.verify(cut_vxlan)  # the inner datagram's lengths count the bytes cut off: csum says so
    outer = Ether(cut_vxlan)[IP]  # the outer IPv4 and UDP checksums are scapy's over the cut frame
    head, seg = bytearray(raw(outer)[:20]), bytearray(raw(outer)[20:outer.len])
    head[10:12] = seg[6:8] = b"\0\0"
    assert (checksum(bytes(head)), in4_chksum(17, outer, bytes(seg))) == (outer.chksum, outer[UDP].chksum)
    assert cut_bad == bytes(bad[:114]) and len(cut_first) == 114
    other = tmp_path / "other.pcap"
    other.write_bytes(pcap.to_bytes([bytes(400)], linktype=147))  # LINKTYPE_USER0
    assert main(["rewrite", str(other), str(tmp_path / "o.pcap"), "--truncate", "--mtu", "100", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["truncated_packets"] == 0 and doc["checksums"]["left_alone"] == {"unsupported": 1}
    assert (tmp_path / "o.pcap").read_bytes() == other.read_bytes()
