"""The fuzz targets' committed inputs replayed by the normal suite: every seed (fuzz/corpus/<target>/) and every
input a fuzzer found (fuzz/regressions/<target>/, each named after what it found) passes its target, the
differential of fuzz/fuzz_<target>.py (C against the Python reference: the Python walker, the Python pcap walk, the
pure-Python engine). And the targets can fail: each one raises on a C answer made wrong on purpose, and
fuzz/seeds.py still writes exactly the committed seeds."""

from __future__ import annotations

import dataclasses
import importlib
import os
import sys
from pathlib import Path

import pytest

from csum import engine

FUZZ = Path(__file__).resolve().parents[2] / "fuzz"
sys.path.append(str(FUZZ))  # fuzz_common and the targets (appended: the csum already imported stays the one used)

TARGETS = ("walker", "chunks", "records", "fix", "sums", "rewrite", "rowtext", "command", "explain")
pytestmark = pytest.mark.skipif(engine.cwalk is None or "c" not in engine.ENGINES,
                                reason="csum's C is not built or CSUM_ENGINE is not c: the targets test C")


#: ``CSUM_FUZZ_REPLAY=seeds``: the seeds and regressions only, not the inputs fuzz/run.py --merge kept (the leak check
#: of tools/sanitized.py, whose slow unwinder could not afford them all).
SEEDS_ONLY = os.environ.get("CSUM_FUZZ_REPLAY") == "seeds"


def _inputs() -> list:
    merged = importlib.import_module("run").merged
    return [pytest.param(target, path, id=f"{path.parent.parent.name}/{target}/{path.name}")
            for target in TARGETS for kind in ("corpus", "regressions")
            for path in sorted((FUZZ / kind / target).glob("*")) if path.is_file() and not path.name.startswith(".")
            and not (SEEDS_ONLY and merged(path))]


@pytest.mark.parametrize("target, path", _inputs())
def test_committed_input_passes(target, path):
    """A seed or a regression input: C and the Python reference agree on it (and nothing crashes)."""
    importlib.import_module(f"fuzz_{target}").one_input(path.read_bytes())


def test_seeds_are_what_seeds_py_writes():
    """fuzz/corpus/ is fuzz/seeds.py's output (scapy builds the frames) and the inputs fuzz/run.py --merge kept (each
    named after the SHA-1 of its bytes): no seed edited by hand, none missing, nothing else."""
    seeds = importlib.import_module("seeds")
    run = importlib.import_module("run")
    for target, make in seeds.SEEDS.items():
        made = make()
        on_disk = {p.name: p.read_bytes() for p in (FUZZ / "corpus" / target).iterdir() if not run.merged(p)}
        assert on_disk == made, f"fuzz/corpus/{target} differs from fuzz/seeds.py's output: run python fuzz/seeds.py"


def test_merged_inputs_stay_within_the_cap():
    """The merged inputs of each target's corpus are at most run.MERGE_CAP bytes, each at most MERGE_MAX_INPUT."""
    run = importlib.import_module("run")
    for target in TARGETS:
        sizes = [p.stat().st_size for p in (FUZZ / "corpus" / target).iterdir() if run.merged(p)]
        assert sum(sizes) <= run.MERGE_CAP and all(s <= run.MERGE_MAX_INPUT for s in sizes), target


def test_admit_keeps_the_smallest_new_inputs_under_the_cap(tmp_path, monkeypatch):
    """run.admit: a merge's inputs go in smallest first under their SHA-1 names (hashlib's, computed here), an input
    over MERGE_MAX_INPUT or past MERGE_CAP is left out, one already there is not added again, seeds do not count."""
    import hashlib

    run = importlib.import_module("run")
    monkeypatch.setattr(run, "MERGE_CAP", 100)
    monkeypatch.setattr(run, "MERGE_MAX_INPUT", 60)
    corpus, found = tmp_path / "corpus", tmp_path / "found"
    corpus.mkdir()
    found.mkdir()
    (corpus / "a-seed").write_bytes(bytes(500))  # a seed: not a merged input, not counted
    old = b"o" * 30
    (corpus / hashlib.sha1(old).hexdigest()).write_bytes(old)
    inputs = {"big": b"b" * 61, "forty": b"f" * 40, "twenty": b"t" * 20, "again": old, "thirty-five": b"h" * 35}
    for name, data in inputs.items():
        (found / name).write_bytes(data)
    added = run.admit(sorted(found.iterdir()), corpus)
    # 30 there; +20 = 50, +35 = 85, 40 would make 125 > 100; 61 > 60 never
    assert [p.name for p in added] == [hashlib.sha1(inputs[k]).hexdigest() for k in ("twenty", "thirty-five")]
    assert all(run.merged(p) for p in added) and not run.merged(corpus / "a-seed")
    assert sum(p.stat().st_size for p in corpus.iterdir() if run.merged(p)) == 85


