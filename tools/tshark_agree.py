"""Compare `csum verify --format jsonl` with tshark's own checksum verdicts on real captures.

    python tools/tshark_agree.py [--details FILE] CAPTURE...

For every frame and every checksum both judge, the verdicts must agree (tshark's "good" is csum's
ok/none; offload counts as bad on both sides). tshark reports a fragmented datagram's transport
verdict on the frame that completes the reassembly, csum on the fragment carrying the field: the
verdicts of a first fragment are moved to its ``reassembled_in`` frame (tshark -2, two passes) before comparing
(inside a tunnel, the innermost ones: the tunnel's own verdicts stay in the frame).
Checksums tshark judges and csum does not are counted as ``missing`` per tshark field.
Prints one JSON summary; exit 1 on any disagreement or csum crash. Needs tshark (Debian package tshark).

Corpora used for the numbers of docs/evidence.md: the test captures of tcpdump and Wireshark
(``apt-get source --download-only tcpdump wireshark`` with a deb-src line; tests/*.pcap* and
test/captures/* of the unpacked tarballs). They stay outside this repository.
"""

from __future__ import annotations

import argparse
import collections
import json
import subprocess
import sys

#: csum protocol -> tshark 4.0 checksum status field (0 bad, 1 good, 2 unverified).
FIELDS = {"ipv4": "ip.checksum.status", "tcp": "tcp.checksum.status", "udp": "udp.checksum.status",
          "udplite": "udp.checksum.status", "icmp": "icmp.checksum.status",
          "icmpv6": "icmpv6.checksum.status", "igmp": "igmp.checksum.status", "pim": "pim.cksum.status",
          "gre": "gre.checksum.status", "vrrp": "vrrp.checksum.status", "carp": "carp.checksum.status",
          "eigrp": "eigrp.checksum.status", "dccp": "dccp.checksum.status",
          "icmp-ext": "icmp.ext.checksum.status", "cdp": "cdp.checksum.status", "pgm": "pgm.hdr.cksum.status"}
#: IGMP messages tshark dissects under their own names (DVMRP, PIMv1, multicast router discovery, MSNIP,
#: IGAP): the same IGMP checksum, which csum reports as "igmp".
IGMP_KIN = ("dvmrp.checksum.status", "pim.cksum.status", "mrdisc.checksum.status", "msnip.checksum.status",
            "igap.checksum.status")
#: Other tshark fields of protocols that carry an Internet checksum: counted when csum has no verdict.
OTHERS = IGMP_KIN + ("hip.checksum.status", "nhrp.hdr.chksum.status", "lmp.checksum.status")
PREFS = ("ip.check_checksum:TRUE", "tcp.check_checksum:TRUE", "udp.check_checksum:TRUE",
         "udplite.check_checksum:TRUE", "dccp.check_checksum:TRUE")
TRANSPORT = ("tcp", "udp", "udplite", "icmp", "icmpv6", "dccp", "pgm")


def tshark(path: str) -> dict[int, dict[str, list[str]]]:
    """frame number -> tshark field -> its values; ``_in`` holds the reassembling frame."""
    names = sorted(set(FIELDS.values()) | set(OTHERS))
    cmd = ["tshark", "-2", "-n", "-r", path, "-T", "fields", "-E", "separator=\t", "-E", "occurrence=a",
           "-e", "frame.number", "-e", "ip.reassembled_in", "-e", "ipv6.reassembled.in"]
    for pref in PREFS:
        cmd += ["-o", pref]
    for name in names:
        cmd += ["-e", name]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if "aren't valid" in proc.stderr:
        raise SystemExit(f"tshark_agree: this tshark lacks a field: {proc.stderr.strip().splitlines()[-1]}")
    out = proc.stdout
    frames = {}
    for line in out.splitlines():
        parts = line.split("\t")
        if not parts[0].isdigit():
            continue
        values = {n: [v for v in parts[i + 3].split(",") if v] for i, n in enumerate(names) if i + 3 < len(parts)}
        pgm = values.get("pgm.hdr.cksum.status", [])
        if len(pgm) == 2:  # Wireshark 4.0's packet-pgm.c also puts the checksum's value in this field
            values["pgm.hdr.cksum.status"] = pgm[1:]
        values["_in"] = [v for v in (parts[1].split(",") + parts[2].split(",")) if v]
        frames[int(parts[0])] = values
    return frames


