"""csum/cli.py: exit codes, messages and output, in-process and as real subprocesses."""

import json
import subprocess
import sys

import pytest

import csum
from csum.cli import main
from csum.sample import SAMPLE_PACKET


def test_default_runs_compare_on_the_sample(capsys):
    """`python -m csum` with no arguments prints the cross-architecture table of the embedded sample."""
    assert main([]) == 0
    out = capsys.readouterr().out
    assert "embedded sample" in out
    for name in csum.profile_names():
        assert f"\n{name} " in out


def test_sample_is_a_valid_ipv4_tcp_packet():
    """The embedded sample's IPv4 and TCP checksums verify (scapy recomputes the same bytes)."""
    from scapy.layers.inet import IP, TCP

    pkt = IP(SAMPLE_PACKET)
    del pkt.chksum
    del pkt[TCP].chksum
    assert bytes(pkt) == SAMPLE_PACKET


def test_compare_json_values_come_from_profiles(capsys):
    """--json rows carry each profile's csum_partial and homogenized diff for the given hex input."""
    assert main(["compare", "ffffff", "--profiles", "x86_64,generic", "--json"]) == 0
    rows = {r["profile"]: r for r in json.loads(capsys.readouterr().out)["rows"]}
    assert rows["x86_64"]["csum_partial"] == 0xFFFFFF  # tests/vectors/csum_partial/x86_64.txt: ff ff ff -> 0x00ffffff
    assert rows["generic"]["csum_partial"] == 0xFF
    assert rows["x86_64"]["legacy_diff"] == -22


@pytest.mark.parametrize("argv,needle", [
    (["compare", "zz"], "not a hex string"),
    (["compare", "--file", "/nonexistent/file"], "cannot read"),
    (["compare", "00", "--profiles", "vax"], "unknown profile"),
    (["compare", "00", "--seed", str(1 << 32)], "seed"),
])
def test_bad_input_exits_2_with_one_line(argv, needle, capsys):
    """Bad input: exit 2, one line `csum: <what> failed for <input>: <reason>` on stderr, no traceback."""
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("csum: compare failed for ") and needle in err and err.count("\n") == 1


def test_compare_reads_a_file(tmp_path, capsys):
    """--file reads bytes from a file and never modifies it."""
    path = tmp_path / "pkt.bin"
    path.write_bytes(SAMPLE_PACKET)
    assert main(["compare", "--file", str(path), "--profiles", "generic"]) == 0
    assert path.read_bytes() == SAMPLE_PACKET
    assert "60 bytes" in capsys.readouterr().out


def test_subprocess_main_command_and_version():
    """The README's main command runs as a real process; --version names the engine."""
    run = subprocess.run([sys.executable, "-m", "csum"], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0 and "x86_64" in run.stdout and not run.stderr
    ver = subprocess.run([sys.executable, "-m", "csum", "--version"], capture_output=True, text=True, timeout=60)
    assert ver.returncode == 0 and "engine:" in ver.stdout


def test_subprocess_usage_error_has_no_traceback():
    run = subprocess.run([sys.executable, "-m", "csum", "compare", "xyz"], capture_output=True, text=True, timeout=60)
    assert run.returncode == 2 and "Traceback" not in run.stderr


def test_kernel_check_command(capsys):
    """kernel-check: exit 0 when every case agrees with the running kernel, 2 when it cannot be reached."""
    from csum import kernel

    code = main(["kernel-check", "--n", "200", "--seed", "7"])
    captured = capsys.readouterr()
    if kernel.available():
        assert code == 0 and "200 cases" in captured.out
    else:
        assert code == 2 and kernel.why_unavailable() in captured.err
