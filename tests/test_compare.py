"""csum/crossarch.py: the cross-profile table against the kernel-produced vectors."""

import pytest

import csum
from csum.crossarch import compare, wire16
from vectors import ROOT, partial_cases


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
    assert wire16(rows["generic"].csum_partial, "little") == wire16(rows["generic-be"].csum_partial, "big")
    assert all(r.same_wire_as_generic for r in rows.values())
    assert not rows["x86_64"].same_bits_as_reference  # an unfolded 32-bit sum, not generic's 16 bits
