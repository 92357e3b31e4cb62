"""Check an archive of captures on a Dask cluster: one task per file, one merged report.

Checking a capture is a pure function of its bytes (:func:`csum.scan.scan`), and
reports merge in order (``report.merge(other)``), so any distributed engine can
run it. This module is the integration for ``dask.distributed`` (the ``[dask]``
extra). Each file is one task on a worker, which streams it in bounded chunks
(local paths, or any fsspec URL the workers can open: ``s3://``, ``gs://``,
``hdfs://``, ``http://`` ...), and sends back its report without patches; the
client merges them::

    from dask.distributed import Client
    import csum.dask

    with Client("tcp://scheduler:8786") as client:
        archive = csum.dask.verify_files(["s3://bucket/day1.pcap.gz", ...], client)
    archive.total.bad      # every bad checksum, as (packet number in its file, Result)
    archive.files[0].name  # per file: csum.scan.Scan (report, format, where reading stopped)

From the shell: ``csum verify --dask tcp://scheduler:8786 FILES...`` (``--dask
local`` starts a LocalCluster on this machine). A local directory among the files stands for the captures under it,
found by their magic bytes in sorted order (:mod:`csum.capture.tree`), as ``csum verify DIR`` reads them.

:func:`to_dataframe` gives every checksum field of an archive as a Dask DataFrame, one partition per file (the rows
of :func:`csum.scan.to_pandas` with a ``file`` column in front; the ``[dask]`` and ``[arrow]`` extras)::

    frame = csum.dask.to_dataframe(["s3://bucket/day1.pcap.gz", ...])
    frame[frame.status == "bad"].groupby("src").size().compute()
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..core.inputs import check_callable, check_int, check_list, check_path
from ..errors import Code, CsumValueError
from .pcap import CHUNK_BYTES, MAX_CHUNK_BYTES
from .report import Report
from .scan import Scan, ScanOptions, merged, scan

__all__ = ["Archive", "to_dataframe", "verify_files"]


@dataclass
class Archive:
    """What :func:`verify_files` found: each file's :class:`~csum.scan.Scan`, in the order given, and the total."""

    files: list[Scan]
    total: Report


def _verify_one(name: str, chunk_bytes: int) -> Scan:
    try:
        return scan(name, ScanOptions(chunk_bytes=chunk_bytes))
    except OSError as exc:
        raise CsumValueError(f"cannot read {name}: {exc.strerror or exc}", code=Code.UNREADABLE) from None


def verify_files(files: Sequence[str], client: object, *, chunk_bytes: int = CHUNK_BYTES) -> Archive:
    """Check every capture of ``files`` on the ``dask.distributed.Client`` ``client``, one task per file.

    Errors (an unreadable file, not a capture) are raised by the client as the
    worker raised them. The result equals checking each file here and merging.
    """
    files, chunk_bytes = _files(files), check_int(chunk_bytes, 1, MAX_CHUNK_BYTES, "chunk_bytes")
    for verb in ("map", "gather"):
        check_callable(getattr(client, verb, None), f"client.{verb}")
    futures = client.map(_verify_one, list(files), chunk_bytes=chunk_bytes, pure=False)  # type: ignore[attr-defined]
    scans = client.gather(futures)  # type: ignore[attr-defined]
    return Archive(scans, merged(scans).report)


def _files(files: Sequence[str]) -> list[str]:
    """``files`` (argument ``files``): an iterable of file names (str or os.PathLike), as a list of str; a local
    directory stands for the captures under it (:func:`csum.capture.tree.captures`, listed here: the workers must
    see the same paths)."""
    from .tree import captures

    out: list[str] = []
    for i, f in enumerate(check_list(files, "files")):
        name = check_path(f, f"files[{i}]")
        out.extend(captures(name).paths() if "://" not in name and os.path.isdir(name) else [name])
    return out


def verify_cli(scheduler: str, files: Sequence[str], jobs: int, chunk_bytes: int | None = None) -> list[Scan]:
    """``csum verify --dask SCHEDULER FILES...``: the scans, on the scheduler's cluster or a local one."""
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        raise CsumValueError("--dask needs dask.distributed: pip install 'linux-csum[dask]'",
                             code=Code.MISSING_DASK) from None
    if scheduler == "local":
        with LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
                Client(cluster) as client:
            return verify_files(files, client, chunk_bytes=chunk_bytes or CHUNK_BYTES).files
    with Client(scheduler, timeout="10s") as client:
        return verify_files(files, client, chunk_bytes=chunk_bytes or CHUNK_BYTES).files


def _rows_of(name: str, chunk_bytes: int) -> Any:
    """One file's rows as a pandas DataFrame with its name in a ``file`` column (a partition of to_dataframe)."""
    from .arrow import frame
    from .scan import to_arrow

    try:
        table = to_arrow(name, chunk_bytes=chunk_bytes)
    except OSError as exc:
        raise CsumValueError(f"cannot read {name}: {exc.strerror or exc}", code=Code.UNREADABLE) from None
    out = frame(table)
    out.insert(0, "file", name)
    return out


def to_dataframe(files: Sequence[str], *, chunk_bytes: int = CHUNK_BYTES) -> Any:
    """Every checksum field of every capture of ``files`` as a ``dask.dataframe.DataFrame``, one partition per file
    (read when computed, on whatever scheduler is active: a ``dask.distributed`` Client's cluster, or this process).
    The columns: ``file``, then those of :func:`csum.scan.to_pandas` (docs/results-as-data.md)."""
    files, chunk_bytes = _files(files), check_int(chunk_bytes, 1, MAX_CHUNK_BYTES, "chunk_bytes")
    if not files:  # a DataFrame of no partitions: dask.dataframe refuses it with its own ValueError
        raise CsumValueError("files must name at least one capture", code=Code.BAD_VALUE)
    try:
        import dask.dataframe as dd
    except ImportError:
        raise CsumValueError("to_dataframe needs dask.dataframe: pip install 'linux-csum[dask]'",
                             code=Code.MISSING_DASK) from None
    from .arrow import frame, pyarrow, schema

    pa = pyarrow("to_dataframe")
    meta = frame(schema(pa).empty_table())
    meta.insert(0, "file", "")
    return dd.from_map(_rows_of, list(files), chunk_bytes=chunk_bytes, meta=meta.iloc[:0], enforce_metadata=False)
