"""Issue 11 end to end: `csum verify` / `csum fix` as real processes on captures of any kind, safely.

Independent sources: scapy builds every packet and computes every checksum
(``bytes(pkt)`` after deleting the fields); the expected bad checksums are the
fields these tests overwrite, with scapy's value as the correct one. Compressed
inputs are made with Python's gzip/bz2/lzma modules and the zstandard package,
pcapng files with scapy's PcapNgWriter or the writers of tests/captures.py.
"""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import os
import signal
import socket
import stat
import struct
import subprocess
import sys

import pytest
from captures import epb, idb, pcap_bytes, shb
from processes import default_signals, drained
from scapy.all import ARP, IP, TCP, UDP, Ether, IPv6, PcapNgWriter, Raw, rdpcap, wrpcap

ETH = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")


def _packets(n: int = 40) -> list[bytes]:
    """n scapy packets (IPv4/IPv6, TCP/UDP), checksums filled in by scapy."""
    out = []
    for i in range(n):
        l3 = IP(src="192.0.2.1", dst=f"198.51.100.{i % 250}") if i % 3 else IPv6(src="2001:db8::1", dst="2001:db8::2")
        l4 = TCP(sport=1000 + i, dport=80) if i % 2 else UDP(sport=1000 + i, dport=53)
        out.append(bytes(ETH / l3 / l4 / Raw(bytes(range(i % 37)))))
    return out


def _corrupt(pkts: list[bytes], every: int = 7) -> tuple[list[bytes], list[int]]:
    """Flip the last byte of every ``every``-th packet (its TCP/UDP checksum then fails); the packet numbers."""
    out, bad = [], []
    for i, p in enumerate(pkts):
        if i % every == 3 and len(p) > 60:
            p = p[:-1] + bytes([p[-1] ^ 0x10])
            bad.append(i)
        out.append(p)
    return out, bad


def _scapy_bad(path) -> list[int]:
    """Packet numbers whose TCP/UDP checksum scapy recomputes differently (the independent reference)."""
    found = []
    for i, pkt in enumerate(rdpcap(str(path))):
        layer = TCP if TCP in pkt else UDP
        fresh = pkt.copy()
        del fresh[layer].chksum
        if Ether(bytes(fresh))[layer].chksum != pkt[layer].chksum:
            found.append(i)
    return found


def run(*args: str, stdin=None, input: bytes | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "csum", *args], stdin=stdin, input=input, capture_output=True,
                          timeout=120)


def _json(proc: subprocess.CompletedProcess) -> dict:
    return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def bad_capture(tmp_path_factory):
    pkts, bad = _corrupt(_packets())
    path = tmp_path_factory.mktemp("cap") / "bad.pcap"
    path.write_bytes(pcap_bytes(pkts))
    assert _scapy_bad(path) == bad
    return path, bad


# --- input: compressed, stdin, truncated ------------------------------------------------------------

def _zstd(data: bytes) -> bytes:
    zstandard = pytest.importorskip("zstandard")
    return zstandard.ZstdCompressor().compress(data)


@pytest.mark.parametrize("compress", [gzip.compress, bz2.compress, lzma.compress, _zstd],
                         ids=["gzip", "bzip2", "xz", "zstd"])
def test_compressed_input_by_magic(compress, bad_capture, tmp_path):
    """gzip/bzip2/xz/zstd captures (named .pcap: detection is by magic bytes) give the uncompressed report."""
    path, bad = bad_capture
    packed = tmp_path / "packed.pcap"
    packed.write_bytes(compress(path.read_bytes()))
    plain, squeezed = run("verify", str(path), "--json"), run("verify", str(packed), "--json")
    assert plain.returncode == squeezed.returncode == 1
    doc = _json(squeezed)
    assert [row["frame"] - 1 for row in doc["bad"]] == bad[:10] and doc["bad_count"] == len(bad)
    names = {gzip.compress: "gzip", bz2.compress: "bzip2", lzma.compress: "xz"}
    assert doc["compression"] == names.get(compress, "zstd")
    assert {k: v for k, v in doc.items() if k not in ("file", "compression")} == \
           {k: v for k, v in _json(plain).items() if k not in ("file", "compression")}


def test_concatenated_gzip_members_and_stdin(bad_capture):
    """`csum verify -` reads standard input; two gzip members concatenated read as one stream (as zcat does)."""
    path, bad = bad_capture
    data = path.read_bytes()
    cut = 1000
    proc = run("verify", "-", "--json", input=gzip.compress(data[:cut]) + gzip.compress(data[cut:]))
    assert proc.returncode == 1, proc.stderr
    doc = _json(proc)
    assert doc["file"] == "stdin" and doc["bad_count"] == len(bad) and doc["packets"] == 40


