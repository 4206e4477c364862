"""An automated accessibility check of the page as it stands: axe-core (the engine bundled by
``axe-playwright-python``) run in the page through Playwright; a serious or critical violation
fails the test, naming the rule, its help text and the elements it found."""

from __future__ import annotations

from typing import Any

from axe_playwright_python.sync_playwright import Axe

SERIOUS = frozenset({"serious", "critical"})


def assert_accessible(page: Any, view: str) -> None:
    """axe-core finds no serious or critical violation on ``page``, which shows ``view``."""
    results = Axe().run(page)
    found = [v for v in results.response["violations"] if v.get("impact") in SERIOUS]
    lines = [
        f"{v['id']} ({v['impact']}): {v['help']} — "
        + ", ".join(str(node["target"]) for node in v["nodes"][:5])
        for v in found
    ]
    assert not found, f"accessibility violations on {view}:\n" + "\n".join(lines)
