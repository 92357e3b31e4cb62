"""Join chunks checked on their own into the capture's report: IP fragments that straddle chunks.

A chunk of a capture is checked apart (:func:`csum.capture.checker.check_part`, in a ``--jobs`` worker or
here) as if the capture began with it; the datagrams still pending at its end are not given up but
handed over with the packets of their fragments (:class:`~csum.capture.checker.Part`). A
:class:`Stitcher` takes the parts in chunk order and walks those packets again in one
:class:`~csum.capture.checker.Checker` that lives for the whole capture, so a datagram whose fragments
lie in two chunks (or more, up to :data:`~csum.layers.reassembly.WINDOW` packets) is reassembled as
if the capture had been checked in one piece.

That is exact unless the chunk interacts with what is pending from before it in a way its own check
could not see: a datagram of the chunk completed (or given up) under a key still pending, or more
datagrams pending at once than the Reassembler holds (:data:`~csum.layers.reassembly.MAX_DATAGRAMS`).
Then the part is dropped and the chunk checked again in the capture-long Checker (``chunk()``), the
fragments still pending placed in front of it. tests/capture/test_stitch.py checks the joined report against
the whole-capture check at every chunk size.
"""

from __future__ import annotations

from collections.abc import Callable

from ..layers import reassembly
from .checker import Checker, Part
from .pcap import Capture
from .report import Report

__all__ = ["Stitcher"]


class Stitcher:
    """Parts in, reports out, in chunk order; see the module docstring."""

    def __init__(self, fix_embedded: bool = False, hosts: bool = False) -> None:
        self.checker = Checker(fix_embedded=fix_embedded, hosts=hosts)
        self.rechecked = 0  # chunks checked again (for tests and the curious)

    def add(self, part: Part, chunk: Callable[[], Capture]) -> Report:
        """The report of the next chunk (``part``, its own check; ``chunk()`` gives its packets again if needed),
        with the findings of earlier chunks that it settles."""
        pending = self.checker.frags.pending
        if pending and (len(pending) + part.crowd > reassembly.MAX_DATAGRAMS or part.conflicts(pending)):
            self.rechecked += 1
            return self.checker.check(chunk())
        self.checker.report = part.report
        for packet in part.open:
            self.checker.packet(packet)
        part.report.sort()
        return part.report

    def unsettled(self) -> int | None:
        """The first packet whose findings are not yet in a report returned (None: all are)."""
        return self.checker.unsettled()

    def close(self) -> Report:
        """The capture ended: the findings still held back."""
        return self.checker.close()
