"""Issue 34 item 7: `csum verify DIR`, `csum fix DIR OUTDIR`, `csum rewrite DIR OUTDIR`, and `verify DIR --format
parquet --out OUTDIR` (a Hive-partitioned dataset read by DuckDB, pyarrow/pandas and Dask).

Expected values: the packets are scapy's; which frames have a wrong checksum is this test's doing (a byte flipped);
per file, tshark 4 (`-o udp.check_checksum:TRUE -o tcp.check_checksum:TRUE`, libwiretap reading pcap, pcapng and
gzip) gives the packet counts, the bad checksums, each frame's timestamp (frame.time_epoch) and, on a file merged
with mergecap, the reassembly that two files would undergo together. The single-file `verify --format parquet`
rows are a consistency check of the partitions, beside tshark's counts. Unreadable inputs are made unreadable for
real (mode 000; as root, run without CAP_DAC_OVERRIDE/CAP_DAC_READ_SEARCH through setpriv).
"""

from __future__ import annotations

import datetime
import gzip
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from captures import epb, idb, pcap_bytes, shb
from scapy.all import IP, TCP, UDP, Ether, Raw, fragment, raw

from csum.cli import main

ETH = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
needs_tshark = pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark is not installed")
#: One day and a bit before and after a UTC midnight (2023-11-15T00:00:00Z), in nanoseconds.
MIDNIGHT_NS = 1_700_006_400 * 10**9


def _frames(n: int, host: int, bad: set[int]) -> list[bytes]:
    """n frames from 192.0.2.<host>, UDP and TCP by turns, with the L4 checksum of the frames numbered in ``bad``
    (from 1) wrong by one flipped bit."""
    out = []
    for i in range(n):
        l4 = UDP(sport=1000 + i, dport=53) if i % 2 else TCP(sport=1000 + i, dport=80)
        frame = bytearray(raw(ETH / IP(src=f"192.0.2.{host}", dst="198.51.100.1") / l4 / Raw(bytes(i % 13))))
        if i + 1 in bad:
            frame[14 + 20 + (6 if i % 2 else 16)] ^= 0x01
        out.append(bytes(frame))
    return out


def _pcapng(frames: list[bytes], start_ns: int) -> bytes:
    """A pcapng file (nanosecond timestamps) whose frames are 1000 s apart from ``start_ns``."""
    return shb() + idb(1) + b"".join(epb(f, ts=start_ns + k * 1000 * 10**9) for k, f in enumerate(frames))


@pytest.fixture
def archive(tmp_path):
    """A directory of three captures (pcap, gzip-compressed pcap without a suffix, pcapng across a midnight) and two
    files that are not captures."""
    root = tmp_path / "archive"
    (root / "a" / "b").mkdir(parents=True)
    (root / "c").mkdir()
    (root / "a" / "day1.pcap").write_bytes(pcap_bytes(_frames(20, 1, {3, 12})))
    (root / "a" / "b" / "day2").write_bytes(gzip.compress(pcap_bytes(_frames(15, 2, {5}))))
    (root / "c" / "day3.pcapng").write_bytes(_pcapng(_frames(10, 3, set()), MIDNIGHT_NS - 4500 * 10**9))
    (root / "README.txt").write_text("captures of the week\n")
    (root / "c" / "notes.gz").write_bytes(gzip.compress(b"not a capture\n"))
    return root


CAPTURES = ["a/b/day2", "a/day1.pcap", "c/day3.pcapng"]


def run(*args, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "csum", *map(str, args)], capture_output=True, text=True,
                          timeout=300, **kw)


def unprivileged() -> list[str]:
    """The command prefix under which a mode-000 file cannot be read: none for a user, setpriv dropping the
    capabilities that let root read anything for root."""
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: cannot make a file unreadable")
    return ["setpriv", "--bounding-set=-dac_override,-dac_read_search"]


def tshark(path: Path, *fields: str) -> list[list[str]]:
    out = subprocess.run(["tshark", "-o", "udp.check_checksum:TRUE", "-o", "tcp.check_checksum:TRUE", "-r", str(path),
                          "-T", "fields", "-E", "separator=;", *(x for f in fields for x in ("-e", f))],
                         capture_output=True, text=True, timeout=120, check=True).stdout
    return [line.split(";") for line in out.splitlines()]


