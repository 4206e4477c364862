"""What other packages plug into pi-recipes through entry points, found and loaded alike.

A package extends pi-recipes by declaring an entry point: a store or an engine under a URL
scheme (``pi_recipes.stores``, ``pi_recipes.engines``: see
:func:`interactions.store.open_store`), a run driver under a run kind
(``pi_recipes.run_drivers``), a ``pi-recipes`` subcommand (``pi_recipes.commands``).
:func:`installed_plugins` lists a group without importing anything; :func:`load_plugin` imports
one and turns an optional dependency that is not installed into a
:class:`~interactions.UsageError` that says what to install.
"""

from __future__ import annotations

import functools
import importlib.metadata
import re
from collections.abc import Mapping
from types import MappingProxyType

from interactions._errors import UsageError

__all__ = ["installed_plugins", "load_plugin"]

_NAME = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
_EXTRA = re.compile(r"""\bextra\s*==\s*["']([^"']+)["']""")


@functools.cache
def installed_plugins(group: str) -> Mapping[str, importlib.metadata.EntryPoint]:
    """The entry points of ``group`` by name, read once per process from the installed
    packages' metadata; nothing is imported. Where two packages declare one name, the first
    found wins."""
    found: dict[str, importlib.metadata.EntryPoint] = {}
    for entry in importlib.metadata.entry_points(group=group):
        found.setdefault(entry.name, entry)
    return MappingProxyType(found)


def load_plugin(entry: importlib.metadata.EntryPoint, *, what: str) -> object:
    """Import and return the object ``entry`` names; ``what`` names it in messages
    (``"pi-recipes slack"``, ``"the temporal:// engine"``).

    Raises ``UsageError`` when something it imports is not installed:
    ``"{what} needs {module}: pip install '{distribution}[{extra}]'"`` when an extra of the
    entry point's distribution brings that module (the extra named like the entry point, if
    several do), else ``"{what} needs {module}, which is not installed"``. A missing module of
    the plugin's own package is a broken installation, not a missing extra: that
    ``ModuleNotFoundError`` propagates, as any other error of the import does.
    """
    try:
        return entry.load()
    except ModuleNotFoundError as missing:
        module = (missing.name or "").partition(".")[0]
        if not module or module == entry.module.partition(".")[0]:
            raise
        raise UsageError(_needs(entry, what, module)) from None


def _needs(entry: importlib.metadata.EntryPoint, what: str, module: str) -> str:
    """What to install for ``module``, read from the requirements of ``entry``'s package."""
    dist = entry.dist
    extras = _extras_bringing((dist.requires or []) if dist else [], _canonical(module))
    if entry.name in extras:
        extras = [entry.name]
    if dist is None or not extras:
        return f"{what} needs {module}, which is not installed"
    name = dist.metadata["Name"]
    installs = " or ".join(f"pip install '{name}[{extra}]'" for extra in extras)
    return f"{what} needs {module}: {installs}"


def _extras_bringing(requirements: list[str], project: str) -> list[str]:
    """The extras whose requirements name ``project`` (canonical), in the order declared."""
    extras: list[str] = []
    for requirement in requirements:
        name, marker = _NAME.match(requirement), _EXTRA.search(requirement.partition(";")[2])
        if name and marker and _canonical(name[1]) == project and marker[1] not in extras:
            extras.append(marker[1])
    return extras


def _canonical(name: str) -> str:
    """A project name as PyPI compares them (``slack_sdk`` and ``Slack-SDK`` are one)."""
    return re.sub(r"[-_.]+", "-", name).lower()
