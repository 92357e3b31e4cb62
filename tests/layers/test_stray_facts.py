"""No protocol fact is written in csum's Python outside csum/layers/table.py (issue 31: link types, EtherTypes, IHL x 4,
address sizes and IP protocol numbers are read from the table by name), as tests/engine/test_c_arith.py and
tests/layers/test_cwalk_table.py hold the C to its one arithmetic and its generated header.

What counts as a stray fact, found in the syntax tree (so comments and docstrings do not count):
- a link type, EtherType or IP protocol number named as a constant (``LINKTYPE_RAW = 101``, ``ETH_P_IP = ...``);
- an EtherType written as a number (0x0800, 0x86DD, 0x8100, 0x88A8, 0x8847, 0x8848, 0x8864, ...);
- an address size chosen by version (``4 if ... else 16``);
- a header length from a 4-bit field times 4 (``(x & 0x0F) * 4``, ``(x & 0xF) << 2``, ``(x >> 4) * 4``,
  ``x % 16 * 4``);
- a protocol number, link type or EtherType compared with a number (``proto == 6``, ``linktype == 1``,
  ``nexthdr in (6, 17)``): a name ending in proto, protocol, nexthdr, linktype, link or ethertype.
Expected values: the numbers are IANA's and tcpdump.org's, as csum/layers/table.py cites them.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "csum"

#: EtherTypes (IEEE 802 numbers; include/uapi/linux/if_ether.h) that must not be written as numbers.
ETHERTYPES = {0x0800, 0x0806, 0x86DD, 0x8100, 0x88A8, 0x9100, 0x8847, 0x8848, 0x8863, 0x8864, 0x6558, 0x88BE,
              0x22EB, 0x880B, 0x88E5, 0x894F}
#: Names of link types, EtherTypes and IP protocol numbers as the kernel and libpcap spell them.
_FACT_NAME = re.compile(r"(LINKTYPE|DLT|ETH_P|IPPROTO|ETHERTYPE)_[A-Z0-9_]+$")
_NAMED = re.compile(r"(proto|protocol|nexthdr|next_header|linktype|ethertype)s?$", re.I)

#: Files left out, each with its reason.
ALLOWED = {
    "layers/table.py": "the table itself: every fact's one place",
}


def _name(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Subscript):
        return _name(node.value)
    return ""


def _ints(node: ast.AST) -> list[int]:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [v for e in node.elts for v in _ints(e)]
    return []


def _is(node: ast.AST, value: int) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is int and node.value == value


def _nibble(node: ast.AST) -> bool:
    """A 4-bit field: ``x & 0x0F`` (or ``0x0F & x``), ``x % 16``, ``x >> 4`` (a byte's high nibble)."""
    return isinstance(node, ast.BinOp) and (
        (isinstance(node.op, ast.BitAnd) and (_is(node.right, 0xF) or _is(node.left, 0xF)))
        or (isinstance(node.op, ast.Mod) and _is(node.right, 16)) or (isinstance(node.op, ast.RShift)
                                                                      and _is(node.right, 4)))


def stray(source: str) -> list[tuple[int, str]]:
    """(line, what) of every protocol fact written as a number in ``source``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Constant) and type(node.value) is int and node.value in ETHERTYPES:
            text = ast.get_source_segment(source, node) or ""
            if text.lower().startswith("0x"):
                found.append((line, f"EtherType {text}"))
        elif isinstance(node, ast.IfExp) and {(_ints(node.body) or [0])[0], (_ints(node.orelse) or [0])[0]} == {4, 16}:
            found.append((line, "an address size by version (4 if ... else 16)"))
        elif isinstance(node, ast.BinOp) and ((isinstance(node.op, ast.Mult) and _is(node.right, 4) and _nibble(node.left))
                                              or (isinstance(node.op, ast.LShift) and _is(node.right, 2)
                                                  and _nibble(node.left))):
            found.append((line, "a 4-bit header length times 4"))
        elif isinstance(node, ast.Assign) and _ints(node.value) and any(
                _FACT_NAME.match(_name(t)) for t in node.targets):
            found.append((line, f"{_name(node.targets[0])} = a number"))
        elif isinstance(node, ast.Compare) and any(isinstance(op, (ast.Eq, ast.NotEq, ast.In, ast.NotIn))
                                                   for op in node.ops):
            sides = [node.left, *node.comparators]
            if any(_NAMED.search(_name(s)) for s in sides) and any(_ints(s) for s in sides):
                found.append((line, f"{ast.get_source_segment(source, node)}: a protocol number compared"))
    return found


def test_the_detector_finds_each_kind():
    """Each kind of stray fact is found, and the table's names are not (the test can fail)."""
    bad = ("t = 0x86DD\nsize = 4 if v == 4 else 16\nhl = (b[0] & 0x0F) * 4\nhl2 = (b[0] & 0xF) << 2\n"
           "a = proto == 6\nb = ip.nexthdr in (6, 17)\nc = linktype != 1\nLINKTYPE_RAW = 101\n"
           "doff = (b[12] >> 4) * 4\nhl3 = b[0] % 16 * 4\n")
    assert sorted(line for line, _ in stray(bad)) == [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
    good = ("t = table.ETH_IPV6\nsize = table.ADDR_SIZES[v]\nhl = (b[0] & 0x0F) * table.IPV4_IHL_UNIT\n"
            "a = proto == table.TCP\nn = 2048\nm = 0x0800 if False else 0\n# 0x86DD in a comment\n")
    assert [what for _, what in stray(good)] == ["EtherType 0x0800"]
    assert stray("x = 16 if wide else 8\ny = count == 6\n") == []


def test_no_protocol_fact_outside_the_table():
    """csum's Python sources name the table's facts instead of writing their numbers (ALLOWED aside, with reasons)."""
    offenders = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel in ALLOWED:
            continue
        offenders += [f"csum/{rel}:{line}: {what}" for line, what in stray(path.read_text(encoding="utf-8"))]
    assert not offenders, "protocol facts written outside csum/layers/table.py:\n" + "\n".join(offenders)
