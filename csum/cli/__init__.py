"""The ``csum`` command line (also ``python -m csum``).

Exit codes: 0 ok, 1 some check failed, 2 usage or input error. Expected errors
print one line ``csum: <what> failed for <input>: <reason>`` on stderr, never
a traceback.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from .. import __version__, bpf
from . import progress
from ..engine import ENGINE
from .compare import function_table, partial_table
from ..arch.crossarch import FUNCTIONS, align_dependence, compare, compare_function
from ..errors import CsumError
from ..arch.profiles import profile
from .sample import SAMPLE_PACKET

if TYPE_CHECKING:  # numpy-backed modules are imported when verify/fix run, keeping other commands' start-up light
    from ..capture.checker import Sink as ResultSink
    from ..capture.output import AtomicFile
    from ..capture.scan import Scan


class _UsageError(Exception):
    pass


def _int(text: str) -> int:
    try:
        return int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r} (decimal or 0x-prefixed hex)") from None


def _align(text: str) -> int:
    value = _int(text)
    if not 0 <= value <= 7:
        raise argparse.ArgumentTypeError(f"an address mod 8 is 0..7, got {value}")
    return value


def _hex(text: str) -> bytes:
    cleaned = "".join(text.split()).replace(":", "")
    if cleaned.startswith(("0x", "0X")):
        cleaned = cleaned[2:]
    bad = next((c for c in cleaned if c not in "0123456789abcdefABCDEF"), None)
    if bad is not None:
        raise _UsageError(f"not a hex string: {text[:40]!r} ({bad!r} is not a hex digit)")
    if len(cleaned) % 2:
        raise _UsageError(f"odd number of digits in {text[:40]!r}: {len(cleaned)} hex digits, bytes need pairs")
    return bytes.fromhex(cleaned)


def _cmd_compare(args: argparse.Namespace) -> int:
    if args.file is not None and args.hex is not None:
        raise _UsageError("give HEX or --file, not both")
    if args.file is not None:
        try:
            data = Path(args.file).read_bytes()
        except OSError as exc:
            raise _UsageError(f"cannot read {args.file}: {exc.strerror}") from None
        label = args.file
    elif args.hex is not None:
        data, label = _hex(args.hex), "hex input"
    else:
        data, label = SAMPLE_PACKET, "embedded sample (IPv4/TCP SYN)"
    names = [n.strip() for n in args.profiles.split(",") if n.strip()] if args.profiles else None
    if args.function != "csum_partial":
        return _compare_function(args, data, label, names)
    rows = compare(data, args.seed, names, align=args.align)
    if args.json:
        print(json.dumps({"input": data.hex(), "seed": args.seed, "align": args.align,
                          "rows": [r.as_dict() for r in rows]}, indent=2))
    else:
        print(partial_table(rows, label, data, args.seed, args.align))
    return 0


def _write_regular(path: Path, text: str, what: str) -> None:
    """Write ``text`` to ``path`` atomically (temp file + rename), only as a regular file."""
    if path.exists() and not path.is_file():
        raise _UsageError(f"{what}: {path} exists and is not a regular file")
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    try:
        tmp.write_text(text)
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise _UsageError(f"{what}: cannot write {path}: {exc.strerror}") from None


def _compare_function(args: argparse.Namespace, data: bytes, label: str, names: list[str] | None) -> int:
    """``csum compare --function NAME``: one primitive on every profile."""
    fn = args.function
    ihl = SAMPLE_PACKET[0] & 0xF
    if fn == "ip_fast_csum" and args.hex is None and args.file is None:
        data, label = SAMPLE_PACKET[:4 * ihl], "the embedded sample's IPv4 header"
    if fn == "ip_fast_csum" and (len(data) < 20 or len(data) % 4 or len(data) > 60):
        raise _UsageError(f"--function ip_fast_csum needs an IPv4 header of 20..60 bytes (a multiple of 4), "
                          f"got {len(data)}")
    size, v6 = (16, True) if fn == "csum_ipv6_magic" else (4, False)
    saddr = _hex(args.saddr) if args.saddr else bytes.fromhex("20010db8" + "00" * 11 + "01") if v6 else SAMPLE_PACKET[12:16]
    daddr = _hex(args.daddr) if args.daddr else bytes.fromhex("20010db8" + "00" * 11 + "02") if v6 else SAMPLE_PACKET[16:20]
    for name, addr in (("--saddr", saddr), ("--daddr", daddr)):
        if len(addr) != size:
            raise _UsageError(f"{name} must be {size} bytes (hex, network order) for {fn}, got {len(addr)}")
    length = args.len if args.len is not None else len(SAMPLE_PACKET) - 4 * ihl
    proto = args.proto if args.proto is not None else SAMPLE_PACKET[9]
    if not 0 <= length <= 0xFFFFFFFF or not 0 <= proto <= 0xFF:
        raise _UsageError(f"--len must be a u32 and --proto a u8, got {length} and {proto}")
    rows = compare_function(fn, data=data, seed=args.seed, saddr=saddr, daddr=daddr, length=length, proto=proto,
                            profiles=names)
    if fn.startswith(("csum_tcpudp", "csum_ipv6")):
        what = f"saddr {saddr.hex()} daddr {daddr.hex()} len {length} proto {proto} sum {args.seed:#010x}"
    elif fn == "ip_fast_csum":
        what = f"{label}, {len(data)} bytes ({len(data) // 4} words)"
    else:
        what = f"sum {args.seed:#010x}"
    if args.json:
        print(json.dumps({"function": fn, "input": what, "rows": [r.as_dict() for r in rows]}, indent=2))
        return 0
    print(function_table(rows, fn, what))
    return 0


def _cmd_kernel_check_qemu(args: argparse.Namespace) -> int:
    from ..kernel.qemu import check, guest

    if args.debian is not None:
        suite, arch_name = args.debian
        if args.qemu is not None and guest.arch(args.qemu) != guest.arch(arch_name):
            raise _UsageError(f"--qemu {args.qemu} and --debian {suite} {arch_name} name different architectures")
        if args.kernel is not None:
            raise _UsageError("give --kernel IMAGE or --debian RELEASE ARCH, not both")
        fetched = guest.fetch_debian(suite, arch_name)
        kernel, arch_name = fetched.image, fetched.arch
        provenance = {"package": f"{fetched.package} {fetched.version} (Debian {fetched.suite}, {fetched.arch})",
                      "deb sha256": fetched.deb_sha256, "kernel file": str(fetched.image.name)}
    else:
        if args.kernel is None:
            raise _UsageError("--qemu needs --kernel IMAGE or --debian RELEASE ARCH")
        kernel, arch_name = Path(args.kernel), args.qemu
        if not kernel.is_file():
            raise _UsageError(f"--kernel: {kernel} is not a file")
        provenance = {"kernel file": kernel.name, "kernel sha256": hashlib.sha256(kernel.read_bytes()).hexdigest()}
    if args.n < 1:
        raise _UsageError(f"--n must be at least 1, got {args.n}")
    seed = args.seed if args.seed is not None else 1
    try:
        report, obs = check.kernel_check_qemu(arch_name, kernel, n=args.n, n_replace=max(1, args.n // 3), seed=seed,
                                              forced_profile=args.profile, timeout=args.timeout,
                                              log_path=Path(args.log) if args.log else None, provenance=provenance,
                                              append_extra=args.append or "")
    except ValueError as exc:
        raise _UsageError(str(exc)) from None
    if args.save_vectors:
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            staged = Path(tmp) / "vectors.txt"
            check.write_vectors(staged, report, obs)
            _write_regular(Path(args.save_vectors), staged.read_text(), "--save-vectors")
    print(report.to_json() if args.json else report.format_text())
    return 0 if report.ok else 1


def _cmd_kernel_check(args: argparse.Namespace) -> int:
    from .. import kernel
    from ..kernel.check import kernel_check

    if args.qemu is not None or args.debian is not None:
        return _cmd_kernel_check_qemu(args)
    if args.kernel is not None or args.profile is not None:
        raise _UsageError("--kernel and --profile apply to --qemu runs")

    if not kernel.available():
        raise _UsageError(f"the running kernel's helpers are not reachable: {kernel.why_unavailable()}")
    if args.n < 1:
        raise _UsageError(f"--n must be at least 1, got {args.n}")
    report = kernel_check(args.n, args.seed, progress=sys.stderr if sys.stderr.isatty() else None)
    print(report.to_json() if args.json else report.format_text())
    return 0 if report.ok else 1


_L4_FLAGS = (
    (0, "0"),
    (bpf.BPF_F_PSEUDO_HDR, "BPF_F_PSEUDO_HDR"),
    (bpf.BPF_F_MARK_MANGLED_0, "BPF_F_MARK_MANGLED_0"),
    (bpf.BPF_F_PSEUDO_HDR | bpf.BPF_F_MARK_MANGLED_0, "BPF_F_PSEUDO_HDR|BPF_F_MARK_MANGLED_0"),
)
_SKB = ((bpf.CHECKSUM_NONE, "not PARTIAL"), (bpf.CHECKSUM_PARTIAL, "PARTIAL"))


def _replaced(helper: str, field: bytes, diff: int, flags: int, ip_summed: int) -> str | None:
    """The field bytes bpf_<helper>_csum_replace(skb, off, 0, diff, flags) leaves (csum.bpf), as hex."""
    if diff < 0:
        return None
    pkt = bytearray(field)
    if helper == "l3":
        code = bpf.bpf_l3_csum_replace(pkt, 0, 0, diff, flags)
    else:
        code = bpf.bpf_l4_csum_replace(pkt, 0, 0, diff, flags, ip_summed=ip_summed)
    return pkt.hex() if code == 0 else f"error {code}"


def _cmd_diff(args: argparse.Namespace) -> int:
    frm, to = _hex(args.frm), _hex(args.to)
    prof = profile(args.profile)
    homog = prof.bpf_csum_diff(frm, to, args.seed, frm_align=args.from_align, to_align=args.to_align)
    legacy = prof.bpf_csum_diff_legacy(frm, to, args.seed)
    by_value = align_dependence(prof, frm, to, args.seed)
    out: dict[str, object] = {"profile": prof.name, "endian": prof.endian, "from": frm.hex(), "to": to.hex(),
                              "seed": args.seed, "from_align": args.from_align, "to_align": args.to_align,
                              "homogenized": homog, "legacy": legacy,
                              "homogenized_by_align": {f"{v:#06x}": pairs for v, pairs in sorted(by_value.items())}}
    rows: list[dict[str, object]] = []
    if args.sum is not None:
        field = _hex(args.sum)
        if len(field) != 2:
            raise _UsageError(f"--sum must be 2 bytes (the checksum field as in the packet), got {len(field)}")
        if prof.endian != "little":
            raise _UsageError(f"--sum: the l3/l4 replace helpers are emulated for little-endian CPUs, "
                              f"{prof.name} is {prof.endian}-endian")
        out["sum"] = field.hex()
        cases = [("l3", 0, "0", bpf.CHECKSUM_NONE, "any")]
        cases += [("l4", f, name, skb, skb_name) for f, name in _L4_FLAGS for skb, skb_name in _SKB]
        for helper, flags, name, skb, skb_name in cases:
            rows.append({"helper": helper, "flags": flags, "flag_names": name, "ip_summed": skb_name,
                         "homogenized": _replaced(helper, field, homog, flags, skb),
                         "legacy": _replaced(helper, field, legacy, flags, skb)})
        out["replace"] = rows
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    legacy_text = f"{legacy:#010x}" if legacy >= 0 else f"{legacy} (EINVAL: sizes must be multiples of 4, 512 bytes at most)"
    lines = [
        f"bpf_csum_diff on {prof.name} ({prof.endian}-endian): from {frm.hex() or '(empty)'} ({len(frm)} bytes) "
        f"to {to.hex() or '(empty)'} ({len(to)} bytes), seed {args.seed:#010x}",
        f"  homogenized (Linux >= 6.13): {homog:#06x}  (from at address {args.from_align} mod 8, "
        f"to at {args.to_align} mod 8: read in place)",
        f"  legacy      (Linux <= 6.12): {legacy_text}  (copied to an aligned scratch buffer: address-independent)",
        "  homogenized at other addresses: " + ("the same at all 64 (from, to) alignments" if len(by_value) == 1
                                                else "DEPENDS on them: " + "; ".join(
            f"{v:#06x} at {len(pairs)} of 64, e.g. from {pairs[0][0]} to {pairs[0][1]}"
            for v, pairs in sorted(by_value.items()))),
    ]
    if rows:
        lines += ["", f"checksum field {field.hex()} after bpf_l3/l4_csum_replace(skb, off, 0, diff, flags) "
                  "(field bytes as in the packet):",
                  f"  {'helper':<6}  {'flags':<37} {'skb ip_summed':<13}  {'homogenized':<11}  legacy"]
        lines += [f"  {r['helper']:<6}  {r['flag_names']:<37} {r['ip_summed']:<13}  {r['homogenized']:<11}  "
                  f"{r['legacy'] or '-'}" for r in rows]
    print("\n".join(lines))
    return 0


def _positive(text: str) -> int:
    n = _int(text)
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {n}")
    return n


def _check_show(args: argparse.Namespace) -> None:
    if args.show < 0:
        raise _UsageError(f"--show must be 0 or more, got {args.show}")


class _Sink:
    """fix's output, with write errors named as such (reading errors say "cannot read")."""

    def __init__(self, out: AtomicFile, name: str) -> None:
        self._out, self._name = out, name

    def write(self, data: bytes) -> None:
        try:
            self._out.write(data)
        except OSError as exc:
            raise _UsageError(f"cannot write {self._name}: {exc.strerror or exc}") from None


