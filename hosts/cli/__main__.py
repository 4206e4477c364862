"""``python -m hosts.cli``: the same as the ``pi-recipes`` command."""

import sys

from hosts.cli import main

sys.exit(main())
