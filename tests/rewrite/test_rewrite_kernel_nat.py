"""``csum rewrite`` against the kernel's own NAT: the bytes netfilter sends equal the bytes csum writes.

Two network namespaces joined by a veth pair (made and removed here); in the sender's, nftables maps prefixes as NETMAP
does (``snat ip prefix to ip saddr map { ... }`` in postrouting, ``dnat ip prefix to ip daddr map { ... }`` in
output; the same for ip6). scapy builds TCP, UDP (one without a checksum), ICMP echo and ICMPv6 echo packets, a TCP
segment whose checksum is wrong, and an ICMP / ICMPv6 error quoting a packet of the tracked UDP flow (which netfilter
finds RELATED and whose quote it rewrites too); a raw IP socket in the sender's namespace sends them (IP_HDRINCL, so
they pass the output and postrouting hooks; scapy's own send() uses a packet socket, which netfilter does not see);
a packet socket in the other namespace captures what arrives. Expected: the captured bytes (the kernel's NAT). Under
test: ``csum rewrite`` of the packets as sent with ``--map-src`` / ``--map-dst`` of the same prefixes.

Skipped with the reason where the test is not root, ``ip`` or ``nft`` is missing, or the kernel refuses the
namespaces, the veth pair or the NAT rules.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap

import pytest
from scapy.compat import raw
from scapy.layers.inet import ICMP, IP, TCP, UDP
from scapy.layers.inet6 import ICMPv6DestUnreach, ICMPv6EchoRequest, IPv6

from csum.capture import pcap
from csum.cli import main

SNAT4, DNAT4 = ("10.0.0.0/24", "192.168.0.0/24"), ("172.16.0.0/24", "172.16.1.0/24")
SNAT6, DNAT6 = ("fd00::/64", "fd01::/64"), ("fd02::/64", "fd03::/64")
A4, B4, A6, B6 = "10.0.0.1", "172.16.0.2", "fd00::1", "fd02::2"

#: Sends each hex argument from a raw socket (IP_HDRINCL: IPPROTO_RAW implies it, for IPv4 and IPv6).
SEND = textwrap.dedent("""
    import socket, sys, time
    socks = {4: socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW),
             6: socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_RAW)}
    for h in sys.argv[1:]:
        p = bytes.fromhex(h)
        v = p[0] >> 4
        dst = socket.inet_ntop(socket.AF_INET, p[16:20]) if v == 4 else socket.inet_ntop(socket.AF_INET6, p[24:40])
        socks[v].sendto(p, (dst, 0))
        time.sleep(0.02)
""")
#: Captures on argv[1] the IP packets arriving from the sender's addresses (argv[2]: how many; argv[3]: the
#: sources' first bytes) until that many or 10 s; prints "ready", then the packets' hex, one a line.
SNIFF = textwrap.dedent("""
    import select, socket, sys, time
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
    s.bind((sys.argv[1], 0))
    want, firsts = int(sys.argv[2]), {int(x) for x in sys.argv[3].split(",")}
    print("ready", flush=True)
    got, end = [], time.time() + 10
    while len(got) < want and time.time() < end:
        if not select.select([s], [], [], max(0, end - time.time()))[0]:
            break
        frame, addr = s.recvfrom(65535)
        ip = frame[14:]
        if addr[2] == socket.PACKET_OUTGOING or frame[12:14] not in (b"\\x08\\x00", b"\\x86\\xdd") or len(ip) < 20:
            continue
        if ip[12 if ip[0] >> 4 == 4 else 8] in firsts:
            got.append(ip)
    print("\\n".join(p.hex() for p in got), flush=True)
