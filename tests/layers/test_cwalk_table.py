"""csum/engine/_cwalk_table.h is what tools/gen_cwalk_table.py makes of csum/layers/table.py: every protocol fact
the C walker and the C rewriter use comes from the one table (a difference fails here: regenerate the header)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from csum import engine
from csum.layers import table as T

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import gen_cwalk_table  # noqa: E402


def test_the_header_is_the_generated_one():
    """The committed header equals a fresh rendering of the table (the same check as ``--check``)."""
    assert gen_cwalk_table.HEADER.read_text() == gen_cwalk_table.render()
    run = subprocess.run([sys.executable, str(ROOT / "tools" / "gen_cwalk_table.py"), "--check"],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr


def test_a_changed_fact_changes_the_header(monkeypatch, tmp_path):
    """The generator reads the table it is given, not a copy: a table with the TCP checksum field moved renders
    another header (the check would then fail)."""
    table = (ROOT / "csum" / "layers" / "table.py").read_text()
    moved = table.replace('TCP_ENTRY = Protocol("tcp", 16,', 'TCP_ENTRY = Protocol("tcp", 18,')
    assert moved != table
    layers = tmp_path / "csum" / "layers"
    layers.mkdir(parents=True)
    (layers / "table.py").write_text(moved)
    (layers / "reasons.py").write_text((ROOT / "csum" / "layers" / "reasons.py").read_text())
    monkeypatch.setattr(gen_cwalk_table, "ROOT", tmp_path)
    text = gen_cwalk_table.render()
    assert "#define CT_TCP_FIELD 18" in text and text != gen_cwalk_table.HEADER.read_text()


@pytest.mark.parametrize("name, more", [
    ("_cwalk.c", ()),
    ("_walk.c", ()),  # the one C walker both link
    ("_walk.h", ()),
    ("_ipheaders.h", ()),  # the IP header primitives both share
    ("_encap.h", ()),  # the encapsulation headers both read
    # the rewriter's own: IPv4/IPv6 address and protocol offsets, VLAN ID, fragment bits, other TPIDs, units
    ("_rewrite.c", ("+ 12", "+ 16", "+ 24", "+ 9", "+ 10", "0x0fff", "0x1fff", "0x2000", "0x9100", "0x88a8", "* 8")),
])
def test_the_c_uses_no_number_the_table_does_not_give(name, more):
    """csum/engine/_cwalk.c (the walker), _rewrite.c (the capture rewriter), _ipheaders.h and _encap.h (what both read
    of IP and encapsulation headers) name their protocol facts (CT_* from the header): no EtherType, IP protocol number or header offset is written there as a literal."""
    src = (ROOT / "csum" / "engine" / name).read_text()
    assert '#include "_cwalk_table.h"' in src
    body = re.sub(r"/\*.*?\*/", "", src, flags=re.S)
    for literal in ("0x0800", "0x86dd", "0x6558", "0x88be", "0x22eb", "0x8100", "0xc2", "0xc9", "0x83", "0x89",
                    "4789", "+ 40", "+ 20", "+ 14", ") * 4", "? 101", "return 101", *more):  # IHL x 4, DLT_RAW
        assert literal not in body, literal
    assert not re.findall(r"\b(?:proto|nh|kind|ethertype)\s*[!=]=\s*\d", body)


@pytest.mark.skipif(engine.cwalk is None, reason="csum.engine._cwalk is not built or CSUM_ENGINE is not c")
def test_the_built_walker_reports_the_table_names():
    """The extension's layer names and key size are the table's (it was built from this header)."""
    names = {T.IPV4_HEADER.name, T.TCP_ENTRY.name, T.UDP_ENTRY.name, T.ICMP_ENTRY.name, T.ICMPV6_ENTRY.name,
             T.GRE_ENTRY.name}
    assert engine.cwalk.LAYERS[0] is None and set(engine.cwalk.LAYERS[1:]) == names
    assert engine.cwalk.KEY_BYTES == T.REASSEMBLY_KEY_BYTES
