"""``csum prog --csum-state``: the checksum states of a tc program's skb judged (csum.kernel.states), as ``csum prog``
prints them for the running kernel and for each kernel booted under QEMU."""

from __future__ import annotations

from typing import Any


def states_of(asked: list[str], runs: list[tuple[int, bytes, Any]], evidence: Any) -> list[Any]:
    """--csum-state's states judged (none asked: [])."""
    if not asked:
        return []
    from ..kernel import states

    chosen = states.STATES if "all" in asked else [st for st in states.STATES if st in asked]
    return states.judge_states({i: (frame, run) for i, frame, run in runs}, evidence, chosen)


def states_fail(found: list[Any]) -> bool:
    """A state breaks packets, or has packets csum cannot judge (never passed)."""
    return any(st.broken or st.unjudged for st in found)


def state_doc(st: Any) -> dict[str, Any]:
    """One state's ``csum_states`` entry of ``--json``."""
    return {"state": st.state, "ip_summed": st.ip_summed, "how": st.how, "judged": st.judged,
            "broken_packets": len(st.broken), "broken": list(st.broken), "unjudged": list(st.unjudged),
            "why": dict(st.why), "note": st.note}


def state_lines(found: list[Any], indent: str) -> list[str]:
    """The text block of the states judged (``indent``: before every line)."""
    lines = [f"{indent}checksum states (run: the kernel's test runs; modelled: csum's models, no test run makes "
             "the state):"]
    for st in found:
        lines.append(f"{indent}  {st.line()}")
        lines += [f"{indent}    {n} packets: {why}" for why, n in st.why]
        if st.how != "not run":
            lines.append(f"{indent}    ({st.note})")
    failing = [st.ip_summed for st in found if st.broken]
    lines.append(f"{indent}states that break the program: {', '.join(failing) or 'none'}"
                 + "".join(f"; {st.ip_summed}: {len(st.unjudged)} packets csum cannot judge (not passed)"
                           for st in found if st.unjudged))
    return lines
