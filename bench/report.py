"""Turn bench results (the JSON that bench/run.py's numbers are saved as) into tables and a plot.

Everything here reads only the JSON, so the tables of docs/benchmarks.md can be regenerated
from a saved run: ``python -m bench --table-only bench/results/results.json``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:.3f}" if seconds < 1e-4 else f"{seconds * 1e6:.1f}"


def _size(n: int) -> str:
    if n >= 1 << 20 and n % (1 << 20) == 0:
        return f"{n >> 20} MiB"
    if n >= 1 << 10 and n % (1 << 10) == 0:
        return f"{n >> 10} KiB"
    return f"{n} B"


def single_table(results: dict[str, Any]) -> list[str]:
    """Markdown rows: one per size and implementation, with ratios against scapy, dpkt and zlib.crc32."""
    lines = ["| size | implementation | median µs | min-max µs | GB/s | × scapy | × dpkt | time / crc32 |",
             "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for row in results["single"]:
        crc = f"{row['per_crc32']:.2f}" if "per_crc32" in row else "-"
        lines.append(f"| {_size(row['size'])} | {row['impl']} | {_us(row['median_s'])} | "
                     f"{_us(row['min_s'])}-{_us(row['max_s'])} | {row['gb_per_s']:.3f} | "
                     f"{row['x_scapy']:.2f} | {row['x_dpkt']:.2f} | {crc} |")
    return lines


def call_floor_table(results: dict[str, Any]) -> list[str]:
    """20-byte calls as a multiple of a bare zlib.crc32 call and of csum.csum_partial, from interleaved rounds
    (bench/run.py call_floor), on each engine timed."""
    lines = ["| 20 B call | engine | median µs | × zlib.crc32 | × csum_partial (same engine) | min-max |",
             "| --- | --- | ---: | ---: | ---: | ---: |"]
    for row in results.get("call_floor", []):
        per = row.get("per_partial")
        partial = f"{per['median']:.2f} | {per['min']:.2f}-{per['max']:.2f}" if per else "- | -"
        lines.append(f"| {row['impl']} | {row.get('engine', results['machine']['engine'])} | {_us(row['median_s'])} | "
                     f"{row['ratio_median']:.2f} | {partial} |")
    crc = [row["crc32_median_s"] for row in results.get("call_floor", [])]
    partial_s = [row["partial_median_s"] for row in results.get("call_floor", [])
                 if row.get("engine") == results["machine"]["engine"] and "partial_median_s" in row]
    if crc:
        lines += ["", f"zlib.crc32 on the same 20 bytes: {_us(sorted(crc)[len(crc) // 2])} µs (median)"
                      + (f"; csum.csum_partial [{results['machine']['engine']}]: "
                         f"{_us(sorted(partial_s)[len(partial_s) // 2])} µs." if partial_s else ".")]
    return lines


def ratio_table(results: dict[str, Any]) -> list[str]:
    """The headline: active-engine csum.internet_checksum and csum_partial vs scapy/dpkt, one row per size."""
    engine = results["machine"]["engine"]
    lines = ["| size | internet_checksum × scapy | × dpkt | csum_partial × scapy | × dpkt | "
             "internet_checksum GB/s |", "| ---: | ---: | ---: | ---: | ---: | ---: |"]
    by = {(r["size"], r["impl"]): r for r in results["single"]}
    for size in sorted({r["size"] for r in results["single"]}):
        ic, cp = by[(size, f"csum.internet_checksum [{engine}]")], by[(size, f"csum.csum_partial [{engine}]")]
        lines.append(f"| {_size(size)} | {ic['x_scapy']:.1f} | {ic['x_dpkt']:.1f} | {cp['x_scapy']:.1f} | "
                     f"{cp['x_dpkt']:.1f} | {ic['gb_per_s']:.2f} |")
    return lines


def batch_table(results: dict[str, Any]) -> list[str]:
    lines = ["| batch (1,000,000 × 64 B) | median s | min-max s | packets/s |", "| --- | ---: | ---: | ---: |"]
    for row in results["batch"]:
        lines.append(f"| {row['impl']} | {row['median_s']:.4f} | {row['min_s']:.4f}-{row['max_s']:.4f} | "
                     f"{row['rows'] / row['median_s'] / 1e6:.1f} M |")
    return lines


def _mops(t: dict[str, float]) -> str:
    mid, spread = 1e-6 / t["median_s"], (1e-6 / t["min_s"] - 1e-6 / t["max_s"]) / 2
    return f"{mid:.3f} ± {spread:.3f}M/s"


def bpf_table(results: dict[str, Any]) -> list[str]:
    """The homogenize patch's table shape: buffer size, before (legacy), after (homogenized), improvement; the
    improvement is the median of interleaved rounds' ratios, and the last column how many rounds it won."""
    lines = []
    rows = results["bpf_csum_diff"]
    for target, engine in dict.fromkeys((r["target"], r.get("engine")) for r in rows):
        on = f" [{engine}]" if engine else ""
        lines += [f"bpf_csum_diff emulation, {target}{on} (push mode: from empty, to = size bytes)", "",
                  "| Buffer Size | Before (legacy) | After (homogenized) | Improvement | rounds faster |",
                  "| ---: | ---: | ---: | ---: | ---: |"]
        for row in (r for r in rows if (r["target"], r.get("engine")) == (target, engine)):
            won = f"{row['after_faster_rounds']}/{row['rounds']}" if "rounds" in row else "-"
            lines.append(f"| {row['size']} | {_mops(row['before'])} | {_mops(row['after'])} | "
                         f"{row['improvement_pct']:.2f} % | {won} |")
        lines.append("")
    return lines


