"""The versioned schemas (csum/schemas): every --json document starts with ``"schema": "csum.<command>/<N>"`` and
validates against the JSON Schema shipped for it; the rows (jsonl, csv, parquet) against csum.rows; the shipped files
are the ones tools/gen_schemas.py writes.

Expected values: the captures are built with scapy (a checksum spoiled by hand where a test wants a bad one), the
validation is the ``jsonschema`` package's (Draft 2020-12), the Parquet metadata is read back by pyarrow and DuckDB,
the JSON Lines by jq, and the frame numbers are tshark's (``-T fields -e frame.number`` with checksum validation
on).
"""

import csv
import importlib.util
import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from captures import pcap_bytes
from packets import A4, A6, B4, B6, ETH, offload_tcp
from scapy.all import IP, TCP, UDP, Ether, IPv6, raw

from csum import schemas
from csum.cli import main
from csum.explain.causes import CAUSES, NOT_CAUSES
from csum.layers.reasons import Reason, Status
from csum.schemas.build import build_all

ROOT = Path(__file__).resolve().parent.parent
TSHARK = shutil.which("tshark")
JQ = shutil.which("jq")


def _validate(doc: object, output: str, relax: bool = False) -> None:
    schema = schemas.schema(output)
    if relax:  # --fields: some columns only
        schema = {k: v for k, v in schema.items() if k != "required"}
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.Draft202012Validator(schema).validate(doc)


def _bad_udp(src: str, dst: str) -> bytes:
    """An IPv4 or IPv6 UDP packet whose checksum (scapy's) is off by one."""
    ip = IP(src=src, dst=dst) if ":" not in src else IPv6(src=src, dst=dst)
    data = bytearray(raw(ETH / ip / UDP(sport=5, dport=53) / b"query"))
    at = len(data) - len(b"query") - 2
    data[at + 1] ^= 1
    return bytes(data)


