"""A pytest plugin (entry point ``pytest11``: ``csum``): the fixture ``csum_checksums`` for datapath tests.

Installed with csum, pytest loads it by itself; ``csum_checksums(packet, before=None, link="auto")`` is
:func:`csum.testing.assert_checksums_ok`: the test fails unless every checksum of the packet verifies, and the
failure names each wrong checksum's cause (:mod:`csum.explain`), so a BPF or datapath test says who is at fault::

    def test_nat_keeps_checksums(csum_checksums):
        out = run_my_program(packet)
        csum_checksums(out, before=packet)
"""

from __future__ import annotations

from collections.abc import Callable

import pytest


@pytest.fixture
def csum_checksums() -> Callable[..., None]:
    """:func:`csum.testing.assert_checksums_ok`."""
    from .testing import assert_checksums_ok

    return assert_checksums_ok