def tshark_counts(path: Path) -> tuple[int, int]:
    """(packets, bad TCP/UDP checksums) by tshark (checksum status 0 is Bad)."""
    rows = tshark(path, "frame.number", "udp.checksum.status", "tcp.checksum.status")
    return len(rows), sum(r[1] == "0" or r[2] == "0" for r in rows)


def _digest(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


# --- verify DIR ------------------------------------------------------------------------------------------

@needs_tshark
def test_verify_dir_reports_each_capture_as_tshark_counts(archive, capsys):
    """verify DIR --json: the captures in sorted order (the two other files skipped and counted), each with tshark's
    packet count and bad checksums; exit 1 (bad checksums)."""
    assert main(["verify", str(archive), "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert [f["file"] for f in doc["files"]] == [str(archive / rel) for rel in CAPTURES]
    for f, rel in zip(doc["files"], CAPTURES):
        assert (f["packets"], f["bad_count"]) == tshark_counts(archive / rel), rel
    assert doc["total"]["bad_count"] == 3 and doc["total"]["packets"] == 45
    assert doc["directories"] == {"directories": 1, "skipped_files": 2, "symlinks_not_followed": 0}
    assert main(["verify", str(archive)]) == 1
    last = capsys.readouterr().out.splitlines()[-1]
    assert last == "total: 3 files, 45 packets, 3 bad checksums, 0 malformed, 0 cut; 2 files skipped (not captures)"


def test_a_directory_without_captures_is_one_error(tmp_path):
    """A directory of text files: exit 2 and one line saying nothing was found (never an empty "all good")."""
    (tmp_path / "a.pcap").write_text("text\n")
    proc = run("verify", tmp_path)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == (f"csum: verify failed for {tmp_path}: {tmp_path}: no capture found (no pcap or pcapng "
                           "magic, compressed or not; 1 file skipped (not captures))\n")


def test_an_unreadable_capture_is_named_and_the_others_judged(archive):
    """A mode-000 capture in the tree: named on stderr (issue 33's "cannot read" line), exit 2, the other two
    reported in full with their bad checksums."""
    prefix = unprivileged()
    (archive / "a" / "day1.pcap").chmod(0)
    proc = subprocess.run([*prefix, sys.executable, "-m", "csum", "verify", str(archive)], capture_output=True,
                          text=True, timeout=300)
    name = archive / "a" / "day1.pcap"
    assert proc.returncode == 2
    assert proc.stderr == f"csum: verify failed for {name}: cannot read {name}: Permission denied\n"
    assert f"{archive / 'a/b/day2'}: pcap, 15 packets" in proc.stdout
    assert f"{archive / 'c/day3.pcapng'}: pcapng, 10 packets" in proc.stdout
    assert "total: 3 files, 25 packets, 1 bad checksums" in proc.stdout and "1 file not read" in proc.stdout


def test_an_unreadable_directory_is_one_line(archive):
    """A mode-000 subdirectory: one line naming it, exit 2, nothing read."""
    prefix = unprivileged()
    (archive / "c").chmod(0)
    try:
        proc = subprocess.run([*prefix, sys.executable, "-m", "csum", "verify", str(archive)], capture_output=True,
                              text=True, timeout=300)
    finally:
        (archive / "c").chmod(0o755)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == (f"csum: verify failed for {archive}: cannot list the directory {archive / 'c'}: "
                           "Permission denied\n")


def test_symlinked_directories_are_followed_only_when_asked(archive, tmp_path):
    """A link to a directory of captures outside the tree: not followed by default (the summary says so), followed
    with --follow-symlinks; a link back to the tree, followed, is a loop: one line, exit 2."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "far.pcap").write_bytes(pcap_bytes(_frames(4, 9, {1})))
    (archive / "far").symlink_to(outside, target_is_directory=True)
    plain = run("verify", archive)
    assert plain.returncode == 1
    assert plain.stdout.splitlines()[-1].endswith("2 files skipped (not captures), 1 symbolic link not followed "
                                                   "(--follow-symlinks follows them)")
    followed = run("verify", archive, "--follow-symlinks", "--json")
    assert [f["file"] for f in json.loads(followed.stdout)["files"]][-1] == str(archive / "far" / "far.pcap")
    (archive / "c" / "loop").symlink_to(archive, target_is_directory=True)
    loop = run("verify", archive, "--follow-symlinks")
    assert loop.returncode == 2 and loop.stdout == ""
    assert loop.stderr == (f"csum: verify failed for {archive}: {archive / 'c' / 'loop'} is a loop of symbolic links: "
                           "it leads back to a directory that contains it\n")


@needs_tshark
def test_reassembly_stays_within_each_file(tmp_path):
    """A UDP datagram in two fragments with a wrong checksum, the first fragment ending a.pcap and the second
    starting b.pcap: tshark on the mergecap'd file reassembles it and finds the bad checksum; tshark on each file
    finds no UDP verdict, and neither does verify DIR (0 bad); verify of the merged file finds the 1 bad."""
    if shutil.which("mergecap") is None:
        pytest.skip("mergecap is not installed")
    datagram = IP(src="192.0.2.1", dst="192.0.2.2", id=7) / UDP(sport=5, dport=6) / Raw(bytes(range(200)) * 3)
    first, second = (raw(ETH / f) for f in fragment(datagram, fragsize=400))
    first = first[:40] + bytes([first[40] ^ 0x55]) + first[41:]  # the UDP checksum's first byte
    other = raw(ETH / IP(src="192.0.2.9", dst="192.0.2.2") / UDP() / Raw(b"ok"))
    root = tmp_path / "d"
    root.mkdir()
    (root / "a.pcap").write_bytes(pcap_bytes([other, first]))
    (root / "b.pcap").write_bytes(pcap_bytes([second, other]))
    merged = tmp_path / "merged.pcap"
    subprocess.run(["mergecap", "-a", "-w", str(merged), str(root / "a.pcap"), str(root / "b.pcap")], check=True,
                   capture_output=True, timeout=60)
    assert tshark_counts(merged) == (4, 1)
    assert tshark_counts(root / "a.pcap") == (2, 0) and tshark_counts(root / "b.pcap") == (2, 0)
    proc = run("verify", root, "--json")
    doc = json.loads(proc.stdout)
    assert proc.returncode == 0 and doc["total"]["bad_count"] == 0
    assert [f["counts"]["udp"]["ok"] for f in doc["files"]] == [1, 1]
    assert run("verify", merged).returncode == 1


# --- the dataset ------------------------------------------------------------------------------------------

def _dataset(archive: Path, out: Path, *more: str) -> None:
    assert main(["verify", str(archive), "--format", "parquet", "--out", str(out), *more]) == 1


@needs_tshark
def test_the_dataset_reads_in_duckdb_pyarrow_pandas_and_dask(archive, tmp_path):
    """verify DIR --format parquet --out OUTDIR: one partition per capture, file=<its path, %-encoded>; DuckDB
    (hive_partitioning), pyarrow.dataset, pandas.read_parquet and dask.dataframe.read_parquet each read the directory
    as it is, with the file column decoded, and each gives tshark's bad checksums and packets per file."""
    duckdb = pytest.importorskip("duckdb")
    ds = pytest.importorskip("pyarrow.dataset")
    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe")
    out = tmp_path / "rows"
    _dataset(archive, out)
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*.parquet")) == [
        "file=a%2Fb%2Fday2/part-0.parquet", "file=a%2Fday1.pcap/part-0.parquet", "file=c%2Fday3.pcapng/part-0.parquet"]
    expected = {rel: tshark_counts(archive / rel) for rel in CAPTURES}
    got = duckdb.sql(f"select file, count(distinct frame), sum((status = 'bad')::int) from "
                     f"read_parquet('{out}/**/*.parquet', hive_partitioning = true) group by file").fetchall()
    assert {f: (n, bad) for f, n, bad in got} == expected
    table = ds.dataset(out, partitioning="hive").to_table().to_pandas()
    frames = [table, pd.read_parquet(out), dd.read_parquet(str(out)).compute()]
    for frame in frames:
        frame["file"] = frame["file"].astype(str)
        per = frame.groupby("file").agg(n=("frame", "nunique"), bad=("status", lambda s: int((s == "bad").sum())))
        assert {f: (int(r.n), int(r.bad)) for f, r in per.iterrows()} == expected


def test_each_partition_holds_the_single_file_rows(archive, tmp_path):
    """Consistency: each partition's rows are, value for value, the rows `verify FILE --format parquet --out` writes
    for that capture alone (but its file column, which the partition's directory name gives in the dataset)."""
    pq = pytest.importorskip("pyarrow.parquet")
    out = tmp_path / "rows"
    _dataset(archive, out)
    for rel in CAPTURES:
        alone = tmp_path / "alone.parquet"
        assert main(["verify", str(archive / rel), "--format", "parquet", "--out", str(alone)]) in (0, 1)
        part = out / f"file={rel.replace('/', '%2F')}" / "part-0.parquet"
        assert "file" not in pq.read_table(part).column_names
        assert pq.read_table(part).to_pylist() == pq.read_table(alone).drop_columns(["file"]).to_pylist(), rel


@needs_tshark
def test_partition_by_date_follows_each_packets_utc_date(archive, tmp_path):
    """--partition date: date=YYYY-MM-DD/file=PATH/part-0.parquet; the frames under each date are those tshark
    stamps with that UTC date (day3.pcapng crosses a midnight)."""
    duckdb = pytest.importorskip("duckdb")
    out = tmp_path / "rows"
    _dataset(archive, out, "--partition", "date")
    expected: dict[tuple[str, str], set[int]] = {}
    for rel in CAPTURES:
        for number, epoch in tshark(archive / rel, "frame.number", "frame.time_epoch"):
            day = datetime.datetime.fromtimestamp(float(epoch), datetime.timezone.utc).date().isoformat()
            expected.setdefault((day, rel), set()).add(int(number))
    assert len({day for day, rel in expected if rel == "c/day3.pcapng"}) == 2
    got = duckdb.sql(f"select date::varchar, file, list(distinct frame) from read_parquet('{out}/**/*.parquet', "
                     "hive_partitioning = true) group by all").fetchall()
    assert {(day, f): set(frames) for day, f, frames in got} == expected


def test_the_dataset_directory_gets_new_files_only(archive, tmp_path):
    """A second run into the same OUTDIR: exit 2, one line naming the part that exists, nothing changed; --force
    replaces the parts; --partition or --force without a dataset: a usage error."""
    out = tmp_path / "rows"
    _dataset(archive, out)
    before = _digest(out)
    again = run("verify", archive, "--format", "parquet", "--out", out)
    assert again.returncode == 2 and again.stderr == (
        f"csum: verify failed for {archive}: --out: {out}/file=a%2Fb%2Fday2/part-0.parquet exists; csum writes only "
        "new files into an output directory (--force replaces them)\n")
    assert _digest(out) == before
    _dataset(archive, out, "--force")
    assert set(_digest(out)) == set(before)
    lone = run("verify", archive / "a" / "day1.pcap", "--partition", "date")
    assert lone.returncode == 2 and "--partition: only with a directory's dataset" in lone.stderr


def test_a_part_that_cannot_be_written_is_a_write_error(archive, tmp_path):
    """The parts' writes fail (RLIMIT_FSIZE of 1000 bytes: EFBIG): one line saying the part cannot be written (not
    that the capture cannot be read), exit 2, and no part file, named or temporary, left."""
    import resource

    pytest.importorskip("pyarrow")
    out = tmp_path / "rows"

    def small_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (1000, 1000))

    proc = subprocess.run([sys.executable, "-m", "csum", "verify", str(archive), "--format", "parquet", "--out",
                           str(out)], capture_output=True, text=True, timeout=300, preexec_fn=small_files)
    part = out / "file=a%2Fb%2Fday2" / "part-0.parquet"
    assert proc.returncode == 2
    assert proc.stderr == f"csum: verify failed for {archive / 'a/b/day2'}: cannot write {part}: File too large\n"
    assert [p for p in out.rglob("*") if p.is_file()] == []


# --- fix and rewrite --------------------------------------------------------------------------------------

@needs_tshark
def test_fix_dir_mirrors_the_tree_with_every_checksum_right(archive, tmp_path):
    """fix DIR OUTDIR: each capture's copy at the same relative path, compressed as its input (the gzip one named
    without a suffix too), tshark finds no bad checksum in any and the same packet count; the inputs are unchanged;
    exit 1 (fields changed); a second run is refused (exit 2, nothing rewritten), --force replaces."""
    inputs = _digest(archive)
    out = tmp_path / "fixed"
    proc = run("fix", archive, out)
    assert proc.returncode == 1, proc.stderr
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()) == sorted(CAPTURES)
    for rel in CAPTURES:
        assert tshark_counts(out / rel) == (tshark_counts(archive / rel)[0], 0), rel
    assert _digest(archive) == inputs
    assert gzip.decompress((out / "a/b/day2").read_bytes())[:4] == b"\xd4\xc3\xb2\xa1"  # gzip as its input
    assert (out / "a/day1.pcap").read_bytes()[:4] == b"\xd4\xc3\xb2\xa1"
    assert proc.stdout.splitlines()[-1] == (f"total: 3 captures, 3 written into {out}, 2 with checksums changed, "
                                            "0 not written; 2 files skipped (not captures)")
    written = _digest(out)
    again = run("fix", archive, out)
    assert again.returncode == 2 and again.stderr == (
        f"csum: fix failed for {archive}: OUTDIR: {out}/a/b/day2 exists; csum writes only new files into an output "
        "directory (--force replaces them)\n")
    assert _digest(out) == written
    assert run("fix", archive, out, "--force", "-q").returncode == 1 and _digest(out) == written