@pytest.fixture(scope="module")
def captures(tmp_path_factory):
    """Two captures: a.pcap with good TCP, a bad UDP (frame 2), an offload TCP (frame 3) and a bad UDP over IPv6
    (frame 4); b.pcap with a good packet then a bad UDP (frame 2)."""
    tmp = tmp_path_factory.mktemp("schemas")
    offload = raw(Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02", type=0x0800)) + offload_tcp()
    a, b = tmp / "a.pcap", tmp / "b.pcap"
    a.write_bytes(pcap_bytes([raw(ETH / IP(src=A4, dst=B4) / TCP() / b"x"), _bad_udp(A4, B4), offload,
                              _bad_udp(A6, B6)]))
    b.write_bytes(pcap_bytes([raw(ETH / IP(src=B4, dst=A4) / TCP(sport=9) / b"y"), _bad_udp(B4, A4)]))
    return a, b


def _run(capsys, *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().out


def test_shipped_schemas_are_current_and_valid():
    """csum/schemas/*.json are what tools/gen_schemas.py writes now, each a valid Draft 2020-12 schema whose $id is
    the name the outputs carry; one file per output of the version table."""
    built = build_all()
    assert set(built) == set(schemas.VERSIONS)
    for output, schema in built.items():
        shipped = ROOT / "csum" / "schemas" / f"{output}.json"
        assert json.loads(shipped.read_text()) == schema, f"run tools/gen_schemas.py ({output} is stale)"
        assert schema["$id"] == f"csum.{output}/{schemas.VERSIONS[output]}"
        jsonschema.Draft202012Validator.check_schema(schema)


def test_rows_schema_enums_are_the_definitions():
    """The rows' status, reason and cause enums are the members of Status, Reason and the cause table (written out
    here from csum/layers/reasons.py and csum/explain/causes.py's docs: docs/explain.md lists the same ids)."""
    props = schemas.schema("rows")["properties"]
    assert props["status"]["enum"] == ["ok", "bad", "offload", "none", "n/a"] == [str(s) for s in Status]
    assert set(props["reason"]["enum"]) == {str(r) for r in Reason} and "mismatch" in props["reason"]["enum"]
    assert props["cause"]["enum"][:-1] == [c.id for c in (*CAUSES, *NOT_CAUSES)] and props["cause"]["enum"][-1] is None
    assert {"ttl-not-updated", "offload", "unexplained", "corruption", "cannot-judge"} <= set(props["cause"]["enum"])
    assert schemas.schema("rows")["required"] == ["frame", "time", "src", "dst", "protocol", "path", "depth",
                                                  "offset", "stored", "computed", "status", "reason"]


def test_verify_and_fix_documents(captures, capsys, tmp_path):
    """verify --json (one file, several with --by host, --explain) and fix --json: "schema" is the first key and
    each validates; several files give per-file sections ("files") and the total."""
    a, b = captures
    for argv in (["verify", str(a), "--json"], ["verify", str(a), "--json", "--explain"],
                 ["verify", str(a), str(b), "--json", "--by", "host"], ["verify", str(a), "--format", "json"]):
        code, out = _run(capsys, *argv)
        assert code == 1, argv
        doc = json.loads(out)
        assert next(iter(doc)) == "schema" and doc["schema"] == "csum.verify/1"
        _validate(doc, "verify")
    code, out = _run(capsys, "verify", str(a), str(b), "--json")
    doc = json.loads(out)
    assert [f["file"] for f in doc["files"]] == [str(a), str(b)] and doc["total"]["bad_count"] == 3
    assert [r["frame"] for r in doc["files"][1]["bad"]] == [2]  # frame numbers per file
    code, out = _run(capsys, "fix", str(a), str(tmp_path / "out.pcap"), "--json")
    doc = json.loads(out)
    assert code == 1 and next(iter(doc)) == "schema" and doc["schema"] == "csum.fix/1"
    _validate(doc, "fix")
    broken = dict(doc, packets="three")
    with pytest.raises(jsonschema.ValidationError):
        _validate(broken, "fix")


def test_other_commands_documents(captures, capsys, tmp_path):
    """rewrite, compare (both forms), diff, --version and kernel-check (where the running kernel's helpers answer):
    "schema" first, each valid."""
    a, _ = captures
    runs = {"rewrite": ["rewrite", str(a), str(tmp_path / "r.pcap"), "--map-ip", f"{A4}={B4}", "--fix", "--json"],
            "compare": ["compare", "--json"], "diff": ["diff", "--from", "0001", "--to", "0002", "--sum", "abcd",
                                                          "--json"],
            "version": ["--version", "--json"]}
    runs["compare-function"] = ["compare", "--function", "ip_fast_csum", "--json"]
    for name, argv in runs.items():
        code, out = _run(capsys, *argv)
        assert code == 0, name
        doc = json.loads(out)
        output = name.split("-")[0]
        assert next(iter(doc)) == "schema" and doc["schema"] == f"csum.{output}/1"
        _validate(doc, output)
    code = main(["kernel-check", "--json", "--n", "3"])
    captured = capsys.readouterr()
    if code == 2:
        pytest.skip(f"the running kernel's helpers are not reachable: {captured.err.strip()}")
    doc = json.loads(captured.out)
    assert next(iter(doc)) == "schema" and doc["schema"] == "csum.kernel-check/1"
    _validate(doc, "kernel-check")


def test_prog_document(capsys, tmp_path):
    """csum prog --json on an example program (compiled with clang), run by the kernel's BPF_PROG_TEST_RUN."""
    sys.path.insert(0, str(ROOT / "tests"))
    from bpf_build import EXAMPLES, compile_bpf, why_not

    if why_not() is not None:
        pytest.skip(str(why_not()))
    obj = compile_bpf(EXAMPLES / "tc_nat_no_pseudo.c", tmp_path / "nat.o")
    code, out = _run(capsys, "prog", str(obj), "--count", "5", "--json", "--csum-state", "all")
    doc = json.loads(out)
    assert code == 1 and next(iter(doc)) == "schema" and doc["schema"] == "csum.prog/1"
    _validate(doc, "prog")


def _jsonl(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines()]


def test_rows_validate_and_carry_the_file_with_several_inputs(captures, capsys):
    """jsonl rows: exact against csum.rows (one file: no file column; two: file first, frames per file); with
    --explain the cause and detail columns validate too."""
    a, b = captures
    code, out = _run(capsys, "verify", str(a), "--format", "jsonl")
    rows = _jsonl(out)
    assert code == 1 and "file" not in rows[0]
    for row in rows:
        _validate(row, "rows")
    code, out = _run(capsys, "verify", str(a), str(b), "--format", "jsonl")
    rows = _jsonl(out)
    assert list(rows[0])[0] == "file" and {r["file"] for r in rows} == {str(a), str(b)}
    assert [r["frame"] for r in rows if r["file"] == str(b) and r["status"] == "bad"] == [2]
    for row in rows:
        _validate(row, "rows")
    code, out = _run(capsys, "verify", str(a), "--format", "jsonl", "--explain")
    for row in _jsonl(out):
        _validate(row, "rows")
    with pytest.raises(jsonschema.ValidationError):
        _validate(dict(rows[0], status="fine"), "rows")


@pytest.mark.skipif(TSHARK is None, reason="tshark is not installed")
def test_only_bad_frames_are_tsharks(captures, capsys):
    """--only bad over two files: per file, the frames of the bad UDP rows are the frames tshark's UDP checksum
    validation calls bad (udp.checksum.status == 0, "Bad"); the file column names the input."""
    code, out = _run(capsys, "verify", *map(str, captures), "--format", "jsonl", "--only", "bad")
    rows = _jsonl(out)
    assert code == 1 and {r["status"] for r in rows} == {"bad"}
    for path in captures:
        got = sorted(r["frame"] for r in rows if r["file"] == str(path) and r["protocol"] == "udp")
        shark = subprocess.run([TSHARK, "-r", str(path), "-o", "udp.check_checksum:TRUE", "-Y",
                                "udp.checksum.status == 0", "-T", "fields", "-e", "frame.number"],
                               capture_output=True, text=True, check=True).stdout.split()
        assert got == [int(f) for f in shark] and got


def test_only_in_the_text_lists(captures, capsys):
    """--only offload: the offload list alone (frame 3, the TCP field holding the pseudo-header sum); --only bad:
    the bad list alone (frames 2 and 4); both on fix too."""
    a, _ = captures
    code, out = _run(capsys, "verify", str(a), "--only", "offload")
    assert "transmit offload" in out and "bad checksums" not in out
    code, out = _run(capsys, "verify", str(a), "--only", "bad")
    assert "bad checksums: 2" in out and "transmit offload" not in out
    code, out = _run(capsys, "verify", str(a), "--format", "jsonl", "--only", "offload")
    assert [(r["frame"], r["protocol"]) for r in _jsonl(out)] == [(3, "tcp")]
    code, out = _run(capsys, "verify", str(a), "--format", "jsonl", "--only", "not-ok")
    assert {r["status"] for r in _jsonl(out)} == {"bad", "offload"}


@pytest.mark.skipif(JQ is None, reason="jq is not installed")
def test_fields_choose_and_order_columns(captures, capsys):
    """--fields: jq reads each line's keys in the order given; CSV's header is that list; the file column is
    accepted with several inputs."""
    a, b = captures
    code, out = _run(capsys, "verify", str(a), "--format", "jsonl", "--fields", "status,frame,stored")
    keys = subprocess.run([JQ, "-c", "keys_unsorted"], input=out, capture_output=True, text=True, check=True)
    assert set(keys.stdout.splitlines()) == {'["status","frame","stored"]'}
    for row in _jsonl(out):
        _validate(row, "rows", relax=True)
    code, out = _run(capsys, "verify", str(a), str(b), "--format", "csv", "--fields", "frame,file")
    table = list(csv.reader(io.StringIO(out)))
    assert table[0] == ["frame", "file"] and {r[1] for r in table[1:]} == {str(a), str(b)}


@pytest.mark.parametrize("argv, words", [
    (["--fields", "frame,stat"], ["--fields", "'stat'", "did you mean status?"]),
    (["--fields", "file"], ["--fields", "'file'", "several inputs"]),
    (["--fields", "frame,frame"], ["--fields", "frame is named twice"]),
])
def test_fields_errors(captures, capsys, argv, words):
    """An unknown or repeated column: exit 2, one line on stderr naming --fields and the closest column."""
    code = main(["verify", str(captures[0]), "--format", "jsonl", *argv])
    err = capsys.readouterr().err
    assert code == 2 and len(err.splitlines()) == 1 and all(w in err for w in words), err
    assert main(["verify", str(captures[0]), "--fields", "frame"]) == 2
    assert "--fields: only with --format jsonl, csv or parquet" in capsys.readouterr().err


@pytest.mark.skipif(importlib.util.find_spec("pyarrow") is None, reason="pyarrow is not installed")
def test_parquet_names_its_schema_and_has_the_file(captures, capsys, tmp_path):
    """Parquet: the key-value metadata (pyarrow's read_metadata, and the Arrow schema's) names csum.rows/1; the file
    column is there with one input too; DuckDB reads it, its columns those of the rows schema."""
    import pyarrow.parquet as pq

    a, b = captures
    out = tmp_path / "rows.parquet"
    assert main(["verify", str(a), "--format", "parquet", "--out", str(out)]) == 1
    assert pq.read_metadata(out).metadata[b"csum.schema"] == b"csum.rows/1"
    assert pq.read_schema(out).metadata[b"csum.schema"] == b"csum.rows/1"
    table = pq.read_table(out)
    assert table.column_names == ["file", *schemas.schema("rows")["required"]]
    assert set(table.column("file").to_pylist()) == {str(a)}
    # each Parquet row, its numbers written as the JSON Lines write them, validates against csum.rows
    code, out = _run(capsys, "verify", str(a), "--format", "jsonl")
    for got, line in zip(table.to_pylist(), _jsonl(out), strict=True):
        as_text = {**got, "stored": None if got["stored"] is None else f"{got['stored']:#06x}",
                   "computed": None if got["computed"] is None else f"{got['computed']:#06x}",
                   "time": None if got["time"] is None else got["time"].timestamp()}
        _validate(as_text, "rows")
        assert {k: v for k, v in as_text.items() if k not in ("file", "time")} == \
            {k: v for k, v in line.items() if k != "time"}
    both = tmp_path / "both.parquet"
    assert main(["verify", str(a), str(b), "--format", "parquet", "--out", str(both), "--only", "bad"]) == 1
    duckdb = pytest.importorskip("duckdb")
    got = duckdb.sql(f"SELECT file, frame FROM '{both}' WHERE protocol = 'udp' ORDER BY file, frame").fetchall()
    assert got == [(str(a), 2), (str(a), 4), (str(b), 2)]
    meta = duckdb.sql(f"SELECT value FROM parquet_kv_metadata('{both}') WHERE key = 'csum.schema'").fetchall()
    assert [bytes(v[0]) if not isinstance(v[0], str) else v[0].encode() for v in meta] == [b"csum.rows/1"]