def _scan(args: argparse.Namespace, name: str, bar: progress.Bar, sink: _Sink | None = None,
          each: ResultSink | None = None) -> Scan:
    """One input through csum.scan, with OSError turned into a one-line usage error."""
    from ..capture import pcap
    from ..capture.scan import scan

    args.current = name
    bar.phase(f"checking {name}" if sink is None else f"checking {name} and writing {args.out}")
    try:
        return scan(name, jobs=args.jobs, chunk_bytes=args.chunk_bytes or pcap.CHUNK_BYTES, sink=sink,
                    progress=bar.update, each=each, keep=getattr(args, "show", None))
    except BrokenPipeError:  # our output's reader left (`| head`): not a read error; main() stops quietly
        raise
    except OSError as exc:
        raise _UsageError(f"cannot read {name}: {exc.strerror or exc}") from None


def _exit_code(scans: Sequence[Scan], args: argparse.Namespace) -> int:
    """The exit-code table (README, CLI): 1 a bad checksum anywhere; else 2 for records csum could not read
    or link types it cannot look into (unless --skip-unsupported); else 0."""
    strict = getattr(args, "strict", False)  # verify --strict: transmit offload's pseudo-header sums are bad too
    if any(s.report.total("bad") or (strict and s.report.total("offload")) for s in scans):
        return 1
    if any(s.stop is not None and not s.stop.truncated for s in scans):
        return 2
    if not args.skip_unsupported and any(s.report.unsupported for s in scans):
        return 2
    return 0


