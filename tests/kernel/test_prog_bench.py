"""bench/prog_kernels.py: a kernel that is not cached is skipped with a message (nothing downloaded), the running
kernel is timed, and the table shows every kernel and the whole command. No time is asserted
(bench/results/prog_kernels.json holds the measured ones). Skipped where clang, libbpf or BPF test runs are missing."""

from __future__ import annotations

import pytest
from bpf_build import why_not

from bench import prog_kernels

pytestmark = pytest.mark.skipif(why_not() is not None, reason=str(why_not()))


def test_uncached_kernels_are_skipped_with_a_message(tmp_path, monkeypatch, capsys):
    """With an empty cache (CSUM_CACHE) bookworm amd64 is skipped, saying why; the running kernel still runs all
    5 packets."""
    monkeypatch.setenv("CSUM_CACHE", str(tmp_path))
    results = prog_kernels.run(["bookworm:amd64"], 5)
    assert "bench: skipping bookworm:amd64: no apt lists cached for bookworm amd64" in capsys.readouterr().err
    assert results["skipped"] == [{"kernel": "bookworm:amd64", "why": "no apt lists cached for bookworm amd64"}]
    assert [(k["kernel"], k["packets"], k["error"]) for k in results["kernels"]] == [("running", 5, None)]
    assert results["booted"] == 0 and not any(tmp_path.iterdir())
    table = prog_kernels.table(results)
    assert "| running (" in table and "**in all**" in table and "skipped (not cached): bookworm:amd64" in table


def test_prog_model_times_both_sides():
    """bench/prog_model.py: each program timed on the running kernel and in the model, and the table shows both
    (no time asserted: bench/results/prog_model.json holds the measured ones)."""
    from bench import prog_model

    results = prog_model.run(5, 1)
    assert [r["program"] for r in results["rows"]] == ["xdp_ttl_csum_diff", "tc_nat"]
    assert all(r["packets"] == 5 and r["kernel_s"] > 0 and r["model_s"] > 0 for r in results["rows"])
    assert "| tc_nat | 5 |" in prog_model.table(results)