def test_truncated_last_record_is_reported_and_the_rest_checked(bad_capture, tmp_path):
    """A capture cut inside its last record: every complete record is checked, the cut one is reported (stdout
    and one stderr line, naming where it starts and the last frame read whole); fix copies the cut tail
    unchanged. A gzip stream cut short is not that: the compressed data ends early, exit 2."""
    path, bad = bad_capture
    data = path.read_bytes()
    cut = tmp_path / "cut.pcap"
    cut.write_bytes(data[:-5])
    last = len(data) - 16 - len(_packets()[-1])  # where record 40 starts
    proc = run("verify", str(cut), "--json")
    doc = _json(proc)
    assert proc.returncode == 1 and doc["packets"] == 39 and doc["bad_count"] == len([b for b in bad if b < 39])
    assert doc["stopped"]["after_frame"] == 39 and doc["stopped"]["truncated"] and doc["stopped"]["offset"] == last
    assert proc.stderr.decode().count("\n") == 1
    assert f"the file ends inside the record at offset {last} (after frame 39)".encode() in proc.stderr
    text = run("verify", str(cut))
    assert f"truncated: the file ends inside the record at offset {last} (after frame 39)".encode() in text.stdout
    gz = tmp_path / "cut.pcap.gz"
    gz.write_bytes(gzip.compress(data)[:-30])
    proc = run("verify", str(gz), "--json")
    doc = _json(proc)
    assert proc.returncode == 2 and not doc["stopped"]["truncated"] and doc["packets"] >= 30
    assert doc["stopped"]["reason"].startswith("compressed stream ends early")
    out = tmp_path / "fixed.pcap"
    assert run("fix", str(cut), str(out)).returncode == 1
    fixed = out.read_bytes()
    assert len(fixed) == len(data) - 5 and fixed[-20:] == data[-25:-5]
    assert run("verify", str(out)).returncode == 0


def test_header_is_validated_before_anything_else(tmp_path):
    """`verify /dev/zero`-like input: rejected from its first bytes (a FIFO fed zeros never closes here)."""
    fifo = tmp_path / "zeros"
    os.mkfifo(fifo)
    proc = subprocess.Popen([sys.executable, "-m", "csum", "verify", str(fifo)], stderr=subprocess.PIPE)
    with open(fifo, "wb") as w:
        try:
            for _ in range(1000):
                w.write(b"\0" * 65536)
        except BrokenPipeError:
            pass
    assert proc.wait(timeout=60) == 2
    assert proc.stderr.read().decode() == f"csum: verify failed for {fifo}: not a pcap or pcapng capture " \
                                          "(starts with 00000000)\n"


def test_pcapng_sections_interfaces_and_small_chunks(tmp_path):
    """pcapng with two sections (other byte order) and two interfaces, read 256 bytes at a time and serially:
    the same report, matching scapy's packets."""
    pkts, _ = _corrupt(_packets(12), every=5)
    data = shb("<") + idb(1) + idb(101) + b"".join(epb(p) for p in pkts[:6]) + epb(pkts[6][14:], 1)
    data += shb(">") + idb(1, ">") + b"".join(epb(p, 0, ">") for p in pkts[7:])
    path = tmp_path / "two.pcapng"
    path.write_bytes(data)
    whole = _json(run("verify", str(path), "--json", "--jobs", "1"))
    small = _json(run("verify", str(path), "--json", "--jobs", "2", "--chunk-bytes", "256"))
    assert whole == small and whole["packets"] == 12 and whole["bad"][0]["frame"] == 4


# --- exit codes ------------------------------------------------------------------------------------

