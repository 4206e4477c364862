"""``python -m hosts.slack RECIPE``: the same as ``pi-recipes slack RECIPE``."""

import sys

from hosts.slack import main

sys.exit(main())
