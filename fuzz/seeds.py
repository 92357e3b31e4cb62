"""Write the committed seed corpus of the fuzz targets: ``python fuzz/seeds.py`` (scapy builds every frame).

fuzz/corpus/<target>/<name>: one file per seed, named after what it holds. tests/fuzz/test_fuzz_inputs.py checks
that this script still writes exactly the committed files, and replays each through its target.
"""

from __future__ import annotations

import struct
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fuzz_common import capture_bytes, decode, encode  # noqa: E402
from fuzz_rewrite import encode as rewrite_input  # noqa: E402
from fuzz_walker import encode as walker_input  # noqa: E402
from scapy.all import GRE, ICMP, IP, TCP, UDP, Dot1Q, Ether, IPv6, fragment, raw  # noqa: E402
from scapy.contrib.erspan import ERSPAN_II, ERSPAN_III  # noqa: E402
from scapy.layers.inet6 import (  # noqa: E402
    ICMPv6EchoRequest,
    IPv6ExtHdrDestOpt,
    IPv6ExtHdrFragment,
    IPv6ExtHdrHopByHop,
    IPv6ExtHdrRouting,
    fragment6,
)
from scapy.layers.vxlan import VXLAN  # noqa: E402

CORPUS = Path(__file__).resolve().parent / "corpus"

ETH = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
V4 = IP(src="10.0.0.1", dst="10.1.0.2", id=7)
V6 = IPv6(src="2001:db8::1", dst="2001:db8::2")
IN4 = IP(src="172.16.0.1", dst="172.16.0.2")

#: Link-layer headers in front of an IPv4 packet, per link type C walks (the Ethernet ones are built whole).
HEADERS = {0: b"\x02\0\0\0", 108: b"\0\0\0\x02", 12: b"", 14: b"", 101: b"", 228: b"", 104: b"\x0f\x00\x08\x00",
           113: b"\0\0\0\x01\0\x06" + b"\x02" * 6 + b"\0\0" + b"\x08\x00",
           276: b"\x08\x00\0\0" + b"\0\0\0\x02" + b"\0\x01\0\x06" + b"\x02" * 6 + b"\0\0",
           242: bytes(40) + b"\x08\x00\0\0"}


def _ipv6_header(link: int, header: bytes) -> bytes:
    """The link-layer header of HEADERS for IPv6: the EtherType 0x86dd, or the BSD family 24 (AF_INET6 on NetBSD)."""
    at = {104: 2, 113: 14, 242: 40, 276: 0}.get(link)
    if at is not None:
        return header[:at] + b"\x86\xdd" + header[at + 2 :]
    return {0: b"\x18\0\0\0", 108: b"\0\0\0\x18"}.get(link, header)


def _broken(frame: bytes, at: int = -1) -> bytes:
    data = bytearray(frame)
    data[at] ^= 0x5A
    return bytes(data)


def _offload(frame: bytes, with_length: bool = True) -> bytes:
    """The TCP checksum of an Ethernet/IPv4/TCP frame set to transmit offload's value (the pseudo-header sum, with the
    segment's length or 0)."""
    packet = Ether(frame)
    ip = packet[IP]
    length = len(ip[TCP]) if with_length else 0
    words = ip.src.split(".") + ip.dst.split(".")
    total = sum(int(words[k]) << 8 | int(words[k + 1]) for k in range(0, 8, 2)) + 6 + length
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    ip[TCP].chksum = total
    return raw(packet)


