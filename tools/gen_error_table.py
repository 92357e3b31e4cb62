"""Print the table of error codes of docs/errors.md from csum.errors.Code (the one list): ``python tools/gen_error_table.py``.

tests/test_errors.py demands that docs/errors.md holds every row this prints.
"""

from __future__ import annotations

from csum.errors import Code


def table() -> str:
    """One Markdown row per code: code, exception class, meaning."""
    rows = ["| code | raised as | meaning |", "| --- | --- | --- |"]
    rows += [f"| `{code.value}` | `{code.kind}` | {code.meaning} |" for code in Code]
    return "\n".join(rows)


if __name__ == "__main__":
    print(table())
