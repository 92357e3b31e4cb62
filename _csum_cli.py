"""The ``csum`` console script: :func:`csum.cli.main`, with a bad ``CSUM_ENGINE`` and Ctrl-C while csum is being
imported each reported in one line.

csum binds its summing engine when the package is imported (csum/engine/__init__.py), so
a ``CSUM_ENGINE`` it cannot honour fails the import itself, before any code
inside the package could catch it: this module sits outside the package to do so. Importing csum and
numpy takes a few tenths of a second, and Ctrl-C then must end csum as it does later: exit 130 and
``csum: interrupted`` (csum.cli.exits), not a traceback.
"""

from __future__ import annotations

import sys


def main() -> int:
    """Run the csum command line; exit 2 with ``csum: <reason>`` if csum cannot be imported as configured."""
    try:
        from csum.cli import main as cli_main
    except KeyboardInterrupt:
        print("csum: interrupted", file=sys.stderr)
        return 130
    except ImportError as exc:
        if getattr(exc, "code", None) != "bad-engine":  # csum.errors.Code.BAD_ENGINE (csum cannot be imported here)
            raise
        print(f"csum: {exc}", file=sys.stderr)
        return 2
    return cli_main()


if __name__ == "__main__":
    sys.exit(main())
