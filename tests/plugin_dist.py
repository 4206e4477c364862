"""A third-party package that plugs into pi-recipes, installed the way pip leaves one: a module
and its ``.dist-info`` (metadata with extras, ``entry_points.txt``) in a folder on the path.

- ``hello`` (``pi_recipes.commands``): prints its arguments, exits with ``HELLO_EXIT``.
- ``chat`` and ``talk``: a host whose module imports ``absent_dep_for_test``, which no extra
  installed; the extras ``chat`` and ``voice`` both bring it.
- ``boom``: a host that raises when imported (so listing it must not import it).
- ``runs``: a command named like one of the command line's own.
- ``fakemem://`` (``pi_recipes.stores``) and ``fakeengine://`` (``pi_recipes.engines``): an
  in-memory store, whose opener prints the URL it was given.
"""

from __future__ import annotations

import os
from pathlib import Path

HELLO_EXIT = 7

_HOST = f"""
import sys


def main(argv):
    print("hello from a plugged-in host:", argv)
    return {HELLO_EXIT}


async def open_memory(url):
    from interactions.store import MemoryStore

    print("opened", url, file=sys.stderr)
    return MemoryStore()
"""

_METADATA = """\
Metadata-Version: 2.1
Name: pi-fake-host
Version: 1.0
Provides-Extra: chat
Provides-Extra: voice
Requires-Dist: absent-dep-for-test>=1; extra == "chat"
Requires-Dist: absent_dep_for_test; extra == "voice"
Requires-Dist: something-else; extra == "voice"
"""

_ENTRY_POINTS = """\
[pi_recipes.commands]
hello = pi_fake_host:main
chat = pi_fake_chat:main
talk = pi_fake_chat:main
boom = pi_fake_boom:main
runs = pi_fake_host:main

[pi_recipes.stores]
fakemem = pi_fake_host:open_memory

[pi_recipes.engines]
fakeengine = pi_fake_host:open_memory
"""


def install_fake_plugin(folder: Path) -> Path:
    """Write the package into ``folder`` (put it on ``sys.path`` or ``PYTHONPATH``)."""
    (folder / "pi_fake_host.py").write_text(_HOST, encoding="utf-8")
    (folder / "pi_fake_chat.py").write_text(
        "import absent_dep_for_test\n\ndef main(argv):\n    return 0\n", encoding="utf-8"
    )
    (folder / "pi_fake_boom.py").write_text(
        "raise RuntimeError('pi_fake_boom was imported')\n", encoding="utf-8"
    )
    info = folder / "pi_fake_host-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(_METADATA, encoding="utf-8")
    (info / "entry_points.txt").write_text(_ENTRY_POINTS, encoding="utf-8")
    return folder


def with_plugin_path(env: dict[str, str], folder: Path) -> dict[str, str]:
    """``env`` with ``folder`` first on ``PYTHONPATH``."""
    rest = env.get("PYTHONPATH")
    return env | {"PYTHONPATH": os.pathsep.join([str(folder), *([rest] if rest else [])])}
