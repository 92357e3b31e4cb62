"""One input, every architecture: what each Linux kernel's csum_partial and bpf_csum_diff return.

The default input is three bytes, ff ff ff (odd length, all ones), with seed 0.
Each architecture sums it its own way, so the raw u32 differs (7 different
values); folded to 16 bits and laid out in memory in the CPU's byte order
("folded": the two bytes a checksum field would be built from) they all agree.
The pre-6.13 (legacy) bpf_csum_diff rejects a buffer whose size is not a
multiple of 4 (-EINVAL); the homogenized one (Linux >= 6.13) returns the folded
sum, as a number in the CPU's byte order.

    python examples/compare_arches.py [HEX]
"""

from __future__ import annotations

import sys

import csum
from csum.crossarch import field16


def main(argv: list[str]) -> int:
    data = bytes.fromhex(argv[0]) if argv else b"\xff\xff\xff"
    print(f"input {data.hex()} ({len(data)} bytes), seed 0; Internet checksum {csum.internet_checksum(data):#06x}")
    print(f"{'profile':<28} {'endian':<6}  {'csum_partial':<10}  {'folded':<6}  {'legacy diff':<12}  homogenized")
    fields = {}
    for row in csum.compare(data):
        prof = csum.profile(row.profile)
        field = field16(row.csum_partial, prof.endian).hex()
        fields[row.profile] = field
        legacy = f"{row.legacy_diff:#010x}" if row.legacy_diff >= 0 else "-EINVAL"
        print(f"{row.profile:<28} {row.endian:<6}  {row.csum_partial:#010x}    {field:<6}  {legacy:<12}  "
              f"{row.homogenized_diff:#06x}")
    raw = {r.csum_partial for r in csum.compare(data)}
    print(f"\n{len(raw)} distinct csum_partial values; {len(set(fields.values()))} distinct folded layouts in memory")
    print("x86_64 before its 2021 rewrite (kernel='5.10'):",
          f"{csum.profile('x86_64', kernel='5.10').csum_partial(data):#010x}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
