"""``python -m hosts.rpc RECIPE [--agent A] [--model provider:name]`` (see ``hosts.rpc.main``)."""

import sys

from hosts.rpc._main import main

if __name__ == "__main__":
    sys.exit(main())
