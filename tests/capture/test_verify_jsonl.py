"""``csum verify --format jsonl`` and ``--strict``: one JSON object per checksum field, offload apart from bad.

Expected values: scapy's checksums (read from the bytes scapy built) and the RFC 1071 oracle for the
transmit-offload field (the folded pseudo-header sum, RFC 9293 3.1).
"""

import json
import re

from captures import pcap_bytes
from oracle import rfc1071_checksum
from packets import A4, B4, C4, D4, ETH, offload_tcp, pseudo4
from scapy.all import IP, TCP, UDP, Ether, IPv6, fragment, raw
from scapy.layers.vxlan import VXLAN

from csum.cli import main


def _lines(capsys) -> list[dict]:
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def test_jsonl_one_object_per_field_in_packet_order(tmp_path, capsys):
    """Frames 1-based; inside a frame, fields in the order they appear (outer IPv4, UDP, inner IPv4, TCP);
    offset = the field's offset in the frame; stored/computed as 0x....; UDP 0 over IPv4 is "none"."""
    vx = raw(ETH / IP(src=A4, dst=B4) / UDP(sport=5, dport=4789) / VXLAN(vni=1) / ETH / IP(src=C4, dst=D4) / TCP())
    plain = raw(ETH / IPv6(src="2001:db8::1", dst="2001:db8::2") / TCP(sport=7) / b"x")
    none = raw(ETH / IP(src=A4, dst=B4) / UDP(chksum=0) / b"no sum")
    path = tmp_path / "t.pcap"
    path.write_bytes(pcap_bytes([vx, plain, none]))
    assert main(["verify", str(path), "--format", "jsonl"]) == 0
    rows = _lines(capsys)
    assert [(r["frame"], r["protocol"], r["path"]) for r in rows] == [
        (1, "ipv4", "eth/ipv4"), (1, "udp", "eth/ipv4/udp"), (1, "ipv4", "eth/ipv4/udp/vxlan/eth/ipv4"),
        (1, "tcp", "eth/ipv4/udp/vxlan/eth/ipv4/tcp"), (2, "tcp", "eth/ipv6/tcp"), (3, "ipv4", "eth/ipv4"),
        (3, "udp", "eth/ipv4/udp")]
    inner_tcp = len(vx) - 20 + 16
    assert rows[3]["offset"] == inner_tcp and rows[3]["stored"] == f"0x{int.from_bytes(vx[inner_tcp:inner_tcp + 2], 'big'):04x}"
    assert all(r["status"] == "ok" and r["stored"] == r["computed"] for r in rows[:6])
    assert (rows[6]["status"], rows[6]["stored"], rows[6]["reason"]) == ("none", "0x0000", "udp-no-checksum")
    assert rows[0]["offset"] == 24 and rows[1]["offset"] == 40
    assert list(rows[0]) == ["frame", "time", "src", "dst", "protocol", "path", "depth", "offset", "stored",
                             "computed", "status", "reason"]
    # the IP header above each field (the addresses scapy was given), the tunnel's inner one at depth 1
    assert [(r["src"], r["dst"], r["depth"]) for r in rows] == [
        (A4, B4, 0), (A4, B4, 0), (C4, D4, 1), (C4, D4, 1), ("2001:db8::1", "2001:db8::2", 0), (A4, B4, 0),
        (A4, B4, 0)]
    # tests/captures.py's record times: 1700000000 + i seconds, 1000 * i + 7 microseconds
    assert [r["time"] for r in rows[3:6]] == [1700000000.000007, 1700000001.001007, 1700000002.002007]