def _stacks() -> dict[str, bytes]:
    """Ethernet frames of the stacks C walks, checksums by scapy."""
    return {
        "ipv4-tcp": raw(ETH / V4 / TCP(sport=1000, dport=80) / b"payload"),
        "ipv6-udp": raw(ETH / V6 / UDP(sport=1000) / b"x"),
        "ipv4-options-udp": raw(ETH / IP(src="10.0.0.1", dst="10.1.0.2", options=b"\x94\x04\0\0\x01\x01\x01\0")
                                / UDP() / b"o"),
        "ipv6-hbh-dest-tcp": raw(ETH / V6 / IPv6ExtHdrHopByHop() / IPv6ExtHdrDestOpt() / TCP() / b"abc"),
        "ipv6-routing-done-udp": raw(ETH / V6 / IPv6ExtHdrRouting(addresses=["2001:db8::9"], segleft=0) / UDP()),
        "qinq-ipv6-icmpv6": raw(ETH / Dot1Q(vlan=5) / Dot1Q(vlan=6) / V6 / ICMPv6EchoRequest() / b"q"),
        "vlan-ipv4-icmp": raw(ETH / Dot1Q(vlan=5) / V4 / ICMP() / b"ping"),
        "vxlan-tcp": raw(ETH / V4 / UDP(sport=40000, dport=4789) / VXLAN(vni=3) / ETH / IN4 / TCP() / b"in"),
        "ipip-tcp": raw(ETH / V4 / IN4 / TCP() / b"ipip"),
        "6in4-udp": raw(ETH / V4 / IPv6(src="2001:db8::3", dst="2001:db8::4") / UDP() / b"6in4"),
        "gre-csum-key-udp": raw(ETH / V4 / GRE(chksum_present=1, key_present=1, key=5) / IN4 / UDP() / b"gre"),
        "gre-teb-icmp": raw(ETH / V6 / GRE(proto=0x6558) / ETH / IN4 / ICMP() / b"teb"),
        "erspan2-vlan-tcp": raw(ETH / V4 / GRE(seqnum_present=1) / ERSPAN_II() / ETH / Dot1Q(vlan=7) / IN4 / TCP()
                                / b"erspan"),
        "erspan3-ipv6-udp": raw(ETH / V4 / GRE(proto=0x22EB) / ERSPAN_III() / ETH
                                / IPv6(src="2001:db8::3", dst="2001:db8::4") / UDP() / b"3"),
        "icmp-error-quote": raw(ETH / V4 / ICMP(type=3, code=3) / IN4 / UDP(sport=53)),
        "udp-no-checksum": raw(ETH / V4 / UDP(chksum=0) / b"z"),
    }


def _fragments() -> dict[str, list[bytes]]:
    """Datagrams cut into fragments by scapy (IPv4 fragment(), IPv6 fragment6())."""
    v4 = [raw(ETH / f) for f in fragment(V4 / UDP(sport=7) / bytes(range(120)), fragsize=48)]
    v4_tcp = [raw(ETH / Dot1Q(vlan=3) / f) for f in fragment(V4 / TCP() / bytes(range(90)), fragsize=32)]
    v6 = [raw(ETH / f) for f in fragment6(V6 / IPv6ExtHdrFragment(id=9) / UDP() / bytes(range(160)), 120)]
    v6_icmp = [raw(ETH / f) for f in
               fragment6(V6 / IPv6ExtHdrFragment(id=10) / ICMPv6EchoRequest() / bytes(range(100)), 96)]
    return {"ipv4-udp-fragments": v4, "vlan-ipv4-tcp-fragments": v4_tcp, "ipv6-udp-fragments": v6,
            "ipv6-icmpv6-fragments": v6_icmp, "ipv4-fragments-reordered": v4[::-1],
            "ipv4-fragments-one-lost": v4[:1] + v4[2:]}


