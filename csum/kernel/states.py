"""A tc program under every checksum state an skb arrives in (``skb->ip_summed``, include/linux/skbuff.h), judged
from its test runs on the running kernel where the kernel can make the state, and from csum's models where it cannot.

BPF_PROG_TEST_RUN (net/bpf/test_run.c ``bpf_prog_test_run_skb``) builds a CHECKSUM_NONE skb, or, given
BPF_F_TEST_SKB_CHECKSUM_COMPLETE (Linux >= 6.11), a CHECKSUM_COMPLETE one whose ``skb->csum`` it checks after the run
(EBADMSG when stale). It takes no other flag and its ``struct __sk_buff`` context sets no ``ip_summed``: no test run
makes a CHECKSUM_UNNECESSARY or CHECKSUM_PARTIAL skb. So:

* ``none``: run (the default test run);
* ``complete``: run, where the kernel has the flag (the output bytes are the CHECKSUM_NONE run's: the helpers patch
  checksum fields alike on both, net/core/utils.c ``inet_proto_csum_replace4``; ``skb->csum`` is the kernel's
  verdict);
* ``unnecessary``: modelled: the helpers patch checksum fields as on CHECKSUM_NONE (they act differently only on
  PARTIAL and COMPLETE), so the bytes are the CHECKSUM_NONE run's; a program calling ``bpf_csum_level`` (whose
  answer depends on the state) is not modelled;
* ``partial``: modelled by :func:`csum.rewrite.mistakes.on_partial` (the ways the program may work that reproduce
  its real runs, made again on a CHECKSUM_PARTIAL skb as veth and virtio deliver it, finished as the NIC would).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ..rewrite.mistakes import NOT_PARTIAL, Evidence, Mistake, on_partial
from .prog import SKB_CSUM, Run
from .verdict import BROKEN, judge

__all__ = ["IP_SUMMED", "STATES", "StateResult", "judge_states"]

#: The states, in the order of include/linux/skbuff.h's CHECKSUM_* values.
STATES = ("none", "unnecessary", "complete", "partial")
#: Each state's kernel name.
IP_SUMMED = {"none": "CHECKSUM_NONE", "unnecessary": "CHECKSUM_UNNECESSARY", "complete": "CHECKSUM_COMPLETE",
             "partial": "CHECKSUM_PARTIAL"}
_RUN, _MODELLED, _NOT_RUN = "run", "modelled", "not run"
_RESIZED = re.compile(r" \(\d+ -> \d+ bytes\)")  # one note for every resized packet
_UNNECESSARY_WHY = ("the bytes are the CHECKSUM_NONE run's (the helpers patch checksum fields alike); the receiving "
                    "stack trusts the L4 checksum without verifying it, so a broken one passes here and fails after "
                    "the next hop")
_PARTIAL_WHY = {
    Mistake.PSEUDO_HDR_MISSING: "an address change without BPF_F_PSEUDO_HDR leaves the old addresses' pseudo-header "
                                "seed in the L4 checksum field; the NIC finishes a checksum over the old addresses",
    Mistake.PSEUDO_HDR_ON_PORT: "BPF_F_PSEUDO_HDR on a port's update moves the seed by a change the NIC sums again",
}
_BY_HAND_WHY = ("the program writes the L4 checksum itself: on a CHECKSUM_PARTIAL skb the field holds the "
                "pseudo-header seed, not a checksum, and the NIC sums the payload again on top of what was written")


@dataclass(frozen=True)
class StateResult:
    """One state's verdicts: ``how`` "run" (the kernel's test runs), "modelled" (csum's models) or "not run" (with
    ``note`` saying why); ``judged``: packets with a verdict; ``broken``: the indexes of the packets the program
    breaks in this state; ``unjudged``: packets csum cannot judge in it (never counted as right); ``why``: each
    reason the packets break, with how many; ``note``: how the state was made, or why it was not."""

    state: str
    how: str
    judged: int
    broken: tuple[int, ...]
    unjudged: tuple[int, ...]
    why: tuple[tuple[str, int], ...]
    note: str

    @property
    def ip_summed(self) -> str:
        return IP_SUMMED[self.state]

    def line(self) -> str:
        """``CHECKSUM_PARTIAL (modelled): 12 of 40 packets broken, 3 unjudged``."""
        un = f", {len(self.unjudged)} csum cannot judge" if self.unjudged else ""
        if self.how == _NOT_RUN:
            return f"{self.ip_summed} ({self.how}): {self.note}"
        return f"{self.ip_summed} ({self.how}): {len(self.broken)} of {self.judged} packets broken{un}"


def _bytes_broken(run: Run) -> bool:
    return any(c.status == BROKEN and c.layer != SKB_CSUM for c in run.broken)


def _none(runs: Mapping[int, tuple[bytes, Run]]) -> StateResult:
    live = {i: r for i, (_, r) in runs.items() if not r.dropped}
    broken = tuple(i for i, r in live.items() if _bytes_broken(r))
    return StateResult("none", _RUN, len(live), broken, (), (("checksum fields the program broke", len(broken)),)
                       if broken else (), "BPF_PROG_TEST_RUN's own skb")


def _complete(runs: Mapping[int, tuple[bytes, Run]]) -> StateResult:
    live = {i: r for i, (_, r) in runs.items() if not r.dropped}
    if live and all(r.stale is None for r in live.values()):
        return StateResult("complete", _NOT_RUN, 0, (), (), (), "this kernel has no BPF_F_TEST_SKB_CHECKSUM_COMPLETE "
                           "(Linux < 6.11)")
    why: Counter[str] = Counter()
    for r in live.values():
        if r.stale:
            why["skb->csum left stale (the kernel's test run: EBADMSG): the stack drops the packet"] += 1
        if _bytes_broken(r):
            why["checksum fields the program broke"] += 1
    broken = tuple(i for i, r in live.items() if r.stale or _bytes_broken(r))
    return StateResult("complete", _RUN, len(live), broken, (), tuple(why.most_common()),
                       "BPF_F_TEST_SKB_CHECKSUM_COMPLETE; the output bytes are the CHECKSUM_NONE run's")


def _unnecessary(runs: Mapping[int, tuple[bytes, Run]], evidence: Evidence | None) -> StateResult:
    live = {i: r for i, (_, r) in runs.items() if not r.dropped}
    if evidence is None or "bpf_csum_level" in evidence:
        what = "calls bpf_csum_level" if evidence is not None else "may call bpf_csum_level (its calls are not known)"
        unjudged = tuple(i for i, r in live.items() if r.changed)
        return StateResult("unnecessary", _MODELLED, len(live) - len(unjudged), (), unjudged, (),
                           f"the program {what}, whose answer depends on the state: its changed packets are not "
                           "modelled")
    broken = tuple(i for i, r in live.items() if _bytes_broken(r))
    return StateResult("unnecessary", _MODELLED, len(live), broken, (), ((_UNNECESSARY_WHY, len(broken)),)
                       if broken else (), "no test run makes one: " + _UNNECESSARY_WHY.split(";")[0])


def _partial_why(mistakes: frozenset[Mistake], by_hand: bool) -> str:
    named = [_PARTIAL_WHY[m] for m in sorted(mistakes) if m in _PARTIAL_WHY]
    if named:
        return "; ".join(named)
    if by_hand:
        return _BY_HAND_WHY
    if mistakes:
        return "the program's own mistake (" + ", ".join(sorted(mistakes)) + ") carried onto the finished checksum"
    return "the program's updates do not fit a pending checksum offload"


def _partial(runs: Mapping[int, tuple[bytes, Run]], evidence: Evidence | None) -> StateResult:
    broken, unjudged = [], []
    why: Counter[str] = Counter()
    judged = other = 0
    notes: Counter[str] = Counter()
    for i, (frame, run) in runs.items():
        if run.dropped:
            continue
        ways, note = on_partial(frame, run.packet, stale=run.stale, evidence=evidence)
        if note == NOT_PARTIAL:
            other += 1  # no offload pending on such a packet
            continue
        if not run.changed:
            judged += 1  # nothing changed: the NIC finishes the checksum as it arrived
            continue
        if not ways:
            unjudged.append(i)
            notes[_RESIZED.sub("", note)] += 1
            continue
        verdicts = {any(c.status == BROKEN for c in judge(frame, finished).checks): (m, hand)
                    for m, hand, finished in ways}
        if len(verdicts) > 1:
            unjudged.append(i)
            notes["the ways the program may work (each reproducing its real runs) finish differently on a "
                  "CHECKSUM_PARTIAL skb; a kernel with BPF_F_TEST_SKB_CHECKSUM_COMPLETE tells more of them apart"] += 1
            continue
        judged += 1
        if True in verdicts:
            broken.append(i)
            why[_partial_why(*verdicts[True])] += 1
    note = "no test run makes one: csum.skb.Skb.checksum_partial (the L4 field holds the pseudo-header seed, as veth " \
        "and virtio deliver it), the program's reproduced updates, the NIC's finish (skb_checksum_help)"
    if other:
        note += f"; {other} packets without a TCP/UDP checksum have no CHECKSUM_PARTIAL state"
    if notes:
        note += "; not judged: " + "; ".join(f"{n} packets: {text}" for text, n in notes.most_common())
    return StateResult("partial", _MODELLED, judged, tuple(broken), tuple(unjudged), tuple(why.most_common()), note)


def judge_states(runs: Mapping[int, tuple[bytes, Run]], evidence: Evidence | None,
                 states: Iterable[str] = STATES) -> list[StateResult]:
    """Each of ``states`` for a tc program's runs (packet index -> (input frame, :class:`csum.prog.Run`) from
    :meth:`csum.prog.Program.run`); ``evidence``: the checksum helpers it calls (:attr:`csum.prog.Program.evidence`)."""
    out = []
    for state in states:
        if state == "none":
            out.append(_none(runs))
        elif state == "complete":
            out.append(_complete(runs))
        elif state == "unnecessary":
            out.append(_unnecessary(runs, evidence))
        else:
            out.append(_partial(runs, evidence))
    return out
