"""Check an archive of captures on a Dask cluster and print one merged report.

    python examples/dask_archive.py                          # builds a small archive, runs a LocalCluster
    python examples/dask_archive.py tcp://sched:8786 s3://bucket/2026-11-*.pcap.gz ...

Each file is one task: the worker streams it (bounded memory, any size, gzip/bzip2/
xz/zstd, any fsspec URL the workers can open) and returns its report; the client
merges them. The packets of the built archive come from scapy, one UDP checksum in
ten overwritten. Needs the [dask] extra.
"""

from __future__ import annotations

import gzip
import sys
import tempfile
from pathlib import Path

from dask.distributed import Client, LocalCluster

import csum.dask


def build_archive(root: Path, files: int = 3, packets: int = 200) -> list[str]:
    """``files`` pcaps (every other one gzip-compressed) of scapy UDP packets, every 10th checksum wrong."""
    from scapy.all import IP, UDP, Ether, Raw, raw

    from csum.pcap import LINKTYPE_ETHERNET

    names = []
    for k in range(files):
        records = [b"\xd4\xc3\xb2\xa1\x02\x00\x04\x00" + bytes(8) + (65535).to_bytes(4, "little")
                   + LINKTYPE_ETHERNET.to_bytes(4, "little")]
        for i in range(packets):
            pkt = bytearray(raw(Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") / IP(dst=f"192.0.2.{k}")
                                / UDP(sport=1000 + i, dport=53) / Raw(b"query")))
            if i % 10 == 3:
                pkt[-1] ^= 0xFF
            records.append(i.to_bytes(4, "little") + bytes(4) + len(pkt).to_bytes(4, "little") * 2 + pkt)
        data = b"".join(records)
        path = root / (f"day{k}.pcap.gz" if k % 2 else f"day{k}.pcap")
        path.write_bytes(gzip.compress(data) if k % 2 else data)
        names.append(str(path))
    return names


def report(archive: csum.dask.Archive) -> None:
    for s in archive.files:
        print(f"{s.name}: {s.report.packets} packets, {len(s.report.bad)} bad checksums"
              + (f" ({s.compression})" if s.compression else ""))
    total = archive.total
    print(f"total: {total.packets} packets, {len(total.bad)} bad checksums, {len(total.malformed)} malformed")


def main(argv: list[str]) -> int:
    if argv:
        with Client(argv[0]) as client:
            archive = csum.dask.verify_files(argv[1:], client)
    else:
        with tempfile.TemporaryDirectory() as tmp, \
                LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None) as cluster, \
                Client(cluster) as client:
            archive = csum.dask.verify_files(build_archive(Path(tmp)), client)
    report(archive)
    return 1 if archive.total.bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
