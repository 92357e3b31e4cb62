"""Frames for the tests that run users' BPF programs (tests/kernel/test_prog.py, test_mistake_table.py) and scapy's
verdict on what a program left: the judge those tests hold csum prog to.

The frames are drawn from a seeded ``random.Random`` (reproducible, and a different draw per seed): random
addresses, ports, TTLs, sequence numbers, and payloads that are empty, all zero, all ones or random (the
0x0000/0xffff corners).
"""

from __future__ import annotations

import random
from collections.abc import Callable

from scapy.compat import raw
from scapy.layers.inet import ICMP, IP, TCP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether
from scapy.packet import Raw

ETHER = Ether(dst="02:00:00:00:00:01", src="02:00:00:00:00:02")
NEW4 = "192.0.2.1"  # the source examples/bpf/nat.h and tests/kernel/mistakes/mistakes.h rewrite to
_NAMES = {IP: "ipv4", TCP: "tcp", UDP: "udp", ICMP: "icmp"}

Maker = Callable[[random.Random], bytes]


def _a4(r: random.Random) -> str:
    return ".".join(str(r.randrange(256)) for _ in range(4))


def _a6(r: random.Random) -> str:
    return ":".join(f"{r.randrange(65536):x}" for _ in range(8))


def _payload(r: random.Random) -> bytes:
    return r.choice([b"", bytes(r.randrange(40)), b"\xff" * r.randrange(40), r.randbytes(r.randrange(40))])


def _ports(r: random.Random) -> dict[str, int]:
    return dict(sport=r.randrange(65536), dport=r.randrange(65536))


def tcp4(r: random.Random) -> bytes:
    return raw(ETHER / IP(src=_a4(r), dst=_a4(r), ttl=r.randrange(1, 256)) / TCP(seq=r.getrandbits(32), **_ports(r))
               / _payload(r))


def udp4(r: random.Random) -> bytes:
    return raw(ETHER / IP(src=_a4(r), dst=_a4(r)) / UDP(**_ports(r)) / _payload(r))


def udp4_unchecked(r: random.Random) -> bytes:
    """IPv4 UDP sent without a checksum (0, RFC 768)."""
    return raw(ETHER / IP(src=_a4(r), dst=_a4(r)) / UDP(chksum=0, **_ports(r)) / _payload(r))


def tcp6(r: random.Random) -> bytes:
    return raw(ETHER / IPv6(src=_a6(r), dst=_a6(r), hlim=r.randrange(2, 256)) / TCP(**_ports(r)) / _payload(r))


def icmp4_error(r: random.Random) -> bytes:
    """An ICMP destination unreachable / time exceeded quoting a whole IPv4 TCP segment."""
    quote = raw(IP(src=_a4(r), dst=_a4(r)) / TCP(**_ports(r)) / _payload(r))
    return raw(ETHER / IP(src=_a4(r), dst=_a4(r)) / ICMP(type=r.choice([3, 11]), code=0) / Raw(quote))


def icmp4_echo(r: random.Random) -> bytes:
    """An ICMP echo request of random id, sequence and payload between random addresses."""
    return raw(ETHER / IP(src=_a4(r), dst=_a4(r), ttl=r.randrange(1, 256))
               / ICMP(type=8, id=r.randrange(65536), seq=r.randrange(65536)) / _payload(r))


def ipip4(r: random.Random) -> bytes:
    """An IPv4 TCP segment inside an outer IPv4 header (protocol 4)."""
    return raw(ETHER / IP(src=_a4(r), dst=_a4(r), proto=4) / IP(src=_a4(r), dst=_a4(r)) / TCP(**_ports(r))
               / _payload(r))


def udp4_to_zero(r: random.Random) -> bytes:
    """An IPv4 UDP datagram whose checksum, once its source is NEW4, computes to 0 (stored 0xffff, RFC 768): two
    payload bytes are chosen so (scapy computes the checksum with and without them)."""
    while True:
        src, dst, ports = _a4(r), _a4(r), _ports(r)
        rest = r.randbytes(6)
        probe = ETHER / IP(src=NEW4, dst=dst) / UDP(**ports) / Raw(b"\0\0" + rest)
        word = Ether(raw(probe))[UDP].chksum  # ~sum: the word that makes the sum all ones
        payload = word.to_bytes(2, "big") + rest
        if Ether(raw(ETHER / IP(src=NEW4, dst=dst) / UDP(**ports) / Raw(payload)))[UDP].chksum == 0xFFFF:
            return raw(ETHER / IP(src=src, dst=dst) / UDP(**ports) / Raw(payload))


def frames(makers: list[Maker], count: int, seed: int) -> list[bytes]:
    """``count`` frames, the makers taken in turn, from ``random.Random(seed)``."""
    r = random.Random(seed)
    return [makers[i % len(makers)](r) for i in range(count)]


def scapy_bad(before: bytes, after: bytes) -> set[tuple[str, int]]:
    """(layer, header offset) of every IPv4/TCP/UDP/ICMP checksum of ``after`` that differs from scapy's
    recomputation. A UDP checksum of 0 means none (RFC 768) unless ``before`` had one at that place and scapy
    computes 0xffff there (a computed 0 stored as 0). Quoted headers (scapy's IPerror, TCPerror) are covered by the
    ICMP checksum and not judged apart."""
    pkt, bad = Ether(after), set()
    for cls, name in _NAMES.items():
        n = 1
        while (layer := pkt.getlayer(cls, n)) is not None:
            offset = len(after) - len(raw(layer))
            copy = Ether(after)
            del copy.getlayer(cls, n).chksum
            computed = Ether(raw(copy)).getlayer(cls, n).chksum
            stored = layer.chksum
            if cls is UDP and stored == 0:
                was = Ether(before).getlayer(UDP, n) if len(before) == len(after) else None
                if was is not None and was.chksum != 0 and computed == 0xFFFF:
                    bad.add((name, offset))
            elif stored != computed:
                bad.add((name, offset))
            n += 1
    return bad
