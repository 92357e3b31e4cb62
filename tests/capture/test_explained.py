"""``csum verify --explain`` (csum/explain/capture.py): the causes in the lists, the JSON, the summary per cause and
flow, the --by host and --html verdicts; the verdicts and exit code as without it.

The capture is built with scapy and the mistakes made by tests/mistaken.py (the tests' own naive RFC 1071
arithmetic): a NAT whose TCP/UDP checksum was not updated, with the packet before it in the capture (-i any), a
checksum stored byte-swapped, and a payload byte changed after the checksum (nothing to name). The expected causes
are those injected.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from mistaken import case, right_packet
from scapy.layers.l2 import Ether
from scapy.utils import wrpcap

from csum.cli import main


@pytest.fixture
def capture(tmp_path):
    rng = random.Random(32)
    nat = case("l4-not-patched-capture", rng)
    swapped = case("byte-order", rng)
    flipped = bytearray(right_packet(rng))
    flipped[-1] ^= 0x40
    frames = [right_packet(rng), *nat.others, swapped.frame, bytes(flipped), right_packet(rng)]
    path = tmp_path / "mixed.pcap"
    wrpcap(str(path), [Ether(f) for f in frames])
    return path, {3: "l4-not-patched", 4: "byte-order", 5: "unexplained"}


@pytest.mark.parametrize("split", [[], ["--chunk-bytes", "300"], ["--chunk-bytes", "300", "--jobs", "2"]])
def test_json_rows_name_the_injected_causes(capture, capsys, split):
    """Each bad row of --json gets the cause injected at its frame (frames from 1) and a detail; the summary counts
    them per cause. The same with the capture read in chunks of a packet or two (the wrong packets copied from each
    as it is checked, in this process or by two workers)."""
    path, expected = capture
    assert main(["verify", str(path), "--explain", "--json", *split]) == 1
    doc = json.loads(capsys.readouterr().out)
    got = {row["frame"]: row["cause"] for row in doc["bad"]}
    assert got == expected
    assert all(row["detail"] for row in doc["bad"])
    assert doc["explain"]["causes"] == {"l4-not-patched": 1, "byte-order": 1, "unexplained": 1}
    nat = next(row for row in doc["bad"] if row["frame"] == 3)
    assert "frame 2" in nat["detail"]  # paired with the packet before the NAT


def test_verdict_and_exit_code_unchanged(capture, capsys):
    """--explain changes no count, no status and no exit code (expected: the same run without it)."""
    path, _ = capture
    code = main(["verify", str(path), "--json"])
    plain = json.loads(capsys.readouterr().out)
    assert main(["verify", str(path), "--json", "--explain"]) == code == 1
    explained = json.loads(capsys.readouterr().out)
    assert explained["counts"] == plain["counts"]
    assert [{k: v for k, v in row.items() if k not in ("cause", "detail")} for row in explained["bad"]] == plain["bad"]


def test_text_groups_by_cause_and_flow(capture, capsys):
    """The text report: a cause column in the bad list, the count per cause, one line per flow and cause."""
    path, _ = capture
    main(["verify", str(path), "--explain"])
    out = capsys.readouterr().out
    assert "reason          cause" in out
    assert "why (--explain" in out
    assert "by flow and cause" in out
    assert ": 1 tcp checksum, l4-not-patched: a stale pseudo-header for" in out or \
        ": 1 udp checksum, l4-not-patched: a stale pseudo-header for" in out


def test_by_host_and_html_name_the_cause(capture, tmp_path, capsys):
    """--by host and --html: the verdict of a host whose bad fields are explained is the cause, not "corruption or
    a bug"; the host of the changed payload keeps "corruption or a bug"."""
    path, _ = capture
    page = tmp_path / "report.html"
    main(["verify", str(path), "--explain", "--by", "host", "--json", "--html", str(page)])
    doc = json.loads(capsys.readouterr().out)
    verdicts = sorted(h["verdict"] for h in doc["by_host"]["hosts"])
    assert verdicts == ["byte-order", "corruption or a bug", "l4-not-patched"]
    html = page.read_text()
    assert ">l4-not-patched on <span" in html and ">byte-order on <span" in html


