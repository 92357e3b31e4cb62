"""Write csum/schemas/<output>.json, the JSON Schemas csum ships (csum/schemas/build.py builds them from where their
facts are defined): ``python tools/gen_schemas.py``. tests/test_schemas.py checks the files are current."""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from csum.schemas.build import build_all  # noqa: E402


def text(schema: dict) -> str:
    """A schema as its file holds it."""
    return json.dumps(schema, indent=2) + "\n"


def main() -> None:
    for output, schema in build_all().items():
        (ROOT / "csum" / "schemas" / f"{output}.json").write_text(text(schema))


if __name__ == "__main__":
    main()
