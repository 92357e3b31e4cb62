"""Print the README's table of error codes from csum.errors.Code (the one list): ``python tools/readme_errors.py``."""

from __future__ import annotations

from csum.errors import Code


def table() -> str:
    """One Markdown row per code: code, exception class, meaning."""
    rows = ["| code | raised as | meaning |", "| --- | --- | --- |"]
    rows += [f"| `{code.value}` | `{code.kind}` | {code.meaning} |" for code in Code]
    return "\n".join(rows)


if __name__ == "__main__":
    print(table())
