"""A user's program judged on many packets: what ``csum prog OBJ.o`` runs, callable from Python as ``csum.prog``'s
:func:`sample_frames` and :func:`judge_program` (the CLI only parses its options and formats the result).

The packets are Ethernet frames, from a capture (Ethernet or raw IP, records not cut) or drawn from
``csum.testing.packets()``; each goes through :meth:`csum.kernel.prog.Program.run` on the running kernel (tools/testing
/selftests/bpf's BPF_PROG_TEST_RUN, as :mod:`csum.kernel.prog` drives it) and, when asked, through the checksum states
of a tc program's skb (:mod:`csum.kernel.states`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from ..capture import pcap
from ..core.inputs import check_int, check_path
from ..errors import CsumValueError
from . import states as states_mod
from .prog import PARTIAL_NOTE, SKB_CSUM, Run, Summary, ethernet, load, summarize

__all__ = ["Judged", "Packets", "judge_program", "sample_frames"]

#: The checksum states a tc program's skb is judged in (``csum_states`` takes these and "all").
STATE_NAMES = ("none", "unnecessary", "complete", "partial", "all")


class Packets(NamedTuple):
    """The frames a program runs on: (index in the source, Ethernet frame) pairs, and where they came from."""

    frames: list[tuple[int, bytes]]
    source: str


def sample_frames(capture: str | None = None, *, count: int = 200, seed: int = 0) -> Packets:
    """The frames of the capture ``capture`` (a path: its Ethernet and raw IP records not cut, raw IP given an
    Ethernet header by :func:`csum.kernel.prog.ethernet`), or without one ``count`` drawn from
    ``csum.testing.packets()`` with ``seed`` (needs hypothesis). Raises OSError for an unreadable capture, and
    CsumValueError (not a capture; hypothesis missing) or CsumTypeError naming the argument."""
    if capture is None:
        count, seed = check_int(count, 1, 1_000_000, "count"), check_int(seed, 0, (1 << 64) - 1, "seed")
        try:
            from ..testing import sample_packets
        except ImportError:
            raise CsumValueError("without --pcap the packets come from csum.testing.packets(), which needs "
                                 "hypothesis (pip install hypothesis)") from None
        drawn = sample_packets(count, seed=seed)
        return Packets([(i, ethernet(p)) for i, p in enumerate(drawn)],
                       f"csum.testing.packets(), {len(drawn)} drawn with seed {seed}")
    capture = check_path(capture, "capture")
    cap = pcap.read(capture)
    raw_ip = (pcap.LINKTYPE_RAW, pcap.LINKTYPE_IPV4, pcap.LINKTYPE_IPV6)
    frames = [(i, bytes(cap.packet(i)) if cap.linktypes[i] == pcap.LINKTYPE_ETHERNET else ethernet(bytes(cap.packet(i))))
              for i in range(len(cap)) if not cap.is_cut(i) and (cap.linktypes[i] == pcap.LINKTYPE_ETHERNET
                                                                 or cap.linktypes[i] in raw_ip)]
    return Packets(frames, f"{capture}, {len(frames)} of {len(cap)} packets (Ethernet or raw IP, not cut)")


def check_states(asked: Sequence[str], path: str, program: str, kind: str, name: str = "csum_states") -> None:
    """Checksum states apply to a tc program's skb only: CsumValueError naming ``name`` (the argument) otherwise."""
    if asked and kind != "tc":
        raise CsumValueError(f"{name}: {path}'s program {program} is {kind}; checksum states are those of a tc "
                             "program's skb")


def states_of(asked: Sequence[str], runs: Sequence[tuple[int, bytes, Any]], evidence: Any) -> list[Any]:
    """The checksum states ``asked`` (names of :data:`STATE_NAMES`) judged on ``runs`` ((index, frame, Run));
    none asked: []."""
    if not asked:
        return []
    chosen = states_mod.STATES if "all" in asked else [st for st in states_mod.STATES if st in asked]
    return states_mod.judge_states({i: (frame, run) for i, frame, run in runs}, evidence, chosen)


def states_fail(found: Sequence[Any]) -> bool:
    """A state breaks packets, or has packets csum cannot judge (never passed)."""
    return any(st.broken or st.unjudged for st in found)


def state_doc(st: Any) -> dict[str, Any]:
    """One state's ``csum_states`` entry of the JSON documents."""
    return {"state": st.state, "ip_summed": st.ip_summed, "how": st.how, "judged": st.judged,
            "broken_packets": len(st.broken), "broken": list(st.broken), "unjudged": list(st.unjudged),
            "why": dict(st.why), "note": st.note}


