"""Fuzz target: the C walker (csum/engine/_cwalk.c) against the Python walker on chunks of a capture.

The input's frames (fuzz_common's format, any link type C walks) as one capture: ``check_chunk`` through
``csum.capture.checker.check``
(fragments reassembled in the chunk) and through a :class:`~csum.capture.checker.Checker` fed by a
:class:`~csum.capture.pcap.Reader` in small chunks (the pending fragments of a chunk in front of the next), and the
per-packet path (``verify --format jsonl``): every report equal, ``fast`` aside, to the one with ``csum.engine.cwalk``
set to None.
"""

from __future__ import annotations

import io

from fuzz_common import assert_equal, capture_bytes, check_rows, decode, python_only, report_rows, with_exact_data

from csum import engine
from csum.capture import checker, pcap
from csum.capture.report import Report


def _chunked(data: bytes, chunk_bytes: int) -> dict:
    """The report of a Checker fed the capture's Reader chunks of ``chunk_bytes`` (exact-size buffers)."""
    reader = pcap.Reader(io.BytesIO(data), chunk_bytes)
    check = checker.Checker()
    report = Report(0)
    for chunk in reader:
        report.update(check.check(with_exact_data(chunk)))
    report.update(check.close())
    report.sort()
    return report_rows(report)


def one_input(data: bytes) -> None:
    cwalk = engine.cwalk
    assert cwalk is not None, "the C walker is not built or CSUM_ENGINE is not c"
    frames = decode(data)
    if not frames:
        return
    file = capture_bytes(frames)
    cap = with_exact_data(pcap.parse(file))
    got_c = check_rows(cap)
    with python_only():
        want = check_rows(cap)
    assert_equal(got_c, want, "checker.check")
    chunk_bytes = 64 + 8 * data[0]
    got_chunks = _chunked(file, chunk_bytes)
    with python_only():
        want_chunks = _chunked(file, chunk_bytes)
    assert_equal(got_chunks, want_chunks, f"Checker over chunks of {chunk_bytes} bytes")
