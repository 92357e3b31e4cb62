"""``csum prog --csum-state``: the checksum states of a tc program's skb judged (csum.kernel.states, through
csum.kernel.prog_run.states_of), as ``csum prog`` prints them for the running kernel and for each kernel booted under
QEMU."""

from __future__ import annotations

from typing import Any


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
