"""Rewrite.format("tc") / format("xdp"): the printed C compiles (clang -target bpf), loads, and makes on the running
kernel the bytes csum.rewrite returns.

Expected bytes: csum.rewrite's output, itself checked against scapy's recomputation (tests/rewrite/test_rewrite.py) and the
kernel's helpers (tests/rewrite/test_bpf_replace_kernel.py); here the kernel runs the generated program (BPF_PROG_TEST_RUN)
and the tc form also passes the kernel's CHECKSUM_COMPLETE check. Skipped where clang, libbpf or BPF are missing.
"""

from __future__ import annotations

import warnings

import pytest
from bpf_build import compile_bpf, why_not
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from csum.errors import CsumValueError
from csum.kernel import prog
from csum.rewrite import rewrite
from csum.testing import packets, sample_packets

pytestmark = pytest.mark.skipif(why_not() is not None, reason=str(why_not()))


def _run(source: str, kind: str, frame: bytes, tmp_path) -> prog.Run:
    src = tmp_path / f"gen_{kind}.c"
    src.write_text(source)
    with prog.load(str(compile_bpf(src, tmp_path / f"gen_{kind}.o"))) as program:
        return program.run(frame)


def _changes(data, frame: bytes) -> dict:
    size = 4 if frame[14] >> 4 == 4 else 16
    has_ports = frame[14 + (9 if size == 4 else 6)] in (6, 17)
    addr = st.one_of(st.none(), st.binary(min_size=size, max_size=size))
    port = st.one_of(st.none(), st.sampled_from([0, 0xFFFF]), st.integers(0, 0xFFFF))
    return dict(saddr=data.draw(addr), daddr=data.draw(addr), decrement_ttl=data.draw(st.booleans()),
                sport=data.draw(port) if has_ports else None, dport=data.draw(port) if has_ports else None)


@pytest.mark.parametrize("kind", ["tc", "xdp"])
def test_generated_program_makes_rewrites_bytes_on_kernel(kind, tmp_path, record_property):
    """Invariant: for generated IPv4/IPv6 TCP/UDP/ICMP frames and NAT changes (addresses, ports, TTL/hop limit;
    all-zero and all-ones payloads hit the 0x0000/0xffff corners), the compiled program's output is csum.rewrite's
    packet byte for byte, and the tc form leaves a valid skb->csum. Expected: csum.rewrite; run: the kernel."""
    count = 0

    @settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))  # a clang run per example
    @given(packets(max_payload=64).map(prog.ethernet), st.data())
    def check(frame, data) -> None:
        nonlocal count
        changes = _changes(data, frame)
        if frame[14] >> 4 == 4 and frame[14 + 8] == 0:
            changes["decrement_ttl"] = False
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            r = rewrite(frame, **changes)
        run = _run(r.format(kind), kind, frame, tmp_path)
        assert run.packet.hex() == r.packet.hex()
        assert run.retval == (0 if kind == "tc" else 2)  # TC_ACT_OK / XDP_PASS
        assert all(c.ok is not False for c in run.results if c.layer == prog.SKB_CSUM)
        count += 1

    check()
    record_property("kernel_checked", count)


@pytest.mark.parametrize("kind", ["tc", "xdp"])
def test_generated_program_fits_every_packet_of_the_layout(kind, tmp_path, record_property):
    """The program reads old values from the packet: generated from one IPv4/TCP frame, it gives csum.rewrite's
    bytes on 40 other frames of that layout (other addresses, ports, TTLs, payload bytes, checksums)."""
    frames = [prog.ethernet(p) for p in sample_packets(600, seed=5, max_payload=40)]
    tcp = [f for f in frames if f[14] == 0x45 and f[23] == 6 and f[22] > 0][:41]  # IPv4 (no options), TCP, TTL > 0
    changes = dict(saddr="198.51.100.7", dport=8080, decrement_ttl=True)
    src = tmp_path / "layout.c"
    src.write_text(rewrite(tcp[0], **changes).format(kind))
    with prog.load(str(compile_bpf(src, tmp_path / "layout.o"))) as program:
        for frame in tcp[1:]:
            assert program.run(frame).packet == rewrite(frame, **changes).packet
    assert len(tcp) == 41
    record_property("kernel_checked", len(tcp) - 1)


def test_format_kinds_and_names():
    """format() keeps its call listing; bad kinds and names are clear errors."""
    frame = prog.ethernet(sample_packets(1, seed=1)[0])
    r = rewrite(frame, decrement_ttl=frame[14 + (8 if frame[14] >> 4 == 4 else 7)] > 0)
    assert r.format() == "\n".join(str(c) for c in r.calls)
    assert 'SEC("xdp")\nint nat(struct xdp_md *ctx)' in r.format("xdp", name="nat")
    with pytest.raises(CsumValueError, match="kind must be"):
        r.format("c")
    with pytest.raises(CsumValueError, match="C identifier"):
        r.format("tc", name="not a name")
