"""A recipe for the MCP host's tests: tools written as the README shows them (``ctx`` and
nothing else), each asking one kind of question.

- ``pick_channel``: one of three options (values differ from labels; descriptions), Other allowed;
- ``pick_fixed``: one of two options, nothing else;
- ``pick_suffix``: one of two options, the first one's value blank (the ask is refused);
- ``pick_many``: several of three options, Other allowed;
- ``free_text``: a question without options;
- ``approve``: an approval with a section;
- ``expiring``: a question expiring ``seconds`` from now;
- ``count``: reports ``steps`` progress updates, then returns;
- ``fail``: raises (quoting ``RELEASE_TOKEN``, when set);
- ``quit``: calls ``sys.exit(3)``, as a tool that parses arguments with argparse may;
- ``guarded``: asks, and notes an abort of the ask under a tag (``abort_note`` returns it).
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime, timedelta

import anyio
from pydantic import BaseModel, Field

from interactions import InteractionAborted, ask_user_approval, ask_user_question
from recipes import NoParameters, OnUpdate, RecipeAPI, ToolContext

CHANNELS = [
    {"label": "Stable", "value": "stable", "description": "every user gets it"},
    {"label": "Beta", "value": "beta", "description": "opted-in testers"},
    {"label": "Nightly", "value": "nightly"},
]

_notes: dict[str, str] = {}
_events: dict[str, anyio.Event] = {}


def _noted(tag: str) -> anyio.Event:
    """Made on first use, inside the server's event loop."""
    return _events.setdefault(tag, anyio.Event())


class Release(BaseModel):
    version: str = Field(description="The version being released, e.g. v1.4.0")


class Expiring(BaseModel):
    seconds: float = Field(gt=0)


class Tag(BaseModel):
    tag: str


class Count(BaseModel):
    steps: int = Field(ge=0, le=100)


def recipe(api: RecipeAPI) -> None:
    @api.tool(label="Pick a channel")
    async def pick_channel(
        tool_call_id: str, params: Release, ctx: ToolContext, on_update: OnUpdate
    ) -> object:
        """Ask which channel to publish a release to."""
        return await ask_user_question(
            f"Where should {params.version} be published?",
            options=CHANNELS,
            header="Release channel",
            tool_call_id=tool_call_id,
            ctx=ctx,
        )

    @api.tool
    async def pick_fixed(
        tool_call_id: str, params: NoParameters, ctx: ToolContext, on_update: OnUpdate
    ) -> object:
        """Ask for one of two fixed options."""
        return await ask_user_question(
            "Ship it now?",
            options=[{"label": "Yes", "value": "y"}, {"label": "No", "value": "n"}],
            allow_other=False,
            tool_call_id=tool_call_id,
            ctx=ctx,
        )

    @api.tool
    async def pick_suffix(
        tool_call_id: str, params: NoParameters, ctx: ToolContext, on_update: OnUpdate
    ) -> object:
        """Ask for a version suffix, with a blank value for "None" (which no answer can be)."""
        return await ask_user_question(
            "Which suffix?",
            options=[
                {"label": "None", "value": ""},
                {"label": "Release candidate", "value": "-rc"},
            ],
            allow_other=False,
            tool_call_id=tool_call_id,
            ctx=ctx,
        )

    @api.tool
    async def pick_many(
        tool_call_id: str, params: NoParameters, ctx: ToolContext, on_update: OnUpdate
    ) -> object:
        """Ask for any number of platforms."""
        return await ask_user_question(
            "Which platforms?",
            options=[
                {"label": "Linux", "value": "linux"},
                {"label": "macOS", "value": "mac"},
                {"label": "Windows", "value": "win"},
            ],
            selection="multiple",
            tool_call_id=tool_call_id,
            ctx=ctx,
        )

    @api.tool
    async def free_text(
        tool_call_id: str, params: NoParameters, ctx: ToolContext, on_update: OnUpdate
    ) -> object:
        """Ask for a name."""
        return await ask_user_question("What is the codename?", tool_call_id=tool_call_id, ctx=ctx)

    @api.tool
    async def approve(
        tool_call_id: str, params: Release, ctx: ToolContext, on_update: OnUpdate
    ) -> object:
        """Ask to approve publishing a release."""
        return await ask_user_approval(
            title=f"Publish {params.version}?",
            body="The build passed.",
            sections=[{"title": "Changelog", "body": "- faster resume"}],
            tool_call_id=tool_call_id,
            ctx=ctx,
        )

    @api.tool
    async def expiring(
        tool_call_id: str, params: Expiring, ctx: ToolContext, on_update: OnUpdate
    ) -> object:
        """Ask a question that expires soon."""
        return await ask_user_question(
            "Quick: red or blue?",
            options=["Red", "Blue"],
            expires_at=datetime.now(UTC) + timedelta(seconds=params.seconds),
            tool_call_id=tool_call_id,
            ctx=ctx,
        )

    @api.tool
    async def count(tool_call_id: str, params: Count, ctx: ToolContext, on_update: OnUpdate) -> str:
        """Count, reporting each step."""
        for step in range(1, params.steps + 1):
            on_update(f"step {step}")
        return f"counted {params.steps}"

    @api.tool
    async def garbled(
        tool_call_id: str, params: NoParameters, ctx: ToolContext, on_update: OnUpdate
    ) -> str:
        """Report and return text holding a lone surrogate (as invalid UTF-8 decodes to)."""
        on_update("half \udc80 done")
        return "done \ud800 here"

    @api.tool
    async def pick_garbled(
        tool_call_id: str, params: NoParameters, ctx: ToolContext, on_update: OnUpdate
    ) -> object:
        """Ask a question whose text and option hold a lone surrogate."""
        return await ask_user_question(
            "Which \udc80 one?", options=[{"label": "A\ud800", "value": "a\ud800"}, "B"],
            tool_call_id=tool_call_id, ctx=ctx,
        )  # fmt: skip

    @api.tool
    async def fail(
        tool_call_id: str, params: NoParameters, ctx: ToolContext, on_update: OnUpdate
    ) -> str:
        """Fail (quoting ``RELEASE_TOKEN`` when the environment holds one)."""
        token = ctx.env.get("RELEASE_TOKEN")
        raise RuntimeError("the release server is down" + (f" for {token}" if token else ""))

    @api.tool
    async def quit(
        tool_call_id: str, params: NoParameters, ctx: ToolContext, on_update: OnUpdate
    ) -> str:
        """Exit the process, as ``argparse`` does on bad arguments."""
        sys.exit(3)

    @api.tool
    async def guarded(
        tool_call_id: str, params: Tag, ctx: ToolContext, on_update: OnUpdate
    ) -> object:
        """Ask, and note under ``tag`` how the ask was aborted."""
        try:
            return await ask_user_question("Still there?", tool_call_id=tool_call_id, ctx=ctx)
        except InteractionAborted as exc:
            _notes[params.tag] = f"aborted={ctx.aborted}: {exc}"
            print(f"note {params.tag}: {_notes[params.tag]}", file=sys.stderr, flush=True)
            _noted(params.tag).set()
            raise

    @api.tool
    async def abort_note(
        tool_call_id: str, params: Tag, ctx: ToolContext, on_update: OnUpdate
    ) -> str:
        """The note ``guarded`` made under ``tag`` (waits up to 10 s for it)."""
        with anyio.fail_after(10):
            await _noted(params.tag).wait()
        return _notes[params.tag]