def profile_table(results: dict[str, Any]) -> list[str]:
    lines = ["| profile | csum_partial on 1 MiB, GB/s | median ms |", "| --- | ---: | ---: |"]
    for row in results["profiles_1mib"]:
        lines.append(f"| {row['profile']} | {row['gb_per_s']:.2f} | {row['median_s'] * 1e3:.3f} |")
    return lines


def import_table(results: dict[str, Any]) -> list[str]:
    lines = ["| import | median ms | min-max ms |", "| --- | ---: | ---: |"]
    for row in results["import"]:
        lines.append(f"| `import {row['import']}` | {row['median_s'] * 1e3:.1f} | "
                     f"{row['min_s'] * 1e3:.1f}-{row['max_s'] * 1e3:.1f} |")
    return lines


def markdown(results: dict[str, Any]) -> str:
    """bench/results/tables.md: every table, headed by where and when it was measured."""
    m = results["machine"]
    head = [f"Measured {m['date']} on {m['cpu']} ({m['cpus']} CPUs), Python {m['python']}, csum {m['csum']} "
            f"(engine: {m['engine']}), numpy {m['numpy']}, scapy {m['scapy']}, dpkt {m['dpkt']}"
            f"{' (quick run)' if results['quick'] else ''}. Generated by `python -m bench`; medians with "
            "min-max spread, ratios from the same run.", ""]
    sections = [("One buffer: ratios against scapy and dpkt", ratio_table),
                ("The call floor: 20 bytes against zlib.crc32 and csum_partial", call_floor_table), ("Batch", batch_table),
                ("bpf_csum_diff: legacy vs homogenized emulation", bpf_table),
                ("Every profile's csum_partial on 1 MiB", profile_table), ("Import time", import_table),
                ("One buffer: every implementation", single_table)]
    body = []
    for title, fn in sections:
        body += [f"#### {title}", "", *fn(results), ""]
    return "\n".join(head + body)


def plot(results: dict[str, Any], path: Path) -> str:
    """Throughput vs size per implementation (log-log) to ``path``; a message if matplotlib is missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "plot skipped: matplotlib is not installed (pip install 'linux-csum[bench]')"
    fig, ax = plt.subplots(figsize=(9, 6))
    for impl in dict.fromkeys(r["impl"] for r in results["single"]):
        rows = sorted((r for r in results["single"] if r["impl"] == impl), key=lambda r: r["size"])
        ax.plot([r["size"] for r in rows], [r["gb_per_s"] for r in rows], marker="o", label=impl)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("buffer size (bytes)")
    ax.set_ylabel("throughput (GB/s)")
    ax.set_title(f"Internet checksum of one buffer ({results['machine']['cpu']})")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return f"plot written to {path}"