""")


def _run(*args: str, ns: str | None = None, check: bool = True) -> subprocess.CompletedProcess:
    cmd = (["ip", "netns", "exec", ns] if ns else []) + list(args)
    return subprocess.run(cmd, capture_output=True, text=True, check=check, timeout=60)


def _mac(ns: str, dev: str) -> str:
    return _run("ip", "-n", ns, "-o", "link", "show", dev).stdout.split("link/ether ")[1].split()[0]


@pytest.fixture
def namespaces():
    """(sender namespace, receiver namespace, receiver's interface), NAT rules loaded in the sender's; removed after."""
    if os.geteuid() != 0:
        pytest.skip("the kernel NAT test needs root (network namespaces, nftables)")
    for tool in ("ip", "nft"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed (Debian iproute2 / nftables; .ci/run installs them)")
    tag = f"cs{os.getpid() % 100000}"
    a, b, va, vb = f"{tag}a", f"{tag}b", f"{tag}va", f"{tag}vb"
    made: list[str] = []
    try:
        for ns in (a, b):
            if _run("ip", "netns", "add", ns, check=False).returncode:
                pytest.skip("the kernel refuses a network namespace (ip netns add)")
            made.append(ns)
        setup = [["ip", "link", "add", va, "netns", a, "type", "veth", "peer", "name", vb, "netns", b],
                 ["ip", "-n", a, "link", "set", va, "up"], ["ip", "-n", b, "link", "set", vb, "up"],
                 ["ip", "-n", a, "addr", "add", f"{A4}/24", "dev", va],
                 ["ip", "-n", a, "addr", "add", f"{A6}/64", "dev", va, "nodad"]]
        for cmd in setup:
            if _run(*cmd, check=False).returncode:
                pytest.skip(f"the kernel refuses the veth pair: {' '.join(cmd)}")
        mac = _mac(b, vb)
        for family, prefixes, far in (("-4", (DNAT4[0], DNAT4[1]), ("172.16.0.2", "172.16.1.2")),
                                      ("-6", (DNAT6[0], DNAT6[1]), ("fd02::2", "fd03::2"))):
            for prefix, host in zip(prefixes, far):  # static neighbours: no ARP / ND traffic to capture
                _run("ip", family, "-n", a, "route", "add", prefix, "dev", va)
                _run("ip", family, "-n", a, "neigh", "add", host, "lladdr", mac, "dev", va)
        rules = textwrap.dedent(f"""
            table inet csumnat {{
              chain out {{
                type nat hook output priority -100;
                oifname "{va}" dnat ip prefix to ip daddr map {{ {DNAT4[0]} : {DNAT4[1]} }}
                oifname "{va}" dnat ip6 prefix to ip6 daddr map {{ {DNAT6[0]} : {DNAT6[1]} }}
              }}
              chain post {{
                type nat hook postrouting priority 100;
                oifname "{va}" snat ip prefix to ip saddr map {{ {SNAT4[0]} : {SNAT4[1]} }}
                oifname "{va}" snat ip6 prefix to ip6 saddr map {{ {SNAT6[0]} : {SNAT6[1]} }}
              }}
            }}
        """)
        loaded = subprocess.run(["ip", "netns", "exec", a, "nft", "-f", "-"], input=rules, capture_output=True,
                                text=True)
        if loaded.returncode and "Could not process rule" in loaded.stderr:  # netlink: the kernel lacks NAT
            pytest.skip(f"the kernel refuses the prefix NAT rules: {loaded.stderr.strip()[:200]}")
        assert loaded.returncode == 0, f"nft cannot read the test's rules: {loaded.stderr.strip()}"
        yield a, b, vb
    finally:
        for ns in made:
            _run("ip", "netns", "del", ns, check=False)


def _sent() -> list[bytes]:
    """The packets as the sender's raw socket gives them to the stack (IPv4 ids set: the kernel keeps them)."""
    tcp = IP(src=A4, dst=B4, id=1) / TCP(sport=40000, dport=80, flags="S", seq=7) / b"hello"
    bad = bytearray(raw(IP(src=A4, dst=B4, id=2) / TCP(sport=40001, dport=80, flags="S") / b"bad"))
    bad[36:38] = (int.from_bytes(bad[36:38], "big") ^ 0x0F0F).to_bytes(2, "big")  # a TCP checksum off by some r
    return [raw(tcp), bytes(bad),
            raw(IP(src=A4, dst=B4, id=3) / UDP(sport=1234, dport=53) / b"query"),
            raw(IP(src=A4, dst=B4, id=4) / UDP(sport=1235, dport=53, chksum=0) / b"no checksum"),
            raw(IP(src=A4, dst=B4, id=5) / ICMP(type=8, id=77, seq=1) / b"ping"),
            # port unreachable for a reply of the UDP flow above (B4:53 -> A4:1234): RELATED, its quote rewritten
            raw(IP(src=A4, dst=B4, id=6) / ICMP(type=3, code=3) / IP(src=B4, dst=A4, id=9) /
                UDP(sport=53, dport=1234) / b"reply"),
            raw(IPv6(src=A6, dst=B6) / TCP(sport=40000, dport=80, flags="S") / b"hello"),
            raw(IPv6(src=A6, dst=B6) / UDP(sport=1234, dport=53) / b"query"),
            raw(IPv6(src=A6, dst=B6) / ICMPv6EchoRequest(id=77, seq=1) / b"ping"),
            raw(IPv6(src=A6, dst=B6) / ICMPv6DestUnreach(code=4) / IPv6(src=B6, dst=A6) /
                UDP(sport=53, dport=1234) / b"reply")]


def test_csum_rewrite_equals_the_kernels_nat(namespaces, tmp_path):
    """Every packet netfilter's prefix SNAT + DNAT sends (TCP, a TCP checksum wrong by r, UDP, UDP without a
    checksum, ICMP echo, an ICMP port unreachable whose quote is rewritten, the same on IPv6) equals, byte for byte,
    the packet ``csum rewrite --map-src ... --map-dst ...`` writes for it."""
    a, b, vb = namespaces
    sent = _sent()
    firsts = ",".join(str(n) for n in (10, 192, 0xFD))
    sniff = subprocess.Popen(["ip", "netns", "exec", b, sys.executable, "-c", SNIFF, vb, str(len(sent)), firsts],
                             stdout=subprocess.PIPE, text=True)
    try:
        assert sniff.stdout is not None and sniff.stdout.readline().strip() == "ready"
        _run(sys.executable, "-c", SEND, *(p.hex() for p in sent), ns=a)
        out, _ = sniff.communicate(timeout=30)
    finally:
        sniff.kill()
    kernel = [bytes.fromhex(line) for line in out.split()]
    assert len(kernel) == len(sent), "not every packet arrived"
    src, dst = tmp_path / "sent.pcap", tmp_path / "csum.pcap"
    src.write_bytes(pcap.to_bytes(sent, linktype=101))
    assert main(["rewrite", str(src), str(dst), "--map-src", "=".join(SNAT4), "--map-src", "=".join(SNAT6),
                 "--map-dst", "=".join(DNAT4), "--map-dst", "=".join(DNAT6)]) == 0
    ours = pcap.read(dst)
    for i, theirs in enumerate(kernel):
        assert bytes(ours.packet(i)).hex() == theirs.hex(), i
