"""csum/capture/dask.py: an archive of captures on a dask.distributed LocalCluster gives the serial merged report.

Reference: csum.scan.scan on each file here, merged (itself checked against the
whole-file check in tests/capture/test_scan.py); packets built by scapy.
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import subprocess
import sys

import pytest
from captures import pcap_bytes
from scapy.all import IP, UDP, Ether, Raw

distributed = pytest.importorskip("dask.distributed")

#: Fixed MAC addresses: scapy would otherwise look the destination up (ARP, routes), slowly.
ETH = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")

import csum.capture.dask
from csum.capture.scan import merged, scan


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    root = tmp_path_factory.mktemp("archive")
    files = []
    for k in range(4):
        pkts = [bytearray(bytes(ETH / IP(dst=f"192.0.2.{k}") / UDP(sport=i) / Raw(bytes(i % 9))))
                for i in range(50 + k)]
        for i in range(k, len(pkts), 9):
            pkts[i][-1] ^= 1  # wrong UDP checksum from here on
        data = pcap_bytes([bytes(p) for p in pkts])
        path = root / (f"day{k}.pcap.gz" if k % 2 else f"day{k}.pcap")
        path.write_bytes(gzip.compress(data) if k % 2 else data)
        files.append(str(path))
    return files


def test_local_cluster_equals_the_serial_run(archive):
    """verify_files on a 2-process LocalCluster: per-file scans and the total equal scanning here; a file:// URL
    (fsspec) reads like the path."""
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    with cluster, distributed.Client(cluster) as client:
        got = csum.dask.verify_files([*archive, "file://" + archive[0]], client)
    serial = [scan(name) for name in [*archive, "file://" + archive[0]]]
    assert [dataclasses.asdict(s.report) for s in got.files] == [dataclasses.asdict(s.report) for s in serial]
    assert dataclasses.asdict(got.total) == dataclasses.asdict(merged(serial).report)
    assert got.total.packets == 50 + 51 + 52 + 53 + 50 and got.total.bad


def test_cli_dask_local(archive):
    """`csum verify --dask local FILES...`: the same totals as without --dask, exit 1 (bad checksums)."""
    args = [sys.executable, "-m", "csum", "verify", *archive, "--json"]
    plain = subprocess.run(args, capture_output=True, text=True, timeout=180)
    dask = subprocess.run([*args, "--dask", "local", "--jobs", "2"], capture_output=True, text=True, timeout=180)
    assert plain.returncode == dask.returncode == 1, dask.stderr
    assert json.loads(dask.stdout) == json.loads(plain.stdout)