def walker_seeds() -> dict[str, bytes]:
    stacks, frags = _stacks(), _fragments()
    seeds = {f"eth-{name}": walker_input(1, frame, auto=k % 3 == 0) for k, (name, frame) in enumerate(stacks.items())}
    seeds.update({f"eth-bad-{name}": walker_input(1, _broken(frame)) for name, frame in stacks.items()})
    for link, header in HEADERS.items():
        seeds[f"link{link}-ipv4-tcp"] = walker_input(link, header + raw(V4 / TCP() / b"data"))
        seeds[f"link{link}-ipv6-icmpv6"] = walker_input(link, _ipv6_header(link, header) + raw(V6 / ICMPv6EchoRequest()),
                                                        auto=True)
    seeds["link147-unwalked"] = walker_input(147, raw(V4 / TCP()))
    seeds["eth-offload-ipv4-tcp"] = walker_input(1, _offload(stacks["ipv4-tcp"]))
    seeds["eth-offload-length0-ipv4-tcp"] = walker_input(1, _offload(stacks["ipv4-tcp"], with_length=False))
    # an ICMP echo whose checksum computes to 0 and is stored as 0xffff (negative zero; RFC 1624)
    seeds["eth-negative-zero-icmp"] = walker_input(1, bytes(ETH)[:12] + b"\x08\x00" + bytes.fromhex(
        "450000220000000040017cd97f0000017f000001") + b"\x08\x00\xff\xff\xf7\xff" + bytes(8))
    for name, pieces in frags.items():
        if "lost" not in name and "reordered" not in name:
            seeds[f"{name}-first"] = walker_input(1, pieces[0])
            seeds[f"{name}-later"] = walker_input(1, pieces[-1])
    return seeds


def chunks_seeds() -> dict[str, bytes]:
    stacks, frags = _stacks(), _fragments()
    seeds = {name: encode([(1, p) for p in pieces]) for name, pieces in frags.items()}
    seeds["all-stacks"] = encode([(1, f) for f in stacks.values()])
    seeds["every-link"] = encode([(link, header + raw(V4 / UDP() / b"l")) for link, header in HEADERS.items()])
    seeds["mixed-fragments-and-bad"] = encode([(1, p) for p in frags["ipv4-udp-fragments"][:2]]
                                              + [(1, _broken(stacks["ipv4-tcp"]))]
                                              + [(1, p) for p in frags["ipv4-udp-fragments"][2:]])
    seeds["ipv6-fragments-interleaved"] = encode([(1, p) for pair in zip(frags["ipv6-udp-fragments"],
                                                                        frags["ipv6-icmpv6-fragments"]) for p in pair])
    return seeds


def fix_seeds() -> dict[str, bytes]:
    stacks = _stacks()
    broken = {name: _broken(frame) for name, frame in stacks.items()}
    seeds = {f"bad-{name}": encode([(1, frame)]) for name, frame in broken.items()}
    seeds["bad-ipv4-header"] = encode([(1, _broken(stacks["ipv4-tcp"], 24))])
    seeds["offload-ipv4-tcp"] = encode([(1, _offload(stacks["ipv4-tcp"]))])
    seeds["bad-inner-and-outer-vxlan"] = encode([(1, _broken(_broken(stacks["vxlan-tcp"]), -4))])
    seeds["bad-fragment-datagram"] = encode([(1, _broken(p, -1) if k == 1 else p)
                                             for k, p in enumerate(_fragments()["ipv4-udp-fragments"])])
    seeds["bad-sll-and-raw"] = encode([(113, HEADERS[113] + _broken(raw(V4 / UDP() / b"s"))),
                                       (101, _broken(raw(V6 / TCP() / b"r")))])
    return seeds


def _pcap(frames: list[bytes], endian: str = "<", nano: bool = False, link: int = 1, *, modified: bool = False,
          minor: int = 4, snap: int = 65535) -> bytes:
    """A pcap file (``modified``: magic a1b2cd34, 24-byte record headers; ``minor`` < 3: the lengths swapped)."""
    magic = 0xA1B2CD34 if modified else 0xA1B23C4D if nano else 0xA1B2C3D4
    out = [struct.pack(endian + "IHHiIII", magic, 2, minor, 0, 0, snap, link)]
    for k, f in enumerate(frames):
        lengths = (len(f), len(f) + k % 2)
        out.append(struct.pack(endian + "IIII", k, 0, *(lengths[::-1] if minor < 3 else lengths))
                   + (struct.pack(endian + "iHBB", 1, 0x0800, 0, 0) if modified else b"") + f)
    return b"".join(out)