def _problems(scan: Scan, args: argparse.Namespace) -> list[str]:
    """What to say on stderr about a scan: why it gets exit code 2 (or would, were there no bad checksum),
    and a truncated last record."""
    found = []
    if scan.stop is not None:
        found.append(f"{scan.stop}; nothing after it was read" if not scan.stop.truncated else
                     f"the file ends inside {scan.stop}; every record before it was checked")
    if scan.report.unsupported and not args.skip_unsupported:
        links = ", ".join(f"{n} on link type {k}" for k, n in sorted(scan.report.unsupported.items()))
        found.append(f"packets csum cannot look into ({links}); --skip-unsupported accepts them unchecked")
    return found


def _stop_line(scan: Scan) -> str | None:
    if scan.stop is None:
        return None
    what = "truncated" if scan.stop.truncated else "damaged"
    return f"{what}: {scan.stop}; every record before it was checked"


def _scan_json(scan: Scan, show: int) -> dict[str, object]:
    from ..capture import report

    doc = report.as_json(scan.report, scan, scan.name, show)  # type: ignore[arg-type]
    doc["compression"] = scan.compression
    doc["stopped"] = None if scan.stop is None else {
        "offset": scan.stop.offset, "packet": scan.stop.index, "truncated": scan.stop.truncated,
        "reason": scan.stop.reason}
    return doc


