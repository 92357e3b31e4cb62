"""``csum prog --csum-state``: a tc program on skbs arriving as CHECKSUM_NONE, UNNECESSARY, COMPLETE and PARTIAL.

NONE and COMPLETE are the running kernel's own test runs (BPF_PROG_TEST_RUN, BPF_F_TEST_SKB_CHECKSUM_COMPLETE: its
EBADMSG is the verdict on skb->csum). UNNECESSARY and PARTIAL no test run makes; csum models them. The frames are
built here with scapy, and what a NIC finishes on a CHECKSUM_PARTIAL skb is computed here with scapy too: for
examples/bpf/tc_nat.c (BPF_F_PSEUDO_HDR) the NAT'ed packet with every checksum recomputed over the new address, for
tc_nat_no_pseudo.c the NAT'ed IPv4 header with the L4 checksum of the old pseudo-header (the seed the helper leaves
unmoved), which scapy's own recomputation then calls wrong; for tests/kernel/mistakes' port rewrites scapy's packet with
the new port, the seed moved by the port's change where the program passes BPF_F_PSEUDO_HDR (RFC 1071 arithmetic
here). Skipped where clang, libbpf or BPF test runs are missing.
"""

from __future__ import annotations

import json
from pathlib import Path

import prog_frames as pf
import pytest
from bpf_build import EXAMPLES, compile_bpf, why_not
from scapy.compat import raw
from scapy.layers.inet import ICMP, IP, TCP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether
from scapy.packet import Raw
from scapy.utils import wrpcap

from csum import cli
from csum.kernel import prog, states
from csum.kernel.qemu import prog as qprog
from csum.rewrite.mistakes import on_partial

pytestmark = pytest.mark.skipif(why_not() is not None, reason=str(why_not()))

MISTAKES = Path(__file__).parent / "mistakes"
ETHER = Ether(src="02:00:00:00:00:02", dst="02:00:00:00:00:01")


def _frames() -> list[bytes]:
    """24 IPv4 TCP/UDP frames, 4 IPv6 UDP (tc_nat leaves them), 4 IPv4 ICMP (no TCP/UDP checksum to offload)."""
    out = []
    for k in range(24):
        l4 = TCP(sport=1000 + k, dport=80, seq=k * 7919) if k % 2 else UDP(sport=2000 + k, dport=53)
        out.append(raw(ETHER / IP(src=f"10.{k}.{3 * k}.{k + 1}", dst=f"198.51.100.{k}", id=k) / l4
                       / Raw(bytes(range(k, k + 5 * k + 1)))))
    out += [raw(ETHER / IPv6(src="2001:db8::1", dst=f"2001:db8::{k + 2}") / UDP(sport=7, dport=9) / Raw(b"v6" * k))
            for k in range(4)]
    out += [raw(ETHER / IP(src="10.9.9.9", dst="203.0.113.5") / ICMP(id=k) / Raw(b"ping" * k)) for k in range(4)]
    return out


FRAMES = _frames()
TCPUDP4 = set(range(24))


def _nat(frame: bytes, *, l4_over_new: bool) -> bytes:
    """scapy: ``frame`` with its IPv4 source NEW4 and the header checksum recomputed; the L4 checksum recomputed over
    the new pseudo-header (``l4_over_new``) or kept as the input's (computed over the old one)."""
    pkt = Ether(frame)
    pkt[IP].src = pf.NEW4
    del pkt[IP].chksum
    if l4_over_new:
        del pkt[IP].payload.chksum
    return raw(pkt)


def _l4_right(frame: bytes) -> bool:
    """scapy: the stored TCP/UDP checksum is the one it computes from scratch."""
    pkt = Ether(frame)
    layer = pkt[TCP] if TCP in pkt else pkt[UDP]
    again = Ether(frame)
    del (again[TCP] if TCP in again else again[UDP]).chksum
    return layer.chksum == (Ether(raw(again))[TCP] if TCP in again else Ether(raw(again))[UDP]).chksum


@pytest.fixture(scope="module")
def objects(tmp_path_factory):
    out = tmp_path_factory.mktemp("bpf")
    return {name: str(compile_bpf(EXAMPLES / f"{name}.c", out / f"{name}.o"))
            for name in ("tc_nat", "tc_nat_no_pseudo")}


@pytest.fixture(scope="module")
def pcap(tmp_path_factory):
    path = tmp_path_factory.mktemp("pcap") / "states.pcap"
    wrpcap(str(path), [Ether(f) for f in FRAMES])
    return str(path)