def records_seeds() -> dict[str, bytes]:
    frames = list(_stacks().values())[:6]
    ng = capture_bytes(decode(encode([(1, f) for f in frames[:3]] + [(113, HEADERS[113] + raw(V4 / UDP()))])))
    return {
        "pcap-le-us": _pcap(frames), "pcap-be-us": _pcap(frames, ">"), "pcap-le-ns": _pcap(frames, nano=True),
        "pcap-be-ns-raw": _pcap([raw(V4 / TCP())], ">", True, 101),
        "pcap-truncated-record": _pcap(frames)[:-5],
        "pcap-huge-caplen": _pcap(frames[:1]) + struct.pack("<IIII", 0, 0, 0xFFFFFFFF, 60) + bytes(8),
        "pcap-header-only": _pcap([]),
        "pcap-modified-be": _pcap(frames, ">", modified=True, snap=40),
        "pcap-v2.2-swapped": _pcap(frames, minor=2),
        "pcap-fcs-4": _pcap(frames, link=1 | 2 << 28 | 0x04000000),
        "pcapng-two-links": ng,
        "pcapng-cut-block": ng[:-7],
        "pcapng-bad-trailer": ng[:-4] + b"\0\0\0\0",
        "pcapng-two-sections": ng + ng,
    }


def sums_seeds() -> dict[str, bytes]:
    def head(offset: int, width: int, big: bool, align: int, rows: int, seed: int, block: int) -> bytes:
        first = offset | (width << 3) | (32 if big else 0)
        return bytes([first, align | rows << 3]) + seed.to_bytes(4, "little") + bytes([block]) + \
            bytes([0, 40, 30, 200, 128, 128, 250, 10, 0])
    return {
        "empty": b"",
        "odd-3-offset1-w16": head(1, 1, False, 1, 2, 0, 0) + b"\x01\x02\x03",
        "all-ones-65-offset7-w64-big": head(7, 3, True, 7, 4, 0xFFFFFFFF, 3) + b"\xff" * 65,
        "ramp-257-offset3-w32": head(3, 2, False, 3, 3, 0x12345678, 1) + bytes(range(256)) + b"\x80",
        "zeros-24-w8-seed-ffff": head(0, 0, True, 0, 1, 0xFFFF, 0) + bytes(24),
        "ipv4-header-w16": head(2, 1, False, 2, 4, 0, 9) + raw(V4)[:20],
        # the loop helpers: the 40 bytes cut at 20 (bpf_csum_diff's 4-byte multiples), l3/l4_csum_replace at offset
        # 36 with size 4 and BPF_F_PSEUDO_HDR, then size 2 and BPF_F_MARK_MANGLED_0
        "helpers-ipv4-tcp-size4-pseudo": head(0, 1, False, 0, 0, 0x0A000001, 0)[:7]
        + bytes([128, 0x34, 0x12, 0xC0, 0xA8, 219, 0x14, 0, 0]) + raw(V4 / TCP())[:40],
        "helpers-ipv4-tcp-size2-mangled0": head(0, 1, False, 0, 0, 0xFFFF, 0)[:7]
        + bytes([128, 0, 0, 0, 0, 219, 0x22, 0, 0]) + raw(V4 / TCP())[:40],
        # every csum_partial shape C computes (byte 15 picks it), at an odd address and an odd length
        **{f"shape{k}-ramp-101-align{k % 8}": head(k % 8, 1, False, k % 8, 0, 0x9ABCDEF0, 0)[:15] + bytes([k])
           + bytes(range(101)) for k in range(1, 10)},
    }


