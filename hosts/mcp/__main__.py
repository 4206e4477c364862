"""``python -m hosts.mcp RECIPE [--http HOST:PORT]`` (see ``hosts.mcp.main``)."""

import sys

from hosts.mcp._main import main

if __name__ == "__main__":
    sys.exit(main())
