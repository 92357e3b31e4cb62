"""``csum verify --html REPORT.html``: the report as one self-contained HTML page a person can look at.

One file, nothing fetched: inline CSS, the timeline as inline SVG, no script. It shows the verdict per source host
(:meth:`csum.capture.hosts.Hosts.verdict`: "offload on HOST" when every bad-or-offload checksum from that address
is transmit offload's partial sum, "corruption or a bug on HOST" when any is a real bad checksum), the totals per
protocol and status, each file read, the table per source host and per flow, and when the bad and offload fields
were seen. Every text taken from a capture (file names, addresses, reasons) is escaped (:func:`html.escape`).
The page is the same for the same inputs (no time of writing in it), so it can be compared and tested.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from .hosts import Hosts, clock, endpoint
from .report import STATUSES
from .scan import Scan, merged

__all__ = ["COLUMNS", "MAX_ROWS", "render"]

#: The most bars across the timeline (its buckets are merged, 2 into 1, until they fit).
COLUMNS = 120
#: The most rows of the host and flow tables (the page says how many more there are).
MAX_ROWS = 500

_CSS = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #1d1d1f; background: #fff; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 17px; margin: 28px 0 8px; }
p.files { color: #555; margin: 0 0 16px; }
table { border-collapse: collapse; margin: 4px 0; max-width: 100%; }
th, td { padding: 3px 10px; border-bottom: 1px solid #e3e3e3; text-align: right; white-space: nowrap; }
th { background: #f4f4f6; font-weight: 600; } td.t, th.t { text-align: left; } td.t { white-space: normal; }
td.addr { font-family: ui-monospace, monospace; text-align: left; white-space: normal; overflow-wrap: anywhere;
          min-width: 22ch; }
svg { max-width: 100%; height: auto; }
ul.verdict { list-style: none; padding: 0; margin: 8px 0; }
ul.verdict li { padding: 6px 10px; margin: 4px 0; border-radius: 4px; font-weight: 600; }
li.offload, span.offload { background: #e8f1fb; color: #0b4f8a; }
li.corrupt, span.corrupt { background: #fdecea; color: #a4161a; }
li.clean { background: #eaf6ec; color: #1e6b2e; }
span.offload, span.corrupt { padding: 1px 6px; border-radius: 3px; font-weight: 600; }
td.bad { color: #a4161a; font-weight: 600; } td.zero { color: #aaa; }
p.note { color: #555; font-size: 13px; }
svg text { font: 11px system-ui, sans-serif; fill: #444; }
"""


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _num(n: int, bad: bool = False) -> str:
    cls = "zero" if not n else "bad" if bad else ""
    return f'<td class="{cls}">{n}</td>' if cls else f"<td>{n}</td>"


def _verdicts(h: Hosts | None) -> str:
    if h is None:
        return '<p class="note">Not collected.</p>'
    if h.hosts is None:
        return f'<p class="note">{_e(h.verdict_line())}</p>'
    ranked = h.ranked_hosts()
    if not ranked:
        return '<ul class="verdict"><li class="clean" id="verdict">no bad or offload checksum from any host</li></ul>'
    items = [f'<li class="offload">offload on <span class="host">{_e(src)}</span></li>'
             for src in ranked[:MAX_ROWS] if h.verdict(src) == "offload"]
    items += [f'<li class="corrupt">{_e(h.verdict(src))} on <span class="host">{_e(src)}</span></li>'
              for src in ranked[:MAX_ROWS] if h.verdict(src) != "offload"]
    more = f'<p class="note">and {len(ranked) - MAX_ROWS} more hosts</p>' if len(ranked) > MAX_ROWS else ""
    return f'<ul class="verdict" id="verdict">{"".join(items)}</ul>{more}'


def _totals(total: Scan) -> str:
    head = "".join(f"<th>{_e(s)}</th>" for s in STATUSES)
    rows = "".join(f'<tr><td class="t">{_e(key)}</td>'
                   + "".join(_num(c.get(s, 0), s == "bad") for s in STATUSES) + "</tr>"
                   for key, c in total.report.counts.items())
    return f'<table id="totals"><tr><th class="t">protocol</th>{head}</tr>{rows}</table>'


def _files(scans: Sequence[Scan]) -> str:
    rows = []
    for s in scans:
        r = s.report
        stop = "" if s.stop is None else _e(s.stop)
        rows.append(f'<tr><td class="t">{_e(s.name)}</td><td class="t">{_e(s.format)}</td><td>{r.packets}</td>'
                    f'{_num(r.total("bad"), True)}{_num(r.total("offload"))}{_num(r.total("malformed"))}'
                    f'{_num(r.total("cut"))}<td class="t">{stop}</td></tr>')
    return ('<table id="files"><tr><th class="t">file</th><th class="t">format</th><th>packets</th><th>bad</th>'
            '<th>offload</th><th>malformed</th><th>cut</th><th class="t">stopped</th></tr>' + "".join(rows)
            + "</table>")


def _hosts(h: Hosts) -> str:
    if h.hosts is None:
        return '<p class="note">More source hosts than csum lists: not listed.</p>'
    ranked = h.ranked_hosts()
    if not ranked:
        return '<p class="note">No bad or offload checksum.</p>'
    rows = []
    for src in ranked[:MAX_ROWS]:
        bad, off = h.totals(src)
        verdict = h.verdict(src)
        cls = "offload" if verdict == "offload" else "corrupt"
        layers = ", ".join(f"{_e(k)} {v[0]} bad / {v[1]} offload" for k, v in sorted(h.hosts[src].items()))
        rows.append(f'<tr class="host"><td class="addr">{_e(src)}</td>{_num(bad, True)}{_num(off)}'
                    f'<td class="t"><span class="{cls}">{_e(verdict)}</span></td><td class="t">{layers}</td></tr>')
    more = f'<p class="note">and {len(ranked) - MAX_ROWS} more hosts</p>' if len(ranked) > MAX_ROWS else ""
    return ('<table id="hosts"><tr><th class="t">source host</th><th>bad</th><th>offload</th>'
            '<th class="t">verdict</th><th class="t">by protocol</th></tr>' + "".join(rows) + "</table>" + more)