def test_exit_codes(tmp_path, bad_capture):
    """The exit-code table of docs/verify.md: 0 good (no IP at all is fine, nor a link type csum does not know: listed, a warning), 1 a
    bad checksum (never hidden by a malformed packet), 2 not a capture, or unsupported link types with --strict;
    fix writes nothing on 2."""
    good = tmp_path / "good.pcap"
    wrpcap(str(good), [ETH / IP(dst="192.0.2.9") / UDP() / Raw(b"a" * n) for n in range(4)])
    assert run("verify", str(good)).returncode == 0
    arp = tmp_path / "arp.pcap"
    wrpcap(str(arp), [ETH / ARP(pdst="192.0.2.9") for _ in range(3)])
    assert run("verify", str(arp)).returncode == 0
    path, _ = bad_capture
    bogus = bytearray(_packets(1)[0])
    bogus[14] = 0x43  # IHL 3
    mixed = tmp_path / "mixed.pcap"
    mixed.write_bytes(pcap_bytes([bytes(bogus), *_corrupt(_packets())[0]]))
    proc = run("verify", str(mixed))
    assert proc.returncode == 1 and b"malformed packets: 1" in proc.stdout
    user0 = tmp_path / "user0.pcap"
    user0.write_bytes(pcap_bytes(_packets(3), linktype=147))
    proc = run("verify", str(user0))
    assert proc.returncode == 0 and b"warning for" in proc.stderr and b"3 on link type 147" in proc.stderr
    assert proc.stderr.count(b"\n") == 1 and b"link type 147 not supported: 3 packets" in proc.stdout
    proc = run("verify", str(user0), "--strict")
    assert proc.returncode == 2 and b"failed for" in proc.stderr and b"3 on link type 147" in proc.stderr
    assert run("verify", str(user0), "--skip-unsupported").returncode == 0
    out = tmp_path / "out.pcap"
    proc = run("fix", str(user0), str(out), "--strict")
    assert proc.returncode == 2 and not out.exists() and b"not written" in proc.stderr and b"wrote" not in proc.stdout
    proc = run("fix", str(user0), str(out))
    assert proc.returncode == 0 and out.read_bytes() == user0.read_bytes()
    out.unlink()
    proc = run("fix", str(mixed), str(out))
    assert proc.returncode == 1 and b"wrote" in proc.stdout and b"failed" not in proc.stderr + proc.stdout
    junk = tmp_path / "junk.pcap"
    junk.write_bytes(b"GET / HTTP/1.1\r\n\r\n")
    assert run("verify", str(junk)).returncode == 2


def test_a_capture_with_nothing_to_check(tmp_path):
    """A Netlink capture (LINKTYPE_NETLINK 253: nlmon's) holds no Internet checksum: exit 0, even with --strict,
    and the report says so (text and JSON)."""
    path = tmp_path / "netlink.pcap"
    path.write_bytes(pcap_bytes([bytes(range(20)), bytes(36)], linktype=253))
    proc = run("verify", str(path), "--strict")
    assert proc.returncode == 0 and proc.stderr == b""
    assert b"link type 253 carries no Internet checksum: 2 packets, nothing to check" in proc.stdout
    doc = _json(run("verify", str(path), "--json"))
    assert doc["no_checksum_linktypes"] == {"253": 2} and doc["unsupported_linktypes"] == {}


def test_fix_embedded(tmp_path):
    """An sFlow sample of a packet with a wrong TCP checksum (scapy's, one bit flipped; tests/encapsulations.py):
    verify says bad (exit 1); fix reports it and leaves the capture's bytes as they were, fix --fix-embedded sets the
    sample's checksum and the sFlow datagram's UDP checksum to scapy's."""
    from encapsulations import sflow

    def datagram(sample: bytes) -> bytes:
        return bytes(Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") / IP(src="192.0.2.1", dst="192.0.2.2")
                     / UDP(sport=40000, dport=6343) / Raw(sflow([(1, sample, len(sample) + 4)])))

    good = bytes(Ether() / IP(src="10.0.0.1", dst="10.0.0.2") / TCP(sport=1, dport=2) / b"sampled")
    bad = bytearray(good)
    bad[14 + 20 + 16] ^= 0x01
    path, out = tmp_path / "sflow.pcap", tmp_path / "out.pcap"
    path.write_bytes(pcap_bytes([datagram(bytes(bad))]))
    assert run("verify", str(path)).returncode == 1
    assert run("fix", str(path), str(out)).returncode == 1 and out.read_bytes() == path.read_bytes()
    assert run("fix", str(path), str(out), "--fix-embedded").returncode == 1
    assert out.read_bytes() == pcap_bytes([datagram(good)])


# --- output that cannot hurt -----------------------------------------------------------------------

