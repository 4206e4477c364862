"""What an approval policy costs a tool call: a run of 100 tool calls under a 20-rule policy.

Run on demand: ``.venv/bin/python benchmarks/bench_policy.py [--calls N] [--rounds R]``.

An in-process agent session (a scripted model, one tool) makes ``--calls`` tool calls, one per
turn, three ways: with no policy (the gate's cheap path), and under a 20-rule policy whose
first 19 rules never match a call and whose last allows it (the worst case: every rule's tool
glob and condition is tried). It prints the time of a run and the policy's cost per call in
µs (the difference, divided by the calls), the median of ``--rounds`` interleaved rounds, and
the cost of ``Policy.decide`` alone. The goal: under 50 µs a call.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio
from pydantic import BaseModel

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from recipes import OnUpdate, RecipeAPI, ToolContext, create_agent_session  # noqa: E402
from recipes.messages import AssistantMessage, ToolCall  # noqa: E402
from recipes.models import ScriptedModel  # noqa: E402
from recipes.policy import POLICY_ENV, load_policy  # noqa: E402

GOAL_US = 50.0


class Step(BaseModel):
    env: str
    n: int


def _policy_text() -> str:
    rules = [
        f'[[rule]]\ntool = "other_{i}"\nwhen = "args.env == \'prod\' and args.n > {i}"\n'
        f'action = "deny"\nreason = "rule {i}"\n'
        for i in range(19)
    ]
    rules.append('[[rule]]\ntool = "*"\nwhen = "args.env == \'dev\'"\naction = "allow"\n')
    return "\n".join(rules)


def _recipe(calls: int) -> RecipeAPI:
    api = RecipeAPI()

    @api.tool
    async def step(tool_call_id: str, params: Step, ctx: ToolContext, on_update: OnUpdate) -> str:
        """One step of the work."""
        return "ok"

    turns: list[AssistantMessage | str] = [
        AssistantMessage(tool_calls=[ToolCall(id=f"c{i}", name="step",
                                              arguments={"env": "dev", "n": i})])
        for i in range(calls)
    ]  # fmt: skip
    turns.append("done")
    api.register_agent("worker", "Work.")
    api.set_demo_model(ScriptedModel(turns, label="bench"))
    return api


async def _run(api: RecipeAPI, env: dict[str, str], cwd: Path) -> float:
    session = create_agent_session(api.build("bench"), env=env, cwd=cwd, max_turns=None)
    started = time.perf_counter()
    await session.prompt("go")
    return time.perf_counter() - started


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        cwd = Path(folder)
        policy = cwd / "policy.toml"
        policy.write_text(_policy_text(), encoding="utf-8")
        plain: list[float] = []
        ruled: list[float] = []
        await _run(_recipe(args.calls), {}, cwd)  # warm the imports and caches
        await _run(_recipe(args.calls), {POLICY_ENV: str(policy)}, cwd)
        for _ in range(args.rounds):
            plain.append(await _run(_recipe(args.calls), {}, cwd))
            ruled.append(await _run(_recipe(args.calls), {POLICY_ENV: str(policy)}, cwd))
        loaded = load_policy(policy)
        repeat = 20_000
        started = time.perf_counter()
        for i in range(repeat):
            loaded.decide("step", {"env": "dev", "n": i})
        decide_us = (time.perf_counter() - started) / repeat * 1e6
    base, under = statistics.median(plain), statistics.median(ruled)
    per_call_us = (under - base) / args.calls * 1e6
    print(f"{args.calls} tool calls, median of {args.rounds} rounds")
    print(f"  no policy:          {base * 1e3:8.2f} ms")
    print(f"  20-rule policy:     {under * 1e3:8.2f} ms")
    print(f"  policy per call:    {per_call_us:8.1f} µs   (goal < {GOAL_US:.0f} µs)")
    print(f"  Policy.decide alone:{decide_us:8.1f} µs   (19 rules tried, the 20th allows)")


if __name__ == "__main__":
    anyio.run(main)