def _scan_text(scan: Scan, show: int) -> str:
    from ..capture import report

    text = report.as_text(scan.report, scan, scan.name, show)  # type: ignore[arg-type]
    line = _stop_line(scan)
    return text if line is None else f"{text}\n\n{line}"


def _print_scans(scans: Sequence[Scan], args: argparse.Namespace) -> None:
    if args.format == "jsonl":  # the rows went to stdout while the files were read
        return
    if args.json and len(scans) == 1:
        print(json.dumps(_scan_json(scans[0], args.show), indent=2))
    elif args.json:
        total = _total(scans)
        print(json.dumps({"files": [_scan_json(s, args.show) for s in scans],
                          "total": _scan_json(total, args.show)}, indent=2))
    else:
        print("\n\n".join(_scan_text(s, args.show) for s in scans))
        if len(scans) > 1:
            t = _total(scans).report
            print(f"\ntotal: {len(scans)} files, {t.packets} packets, {t.total('bad')} bad checksums, "
                  f"{t.total('malformed')} malformed, {t.total('cut')} cut")


def _total(scans: Sequence[Scan]) -> Scan:
    from ..capture.scan import merged

    return merged(scans)


def _report_problems(scans: Sequence[Scan], args: argparse.Namespace, code: int, tail: str = "") -> None:
    """One stderr line per input with problems: ``failed`` when they decide exit 2, else a warning."""
    for scan in scans:
        found = _problems(scan, args)
        if found:
            verb = "failed for" if code == 2 else "warning for"
            print(f"csum: {args.command} {verb} {scan.name}: {'; '.join(found)}{tail}", file=sys.stderr)


