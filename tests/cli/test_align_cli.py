"""Buffer alignment in the helpers and the CLI (csum diff/compare --align, kernel-check --qemu arguments), and
csum.rewrite's recorded alignment.

Expected values come from the armhf and ppc64el 7.2.13 kernels booted under QEMU
(tests/vectors/qemu/*-7.2.txt lines quoted in each docstring) and from include/linux/skbuff.h
(NET_IP_ALIGN 2 by default) with the skb->data addresses those boots measured.
"""

from __future__ import annotations

import json
import os

import pytest
from scapy.all import IP, TCP, Ether

import csum
from csum.cli import main
from csum.rewrite import rewrite


def test_profile_diff_at_real_addresses():
    """armhf 7.2: `diff 0,1 pkt N _ 00000000 R ff*12 -` gave 0x0000 at 0 and 4 mod 8, 0xffff at 1, 2, 5, 7."""
    arm = csum.profile("arm")
    got = {a: arm.bpf_csum_diff(b"\xff" * 12, b"", 0, frm_align=a) for a in (0, 1, 2, 4, 5, 7)}
    assert got == {0: 0, 1: 0xFFFF, 2: 0xFFFF, 4: 0, 5: 0xFFFF, 7: 0xFFFF}
    ppc = csum.profile("powerpc64le")  # ppc64el 7.2: ff*16 seed 0xffffffff: 0 -> 0x0000, 4..7 -> 0xffff
    assert ppc.bpf_csum_diff(b"\xff" * 16, b"", 0xFFFFFFFF, frm_align=0) == 0
    assert {ppc.bpf_csum_diff(b"\xff" * 16, b"", 0xFFFFFFFF, frm_align=a) for a in (4, 5, 6, 7)} == {0xFFFF}
    assert csum.bpf_csum_diff(b"\xff" * 12, b"", 0, frm_align=5) == csum.bpf_csum_diff(b"\xff" * 12, b"")


def test_align_arguments_are_checked():
    """An align outside 0..7 names the argument."""
    with pytest.raises(csum.CsumValueError, match="to_align must be in 0..7"):
        csum.profile("arm").bpf_csum_diff(b"", b"\xff", to_align=8)
    with pytest.raises(csum.CsumTypeError, match="frm_align must be an int"):
        csum.bpf_csum_diff(b"", b"", frm_align="2")


def test_cli_diff_shows_the_address_dependence(capsys):
    """`csum diff --profile arm` at from-align 2 prints the kernel's 0xffff and says the result depends on it."""
    assert main(["diff", "--profile", "arm", "--from", "ff" * 12, "--to", "", "--from-align", "2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["homogenized"] == 0xFFFF and out["from_align"] == 2
    assert set(out["homogenized_by_align"]) == {"0x0000", "0xffff"}
    assert main(["diff", "--profile", "arm", "--from", "ff" * 12, "--to", ""]) == 0
    assert "DEPENDS on them: 0x0000 at 16 of 64" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exc:
        main(["diff", "--from", "00", "--to", "", "--to-align", "9"])
    assert exc.value.code == 2 and "0..7" in capsys.readouterr().err


def test_cli_compare_align_column(capsys):
    """`csum compare --align`: DEP where pulling the input at another address changes the homogenized result
    (arm, ppc: 8 bytes of 0xff with seed 0xffffffff, cf. the armhf/ppc64el 7.2 boots), not on x86_64."""
    assert main(["compare", "--seed", "0xffffffff", "--align", "2", "--profiles", "arm,x86_64,powerpc64le",
                 "--json", "ffffffffffffffff"]) == 0
    rows = {r["profile"]: r for r in json.loads(capsys.readouterr().out)["rows"]}
    assert rows["arm"]["homogenized_align_dependent"] and rows["powerpc64le"]["homogenized_align_dependent"]
    assert not rows["x86_64"]["homogenized_align_dependent"]


def test_cli_kernel_check_qemu_argument_errors(capsys, tmp_path):
    """Bad kernel-check --qemu arguments are one-line errors with exit 2, and nothing is booted."""
    cases = [
        (["--qemu", "armhf"], "needs --kernel IMAGE or --debian"),
        (["--qemu", "vax", "--kernel", __file__], "unknown architecture 'vax'"),
        (["--qemu", "armhf", "--kernel", str(tmp_path / "missing")], "is not a file"),
        (["--kernel", __file__], "apply to --qemu runs"),
        (["--qemu", "armhf", "--kernel", __file__, "--debian", "unstable", "arm64"], "different architectures"),
    ]
    for argv, message in cases:
        assert main(["kernel-check", *argv]) == 2, argv
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_save_vectors_refuses_a_non_regular_file(tmp_path):
    """--save-vectors writes only regular files (atomically): a directory there is refused."""
    from csum.cli.args import UsageError, write_text

    with pytest.raises(UsageError, match="is a directory"):
        write_text(tmp_path, "x", "--save-vectors")
    target = tmp_path / "v.txt"
    write_text(target, "data\n", "--save-vectors")
    assert target.read_text() == "data\n" and os.listdir(tmp_path) == ["v.txt"]


def test_rewrite_records_where_the_buffers_sit():
    """The saddr field is read in place at skb->data + 26: NET_IP_ALIGN 2 (arm: measured 2 mod 8) -> 4 mod 8;
    x86_64 (NET_IP_ALIGN 0) -> 2 mod 8; the new address comes from an 8-byte aligned stack slot (0)."""
    frame = bytes(Ether() / IP(src="10.0.0.2", dst="192.0.2.1") / TCP())
    for arch, want in (("arm", (4, 0)), ("x86_64", (2, 0)), ("powerpc64le", (2, 0))):
        (call,) = [c for c in rewrite(frame, saddr="203.0.113.7", arch=arch).csum_diffs]
        assert (call.frm_align, call.to_align) == want
        prof = csum.profile(arch)
        assert call.result == prof.bpf_csum_diff(call.frm, call.to, 0, frm_align=want[0])
    (dcall,) = rewrite(frame, daddr="203.0.113.7", arch="arm").csum_diffs
    assert dcall.frm_align == 0  # 2 + 30
