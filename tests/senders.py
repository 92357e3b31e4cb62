"""Captures whose senders are known: hosts with transmit-offload sums, hosts with real corruption, IPv4 and IPv6,
a tunnel, built with scapy, with the counts csum.capture.hosts should find computed here from what was built.

Independent sources: scapy builds every packet and its correct checksums; a transmit-offload field is the folded
pseudo-header sum (the complement of the RFC 1071 checksum of RFC 9293's / RFC 8200's pseudo-header, computed by
scapy.utils.checksum over tests/packets.py's pseudo4/pseudo6); a corrupt field is scapy's correct value XOR 0x5a5a
(checked to differ from the offload sum); the expected tables are tallied from this list, never from csum.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from packets import pseudo4, pseudo6
from scapy.layers.inet import ICMP, IP, TCP, UDP, fragment
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether as _Ether
from scapy.packet import Raw
from scapy.utils import checksum

#: The first packet's time: 2023-11-14 22:13:20 UTC, in seconds and nanoseconds.
T0 = 1_700_000_000
#: Every packet is 0.25 s after the one before it (exact in binary, so scapy's float time is exact).
STEP_NS = 250_000_000
NONE = -1  # no ports


def Ether():  # noqa: N802 - scapy's name; addresses given, so scapy looks up no route
    return _Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")


@dataclass
class Expected:
    """What csum.capture.hosts should report: ``hosts[src][layer]`` = [bad, offload];
    ``flows[(src, dst, PROTO, sport, dport)]`` = [bad, offload, first ns, last ns]; ``times`` of every bad or
    offload field (ns), ``kinds`` beside them (0 bad, 1 offload)."""

    hosts: dict[str, dict[str, list[int]]] = field(default_factory=dict)
    flows: dict[tuple, list[int]] = field(default_factory=dict)
    times: list[int] = field(default_factory=list)
    kinds: list[int] = field(default_factory=list)

    def count(self, src, dst, proto, sport, dport, layer, kind, t):
        self.hosts.setdefault(src, {}).setdefault(layer, [0, 0])[kind] += 1
        row = self.flows.setdefault((src, dst, proto, sport, dport), [0, 0, t, t])
        row[kind] += 1
        row[2], row[3] = min(row[2], t), max(row[3], t)
        self.times.append(t)
        self.kinds.append(kind)

    def buckets(self, shift: int = 20) -> dict[int, list[int]]:
        """The timeline at buckets of 2**shift ns: bucket start -> [bad, offload]."""
        out: dict[int, list[int]] = {}
        for t, k in zip(self.times, self.kinds):
            out.setdefault(t >> shift << shift, [0, 0])[k] += 1
        return out

    def verdicts(self) -> dict[str, str]:
        return {h: "corruption or a bug" if sum(v[0] for v in layers.values()) else "offload"
                for h, layers in self.hosts.items()}


def _l4_sum(src: str, dst: str, proto: int, segment: bytes, v6: bool) -> int:
    """The offload partial sum: the folded pseudo-header sum, i.e. the complement of its RFC 1071 checksum."""
    pseudo = (pseudo6 if v6 else pseudo4)(src, dst, proto, len(segment))
    return checksum(pseudo) ^ 0xFFFF


def _set_l4(pkt, value: int):
    """The packet with its innermost TCP/UDP checksum field set to ``value``."""
    layer = pkt[TCP] if TCP in pkt else pkt[UDP]
    while TCP in layer.payload or UDP in layer.payload:
        layer = layer.payload[TCP] if TCP in layer.payload else layer.payload[UDP]
    layer.chksum = value
    return pkt


def build(first: int = 0) -> tuple[list, Expected]:
    """(scapy packets with their times set, what they hold); packet k is at T0 + (first + k) * 0.25 s."""
    out: list = []
    exp = Expected()

    def add(pkt, *, src=None, dst=None, proto=None, sport=NONE, dport=NONE, layer=None, kind=None):
        t = T0 * 10**9 + (first + len(out)) * STEP_NS
        pkt.time = t / 10**9
        out.append(pkt)
        if kind is not None:
            exp.count(src, dst, proto, sport, dport, layer, kind, t)

    def l4(ip_cls, src, dst, l4_cls, sport, dport, mode, payload=b"data", outer=None):
        inner = ip_cls(src=src, dst=dst) / l4_cls(sport=sport, dport=dport) / Raw(payload)
        pkt = Ether() / (inner if outer is None else outer / inner)
        seg = bytes(inner.payload)
        good = l4_cls(seg).chksum
        v6 = ip_cls is IPv6
        proto = 6 if l4_cls is TCP else 17
        if mode == "offload":
            _set_l4(pkt, _l4_sum(src, dst, proto, seg, v6))
        elif mode == "bad":
            assert good ^ 0x5A5A != _l4_sum(src, dst, proto, seg, v6)
            _set_l4(pkt, good ^ 0x5A5A)
        kind = {"good": None, "bad": 0, "offload": 1}[mode]
        add(pkt, src=src, dst=dst, proto="TCP" if proto == 6 else "UDP", sport=sport, dport=dport,
            layer="tcp" if proto == 6 else "udp", kind=kind)

    for _ in range(4):  # a sender using transmit offload (IPv4, TCP)
        l4(IP, "10.0.0.1", "10.0.0.9", TCP, 40000, 443, "offload")
    l4(IP, "10.0.0.1", "10.0.0.9", TCP, 40000, 443, "good")
    for _ in range(3):  # the same over IPv6, UDP
        l4(IPv6, "2001:db8::1", "2001:db8::9", UDP, 5353, 53, "offload")
    for mode in ("bad", "offload", "bad", "offload", "good"):  # corruption beside offload: not offload
        l4(IP, "10.0.0.3", "10.0.0.9", TCP, 40001, 80, mode)
    for _ in range(2):  # real corruption over IPv6
        l4(IPv6, "2001:db8::3", "2001:db8::9", UDP, 9999, 7, "bad")
    for _ in range(2):  # an IP-in-IP tunnel's inner sender, offload
        l4(IP, "10.1.0.1", "10.1.0.2", TCP, 1234, 22, "offload", outer=IP(src="192.0.2.1", dst="192.0.2.2"))
    bad_ip = Ether() / IP(src="10.0.0.5", dst="10.0.0.9") / TCP(sport=7000, dport=8000) / Raw(b"x")
    bad_ip[IP].chksum = IP(bytes(bad_ip[IP])).chksum ^ 0x0F0F  # a wrong IPv4 header checksum, TCP right
    add(bad_ip, src="10.0.0.5", dst="10.0.0.9", proto="TCP", sport=7000, dport=8000, layer="ipv4", kind=0)
    icmp = Ether() / IP(src="10.0.0.6", dst="10.0.0.9") / ICMP(id=1, seq=1) / Raw(b"ping")
    icmp[ICMP].chksum = ICMP(bytes(icmp[ICMP])).chksum ^ 0x00FF
    add(icmp, src="10.0.0.6", dst="10.0.0.9", proto="ICMP", layer="icmp", kind=0)
    for _ in range(3):  # a host with nothing wrong
        l4(IP, "10.0.0.7", "10.0.0.9", UDP, 1000, 2000, "good")
    # a datagram in three fragments whose UDP checksum is wrong: one bad field, on the first fragment
    dgram = IP(src="10.0.0.8", dst="10.0.0.9", id=77) / UDP(sport=1111, dport=2222) / Raw(bytes(range(200)) * 2)
    dgram[UDP].chksum = UDP(bytes(dgram[UDP])).chksum ^ 0x5A5A
    for k, piece in enumerate(fragment(dgram, fragsize=160)):
        add(Ether() / piece, src="10.0.0.8", dst="10.0.0.9", proto="UDP", sport=1111, dport=2222, layer="udp",
            kind=0 if k == 0 else None)
    return out, exp


def merged(*exps: Expected) -> Expected:
    """The expectations of several captures as one."""
    out = Expected()
    for e in exps:
        out.times += e.times
        out.kinds += e.kinds
        for src, layers in e.hosts.items():
            for layer, (bad, off) in layers.items():
                mine = out.hosts.setdefault(src, {}).setdefault(layer, [0, 0])
                mine[0] += bad
                mine[1] += off
        for key, (bad, off, first, last) in e.flows.items():
            row = out.flows.setdefault(key, [0, 0, first, last])
            row[0] += bad
            row[1] += off
            row[2], row[3] = min(row[2], first), max(row[3], last)
    return out