def test_explain_reads_standard_input_once(capture, tmp_path):
    """The wrong packets are copied as the capture is checked: ``-`` works, with the same causes and summary as the
    file (expected: the file's run); the rows formats and --annotate, which read the input twice, refuse it with a
    usage error (exit 2) naming the option."""
    path, _ = capture
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}

    def run(*args: str) -> subprocess.CompletedProcess:
        with open(path, "rb") as stdin:
            return subprocess.run([sys.executable, "-m", "csum", "verify", *args], stdin=stdin, capture_output=True,
                                  env=env, timeout=120)

    piped, read = run("-", "--explain", "--json"), run(str(path), "--explain", "--json")
    assert piped.returncode == read.returncode == 1
    doc, want = json.loads(piped.stdout), json.loads(read.stdout)
    assert doc["file"] == "stdin"
    assert doc["bad"] == want["bad"] and doc["explain"] == want["explain"]
    rows = run("-", "--explain", "--format", "jsonl")
    assert rows.returncode == 2 and b"--explain" in rows.stderr and b"twice" in rows.stderr
    notes = run("-", "--explain", "--annotate", str(tmp_path / "out.pcapng"))
    assert notes.returncode == 2 and b"--annotate" in notes.stderr


def test_rows_carry_cause_and_detail(capture, tmp_path, capsys):
    """--format jsonl|csv|parquet --explain: two more columns, the injected cause on each wrong row, null (empty)
    on the right ones; the other columns as without --explain."""
    path, expected = capture
    assert main(["verify", str(path), "--format", "jsonl"]) == 1
    plain = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert main(["verify", str(path), "--format", "jsonl", "--explain"]) == 1
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [{k: v for k, v in r.items() if k not in ("cause", "detail")} for r in rows] == plain
    assert {r["frame"]: r["cause"] for r in rows if r["status"] == "bad"} == expected
    assert all(r["cause"] is None and r["detail"] is None for r in rows if r["status"] == "ok")
    assert main(["verify", str(path), "--format", "csv", "--explain"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].endswith(",reason,cause,detail")
    assert sum(",l4-not-patched," in line for line in lines) == 1
    pq = pytest.importorskip("pyarrow.parquet")
    out = tmp_path / "rows.parquet"
    assert main(["verify", str(path), "--format", "parquet", "--out", str(out), "--explain"]) == 1
    table = pq.read_table(out)
    got = {f: c for f, c, s in zip(table.column("frame").to_pylist(), table.column("cause").to_pylist(),
                                    table.column("status").to_pylist()) if s == "bad"}
    assert got == expected


def test_annotate_comments_read_back_by_tshark(capture, tmp_path, capsys):
    """--annotate OUT.pcapng: tshark (Wireshark's reader, independent of csum) finds a "csum" comment on exactly the
    packets with a wrong checksum, each naming the injected cause, and the packets' bytes as in the input."""
    import shutil
    import subprocess

    if shutil.which("tshark") is None:
        pytest.skip("tshark is not installed")
    path, expected = capture
    out = tmp_path / "annotated.pcapng"
    assert main(["verify", str(path), "--explain", "--annotate", str(out)]) == 1
    capsys.readouterr()
    run = subprocess.run(["tshark", "-r", str(out), "-Y", 'frame.comment contains "csum"', "-T", "fields",
                          "-e", "frame.number", "-e", "frame.comment"], capture_output=True, text=True, check=True)
    found = dict(line.split("\t", 1) for line in run.stdout.splitlines())
    assert sorted(map(int, found)) == sorted(expected)
    for frame, cause in expected.items():
        assert f"cause {cause}:" in found[str(frame)]
    raw = subprocess.run(["tshark", "-r", str(out), "-T", "fields", "-e", "frame.len"], capture_output=True,
                         text=True, check=True).stdout.split()
    plain = subprocess.run(["tshark", "-r", str(path), "-T", "fields", "-e", "frame.len"], capture_output=True,
                           text=True, check=True).stdout.split()
    assert raw == plain


def test_annotate_needs_explain_and_one_file(capture, tmp_path, capsys):
    """--annotate without --explain, or with two inputs: a usage error (exit 2) naming --annotate."""
    path, _ = capture
    out = tmp_path / "a.pcapng"
    assert main(["verify", str(path), "--annotate", str(out)]) == 2
    assert main(["verify", str(path), str(path), "--explain", "--annotate", str(out)]) == 2
    assert capsys.readouterr().err.count("--annotate") == 2
    assert not out.exists()


def test_fix_explain_names_the_cause_of_each_corrected_field(capture, tmp_path, capsys):
    """csum fix --explain: each corrected field's row carries the injected cause, the summary counts them; OUT and
    the exit code are those of csum fix without it (expected: the injected causes, and the plain run's bytes)."""
    path, expected = capture
    plain, explained = tmp_path / "plain.pcap", tmp_path / "explained.pcap"
    assert main(["fix", str(path), str(plain), "--json"]) == 1
    capsys.readouterr()
    assert main(["fix", str(path), str(explained), "--json", "--explain"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert {row["frame"]: row["cause"] for row in doc["bad"]} == expected
    assert doc["explain"]["causes"] == {"l4-not-patched": 1, "byte-order": 1, "unexplained": 1}
    assert doc["fixed_checksums"] == 3
    assert explained.read_bytes() == plain.read_bytes()
    assert main(["fix", str(path), str(explained), "--explain"]) == 1
    out = capsys.readouterr().out
    assert "why (--explain" in out and "byte-order" in out


def test_rewrite_fix_explain_names_the_input_causes(capture, tmp_path, capsys):
    """csum rewrite --ttl -1 --fix --explain: the fields --fix corrected get the causes injected in IN (the rewrite
    keeps each wrong field's residual, and the packets explained are IN's); OUT is that of --fix without --explain;
    --explain without --fix is a usage error (exit 2). Expected: tests/mistaken.py's injected causes."""
    path, _ = capture
    plain, explained = tmp_path / "plain.pcap", tmp_path / "explained.pcap"
    assert main(["rewrite", str(path), str(plain), "--ttl", "-1", "--fix", "-q"]) == 0
    assert main(["rewrite", str(path), str(explained), "--ttl", "-1", "--fix", "--explain", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["explain"]["causes"] == {"l4-not-patched": 1, "byte-order": 1, "unexplained": 1}
    assert explained.read_bytes() == plain.read_bytes()
    assert main(["rewrite", str(path), str(explained), "--ttl", "-1", "--fix", "--explain"]) == 0
    assert "byte-order" in capsys.readouterr().out
    assert main(["rewrite", str(path), str(explained), "--ttl", "-1", "--explain"]) == 2
    assert "--explain" in capsys.readouterr().err


def test_rewrite_explain_a_field_the_rewrite_made_wrong():
    """csum rewrite --fix --explain, a field right in IN and wrong in the rewritten packet (a rewrite that lowered the
    TTL without the header update): explained on the rewritten packet with IN's packet as the one before the change.
    Expected: ttl-not-updated, the mistake this test made by hand (scapy's packet, its TTL byte lowered)."""
    from csum import inet
    from csum.capture.report import Report
    from csum.explain.capture import Collector, explain_capture

    read = right_packet(random.Random(5))
    after = bytearray(read)
    after[14 + 8] -= 1  # the TTL, the IPv4 header checksum left as it was
    wrong = [r for r in inet.verify(bytes(after), link="ethernet") if r.status.value == "bad"]
    assert [r.layer for r in wrong] == ["ipv4"]
    collected = Collector()
    collected.packets[0] = (read, 1, len(read))
    collected.after[0] = bytes(after)
    report = Report(1, bad=[(0, wrong[0])])
    e = explain_capture(collected, report).fields[(0, wrong[0].field)]
    assert e.cause == "ttl-not-updated"
    assert e.detail.startswith("right as read, wrong after the rewrite: ")


@pytest.mark.parametrize("split", [[], ["--chunk-bytes", "300"]])
def test_a_mapped_file_is_explained_as_a_read_one(capture, capsys, monkeypatch, tmp_path, split):
    """A regular file checked in one process (--jobs 1) is mapped with --explain too (its packets copied from the
    map as each chunk is checked); expected: the same JSON (every row's cause and detail, the summary) as the same capture read from a
    stream, gzip-compressed (the reading path, csum.capture.source)."""
    import gzip

    from csum.capture import pcap

    path, _ = capture
    packed = tmp_path / "mixed.pcap.gz"
    packed.write_bytes(gzip.compress(path.read_bytes()))
    assert main(["verify", str(packed), "--explain", "--json", "--jobs", "1", *split]) == 1
    read = json.loads(capsys.readouterr().out)

    def refuse(_self):
        raise AssertionError("a regular file was read, not mapped")

    monkeypatch.setattr(pcap.Reader, "__iter__", refuse)
    assert main(["verify", str(path), "--explain", "--json", "--jobs", "1", *split]) == 1
    mapped = json.loads(capsys.readouterr().out)
    for doc in (read, mapped):
        doc.pop("file", None)
        doc.pop("compression", None)
    assert mapped["explain"] == read["explain"] and mapped["bad"] == read["bad"]
