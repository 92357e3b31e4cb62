"""``python -m csum``: the command line (csum/cli/__init__.py).

Python imports the package ``csum`` before it runs this module, so Ctrl-C during that first import gets
Python's own handling (a traceback; the shell still sees 130); from here on it is ``csum: interrupted``
and exit 130, the CLI's import included. The ``csum`` console script (_csum_cli.py) covers both.
"""

import sys

try:
    from .cli import main
except KeyboardInterrupt:
    print("csum: interrupted", file=sys.stderr)
    sys.exit(130)

sys.exit(main())
