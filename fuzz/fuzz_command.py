"""Fuzz target: whole commands, ``csum verify``, ``csum fix`` and ``csum rewrite`` on a fuzzed capture file, through
the CLI's own in-process entry point (:func:`csum.cli.main`) on the C engine, against the same command with the C
walker and the C rewriter off (``csum.engine.cwalk`` and ``csum.engine.crewrite`` set to None: the Python walker,
the Python pcap loop and the Python rewrite engine).

The input is ``[command][frames]``: the first byte picks the command (bits 0-2, :data:`COMMANDS`), the file's
format (bit 3: pcap of the first frame's link type, every frame on it, or pcapng of every frame on its own link
type), a rewrite's rules (bits 4-5, :data:`RULES`) and the chunk size (bits 6-7, :data:`CHUNKS`: small chunks carry
pending fragments from one chunk into the next); the rest is fuzz_common's list of frames. Each command runs with
``--jobs 1``, its rows or its capture written with ``--out`` or as OUT (a file in a private directory). Both runs
must give the same exit code, the same standard output and error (but for what says which engine ran: how many
packets C judged, and the order of a text summary's counts table, whose lines are compared as a set) and the same
bytes written; neither may raise, and an exit code 2 must come with exactly one line,
``csum: ...``, on standard error (the CLI's contract: no traceback).
"""

from __future__ import annotations

import atexit
import contextlib
import io
import json
import re
import shutil
import tempfile
from pathlib import Path

from fuzz_common import assert_equal, capture_bytes, decode, python_only

from csum import engine
from csum.capture import pcap
from csum.cli import main

#: The commands (index: the first byte's bits 0-2); IN, OUT and the rewrite's rules are filled in.
COMMANDS = (("verify", "IN", "--format", "jsonl", "--out", "OUT"),
            ("verify", "IN", "--format", "csv", "--out", "OUT", "--strict"),
            ("verify", "IN", "--json"),
            ("verify", "IN", "--json", "--strict", "--by", "host"),
            ("fix", "IN", "OUT"),
            ("fix", "IN", "OUT", "--fix-embedded", "--keep-going"),
            ("rewrite", "IN", "OUT", "RULES"),
            ("rewrite", "IN", "OUT", "--fix", "RULES"))
#: A rewrite's rules (the first byte's bits 4-5): NAT of both families with a router's TTL, ports and the outer
#: level, inner headers' DSCP and flow label, link-layer rules.
RULES = (("--map-ip", "10.0.0.0/8=192.168.0.0/16", "--map-ip", "2001:db8::/32=2001:db9::/48", "--ttl", "-1"),
         ("--map-port", "80=8080", "--map-port", "udp:53=5353", "--map-dst", "10.1.0.2=203.0.113.9",
          "--level", "outer"),
         ("--dscp", "46", "--flowlabel", "1", "--level", "inner", "--map-src", "172.16.0.0/12=10.9.0.0/16"),
         ("--mac-src", "02:aa:00:00:00:01", "--vlan-retag", "5=6", "--ecn", "1", "--ttl", "64"))
#: ``--chunk-bytes`` (the first byte's bits 6-7): csum's default, then small chunks.
CHUNKS = (None, 64, 300, 4096)

#: How many packets C answered and how many were walked (verify) or why the Python engine took the others (rewrite),
#: in a summary line (the Python run's: 0 and all).
FAST = re.compile(r"\d+ on the fast path(, \d+ walked|; the Python engine took [^)]*)?")

_DIR = Path(tempfile.mkdtemp(prefix="csum-fuzz-command-"))
atexit.register(shutil.rmtree, _DIR, ignore_errors=True)


def argv_of(first: int) -> tuple[list[str], bool]:
    """The command line the first input byte picks (IN and OUT in the private directory), and whether it is pcap."""
    rules = RULES[(first >> 4) & 3]
    argv: list[str] = []
    for word in COMMANDS[first & 7]:
        argv += rules if word == "RULES" else [str(_DIR / "in")] if word == "IN" else \
            [str(_DIR / "out")] if word == "OUT" else [word]
    chunk = CHUNKS[first >> 6]
    if chunk is not None:
        argv += ["--chunk-bytes", str(chunk)]
    return [*argv, "--jobs", "1"], bool(first & 8)


def run(argv: list[str]) -> tuple[int, object, str, bytes | None]:
    """(exit code, standard output, standard error, OUT's bytes or None) of ``csum ARGV`` in this process."""
    out = _DIR / "out"
    with contextlib.suppress(FileNotFoundError):
        out.unlink()
    stdout = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    stderr = io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = main(argv)
    stdout.flush()
    text = stdout.buffer.getvalue().decode("utf-8")  # type: ignore[attr-defined]
    shown: object = FAST.sub("N on the fast path, N walked", text)
    if argv[0] == "verify" and "--json" in argv and code != 2:  # how many packets C judged: only the C run's
        shown = json.loads(text)
        shown.pop("fast_path")  # type: ignore[attr-defined]
    elif argv[0] != "verify" or "--out" not in argv:  # a summary table: its rows in the order layers were first seen
        shown = sorted(shown.splitlines())  # type: ignore[attr-defined]
    return code, shown, stderr.getvalue(), out.read_bytes() if out.exists() else None


def _honest(got: tuple[int, object, str, bytes | None], argv: list[str]) -> None:
    """An exit code csum documents; on exit 2 one ``csum:`` line on stderr; never a traceback."""
    code, _, err, _ = got
    assert code in (0, 1, 2), f"csum {argv}: exit code {code}"
    assert "Traceback" not in err, f"csum {argv}: a traceback\n{err}"
    if code == 2:
        lines = err.splitlines()
        assert len(lines) == 1 and lines[0].startswith("csum: "), f"csum {argv}: not one csum line on exit 2:\n{err}"


def one_input(data: bytes) -> None:
    assert engine.cwalk is not None and engine.crewrite is not None, "csum's C is not built or CSUM_ENGINE is not c"
    frames = decode(data[1:])
    if not frames:
        return
    argv, as_pcap = argv_of(data[0])
    file = pcap.to_bytes([f.data for f in frames], frames[0].linktype) if as_pcap else capture_bytes(frames)
    (_DIR / "in").write_bytes(file)
    got = run(argv)
    _honest(got, argv)
    saved, engine.crewrite = engine.crewrite, None
    try:
        with python_only():
            want = run(argv)
    finally:
        engine.crewrite = saved
    what = f"csum {' '.join(argv)}"
    for k, name in enumerate(("exit code", "standard output", "standard error", "bytes written")):
        assert_equal(got[k], want[k], f"{what}: {name}")


def encode(first: int, frames: bytes) -> bytes:
    """A command input: the byte that picks the command, format, rules and chunk size, then fuzz_common frames."""
    return bytes([first]) + frames
