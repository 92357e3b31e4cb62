"""csum/capture/html_report.py and ``csum verify --by host`` / ``--html``: the report a person looks at.

Expected values: tests/senders.py's tallies of what scapy built (hosts, their kinds of field, the verdicts), never
csum's own counts; the browser test renders the page in Chromium (Debian's package, installed by .ci/run) and
reads the numbers back from the DOM Chromium built and the colours from its screenshot.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess

import pytest
import senders
from scapy.utils import wrpcap

from csum.capture.html_report import render
from csum.capture.scan import scan
from csum.cli import main

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture
def sample(tmp_path):
    packets, exp = senders.build()
    path = tmp_path / "sample.pcap"
    wrpcap(str(path), packets)
    return str(path), exp


def _verdict_items(exp: senders.Expected) -> list[str]:
    """The verdict lines in the page's order: offload hosts, then the others, each by most fields (then address)."""
    order = sorted(exp.hosts, key=lambda h: (-sum(sum(v) for v in exp.hosts[h].values()), h))
    v = exp.verdicts()
    return ([f"offload on {h}" for h in order if v[h] == "offload"]
            + [f"corruption or a bug on {h}" for h in order if v[h] != "offload"])


def test_by_host_json_is_what_scapy_built(sample, capsys):
    """``--json --by host``: every host's bad and offload counts and verdict, every flow, as tallied from scapy's
    packets; exit 1 (there are bad checksums)."""
    path, exp = sample
    assert main(["verify", path, "--json", "--by", "host"]) == 1
    doc = json.loads(capsys.readouterr().out)["by_host"]
    assert {h["src"]: (h["bad"], h["offload"], h["verdict"]) for h in doc["hosts"]} == {
        h: (sum(v[0] for v in ls.values()), sum(v[1] for v in ls.values()), exp.verdicts()[h])
        for h, ls in exp.hosts.items()}
    assert {(f["src"], f["dst"], f["proto"], -1 if f["sport"] is None else f["sport"],
             -1 if f["dport"] is None else f["dport"]): [f["bad"], f["offload"], f["first_ns"], f["last_ns"]]
            for f in doc["flows"]} == exp.flows
    assert doc["verdict"] == "; ".join(_verdict_items(exp))


def test_by_host_text(sample, capsys):
    """The text report gets a row per host (address, bad, offload, verdict) and the verdict line."""
    path, exp = sample
    main(["verify", path, "--by", "host", "--show", "20"])
    out = capsys.readouterr().out
    for h, layers in exp.hosts.items():
        bad, off = sum(v[0] for v in layers.values()), sum(v[1] for v in layers.values())
        assert re.search(rf"^  {re.escape(h)}\s+{bad}\s+{off}  {exp.verdicts()[h]} ", out, re.M), h
    assert f"verdict: {'; '.join(_verdict_items(exp))}" in out
    main(["verify", path])
    assert "by source host" not in capsys.readouterr().out
    main(["verify", path, "--by", "host", "--show", "0"])  # no rows, how many there are
    out = capsys.readouterr().out
    assert f"(first 0 of {len(exp.hosts)})" in out and f"verdict: {len(exp.hosts)} hosts, not listed" in out


def test_by_host_refused_with_jsonl_and_dask(sample, capsys):
    """--by host with --format jsonl, --html with --dask: one line naming the option, exit 2."""
    path, _ = sample
    assert main(["verify", path, "--by", "host", "--format", "jsonl"]) == 2
    assert "--by host" in capsys.readouterr().err
    assert main(["verify", path, "--html", "r.html", "--dask", "local"]) == 2
    assert "--html: not with --dask" in capsys.readouterr().err


def test_page_is_self_contained_and_escaped(tmp_path):
    """No script, no stylesheet or image to fetch, no URL but the SVG namespace; a file name holding markup shows as
    text, never as markup."""
    packets, _ = senders.build()
    path = tmp_path / '<script>alert("x")<\\script>&.pcap'
    wrpcap(str(path), packets)
    page = render([scan(str(path), hosts=True)])
    assert "<script" not in page and "&lt;script&gt;alert(&quot;x&quot;)&lt;\\script&gt;&amp;.pcap" in page
    assert not re.search(r"\b(src|href)\s*=", page) and "<link" not in page
    assert re.findall(r"https?://[^\s\"']+", page) == ["http://www.w3.org/2000/svg"]


def test_html_written_atomically_only_to_regular_files(sample, tmp_path, capsys):
    """--html refuses a directory, the input, a symbolic link (unless --follow-symlinks: the file it points to is
    replaced, the link stays), and '-', each in one line before anything is read (exit 2); a good target gets the
    page."""
    path, _ = sample
    for bad, why in [(str(tmp_path), "is a directory"), (path, "is the input"), ("-", "must be a file name")]:
        assert main(["verify", path, "--html", bad]) == 2
        err = capsys.readouterr().err
        assert why in err and err.count("\n") == 1 and "Traceback" not in err
    real, link = tmp_path / "real.html", tmp_path / "link.html"
    real.write_text("old")
    os.symlink(real, link)
    assert main(["verify", path, "--html", str(link)]) == 2
    assert "symbolic link" in capsys.readouterr().err and real.read_text() == "old"
    assert main(["verify", path, "--html", str(link), "--follow-symlinks"]) == 1
    assert link.is_symlink() and real.read_text().startswith("<!DOCTYPE html>")
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".csum-")] == []