@dataclass
class Judged:
    """What :func:`judge_program` found: the object's ``path``, the program (``info``: its libbpf ProgramInfo; ``kind``: tc or xdp), each
    (index, frame, :class:`~csum.kernel.prog.Run`), the checksum states judged, the summary and the notes a reader
    needs (pinned maps not reused, nothing tested, PARTIAL not judged)."""

    path: str
    info: Any
    kind: str
    source: str
    runs: list[tuple[int, bytes, Run]]
    states: list[Any]
    summary: Summary
    notes: list[str] = field(default_factory=list)

    @property
    def broken(self) -> list[tuple[int, bytes, Run]]:
        """The runs whose output is broken."""
        return [(i, frame, run) for i, frame, run in self.runs if run.broken]

    @property
    def failed(self) -> bool:
        """A packet broken, or a checksum state that breaks or cannot be judged: ``csum prog`` exits 1."""
        return bool(self.broken) or states_fail(self.states)

    def as_json(self) -> dict[str, Any]:
        """The body of ``csum prog --json`` (schema ``prog``; without ``out``, the CLI's)."""
        s = self.summary
        doc: dict[str, Any] = {
            "object": self.path, "program": self.info.name, "section": self.info.section, "type": self.kind,
            "source": self.source, "packets": s.packets, "changed": s.changed, "dropped": s.dropped,
            "broken_packets": s.broken, "kept_bad_packets": s.kept_bad, "unjudged": s.unjudged,
            "causes": dict(s.causes), "named": list(s.named), "unexplained": s.unexplained, "summary": s.line(),
            "notes": self.notes, "runs": [_entry(i, frame, run) for i, frame, run in self.runs]}
        if self.states:
            doc["csum_states"] = [state_doc(st) for st in self.states]
        return doc


def _entry(i: int, frame: bytes, run: Run) -> dict[str, Any]:
    return {"index": i, "retval": run.retval, "action": run.action, "dropped": run.dropped, "changed": run.changed,
            "input": frame.hex(), "output": run.packet.hex(), "error": run.error, "stale": run.stale,
            "removed": list(run.removed), "broken": bool(run.broken),
            "mistakes": [] if run.finding is None else list(run.finding.causes),
            "note": None if run.finding is None else run.finding.note or None,
            "checks": [{"layer": c.layer, "offset": c.offset, "field": c.field, "stored": c.stored,
                        "expected": c.expected, "ok": c.ok, "reason": c.reason, "status": c.status,
                        "added": c.was is None and c.layer not in (SKB_CSUM, "packet"), "cause": c.cause,
                        "mistakes": list(c.mistakes)} for c in run.results]}


def judge_program(path: str, packets: Packets, *, section: str | None = None, prog: str | None = None,
                  type: str | None = None, maps: Mapping[str, Any] | None = None,
                  globals: Mapping[str, Any] | None = None, ctx: Mapping[str, Any] | None = None,
                  csum_states: Sequence[str] = (), states_name: str = "csum_states") -> Judged:
    """Load the program of the object ``path`` (:func:`csum.kernel.prog.load`'s arguments) on the running kernel, run
    it on every frame of ``packets`` (:func:`sample_frames`) and judge it, in each checksum state of ``csum_states``
    too (tc only: else CsumValueError naming ``states_name``). Raises what :func:`csum.kernel.prog.load` raises."""
    with load(path, section=section, prog=prog, type=type, maps=maps, globals=globals, ctx=ctx) as program:
        check_states(csum_states, path, program.info.name, program.kind, states_name)
        runs = [(i, frame, program.run(frame)) for i, frame in packets.frames]
        info, kind, unpinned, evidence = program.info, program.kind, program.unpinned, program.evidence
    found = states_of(csum_states, runs, evidence)
    summary = summarize(run for _, _, run in runs)
    notes = []
    if unpinned:
        notes.append("maps the object asks to pin (LIBBPF_PIN_BY_NAME), loaded fresh here, not pinned and not reused: "
                     + ", ".join(m.name for m in unpinned))
    if not summary.changed and not summary.dropped:
        notes.append("the program changed no packet and dropped none, so nothing it does was tested (a program that "
                     "needs its maps or globals seeded does nothing without them: --map, --global)")
    if kind == "tc" and not any(s.state == "partial" for s in found):
        notes.append(PARTIAL_NOTE + "; --csum-state partial judges them")
    return Judged(path, info, kind, packets.source, runs, found, summary, notes)