class _Wrong:
    """The C walker with one answer made wrong: verify's first Result's ``computed`` off by one, pcap_records'
    first record dropped, check_chunk's first counted code one level deeper, or the last Result of each packet
    check_chunk reports failing with ``computed`` off by one."""

    def __init__(self, real, what: str) -> None:
        self._real, self._what = real, what

    def __getattr__(self, name):
        return getattr(self._real, name)

    def verify(self, packet, link):
        got = self._real.verify(packet, link)
        if self._what == "verify" and got:
            got[0] = dataclasses.replace(got[0], computed=(got[0].computed or 0) ^ 1)
        return got

    def pcap_records(self, data, pos, big, most, *variant):
        offs, caps, origs, end = self._real.pcap_records(data, pos, big, most, *variant)
        return (offs[8:], caps[8:], origs[8:], end) if self._what == "records" and offs else (offs, caps, origs, end)

    def check_chunk(self, *args):
        counts, fast, walk, reported, closed, peak, cut = self._real.check_chunk(*args)
        if self._what == "check_chunk" and counts:
            counts[0] = (counts[0][0] + self._real.DEPTH, counts[0][1])  # one level deeper (layer + DEPTH * depth)
        return counts, fast, walk, reported, closed, peak, cut

    def results(self, kept):
        results = self._real.results(kept)
        if self._what == "reported":
            results[-1] = dataclasses.replace(results[-1], computed=(results[-1].computed or 0) ^ 1)
        return results


@pytest.mark.parametrize("target, what, seed", [("walker", "verify", "eth-ipv4-tcp"),
                                                ("chunks", "check_chunk", "stacks-0"),
                                                ("records", "records", "pcap-le-us"),
                                                ("fix", "reported", "bad-ipv4-tcp")])
def test_targets_catch_a_wrong_c_answer(monkeypatch, target, what, seed):
    """Each target's differential fails when the C side is wrong (so a passing replay means agreement)."""
    data = (FUZZ / "corpus" / target / seed).read_bytes()
    module = importlib.import_module(f"fuzz_{target}")
    module.one_input(data)
    monkeypatch.setattr(engine, "cwalk", _Wrong(engine.cwalk, what))
    with pytest.raises(AssertionError, match="differ"):
        module.one_input(data)


def test_sums_target_catches_a_wrong_sum(monkeypatch):
    """fuzz_sums fails when the C engine's ones_sum is off by one."""
    module = importlib.import_module("fuzz_sums")
    data = (FUZZ / "corpus" / "sums" / "ramp-257-offset3-w32").read_bytes()
    module.one_input(data)
    real = engine.ENGINES["c"]
    monkeypatch.setitem(engine.ENGINES, "c", real._replace(ones_sum=lambda *a: real.ones_sum(*a) ^ 1))
    with pytest.raises(AssertionError, match="differ"):
        module.one_input(data)



def test_sums_target_catches_a_wrong_fast_path(monkeypatch):
    """fuzz_sums fails when a loop helper's C fast path (here internet_checksum's) answers one bit off while its
    Python body is right: the target compares the two."""
    import csum

    module = importlib.import_module("fuzz_sums")
    data = (FUZZ / "corpus" / "sums" / "ipv4-header-w16").read_bytes()
    module.one_input(data)
    real = csum.internet_checksum

    def fast_paths_on() -> bool:
        on = engine._speedups.set_fast_paths(True)
        engine._speedups.set_fast_paths(on)
        return on

    monkeypatch.setattr(csum, "internet_checksum", lambda buf: real(buf) ^ fast_paths_on())
    with pytest.raises(AssertionError, match="internet_checksum: C and the Python reference differ"):
        module.one_input(data)


