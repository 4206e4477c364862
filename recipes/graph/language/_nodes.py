"""Node declarations: ``agent``, ``judge``, ``human``, ``compute``, ``tool``, ``router`` and
``await_answers``."""

from __future__ import annotations

from typing import Any

from recipes.graph import ir
from recipes.graph.language._blocks import Block
from recipes.graph.language._fallbacks import read_fallbacks
from recipes.graph.language._lines import Value
from recipes.graph.language._reader import Reader

__all__ = ["build_node"]

_INTERACTIONS = ("none", "human", "llm", "llm_or_human", "review", "async")
_ROUTER_MODES = ("fan_out_all", "fan_out_each", "condition", "round_robin", "llm")


def _interaction(
    p: Reader, found: dict[str, Any], kind: str, allowed: tuple[str, ...]
) -> str | None:
    value = p.choice(found.get("interaction"), _INTERACTIONS)
    if value is None or value in allowed:
        return value
    where = p.pos(found["interaction"][1])
    p.report("S001", f"`interaction: {value}` on a {kind} is outside the subset", where)
    return None


def build_node(p: Reader, block: Block, keyword: str, name: str, pos: ir.Pos) -> ir.Node | None:
    """The node ``keyword NAME:`` declares (``None`` when it cannot be read at all)."""
    found = p.props(block, keyword)
    common: dict[str, Any] = {
        "name": name,
        "description": p.text(found.get("description")),
        "input": p.name_ref(found.get("input")),
        "output": p.name_ref(found.get("output")),
        "publish": p.name_ref(found.get("publish")),
        "pos": pos,
    }
    if keyword in ("agent", "judge"):
        tools = p.words(found.get("tools"), "[a, b]")
        return ir.LLMNode(
            **common,
            judge=keyword == "judge",
            recipe=p.text(found.get("recipe")),
            agent=p.text(found.get("agent")),
            model=p.text(found.get("model")),
            system=p.text_ref(found.get("system")),
            user=p.text_ref(found.get("user")),
            timeout=p.text(found.get("timeout")),
            tools=tools,
            interaction=_interaction(p, found, keyword, ("none", "human", "async")),
            backend=p.text(found.get("backend")),
            fallbacks=read_fallbacks(p, found.get("fallbacks")),
        )
    if keyword == "human":
        return ir.HumanNode(  # `interaction: async` here is the compiler's C240
            **common,
            instructions=p.text_ref(found.get("instructions")),
            interaction=_interaction(p, found, keyword, ("human", "async")),
        )
    if keyword == "await_answers":
        source = p.text(found.get("from"))
        if source is not None and source and not source.isidentifier():
            p.report("E002", f"`from:` takes a node's name, not {source!r}",
                     p.pos(found["from"][1]))  # fmt: skip
            source = None
        return ir.AwaitAnswersNode(
            **common, from_=source or None, timeout=p.text(found.get("timeout"))
        )
    if keyword == "compute":
        expr: list[tuple[str, str]] = []
        where: list[ir.Pos] = []
        block_ = p.nested(found.get("expr"))
        for child in block_.children if block_ is not None else ():
            prop = p.line(child, "prop")
            p.no_children(child)
            if prop is not None:
                if not isinstance(prop.value, Value) or prop.value.form not in ("string", "raw"):
                    p.report(
                        "E002",
                        f"expression `{prop.key}:` takes a quoted string",
                        p.pos(child, prop.col),
                    )
                    continue
                expr.append((prop.key, prop.value.text))
                where.append(p.pos(child, prop.col))
        return ir.ComputeNode(**common, expr=tuple(expr), expr_pos=tuple(where))
    if keyword == "tool":
        command = p.text(found.get("command"))
        if command is None:
            p.report("E013", f"tool node `{name}` has no `command:`", pos)
        env = p.words(found.get("env"), "[GITHUB_TOKEN]") or ()
        for item in env:
            if not item.isidentifier():
                p.report("E002", f"`env:` takes variable names, not {item!r}",
                         p.pos(found["env"][1]))  # fmt: skip
        env = tuple(item for item in env if item.isidentifier())
        return ir.ToolNode(
            **common, command=command, timeout=p.text(found.get("timeout")), env=env
        )
    mode = p.choice(found.get("mode"), _ROUTER_MODES)
    if mode is None:
        if "mode" not in found:
            p.report("E013", f"router `{name}` has no `mode:`", pos)
        return None
    if mode not in ("fan_out_all", "condition"):
        p.report("S001", f"`mode: {mode}` routers are outside the subset", p.pos(found["mode"][1]))
        return None
    return ir.RouterNode(**common, mode=mode)  # type: ignore[arg-type]
