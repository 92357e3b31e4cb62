"""Issue 26 item 2: every failure path of `csum verify` / `csum fix` honest, as real processes.

Expected values: the packets are scapy's (checksums by scapy); a record's offset is where this test put it
(the pcap layout of draft-ietf-opsawg-pcap: a 24-byte file header, then 16 bytes before each frame); the
bytes of a compressed stream are cut or extended by the test; exit codes and messages are docs/verify.md's
table; POSIX gives the signal numbers (128 + n for a signal's exit code) and the file system's NAME_MAX
(pathconf). Frame numbers and field offsets are tshark's (`tshark -T pdml`: frame.number and each
checksum field's pos) where tshark is installed.
"""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import os
import resource
import shutil
import signal
import stat
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from captures import epb, idb, pcap_bytes, shb
from packets import A4, B4, ETH, offload_tcp
from processes import children, default_signals, drained, gone
from scapy.all import IP, TCP, UDP, Ether, Raw, raw

from csum.cli import main


def run(*args: str, input: bytes | None = None, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "csum", *map(str, args)], input=input, capture_output=True,
                          timeout=180, **kw)


def _frames(n: int) -> list[bytes]:
    """n IPv4 TCP/UDP frames built by scapy (checksums by scapy), 60 to 100 bytes."""
    return [raw(ETH / IP(src=A4, dst=B4) / (TCP(sport=1000 + i) if i % 2 else UDP(sport=1000 + i)) / Raw(bytes(i % 41)))
            for i in range(n)]


def _wrong(frame: bytes) -> bytes:
    """``frame`` with 0x1234 written over its TCP/UDP checksum field (fix puts scapy's value back)."""
    at = 14 + 20 + (16 if frame[23] == 6 else 6)
    return frame[:at] + b"\x12\x34" + frame[at + 2 :]


def _starts(frames: list[bytes]) -> list[int]:
    """File offset of each frame's 16-byte record header in ``pcap_bytes(frames)``."""
    out = [24]
    for f in frames[:-1]:
        out.append(out[-1] + 16 + len(f))
    return out


def _lines(err: bytes) -> list[str]:
    text = err.decode()
    assert "Traceback" not in text, text
    return text.splitlines()


@pytest.fixture(scope="module")
def frames():
    return _frames(300)


# --- a damaged record mid-file ---------------------------------------------------------------------

@pytest.mark.parametrize("jobs", ["1", "2"])
def test_damage_after_a_bad_checksum_is_exit_2_and_nothing_written(jobs, frames, tmp_path):
    """Frame 3's TCP checksum wrong, then record 201 announcing 0xffffffff captured bytes: exit 2 (it used to be 1,
    with OUT written), one stderr line naming the record's offset and the last frame read; fix leaves an existing
    OUT as it was; with --keep-going OUT is IN with frame 3 corrected up to that record and every byte after it
    copied, and the line says so."""
    broken = list(frames)
    broken[2] = _wrong(frames[2])
    data = bytearray(pcap_bytes(broken))
    at = _starts(broken)[200]
    data[at + 8 : at + 12] = b"\xff\xff\xff\xff"
    src, out = tmp_path / "in.pcap", tmp_path / "out.pcap"
    src.write_bytes(data)
    options = ["--jobs", jobs, "--chunk-bytes", "4096"]
    proc = run("verify", src, *options)
    (line,) = _lines(proc.stderr)
    assert proc.returncode == 2 and f"the record at offset {at} (after frame 200)" in line
    assert "4294967295 captured bytes announced" in line and b"bad checksums: 1" in proc.stdout
    out.write_bytes(b"old")
    proc = run("fix", src, out, *options)
    (line,) = _lines(proc.stderr)
    assert proc.returncode == 2 and f"offset {at}" in line and line.endswith(f"{out} not written")
    assert out.read_bytes() == b"old" and b"wrote" not in proc.stdout
    proc = run("fix", src, out, *options, "--keep-going")
    (line,) = _lines(proc.stderr)
    assert proc.returncode == 2 and f"--keep-going: wrote {out}" in line
    assert out.read_bytes() == pcap_bytes(frames)[:at] + bytes(data[at:])
    assert sorted(os.listdir(tmp_path)) == ["in.pcap", "out.pcap"]


