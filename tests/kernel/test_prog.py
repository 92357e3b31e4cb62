"""csum.prog and ``csum prog``: real-shaped programs run on the kernel, and what csum says about each, checked.

Which outputs are broken comes from scapy (checksums recomputed from scratch and compared with the stored ones,
tests/prog_frames.py), not from csum; the CHECKSUM_COMPLETE verdict comes from the running kernel (EBADMSG), and
the test states which packets must get it. The programs are examples/bpf (built with clang; some with a define that
changes their section or puts a mistake in) and a few written here. Skipped, with the reason, where clang, libbpf
or BPF test runs are missing.
"""

from __future__ import annotations

import json
import os

import prog_frames as pf
import pytest
from bpf_build import EXAMPLES, compile_bpf, why_not
from scapy.compat import raw
from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.l2 import Ether
from scapy.utils import rdpcap, wrpcap

from csum import cli
from csum.errors import Code, CsumValueError
from csum.kernel import prog
from csum.testing import sample_packets

pytestmark = pytest.mark.skipif(why_not() is not None, reason=str(why_not()))

PROGRAMS = {"tc_nat": (), "tc_nat_no_pseudo": (), "xdp_nat": (), "xdp_nat_single_fold": (), "tc_encap": (),
            "tc_encap_late": ("CSUM_BEFORE_TOT_LEN",), "xdp_decap": (), "xdp_fwd": (),
            "xdp_fwd_legacy": ('FWD_SECTION="xdp_prog"',)}
_SOURCES = {"tc_encap_late": "tc_encap", "xdp_fwd_legacy": "xdp_fwd"}


@pytest.fixture(scope="module")
def objects(tmp_path_factory):
    out = tmp_path_factory.mktemp("bpf")
    return {name: str(compile_bpf(EXAMPLES / f"{_SOURCES.get(name, name)}.c", out / f"{name}.o", *defines))
            for name, defines in PROGRAMS.items()}


@pytest.fixture(scope="module")
def frames():
    return [prog.ethernet(p) for p in sample_packets(300, seed=12)]


def _expected_nat(frame: bytes) -> bytes:
    """scapy's from-scratch SNAT of an IPv4 frame (other frames unchanged)."""
    pkt = Ether(frame)
    if IP not in pkt or pkt[IP].ihl != 5:
        return frame
    pkt[IP].src = pf.NEW4
    del pkt[IP].chksum
    for layer in (TCP, UDP):
        if layer in pkt and pkt[IP].frag == 0 and not (layer is UDP and pkt[UDP].chksum == 0):
            del pkt[layer].chksum
    return raw(pkt)