def test_fix_refuses_fifo_device_socket_directory(bad_capture, tmp_path):
    """OUT a FIFO, a character device (os.mknod inside tmp: /dev/null's numbers), a socket or a directory:
    refused with a one-line message naming what it is; each is left as it was; no temporary file remains."""
    path, _ = bad_capture
    fifo, dev, sock, folder = tmp_path / "fifo", tmp_path / "null", tmp_path / "sock", tmp_path / "dir"
    os.mkfifo(fifo)
    os.mknod(dev, stat.S_IFCHR | 0o600, os.makedev(1, 3))
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(sock))
    folder.mkdir()
    for out, what in ((fifo, b"a FIFO"), (dev, b"a character device"), (sock, b"a socket"), (folder, b"a directory")):
        proc = run("fix", str(path), str(out))
        assert proc.returncode == 2 and what in proc.stderr and proc.stderr.count(b"\n") == 1
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and stat.S_ISCHR(os.lstat(dev).st_mode)
    assert stat.S_ISSOCK(os.lstat(sock).st_mode) and os.listdir(folder) == []
    server.close()
    assert sorted(os.listdir(tmp_path)) == ["dir", "fifo", "null", "sock"]


def test_fix_symlinks_modes_and_gzip_output(bad_capture, tmp_path):
    """A symlink OUT is refused unless --follow-symlinks (then its target is replaced, the link stays); a link to
    IN is refused even then; an existing OUT keeps its mode; OUT.gz is gzip of the fixed capture."""
    path, bad = bad_capture
    victim = tmp_path / "victim.pcap"
    victim.write_bytes(b"precious")
    os.chmod(victim, 0o640)
    link = tmp_path / "link.pcap"
    link.symlink_to(victim)
    proc = run("fix", str(path), str(link))
    assert proc.returncode == 2 and b"symbolic link" in proc.stderr and victim.read_bytes() == b"precious"
    assert run("fix", str(path), str(link), "--follow-symlinks").returncode == 1
    assert link.is_symlink() and stat.S_IMODE(victim.stat().st_mode) == 0o640
    fixed = victim.read_bytes()
    assert len(fixed) == path.stat().st_size and _scapy_bad(victim) == []
    to_in = tmp_path / "to_in.pcap"
    to_in.symlink_to(path)
    proc = run("fix", str(path), str(to_in), "--follow-symlinks")
    assert proc.returncode == 2 and b"is the input" in proc.stderr
    gz = tmp_path / "fixed.pcap.gz"
    assert run("fix", str(path), str(gz)).returncode == 1
    assert gzip.decompress(gz.read_bytes()) == fixed
    assert run("verify", str(gz)).returncode == 0
    assert sorted(os.listdir(tmp_path)) == ["fixed.pcap.gz", "link.pcap", "to_in.pcap", "victim.pcap"]


def test_fix_damaged_input_leaves_out_untouched(tmp_path):
    """A pcapng block with inconsistent lengths mid-file: exit 2, OUT keeps its old contents, no temporary."""
    pkts = _packets(3)
    data = shb() + idb(1) + epb(pkts[0]) + epb(pkts[1])[:-4] + struct.pack("<I", 99) + epb(pkts[2])
    src, out = tmp_path / "in.pcapng", tmp_path / "out.pcapng"
    src.write_bytes(data)
    out.write_bytes(b"old")
    proc = run("fix", str(src), str(out))
    assert proc.returncode == 2 and out.read_bytes() == b"old"
    assert b"trailing length" in proc.stderr and proc.stderr.count(b"\n") == 1
    assert sorted(os.listdir(tmp_path)) == ["in.pcapng", "out.pcapng"]


# --- Ctrl-C ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("command", [["verify", "-"], ["verify", "-", "--jobs", "2", "--chunk-bytes", "4096"],
                                     ["fix", "-", "OUT"]])
def test_ctrl_c_is_one_line_and_130(command, bad_capture, tmp_path):
    """SIGINT while reading (input still open): exit 130, exactly `csum: interrupted`, no traceback (workers
    included), and fix leaves neither OUT nor a temporary file."""
    path, _ = bad_capture
    argv = [str(tmp_path / "out.pcap") if a == "OUT" else a for a in command]
    # SIGINT back to its default first (processes.default_signals: a background job inherits it ignored)
    proc = subprocess.Popen([sys.executable, "-m", "csum", *argv], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, preexec_fn=default_signals)
    data = path.read_bytes()
    proc.stdin.write(data[:24] + data[24:] * 20)  # one header, then records: a valid capture, unfinished
    proc.stdin.flush()
    drained(proc)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and err == b"csum: interrupted\n"
    assert os.listdir(tmp_path) == []


# --- parallel ----------------------------------------------------------------------------------------