@pytest.mark.parametrize("name, over_new", [("tc_nat", True), ("tc_nat_no_pseudo", False)])
def test_the_partial_finish_is_scapys(objects, name, over_new):
    """What csum models a NIC finishing from a CHECKSUM_PARTIAL skb is, byte for byte, scapy's NAT'ed frame with the
    L4 checksum over the new (tc_nat) or the old (tc_nat_no_pseudo) pseudo-header; scapy calls the latter wrong."""
    with prog.load(objects[name]) as program:
        runs = {i: program.run(FRAMES[i]) for i in sorted(TCPUDP4)}
        evidence = program.evidence
    for i, run in runs.items():
        assert run.stale is not None, "this kernel has no BPF_F_TEST_SKB_CHECKSUM_COMPLETE"
        ways, note = on_partial(FRAMES[i], run.packet, stale=run.stale, evidence=evidence)
        assert note == "" and {finished for _, _, finished in ways} == {_nat(FRAMES[i], l4_over_new=over_new)}, i
        assert _l4_right(ways[0][2]) is over_new


def _add(a: int, b: int) -> int:
    """RFC 1071 one's complement addition of two 16-bit words."""
    total = a + b
    return (total & 0xFFFF) + (total >> 16)


def _port_8080(frame: bytes, *, seed_moved: bool) -> bytes:
    """scapy: ``frame`` with its destination port 8080 and the L4 checksum recomputed; ``seed_moved``: as a NIC finishes
    it when the program moved the pseudo-header seed by the port's change (BPF_F_PSEUDO_HDR on the port): the sum
    it completes is the right one plus (8080 - old port), RFC 1071 arithmetic here."""
    pkt = Ether(frame)
    l4 = pkt[TCP] if TCP in pkt else pkt[UDP]
    old = l4.dport
    l4.dport = 8080
    del l4.chksum
    out = Ether(raw(pkt))
    l4 = out[TCP] if TCP in out else out[UDP]
    if seed_moved:
        total = _add(_add(~l4.chksum & 0xFFFF, 8080), ~old & 0xFFFF)
        l4.chksum = ~total & 0xFFFF
    return raw(out)


@pytest.mark.parametrize("name, protocols, seed_moved", [("tc_byte_order", (TCP,), False),
                                                         ("tc_pseudo_on_port", (TCP, UDP), True)])
def test_a_port_rewrite_on_partial(tmp_path, name, protocols, seed_moved):
    """tests/kernel/mistakes: the port given to bpf_l4_csum_replace in host order breaks CHECKSUM_NONE skbs (the
    kernel's bytes), but on a CHECKSUM_PARTIAL skb the helper leaves the seed alone and the NIC sums the new port:
    scapy's right packet. BPF_F_PSEUDO_HDR on the port moves the seed, and the NIC adds the change a second time."""
    obj = str(compile_bpf(MISTAKES / f"{name}.c", tmp_path / f"{name}.o"))
    picked = [i for i in sorted(TCPUDP4) if any(p in Ether(FRAMES[i]) for p in protocols)]
    with prog.load(obj) as program:
        runs = {i: (FRAMES[i], program.run(FRAMES[i])) for i in range(len(FRAMES))}
        evidence = program.evidence
    for i in picked:
        frame, run = runs[i]
        ways, note = on_partial(frame, run.packet, stale=run.stale, evidence=evidence)
        assert note == "" and {finished for _, _, finished in ways} == {_port_8080(frame, seed_moved=seed_moved)}, i
        assert _l4_right(ways[0][2]) is not seed_moved
    got = {s.state: s for s in states.judge_states(runs, evidence)}
    assert set(got["partial"].broken) == (set(picked) if seed_moved else set())
    assert set(got["none"].broken) == (set() if seed_moved else set(picked))


