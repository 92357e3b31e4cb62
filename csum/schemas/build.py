"""The JSON Schemas of csum's outputs, built from where their facts are defined: tools/gen_schemas.py writes each as
csum/schemas/<output>.json, and tests/test_schemas.py checks the shipped files are current and that every command's
output on real captures validates.

Documents allow keys the schema does not name (a key added is no version bump: csum.schemas' policy); each names
the keys a script may rely on as required, with their types. The rows schema is exact (no other column).
"""

from __future__ import annotations

from typing import Any

from ..capture.rowtext import ALL_COLUMNS, COLUMNS
from ..explain.causes import CAUSES, NOT_CAUSES
from ..layers.reasons import Reason, Status
from . import VERSIONS, name

__all__ = ["build", "build_all", "rows_schema"]

_DRAFT = "https://json-schema.org/draft/2020-12/schema"
_INT = {"type": "integer"}
_NAT = {"type": "integer", "minimum": 0}
_STR = {"type": "string"}
_BOOL = {"type": "boolean"}
_NULL_STR = {"type": ["string", "null"]}
_NULL_INT = {"type": ["integer", "null"]}


def _obj(required: dict[str, Any], optional: dict[str, Any] | None = None) -> dict[str, Any]:
    """An object with these keys (``required`` must be there) and any others."""
    return {"type": "object", "properties": {**required, **(optional or {})}, "required": list(required)}


def _array(items: dict[str, Any]) -> dict[str, Any]:
    return {"type": "array", "items": items}


def _map(values: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "additionalProperties": values}


def _enums() -> tuple[list[str], list[str], list[str]]:
    """The statuses, reasons and cause ids (csum.layers.reasons, csum.explain.causes)."""
    return [str(s) for s in Status], [str(r) for r in Reason], [c.id for c in (*CAUSES, *NOT_CAUSES)]


def rows_schema() -> dict[str, Any]:
    """The JSON Schema of one row (a JSON Lines object), built from the enums where they are defined."""
    statuses, reasons, causes = _enums()
    hex16 = {"type": ["string", "null"], "pattern": "^0x[0-9a-f]{4}$"}
    address = {"type": ["string", "null"], "description": "the IP header's address as Python's ipaddress writes it"}
    text = {"type": "string", "minLength": 1}
    properties: dict[str, Any] = {
        "file": {"type": "string", "description": "the input's name as given (several inputs, and Parquet)"},
        "frame": {"type": "integer", "minimum": 1, "description": "tshark's frame.number, from 1 in each file"},
        "time": {"type": ["number", "null"], "description": "seconds since the epoch, nine decimals"},
        "src": address,
        "dst": address,
        "protocol": text,
        "path": text,
        "depth": {"type": "integer", "minimum": 0, "maximum": 255},
        "offset": {"type": ["integer", "null"], "minimum": 0},
        "stored": hex16,
        "computed": hex16,
        "status": {"enum": statuses},
        "reason": {"enum": reasons},
        "cause": {"enum": [*causes, None], "description": "with --explain"},
        "detail": {"type": ["string", "null"], "description": "with --explain"},
    }
    assert list(properties)[: len(ALL_COLUMNS)] == list(ALL_COLUMNS)
    return {
        "$schema": _DRAFT,
        "$id": name("rows"),
        "title": "one row of csum verify --format jsonl|csv|parquet: one checksum field",
        "description": "Every column of the default output is required; file appears with several inputs (and in "
                       "Parquet), cause and detail with --explain; --fields chooses columns (then fewer are there).",
        "type": "object",
        "properties": properties,
        "required": list(COLUMNS),
        "additionalProperties": False,
    }


