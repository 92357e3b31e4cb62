"""One C arithmetic (docs/design.md, issue 31): csum/engine/_arith.c/.h is linked into every C extension setup.py
builds, and no other C file under csum/engine folds or sums ("Never: a fold outside _arith").

The check reads the C without its comments and literals and looks for the ways C writes a one's-complement fold or
sum (every one of them was in _cwalk.c or _rewrite.c before they called _arith.h; test_the_check_finds_each_way
shows it finds each). A failure names the file, the line and the way: move that code to _arith.h (static inline
where a hot path calls it) and call it."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ENGINE = ROOT / "csum" / "engine"
ARITH = ("_arith.c", "_arith.h")
OTHERS = sorted(p.name for p in ENGINE.iterdir() if p.suffix in (".c", ".h") and p.name not in ARITH)

_MASK = r"(?:0x[fF]{4}(?:[fF]{4})?[uUlL]*|M16|M32)"
#: The ways C folds or sums, each with what it looks like.
WAYS = {
    "an end-around fold, (x & 0xffff) + (x >> 16)": re.compile(
        rf"&\s*{_MASK}\s*\)\s*\+\s*\(?[^;]*?>>\s*(?:16|32)\b|>>\s*(?:16|32)\s*\)?\s*\+\s*\(?[^;]*?&\s*{_MASK}"),
    "a fold loop, while (s >> 16)": re.compile(r"while\s*\(\s*\w+\s*>>\s*(?:16|32)\s*\)"),
    "a rotation by 16 or 32 bits, csum_from32to16's (x >> 16) | (x << 16)": re.compile(
        r">>\s*(16|32)\s*\)?\s*\|\s*\(?[^;|]*<<\s*\1\b|<<\s*(16|32)\s*\)?\s*\|\s*\(?[^;|]*>>\s*\2\b"),
    "an end-around carry, r + (r < a)": re.compile(r"\+\s*\(\s*\w+\s*<\s*\w+\s*\)"),
    "a sum of 16- or 32-bit words, s += le16(p + i)": re.compile(r"\+=\s*[^;{}]*\b(?:le|be)(?:16|32)\s*\("),
    "a sum of byte pairs, s += p[i] | p[i + 1] << 8": re.compile(
        r"\+=\s*[^;{}]*\[\s*\w+\s*\+\s*1\s*\]\s*<<\s*8|\+=\s*[^;{}]*<<\s*8\s*\)?\s*\|\s*\w+\s*\[\s*\w+\s*\+\s*1\s*\]"),
}
#: A function definition at the start of a line: its name.
_DEFINITION = re.compile(r"^[A-Za-z_][\w \t*]*?\b(\w+)\s*\([^;{}()]*\)\s*\{", re.M)
#: The names of folds and sums: the kernel's (include/net/checksum.h, lib/checksum.c) and the usual C ones.
_NAME = re.compile(r"fold|from\d+to\d+|^do_csum$|add_ea|^(?:csum16_|csum_)?(?:add|sub)(?:16|32|64)?$|"
                   r"^sum(?:16|32|64)$|^csum(?:16)?_(?:add|sub|partial|unfold)")


def _code(text: str) -> str:
    """``text`` without comments, string and character literals (newlines kept, so line numbers hold)."""
    def blank(m: re.Match[str]) -> str:
        return re.sub(r"[^\n]", " ", m.group(0))
    return re.sub(r"/\*.*?\*/|//[^\n]*|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'", blank, text, flags=re.S)


def findings(text: str) -> list[str]:
    """Where the C ``text`` folds or sums: "line N: the way" for each."""
    code = _code(text)
    found = []
    for way, pattern in WAYS.items():
        for m in pattern.finditer(code):
            found.append(f"line {code.count(chr(10), 0, m.start()) + 1}: {way}")
    for m in _DEFINITION.finditer(code):
        if _NAME.search(m.group(1)):
            found.append(f"line {code.count(chr(10), 0, m.start()) + 1}: a fold or sum function, {m.group(1)}()")
    return found


@pytest.mark.parametrize("name", OTHERS)
def test_no_c_file_but_arith_folds_or_sums(name):
    """Expected: nothing found (the design's rule, not a computed value); every file under csum/engine but _arith.c
    and _arith.h is read."""
    assert findings((ENGINE / name).read_text()) == []


def test_the_walker_and_the_rewriter_are_checked():
    """The files the rule is about are among those read (a renamed file would otherwise escape it)."""
    assert {"_cwalk.c", "_rewrite.c", "_speedups.c", "_rowtext.c"} <= set(OTHERS)


#: The folds and sums _cwalk.c and _rewrite.c wrote before issue 31 (from their history), one per way.
BEFORE = {
    "rewrite add32": "static inline uint32_t add32(uint32_t a, uint32_t b)\n{\n    uint64_t r = (uint64_t)a + b;\n"
                     "    return (uint32_t)((r & 0xffffffffu) + (r >> 32));\n}\n",
    "rewrite from32to16": "static inline uint32_t from32to16(uint32_t x)\n{\n    x += (x >> 16) | (x << 16);\n"
                          "    return x >> 16;\n}\n",
    "rewrite do_csum": "static uint32_t do_csum(const uint8_t *p, int n)\n{\n    uint32_t s = 0;\n"
                       "    for (int i = 0; i < n; i += 2)\n        s += le16(p + i);\n    while (s >> 16)\n"
                       "        s = (s & 0xffff) + (s >> 16);\n    return s;\n}\n",
    "rewrite offload": "    for (int i = 0; i < L->size; i += 2)\n"
                       "        s += be16(c->b + L->saddr + i) + be16(c->b + L->daddr + i);\n",
    "cwalk sum16": "    for (; i + 1 < n; i += 2)\n        s += p[i] | ((uint64_t)p[i + 1] << 8);\n",
    "cwalk sum16, big-endian": "    for (; i + 1 < n; i += 2)\n        s += ((uint64_t)p[i] << 8) | p[i + 1];\n",
    "cwalk pseudo-header": "        ps = ps0 + ((uint64_t)len >> 16) + (len & 0xffff);\n",
    "arith add_ea64": "static inline uint64_t add_ea64(uint64_t a, uint64_t b)\n{\n    uint64_t r = a + b;\n"
                      "    return r + (r < a);\n}\n",
}


@pytest.mark.parametrize("name", BEFORE)
def test_the_check_finds_each_way(name):
    """Expected: at least one finding in each piece of C that folds or sums (copied from the files' history), so the
    check above can fail; and none in the same piece as a comment."""
    assert findings(BEFORE[name])
    assert findings("/* " + BEFORE[name].replace("*/", "") + " */") == []


def test_the_check_leaves_byte_moves_alone():
    """Expected: no finding in the shifts that load and store bytes (the walkers' be32, a flow-label word written
    back), which are not arithmetic on checksums."""
    text = ("static inline uint32_t be32(const uint8_t *p)\n{\n"
            "    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];\n}\n"
            "    uint8_t v[4] = {(uint8_t)(nw >> 24), (uint8_t)(nw >> 16), (uint8_t)(nw >> 8), (uint8_t)nw};\n"
            "    uint32_t word = ((uint32_t)be16(b + L->l3) << 16) | be16(b + L->l3 + 2);\n")
    assert findings(text) == []


def test_every_extension_links_the_arithmetic():
    """Expected (docs/design.md): every extension setup.py declares compiles _arith.c and depends on _arith.h, and
    every C file under csum/engine is compiled into one of them."""
    import setuptools  # noqa: F401  (first: its distutils)
    from distutils.core import run_setup

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dist = run_setup(str(ROOT / "setup.py"), stop_after="init")
    extensions = dist.ext_modules
    assert {e.name for e in extensions} == {"csum.engine._speedups", "csum.engine._cwalk", "csum.engine._rewrite",
                                          "csum.engine._explain"}
    for e in extensions:
        assert "csum/engine/_arith.c" in e.sources, e.name
        assert "csum/engine/_arith.h" in e.depends, e.name
    compiled = {Path(s).name for e in extensions for s in e.sources}
    assert compiled == {p.name for p in ENGINE.glob("*.c")}


def test_the_check_finds_the_arithmetic_where_it_lives():
    """Expected: in _arith.h the check finds the include/net/checksum.h verbs (csum_add, csum_sub, csum16_add,
    csum16_sub, csum_from32to16, csum_fold), the folds to a width and the end-around carry: the ways match the
    arithmetic as it is written today, not only as it was."""
    found = "\n".join(findings((ENGINE / "_arith.h").read_text()))
    for name in ("csum_add32()", "csum_sub32()", "csum16_add()", "csum16_sub()", "csum_from32to16()", "csum_fold32()",
                 "csum_fold_to()", "csum_add_ea64()"):
        assert name in found
    assert "an end-around carry" in found and "a rotation by 16 or 32 bits" in found
