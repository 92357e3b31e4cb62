"""A pytest plugin for the sanitized run (tools/sanitized.py passes ``-p shard_plugin``): ``--shard K/N`` runs the
K-th of N parts of the collected tests.

Each test is in exactly one part, by a CRC-32 of its node id: a part stays the same from run to run (a new test
joins one part and moves no other), and N runs with K = 1..N sanitize every test once. ``--shard day/N`` takes K
from the UTC date (days since the epoch modulo N, plus 1): what ``.ci/run`` passes, so consecutive days' CI runs
cover every test. Every pytest process (each xdist worker) makes the same choice.
"""

from __future__ import annotations

import time
import zlib

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--shard", default=None, metavar="K/N",
                     help="run the K-th of N parts of the tests (K may be 'day': the UTC date chooses)")


def part(spec: str, now: float | None = None) -> tuple[int, int]:
    """(K, N) of ``--shard`` ``spec`` ("2/3", or "day/3" for today's part), 1 <= K <= N; a UsageError otherwise."""
    k, _, n = spec.partition("/")
    if not n.isdigit() or int(n) < 1 or not (k.isdigit() or k == "day"):
        raise pytest.UsageError(f"--shard must be K/N or day/N with N >= 1, got {spec!r}")
    count = int(n)
    index = int((time.time() if now is None else now) // 86400) % count + 1 if k == "day" else int(k)
    if not 1 <= index <= count:
        raise pytest.UsageError(f"--shard {spec}: K must be in 1..{count}")
    return index, count


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    spec = config.getoption("--shard")
    if spec is None:
        return
    k, n = part(spec)
    keep = [item for item in items if zlib.crc32(item.nodeid.encode()) % n == k - 1]
    dropped = [item for item in items if zlib.crc32(item.nodeid.encode()) % n != k - 1]
    items[:] = keep
    config.hook.pytest_deselected(items=dropped)


def pytest_report_header(config: pytest.Config) -> str | None:
    spec = config.getoption("--shard")
    if spec is None:
        return None
    k, n = part(spec)
    return f"shard {k} of {n} (--shard {spec})"
