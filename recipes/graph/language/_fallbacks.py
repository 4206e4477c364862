"""An ``agent``/``judge`` node's ``fallbacks:`` block: named routes, in declaration order.

::

    fallbacks:
      cheaper:
        model: "anthropic:claude-haiku-4-5"
        on: [usage_window, unavailable]
      give_up:
        action: skip
        when: "vars.plan_review_policy == 'skip'"
        on: [any]

A route takes ``model``, ``on`` (a list of failure classes), ``when`` (a condition over
``vars.*``) and ``action``. Iterion's ``backend:``, ``provider:`` and ``metered:`` are outside
the subset (``S001``; a model here is named ``provider:model``), except beside
``action: skip``, where they are the contradiction ``C173`` names. The other rules on routes
(unknown actions and classes, a skip route not last, ``when:`` references...) are the
compiler's, which sees the same routes whether a file or the builder made them.
"""

from __future__ import annotations

from recipes.graph import ir
from recipes.graph.language._blocks import Block
from recipes.graph.language._lines import PropSyntax
from recipes.graph.language._reader import Reader

__all__ = ["read_fallbacks"]

_ELSEWHERE = ("backend", "provider", "metered")


def _route(p: Reader, block: Block, prop: PropSyntax) -> ir.Route | None:
    where = p.pos(block, prop.col)
    if prop.value is not None:
        p.report("E002", f"fallback route `{prop.key}:` takes its properties indented under it, "
                 "not a value", where)  # fmt: skip
        return None
    found = p.props(block, "fallback")
    action = p.text(found.get("action"))
    elsewhere = [key for key in _ELSEWHERE if key in found]
    if elsewhere and action == "skip":
        named = ", ".join(f"`{k}:`" for k in elsewhere)
        p.report(
            "C173",
            f"fallback route `{prop.key}` declares action: skip together with {named}: a skip "
            "route calls nothing, so these say something that never happens",
            where,
            fix=f"Remove {named} from route `{prop.key}`, or remove `action: skip` to make it "
            "a model route.",
        )
    elif elsewhere:
        for key in elsewhere:
            p.report("S001", f"`{key}:` on a fallback route is outside the subset (name the "
                     'route\'s model as `model: "provider:model"`)',
                     p.pos(found[key][1]))  # fmt: skip
    on = p.words(found.get("on"), "[usage_window, unavailable]")
    return ir.Route(
        name=prop.key,
        model=p.text(found.get("model")),
        action=action,
        on=on,
        when=p.text(found.get("when")),
        pos=where,
    )


def read_fallbacks(p: Reader, entry: tuple[PropSyntax, Block] | None) -> tuple[ir.Route, ...]:
    """The routes of a node's ``fallbacks:`` property (``()`` when it has none)."""
    block = p.nested(entry)
    if entry is None or block is None:
        return ()
    if not block.children:
        p.report(
            "C173",
            "`fallbacks:` declares no route",
            p.pos(block, entry[0].col),
            fix="Declare at least one named route under `fallbacks:` (`cheaper:` with a "
            "`model:`, or `give_up:` with `action: skip`), or remove the header.",
        )
        return ()
    routes = []
    for child in block.children:
        prop = p.line(child, "prop")
        if prop is not None and (route := _route(p, child, prop)) is not None:
            routes.append(route)
    return tuple(routes)
