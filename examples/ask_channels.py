"""One tool-like function asking the same question under each channel of the chain.

Run it: ``python examples/ask_channels.py``. Nothing here needs a network or a terminal: the
dialog channel is played by a scripted UI, as a test would.
"""

from __future__ import annotations

import anyio

from interactions import (
    AskUserResult,
    ask_user_approval,
    ask_user_question,
    auto_resolve_interactions,
)
from interactions.dialogs import DialogUI
from interactions.testing.dialogs import ScriptedDialogUI, StaticToolContext


async def pick_colour(tool_call_id: str, ctx: StaticToolContext, env: dict[str, str]) -> str:
    """A tool body: ask which colour, then ask to approve the repaint."""
    answer: AskUserResult = await ask_user_question(
        "Which colour should the button be?",
        options=[{"label": "Red", "value": "#d33"}, {"label": "Blue", "value": "#33d"}],
        tool_call_id=tool_call_id,
        ctx=ctx,
        env=env,
    )
    if answer.outcome.type == "awaiting_user":
        return f"{answer.text} (pause the run on {answer.details.interrupt.id})"
    approval = await ask_user_approval(
        title="Repaint the button?",
        body=answer.text,
        tool_call_id=f"{tool_call_id}-approve",
        ctx=ctx,
        env=env,
    )
    return f"{answer.text} | {approval.text}"


async def main() -> None:
    headless = StaticToolContext()
    ui: DialogUI = ScriptedDialogUI(["Blue", "Request changes", "a darker blue"])
    with auto_resolve_interactions():
        print("0 auto-resolving scope:", await pick_colour("c0", headless, {}))
    print(
        "1 auto-approve flag:   ",
        await pick_colour("c1", headless, {"PI_ASK_USER_AUTO_APPROVE": "1"}),
    )
    print("2 dialog:              ", await pick_colour("c2", StaticToolContext(ui=ui), {}))
    print(
        "3 interrupt:           ", await pick_colour("c3", headless, {"PI_INTERRUPT_RESUME": "1"})
    )
    print("4 unavailable:         ", await pick_colour("c4", headless, {}))


if __name__ == "__main__":
    anyio.run(main)
