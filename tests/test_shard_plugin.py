"""tests/shard_plugin.py (the sanitized run's ``--shard K/N``): N parts that partition the tests, and ``day/N``.

Expected values: the test file below defines 40 tests whose names this test knows; the day numbers are the Unix
epoch's (86,400 s a day, POSIX)."""

from __future__ import annotations

import pytest
import shard_plugin

pytest_plugins = ["pytester"]


def _collected(pytester: pytest.Pytester, *args: str) -> set[str]:
    result = pytester.runpytest_inprocess("-p", "shard_plugin", "--collect-only", "-q", "-p", "no:randomly", *args)
    return {line.split("::")[1] for line in result.outlines if "::" in line}


def test_parts_partition_the_tests(pytester: pytest.Pytester) -> None:
    """--shard 1/3, 2/3 and 3/3 collect disjoint sets whose union is every test; --shard 1/1 is every test."""
    pytester.makepyfile(test_many="import pytest\n@pytest.mark.parametrize('i', range(20))\ndef test_a(i): pass\n"
                                  "@pytest.mark.parametrize('i', range(20))\ndef test_b(i): pass\n")
    every = {f"test_{n}[{i}]" for n in "ab" for i in range(20)}
    parts = [_collected(pytester, "--shard", f"{k}/3") for k in (1, 2, 3)]
    assert set().union(*parts) == every and sum(map(len, parts)) == 40 and all(parts)
    assert _collected(pytester, "--shard", "1/1") == every


def test_day_picks_the_part_of_the_utc_date() -> None:
    """day/N: (days since the epoch mod N) + 1; 1970-01-01 is day 0, 1970-01-04 day 3."""
    assert shard_plugin.part("day/3", now=0.0) == (1, 3)
    assert shard_plugin.part("day/3", now=3 * 86400 + 5.0) == (1, 3)
    assert shard_plugin.part("day/3", now=86400 * 2 - 1.0) == (2, 3)
    assert shard_plugin.part("2/5") == (2, 5)


@pytest.mark.parametrize("spec", ["0/3", "4/3", "1/0", "x/3", "3", "day/"])
def test_bad_specs_are_usage_errors(spec: str) -> None:
    with pytest.raises(pytest.UsageError, match="--shard"):
        shard_plugin.part(spec)