def test_offload_is_apart_from_bad_and_strict_counts_it(tmp_path, capsys):
    """A TCP field holding the pseudo-header sum: status offload in jsonl, counted under "offload" (not bad) in
    --json, exit 0; --strict makes it exit 1; fix writes the full checksum (scapy's) and exits 1: OUT is not IN."""
    data = raw(Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02", type=0x0800)) + offload_tcp()
    path = tmp_path / "tx.pcap"
    path.write_bytes(pcap_bytes([data]))
    assert main(["verify", str(path), "--format", "jsonl"]) == 0
    (ip, tcp) = _lines(capsys)
    seg = data[34:]
    assert (tcp["status"], tcp["reason"]) == ("offload", "offload")
    assert tcp["stored"] == f"0x{rfc1071_checksum(pseudo4(A4, B4, 6, len(seg))) ^ 0xFFFF:04x}"
    assert main(["verify", str(path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["counts"]["tcp"]["offload"] == 1 and doc["bad_count"] == 0 and doc["offload_count"] == 1
    assert main(["verify", str(path), "--strict"]) == 1
    assert "transmit offload" in capsys.readouterr().out
    out = tmp_path / "fixed.pcap"
    assert main(["fix", str(path), str(out)]) == 1
    assert "1 transmit-offload field filled in" in capsys.readouterr().out
    fixed = out.read_bytes()[24 + 16:]
    want = raw(IP(src=A4, dst=B4) / TCP(sport=1, dport=2) / b"offloaded")
    assert fixed[14:] == want


def test_jsonl_exit_code_on_bad(tmp_path, capsys):
    """A wrong checksum: its row says bad with scapy's value as computed, and verify exits 1 as with the table."""
    good = raw(ETH / IP(src=A4, dst=B4) / TCP())
    bad = bytearray(good)
    bad[50:52] = b"\x12\x34"
    path = tmp_path / "b.pcap"
    path.write_bytes(pcap_bytes([bytes(bad)]))
    assert main(["verify", str(path), "--format", "jsonl"]) == 1
    rows = _lines(capsys)
    assert (rows[1]["status"], rows[1]["stored"], rows[1]["computed"]) == (
        "bad", "0x1234", f"0x{int.from_bytes(good[50:52], 'big'):04x}")


def test_format_json_is_the_json_summary(tmp_path, capsys):
    """--format json prints exactly what --json prints (scapy-built packets, all good: exit 0)."""
    path = tmp_path / "g.pcap"
    path.write_bytes(pcap_bytes([raw(ETH / IP(src=A4, dst=B4) / UDP() / b"x")]))
    assert main(["verify", str(path), "--json"]) == 0
    first = capsys.readouterr().out
    assert main(["verify", str(path), "--format", "json"]) == 0
    assert capsys.readouterr().out == first and json.loads(first)["counts"]["udp"]["ok"] == 1


def test_jsonl_lines_are_what_json_writes(tmp_path, capsys):
    """Every line is exactly what json.dumps writes for its object (key order, spacing, null for a field with no
    offset or computed value), over frames that give every status: ok, bad, offload, none and n/a (a first
    fragment's needs-reassembly, a cut packet's not-captured)."""
    good = raw(ETH / IP(src=A4, dst=B4) / TCP() / b"ok")
    bad = bytearray(raw(ETH / IP(src=A4, dst=B4) / UDP() / b"bad"))
    bad[-1] ^= 1
    lone_head = raw(ETH / fragment(IP(src=A4, dst=B4, id=3) / UDP() / bytes(64), fragsize=32)[0])
    offload = raw(Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02", type=0x0800)) + offload_tcp()
    frames = [good, bytes(bad), offload, raw(ETH / IP(src=A4, dst=B4) / UDP(chksum=0)), lone_head, good]
    path = tmp_path / "all.pcap"
    path.write_bytes(pcap_bytes(frames, origlens=[len(f) for f in frames[:-1]] + [len(good) + 10]))
    main(["verify", str(path), "--format", "jsonl"])
    lines = capsys.readouterr().out.splitlines()
    # time: the record's seconds with nine decimals (tshark's frame.time_epoch), not json.dumps's float digits
    times = [re.search(r'"time": ([0-9]+\.[0-9]{9}), ', line).group(1) for line in lines]
    assert times[0] == "1700000000.000007000" and times[-1] == "1700000005.005007000"
    assert [json.dumps(json.loads(line) | {"time": 0}).replace('"time": 0,', f'"time": {t},')
            for line, t in zip(lines, times)] == lines
    assert {json.loads(line)["status"] for line in lines} == {"ok", "bad", "offload", "none", "n/a"}
    assert any(json.loads(line)["computed"] is None for line in lines)
