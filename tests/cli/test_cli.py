"""csum/cli/__init__.py: exit codes, messages and output, in-process and as real subprocesses.

Independent sources: scapy (packets, their checksums, pcap/pcapng writing and
reading), include/uapi/linux/bpf.h's description of the replace flags, and the
capture writers of tests/captures.py (checked against scapy in tests/capture/test_pcap.py).
"""

import json
import os
import subprocess
import sys

import pytest
from captures import epb, idb, other, pcap_bytes, shb
from scapy.all import ICMP, IP, TCP, UDP, Ether, ICMPv6EchoRequest, IPv6, PcapNgWriter, Raw, rdpcap

import csum
from csum.cli import main
from csum.cli.sample import SAMPLE_PACKET


def test_compare_runs_on_the_sample(capsys):
    """`python -m csum compare` with no input prints the cross-architecture table of the embedded sample."""
    assert main(["compare"]) == 0
    out = capsys.readouterr().out
    assert "embedded sample" in out
    for name in csum.profile_names():
        assert f"\n{name} " in out


def test_no_command_prints_help(capsys):
    """`csum` alone prints the help naming every command, and exits 0 (issue 34: help, not the sample's table)."""
    assert main([]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: csum")
    for command in ("compare", "kernel-check", "diff", "verify", "fix", "rewrite", "prog", "bench"):
        assert f"    {command} " in out


@pytest.mark.parametrize("argv, hint", [
    (["verfy", "x.pcap"], "(did you mean verify?)"),
    (["rewrte", "a", "b"], "(did you mean rewrite?)"),
    (["verify", "x.pcap", "--jsn"], "(did you mean --json?)"),
    (["verify", "x.pcap", "--stirct"], "(did you mean --strict?)"),
    (["verify", "x.pcap", "--format", "jsnl"], "(did you mean jsonl?)"),
    (["fix", "a", "b", "--forec"], "(did you mean --force?)"),
    (["verify", "x.pcap", "--zzzzzz"], None),
])
def test_mistyped_words_get_a_suggestion(capsys, argv, hint):
    """A mistyped command, option or choice is a usage error (exit 2) whose one error line names the closest valid
    word; a word close to none gets no guess."""
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2
    err = capsys.readouterr().err
    line = [x for x in err.splitlines() if ": error: " in x]
    assert len(line) == 1 and "Traceback" not in err
    assert (hint in line[0]) if hint else "did you mean" not in line[0]


def _two_packets(tmp_path):
    """A pcap (scapy) of a right IPv4/TCP packet and an IPv4/UDP one whose checksum 0x1234 is wrong."""
    from scapy.utils import wrpcap

    path = tmp_path / "in.pcap"
    wrpcap(str(path), [Ether() / IP(src="192.0.2.1", dst="192.0.2.2") / TCP() / Raw(b"hi"),
                       Ether() / IP(src="192.0.2.1", dst="192.0.2.2") / UDP(chksum=0x1234) / Raw(b"x")])
    return path


def test_read_write_options_are_the_positionals(tmp_path, capsys):
    """tcpdump's -r IN / -w OUT give verify, fix and rewrite the same result as the positional IN OUT: the same
    report, exit code and written bytes."""
    src = _two_packets(tmp_path)
    assert main(["verify", str(src)]) == 1
    plain = capsys.readouterr().out
    assert main(["verify", "-r", str(src)]) == 1
    assert capsys.readouterr().out == plain
    for command, extra in (("fix", []), ("rewrite", ["--ttl", "9"])):
        a, b = tmp_path / f"{command}-a.pcap", tmp_path / f"{command}-b.pcap"
        code = main([command, str(src), str(a), *extra])
        first = capsys.readouterr().out
        assert main([command, "-r", str(src), "-w", str(b), *extra]) == code
        assert capsys.readouterr().out.replace(str(b), str(a)) == first
        assert a.read_bytes() == b.read_bytes()
        c = tmp_path / f"{command}-c.pcap"
        assert main([command, "-w", str(c), str(src), *extra]) == code
        assert capsys.readouterr().out.replace(str(c), str(a)) == first
        assert c.read_bytes() == a.read_bytes()


def test_options_may_come_between_and_after_the_positionals(tmp_path, capsys):
    """``rewrite IN --ttl 9 OUT`` (an option between IN and OUT, as tcprewrite users type it) and ``verify A --explain
    B`` give what the options-first order gives: the same report, exit code and written bytes."""
    src = _two_packets(tmp_path)
    for command, extra in (("fix", ["--keep-going"]), ("rewrite", ["--ttl", "9"])):
        a, b = tmp_path / f"{command}-first.pcap", tmp_path / f"{command}-between.pcap"
        code = main([command, *extra, str(src), str(a)])
        first = capsys.readouterr().out
        assert main([command, str(src), *extra, str(b)]) == code
        assert capsys.readouterr().out.replace(str(b), str(a)) == first
        assert a.read_bytes() == b.read_bytes()
    assert main(["verify", "--explain", str(src), str(src)]) == 1
    first = capsys.readouterr().out
    assert main(["verify", str(src), "--explain", str(src)]) == 1
    assert capsys.readouterr().out == first


def test_a_usage_error_names_the_file_given(tmp_path, capsys):
    """verify's option errors name the one FILE given (or how many), not "input"."""
    src = _two_packets(tmp_path)
    assert main(["verify", str(src), "--annotate", str(tmp_path / "x.pcapng")]) == 2
    assert capsys.readouterr().err == (f"csum: verify failed for {src}: --annotate: give --explain too (the comments "
                                       "hold each field's cause)\n")
    assert main(["verify", str(src), str(src), "--out", str(tmp_path / "x.json")]) == 2
    assert capsys.readouterr().err.startswith("csum: verify failed for 2 inputs: --out: ")


@pytest.mark.parametrize("argv, message", [
    (["fix", "-r", "IN"], "required: OUT"),
    (["rewrite", "-w", "OUT"], "required: IN"),
    (["fix", "-r", "A", "-w", "B", "C"], "unrecognized arguments: C"),
    (["fix", "-r", "A", "-r", "B", "OUT"], "argument -r: give one IN"),
    (["verify"], "required: FILE (or -r FILE)"),
    (["-r", "x.pcap"], "-r and -w follow a command"),
])
def test_read_write_usage_errors(capsys, argv, message):
    """-r/-w that leave IN or OUT missing, give one twice, or come before any command: one usage error line, exit 2,
    nothing read or written."""
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2
    assert message in capsys.readouterr().err


def test_quiet_prints_nothing_but_keeps_codes_and_outputs(tmp_path, capsys):
    """--quiet: verify, fix and rewrite print nothing (no report, no warning), exit as without it, and write the
    same bytes (a capture to - included)."""
    src = _two_packets(tmp_path)
    for argv in (["verify", str(src)], ["fix", str(src), str(tmp_path / "f.pcap")],
                 ["rewrite", str(src), str(tmp_path / "r.pcap"), "--ttl", "9"]):
        code = main(argv)
        loud = capsys.readouterr()
        assert loud.out
        assert main([*argv, "--quiet"]) == code
        quiet = capsys.readouterr()
        assert quiet.out == "" and quiet.err == ""
    run = [sys.executable, "-m", "csum", "rewrite", str(src), "-", "--ttl", "9"]
    loud = subprocess.run(run, capture_output=True, timeout=60)
    quiet = subprocess.run([*run, "-q"], capture_output=True, timeout=60)
    assert loud.returncode == quiet.returncode == 0
    assert quiet.stdout == loud.stdout and len(loud.stdout) > 24 and loud.stderr and not quiet.stderr


def test_sample_is_a_valid_ipv4_tcp_packet():
    """The embedded sample's IPv4 and TCP checksums verify (scapy recomputes the same bytes)."""
    from scapy.layers.inet import IP, TCP

    pkt = IP(SAMPLE_PACKET)
    del pkt.chksum
    del pkt[TCP].chksum
    assert bytes(pkt) == SAMPLE_PACKET


def test_compare_json_values_come_from_profiles(capsys):
    """--json rows carry each profile's csum_partial and homogenized diff for the given hex input."""
    assert main(["compare", "ffffff", "--profiles", "x86_64,generic", "--json"]) == 0
    rows = {r["profile"]: r for r in json.loads(capsys.readouterr().out)["rows"]}
    assert rows["x86_64"]["csum_partial"] == 0xFFFFFF  # tests/vectors/csum_partial/x86_64.txt: ff ff ff -> 0x00ffffff
    assert rows["generic"]["csum_partial"] == 0xFF
    assert rows["x86_64"]["legacy_diff"] == -22


@pytest.mark.parametrize("argv,needle", [
    (["compare", "zz"], "not a hex string"),
    (["compare", "--file", "/nonexistent/file"], "cannot read"),
    (["compare", "00", "--profiles", "vax"], "unknown profile"),
    (["compare", "00", "--seed", str(1 << 32)], "seed"),
])
def test_bad_input_exits_2_with_one_line(argv, needle, capsys):
    """Bad input: exit 2, one line `csum: <what> failed for <input>: <reason>` on stderr, no traceback."""
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("csum: compare failed for ") and needle in err and err.count("\n") == 1


def test_compare_reads_a_file(tmp_path, capsys):
    """--file reads bytes from a file and never modifies it."""
    path = tmp_path / "pkt.bin"
    path.write_bytes(SAMPLE_PACKET)
    assert main(["compare", "--file", str(path), "--profiles", "generic"]) == 0
    assert path.read_bytes() == SAMPLE_PACKET
    assert "60 bytes" in capsys.readouterr().out


def test_subprocess_main_command_and_version():
    """The README's main command runs as a real process; --version names the engine."""
    run = subprocess.run([sys.executable, "-m", "csum", "compare"], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0 and "x86_64" in run.stdout and not run.stderr
    ver = subprocess.run([sys.executable, "-m", "csum", "--version"], capture_output=True, text=True, timeout=60)
    assert ver.returncode == 0 and "engine:" in ver.stdout


def test_subprocess_usage_error_has_no_traceback():
    run = subprocess.run([sys.executable, "-m", "csum", "compare", "xyz"], capture_output=True, text=True, timeout=60)
    assert run.returncode == 2 and "Traceback" not in run.stderr


def test_kernel_check_command(capsys):
    """kernel-check: exit 0 when every case agrees with the running kernel, 2 when it cannot be reached."""
    from csum import kernel

    code = main(["kernel-check", "--n", "200", "--seed", "7"])
    captured = capsys.readouterr()
    if kernel.available():
        assert code == 0 and "200 cases" in captured.out
    else:
        assert code == 2 and kernel.why_unavailable() in captured.err


# --- diff ----------------------------------------------------------------------------------------

ETH = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")  # fixed MACs: no ARP lookups by scapy


def _diff(capsys, *argv):
    assert main(["diff", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def _field(doc, helper, flags, skb):
    (row,) = [r for r in doc["replace"] if r["helper"] == helper and r["flag_names"] == flags and r["ip_summed"] == skb]
    return row


def test_diff_nat_rewrite_gives_scapys_new_checksums(capsys):
    """SNAT 192.0.2.1 -> 198.51.100.9: the l3 row's field is the IPv4 header checksum scapy computes for the
    rewritten header; the l4 BPF_F_PSEUDO_HDR row (skb not CHECKSUM_PARTIAL) is scapy's new TCP checksum."""
    before = IP(bytes(IP(src="192.0.2.1", dst="203.0.113.5") / TCP(sport=1234, dport=80) / Raw(b"data")))
    after = IP(bytes(IP(src="198.51.100.9", dst="203.0.113.5") / TCP(sport=1234, dport=80) / Raw(b"data")))
    old = "c0000201"
    new = "c6336409"
    ip_doc = _diff(capsys, "--from", old, "--to", new, "--sum", f"{before.chksum:04x}")
    assert ip_doc["homogenized"] == csum.bpf_csum_diff(bytes.fromhex(old), bytes.fromhex(new))
    assert _field(ip_doc, "l3", "0", "any")["homogenized"] == f"{after.chksum:04x}"
    assert _field(ip_doc, "l3", "0", "any")["legacy"] == f"{after.chksum:04x}"
    tcp_doc = _diff(capsys, "--from", old, "--to", new, "--sum", f"{before[TCP].chksum:04x}")
    row = _field(tcp_doc, "l4", "BPF_F_PSEUDO_HDR", "not PARTIAL")
    assert row["homogenized"] == row["legacy"] == f"{after[TCP].chksum:04x}"


def test_diff_mark_mangled_0(capsys):
    """include/uapi/linux/bpf.h BPF_F_MARK_MANGLED_0: a stored 0 (UDP: no checksum) is left alone, and an update
    whose result is 0 stores 0xffff (CSUM_MANGLED_0); without the flag both become ordinary updates.
    Here the diff of pushing ff ff ff ff is 0xffff, which turns the field ffff into 0000."""
    doc = _diff(capsys, "--from", "", "--to", "ffffffff", "--sum", "ffff")
    assert _field(doc, "l4", "0", "not PARTIAL")["homogenized"] == "0000"
    assert _field(doc, "l4", "BPF_F_MARK_MANGLED_0", "not PARTIAL")["homogenized"] == "ffff"
    doc = _diff(capsys, "--from", "0a000001", "--to", "0a000002", "--sum", "0000")
    assert _field(doc, "l4", "BPF_F_MARK_MANGLED_0", "not PARTIAL")["homogenized"] == "0000"
    assert _field(doc, "l4", "0", "not PARTIAL")["homogenized"] != "0000"


def test_diff_text_and_legacy_einval(capsys):
    """2-byte buffers: the legacy helper returns -EINVAL (sizes must be multiples of 4), shown as such;
    the homogenized value is csum.profile('x86_64').bpf_csum_diff's."""
    assert main(["diff", "--from", "0a00", "--to", "c0a8", "--profile", "x86_64", "--sum", "1c46"]) == 0
    out = capsys.readouterr().out
    homog = csum.profile("x86_64").bpf_csum_diff(b"\x0a\x00", b"\xc0\xa8")
    assert f"homogenized (Linux >= 6.13): {homog:#06x}" in out and "-22 (EINVAL" in out
    assert "BPF_F_PSEUDO_HDR|BPF_F_MARK_MANGLED_0" in out


@pytest.mark.parametrize("argv,needle", [
    (["diff", "--from", "zz", "--to", "00"], "not a hex string"),
    (["diff", "--from", "00", "--to", "00", "--sum", "123456"], "--sum must be 2 bytes"),
    (["diff", "--from", "00", "--to", "00", "--profile", "vax"], "unknown profile"),
    (["diff", "--from", "00", "--to", "00", "--profile", "s390x", "--sum", "0000"], "little-endian"),
    (["diff", "--from", "00", "--to", "00", "--seed", "-1"], "seed"),
])
def test_diff_bad_input(argv, needle, capsys):
    """Bad hex, a --sum that is not 2 bytes, unknown or big-endian profile with --sum, bad seed: exit 2, one line."""
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("csum: diff failed for input: ") and needle in err and err.count("\n") == 1


# --- verify and fix ------------------------------------------------------------------------------

def _good_packets():
    v4 = dict(src="192.0.2.1", dst="198.51.100.2")
    v6 = dict(src="2001:db8::1", dst="2001:db8::2")
    return [bytes(p) for p in (
        ETH / IP(**v4) / TCP(sport=40000, dport=443) / Raw(b"hello"),
        ETH / IPv6(**v6) / UDP(sport=53, dport=5353) / Raw(b"odd"),
        ETH / IP(**v4) / ICMP() / Raw(b"ping"),
        ETH / IPv6(**v6) / ICMPv6EchoRequest(data=b"x"),
        ETH / IP(**v4) / UDP(sport=1, dport=2) / Raw(b"\0" * 7),
    )]


#: (packet, layer, its path, offset of the field in the packet, wrong value written there)
CORRUPTIONS = [(0, "tcp", "eth/ipv4/tcp", 34 + 16, 0x1234), (2, "ipv4", "eth/ipv4", 14 + 10, 0xBEEF),
               (4, "udp", "eth/ipv4/udp", 34 + 6, 0x0001)]


def _corrupted():
    """scapy-built packets (checksums by scapy) with three fields overwritten; expected bad rows with scapy's values."""
    pkts = [bytearray(p) for p in _good_packets()]
    expected = []
    for i, layer, path, at, wrong in CORRUPTIONS:
        right = int.from_bytes(pkts[i][at : at + 2], "big")
        pkts[i][at : at + 2] = wrong.to_bytes(2, "big")
        expected.append({"frame": i + 1, "layer": layer, "path": path, "offset": at, "stored": wrong, "computed": right,
                         "reason": "mismatch"})
    return [bytes(p) for p in pkts], expected


def test_verify_reports_scapys_checksums_for_corrupted_fields(tmp_path, capsys):
    """verify --json: exactly the overwritten fields are bad, with scapy's checksum as `computed`, each named by its
    frame number (from 1) and the field's offset in the frame; exit 1."""
    pkts, expected = _corrupted()
    path = tmp_path / "bad.pcap"
    path.write_bytes(pcap_bytes(pkts))
    assert main(["verify", str(path), "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["bad"] == expected and doc["bad_count"] == 3 and doc["packets"] == 5 and doc["fast_path"] == 2
    assert doc["counts"]["tcp"] == {"ok": 0, "bad": 1, "offload": 0, "none": 0, "n/a": 0}
    assert doc["counts"]["ipv4"] == {"ok": 2, "bad": 1, "offload": 0, "none": 0, "n/a": 0}


def test_verify_pcapng_by_scapy_all_good_text(tmp_path, capsys):
    """A pcapng written by scapy's PcapNgWriter with scapy's checksums: exit 0, the counts table in text."""
    path = tmp_path / "good.pcapng"
    with PcapNgWriter(str(path)) as w:
        for p in _good_packets():
            w.write(Ether(p))
    assert main(["verify", str(path)]) == 0
    out = capsys.readouterr().out
    assert "pcapng, 5 packets" in out and "bad checksums" not in out
    assert [line.split() for line in out.splitlines() if line.startswith(("tcp ", "icmpv6 "))] == [
        ["tcp", "1", "0", "0", "0", "0"], ["icmpv6", "1", "0", "0", "0", "0"]]


def test_verify_show_limits_the_list(tmp_path, capsys):
    pkts, _ = _corrupted()
    path = tmp_path / "bad.pcap"
    path.write_bytes(pcap_bytes(pkts))
    assert main(["verify", str(path), "--show", "1"]) == 1
    out = capsys.readouterr().out
    assert "bad checksums: 3 (first 1)" in out and "0x1234" in out and "0xbeef" not in out


def test_verify_snaplen_cut_packets_are_reported_not_checked(tmp_path, capsys):
    """A packet cut by the snap length (caplen < origlen) is listed as cut, never as a bad checksum."""
    pkts, _ = _corrupted()
    path = tmp_path / "cut.pcap"
    path.write_bytes(pcap_bytes([pkts[0][:40], *_good_packets()[1:]], origlens=[len(pkts[0])]
                                + [len(p) for p in _good_packets()[1:]]))
    assert main(["verify", str(path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["cut_frames"] == [1] and doc["bad_count"] == 0 and doc["counts"]["tcp"]["bad"] == 0


@pytest.mark.parametrize("content,needle", [
    (None, "cannot read"),
    (b"\x7fELF\x02\x01\x01" + b"\0" * 60, "not a pcap or pcapng capture"),
    (b"\xd4\xc3\xb2\xa1\x09\x00\x04\x00" + b"\0" * 16, "pcap version 9.4 is not supported"),
    (pcap_bytes([])[:20], "pcap file header needs 24 bytes"),
])
def test_verify_bad_files_exit_2_with_one_line(content, needle, tmp_path, capsys):
    """Missing file, not a capture, a bad or short file header: exit 2, one line, no report, no traceback."""
    path = tmp_path / "in.pcap"
    if content is not None:
        path.write_bytes(content)
    assert main(["verify", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith(f"csum: verify failed for {path}: ") and needle in captured.err
    assert captured.err.count("\n") == 1 and not captured.out


def test_verify_bogus_ihl_is_reported_and_never_hides_a_bad_checksum(tmp_path, capsys):
    """A packet whose IPv4 IHL is 3 is malformed: listed in the report; alone it leaves exit 0 (every checksum
    found is good), next to a wrong checksum the exit code is 1 (the exit-code table of docs/verify.md)."""
    pkts = _good_packets()
    bogus = pkts[0][:14] + b"\x43" + pkts[0][15:]
    path = tmp_path / "ihl.pcap"
    path.write_bytes(pcap_bytes([pkts[1], bogus]))
    assert main(["verify", str(path)]) == 0
    captured = capsys.readouterr()
    assert "malformed packets: 1" in captured.out and "IPv4 IHL is 3, below the minimum of 5" in captured.out
    corrupted, _ = _corrupted()
    path.write_bytes(pcap_bytes([bogus, *corrupted]))
    assert main(["verify", str(path)]) == 1
    out = capsys.readouterr().out
    assert "malformed packets: 1" in out and "bad checksums: 3" in out


def _changed(a: bytes, b: bytes) -> list[int]:
    assert len(a) == len(b)
    return [i for i in range(len(a)) if a[i] != b[i]]


def test_fix_corrects_only_checksum_bytes(tmp_path, capsys):
    """fix: OUT differs from IN only in the corrupted checksum bytes, each packet is what scapy rebuilds with
    recomputed checksums, IN is untouched, OUT verifies clean."""
    pkts, _ = _corrupted()
    src, dst = tmp_path / "in.pcap", tmp_path / "out.pcap"
    original = pcap_bytes(pkts, endian=">", nano=True)
    src.write_bytes(original)
    assert main(["fix", str(src), str(dst)]) == 1  # bad checksums were found (and corrected)
    assert "3 checksums corrected and 0 transmit-offload fields filled in, in 3 packets" in capsys.readouterr().out
    assert src.read_bytes() == original
    fixed = dst.read_bytes()
    record_starts = [24]
    for p in pkts[:-1]:
        record_starts.append(record_starts[-1] + 16 + len(p))
    want = sorted(record_starts[i] + 16 + at + k for i, _, _, at, _ in CORRUPTIONS for k in (0, 1))
    assert _changed(original, fixed) == want
    assert [bytes(p) for p in rdpcap(str(dst))] == _good_packets()
    assert main(["verify", str(dst)]) == 0


def test_fix_pcapng_keeps_blocks_and_cut_packets(tmp_path, capsys):
    """Big-endian pcapng with options, an unknown block and a snaplen-cut packet with a wrong TCP checksum:
    only the whole packets' wrong fields change; the cut packet and every other block stay byte for byte."""
    pkts, _ = _corrupted()
    body = [shb(">"), idb(1, ">"), other(0x0BADC0DE, b"custom block", ">")]
    body += [epb(p, 0, ">") for p in pkts] + [epb(pkts[0][:50], 0, ">", origlen=len(pkts[0]))]
    original = b"".join(body)
    src, dst = tmp_path / "in.pcapng", tmp_path / "out.pcapng"
    src.write_bytes(original)
    assert main(["fix", str(src), str(dst), "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["fixed_checksums"] == 3 and doc["cut_frames"] == [6]
    fixed = dst.read_bytes()
    start = sum(map(len, body[:3]))
    want = []
    for i, p in enumerate(pkts):
        want += [start + 28 + at + k for j, _, _, at, _ in CORRUPTIONS if j == i for k in (0, 1)]
        start += len(body[3 + i])
    assert _changed(original, fixed) == sorted(want)


def test_fix_refuses_out_equal_in_and_bad_outputs(tmp_path, capsys):
    """OUT naming IN (also through another spelling or a hard link) is refused; nothing is written on bad input."""
    src = tmp_path / "in.pcap"
    src.write_bytes(pcap_bytes(_good_packets()))
    os.link(src, tmp_path / "hard.pcap")
    for out in (str(src), str(tmp_path / "." / "in.pcap"), str(tmp_path / "hard.pcap")):
        assert main(["fix", str(src), out]) == 2
        assert "is the input" in capsys.readouterr().err
    junk = tmp_path / "junk.pcap"
    junk.write_bytes(b"\0" * 100)
    assert main(["fix", str(junk), str(tmp_path / "never.pcap")]) == 2
    assert not (tmp_path / "never.pcap").exists()
    assert main(["fix", str(src), str(tmp_path / "no" / "dir.pcap")]) == 2
    assert "cannot write" in capsys.readouterr().err
    assert sorted(os.listdir(tmp_path)) == ["hard.pcap", "in.pcap", "junk.pcap"]


def test_progress_only_on_a_terminal_for_long_files():
    """The progress line is drawn only when stderr is a terminal and the file has 16 MiB or more; it names
    the phase, and close() erases it."""
    import io

    from csum.cli.progress import Bar

    class Tty(io.StringIO):
        def isatty(self):
            return True

    quiet = io.StringIO()
    bar = Bar(quiet, "verify")
    bar.update(50 << 20, 200 << 20)
    assert quiet.getvalue() == ""
    small = Tty()
    Bar(small, "verify").update(1 << 10, 1 << 20)
    assert small.getvalue() == ""
    stream = Tty()
    bar = Bar(stream, "fix")
    bar.phase("checking a.pcap and writing b.pcap")
    bar.update(50 << 20, 200 << 20)
    line = "csum fix: checking a.pcap and writing b.pcap  25% (52.4 MB of 209.7 MB)"
    assert stream.getvalue() == "\r" + line
    bar.close()
    assert stream.getvalue().endswith("\r" + " " * len(line) + "\r")


# --- bench ---------------------------------------------------------------------------------------

def test_bench_runs_python_m_bench_quick(monkeypatch):
    """bench --quick runs `python -m bench --quick` with this interpreter from the checkout holding bench/."""
    from csum.cli import bench

    seen = {}

    def fake_run(command, cwd, check):
        seen.update(command=command, cwd=cwd)
        return subprocess.CompletedProcess(command, 3)

    monkeypatch.setattr(subprocess, "run", fake_run)  # bench imports subprocess when it runs
    assert main(["bench", "--quick"]) == 3
    assert seen["command"] == [sys.executable, "-m", "bench", "--quick"]
    assert (seen["cwd"] / "bench" / "__main__.py").exists()


def test_bench_without_the_bench_package(monkeypatch, capsys):
    from csum.cli import bench

    monkeypatch.setattr(bench, "bench_root", lambda: None)
    assert main(["bench", "--quick"]) == 2
    assert "bench package is not here" in capsys.readouterr().err


# --- real processes ------------------------------------------------------------------------------

def test_subprocess_verify_fix_and_garbage(tmp_path):
    """`python -m csum verify/fix` as real processes: exit 1 on bad checksums, fix then verify 0, garbage 2."""
    pkts, _ = _corrupted()
    src, dst, junk = tmp_path / "in.pcap", tmp_path / "out.pcap", tmp_path / "junk.pcap"
    src.write_bytes(pcap_bytes(pkts))
    junk.write_bytes(os.urandom(100))
    run = lambda *a: subprocess.run([sys.executable, "-m", "csum", *a], capture_output=True, text=True, timeout=60)  # noqa: E731
    first = run("verify", str(src))
    assert first.returncode == 1 and "bad checksums: 3" in first.stdout and not first.stderr
    assert run("fix", str(src), str(dst)).returncode == 1
    assert run("verify", str(dst)).returncode == 0
    bad = run("verify", str(junk))
    assert bad.returncode == 2 and "Traceback" not in bad.stderr and bad.stderr.count("\n") == 1


def test_verify_negative_show_is_a_usage_error(tmp_path, capsys):
    path = tmp_path / "ok.pcap"
    path.write_bytes(pcap_bytes(_good_packets()))
    assert main(["verify", str(path), "--show", "-1"]) == 2
    assert "--show must be 0 or more" in capsys.readouterr().err


def test_compare_does_not_import_numpy():
    """The capture commands load numpy lazily: `csum compare` starts without it."""
    code = "import sys, csum.cli; csum.cli.main(['compare', '00', '--profiles', 'generic']); print('numpy' in sys.modules)"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert run.stdout.strip().endswith("False")


def test_rewrite_does_not_import_numpy(tmp_path):
    """`csum rewrite` (the start-up of its shortest runs) reads, rewrites and writes a capture without numpy: the
    chunk's columns go to the C rewriter as the reader's int64 buffers (csum/rewrite/fast.py); the output is checked
    by `csum verify` in the same process afterwards (the expected checksums: csum's checker, independent of the
    rewriter's incremental updates)."""
    src, dst = tmp_path / "in.pcap", tmp_path / "out.pcap"
    src.write_bytes(pcap_bytes(_good_packets()))
    code = (f"import sys, csum.cli; r = csum.cli.main(['rewrite', {str(src)!r}, {str(dst)!r}, '--map-ip', "
            f"'0.0.0.0/0=10.9.0.0/16', '-q']); print(r, 'numpy' in sys.modules); "
            f"print(csum.cli.main(['verify', {str(dst)!r}, '-q']))")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert run.stdout.split() == ["0", "False", "0"], run.stdout + run.stderr


def test_bench_json_passes_through_and_prints_json(monkeypatch, tmp_path):
    """`csum bench --json` runs `python -m bench --json`, which prints the results as JSON (here regenerated
    from the committed results with --table-only, measuring nothing)."""
    from csum.cli import bench

    seen = {}
    monkeypatch.setattr(subprocess, "run", lambda command, cwd, check: seen.update(command=command)
                        or subprocess.CompletedProcess(command, 0))
    assert main(["bench", "--quick", "--json"]) == 0
    assert seen["command"][-2:] == ["--quick", "--json"]
    monkeypatch.undo()
    root = bench.bench_root()
    run = subprocess.run([sys.executable, "-m", "bench", "--json", "--table-only",
                          str(root / "bench" / "results" / "results.json"), "--out", str(tmp_path)],
                         cwd=root, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "single" in json.loads(run.stdout)


def test_ctrl_c_and_memory_error_are_one_line(monkeypatch, capsys):
    """KeyboardInterrupt in any command (here kernel-check and compare) -> `csum: interrupted`, 130;
    MemoryError -> one `failed ... out of memory` line, 2."""
    from csum.cli import parser as cli_parser

    def interrupted(args):
        raise KeyboardInterrupt

    parser = cli_parser.build
    monkeypatch.setattr(cli_parser, "build", lambda argv=None: _with(parser(argv), "kernel-check", interrupted))
    assert main(["kernel-check"]) == 130
    assert capsys.readouterr().err == "csum: interrupted\n"

    def hungry(args):
        raise MemoryError

    monkeypatch.setattr(cli_parser, "build", lambda argv=None: _with(parser(argv), "compare", hungry))
    assert main(["compare", "00"]) == 2
    assert capsys.readouterr().err == "csum: compare failed for input: out of memory\n"


def _with(parser, command, func):
    """``parser`` with ``command`` running ``func``."""
    sub = next(a for a in parser._actions if a.dest == "command")
    sub.choices[command].set_defaults(func=func)
    return parser