class _JsonlRows:
    """``verify --format jsonl``: one JSON object per checksum field, in packet order, written in blocks of a few
    thousand lines (:meth:`flush` writes the rest)."""

    def __init__(self) -> None:
        from ..capture.report import jsonl_line

        self.line = jsonl_line
        self.lines: list[str] = []

    def __call__(self, index: int, results: list) -> None:
        self.lines += [self.line(index, r) for r in results]
        if len(self.lines) >= 4096:
            self.flush()

    def flush(self) -> None:
        sys.stdout.write("".join(self.lines))
        self.lines.clear()


def _jsonl_scan(args: argparse.Namespace, name: str, bar: progress.Bar) -> Scan:
    rows = _JsonlRows()
    try:
        return _scan(args, name, bar, each=rows)
    finally:
        rows.flush()


def _cmd_verify(args: argparse.Namespace) -> int:
    _check_show(args)
    args.json = args.json or args.format == "json"
    bar = progress.Bar(sys.stderr, "verify")
    try:
        if args.dask is not None:
            from ..capture.dask import verify_cli

            if args.format == "jsonl":
                raise _UsageError("--dask: --format jsonl streams rows from one process; use the json summary")
            if "-" in args.files:
                raise _UsageError("--dask: standard input cannot be sent to a cluster; give file names or URLs")
            args.current = f"{len(args.files)} file(s) on {args.dask}"
            try:
                scans = verify_cli(args.dask, args.files, args.jobs, args.chunk_bytes)
            except (OSError, TimeoutError) as exc:
                raise _UsageError(f"cannot reach the dask scheduler {args.dask}: {exc}") from None
        else:
            scans = [_jsonl_scan(args, name, bar) if args.format == "jsonl" else _scan(args, name, bar)
                     for name in args.files]
    finally:
        bar.close()
    _print_scans(scans, args)
    code = _exit_code(scans, args)
    _report_problems(scans, args, code)
    return code


def _cmd_fix(args: argparse.Namespace) -> int:
    from ..capture.output import AtomicFile, target

    _check_show(args)
    if args.out == "-":
        raise _UsageError("OUT must be a file name: csum fix writes regular files only")
    path = target(args.out, [] if args.file == "-" else [args.file], follow_symlinks=args.follow_symlinks)
    bar = progress.Bar(sys.stderr, "fix")
    try:
        with AtomicFile(path) as out:
            scan = _scan(args, args.file, bar, sink=_Sink(out, args.out))
            code = _exit_code([scan], args)
            if code != 2:
                bar.show(f"syncing {args.out}")
                try:
                    out.commit()
                except OSError as exc:
                    raise _UsageError(f"cannot write {args.out}: {exc.strerror or exc}") from None
    except OSError as exc:  # the temporary file could not be made or written
        raise _UsageError(f"cannot write {args.out}: {exc.strerror or exc}") from None
    finally:
        bar.close()
    if args.json:
        doc = _scan_json(scan, args.show)
        doc.update(out=args.out if code != 2 else None, fixed_checksums=scan.patched,
                   fixed_packets=scan.patched_packets)
        print(json.dumps(doc, indent=2))
    else:
        print(_scan_text(scan, args.show))
        if code != 2:
            print(f"\nwrote {args.out}: {scan.patched} checksums corrected in {scan.patched_packets} packets; "
                  f"every other byte copied unchanged (cut, malformed and unchecked packets included)")
    _report_problems([scan], args, code, f"; {args.out} not written" if code == 2 else "")
    return code


def _bench_root() -> Path | None:
    """The directory from which ``python -m bench`` runs: where the bench package is importable from."""
    spec = importlib.util.find_spec("bench")
    if spec is not None and spec.origin and (Path(spec.origin).parent / "__main__.py").exists():
        return Path(spec.origin).parent.parent
    checkout = Path(__file__).resolve().parent.parent
    return checkout if (checkout / "bench" / "__main__.py").exists() else None


def _cmd_bench(args: argparse.Namespace) -> int:
    root = _bench_root()
    if root is None:
        raise _UsageError("the bench package is not here: run from a source checkout of csum (bench/ is not installed)")
    command = [sys.executable, "-m", "bench"] + (["--quick"] if args.quick else []) + (["--json"] if args.json else [])
    return subprocess.run(command, cwd=root, check=False).returncode