@pytest.mark.parametrize("name", ["tc_nat", "tc_nat_no_pseudo", "xdp_nat", "xdp_nat_single_fold"])
def test_nat_examples_flag_exactly_the_broken_outputs(objects, frames, name, record_property):
    """Invariant: csum.prog calls a checksum of an output broken iff scapy's recomputation disagrees, and a tc
    program's skb->csum iff the kernel's CHECKSUM_COMPLETE run failed (the IPv4 TCP/UDP packets of the program without
    BPF_F_PSEUDO_HDR); the correct programs' outputs are scapy's SNAT byte for byte; each broken packet's cause is
    the program's mistake, reproduced."""
    broken_packets = 0
    mistake = {"tc_nat_no_pseudo": "pseudo-hdr-missing", "xdp_nat_single_fold": "single-fold"}.get(name)
    with prog.load(objects[name]) as program:
        assert program.kind == ("tc" if name.startswith("tc") else "xdp")
        for frame in frames:
            run = program.run(frame)
            assert {(c.layer, c.offset) for c in run.broken if c.layer != prog.SKB_CSUM} == \
                pf.scapy_bad(frame, run.packet), frame.hex()
            stale = any(c.layer == prog.SKB_CSUM for c in run.broken)
            v4_pseudo = IP in Ether(frame) and Ether(frame)[IP].proto in (6, 17) and Ether(frame)[IP].ihl == 5
            assert stale == (name == "tc_nat_no_pseudo" and v4_pseudo)
            if name != "xdp_nat_single_fold":
                assert run.packet == _expected_nat(frame)
            if run.broken:
                broken_packets += 1
                assert all(mistake in c.mistakes for c in run.broken), run.broken
    record_property("kernel_checked", len(frames) * (2 if name.startswith("tc") else 1))
    assert (broken_packets == 0) == (mistake is None) and (mistake is None or broken_packets > len(frames) // 10)


def test_encapsulation_is_judged_at_its_new_length(objects, record_property):
    """An IP-in-IP encapsulation (bpf_skb_adjust_room, 20 bytes pushed): the output is read at the length the kernel
    reports (data_size_out), every checksum of it judged, the added outer header's too. The correct program: all
    right (scapy agrees, skb->csum valid); the one computing the outer checksum before tot_len: every encapsulated
    packet broken where scapy says so, the cause reproduced (the header with the total length 0)."""
    made = pf.frames([pf.tcp4], 40, seed=1)
    for name, mistake in (("tc_encap", None), ("tc_encap_late", "header-field-late")):
        with prog.load(objects[name]) as program:
            for frame in made:
                run = program.run(frame)
                assert len(run.packet) == len(frame) + 20 and Ether(run.packet)[IP].proto == 4
                assert Ether(run.packet)[IP].payload.build() == Ether(frame)[IP].build()  # the inner packet as it was
                assert {(c.layer, c.offset) for c in run.broken} == pf.scapy_bad(frame, run.packet)
                assert run.stale is False
                if mistake:
                    outer = next(c for c in run.broken if c.offset == 14)
                    assert outer.was is None and outer.mistakes == (mistake,) and "total length still 0" in outer.cause
                else:
                    assert not run.broken and {c.status for c in run.results} == {"ok"}
    record_property("kernel_checked", 2 * 2 * len(made))


def test_decapsulation_is_judged_at_its_new_length(objects):
    """An IP-in-IP decapsulation (XDP, bpf_xdp_adjust_head +20): the output is 20 bytes shorter, scapy reads it as the
    inner packet with its checksums right, and csum judges it right too, the outer header reported gone."""
    for frame in pf.frames([pf.ipip4], 30, seed=2):
        with prog.load(objects["xdp_decap"]) as program:
            run = program.run(frame)
        assert run.packet == frame[:14] + frame[34:] and not pf.scapy_bad(frame, run.packet)
        assert not run.broken and run.removed == ("ipv4",) and run.action == "XDP_PASS"


def test_seeded_map_pinned_map_drops_and_globals(objects, tmp_path):
    """xdp_fwd: a map pinned by name loads without bpffs and leaves nothing in /sys/fs/bpf; with the map empty the
    program changes nothing and csum says so; seeded (Python, a JSON file, key=value) it rewrites the packets sent to
    a key into scapy's DNAT of them (XDP_TX); with the global drop_unknown set the rest is dropped, counted, not
    judged."""
    before = sorted(os.listdir("/sys/fs/bpf")) if os.path.isdir("/sys/fs/bpf") else None
    dst, backend = "10.0.0.2", "192.0.2.80"
    sent = [raw(pf.ETHER / IP(src=f"198.51.100.{i}", dst=dst) / TCP(sport=1000 + i, dport=80) / b"hello")
            for i in range(10)] + [raw(pf.ETHER / IP(src="198.51.100.99", dst="10.0.0.3") / UDP(sport=5, dport=6))]
    with prog.load(objects["xdp_fwd"]) as program:
        assert [m.name for m in program.unpinned] == ["backends"]
        assert all(program.run(f).packet == f and not program.run(f).changed for f in sent)
        program.maps["backends"][dst] = backend
        runs = [program.run(f) for f in sent]
    for frame, run in zip(sent[:-1], runs):
        want = Ether(frame)
        want[IP].dst = backend
        del want[IP].chksum, want[TCP].chksum
        assert run.packet == raw(want) and run.action == "XDP_TX" and not run.broken
    assert runs[-1].packet == sent[-1] and runs[-1].action == "XDP_PASS"
    with prog.load(objects["xdp_fwd"], maps={"backends": {dst: backend}}, globals={"drop_unknown": 1}) as program:
        last = program.run(sent[-1])
    assert last.dropped and last.action == "XDP_DROP" and last.results == []
    assert (sorted(os.listdir("/sys/fs/bpf")) if os.path.isdir("/sys/fs/bpf") else None) == before
    pcap = tmp_path / "in.pcap"
    wrpcap(str(pcap), [Ether(f) for f in sent])
    mapfile = tmp_path / "backends.json"
    mapfile.write_text(json.dumps([{"key": dst, "value": backend}]))
    for seed in ([f"--map=backends={mapfile}"], [f"--map=backends:{dst}={backend}"]):
        assert cli.main(["prog", objects["xdp_fwd"], "--pcap", str(pcap), *seed, "--global", "drop_unknown=1",
                         "--json"]) == 0
    assert cli.main(["prog", objects["xdp_fwd"], "--pcap", str(pcap)]) == 0


def test_empty_map_is_said_to_do_nothing(objects, capsys):
    """A program that changes nothing without its map is not reported as 'all correct' without a word."""
    assert cli.main(["prog", objects["xdp_fwd"], "--count", "20"]) == 0
    out = capsys.readouterr().out
    assert "0 of 20 packets changed, 0 dropped, 0 broken" in out and "changed no packet" in out and "--map" in out
    assert "not pinned and not reused: backends" in out


def test_legacy_section_needs_its_type(objects, frames):
    """SEC("xdp_prog") has no type under libbpf >= 1.0: loading it says so and names --type / type=; given the type it
    runs as the same program in section "xdp" does (same output bytes)."""
    with pytest.raises(CsumValueError, match=r"libbpf >= 1\.0.*--type xdp\|tc") as err:
        prog.load(objects["xdp_fwd_legacy"])
    assert err.value.code == Code.PROG_TYPE
    seeded = {"backends": {"0.0.0.0": "192.0.2.80"}}
    with prog.load(objects["xdp_fwd_legacy"], type="xdp", maps=seeded) as legacy, \
            prog.load(objects["xdp_fwd"], maps=seeded) as modern:
        assert legacy.kind == "xdp"
        assert all(legacy.run(f).packet == modern.run(f).packet for f in frames[:60])


def test_seed_errors_name_the_problem(objects):
    """Unknown map or global, a value of the wrong size, a ctx field the test run does not take: one clear error."""
    with pytest.raises(CsumValueError, match="no map named 'nope'.*backends") as err:
        prog.load(objects["xdp_fwd"], maps={"nope": {}})
    assert err.value.code == Code.NO_MAP
    with pytest.raises(CsumValueError, match="no global named 'nope'") as err:
        prog.load(objects["xdp_fwd"], globals={"nope": 1})
    assert err.value.code == Code.NO_MAP
    with pytest.raises(CsumValueError, match="6 bytes given for a 4-byte field") as err:
        prog.load(objects["xdp_fwd"], maps={"backends": {"hex:000000000000": 1}})
    assert err.value.code == Code.BAD_WIDTH
    with pytest.raises(CsumValueError, match="eth_type_trans"):
        prog.load(objects["tc_nat"], ctx={"protocol": 8})


def test_ctx_mark_reaches_the_program(tmp_path):
    """--ctx mark=N: a tc program that rewrites only packets with that mark rewrites them only when given it."""
    src = tmp_path / "mark.c"
    src.write_text('#include <linux/bpf.h>\n#include <linux/pkt_cls.h>\n#include <bpf/bpf_helpers.h>\n'
                   'SEC("tc") int by_mark(struct __sk_buff *skb) { __u8 b = 0x42;\n'
                   '  if (skb->mark == 7) bpf_skb_store_bytes(skb, 0, &b, 1, 0); return TC_ACT_OK; }\n'
                   'char LICENSE[] SEC("license") = "GPL";\n')
    obj = str(compile_bpf(src, tmp_path / "mark.o"))
    frame = pf.frames([pf.tcp4], 1, seed=3)[0]
    for ctx, first in (({}, frame[0]), ({"mark": 7}, 0x42), ({"mark": "0x7"}, 0x42)):
        with prog.load(obj, ctx=ctx) as program:
            run = program.run(frame)
        assert run.packet[0] == first and not run.broken  # a MAC byte: in no checksum, outside skb->csum


def test_unparseable_output_is_broken(tmp_path):
    """A program that cuts 4 bytes off the tail leaves IPv4 packets whose total length runs past the end: reported
    as an output that does not parse (broken), not passed."""
    src = tmp_path / "cut.c"
    src.write_text('#include <linux/bpf.h>\n#include <bpf/bpf_helpers.h>\n'
                   'SEC("xdp") int cut(struct xdp_md *ctx) { return bpf_xdp_adjust_tail(ctx, -4) ? XDP_ABORTED : '
                   'XDP_PASS; }\nchar LICENSE[] SEC("license") = "GPL";\n')
    frame = pf.frames([pf.tcp4], 1, seed=4)[0]
    with prog.load(str(compile_bpf(src, tmp_path / "cut.o"))) as program:
        run = program.run(frame)
    assert len(run.packet) == len(frame) - 4 and run.error and "truncated" in run.error
    assert [(c.layer, c.status) for c in run.broken] == [("packet", "broken")]


def test_load_errors_name_the_problem(objects, tmp_path):
    """A missing object, a name that is not there and an ambiguous choice give one clear error each."""
    with pytest.raises(prog.LibbpfError, match="cannot open"):
        prog.load(str(tmp_path / "missing.o"))
    with pytest.raises(CsumValueError, match="no program named 'nope'.*tc_snat"):
        prog.load(objects["tc_nat"], prog="nope")
    with pytest.raises(CsumValueError, match="no program in section 'xdp'"):
        prog.load(objects["tc_nat"], section="xdp")
    with prog.load(objects["tc_nat"], section="tc") as program:
        assert program.info.name == "tc_snat"


def test_cli_prog_report_json_pcap_and_out(objects, tmp_path, capsys):
    """csum prog: exit 1 and the broken packets for a broken program, 0 for a correct one, with the summary line;
    --json holds every packet (not only --show's) with its verdict; --pcap reads a capture (scapy-written), --out
    writes the output packets (scapy reads them back equal to scapy's SNAT)."""
    assert cli.main(["prog", objects["tc_nat"], "--count", "40"]) == 0
    text = capsys.readouterr().out
    assert "0 dropped, 0 broken" in text and "CHECKSUM_PARTIAL" in text
    assert cli.main(["prog", objects["xdp_nat_single_fold"], "--count", "40", "--json", "--show", "1"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["type"] == "xdp" and len(doc["runs"]) == 40 and doc["broken_packets"] > 1
    assert doc["summary"] == f"{doc['changed']} of 40 packets changed, 0 dropped, {doc['broken_packets']} broken"
    assert doc["causes"]["single-fold"] == doc["broken_packets"]
    assert all("single-fold" in c["mistakes"] for r in doc["runs"] for c in r["checks"] if c["status"] == "broken")
    assert {r["action"] for r in doc["runs"]} == {"XDP_PASS"}
    pcap_in, pcap_out = tmp_path / "in.pcap", tmp_path / "out.pcap"
    made = pf.frames([pf.tcp4, pf.udp4], 20, seed=3)
    wrpcap(str(pcap_in), [Ether(f) for f in made])
    assert cli.main(["prog", objects["tc_nat_no_pseudo"], "--pcap", str(pcap_in), "--out", str(pcap_out)]) == 1
    text = capsys.readouterr().out
    assert "skb->csum: stale" in text and f"wrote {pcap_out}: 20 output packets" in text
    assert "cause pseudo-hdr-missing: reproduced on 20 of 20 broken packets" in text
    assert [raw(p) for p in rdpcap(str(pcap_out))] == [_expected_nat(f) for f in made]
    assert cli.main(["prog", objects["tc_nat"], "--pcap", str(pcap_in), "--out", str(pcap_in)]) == 2
    assert "input is never modified" in capsys.readouterr().err
    assert cli.main(["prog", str(tmp_path / "missing.o")]) == 2
    assert "csum: prog failed for" in capsys.readouterr().err
    assert cli.main(["prog", objects["xdp_fwd_legacy"], "--count", "1"]) == 2
    assert "--type xdp|tc" in capsys.readouterr().err
    assert cli.main(["prog", objects["xdp_fwd"], "--map", "backends"]) == 2
    assert "NAME=FILE.json or NAME:KEY=VALUE" in capsys.readouterr().err


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


def _walkthrough() -> tuple[list[str], list[tuple[str, str]]]:
    """docs/bpf.md's "A BPF author's walk-through": its build commands (the ```sh blocks) and each ``$ command`` of
    its transcripts with the output the page shows under it."""
    import re
    import textwrap

    page = (EXAMPLES.parent.parent / "docs" / "bpf.md").read_text(encoding="utf-8")
    section = page.split("## A BPF author's walk-through", 1)[1].split("\n## ", 1)[0]
    blocks = [(lang, textwrap.dedent(body)) for lang, body in
              re.findall(r"^ *```(\w*)\n(.*?)^ *```$", section, re.S | re.M)]
    steps = [tuple(step.partition("\n")[::2]) for lang, body in blocks if not lang
             for step in re.split(r"^\$ ", body, flags=re.M)[1:]]
    return [body.strip() for lang, body in blocks if lang == "sh"], steps  # type: ignore[return-value]


def test_the_walkthrough_prints_what_the_page_says(tmp_path):
    """Every command of docs/bpf.md's walk-through, run in a folder holding examples/bpf/ and built as step 1 says,
    prints what the page shows (``...`` for any lines; the counts exact): the page's numbers come from this run,
    never typed (issue 34)."""
    import doctest
    import shutil
    import subprocess
    import sys

    for source in EXAMPLES.iterdir():
        shutil.copy(source, tmp_path)
    build, steps = _walkthrough()
    assert build and len(steps) >= 5
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(EXAMPLES.parent.parent), os.environ.get("PYTHONPATH", "")]),
           "COLUMNS": "120"}
    checker = doctest.OutputChecker()
    for command, expected in [(b, "") for b in build] + steps:
        run = subprocess.run(["bash", "-c", f'csum() {{ "{sys.executable}" -m csum "$@"; }}\n{command}'],
                             capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)
        got = run.stdout + run.stderr
        assert checker.check_output(expected, got, doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE), \
            f"$ {command}\nexpected:\n{expected}\ngot:\n{got}"


