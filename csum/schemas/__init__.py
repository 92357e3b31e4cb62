"""The versions of csum's machine-readable outputs, and the JSON Schemas (draft 2020-12) that describe them.

Every JSON document a command prints (``--json``, ``--format json``) starts with ``"schema": "csum.<name>/<N>"``
(:func:`document`); the rows (``csum verify --format jsonl|csv|parquet``) follow ``csum.rows/<N>``, which a Parquet
file names in its key-value metadata (:data:`PARQUET_KEY`, also the Arrow schema's metadata). Each schema ships in
this package as ``<name>.json`` (:func:`schema`); ``rows.json`` is generated from the one place each of its enums is
defined (:func:`rows_schema`: the statuses and reasons of :mod:`csum.layers.reasons`, the cause ids of
:mod:`csum.explain.causes`; tools/gen_schemas.py writes it and tests/test_schemas.py checks it is current).

Version policy (docs/results-as-data.md): N is an integer that grows by one whenever a document or row changes in a
way a script reading the previous version could trip on: a key or column removed or renamed, a type or meaning
changed, a value that was a list becoming an object, a value allowed to be null that was not, a new value of an
enum (a status, reason or cause id) that a script may switch on, a key that was always there becoming optional.
Adding a key to a document, adding an optional row column (such as ``file``, which appears with several inputs), or
adding an optional key does not bump N: scripts are expected to ignore keys they do not know. The schemas say so
(documents allow further keys; rows list every column they may have). A bump is a CHANGELOG entry under "Changed".
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

__all__ = ["PARQUET_KEY", "VERSIONS", "document", "name", "rows_schema", "schema"]

#: Each output's schema version: a command's JSON document by the command's name (``prog-kernels``: ``csum prog
#: --debian/--qemu``'s, one document across kernels), ``rows`` for the rows of every row format.
VERSIONS: dict[str, int] = {
    "verify": 1,
    "fix": 1,
    "rewrite": 1,
    "prog": 1,
    "prog-kernels": 1,
    "compare": 1,
    "diff": 1,
    "kernel-check": 1,
    "version": 1,
    "rows": 1,
}

#: The Parquet key-value metadata key (and the Arrow schema metadata key) whose value is :func:`name` ("rows").
PARQUET_KEY = "csum.schema"


def name(output: str) -> str:
    """``csum.<output>/<N>``: the schema an output follows (:data:`VERSIONS`)."""
    return f"csum.{output}/{VERSIONS[output]}"


def document(output: str, body: dict[str, Any]) -> dict[str, Any]:
    """``body`` with ``"schema": name(output)`` as its first key (what every command prints with --json)."""
    return {"schema": name(output), **body}


@cache
def schema(output: str) -> dict[str, Any]:
    """The JSON Schema of ``output`` (a key of :data:`VERSIONS`), as shipped in this package."""
    if output not in VERSIONS:
        raise KeyError(f"no schema for {output!r}; the outputs are {', '.join(VERSIONS)}")
    return json.loads(resources.files(__name__).joinpath(f"{output}.json").read_text())


def rows_schema() -> dict[str, Any]:
    """The JSON Schema of one row (a JSON Lines object), built from the enums where they are defined."""
    from ..capture.rowtext import ALL_COLUMNS, COLUMNS
    from ..explain.causes import CAUSES, NOT_CAUSES
    from ..layers.reasons import Reason, Status

    hex16 = {"type": ["string", "null"], "pattern": "^0x[0-9a-f]{4}$"}
    address = {"type": ["string", "null"], "description": "the IP header's address as Python's ipaddress writes it"}
    text = {"type": "string", "minLength": 1}
    causes = [c.id for c in (*CAUSES, *NOT_CAUSES)]
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
        "status": {"enum": [str(s) for s in Status]},
        "reason": {"enum": [str(r) for r in Reason]},
        "cause": {"enum": [*causes, None], "description": "with --explain"},
        "detail": {"type": ["string", "null"], "description": "with --explain"},
    }
    assert list(properties)[: len(ALL_COLUMNS)] == list(ALL_COLUMNS)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": name("rows"),
        "title": "one row of csum verify --format jsonl|csv|parquet: one checksum field",
        "description": "Every column of the default output is required; file appears with several inputs (and in "
                       "Parquet), cause and detail with --explain; --fields chooses columns (then fewer are there).",
        "type": "object",
        "properties": properties,
        "required": list(COLUMNS),
        "additionalProperties": False,
    }