def _prog_packets(args: argparse.Namespace) -> tuple[list[tuple[int, bytes]], str]:
    """(index, frame) pairs from --pcap (Ethernet, or raw IP given a header) or from csum.testing.packets()."""
    from ..capture import pcap
    from ..kernel.prog import ethernet

    if args.pcap is None:
        try:
            from ..testing import sample_packets
        except ImportError:
            raise _UsageError("without --pcap the packets come from csum.testing.packets(), which needs "
                              "hypothesis (pip install hypothesis)") from None
        drawn = sample_packets(args.count, seed=args.seed)
        return [(i, ethernet(p)) for i, p in enumerate(drawn)], \
            f"csum.testing.packets(), {len(drawn)} drawn with seed {args.seed}"
    try:
        cap = pcap.read(args.pcap)
    except OSError as exc:
        raise _UsageError(f"cannot read {args.pcap}: {exc.strerror}") from None
    raw_ip = (pcap.LINKTYPE_RAW, pcap.LINKTYPE_IPV4, pcap.LINKTYPE_IPV6)
    frames = [(i, bytes(cap.packet(i)) if cap.linktypes[i] == pcap.LINKTYPE_ETHERNET else ethernet(bytes(cap.packet(i))))
              for i in range(len(cap)) if not cap.is_cut(i) and (cap.linktypes[i] == pcap.LINKTYPE_ETHERNET
                                                                 or cap.linktypes[i] in raw_ip)]
    return frames, f"{args.pcap}, {len(frames)} of {len(cap)} packets (Ethernet or raw IP, not cut)"


def _pcap_file(frames: list[bytes]) -> bytes:
    """A pcap (microsecond, little-endian, LINKTYPE_ETHERNET) of ``frames``, timestamps 0."""
    import struct

    out = [struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 262144, 1)]
    out += [struct.pack("<IIII", 0, 0, len(f), len(f)) + f for f in frames]
    return b"".join(out)