BY_HAND = r"""
/* tc: TCP destination port -> 8080, the TCP checksum updated by hand (RFC 1624 eqn. 3) and both stored. */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#define L4 (ETH_HLEN + sizeof(struct iphdr))

SEC("tc")
int port_by_hand(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data, *end = (void *)(long)skb->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);
	__u16 old, check, new = bpf_htons(8080);
	__u32 sum;

	if ((void *)(ip + 1) > end || eth->h_proto != bpf_htons(ETH_P_IP) || ip->ihl != 5 ||
	    ip->protocol != IPPROTO_TCP || (ip->frag_off & bpf_htons(0x1fff)))
		return TC_ACT_OK;
	if (bpf_skb_load_bytes(skb, L4 + 2, &old, 2) || bpf_skb_load_bytes(skb, L4 + 16, &check, 2))
		return TC_ACT_OK;
	sum = (__u16)~check + (__u16)~old + new;
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	check = ~sum;
	bpf_skb_store_bytes(skb, L4 + 2, &new, 2, 0);
	bpf_skb_store_bytes(skb, L4 + 16, &check, 2, 0);
	return TC_ACT_OK;
}

char _license[] SEC("license") = "GPL";
"""


def test_a_checksum_written_by_hand_breaks_partial(tmp_path):
    """A program that updates the TCP checksum itself is right on CHECKSUM_NONE and COMPLETE skbs (the kernel's runs:
    no packet broken, skb->csum not stale) and wrong on CHECKSUM_PARTIAL ones: its update moves the seed, and the NIC
    finishes the checksum of the old port (scapy: the new port with the input's own checksum, which scapy calls
    wrong)."""
    source = tmp_path / "tc_port_by_hand.c"
    source.write_text(BY_HAND)
    obj = str(compile_bpf(source, tmp_path / "tc_port_by_hand.o"))
    tcp = [i for i in sorted(TCPUDP4) if TCP in Ether(FRAMES[i])]
    with prog.load(obj) as program:
        runs = {i: (FRAMES[i], program.run(FRAMES[i])) for i in range(len(FRAMES))}
        evidence = program.evidence
    for i in tcp:
        frame, run = runs[i]
        ways, note = on_partial(frame, run.packet, stale=run.stale, evidence=evidence)
        expected = Ether(frame)
        expected[TCP].dport = 8080
        assert note == "" and {finished for _, _, finished in ways} == {raw(expected)}, i
        assert not _l4_right(raw(expected))
    got = {s.state: s for s in states.judge_states(runs, evidence)}
    assert not got["none"].broken and not got["complete"].broken and got["complete"].how == "run"
    assert set(got["partial"].broken) == set(tcp) and not got["partial"].unjudged
    assert "writes the L4 checksum itself" in got["partial"].why[0][0]


@pytest.mark.parametrize("name", ["tc_nat", "tc_nat_no_pseudo"])
def test_csum_state_all_json(objects, pcap, capsys, name):
    """--csum-state all: NONE and COMPLETE run by the kernel, UNNECESSARY and PARTIAL modelled. tc_nat breaks none;
    tc_nat_no_pseudo breaks the 24 IPv4 TCP/UDP packets on COMPLETE (the kernel's EBADMSG) and on PARTIAL (scapy,
    above), and none on NONE or UNNECESSARY (the kernel's bytes, scapy-checked in test_prog.py)."""
    code = cli.main(["prog", objects[name], "--pcap", pcap, "--csum-state", "all", "--json"])
    doc = json.loads(capsys.readouterr().out)
    got = {s["state"]: s for s in doc["csum_states"]}
    assert list(got) == ["none", "unnecessary", "complete", "partial"]
    assert [got[s]["how"] for s in got] == ["run", "modelled", "run", "modelled"]
    assert [got[s]["ip_summed"] for s in got] == ["CHECKSUM_NONE", "CHECKSUM_UNNECESSARY", "CHECKSUM_COMPLETE",
                                                  "CHECKSUM_PARTIAL"]
    assert got["partial"]["judged"] == 28 and all(not s["unjudged"] for s in got.values())
    broken = set() if name == "tc_nat" else TCPUDP4
    assert {s: set(got[s]["broken"]) for s in got} == {"none": set(), "unnecessary": set(), "complete": broken,
                                                       "partial": broken}
    assert code == (0 if name == "tc_nat" else 1)
    if broken:
        assert "BPF_F_PSEUDO_HDR" in next(iter(got["partial"]["why"]))
        assert "stale" in next(iter(got["complete"]["why"]))


def test_csum_state_text_names_the_breaking_states(objects, pcap, capsys):
    """The text output lists each state, run or modelled, and the states that break the program."""
    assert cli.main(["prog", objects["tc_nat_no_pseudo"], "--pcap", pcap, "--csum-state", "partial",
                     "--csum-state", "none"]) == 1
    out = capsys.readouterr().out
    assert "CHECKSUM_NONE (run): 0 of 32 packets broken" in out
    assert "CHECKSUM_PARTIAL (modelled): 24 of 28 packets broken" in out
    assert "states that break the program: CHECKSUM_PARTIAL" in out and "CHECKSUM_COMPLETE (" not in out


