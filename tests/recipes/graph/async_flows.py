"""The async-questions workflows and recipes the tests run (written where a user keeps them).

``README_DEMO`` is Iterion's demo shape (``examples/async-questions/main.bot``): ``draft``
posts two questions and keeps drafting, ``gate`` waits for the answers, ``finalize`` reads
``{{outputs.gate.answers}}``. The recipe's agents carry their own scripted models.
"""

from __future__ import annotations

from pathlib import Path

README_RECIPE = '''\
"""A drafter that posts its questions first, a finalizer that fills the gaps, and an author
that waits for the answers itself (the await_answers tool)."""

import json

from recipes import RecipeAPI
from recipes.messages import AssistantMessage, ToolCall, ToolResultMessage, UserMessage, text_of
from recipes.models import ScriptedModel


def _asks(*questions):
    calls = []
    for n, (question, options) in enumerate(questions, 1):
        arguments = {"question": question}
        if options:
            arguments["options"] = options
        calls.append(ToolCall(id=f"ask_{n}", name="ask_user_async", arguments=arguments))
    return AssistantMessage(text="Posting my questions first.", tool_calls=calls)


QUESTIONS = (("What is the project called?", None), ("Which tone?", ["friendly", "formal"]))


def finalize(request):
    prompt = text_of([m for m in request.messages if isinstance(m, UserMessage)][-1].content)
    answers = json.JSONDecoder().raw_decode(prompt.split("Operator answers:")[1].strip())[0]
    name, tone = (a["answer"] for a in answers)
    return AssistantMessage(text=json.dumps({"readme": f"# {name}\\n\\nA {tone} README."}))


def author_done(request):
    said = [text_of(m.content) for m in request.messages
            if isinstance(m, ToolResultMessage | UserMessage)]
    return AssistantMessage(text=json.dumps({"draft": " | ".join(said[1:])}))


def recipe(api: RecipeAPI) -> None:
    api.register_agent("drafter", "You draft READMEs.", model=ScriptedModel(
        [_asks(*QUESTIONS), json.dumps({"draft": "# <NAME>\\n\\nA <TONE> README."})],
        label="drafter"))
    api.register_agent("finalizer", "You finalize READMEs.",
                       model=ScriptedModel([finalize], label="finalizer"))
    api.register_agent("author", "You write, waiting for answers yourself.", model=ScriptedModel(
        [_asks(QUESTIONS[0]),
         AssistantMessage(tool_calls=[ToolCall(id="wait", name="await_answers", arguments={})]),
         author_done], label="author"), async_questions=True)
    api.register_agent("brancher", "You wait, wrongly, inside a branch.", model=ScriptedModel(
        [AssistantMessage(tool_calls=[ToolCall(id="wait", name="await_answers", arguments={})]),
         author_done], label="brancher"))
'''

README_DEMO = """\
## A README drafting workflow shaped like Iterion's async-questions demo.

schema draft_out:
  draft: string

schema final_out:
  readme: string

prompt draft_sys:
  You draft a README skeleton for a small project.
  Two things only the operator can decide: the name and the tone.
  Post both questions first, then draft everything else with placeholders.

prompt draft_user:
  Start now: post your questions, then draft while the operator answers.

prompt finalize_user:
  Draft:
  {{outputs.draft.draft}}
  Operator answers:
  {{outputs.gate.answers}}

agent draft:
  recipe: ./readme.py
  agent: drafter
  interaction: async
  system: draft_sys
  user: draft_user
  output: draft_out

## The sync point: wait here until every posted question is answered.
await_answers gate:
  from: draft
  timeout: "30m"

agent finalize:
  recipe: ./readme.py
  agent: finalizer
  user: finalize_user
  output: final_out
  publish: readme

workflow async_questions:
  entry: draft
  draft -> gate
  gate -> finalize
  finalize -> done
"""


def write_demo(where: Path, flow: str = README_DEMO) -> Path:
    """Write the recipe and ``flow`` into ``where``; return the flow's path."""
    where.mkdir(parents=True, exist_ok=True)
    (where / "readme.py").write_text(README_RECIPE, encoding="utf-8")
    path = where / "flow.iter"
    path.write_text(flow, encoding="utf-8")
    return path


def flow_of(nodes: str, edges: str, budget: str = "") -> str:
    """A workflow over the README recipe's agents: ``nodes`` declared after the schema, then
    the workflow ``w`` (entry: the first node declared) with ``edges``."""
    first = nodes.split(":", 1)[0].split()[-1]
    return (
        "schema draft_out:\n  draft: string\n\n" + nodes
        + f"\nworkflow w:\n  entry: {first}\n{budget}{edges}"
    )


DRAFT = """\
agent draft:
  recipe: ./readme.py
  agent: drafter
  interaction: async
  output: draft_out
"""
