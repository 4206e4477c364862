"""``python -m hosts.email``: the same as ``pi-recipes email``."""

import sys

from hosts.email import main

sys.exit(main())