class _WrongRewriter:
    """The C capture rewriter with its output's last byte flipped."""

    def __init__(self, real) -> None:
        self._real = real

    def __getattr__(self, name):
        return getattr(self._real, name)

    def rewrite(self, *args):
        data, *rest = self._real.rewrite(*args)
        return (data[:-1] + bytes([data[-1] ^ 1]), *rest)


def test_rewrite_target_catches_a_wrong_c_answer(monkeypatch):
    """fuzz_rewrite fails when the C rewriter's bytes differ from the Python engine's in one bit."""
    module = importlib.import_module("fuzz_rewrite")
    data = (FUZZ / "corpus" / "rewrite" / "stacks-0-nat4").read_bytes()
    module.one_input(data)
    monkeypatch.setattr(engine, "crewrite", _WrongRewriter(engine.crewrite))
    with pytest.raises(AssertionError, match="rewrite_chunk's bytes: C and the Python reference differ"):
        module.one_input(data)


def test_rowtext_target_catches_a_wrong_row(monkeypatch):
    """fuzz_rowtext fails when the C formatter's text differs from Python's by one byte (its first digit changed)."""
    module = importlib.import_module("fuzz_rowtext")
    data = (FUZZ / "corpus" / "rowtext" / "three-rows").read_bytes()
    module.one_input(data)
    real = engine.cwalk

    class Shifted:
        def __getattr__(self, name):
            return getattr(real, name)

        @staticmethod
        def format_rows(*args):
            text = real.format_rows(*args)
            return text.replace(b"1", b"2", 1)

    monkeypatch.setattr(engine, "cwalk", Shifted())
    with pytest.raises(AssertionError, match="differ"):
        module.one_input(data)


def test_command_target_catches_a_wrong_rewriter(monkeypatch):
    """fuzz_command fails when the C rewriter's bytes differ from the Python engine's in one bit (``csum rewrite``'s
    written file)."""
    module = importlib.import_module("fuzz_command")
    data = (FUZZ / "corpus" / "command" / "command6-stacks-0").read_bytes()
    module.one_input(data)
    monkeypatch.setattr(engine, "crewrite", _WrongRewriter(engine.crewrite))
    with pytest.raises(AssertionError, match="bytes written: C and the Python reference differ"):
        module.one_input(data)


def test_command_target_catches_a_wrong_row_and_a_traceback(monkeypatch):
    """fuzz_command fails when the C side's rows differ (``csum verify --format jsonl``'s file: the C formatter's
    first "1" written as "2"), and when a command ends in a traceback instead of one ``csum:`` line."""
    module = importlib.import_module("fuzz_command")
    data = (FUZZ / "corpus" / "command" / "command0-stacks-0").read_bytes()
    module.one_input(data)
    real = engine.cwalk

    class Shifted:
        def __getattr__(self, name):
            return getattr(real, name)

        @staticmethod
        def format_rows(*args):
            return real.format_rows(*args).replace(b"1", b"2", 1)

    with monkeypatch.context() as patch:
        patch.setattr(engine, "cwalk", Shifted())
        with pytest.raises(AssertionError, match="differ"):
            module.one_input(data)
    from csum.cli import verify

    def broken(args):
        raise RuntimeError("a bug")

    monkeypatch.setattr(verify, "run", broken)
    with pytest.raises(RuntimeError, match="a bug"):
        module.one_input(data)


def test_explain_target_catches_a_wrong_hypothesis(monkeypatch):
    """fuzz_explain fails when the C hypotheses' first value is one off from the Python's (csum/explain/hypotheses.py,
    the reference)."""
    module = importlib.import_module("fuzz_explain")
    data = (FUZZ / "corpus" / "explain" / "eth-bad-ipv4-tcp").read_bytes()
    module.one_input(data)
    real = engine.cexplain

    class Off:
        def __getattr__(self, name):
            return getattr(real, name)

        def alone(self, *args):
            got = real.alone(*args)
            return got if not got else [(got[0][0], got[0][1] ^ 1, *got[0][2:]), *got[1:]]

    monkeypatch.setattr(engine, "cexplain", Off())
    with pytest.raises(AssertionError, match="C and the Python reference differ"):
        module.one_input(data)
