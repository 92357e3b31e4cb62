"""Fuzz target: the fix path, ``csum fix`` in small: a capture (often with wrong checksums) through
``csum.capture.checker.check`` and ``csum.pcap.patched``, the C walker's patches (csum/capture/fastpath.py
``patches``: inner levels first, the outer ones judged again) against the Python walker's
(``csum.layers.corrections``).

The input is fuzz_common's list of frames, written as a pcap file of the first frame's link type (every frame on
it) and as a pcapng file of every frame on its own link type. For each: the patches and the patched file's bytes
equal those with ``csum.engine.cwalk`` set to None, and the patched file, checked again by the Python walker, has no
wrong checksum the first check had corrected (patching is a fix, not a change).
"""

from __future__ import annotations

from fuzz_common import Frame, assert_equal, capture_bytes, decode, python_only, row, with_exact_data

from csum.capture import checker, pcap


def _pcap_bytes(frames: list[Frame]) -> bytes:
    link = frames[0].linktype
    return pcap.to_bytes([f.data for f in frames], link)


def _fixed(file: bytes) -> tuple[list, bytes]:
    cap = with_exact_data(pcap.parse(file))
    report = checker.check(cap)
    return report.patches, pcap.patched(cap, report.patches)


def one_input(data: bytes) -> None:
    frames = decode(data)
    if not frames:
        return
    for file in (_pcap_bytes(frames), capture_bytes(frames)):
        patches, out = _fixed(file)
        with python_only():
            want_patches, want_out = _fixed(file)
            assert_equal(patches, want_patches, "report.patches")
            assert_equal(out, want_out, "pcap.patched")
            if patches:
                _still_wrong(out, {at for at, _ in patches})


def _still_wrong(out: bytes, fixed_at: set[int]) -> None:
    """The patched file checked again (Python walker): no field a patch wrote may still be wrong."""
    cap = pcap.parse(out)
    again = checker.check(cap)
    left = [(i, row(r)) for i, r in again.bad + again.offload
            if r.field is not None and cap.base + int(cap.offsets[i]) + r.field in fixed_at]
    assert not left, f"fields still wrong after patching: {left}"
