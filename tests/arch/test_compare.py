"""csum/arch/crossarch.py: the cross-profile table against the kernel-produced vectors."""

import pytest
from vectors import ROOT, partial_cases

import csum
from csum.arch.crossarch import compare, field16


def _aligned_cases(name: str):
    path = ROOT / "csum_partial" / f"{name}.txt"
    return [c for c in partial_cases(path) if c.align == 0 and len(c.data) in (3, 20, 60)][:6] if path.exists() else []


@pytest.mark.parametrize("name", [n for n in csum.profile_names() if (ROOT / "csum_partial" / f"{n}.txt").exists()])
def test_rows_carry_the_kernels_values(name):
    """Each row's csum_partial is the value that architecture's compiled kernel code returned (vector files)."""
    for case in _aligned_cases(name):
        (row,) = compare(case.data, case.seed, [name])
        assert row.csum_partial == case.result


def test_wire_agreement_across_byte_orders():
    """Folded to 16 bits and laid out in memory, LE and BE generic agree on the checksum-field bytes."""
    data = bytes(range(1, 60))
    rows = {r.profile: r for r in compare(data, 0, ["generic", "generic-be", "x86_64", "s390x"])}
    assert field16(rows["generic"].csum_partial, "little") == field16(rows["generic-be"].csum_partial, "big")
    assert all(r.same_wire_as_generic for r in rows.values())
    assert not rows["x86_64"].same_bits_as_reference  # an unfolded 32-bit sum, not generic's 16 bits


def test_field16_is_the_fields_bytes_of_a_register_value():
    """field16 folds a u32 register value (0x1234 + 0xabcd = 0xbe01, worked by hand) and lays it out
    in that CPU's byte order: 01 be on a little-endian CPU, be 01 on a big-endian one; the checksum
    scapy computes (a big-endian WireSum) has the same field bytes as the register value's layout."""
    assert field16(0x1234ABCD, "little") == b"\x01\xbe"
    assert field16(0x1234ABCD, "big") == b"\xbe\x01"
    from scapy.utils import checksum

    data = bytes(range(7, 40))
    assert field16(csum.ip_compute_csum(data), "little") == checksum(data).to_bytes(2, "big")