#: How csum is run (the csum importable here).
CSUM = [sys.executable, "-m", "csum"]


def csum(path: str) -> tuple[int, dict[int, dict[str, list[dict]]], str | None]:
    """csum's exit code, its rows by frame and field, and the traceback's last line if csum crashed (a crash
    must not pass for missing verdicts)."""
    proc = subprocess.run(CSUM + ["verify", path, "--format", "jsonl"], capture_output=True, text=True, timeout=600)
    frames: dict[int, dict[str, list[dict]]] = collections.defaultdict(lambda: collections.defaultdict(list))
    for line in proc.stdout.splitlines():
        row = json.loads(line)
        if "frame" in row and row["protocol"] in FIELDS:
            frames[row["frame"]][FIELDS[row["protocol"]]].append(row)
    crash = proc.stderr.strip().splitlines()[-1] if "Traceback (most recent call last)" in proc.stderr else None
    return proc.returncode, frames, crash


def compare(path: str, totals: collections.Counter, details: list) -> None:
    theirs = tshark(path)
    code, ours, crash = csum(path)
    totals[f"csum exit {code}"] += 1
    if crash is not None:
        totals["csum crashed"] += 1
        details.append({"kind": "crashed", "file": path, "error": crash})
    for frame, values in theirs.items():
        later = [int(v) for v in values["_in"] if int(v) != frame]
        if later:
            for name, rows in list(ours.get(frame, {}).items()):
                # the fragmented datagram's transport is the innermost: tshark's verdicts in this frame (a tunnel's
                # own UDP around an inner fragment) pair with csum's outermost rows, the rest move
                kept = len(values.get(name, []))
                moved = [r for r in sorted(rows, key=lambda r: r["depth"])[kept:]
                         if r["protocol"] in TRANSPORT and r["status"] != "n/a"]
                ours[later[0]][name] += moved
                ours[frame][name] = [r for r in rows if r not in moved]
    for frame, values in theirs.items():
        if ours.get(frame, {}).get("igmp.checksum.status") and not values.get("igmp.checksum.status"):
            kin = next((name for name in IGMP_KIN if values.get(name)), None)
            if kin is not None:
                values["igmp.checksum.status"] = values.pop(kin)
        for name, verdicts in values.items():
            if name == "_in":
                continue
            judged = [v for v in verdicts if v in ("0", "1")]
            mine = [r for r in ours.get(frame, {}).get(name, []) if r["status"] != "n/a"]
            if len(judged) > len(mine):
                totals[f"missing {name}"] += len(judged) - len(mine)
                details.append({"kind": "missing", "file": path, "frame": frame, "field": name,
                                "tshark": verdicts, "csum": [(r["status"], r["reason"], r["path"]) for r in mine]})
            for verdict, row in zip(judged, mine):
                totals["compared"] += 1
                if (verdict == "1") != (row["status"] in ("ok", "none")):
                    totals["disagree"] += 1
                    details.append({"kind": "disagree", "file": path, "frame": frame, "field": name,
                                    "tshark": verdicts, "csum": [row["status"], row["reason"], row["path"]]})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("captures", nargs="+")
    parser.add_argument("--details", help="write every disagreement and missing verdict here (JSON lines)")
    args = parser.parse_args(argv)
    totals: collections.Counter = collections.Counter()
    details: list = []
    for path in args.captures:
        compare(path, totals, details)
    totals["files"] = len(args.captures)
    print(json.dumps(dict(sorted(totals.items())), indent=1))
    if args.details:
        with open(args.details, "w") as out:
            out.writelines(json.dumps(d) + "\n" for d in details)
    return 1 if totals["disagree"] or totals["csum crashed"] else 0


if __name__ == "__main__":
    sys.exit(main())
