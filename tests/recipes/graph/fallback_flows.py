"""The plan-review shape of Iterion's ADR-091, as the fallback tests run it.

An author (a scripted model) writes a plan; a peer from another family (``openai:``, served by
the local fake provider) reviews it, carrying the routes a test gives it; a deterministic gate
reads the stamps. ``write_plan_phase`` writes the flow and the author's script in a directory.
"""

from __future__ import annotations

import json
from pathlib import Path

SKIP_ROUTE = """\
    give_up:
      action: skip
      when: "vars.plan_review_policy == 'skip'"
      on: [any]
"""

PLAN_PHASE = """\
vars:
  plan_review_policy: string [enum: "wait", "skip"] = "wait"
{extra_vars}
schema plan_out:
  plan: string

schema review_out:
  approved: bool
  critique: string
  score: int

schema gate_out:
  reviewed: bool
  provenance: string

agent plan:
  model: "scripted:plan.json"
  output: plan_out

judge plan_review:
  model: "openai:gpt-4.1"
  user: "Review this plan: {{{{outputs.plan.plan}}}}"
  output: review_out
  fallbacks:
{routes}
compute plan_gate:
  output: gate_out
  expr:
    reviewed: "not outputs.plan_review._skipped"
    provenance: {provenance}

workflow plan_phase:
  entry: plan
  plan -> plan_review -> plan_gate -> done
"""

PROVENANCE = (
    "\"if(outputs.plan_review._skipped, 'peer skipped mid-run', "
    "if(outputs.plan_review._fallback_used, 'reviewed by ' + outputs.plan_review._served_by, "
    "'peer-reviewed'))\""
)
REVIEW = json.dumps({"approved": True, "critique": "Sound; test step 2.", "score": 4})


def write_plan_phase(where: Path, routes: str = SKIP_ROUTE, extra_vars: str = "") -> Path:
    """Write ``flow.iter`` (the peer's routes: ``routes``) and the author's script."""
    where.mkdir(parents=True, exist_ok=True)
    script = {"turns": [{"text": json.dumps({"plan": "1. cut the release 2. tag it"})}]}
    (where / "plan.json").write_text(json.dumps(script), encoding="utf-8")
    path = where / "flow.iter"
    text = PLAN_PHASE.format(routes=routes, extra_vars=extra_vars, provenance=PROVENANCE)
    path.write_text(text, encoding="utf-8")
    return path