def test_jobs_report_identical_to_serial(tmp_path):
    """--jobs 2 over 1 KiB chunks gives the same JSON as --jobs 1 (bad, malformed, cut, counts)."""
    pkts, bad = _corrupt(_packets(300))
    pkts[10] = pkts[10][:14] + b"\x43" + pkts[10][15:]
    origlens = [len(p) + (100 if i == 20 else 0) for i, p in enumerate(pkts)]
    path = tmp_path / "many.pcap"
    path.write_bytes(pcap_bytes(pkts, origlens=origlens))
    one = run("verify", str(path), "--json", "--jobs", "1", "--show", "1000")
    two = run("verify", str(path), "--json", "--jobs", "2", "--chunk-bytes", "1024", "--show", "1000")
    assert one.returncode == two.returncode == 1
    assert _json(one) == _json(two)
    assert [row["frame"] - 1 for row in _json(one)["bad"]] == [b for b in bad if b != 10]
    fixed1, fixed2 = tmp_path / "f1.pcap", tmp_path / "f2.pcap"
    run("fix", str(path), str(fixed1), "--jobs", "1")
    run("fix", str(path), str(fixed2), "--jobs", "2", "--chunk-bytes", "1024")
    assert fixed1.read_bytes() == fixed2.read_bytes()


def test_reports_keep_what_they_print_and_count_the_rest(tmp_path):
    """The CLI keeps only the --show items it prints (a capture of a sending host can hold millions of offload
    fields; memory must not grow with them): counts, exit code and the listed rows are those of --show 1000, for
    --jobs 1 and 2 over small chunks, and --show 0 still exits 1 with the whole count. Expected bad packets: the
    ones the test broke, confirmed by scapy's recomputation."""
    pkts, bad = _corrupt(_packets(300), every=4)
    path = tmp_path / "many.pcap"
    path.write_bytes(pcap_bytes(pkts))
    assert _scapy_bad(path) == bad and len(bad) > 50
    whole = _json(run("verify", str(path), "--json", "--show", "1000"))
    assert [row["frame"] - 1 for row in whole["bad"]] == bad and whole["bad_count"] == len(bad)
    for jobs in ("1", "2"):
        few = run("verify", str(path), "--json", "--show", "3", "--jobs", jobs, "--chunk-bytes", "2048")
        assert few.returncode == 1
        doc = _json(few)
        assert doc["bad_count"] == len(bad) and doc["bad"] == whole["bad"][:3] and doc["counts"] == whole["counts"]
    none = run("verify", str(path), "--json", "--show", "0")
    assert none.returncode == 1 and _json(none)["bad_count"] == len(bad) and _json(none)["bad"] == []
    text = run("verify", str(path), "--show", "2").stdout.decode()
    assert f"bad checksums: {len(bad)} (first 2)" in text


# --- the small things --------------------------------------------------------------------------------

def test_json_on_version_and_small_messages(bad_capture):
    """--version --json; `compare abc` names the odd digit count; --show 0 prints no empty table header."""
    ver = run("--version", "--json")
    assert ver.returncode == 0 and set(json.loads(ver.stdout)) >= {"version", "engine"}
    odd = run("compare", "abc")
    assert odd.returncode == 2 and b"odd number of digits" in odd.stderr
    path, bad = bad_capture
    shown = run("verify", str(path), "--show", "0")
    assert shown.returncode == 1 and b"frame  layer" not in shown.stdout
    assert f"bad checksums: {len(bad)}".encode() in shown.stdout


def test_kernel_check_writes_no_carriage_returns_into_logs():
    """stderr a pipe (a log): kernel-check draws no \\r progress line."""
    from csum import kernel

    if not kernel.available():
        pytest.skip(f"kernel helpers unavailable: {kernel.why_unavailable()}")
    proc = run("kernel-check", "--n", "20000")
    assert proc.returncode == 0 and b"\r" not in proc.stderr + proc.stdout


def test_multiple_files_and_totals(bad_capture, tmp_path):
    """verify FILE FILE: each file's report, then the total; --json gives files and total."""
    path, bad = bad_capture
    good = tmp_path / "good.pcapng"
    with PcapNgWriter(str(good)) as w:
        for p in _packets(5):
            w.write(Ether(p))
    proc = run("verify", str(path), str(good), "--json")
    doc = _json(proc)
    assert proc.returncode == 1 and [f["packets"] for f in doc["files"]] == [40, 5]
    assert doc["total"]["packets"] == 45 and doc["total"]["bad_count"] == len(bad)