def test_fix_dir_names_an_unreadable_capture_and_writes_the_others(archive, tmp_path):
    """A mode-000 capture: named on stderr, not written, exit 2; the other two written."""
    prefix = unprivileged()
    (archive / "a" / "day1.pcap").chmod(0)
    out = tmp_path / "fixed"
    proc = subprocess.run([*prefix, sys.executable, "-m", "csum", "fix", str(archive), str(out)], capture_output=True,
                          text=True, timeout=300)
    name = archive / "a" / "day1.pcap"
    assert proc.returncode == 2
    assert proc.stderr == (f"csum: fix failed for {name}: cannot read {name}: Permission denied; "
                           f"{out / 'a/day1.pcap'} not written\n")
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()) == ["a/b/day2",
                                                                                          "c/day3.pcapng"]


def test_outdir_inside_dir_is_refused(archive):
    """OUTDIR inside DIR (its outputs would be read as inputs next time): one line, exit 2, nothing written."""
    proc = run("fix", archive, archive / "out")
    assert proc.returncode == 2 and not (archive / "out").exists()
    assert "are one inside the other" in proc.stderr


@needs_tshark
def test_rewrite_dir_maps_every_capture(archive, tmp_path):
    """rewrite DIR OUTDIR --map-ip: every copy at its relative path (compressed as its input), every source address
    mapped (tshark's ip.src),
    the packet counts kept; exit 0."""
    out = tmp_path / "moved"
    proc = run("rewrite", archive, out, "--map-ip", "192.0.2.0/24=203.0.113.0/24")
    assert proc.returncode == 0, proc.stderr
    for rel, host in zip(CAPTURES, (2, 1, 3)):
        sources = [r[0] for r in tshark(out / rel, "ip.src")]
        assert sources == [f"203.0.113.{host}"] * tshark_counts(archive / rel)[0], rel
    assert gzip.decompress((out / "a/b/day2").read_bytes())[:4] == b"\xd4\xc3\xb2\xa1"  # gzip as its input
    assert run("rewrite", archive, out, "--map-ip", "192.0.2.0/24=203.0.113.0/24").returncode == 2


