"""`python3 -m weft_trace ...` runs the command-line tool."""

import sys

from .cli import main

sys.exit(main())
