"""Workflows and recipes the graph tests run: written into a directory, as a user keeps them.

The recipes' demo models are scripted: they answer from what the request holds (the prompt,
the tool results), and note every turn they play in ``turns.log`` beside the recipe, so a test
in another process can count them.
"""

from __future__ import annotations

from pathlib import Path

WRITER = '''\
"""A writer whose one tool asks which change leads the notes."""

import json
from pathlib import Path

from pydantic import BaseModel

from interactions import ask_user_question
from recipes import OnUpdate, RecipeAPI, ToolContext
from recipes.messages import AssistantMessage, ToolCall, ToolResultMessage, UserMessage, text_of
from recipes.models import ScriptedModel

LOG = Path(__file__).with_name("turns.log")


class Pick(BaseModel):
    version: str


def _note(line: str) -> None:
    with LOG.open("a", encoding="utf-8") as out:
        out.write(line + "\\n")


def recipe(api: RecipeAPI) -> None:
    @api.tool(execution_mode="sequential")
    async def pick_highlight(tool_call_id: str, params: Pick, ctx: ToolContext,
                             on_update: OnUpdate) -> object:
        """Ask which change leads the notes."""
        _note("tool asked")
        return await ask_user_question(
            f"Which change leads {params.version}?", options=["speed", "safety"],
            tool_call_id=tool_call_id, ctx=ctx,
        )

    def ask(request):
        _note("turn 1")
        return AssistantMessage(tool_calls=[
            ToolCall(id="call_pick", name="pick_highlight", arguments={"version": "v2"})
        ])

    def write(request):
        _note("turn 2")
        result = [m for m in request.messages if isinstance(m, ToolResultMessage)][-1]
        prompt = text_of(next(m for m in request.messages if isinstance(m, UserMessage)).content)
        return AssistantMessage(text=json.dumps(
            {"draft": f"Lead: {text_of(result.content)} | asked with: {prompt}"}
        ))

    api.register_agent("writer", "You write release notes.")
    api.set_demo_model(ScriptedModel([ask, write], label="writer-demo"))
'''

ASKING_FLOW = """\
schema draft_out:
  draft: string

schema approval_out:
  approved: bool
  feedback: string

schema notes_out:
  notes: string

agent draft:
  recipe: ./writer.py
  user: "Draft the notes. Feedback: {{outputs.approve.feedback}}"
  output: draft_out

human approve:
  instructions: "Approve the notes?"
  output: approval_out

compute publish:
  output: notes_out
  expr:
    notes: "upper(outputs.draft.draft)"

workflow release:
  entry: draft
  draft -> approve
  approve -> publish when approved
  approve -> draft when not approved as retry(2)
  approve -> fail
  publish -> done
"""

ASKING_BESIDE_FLAKY = """\
schema draft_out:
  draft: string

router split:
  mode: fan_out_all

agent draft:
  recipe: ./writer.py
  output: draft_out

tool flaky:
  command: `test -f fixed && echo '{"fine": true}' || exit 4`

workflow fan:
  entry: split
  split -> draft
  split -> flaky
  draft -> done
  flaky -> done
"""
"""A fan-out: ``draft``'s agent asks (its tool notes ``tool asked`` first) while ``flaky`` fails
(resumably: a command's exit) until a file ``fixed`` exists."""

PLAIN_FLOW = """\
vars:
  audience: string [enum: "dev", "ops"] = "dev"

schema draft_out:
  draft: string

schema approval_out:
  approved: bool
  feedback: string

schema notes_out:
  notes: string

prompt draft_sys:
  You draft release notes for {{vars.audience}}.

agent draft:
  system: draft_sys
  user: "Draft v2. Feedback so far: {{outputs.approve.feedback}}"
  output: draft_out

human approve:
  instructions: "Approve the notes for {{vars.audience}}?"
  output: approval_out

compute publish:
  output: notes_out
  expr:
    notes: "upper(outputs.draft.draft)"

workflow release:
  entry: draft
  draft -> approve
  approve -> publish when approved
  approve -> draft when not approved as retry(2)
  approve -> fail
  publish -> done
"""


def write_flow(where: Path, flow: str, *, writer: bool = False) -> Path:
    """Write ``flow`` as ``flow.iter`` in ``where`` (and the writer recipe); return its path."""
    where.mkdir(parents=True, exist_ok=True)
    if writer:
        (where / "writer.py").write_text(WRITER, encoding="utf-8")
    path = where / "flow.iter"
    path.write_text(flow, encoding="utf-8")
    return path


def turns(where: Path) -> list[str]:
    """What the writer's demo model and tool noted, in order."""
    log = where / "turns.log"
    return log.read_text(encoding="utf-8").splitlines() if log.exists() else []
