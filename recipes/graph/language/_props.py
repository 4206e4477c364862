"""Which properties each block accepts, which Iterion properties it refuses by name, and the
top-level declarations outside the subset.

A property this engine runs is *supported*; one Iterion's language has but this engine does not
run gets ``S001`` naming it; anything else is ``E012`` (unknown property), naming the closest
accepted one.
"""

from __future__ import annotations

__all__ = [
    "ITERION_ONLY",
    "SUPPORTED",
    "TOP_LEVEL",
    "UNSUPPORTED_TOP_LEVEL",
]

SUPPORTED: dict[str, frozenset[str]] = {
    "agent": frozenset({
        "description", "recipe", "agent", "model", "system", "user", "input", "output",
        "publish", "timeout", "tools", "interaction", "backend", "fallbacks",
    }),
    "fallback": frozenset({"model", "on", "when", "action", "backend", "provider", "metered"}),
    "human": frozenset({"description", "instructions", "input", "output", "publish",
                        "interaction"}),
    "compute": frozenset({"description", "input", "output", "publish", "expr"}),
    "tool": frozenset({"description", "command", "input", "output", "publish", "timeout",
                       "env"}),
    "router": frozenset({"description", "mode"}),
    "await_answers": frozenset({"description", "from", "timeout"}),
    "workflow": frozenset({"entry", "budget", "vars"}),
    "budget": frozenset({"max_parallel_branches", "max_duration", "max_iterations"}),
}  # fmt: skip
SUPPORTED["judge"] = SUPPORTED["agent"]

ITERION_ONLY: dict[str, frozenset[str]] = {
    "agent": frozenset({
        "provider", "command", "artifact_labels", "session",
        "tool_policy", "capabilities", "skills", "tool_max_steps", "max_tokens",
        "reasoning_effort", "readonly", "full_access", "images", "interaction_prompt",
        "interaction_model", "await", "compress", "auto_memory", "permission", "needs", "mcp",
        "compaction", "memory", "sandbox", "cursors", "session_slot",
    }),
    "human": frozenset({
        "artifact_labels", "interaction_prompt", "interaction_model", "model", "system",
        "min_answers", "await", "review_url", "posture", "merge_strategy", "merge_into",
        "max_turns",
    }),
    "compute": frozenset({"artifact_labels", "await"}),
    "tool": frozenset({
        "script", "language", "artifact_labels", "await", "compress", "permission", "needs",
        "parallel_safe", "goal", "postcondition", "policy", "recovery", "sandbox", "action",
        "connection", "params", "retry",
    }),
    "router": frozenset({
        "model", "backend", "provider", "system", "user", "multi", "reasoning_effort", "over",
        "as", "key", "depends_on", "needs",
    }),
    "workflow": frozenset({
        "attachments", "mcp", "default_backend", "tool_policy", "capabilities", "skills",
        "resources", "compaction", "interaction", "worktree", "compress", "auto_memory",
        "loop_budget_guard", "repo_devbox", "permission", "allow", "ask", "deny", "sandbox",
        "workspace_checkpoint", "contract",
    }),
    "budget": frozenset({"max_cost_usd", "max_tokens", "warn_tokens"}),
}  # fmt: skip
ITERION_ONLY["judge"] = ITERION_ONLY["agent"]

TOP_LEVEL = frozenset(
    {"vars", "schema", "prompt", "agent", "judge", "human", "compute", "tool", "router",
     "await_answers", "workflow"}
)  # fmt: skip
"""The declarations this engine runs."""

UNSUPPORTED_TOP_LEVEL: dict[str, str] = {
    "presets": "presets (`presets:`)",
    "attachments": "attachments (`attachments:`)",
    "secrets": "secrets (`secrets:`)",
    "mcp_server": "MCP servers (`mcp_server`)",
    "cursor": "cursors (`cursor`)",
    "supervisor": "supervisors (`supervisor`)",
    "emit": "events (`emit`)",
    "wait": "events (`wait`)",
    "subbot": "sub-bots (`subbot`)",
    "group": "groups (`group`)",
    "use": "group instances (`use`)",
    "fail": "named fail nodes (`fail <name>:`); route to the reserved `fail` target",
    "import": "imports (`import`)",
    "dsl": "syntax profiles (`dsl:`); this engine reads profile 1",
    "contract": "contracts (`contract`)",
}
"""Iterion's other declarations, each refused with ``S001`` naming it."""
