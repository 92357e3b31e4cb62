"""What a capture rewrite did to its packets: :class:`Outcome`, filled by the C engine (csum/rewrite/fast.py) and the
Python one (csum/rewrite/apply.py), merged chunk by chunk by csum/rewrite/capture.py. Its own module so that a capture
the C engine rewrites whole never imports the Python engine (tests/test_startup.py)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

__all__ = ["Outcome"]


@dataclass
class Outcome:
    """What happened to the packets of a capture (mergeable with :meth:`update`).

    ``kept``: checksum fields a change passed through, updated incrementally (their residual kept; the fields
    ``--truncate`` updates are not counted); ``fixed``:
    fields ``--fix`` then corrected; ``left_alone``: reason -> fields (or, for ``unsupported``, ``malformed`` and
    ``ttl-expired``, packets or headers) a change should have reached but did not.
    """

    packets: int = 0
    changed: int = 0
    kept: int = 0
    fixed: int = 0
    left_alone: Counter[str] = field(default_factory=Counter)
    #: packets cut by ``--truncate`` (csum/rewrite/truncate.py)
    truncated: int = 0
    #: packets the C engine handed to this one, per reason (csum/engine/_rewrite.c's DECLINES; ``no-c-engine``
    #: without it)
    declined: Counter[str] = field(default_factory=Counter)

    def update(self, other: Outcome) -> None:
        self.packets += other.packets
        self.changed += other.changed
        self.kept += other.kept
        self.fixed += other.fixed
        self.left_alone.update(other.left_alone)
        self.truncated += other.truncated
        self.declined.update(other.declined)

    def as_json(self) -> dict[str, object]:
        return {"packets": self.packets, "changed_packets": self.changed, "truncated_packets": self.truncated,
                "checksums": {"kept": self.kept, "fixed": self.fixed,
                              "left_alone": dict(sorted(self.left_alone.items()))}}