def test_rewrite_dir_names_an_unreadable_capture_and_writes_the_others(archive, tmp_path):
    """rewrite DIR OUTDIR with a mode-000 capture: named on stderr, not written, exit 2; the other two written."""
    prefix = unprivileged()
    (archive / "c" / "day3.pcapng").chmod(0)
    out = tmp_path / "moved"
    proc = subprocess.run([*prefix, sys.executable, "-m", "csum", "rewrite", str(archive), str(out), "--ttl", "-1"],
                          capture_output=True, text=True, timeout=300)
    name = archive / "c" / "day3.pcapng"
    assert proc.returncode == 2
    assert proc.stderr == (f"csum: rewrite failed for {name}: cannot read {name} or write {out / 'c/day3.pcapng'}: "
                           "Permission denied; " f"{out / 'c/day3.pcapng'} not written\n")
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()) == ["a/b/day2",
                                                                                          "a/day1.pcap"]


# --- csum.dask --------------------------------------------------------------------------------------------

def test_dask_over_the_directory_gives_the_same_report(archive):
    """csum.dask.verify_files([DIR]) on a LocalCluster: the captures in verify DIR's order, each report equal to
    csum.scan of that file; to_dataframe([DIR]) has one partition per capture."""
    import dataclasses

    distributed = pytest.importorskip("dask.distributed")
    import csum.dask
    from csum.capture.scan import scan

    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None)
    with cluster, distributed.Client(cluster) as client:
        got = csum.dask.verify_files([archive], client)
        frame = csum.dask.to_dataframe([archive])
        assert frame.npartitions == 3
        assert sorted(frame["file"].unique().compute()) == [str(archive / rel) for rel in CAPTURES]
    assert [s.name for s in got.files] == [str(archive / rel) for rel in CAPTURES]
    assert [dataclasses.asdict(s.report) for s in got.files] == \
        [dataclasses.asdict(scan(archive / rel).report) for rel in CAPTURES]
    assert got.total.total("bad") == 3