def _cmd_prog(args: argparse.Namespace) -> int:
    from ..kernel import prog

    _check_show(args)
    if args.count < 1:
        raise _UsageError(f"--count must be at least 1, got {args.count}")
    from ..capture.output import AtomicFile, target

    out = None if args.out is None else target(args.out, [] if args.pcap is None else [args.pcap])
    frames, source = _prog_packets(args)
    with prog.load(args.file, section=args.section, prog=args.prog) as program:
        runs = [(i, frame, program.run(frame)) for i, frame in frames]
        broken = [(i, frame, run, program.broken(frame, run)) for i, frame, run in runs]
        broken = [b for b in broken if b[3]]
        info, name = program.info, program.retval_name
    if out is not None:
        try:
            with AtomicFile(out) as new:
                new.write(_pcap_file([run.packet for _, _, run in runs]))
                new.commit()
        except OSError as exc:
            raise _UsageError(f"cannot write {args.out}: {exc.strerror}") from None
    runs_note = "each on a CHECKSUM_NONE and a CHECKSUM_COMPLETE skb" if info.kind == "tc" else "one run each"
    if args.json:
        doc = {"object": args.file, "program": info.name, "section": info.section, "type": info.kind,
               "source": source, "packets": len(runs), "broken_packets": len(broken),
               "broken": [{"index": i, "retval": run.retval, "retval_name": name(run.retval), "input": frame.hex(),
                           "output": run.packet.hex(),
                           "checks": [{"layer": c.layer, "offset": c.offset, "stored": c.stored,
                                       "expected": c.expected, "reason": c.reason, "cause": c.cause} for c in bad]}
                          for i, frame, run, bad in broken[:args.show]]}
        if args.out is not None:
            doc["out"] = args.out
        print(json.dumps(doc, indent=2))
        return 1 if broken else 0
    lines = [f"{args.file}: program {info.name} (section {info.section}, {info.kind}); packets: {source}; "
             f"{runs_note}"]
    for i, frame, run, bad in broken[:args.show]:
        lines.append(f"\npacket #{i}: {name(run.retval)}")
        for c in bad:
            if c.layer == prog.SKB_CSUM:
                lines.append("  skb->csum: stale on a CHECKSUM_COMPLETE skb (the kernel's test run: EBADMSG); "
                             "the bytes may be right, the stack drops the packet")
            else:
                stored = "none" if c.stored is None else f"{c.stored:#06x}"
                expected = "?" if c.expected is None else f"{c.expected:#06x}"
                lines.append(f"  {c.layer} checksum (header at {c.offset}): stored {stored}, expected {expected} "
                             f"({c.reason})")
            if c.cause:
                lines.append(f"    likely cause: {c.cause}")
        lines += [f"  in:  {frame.hex()}", f"  out: {run.packet.hex()}"]
    if len(broken) > args.show:
        lines.append(f"\n... {len(broken) - args.show} more (--show)")
    lines.append(f"\n{len(broken)} of {len(runs)} packets broken by {info.name}" if broken else
                 f"\nall {len(runs)} output packets have correct checksums"
                 + (" and skb->csum" if info.kind == "tc" else ""))
    if args.out is not None:
        lines.append(f"wrote {args.out}: {len(runs)} output packets")
    print("\n".join(lines))
    return 1 if broken else 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="csum", description="The Internet checksum as each Linux architecture computes it.")
    parser.add_argument("--version", action="store_true", help="show the version and the summing engine, then exit")
    parser.add_argument("--json", dest="json_top", action="store_true", help="machine-readable output (also after "
                        "the command)")
    sub = parser.add_subparsers(dest="command")
    cmp_ = sub.add_parser("compare", help="csum_partial and bpf_csum_diff of one input on every architecture")
    cmp_.add_argument("hex", nargs="?", help="input bytes as hex (default: the embedded sample packet)")
    cmp_.add_argument("--file", help="read the input bytes from a file")
    cmp_.add_argument("--seed", type=_int, default=0, help="32-bit seed (default 0)")
    cmp_.add_argument("--profiles", help="comma-separated profile names (default: all)")
    cmp_.add_argument("--align", type=_align, default=0, help="the input's address mod 8 (0..7, default 0)")
    cmp_.add_argument("--function", default="csum_partial", choices=("csum_partial", *FUNCTIONS),
                      help="the primitive to compare (default csum_partial: the csum_partial/bpf_csum_diff table); "
                      "csum_tcpudp_* and csum_ipv6_magic take --saddr/--daddr/--len/--proto and --seed as the sum "
                      "(IPv6 defaults 2001:db8::1 -> ::2), ip_fast_csum the "
                      "input as an IPv4 header, csum_fold folds --seed")
    cmp_.add_argument("--saddr", metavar="HEX", help="source address, 4 (or 16) bytes (default: the sample's)")
    cmp_.add_argument("--daddr", metavar="HEX", help="destination address, 4 (or 16) bytes (default: the sample's)")
    cmp_.add_argument("--len", type=_int, help="pseudo-header length (default: the sample's TCP length)")
    cmp_.add_argument("--proto", type=_int, help="pseudo-header protocol (default: the sample's, 6)")
    cmp_.set_defaults(func=_cmd_compare)
    kc = sub.add_parser("kernel-check", help="compare the emulation with the running kernel's bpf_csum_diff")
    kc.add_argument("--n", type=_int, default=2000, help="number of cases (default 2000; with --qemu, bpf_csum_diff "
                    "cases per JIT setting, at least the 417 fixed corner cases, plus a third as many l3/l4 "
                    "replace cases)")
    kc.add_argument("--seed", type=_int, default=None, help="random seed, to reproduce a run")
    kc.add_argument("--qemu", metavar="ARCH", help="boot a kernel of Debian architecture ARCH under qemu-system-* "
                    "(armhf, arm64, ppc64el, riscv64, s390x, amd64, i386) instead of using the running kernel")
    kc.add_argument("--kernel", metavar="IMAGE", help="with --qemu: the kernel image to boot")
    kc.add_argument("--debian", nargs=2, metavar=("RELEASE", "ARCH"),
                    help="fetch Debian RELEASE's kernel for ARCH with apt-get download (e.g. unstable armhf)")
    kc.add_argument("--profile", help="with --qemu: compare with this profile (default: detected from the guest)")
    kc.add_argument("--timeout", type=float, default=1800.0, help="with --qemu: seconds a boot may take")
    kc.add_argument("--log", metavar="FILE", help="with --qemu: keep the guest's console log here")
    kc.add_argument("--append", metavar="ARGS", help="with --qemu: extra kernel command line arguments")
    kc.add_argument("--save-vectors", metavar="FILE", help="with --qemu: write the kernel's answers as a vector file")
    kc.set_defaults(func=_cmd_kernel_check)
    diff = sub.add_parser("diff", help="bpf_csum_diff of two buffers and what the l3/l4 replace helpers then write")
    diff.add_argument("--from", dest="frm", required=True, metavar="HEX", help="bytes taken out (hex; '' for none)")
    diff.add_argument("--to", required=True, metavar="HEX", help="bytes put in (hex; '' for none)")
    diff.add_argument("--seed", type=_int, default=0, help="32-bit seed (default 0)")
    diff.add_argument("--profile", default="generic", help="architecture profile (default generic)")
    diff.add_argument("--from-align", type=_align, default=0, metavar="N", help="address of from mod 8 (default 0)")
    diff.add_argument("--to-align", type=_align, default=0, metavar="N", help="address of to mod 8 (default 0)")
    diff.add_argument("--sum", metavar="HEX16", help="current checksum field, 2 bytes as in the packet")
    diff.set_defaults(func=_cmd_diff)
    ver = sub.add_parser("verify", help="check every Internet checksum (IPv4, TCP, UDP, ICMP, tunnels ...) in pcap "
                         "or pcapng files")
    ver.add_argument("files", nargs="+", metavar="FILE", help="a capture (pcap or pcapng, maybe gzip/bzip2/xz/zstd "
                     "compressed), - for standard input, or with --dask any fsspec URL")
    ver.add_argument("--dask", metavar="SCHEDULER", help="check the files on a dask.distributed cluster (its "
                     "scheduler's address, or 'local' for a LocalCluster on this machine)")
    ver.add_argument("--format", choices=("text", "json", "jsonl"), default="text",
                     help="text (default), json (the summary, like --json) or jsonl (one object per checksum field)")
    ver.add_argument("--strict", action="store_true",
                     help="count transmit-offload checksums (the pseudo-header sum the NIC completes) as bad")
    fix = sub.add_parser("fix", help="copy a capture with every wrong checksum corrected")
    fix.add_argument("file", metavar="IN", help="the capture (as for verify; - for standard input)")
    fix.add_argument("out", metavar="OUT", help="a regular file to write (gzip-compressed when it ends in .gz)")
    fix.add_argument("--follow-symlinks", action="store_true", help="OUT may be a symbolic link: replace its target")
    for cmd, func in ((ver, _cmd_verify), (fix, _cmd_fix)):
        cmd.add_argument("--show", type=_int, default=10, help="list at most this many bad packets (default 10)")
        cmd.add_argument("--jobs", type=_positive, default=None, metavar="N",
                         help="check in N processes (default: every core)")
        cmd.add_argument("--chunk-bytes", type=_positive, default=None, metavar="B",
                         help="read and check B bytes of records at a time (default 2 MiB)")
        cmd.add_argument("--skip-unsupported", action="store_true",
                         help="packets on link types csum cannot look into do not make the exit code 2")
        cmd.set_defaults(func=func)
    prg = sub.add_parser("prog", help="run a compiled tc/XDP program on packets (running kernel) and check its checksums")
    prg.add_argument("file", metavar="OBJ.o", help="BPF ELF object (clang -target bpf)")
    which = prg.add_mutually_exclusive_group()
    which.add_argument("--section", help="the program's ELF section (e.g. tc, xdp)")
    which.add_argument("--prog", help="the program's function name")
    prg.add_argument("--pcap", metavar="IN", help="packets from a pcap/pcapng file (default: csum.testing.packets())")
    prg.add_argument("--out", metavar="OUT.pcap", help="write the output packets to a new pcap file")
    prg.add_argument("--count", type=_int, default=200, help="packets to generate without --pcap (default 200)")
    prg.add_argument("--seed", type=_int, default=0, help="seed of the generated packets (default 0)")
    prg.add_argument("--show", type=_int, default=10, help="list at most this many broken packets (default 10)")
    prg.set_defaults(func=_cmd_prog)
    bench = sub.add_parser("bench", help="run the benchmarks (python -m bench, from a source checkout)")
    bench.add_argument("--quick", action="store_true", help="the short run CI uses")
    bench.set_defaults(func=_cmd_bench)
    for cmd in (cmp_, kc, diff, ver, fix, prg, bench):
        cmd.add_argument("--json", action="store_true", help="machine-readable output")
    return parser


def _version(as_json: bool) -> int:
    if as_json:
        print(json.dumps({"version": __version__, "engine": ENGINE, "python": sys.version.split()[0]}))
    else:
        print(f"csum {__version__} (engine: {ENGINE})")
    return 0


def _run(argv: list[str]) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.version:
        return _version(args.json_top)
    if args.command is None:
        args = parser.parse_args([*argv, "compare"])
    args.json = args.json or args.json_top
    if getattr(args, "jobs", 1) is None:
        from ..capture.parallel import default_jobs

        args.jobs = default_jobs()
    try:
        return int(args.func(args))
    except (_UsageError, CsumError) as exc:
        print(f"csum: {args.command} failed for {_input(args)}: {exc}", file=sys.stderr)
        return 2
    except MemoryError:
        print(f"csum: {args.command} failed for {_input(args)}: out of memory", file=sys.stderr)
        return 2


def _input(args: argparse.Namespace) -> str:
    return getattr(args, "current", None) or getattr(args, "file", None) or "input"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit code (130 after Ctrl-C)."""
    try:
        return _run(list(sys.argv[1:] if argv is None else argv))
    except KeyboardInterrupt:
        print("csum: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into `head` and the like: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
