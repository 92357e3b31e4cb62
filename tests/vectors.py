"""Readers for the committed test vectors under tests/vectors/ (see each file's header for its source)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).parent / "vectors"


def _hex(field: str) -> bytes:
    return b"" if field == "-" else bytes.fromhex(field)


def _rows(path: Path) -> list[list[str]]:
    return [line.split() for line in path.read_text().splitlines() if line and not line.startswith("#")]


@dataclass(frozen=True)
class PartialCase:
    align: int
    seed: int
    result: int
    data: bytes


def partial_cases(path: Path) -> list[PartialCase]:
    """``align seed result data`` lines of a tests/vectors/csum_partial/*.txt file."""
    return [PartialCase(int(a), int(s, 16), int(r, 16), _hex(d)) for a, s, r, d in _rows(path)]


def partial_line(name: str, lineno: int, text: str) -> PartialCase:
    """Line ``lineno`` of tests/vectors/csum_partial/<name>.txt, checked to read ``text`` (so a test cites it)."""
    line = (ROOT / "csum_partial" / f"{name}.txt").read_text().splitlines()[lineno - 1]
    assert line == text, f"{name}.txt:{lineno} is {line!r}"
    align, seed, result, data = line.split()
    return PartialCase(int(align), int(seed, 16), int(result, 16), _hex(data))


@dataclass(frozen=True)
class DiffCase:
    seed: int
    result: int
    frm: bytes
    to: bytes


def diff_cases(path: Path) -> list[DiffCase]:
    """``seed result from to`` lines of a tests/vectors/bpf_csum_diff/*.txt file (result -22 = EINVAL)."""
    out = []
    for s, r, f, t in _rows(path):
        out.append(DiffCase(int(s, 16), int(r) if r.startswith("-") else int(r, 16), _hex(f), _hex(t)))
    return out


@dataclass(frozen=True)
class SelftestCase:
    name: str
    frm: bytes
    to: bytes
    seed: int
    result: int


def selftest_cases(endian: str) -> list[SelftestCase]:
    """test_csum_diff.c's 16 cases, buffers laid out as native u64 arrays of a CPU of byte order ``endian``."""
    cases = []
    counts: dict[str, int] = {}
    for group, to_len, from_len, seed, res_le, res_be, to_words, from_words in _rows(ROOT / "test_csum_diff_selftest.txt"):
        def buf(words: str, length: str) -> bytes:
            raw = b"".join(int(w, 16).to_bytes(8, endian) for w in words.split(",")) if words != "-" else b""  # type: ignore[arg-type]
            return raw.ljust(int(length), b"\0")[: int(length)]

        counts[group] = counts.get(group, 0) + 1
        cases.append(SelftestCase(f"{group}{counts[group]}", buf(from_words, from_len), buf(to_words, to_len),
                                  int(seed, 16), int(res_le if endian == "little" else res_be, 16)))
    return cases