def _report_defs() -> dict[str, Any]:
    """The per-file report of verify and fix (csum.capture.report.as_json and csum.cli.scans.scan_json)."""
    statuses, reasons, causes = _enums()
    field = _obj({"frame": {"type": "integer", "minimum": 1}, "layer": _STR, "path": _STR, "offset": _NULL_INT,
                  "stored": _NULL_INT, "computed": _NULL_INT, "reason": {"enum": reasons}},
                 {"cause": {"enum": [*causes, None]}, "detail": _NULL_STR})
    counts = _map({"type": "object", "properties": {s: _NAT for s in statuses}, "required": statuses,
                   "additionalProperties": False})
    stopped = {"oneOf": [{"type": "null"}, _obj({"offset": _NAT, "after_frame": _NAT, "truncated": _BOOL,
                                                  "reason": _STR})]}
    flow = _obj({"src": _STR, "dst": _STR, "proto": _STR, "sport": _NULL_INT, "dport": _NULL_INT})
    by_host = _obj({"hosts": {"type": ["array", "null"]}, "flows": {"type": ["array", "null"]},
                    "timeline": {"type": "object"}, "verdict": _STR})
    explain = _obj({"causes": _map(_NAT), "not_explained": _NAT,
                    "flows": _array(_obj({"flow": {"oneOf": [{"type": "null"}, flow]}, "layer": _STR,
                                          "cause": {"enum": causes}, "fields": _NAT, "first_frame": _INT,
                                          "detail": _NULL_STR}))})
    report = _obj({
        "file": _STR, "format": _STR, "packets": _NAT, "fast_path": _NAT, "not_ip": _NAT,
        "unsupported_linktypes": _map(_NAT), "no_checksum_linktypes": _map(_NAT), "counts": counts,
        "bad_count": _NAT, "bad": _array({"$ref": "#/$defs/field"}),
        "offload_count": _NAT, "offload": _array({"$ref": "#/$defs/field"}),
        "malformed_count": _NAT, "malformed": _array(_obj({"frame": _INT, "reason": _STR})),
        "cut_count": _NAT, "cut_frames": _array(_INT), "compression": _NULL_STR, "stopped": stopped},
        {"by_host": by_host, "explain": explain})
    failed = {"type": "object", "properties": {"file": _STR, "error": _STR, "code": _STR},
              "required": ["file", "error", "code"]}
    return {"field": field, "report": report, "failed": failed}


def _verify() -> dict[str, Any]:
    several = _obj({"schema": {"const": name("verify")},
                    "files": _array({"oneOf": [{"$ref": "#/$defs/report"}, {"$ref": "#/$defs/failed"}]}),
                    "total": {"$ref": "#/$defs/report"}})
    one = {"allOf": [{"$ref": "#/$defs/report"}, _obj({"schema": {"const": name("verify")}})]}
    return {"title": "csum verify --json: one file's report, or with several files one per file and the total",
            "$defs": _report_defs(), "oneOf": [one, several]}


def _fix() -> dict[str, Any]:
    written = _obj({"schema": {"const": name("fix")}, "out": _NULL_STR, "fixed_checksums": _NAT,
                    "offload_filled": _NAT, "fixed_packets": _NAT})
    return {"title": "csum fix --json: the input's report and what was written", "$defs": _report_defs(),
            "allOf": [{"$ref": "#/$defs/report"}, written]}


def _rewrite() -> dict[str, Any]:
    statuses, _, _ = _enums()
    return {"title": "csum rewrite --json", **_obj({
        "schema": {"const": name("rewrite")}, "file": _STR, "out": _NULL_STR, "format": _STR, "compression": _NULL_STR,
        "packets": _NAT, "changed_packets": _NAT,
        "checksums": _obj({"kept": _NAT, "fixed": _NAT, "left_alone": _map(_NAT)}), "fast_path": _NAT,
        "python_path": _map(_NAT), "stopped": {"oneOf": [{"type": "null"}, _obj({"offset": _NAT, "packet": _NAT, "truncated": _BOOL,
                                                       "reason": _STR})]}},
        {"after": {"type": "object", "properties": {s: _NAT for s in statuses}, "required": statuses}})}


def _prog_common() -> dict[str, Any]:
    return {"object": _STR, "program": _STR, "section": _STR, "type": _STR, "source": _STR,
            "notes": _array(_STR)}


def _summary() -> dict[str, Any]:
    return {"packets": _NAT, "changed": _NAT, "dropped": _NAT, "broken_packets": _NAT, "kept_bad_packets": _NAT,
            "unjudged": _NAT, "causes": _map(_NAT), "named": _array(_STR), "unexplained": _NAT}


def _states() -> dict[str, Any]:
    return _array(_obj({"state": _STR, "ip_summed": _STR, "how": _STR, "judged": _NAT, "broken_packets": _NAT,
                        "broken": _array(_INT), "unjudged": _array(_INT), "why": _map(_NAT), "note": _NULL_STR}))