def test_without_the_complete_run_partial_is_not_passed(objects):
    """Without a CHECKSUM_COMPLETE run (Linux < 6.11) a NAT with and without BPF_F_PSEUDO_HDR give the same bytes
    and finish differently on CHECKSUM_PARTIAL: when the program's calls are not known (evidence None) csum judges
    none of those packets there (never passes them); the flags at tc_nat's own call sites (BPF_F_PSEUDO_HDR on every
    bpf_l4_csum_replace) rule the other way out, and the 24 are judged right (scapy:
    test_the_partial_finish_is_scapys)."""
    with prog.load(objects["tc_nat"]) as program:
        program._complete = False  # as on a kernel without BPF_F_TEST_SKB_CHECKSUM_COMPLETE
        runs = {i: (FRAMES[i], program.run(FRAMES[i])) for i in range(len(FRAMES))}
        evidence = program.evidence
    unknown = {s.state: s for s in states.judge_states(runs, None)}
    assert unknown["complete"].how == "not run" and "6.11" in unknown["complete"].note
    assert set(unknown["partial"].unjudged) == TCPUDP4 and not unknown["partial"].broken
    assert "finish differently" in unknown["partial"].note
    known = {s.state: s for s in states.judge_states(runs, evidence)}
    assert known["partial"].judged == 28 and not known["partial"].broken and not known["partial"].unjudged


def test_bad_csum_state_uses(objects, pcap, capsys, tmp_path):
    """An XDP program (also with --debian), an unknown state: one-line errors, exit 2."""
    xdp = str(compile_bpf(EXAMPLES / "xdp_nat.c", tmp_path / "xdp_nat.o"))
    assert cli.main(["prog", xdp, "--pcap", pcap, "--csum-state", "partial"]) == 2
    assert "checksum states are those of a tc program's skb" in capsys.readouterr().err
    assert cli.main(["prog", xdp, "--pcap", pcap, "--csum-state", "all", "--debian", "bookworm", "amd64"]) == 2
    assert "checksum states are those of a tc program's skb" in capsys.readouterr().err  # before any boot
    with pytest.raises(SystemExit) as exc:
        cli.main(["prog", objects["tc_nat"], "--csum-state", "offloaded"])
    assert exc.value.code == 2


GUESTS = sorted((Path(__file__).parents[1] / "vectors" / "qemu-prog" / "tc_nat_no_pseudo").glob("*.txt"))


@pytest.mark.parametrize("path", GUESTS, ids=[p.stem for p in GUESTS])
def test_the_states_on_debians_kernels(objects, path):
    """tc_nat_no_pseudo's recorded runs on Debian's x86_64 6.1 and 7.2 under QEMU (tests/vectors/qemu-prog, as
    ``csum prog --debian ... --csum-state all`` judges them): COMPLETE breaks exactly the packets the guest kernel's
    own CHECKSUM_COMPLETE run answered EBADMSG, PARTIAL (modelled) the same packets, which scapy names as the IPv4
    TCP/UDP ones the SNAT rewrites (no options, not a later fragment); even without the COMPLETE verdicts PARTIAL is
    judged, the program passing no BPF_F_PSEUDO_HDR at any call site."""
    prep = qprog.prepare(objects["tc_nat_no_pseudo"])
    log = qprog.parse_log(path.read_text())
    kernel = qprog.replay(path, prep.evidence)
    runs = {i: (log.inputs[i], run) for i, run in kernel.runs.items()}
    stale = {i for i, rc in log.complete.items() if rc == -74}
    nat = {i for i, f in log.inputs.items() if IP in Ether(f) and Ether(f)[IP].ihl == 5 and Ether(f)[IP].frag == 0
           and (TCP in Ether(f) or UDP in Ether(f))}
    got = {s.state: s for s in states.judge_states(runs, prep.evidence)}
    assert len(stale) == 73 and set(got["complete"].broken) == stale and set(got["partial"].broken) == stale == nat
    assert not got["none"].broken and not got["unnecessary"].broken and not got["partial"].unjudged
    blind = {i: (frame, run._replace(stale=None)) for i, (frame, run) in runs.items()}
    assert set(states.judge_states(blind, prep.evidence, ["partial"])[0].broken) == nat