def test_damaged_pcapng_block_after_a_bad_checksum(frames, tmp_path):
    """pcapng: a block whose trailing length contradicts its leading one, after a wrong checksum: exit 2, nothing
    written (before, exit 1 and OUT written)."""
    blocks = [shb(), idb(1), epb(_wrong(frames[0])), epb(frames[1])]
    damaged = bytearray(epb(frames[2]))
    damaged[-4:] = (999).to_bytes(4, "little")
    at = sum(map(len, blocks))
    src, out = tmp_path / "in.pcapng", tmp_path / "out.pcapng"
    src.write_bytes(b"".join(blocks) + bytes(damaged) + epb(frames[3]))
    proc = run("fix", src, out)
    (line,) = _lines(proc.stderr)
    assert proc.returncode == 2 and not out.exists() and f"the record at offset {at} (after frame 2)" in line


# --- compressed input ------------------------------------------------------------------------------

def _zstd(data: bytes) -> bytes:
    return pytest.importorskip("zstandard").ZstdCompressor().compress(data)


COMPRESS = {"gzip": gzip.compress, "bzip2": bz2.compress, "xz": lzma.compress, "zstd": _zstd}


@pytest.mark.parametrize("kind", list(COMPRESS))
def test_a_cut_compressed_stream_is_exit_2_for_every_format(kind, frames, tmp_path):
    """The compressed capture cut at half its length: "compressed stream ends early" on stderr, exit 2 (gzip and xz
    used to report a truncated last record, bzip2 and zstd "not a pcap: 0 bytes"), fix writes nothing; with
    --keep-going what was read is written, a prefix of the capture."""
    data = pcap_bytes(frames * 4)
    blob = COMPRESS[kind](data)
    src, out = tmp_path / "cut.pcap", tmp_path / "out.pcap"
    src.write_bytes(blob[: len(blob) // 2])
    proc = run("verify", src, "--chunk-bytes", "4096")
    (line,) = _lines(proc.stderr)
    assert proc.returncode == 2 and "compressed stream ends early" in line and f"{kind} data stops at byte" in line
    proc = run("fix", src, out, "--chunk-bytes", "4096")
    assert proc.returncode == 2 and not out.exists() and "compressed stream ends early" in _lines(proc.stderr)[0]
    proc = run("fix", src, out, "--chunk-bytes", "4096", "--keep-going")
    if out.exists():  # bzip2 and zstd may give no byte at all before the cut: nothing to write then
        assert proc.returncode == 2 and data.startswith(out.read_bytes()) and len(out.read_bytes()) > 24
    else:
        assert proc.returncode == 2 and "compressed stream ends early" in _lines(proc.stderr)[0]


@pytest.mark.parametrize("kind", list(COMPRESS))
def test_trailing_garbage_is_exit_2_for_every_format(kind, frames, tmp_path):
    """A whole compressed capture followed by 8 bytes of text: exit 2 for all four formats (bzip2 and xz used to
    accept it), naming the offset where the garbage starts; zero padding instead is accepted (exit 0)."""
    blob = COMPRESS[kind](pcap_bytes(frames))
    src = tmp_path / "in.pcap"
    src.write_bytes(blob + b"garbage!")
    proc = run("verify", src)
    (line,) = _lines(proc.stderr)
    assert proc.returncode == 2 and f"the bytes from offset {len(blob)} of the file on are not {kind} data" in line
    src.write_bytes(blob + bytes(12))
    assert run("verify", src).returncode == 0


# --- OUT ----------------------------------------------------------------------------------------------

def _unzstd(blob: bytes) -> bytes:
    return pytest.importorskip("zstandard").ZstdDecompressor().decompressobj().decompress(blob)


@pytest.mark.parametrize("suffix, unpack", [(".gz", gzip.decompress), (".bz2", bz2.decompress),
                                            (".xz", lzma.decompress), (".zst", _unzstd)])
def test_out_is_compressed_by_its_suffix(suffix, unpack, frames, tmp_path):
    """fix IN OUT.gz/.bz2/.xz/.zst: OUT decompressed by the format's own decompressor is the plain fix's output
    (.bz2, .xz and .zst used to be written uncompressed); verify reads it back clean."""
    src = tmp_path / "in.pcap"
    src.write_bytes(pcap_bytes([_wrong(frames[0]), *frames[1:]]))
    plain, packed = tmp_path / "plain.pcap", tmp_path / f"packed.pcap{suffix}"
    assert run("fix", src, plain).returncode == 1
    assert run("fix", src, packed).returncode == 1
    assert unpack(packed.read_bytes()) == plain.read_bytes() == pcap_bytes(frames)
    assert run("verify", packed).returncode == 0


def test_read_only_out_is_refused_unless_force(frames, tmp_path):
    """A 0444 OUT (which root could replace silently) is refused in one line naming --force, kept as it was;
    with --force it is replaced and keeps its mode."""
    src, out = tmp_path / "in.pcap", tmp_path / "out.pcap"
    src.write_bytes(pcap_bytes(frames))
    out.write_bytes(b"precious")
    os.chmod(out, 0o444)
    proc = run("fix", src, out)
    (line,) = _lines(proc.stderr)
    assert proc.returncode == 2 and "read-only" in line and "--force" in line and out.read_bytes() == b"precious"
    assert run("fix", src, out, "--force").returncode == 0
    assert out.read_bytes() == pcap_bytes(frames) and stat.S_IMODE(out.stat().st_mode) == 0o444


def test_out_names_of_242_to_255_bytes_are_written_and_256_refused(frames, tmp_path):
    """NAME_MAX is 255 here (pathconf): OUT names of 242..255 bytes are written (they used to be refused: the
    temporary name added 14 bytes); 256 bytes is one line and exit 2 (it was a traceback); no temporary left."""
    assert os.pathconf(tmp_path, "PC_NAME_MAX") == 255
    src = tmp_path / "in.pcap"
    src.write_bytes(pcap_bytes(frames))
    for n in (242, 249, 255):
        out = tmp_path / ("o" * (n - 5) + ".pcap")
        proc = run("fix", src, out)
        assert proc.returncode == 0, proc.stderr
        assert out.read_bytes() == src.read_bytes()
        out.unlink()
    proc = run("fix", src, tmp_path / ("o" * 251 + ".pcap"))
    (line,) = _lines(proc.stderr)
    assert proc.returncode == 2 and "256 bytes" in line and os.listdir(tmp_path) == ["in.pcap"]


# --- fix's exit code, summary and help -------------------------------------------------------------------

def test_fix_exit_code_says_whether_out_differs_from_in(tmp_path):
    """A capture whose only change is a transmit-offload field filled in: exit 1 (it was 0, though OUT differs from
    IN) and the summary counts "1 transmit-offload field filled in"; --json gives offload_filled; a capture with
    nothing to change: exit 0 and OUT equals IN byte for byte."""
    offload = raw(Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02", type=0x0800)) + offload_tcp()
    src, out = tmp_path / "in.pcap", tmp_path / "out.pcap"
    src.write_bytes(pcap_bytes([offload, *_frames(3)]))
    proc = run("fix", src, out)
    assert proc.returncode == 1
    assert b"0 checksums corrected and 1 transmit-offload field filled in, in 1 packet" in proc.stdout
    field = 24 + 16 + 14 + 20 + 16  # the first record's TCP checksum
    changed = [i for i, (a, b) in enumerate(zip(src.read_bytes(), out.read_bytes())) if a != b]
    assert changed and set(changed) <= {field, field + 1}
    assert out.read_bytes()[field : field + 2] == raw(IP(src=A4, dst=B4) / TCP(sport=1, dport=2) / b"offloaded")[36:38]
    doc = json.loads(run("fix", src, out, "--json").stdout)
    assert doc["offload_filled"] == 1 and doc["fixed_checksums"] == 1
    src.write_bytes(pcap_bytes(_frames(3)))
    assert run("fix", src, out).returncode == 0 and out.read_bytes() == src.read_bytes()


def test_fix_help_lists_the_exit_codes():
    """`csum fix --help` and `csum verify --help` end with the exit-code table (0, 1, 2, 130, 143, 129)."""
    for command in ("fix", "verify"):
        proc = run(command, "--help")
        text = proc.stdout.decode()
        assert proc.returncode == 0 and "exit codes:" in text
        table = text[text.index("exit codes:") :]
        for code in ("0", "1", "2", "130", "143", "129"):
            assert f"\n  {code} " in table, (command, code)
    assert "OUT is IN byte for byte" in run("fix", "--help").stdout.decode()


# --- several inputs ------------------------------------------------------------------------------------

def test_several_inputs_report_each_and_the_failed_ones_line(frames, tmp_path):
    """verify good bad junk missing: every readable file's report, the unreadable ones' one line each in their
    place (stdout) and on stderr, exit 2 overall; --json lists all four, errors with their code."""
    good, bad, junk = tmp_path / "good.pcap", tmp_path / "bad.pcap", tmp_path / "junk.pcap"
    good.write_bytes(pcap_bytes(frames[:5]))
    bad.write_bytes(pcap_bytes([_wrong(frames[0]), *frames[1:5]]))
    junk.write_bytes(b"GET / HTTP/1.1\r\n\r\n")
    missing = tmp_path / "missing.pcap"
    proc = run("verify", good, junk, bad, missing)
    assert proc.returncode == 2
    err = _lines(proc.stderr)
    assert err == [f"csum: verify failed for {junk}: not a pcap or pcapng capture (starts with 47455420)",
                   f"csum: verify failed for {missing}: cannot read {missing}: No such file or directory"]
    out = proc.stdout.decode()
    assert out.index(f"{good}: pcap") < out.index(f"{junk}: not checked: not a pcap") < out.index(f"{bad}: pcap")
    assert "bad checksums: 1" in out and f"{missing}: not checked" in out and "2 files not read" in out
    doc = json.loads(run("verify", good, junk, bad, missing, "--json").stdout)
    assert [f["file"] for f in doc["files"]] == [str(good), str(junk), str(bad), str(missing)]
    assert doc["files"][1] == {"file": str(junk), "error": "not a pcap or pcapng capture (starts with 47455420)",
                               "code": "not-a-capture"}
    assert doc["files"][3]["code"] == "usage" and doc["total"]["bad_count"] == 1 and doc["total"]["packets"] == 10


def test_one_unreadable_input_leaves_the_others_notices_warnings(frames, tmp_path):
    """verify cut.pcap missing.pcap: the missing file decides exit 2, so it alone is "failed"; cut.pcap's truncated
    last record stays a warning, as it is when read alone (every notice became "verify failed" before: 54 "failed"
    lines where 4 were real). The cut is this test's: 3 bytes off the last record."""
    cut, missing = tmp_path / "cut.pcap", tmp_path / "missing.pcap"
    cut.write_bytes(pcap_bytes(frames[:5])[:-3])
    alone = run("verify", cut)
    assert alone.returncode == 0 and _lines(alone.stderr)[0].startswith(f"csum: verify warning for {cut}: the file ends")
    proc = run("verify", cut, missing)
    err = _lines(proc.stderr)
    assert proc.returncode == 2 and len(err) == 2, err
    assert err[0].startswith(f"csum: verify warning for {cut}: the file ends inside")
    assert err[1] == f"csum: verify failed for {missing}: cannot read {missing}: No such file or directory"


# --- standard output ---------------------------------------------------------------------------------

@pytest.mark.parametrize("args", [["verify", "IN"], ["verify", "IN", "--json"], ["verify", "IN", "--format", "jsonl"],
                                  ["compare"], ["fix", "IN", "OUT"]])
def test_a_full_standard_output_is_one_line_and_exit_2(args, frames, tmp_path):
    """stdout on /dev/full (ENOSPC): one stderr line `csum: <command> failed for standard output: No space left on
    device`, exit 2 (it was a traceback and exit 1); fix's line adds that OUT was written."""
    src, out = tmp_path / "in.pcap", tmp_path / "out.pcap"
    src.write_bytes(pcap_bytes(frames * 40))
    argv = [str(src) if a == "IN" else str(out) if a == "OUT" else a for a in args]
    with open("/dev/full", "wb") as full:
        proc = subprocess.run([sys.executable, "-m", "csum", *argv], stdout=full, stderr=subprocess.PIPE, timeout=180)
    (line,) = _lines(proc.stderr)
    assert proc.returncode == 2
    assert line.startswith(f"csum: {args[0]} failed for standard output: No space left on device")
    if args[0] == "fix":
        assert line.endswith(f"({out} was written)") and out.exists()


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
@pytest.mark.parametrize("copies", [3, 200])
def test_a_reader_leaving_the_pipe_is_quiet_and_exit_2(fmt, copies, frames, tmp_path):
    """`csum verify FILE --format jsonl | head -1`: the reader closes the pipe; csum stops with nothing on stderr and
    exit 2 (the verdict was not delivered: 0 would pass `set -o pipefail` as "every checksum good"). With 3 copies
    the rows are one chunk, one write of ~400 kB (jsonl) or ~150 kB (csv), more than a pipe holds: CPython's
    BufferedWriter returned short from it without an error once the reader left, and csum exited 0 (issue 33)."""
    path = tmp_path / "long.pcap"
    path.write_bytes(pcap_bytes([_wrong(frames[0]), *frames] * copies))
    proc = subprocess.Popen([sys.executable, "-m", "csum", "verify", str(path), "--format", fmt],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    line = proc.stdout.readline()
    assert (json.loads(line)["frame"] if fmt == "jsonl" else line.split(b",")[0]) in (1, b"frame")
    proc.stdout.close()
    assert proc.wait(timeout=120) == 2 and proc.stderr.read() == b""


# --- signals, write errors, the parent's death ----------------------------------------------------------

def _waiting(proc: subprocess.Popen, data: bytes) -> None:
    """Feed ``data`` to ``proc``'s stdin (kept open) and wait until it has read it."""
    proc.stdin.write(data)
    proc.stdin.flush()
    drained(proc, 0.5)


def _fix_from_stdin(tmp_path: Path, jobs: str) -> subprocess.Popen:
    out = tmp_path / "out.pcap"
    return subprocess.Popen([sys.executable, "-m", "csum", "fix", "-", str(out), "--jobs", jobs, "--chunk-bytes",
                             "4096"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=default_signals)


@pytest.mark.parametrize("jobs", ["1", "3"])
@pytest.mark.parametrize("signum, code, message", [(signal.SIGINT, 130, "csum: interrupted"),
                                                   (signal.SIGTERM, 143, "csum: terminated (SIGTERM)"),
                                                   (signal.SIGHUP, 129, "csum: terminated (SIGHUP)")])
def test_signals_leave_no_temporary_and_no_worker(signum, code, message, jobs, frames, tmp_path):
    """fix from a pipe still open, with workers: SIGINT, SIGTERM or SIGHUP gives 128 + the signal, one line, no OUT,
    no temporary file and no process left (SIGTERM and SIGHUP used to leave a 144 MB temporary and a worker
    asleep on its pipes)."""
    proc = _fix_from_stdin(tmp_path, jobs)
    data = pcap_bytes(frames * 20)
    _waiting(proc, data)
    if jobs != "1":
        assert len(children(proc.pid)) == int(jobs) - 1
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == code and err.decode() == message + "\n"
    assert os.listdir(tmp_path) == [] and gone(str(tmp_path))


def test_killed_parent_takes_its_workers_and_leaves_no_temporary(frames, tmp_path):
    """SIGKILL to fix (no handler runs): its workers end with it (PR_SET_PDEATHSIG) and the file being written had
    no name to leave behind (O_TMPFILE)."""
    proc = _fix_from_stdin(tmp_path, "3")
    _waiting(proc, pcap_bytes(frames * 20))
    workers = children(proc.pid)
    assert len(workers) == 2
    proc.kill()
    proc.wait(timeout=60)
    assert gone(str(tmp_path)) and os.listdir(tmp_path) == []


def test_killed_parent_of_a_file_scan_takes_its_workers(frames, tmp_path):
    """verify FILE --jobs 3 (every process reads its own chunks): the parent stopped, then killed, once its workers
    exist; they end too."""
    path = tmp_path / "big.pcap"
    path.write_bytes(pcap_bytes(frames * 800))
    proc = subprocess.Popen([sys.executable, "-m", "csum", "verify", str(path), "--jobs", "3", "--chunk-bytes",
                             "4096"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not children(proc.pid) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.001)
    os.kill(proc.pid, signal.SIGSTOP)
    assert children(proc.pid), "the scan ended before its workers were seen"
    proc.kill()
    proc.wait(timeout=60)
    assert gone(str(tmp_path))


def test_a_write_error_leaves_no_temporary_and_no_worker(frames, tmp_path):
    """OUT's writes fail (RLIMIT_FSIZE: EFBIG, "File too large"): one line, exit 2, no OUT, no temporary, no
    worker."""
    src, out = tmp_path / "in.pcap", tmp_path / "out.pcap"
    src.write_bytes(pcap_bytes(frames * 40))
    limit = 50_000

    def small_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    proc = subprocess.run([sys.executable, "-m", "csum", "fix", str(src), str(out), "--jobs", "3", "--chunk-bytes",
                           "4096"], capture_output=True, timeout=180, preexec_fn=small_files)
    (line,) = _lines(proc.stderr)
    assert proc.returncode == 2 and f"cannot write {out}: File too large" in line
    assert os.listdir(tmp_path) == ["in.pcap"] and gone(str(tmp_path))


@pytest.mark.parametrize("fmt", ["parquet", "jsonl", "csv"])
def test_an_unreadable_only_input_of_rows_to_out_is_one_line(fmt, tmp_path):
    """verify JUNK --format parquet --out F, the one input not a capture: one line, exit 2, no F; pyarrow's writer
    used to finish the file at garbage collection, into the output already discarded, and print an "Exception
    ignored" traceback. (A directory was the input here until verify DIR read the captures in it; a directory of
    none is one line too, before any output is opened.)"""
    pytest.importorskip("pyarrow")
    out = tmp_path / "rows.out"
    junk = tmp_path / "junk"
    junk.write_bytes(b"GET / HTTP/1.1\r\n\r\n")
    proc = run("verify", junk, "--format", fmt, "--out", out)
    assert proc.returncode == 2 and _lines(proc.stderr) == [
        f"csum: verify failed for {junk}: not a pcap or pcapng capture (starts with 47455420)"]
    assert os.listdir(tmp_path) == ["junk"]
    empty = tmp_path / "empty"
    empty.mkdir()
    proc = run("verify", empty, "--format", fmt, "--out", out)
    assert proc.returncode == 2 and _lines(proc.stderr) == [
        f"csum: verify failed for {empty}: {empty}: no capture found (no pcap or pcapng magic, compressed or not; "
        "0 files skipped (not captures))"]
    assert sorted(os.listdir(tmp_path)) == ["empty", "junk"]


def _rewrite_from_stdin(tmp_path: Path, group: bool) -> subprocess.Popen:
    """``csum rewrite - OUT --jobs 3`` from a pipe kept open, in its own process group when ``group`` (a terminal's
    Ctrl-C, or ``kill -TERM -PGID``, reaches the workers too)."""
    def setup() -> None:
        default_signals()
        if group:
            os.setsid()

    return subprocess.Popen([sys.executable, "-m", "csum", "rewrite", "-", str(tmp_path / "out.pcap"), "--jobs", "3",
                             "--chunk-bytes", "4096", "--ttl", "-1"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, preexec_fn=setup)


@pytest.mark.parametrize("group", [False, True], ids=["parent", "group"])
@pytest.mark.parametrize("signum, code, message", [(signal.SIGINT, 130, "csum: interrupted"),
                                                   (signal.SIGTERM, 143, "csum: terminated (SIGTERM)"),
                                                   (signal.SIGHUP, 129, "csum: terminated (SIGHUP)")])
def test_rewrite_jobs_signals_are_one_line_and_leave_no_worker(signum, code, message, group, frames, tmp_path):
    """rewrite --jobs 3 from a pipe still open: SIGINT, SIGTERM or SIGHUP to csum, or to its whole process group,
    gives 128 + the signal, one line and no process left. With multiprocessing.Pool, SIGTERM printed a
    ForkPoolWorker traceback from each worker and a SIGTERM to the group deadlocked the parent (issue 33)."""
    proc = _rewrite_from_stdin(tmp_path, group)
    _waiting(proc, pcap_bytes(frames * 10))
    assert len(children(proc.pid)) == 2
    if group:
        os.killpg(proc.pid, signum)
    else:
        proc.send_signal(signum)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == code and err.decode() == message + "\n"
    assert os.listdir(tmp_path) == [] and gone(str(tmp_path))


def test_killed_rewrite_parent_takes_its_workers_quietly(frames, tmp_path):
    """SIGKILL to rewrite --jobs 3: its workers end with it and print nothing (they printed BrokenPipe tracebacks)."""
    proc = _rewrite_from_stdin(tmp_path, False)
    _waiting(proc, pcap_bytes(frames * 10))
    assert len(children(proc.pid)) == 2
    proc.kill()
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL and err == b"" and gone(str(tmp_path)) and os.listdir(tmp_path) == []


@pytest.mark.parametrize("command", [["verify", "IN"], ["fix", "IN", "OUT"], ["rewrite", "IN", "OUT", "--ttl", "-1"]])
def test_jobs_and_chunk_bytes_are_capped(command, frames, tmp_path):
    """--jobs 100000 forked more than 749 workers, --chunk-bytes 2**40 ended in "out of memory" and 10**22 in a
    traceback. Now each is exit 2 and a line saying the cap: 4 processes per usable core (the test counts the cores
    with os.sched_getaffinity), 1 GiB per chunk; nothing is written."""
    src = tmp_path / "in.pcap"
    src.write_bytes(pcap_bytes(frames[:3]))
    argv = [str(src) if a == "IN" else str(tmp_path / "out.pcap") if a == "OUT" else a for a in command]
    cores = len(os.sched_getaffinity(0))
    for extra, why in ((["--jobs", "100000"], f"must be an int in 1..{4 * cores} (4 per usable core, {cores} here"),
                       (["--jobs", str(4 * cores + 1)], f"got {4 * cores + 1}"),
                       (["--chunk-bytes", str(2**40)], "must be at most 1073741824 (1 GiB"),
                       (["--chunk-bytes", str(10**22)], "must be at most 1073741824 (1 GiB")):
        proc = run(*argv, *extra)
        assert proc.returncode == 2 and why in _lines(proc.stderr)[-1], proc.stderr
    assert os.listdir(tmp_path) == ["in.pcap"]
    assert run(*argv, "--jobs", str(4 * cores)).returncode in (0, 1)


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "parquet"])
def test_rows_out_that_cannot_be_written_says_so(fmt, frames, tmp_path):
    """verify IN IN2 --format jsonl --out F with F's writes failing (RLIMIT_FSIZE: EFBIG, "File too large", as a full
    disk's ENOSPC): one line saying F cannot be written (it said "cannot read IN"), exit 2, no F, and the second
    input is not read as if the first had failed alone."""
    if fmt == "parquet":
        pytest.importorskip("pyarrow")
    src, src2, out = tmp_path / "in.pcap", tmp_path / "in2.pcap", tmp_path / "rows.out"
    src.write_bytes(pcap_bytes(frames * 40))
    src2.write_bytes(pcap_bytes(frames))

    def small_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (50_000, 50_000))

    proc = subprocess.run([sys.executable, "-m", "csum", "verify", str(src), str(src2), "--format", fmt, "--out",
                           str(out)], capture_output=True, timeout=180, preexec_fn=small_files)
    assert proc.returncode == 2 and _lines(proc.stderr) == [
        f"csum: verify failed for {src}: cannot write {out}: File too large"]
    assert sorted(os.listdir(tmp_path)) == ["in.pcap", "in2.pcap"]


@pytest.mark.parametrize("command", [["fix", "IN", ""], ["rewrite", "IN", "", "--ttl", "-1"],
                                     ["verify", "IN", "--format", "jsonl", "--out", ""]])
def test_an_empty_out_name_is_named_as_such(command, frames, tmp_path):
    """`fix IN ''` said "OUT  is a directory" (Path("") is the current directory); now "OUT is empty"."""
    src = tmp_path / "in.pcap"
    src.write_bytes(pcap_bytes(frames[:3]))
    proc = run(*[str(src) if a == "IN" else a for a in command], cwd=tmp_path)
    what = "--out" if command[0] == "verify" else "OUT"
    assert proc.returncode == 2 and _lines(proc.stderr)[-1].endswith(f": {what} is empty: give a file name")
    assert os.listdir(tmp_path) == ["in.pcap"]


#: A meta-path finder that raises KeyboardInterrupt when the module named in the environment is first imported:
#: Ctrl-C arriving while Python imports it (Python raises KeyboardInterrupt wherever the main thread is).
_HOOK = """
import os, sys
class Hook:
    def find_spec(self, name, path=None, target=None):
        if name == os.environ["CSUM_TEST_INTERRUPT"]:
            sys.meta_path.remove(self)
            raise KeyboardInterrupt
sys.meta_path.insert(0, Hook())
"""


_SCRIPT = "import sys; from _csum_cli import main; sys.exit(main())"
_MODULE = "import runpy; runpy.run_module('csum', run_name='__main__')"


@pytest.mark.parametrize("entry, module, rows", [
    (_SCRIPT, "csum", False), (_SCRIPT, "csum.engine", False), (_SCRIPT, "csum.cli.parser", False),
    (_SCRIPT, "csum.capture.checker", False), (_SCRIPT, "numpy", True),
    (_MODULE, "csum.cli", False), (_MODULE, "csum.cli.parser", False), (_MODULE, "csum.capture.scan", False),
])
def test_ctrl_c_while_importing_is_130(entry, module, rows, frames, tmp_path):
    """Ctrl-C while the console script (what pip's `csum` wrapper runs) or `python -m csum` imports csum, its CLI
    or numpy: exit 130 and `csum: interrupted`, no traceback (it used to be a traceback during the first 0.3 s).
    numpy is imported for rows (`--format jsonl`), not for the summary of a small capture."""
    src = tmp_path / "in.pcap"
    src.write_bytes(pcap_bytes(frames[:3]))
    hooked = "\n".join([_HOOK, entry, ""])
    env = {**os.environ, "CSUM_TEST_INTERRUPT": module}
    proc = subprocess.run([sys.executable, "-c", hooked, "verify", str(src), *(["--format", "jsonl"] if rows else [])],
                          capture_output=True, timeout=120, env=env)
    assert (proc.returncode, proc.stderr) == (130, b"csum: interrupted\n")


# --- arguments and extras -----------------------------------------------------------------------------------

def test_dask_bogus_is_one_line(frames, tmp_path):
    """`--dask bogus` (no port): one line naming the address, exit 2 (it was a traceback)."""
    pytest.importorskip("dask.distributed")
    src = tmp_path / "in.pcap"
    src.write_bytes(pcap_bytes(frames[:3]))
    proc = run("verify", src, "--dask", "bogus")
    (line,) = _lines(proc.stderr)
    assert proc.returncode == 2 and line.startswith("csum: verify failed for ") and "--dask bogus" in line


def test_bench_without_its_extra_is_one_line(monkeypatch, capsys):
    """`csum bench` without dpkt (the [bench] extra; a None entry in sys.modules hides it): one line naming the
    extra, exit 2, and the benchmarks never start."""
    monkeypatch.setitem(sys.modules, "dpkt", None)

    def never(*args, **kw):
        raise AssertionError("the benchmarks were started")

    monkeypatch.setattr(subprocess, "run", never)
    assert main(["bench"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "dpkt" in err and "pip install 'linux-csum[bench]'" in err


# --- one numbering ----------------------------------------------------------------------------------------

def _tshark_fields(path: Path) -> list[tuple[int, str, int]]:
    """(frame.number, protocol, pos) of every IPv4/TCP/UDP checksum field tshark dissects."""
    pdml = subprocess.run(["tshark", "-r", str(path), "-T", "pdml"], capture_output=True, timeout=120, check=True)
    found = []
    for packet in ET.fromstring(pdml.stdout).iter("packet"):
        number = int(next(f for f in packet.iter("field") if f.get("name") == "frame.number").get("show"))
        for f in packet.iter("field"):
            name = f.get("name")
            if name in ("ip.checksum", "tcp.checksum", "udp.checksum"):
                found.append((number, {"ip.checksum": "ipv4"}.get(name, name.split(".")[0]), int(f.get("pos"))))
    return found


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark is not installed (apt-get install tshark)")
def test_text_json_and_jsonl_number_frames_and_offsets_as_tshark(tmp_path, capsys):
    """Wrong fields in frames 2 (IPv4 header) and 4 (TCP): the text table, --json and --format jsonl all give frame
    numbers from 1 and the field's offset in the frame, each pair equal to tshark's frame.number and field pos
    (text and --json used to give the 0-based packet and the header's offset)."""
    frames = _frames(5)
    frames[1] = frames[1][:24] + b"\xbe\xef" + frames[1][26:]
    frames[3] = _wrong(frames[3])
    path = tmp_path / "t.pcap"
    path.write_bytes(pcap_bytes(frames))
    fields = _tshark_fields(path)
    want = sorted(t for t in fields if (t[0], t[1]) in ((2, "ipv4"), (4, "tcp")))
    assert len(want) == 2
    assert main(["verify", str(path), "--format", "jsonl"]) == 1
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert sorted((r["frame"], r["protocol"], r["offset"]) for r in rows if r["status"] == "bad") == want
    assert sorted((r["frame"], r["protocol"], r["offset"]) for r in rows) == sorted(fields)
    assert main(["verify", str(path), "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert sorted((r["frame"], r["layer"], r["offset"]) for r in doc["bad"]) == want
    assert main(["verify", str(path)]) == 1
    text = capsys.readouterr().out
    table = text[text.index("bad checksums") :].splitlines()[2:4]
    assert sorted((int(row.split()[0]), row.split()[1], int(row.split()[2])) for row in table) == want
