"""``python -m csum``: the command line (csum/cli.py)."""

import sys

from .cli import main

sys.exit(main())