def _chromium(*args: str) -> subprocess.CompletedProcess:
    # not under a preloaded sanitizer runtime (tools/sanitized.py's run): the browser is not csum's C
    env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS")}
    return subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                           "--user-data-dir=" + args[0], *args[1:]], capture_output=True, text=True, timeout=120,
                          env=env)


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (Debian package chromium; .ci/run installs it)")
def test_page_in_a_real_browser(sample, tmp_path):
    """Chromium (headless) renders the page: the DOM it builds holds the verdicts and a row per host with the counts
    tallied from scapy's packets; its screenshot shows the offload (blue) and corruption (red) colours of the CSS."""
    path, exp = sample
    page = tmp_path / "report.html"
    assert main(["verify", path, "--html", str(page)]) == 1
    profile = str(tmp_path / "profile")
    dom = _chromium(profile, "--dump-dom", page.as_uri())
    assert dom.returncode == 0, dom.stderr
    items = re.findall(r'<li class="(?:offload|corrupt)">(.*?)</li>', dom.stdout)
    assert [re.sub(r"<[^>]+>", "", i) for i in items] == _verdict_items(exp)
    rows = {}
    for row in re.findall(r'<tr class="host">(.*?)</tr>', dom.stdout):
        cells = [re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row)]
        rows[cells[0]] = (int(cells[1]), int(cells[2]), cells[3])
    assert rows == {h: (sum(v[0] for v in ls.values()), sum(v[1] for v in ls.values()), exp.verdicts()[h])
                    for h, ls in exp.hosts.items()}
    shot = tmp_path / "shot.png"
    run = _chromium(profile, f"--screenshot={shot}", "--window-size=1000,900", page.as_uri())
    assert run.returncode == 0 and shot.exists(), run.stderr
    image = pytest.importorskip("PIL.Image").open(shot).convert("RGB")
    colours = {colour for _, colour in image.getcolors(maxcolors=1 << 24)}
    assert image.size == (1000, 900)
    assert (0xE8, 0xF1, 0xFB) in colours and (0xFD, 0xEC, 0xEA) in colours  # li.offload, li.corrupt backgrounds


#: Appended to a copy of the report (the report itself has no script): on load, the window's width, the page's
#: scroll width and each table's right edge, as JSON in a <pre id="measure"> that --dump-dom then shows.
_MEASURE = ('<script>addEventListener("load", () => { const m = document.createElement("pre"); m.id = "measure";'
            ' m.textContent = JSON.stringify({inner: innerWidth, scroll: document.documentElement.scrollWidth,'
            ' tables: [...document.querySelectorAll("table")].map(t => [t.id, t.getBoundingClientRect().right])});'
            ' document.body.appendChild(m); })</script>')


def _long_ipv6_flows(path) -> None:
    """A capture whose flows have the longest text an endpoint takes: IPv6 addresses of eight 4-digit groups with
    5-digit ports, over TCP, UDP and ICMPv6, each with a wrong checksum (so each flow and host is listed)."""
    from scapy.layers.inet import TCP, UDP
    from scapy.layers.inet6 import ICMPv6EchoRequest, IPv6
    from scapy.layers.l2 import Ether

    packets = []
    for i in range(40):
        a, b = (":".join(f"{0xA000 + 97 * i + 13 * j + k:x}" for j in range(8)) for k in (0, 5))
        l4 = [TCP(sport=65000 + i, dport=44300, chksum=0x1234), UDP(sport=65000 + i, dport=55353, chksum=0x1234),
              ICMPv6EchoRequest(cksum=0x1111)][i % 3]
        packet = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") / IPv6(src=a, dst=b) / l4 / (b"x" * 20)
        packet.time = 1_700_000_000 + i
        packets.append(packet)
    wrpcap(str(path), packets)


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (Debian package chromium; .ci/run installs it)")
def test_tables_fit_a_1280_pixel_window(tmp_path):
    """The report of a capture with the longest IPv6 flow endpoints fits a 1280-px wide window: Chromium's own
    measure (headless, --window-size=1280,900) of the page's scroll width is at most the window's width, and every
    table (per host, per flow) ends inside it. Expected values: Chromium's layout (before the CSS let addresses wrap,
    the page of this capture was 1519 px wide)."""
    capture, page = tmp_path / "long.pcap", tmp_path / "report.html"
    _long_ipv6_flows(capture)
    assert main(["verify", str(capture), "--html", str(page)]) == 1
    text = page.read_text()
    assert text.count('<tr class="flow">') == 40 and "[a000:a00d:" in text  # the long endpoints are on the page
    probe = tmp_path / "probe.html"
    probe.write_text(text.replace("</body>", _MEASURE + "</body>"))
    run = _chromium(str(tmp_path / "profile"), "--window-size=1280,900", "--virtual-time-budget=2000", "--dump-dom",
                    probe.as_uri())
    assert run.returncode == 0, run.stderr
    found = re.findall(r'<pre id="measure">(.*?)</pre>', run.stdout)
    assert found, run.stdout[-2000:]
    measure = json.loads(found[0])
    assert measure["inner"] == 1280
    assert measure["scroll"] <= 1280, measure
    right = dict(measure["tables"])
    assert {"hosts", "flows"} <= set(right) and max(right.values()) <= 1280, measure
