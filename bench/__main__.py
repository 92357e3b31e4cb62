"""``python -m bench [--quick] [--json] [--out DIR] [--table-only JSON]``: run every workload, print the tables
(or, with ``--json``, the results as JSON), write results.json (or results-quick.json), tables.md and
throughput.png under bench/results/.

``--quick`` (under 30 s, what CI runs) times shorter slices, fewer repeats and fewer bpf profiles, and
writes only results-quick.json (the committed tables, those of docs/benchmarks.md, come from a full run).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from . import report

RESULTS = Path(__file__).resolve().parent / "results"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a short run (< 30 s) for CI")
    parser.add_argument("--json", action="store_true", help="print the results as JSON instead of the tables")
    parser.add_argument("--out", type=Path, default=RESULTS, help="directory for JSON, table and plot")
    parser.add_argument("--table-only", type=Path, metavar="JSON",
                        help="regenerate tables.md and the plot from a saved JSON, measuring nothing")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    if args.table_only:
        results = json.loads(args.table_only.read_text(encoding="utf-8"))
    else:
        from .run import run_all

        start = time.perf_counter()
        results = run_all(args.quick)
        results["elapsed_s"] = round(time.perf_counter() - start, 1)
        name = "results-quick.json" if args.quick else "results.json"
        (args.out / name).write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    text = report.markdown(results)
    print(json.dumps(results, indent=1) if args.json else text)
    if not results["quick"] or args.out != RESULTS:
        (args.out / "tables.md").write_text(text, encoding="utf-8")
        print(report.plot(results, args.out / "throughput.png"), file=sys.stderr if args.json else sys.stdout)
    if "elapsed_s" in results:
        print(f"bench: {results['elapsed_s']} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:  # `csum bench` reports the interruption itself
        sys.exit(130)
