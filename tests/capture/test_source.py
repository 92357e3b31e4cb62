"""csum/capture/source.py: compressed captures read whole, or refused in one way for every format.

Expected values: the compressed data is made by Python's gzip, bz2 and lzma modules and the zstandard
package from bytes this test chooses; what a reader must return is those bytes (the format's own
decompressor agrees: each test decompresses the same data with it first). A stream cut anywhere before its
end, corrupt data and bytes after the last stream that are neither a new stream nor zero padding are
errors with the code ``bad-compression``, named the same way for every format.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from csum.capture.source import open_source
from csum.errors import Code, CsumValueError


def _zstd(data: bytes) -> bytes:
    """zstd with the content checksum the zstd tool writes by default (without it, zstd cannot tell corrupt
    data from other data)."""
    zstandard = pytest.importorskip("zstandard")
    return zstandard.ZstdCompressor(write_checksum=True).compress(data)


def _unzstd(blob: bytes) -> bytes:
    zstandard = pytest.importorskip("zstandard")
    return zstandard.ZstdDecompressor().stream_reader(io.BytesIO(blob), read_across_frames=True).read()


#: name -> (compress, the format's own decompressor)
FORMATS = {"gzip": (gzip.compress, gzip.decompress), "bzip2": (bz2.compress, bz2.decompress),
           "xz": (lzma.compress, lzma.decompress), "zstd": (_zstd, _unzstd)}
KINDS = list(FORMATS)
#: 64 KiB that compress a little (a counter and some repetition), as a capture does.
DATA = b"".join(i.to_bytes(4, "big") + b"pcap" * (i % 5) for i in range(4096))


def _read(tmp_path, blob: bytes, name: str = "in.pcap") -> bytes:
    path = tmp_path / name
    path.write_bytes(blob)
    with open_source(str(path)) as source:
        return source.stream.read()


def _refused(tmp_path, blob: bytes) -> str:
    with pytest.raises(CsumValueError) as err:
        _read(tmp_path, blob)
    assert err.value.code == Code.BAD_COMPRESSION and "\n" not in str(err.value)
    return str(err.value)


@pytest.mark.parametrize("kind", KINDS)
def test_whole_streams_and_concatenations_read_as_the_data(kind, tmp_path):
    """One stream, two streams back to back (as `cat a.gz b.gz`), and zero padding after the last stream (tape and
    xz stream padding) all read as the data the format's own decompressor gives."""
    pack, unpack = FORMATS[kind]
    blob = pack(DATA)
    assert unpack(blob) == DATA
    assert _read(tmp_path, blob) == DATA
    two = pack(DATA[:1000]) + pack(DATA[1000:])
    assert unpack(two) == DATA and _read(tmp_path, two) == DATA
    assert _read(tmp_path, blob + bytes(16)) == DATA


@pytest.mark.parametrize("kind", KINDS)
def test_a_cut_stream_ends_early_for_every_format(kind, tmp_path):
    """Cut at half, at a few bytes past the magic, and one byte short of the end: "compressed stream ends early",
    naming the format and the byte where the file stops, never a silent end of data (the bzip2 and zstd
    readers of the standard library and zstandard return nothing or a short read without complaint)."""
    blob = FORMATS[kind][0](DATA)
    for cut in (len(blob) // 2, 8, len(blob) - 1):
        message = _refused(tmp_path, blob[:cut])
        assert message.startswith("compressed stream ends early") and f"{kind} data stops at byte {cut}" in message


@pytest.mark.parametrize("kind", KINDS)
def test_trailing_garbage_is_refused_alike_for_every_format(kind, tmp_path):
    """Bytes after the last stream that are not another stream (nor zeros): refused, naming the offset where they
    start, for all four formats (Python's bz2 and lzma modules ignore them silently, gzip and zstandard raise
    their own different errors)."""
    blob = FORMATS[kind][0](DATA)
    message = _refused(tmp_path, blob + b"garbage!")
    assert message == f"the bytes from offset {len(blob)} of the file on are not {kind} data (trailing garbage " \
                      f"after the {kind} stream)"
    message = _refused(tmp_path, blob + bytes(8) + b"\x01")
    assert f"offset {len(blob)} " in message


@pytest.mark.parametrize("kind", KINDS)
def test_corrupt_data_is_refused_for_every_format(kind, tmp_path):
    """Bytes flipped inside the compressed data (past its header): refused as corrupt, one line, code
    bad-compression (the format's own decompressor raises too, checked first)."""
    blob = bytearray(FORMATS[kind][0](DATA))
    middle = len(blob) // 2
    blob[middle : middle + 8] = bytes(b ^ 0x5A for b in blob[middle : middle + 8])
    with pytest.raises(Exception):
        FORMATS[kind][1](bytes(blob))
    message = _refused(tmp_path, bytes(blob))
    assert f"the {kind} data" in message


@settings(max_examples=200)
@given(cut=st.integers(min_value=0), kind=st.sampled_from(KINDS))
def test_every_cut_point_is_an_early_end_or_the_whole_data(cut, kind, tmp_path_factory):
    """A stream cut at any byte: either the whole data (the cut is at or past the end) or "compressed stream
    ends early" (a cut before the magic bytes is not compressed input at all and reads as itself)."""
    blob = FORMATS[kind][0](DATA)
    cut %= len(blob) + 1
    tmp = tmp_path_factory.mktemp("cut")
    if cut == len(blob):
        assert _read(tmp, blob) == DATA
    elif cut < 6 and not blob[:cut].startswith((b"\x1f\x8b", b"BZh", b"\x28\xb5\x2f\xfd")):
        assert _read(tmp, blob[:cut]) == blob[:cut]  # too short to be recognised: the bytes as they are
    else:
        assert _refused(tmp, blob[:cut]).startswith("compressed stream ends early")


@pytest.mark.parametrize("kind", KINDS)
def test_a_bomb_reads_in_bounded_memory(kind, tmp_path):
    """128 MiB of zeros compressed to a few kB (a decompression bomb in miniature): read in 1 MiB pieces, Python's
    allocations peak far below the data (tracemalloc), every byte is a zero and the count is exact."""
    size = 128 << 20
    blob = FORMATS[kind][0](bytes(size))
    path = tmp_path / "bomb"
    path.write_bytes(blob)
    total, nonzero = 0, False
    tracemalloc.start()
    try:
        with open_source(str(path)) as source:
            while piece := source.stream.read(1 << 20):
                total += len(piece)
                nonzero = nonzero or piece.count(0) != len(piece)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert total == size and not nonzero and len(blob) < size // 100
    assert peak < 48 << 20, peak


def test_uncompressed_input_is_read_as_it_is(tmp_path):
    """No magic: the bytes as stored (a file that merely ends in .gz is not decompressed)."""
    data = os.urandom(1000).replace(b"\x1f\x8b", b"xx")
    assert _read(tmp_path, b"\xd4\xc3\xb2\xa1" + data, "plain.pcap.gz") == b"\xd4\xc3\xb2\xa1" + data