def _prog() -> dict[str, Any]:
    check = _obj({"layer": _STR, "offset": _NULL_INT, "field": _NULL_INT, "stored": _NULL_INT,
                  "expected": _NULL_INT, "ok": {"type": ["boolean", "null"]}, "reason": _NULL_STR, "status": _STR,
                  "added": _BOOL, "cause": _NULL_STR, "mistakes": _array(_STR)})
    run = _obj({"index": _INT, "retval": _NULL_INT, "action": _NULL_STR, "dropped": _BOOL, "changed": _BOOL,
                "input": _STR, "output": _STR, "error": _NULL_STR, "stale": {}, "removed": _array(_STR),
                "broken": _BOOL, "mistakes": _array(_STR), "note": _NULL_STR, "checks": _array(check)})
    return {"title": "csum prog --json (on the running kernel)", **_obj({
        "schema": {"const": name("prog")}, **_prog_common(), **_summary(), "summary": _STR, "runs": _array(run)},
        {"csum_states": _states(), "out": _STR})}


def _prog_kernels() -> dict[str, Any]:
    kernel = _obj({"name": _STR, "arch": _NULL_STR, "release": _NULL_STR, "kernel": _NULL_STR, "source": _STR,
                   "csum_diff": _NULL_STR, "error": _NULL_STR, "boot_seconds": {"type": ["number", "null"]},
                   **_summary(), "broken": _array(_INT)}, {"csum_states": _states()})
    differs = _array(_obj({"index": _INT, "field": _STR, "values": {"type": "object"}, "cause": _STR}))
    return {"title": "csum prog --debian/--qemu --json: one document across kernels", **_obj({
        "schema": {"const": name("prog-kernels")}, **_prog_common(), "kernels": _array(kernel),
        "differs": differs})}


def _compare() -> dict[str, Any]:
    partial = _obj({"schema": {"const": name("compare")}, "input": _STR, "seed": _INT, "align": _INT,
                    "rows": _array(_obj({"profile": _STR, "endian": _STR, "csum_partial": _INT}))})
    function = _obj({"schema": {"const": name("compare")}, "function": _STR, "input": _STR,
                     "rows": _array(_obj({"profile": _STR, "endian": _STR, "function": _STR, "value": _INT}))})
    return {"title": "csum compare --json: csum_partial on every profile, or one --function", "oneOf": [
        {**partial, "not": {"required": ["function"]}}, function]}


def _diff() -> dict[str, Any]:
    replace = _obj({"helper": {"enum": ["l3", "l4"]}, "flags": _INT, "flag_names": _STR, "ip_summed": _STR,
                    "homogenized": _NULL_STR, "legacy": _NULL_STR})
    return {"title": "csum diff --json: bpf_csum_diff on one profile", **_obj({
        "schema": {"const": name("diff")}, "profile": _STR, "endian": _STR, "from": _STR, "to": _STR, "seed": _INT,
        "from_align": _INT, "to_align": _INT, "homogenized": _INT, "legacy": _INT,
        "homogenized_by_align": _map(_array(_array(_INT)))}, {"sum": _STR, "replace": _array(replace)})}


def _kernel_check() -> dict[str, Any]:
    return {"title": "csum kernel-check --json: the kernel's answers against csum's", **_obj({
        "schema": {"const": name("kernel-check")}, "profile": _STR, "seed": _INT, "mismatches": {"type": "array"},
        "ok": _BOOL})}


def _version() -> dict[str, Any]:
    return {"title": "csum --version --json", **_obj({"schema": {"const": name("version")}, "version": _STR,
                                                      "engine": _STR, "python": _STR})}


_BUILDERS = {"verify": _verify, "fix": _fix, "rewrite": _rewrite, "prog": _prog, "prog-kernels": _prog_kernels,
             "compare": _compare, "diff": _diff, "kernel-check": _kernel_check, "version": _version}


def build(output: str) -> dict[str, Any]:
    """The JSON Schema of ``output`` (a key of :data:`csum.schemas.VERSIONS`)."""
    if output == "rows":
        return rows_schema()
    return {"$schema": _DRAFT, "$id": name(output), **_BUILDERS[output]()}


def build_all() -> dict[str, dict[str, Any]]:
    """Every output's schema, by output."""
    assert set(_BUILDERS) | {"rows"} == set(VERSIONS)
    return {output: build(output) for output in VERSIONS}