# --- --jobs across files ------------------------------------------------------------------------------------

def test_jobs_across_files_gives_the_serial_report(archive, capsys, monkeypatch):
    """verify DIR --jobs 2: the small captures go one per process (csum.capture.parallel.each_item, seen called with
    all three), and the --json report equals --jobs 1's, an unreadable (missing) file's line included."""
    from csum.capture import parallel

    calls = []
    real = parallel.each_item
    monkeypatch.setattr(parallel, "each_item", lambda items, fn, jobs: calls.append((list(items), jobs))
                        or real(items, fn, jobs))
    missing = str(archive / "missing.pcap")
    assert main(["verify", str(archive), missing, "--json", "--jobs", "1"]) == 2
    serial = json.loads(capsys.readouterr().out)
    assert calls == []
    assert main(["verify", str(archive), missing, "--json", "--jobs", "2"]) == 2
    assert json.loads(capsys.readouterr().out) == serial
    assert calls == [([str(archive / rel) for rel in CAPTURES], 2)]
    assert serial["files"][-1]["error"] == f"cannot read {missing}: No such file or directory"


def test_verify_dask_local_dir_equals_verify_dir(archive, capsys):
    """`csum verify DIR --dask local --json` (the directory listed here, the files checked on a LocalCluster): the
    document verify DIR --json prints, the directories' counts included; both exit 1."""
    pytest.importorskip("dask.distributed")
    assert main(["verify", str(archive), "--json"]) == 1
    plain = json.loads(capsys.readouterr().out)
    assert main(["verify", str(archive), "--json", "--dask", "local", "--jobs", "2"]) == 1
    assert json.loads(capsys.readouterr().out) == plain


def test_fix_dir_jobs_across_files_writes_what_jobs_1_writes(archive, tmp_path, capsys, monkeypatch):
    """fix DIR OUTDIR --jobs 2: the three small captures are fixed one per process (each_item seen called with all
    three), and the outputs are byte for byte those of --jobs 1, the --json report too but for OUTDIR's name."""
    from csum.capture import parallel

    calls = []
    real = parallel.each_item
    monkeypatch.setattr(parallel, "each_item", lambda items, fn, jobs: calls.append(([i[0] for i in items], jobs))
                        or real(items, fn, jobs))
    one, two = tmp_path / "one", tmp_path / "two"
    assert main(["fix", str(archive), str(one), "--jobs", "1", "--json"]) == 1
    serial = capsys.readouterr().out
    assert calls == [([], 1)]
    assert main(["fix", str(archive), str(two), "--jobs", "2", "--json"]) == 1
    assert capsys.readouterr().out.replace(str(two), str(one)) == serial
    assert calls[1] == ([str(archive / rel) for rel in CAPTURES], 2)
    assert _digest(one) == _digest(two) and len(_digest(one)) == 3
