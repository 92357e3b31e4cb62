"""``python -m csum``: the command line (csum/cli/__init__.py)."""

import sys

from .cli import main

sys.exit(main())
