"""csum/core/primitives.py and the Profile primitives: csum_tcpudp_nofold, csum_fold, ip_fast_csum per arch.

Expected values: tests/vectors/primitives/<profile>.txt, the kernel's own header code
(arch/*/include/asm/checksum.h, lib/checksum.c, include/asm-generic/checksum.h)
compiled with Debian's cross compilers and run under qemu-user outside this
repository (each file's header names the source commit, compiler and command).
"""

from __future__ import annotations

from pathlib import Path

import pytest

import csum
from csum.cli import main

ROOT = Path(__file__).parents[1] / "vectors" / "primitives"
FILES = sorted(ROOT.glob("*.txt"))


def _rows(path: Path) -> list[list[str]]:
    return [line.split() for line in path.read_text().splitlines() if line and not line.startswith("#")]


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_primitives_match_the_kernels_code(path):
    """Every csum_tcpudp_nofold / csum_fold / ip_fast_csum / csum_ipv6_magic value of the compiled kernel code."""
    p = csum.profile(path.stem)
    rows = _rows(path)
    assert sum(r[0] == "csum_tcpudp_nofold" for r in rows) >= 3000
    for r in rows:
        if r[0] == "csum_tcpudp_nofold":
            got = p.csum_tcpudp_nofold(bytes.fromhex(r[1]), bytes.fromhex(r[2]), int(r[3]), int(r[4]), int(r[5], 16))
            assert got == int(r[6], 16), r
        elif r[0] == "csum_fold":
            assert p.csum_fold(int(r[1], 16)) == int(r[2], 16), r
        elif r[0] == "csum_ipv6_magic":
            got = p.csum_ipv6_magic(bytes.fromhex(r[1]), bytes.fromhex(r[2]), int(r[3]), int(r[4]), int(r[5], 16))
            assert got == int(r[6], 16), r
        else:
            assert p.ip_fast_csum(bytes.fromhex(r[3]), int(r[1])) == int(r[2], 16), r


def test_generic_function_truncates_like_lib_checksum_c():
    """csum.csum_tcpudp_nofold == lib/checksum.c also for lengths >= 2**24, where (proto + len) << 8 wraps."""
    rows = [r for r in _rows(ROOT / "generic.txt") if r[0] == "csum_tcpudp_nofold"]
    big = [r for r in rows if int(r[3]) + int(r[4]) >= 1 << 24]
    assert len(big) > 500
    for r in rows:
        got = csum.csum_tcpudp_nofold(bytes.fromhex(r[1]), bytes.fromhex(r[2]), int(r[3]), int(r[4]), int(r[5], 16))
        assert got == int(r[6], 16), r


def test_arm_rotates_lenprot_and_stays_congruent():
    """arm adds len+proto rotated right by 8: a different u32 from generic (kernel vectors), same folded magic
    for lengths below 2**24 (every IPv4 length)."""
    arm, generic = csum.profile("arm"), csum.profile("generic")
    rows = [r for r in _rows(ROOT / "arm.txt") if r[0] == "csum_tcpudp_nofold" and int(r[3]) + int(r[4]) < 1 << 24]
    differ = 0
    for r in rows:
        args = (bytes.fromhex(r[1]), bytes.fromhex(r[2]), int(r[3]), int(r[4]), int(r[5], 16))
        differ += arm.csum_tcpudp_nofold(*args) != generic.csum_tcpudp_nofold(*args)
        assert arm.csum_tcpudp_magic(*args) == generic.csum_tcpudp_magic(*args)
    assert differ > len(rows) // 2
    # 10.0.0.1 -> 10.0.0.2, TCP, 20 bytes: the addresses load as 0x0100000a and 0x0200000a on a
    # little-endian CPU; arm then adds 26 rotated right by 8 (0x1a000000), lib/checksum.c 26 << 8 (0x1a00).
    assert arm.csum_tcpudp_nofold("10.0.0.1", "10.0.0.2", 20, 6) == 0x0300000A + 0x0000000A + 0x1A000000
    assert generic.csum_tcpudp_nofold("10.0.0.1", "10.0.0.2", 20, 6) == 0x0300000A + 0x0000000A + 0x1A00


def test_primitive_argument_errors():
    """Bad arguments name themselves."""
    p = csum.profile("arm")
    with pytest.raises(csum.CsumValueError, match="proto"):
        p.csum_tcpudp_nofold(bytes(4), bytes(4), 20, 256)
    with pytest.raises(csum.CsumValueError, match="ihl"):
        p.ip_fast_csum(bytes(20), 4)
    with pytest.raises(csum.CsumValueError, match="ihl=6 needs 24"):
        p.ip_fast_csum(bytes(20), 6)


def test_cli_compare_function(capsys):
    """`csum compare --function csum_tcpudp_nofold` marks arm's u32 DIFF (bits) but same (field)."""
    assert main(["compare", "--function", "csum_tcpudp_nofold", "--saddr", "0a000001", "--daddr", "0a000002",
                 "--len", "20", "--proto", "6", "--profiles", "generic,arm"]) == 0
    out = capsys.readouterr().out
    assert "0x1d000014 DIFF same" in out and "0x03001a14 same same" in out
    assert main(["compare", "--function", "ip_fast_csum", "0102"]) == 2
    assert "20..60 bytes" in capsys.readouterr().err


def test_mips64_keeps_proto_plus_len_in_64_bits():
    """mips64el.txt and mipsel.txt (arch/mips/include/asm/checksum.h built n64 and o32 by Debian's cross gcc, run
    under qemu-mips64el / qemu-mipsel, the same inputs): the 64-bit csum_tcpudp_nofold differs from the 32-bit one
    (lib/checksum.c's integers) only where proto + len >= 2**24 (the (__s32) cast sign-extends, the << 8 is 64-bit);
    below, in every IP length, the bits are the same."""
    m64, m32 = _rows(ROOT / "mips64el.txt"), _rows(ROOT / "mipsel.txt")
    assert [r[:-1] for r in m64] == [r[:-1] for r in m32]
    pairs = [(a, b) for a, b in zip(m64, m32) if a[0] == "csum_tcpudp_nofold"]
    small = [(a, b) for a, b in pairs if int(a[3]) + int(a[4]) < 1 << 24]
    assert len(small) > 1000 and all(a == b for a, b in small)
    assert sum(a != b for a, b in pairs) == 1169
    # Line 316 of each: proto + len = 0x96451d88, >= 2**31. o32 shifts it in 32 bits (0x451d8800, top byte lost);
    # n64 sign-extends it and shifts in 64 bits (0xffffff96451d8800), then folds end-around.
    def line_316(name: str) -> str:
        return (ROOT / name).read_text().splitlines()[315]
    assert line_316("mips64el.txt") == "csum_tcpudp_nofold 00000000 00000000 2521111721 223 00000000 451d8797"
    assert line_316("mipsel.txt") == "csum_tcpudp_nofold 00000000 00000000 2521111721 223 00000000 451d8800"
    args = (bytes(4), bytes(4), 2521111721, 223, 0)
    assert csum.profile("mips64el").csum_tcpudp_nofold(*args) == 0x451D8797
    assert csum.profile("mipsel").csum_tcpudp_nofold(*args) == 0x451D8800