#: Rule-picking bytes of fuzz_rewrite (one index per rule kind: address map, side map, port map, TTL, class, flow
#: label, link-layer rules, Crypto-PAn and level; see its lists).
RULES = {"nat4": bytes([1, 0, 1, 1, 0, 0, 0, 0]), "nat6-outer": bytes([3, 0, 0, 0, 0, 0, 0, 1]),
         "src-dst-ports-inner": bytes([0, 1, 2, 0, 1, 2, 0, 2]), "everything": bytes([4, 2, 5, 2, 3, 3, 5, 3]),
         "anonymize-retag": bytes([0, 0, 3, 5, 5, 1, 4, 4]), "tclass-flowlabel-dst": bytes([5, 4, 4, 6, 4, 1, 2, 0])}


def rewrite_seeds() -> dict[str, bytes]:
    stacks, frags = _stacks(), _fragments()
    everything = encode([(1, f) for f in stacks.values()])
    seeds = {f"all-stacks-{name}": rewrite_input(rules, everything) for name, rules in RULES.items()}
    seeds["every-link-nat4"] = rewrite_input(RULES["nat4"], encode([(link, header + raw(V4 / UDP() / b"l"))
                                                                    for link, header in HEADERS.items()]))
    seeds["fragments-everything"] = rewrite_input(RULES["everything"], encode(
        [(1, p) for pieces in frags.values() for p in pieces]))
    seeds["bad-and-cut-nat6"] = rewrite_input(RULES["nat6-outer"], encode(
        [(1, _broken(stacks["ipv6-udp"]))]) + bytes([0x40]) + (30).to_bytes(2, "big") + stacks["vxlan-tcp"][:30])
    return seeds


def rowtext_seeds() -> dict[str, bytes]:
    """Rows laid out as csum/capture/rows.py's ROW, written by hand: every status and reason, IPv4, IPv6 and no
    addresses, a time and none, a field and none, stored and computed values and none."""
    import numpy as np

    from csum.capture.pcap import NO_TIME
    from csum.capture.rows import ROW

    v4, v6 = bytes([192, 0, 2, 1]).ljust(16, b"\0"), bytes.fromhex("20010db8000000000000000000000001")
    rows = [(1, 1_700_000_000_123_456_789, 0, 0, 14, 24, 0x1C46, 0x1C46, 1, 2, 0, 0, 0, 1, 0, 0, 4, v4, v4),
            (2, NO_TIME, 0, 1, 14, 60, 0, 0xFFFF, 3, 4, 0, 1, 0, 0, 1, 1, 6, v6, v6),
            (3, 0, 0, 2, 0, -1, -1, -1, 5, 6, 0, 2, 0, -1, 2, 2, 0, bytes(16), bytes(16))]
    every = [(k + 1, k, 0, k, 14, 24, k, 0xFFFF - k, k, k, 0, k % 3, 0, k % 3 - 1, k, k, 4 if k % 2 else 6, v4, v6)
             for k in range(24)]

    def laid_out(values: list[tuple]) -> bytes:
        table = np.zeros(len(values), dtype=ROW)  # zeros: the padding between fields too
        table[:] = values
        return table.tobytes()

    fields = bytes([5, 0, 12, 1, 3, 9])  # file, reason, frame, src, stored (--fields), then the file name
    return {"three-rows": laid_out(rows), "every-status-and-reason": laid_out(every),
            "file-and-fields": laid_out(rows) + fields + 'dir/a "b",c\n.pcap'.encode()}


SEEDS = {"walker": walker_seeds, "chunks": chunks_seeds, "fix": fix_seeds, "records": records_seeds, "sums": sums_seeds,
         "rewrite": rewrite_seeds, "rowtext": rowtext_seeds}


def main() -> None:
    for target, make in SEEDS.items():
        where = CORPUS / target
        where.mkdir(parents=True, exist_ok=True)
        for old in where.iterdir():
            old.unlink()
        for name, data in make().items():
            (where / name).write_bytes(data)


if __name__ == "__main__":
    main()