def _flows(h: Hosts) -> str:
    if h.flows is None:
        return '<p class="note">More flows than csum lists: not listed.</p>'
    flows = h.ranked_flows()
    if not flows:
        return '<p class="note">No flow with a bad or offload checksum.</p>'
    rows = [f'<tr class="flow"><td class="addr">{_e(endpoint(f.src, f.sport))}</td>'
            f'<td class="addr">{_e(endpoint(f.dst, f.dport))}</td><td class="t">{_e(f.proto)}</td>'
            f'{_num(v[0], True)}{_num(v[1])}<td class="t">{_e(clock(v[2]))}</td><td class="t">{_e(clock(v[3]))}</td>'
            "</tr>" for f, v in flows[:MAX_ROWS]]
    more = f'<p class="note">and {len(flows) - MAX_ROWS} more flows</p>' if len(flows) > MAX_ROWS else ""
    return ('<table id="flows"><tr><th class="t">source</th><th class="t">destination</th><th class="t">protocol</th>'
            '<th>bad</th><th>offload</th><th class="t">first</th><th class="t">last</th></tr>' + "".join(rows)
            + "</table>" + more)


def _timeline(h: Hosts, width: int = 900, height: int = 160) -> str:
    """Bars per bucket (bad red, offload blue, stacked) over the time the fields span, as inline SVG."""
    if not h.timeline:
        return '<p class="note">No timestamped bad or offload checksum.</p>'
    shift = h.shift  # coarser for the picture: at most COLUMNS bars across the span (each still an exact count)
    while (max(h.timeline) >> (shift - h.shift)) - (min(h.timeline) >> (shift - h.shift)) >= COLUMNS:
        shift += 1
    grouped: dict[int, list[int]] = {}
    for b, (bad, off) in h.timeline.items():
        row = grouped.setdefault(b >> (shift - h.shift), [0, 0])
        row[0] += bad
        row[1] += off
    buckets = sorted(grouped.items())
    lo, hi = buckets[0][0], buckets[-1][0] + 1
    top = max(bad + off for _, (bad, off) in buckets)
    left, bottom, plot_w, plot_h = 40, 20, width - 50, height - 40
    step = plot_w / (hi - lo)
    bar = max(1.0, step * 0.9)
    parts = [f'<svg id="timeline" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" role="img" aria-label="bad and offload checksums over time">',
             f'<line x1="{left}" y1="{10 + plot_h}" x2="{left + plot_w}" y2="{10 + plot_h}" stroke="#999"/>',
             f'<text x="{left - 6}" y="14" text-anchor="end">{top}</text>',
             f'<text x="{left - 6}" y="{10 + plot_h}" text-anchor="end">0</text>']
    for b, (bad, off) in buckets:
        x = left + (b - lo) * step
        y = 10.0 + plot_h
        for n, colour, what in ((bad, "#c62828", "bad"), (off, "#1f77b4", "offload")):
            if n:
                hgt = plot_h * n / top
                y -= hgt
                parts.append(f'<rect class="{what}" x="{x:.1f}" y="{y:.1f}" width="{bar:.1f}" height="{hgt:.1f}" '
                             f'fill="{colour}"><title>{_e(clock(b << shift))}: {n} {what}</title></rect>')
    parts += [f'<text x="{left}" y="{height - 4}">{_e(clock(lo << shift))}</text>',
              f'<text x="{left + plot_w}" y="{height - 4}" text-anchor="end">{_e(clock(hi << shift))}</text>',
              "</svg>"]
    width_ms = (1 << shift) / 1e6
    untimed = sum(h.untimed)
    note = (f'<p class="note">Buckets of {width_ms:.3f} ms (UTC); <span class="corrupt">bad</span> '
            f'<span class="offload">offload</span>.' + (f" {untimed} fields without a timestamp." if untimed else "")
            + "</p>")
    return "".join(parts) + note


def render(scans: Sequence[Scan]) -> str:
    """The page for the captures ``scans`` (each checked with ``hosts=True``), their totals merged
    (:func:`csum.capture.scan.merged`)."""
    total = merged(scans)
    h = total.report.hosts
    names = ", ".join(s.name for s in scans)
    body = [f"<h1>csum verify: {len(scans)} capture{'s' if len(scans) != 1 else ''}, {total.report.packets} packets"
            f"</h1><p class=\"files\">{_e(names)}</p>",
            "<h2>Verdict</h2>", _verdicts(h),
            '<p class="note">A host gets "offload" when every bad-or-offload TCP/UDP checksum from its address holds '
            "transmit offload's partial sum (the pseudo-header sum the NIC completes: the capture was taken before "
            'the NIC), and it sent no real bad checksum of any protocol; any real bad checksum makes it "corruption '
            'or a bug", unless csum verify --explain found the cause: then the verdict names it (docs/explain.md).'
            '</p>',
            "<h2>Totals per protocol and status</h2>", _totals(total),
            "<h2>Files</h2>", _files(scans)]
    if h is not None:
        body += ["<h2>Bad and offload checksums over time</h2>", _timeline(h),
                 "<h2>Per source host</h2>", _hosts(h), "<h2>Per flow</h2>", _flows(h)]
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>csum verify: {_e(names)}</title><style>{_CSS}</style></head>\n<body>\n"
            + "\n".join(body) + "\n</body></html>\n")