def test_csum_prog_calls_what_the_cli_runs(objects, tmp_path, capsys):
    """csum.prog.sample_frames + judge_program (and across_kernels with a model) give the document ``csum prog --json``
    prints, field for field (the CLI only formats them); the broken packets are the single-fold ones, as scapy's
    checksum of the output says (independent of csum's verdict)."""
    import csum.prog as public
    from scapy.all import Ether as Eth

    packets = public.sample_frames(count=30, seed=4)
    judged = public.judge_program(objects["xdp_nat_single_fold"], packets)
    assert cli.main(["prog", objects["xdp_nat_single_fold"], "--count", "30", "--seed", "4", "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert {k: v for k, v in doc.items() if k not in ("schema", "$schema")} == judged.as_json()
    assert judged.failed
    for i, _frame, run in judged.runs:  # scapy recomputes every checksum of the output: broken iff one differs
        out = Eth(run.packet)
        again = Eth(run.packet)
        for layer in again.layers():
            if hasattr(again[layer], "chksum"):
                again[layer].chksum = None
        assert bool(run.broken) == (bytes(Eth(bytes(again))) != bytes(out)), i
    across = public.across_kernels(objects["tc_nat"], packets, models=["arm64:6.1"])
    assert cli.main(["prog", objects["tc_nat"], "--count", "30", "--seed", "4", "--model", "arm64:6.1", "--json"]) \
        == (1 if across.failed else 0)
    doc = json.loads(capsys.readouterr().out)
    assert {k: v for k, v in doc.items() if k not in ("schema", "$schema")} == across.as_json()
    with pytest.raises(CsumValueError, match="csum_states"):
        public.judge_program(objects["xdp_nat"], packets, csum_states=["all"])
