"""How fast the Slack host acknowledges a click and updates its card (Slack wants an ack
within 3 s), against the tests' local fake Slack and a SQLite store.

Run on demand: ``.venv/bin/python benchmarks/bench_slack.py [--runs N]``. For N runs of the
demo recipe it prints the median and 95th percentile of: a click's acknowledgement over Socket
Mode and over HTTP (from sending it to the ack), the click to its card's ``chat.update``, and an
answer given elsewhere (another runner on the store) to the card's update.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from recipes.runs import Runner  # noqa: E402
from tests.hosts.slack.harness import RELEASE, World, is_card, wait_event, world  # noqa: E402
from tests.hosts.slack.payloads import app_mention, block_actions  # noqa: E402


def _report(name: str, samples: list[float]) -> None:
    ordered = sorted(samples)
    p95 = ordered[max(0, round(0.95 * len(ordered)) - 1)]
    print(
        f"{name:<34} median {statistics.median(ordered) * 1000:8.2f} ms"
        f"   p95 {p95 * 1000:8.2f} ms   n={len(ordered)}"
    )


async def _updated(w: World, ts: str) -> None:
    await w.fake.wait_for("chat.update", lambda c: c.args["ts"] == ts)


async def bench(runs: int) -> None:
    socket_ack: list[float] = []
    http_ack: list[float] = []
    to_update: list[float] = []
    elsewhere: list[float] = []
    with tempfile.TemporaryDirectory() as folder:
        async with world(Path(folder), http=True, channel="CBENCH") as w:
            other = Runner(w.store, env={}, host="cli", cwd=ROOT)
            for i in range(runs):
                thread = f"1700000000.{i:06d}"
                await w.fake.send_envelope(
                    "events_api", app_mention(f"<@UBOT> Release v{i}", ts=thread, event_id=f"E{i}")
                )
                card = await w.fake.wait_for("chat.postMessage", lambda c, t=thread: (
                    is_card(c) and c.args.get("thread_ts") == t
                ))  # fmt: skip
                click = block_actions(card, "pi_pick.0", user="UALICE")
                started = time.perf_counter()
                if i % 2:
                    reply = await w.post_interaction(click)
                    assert reply.status_code == 200
                    http_ack.append(time.perf_counter() - started)
                else:
                    await w.interact(click)
                    socket_ack.append(time.perf_counter() - started)
                await _updated(w, card.result["ts"])
                to_update.append(time.perf_counter() - started)

                paused = await other.start(RELEASE, f"Release v{i}.1")
                [posted] = await wait_event(w.store, paused.run_id, "slack_card_posted")
                started = time.perf_counter()
                await other.answer(paused.run_id, "int-call_channel", {"answer": "Beta"})
                await _updated(w, str(posted.data["ts"]))
                elsewhere.append(time.perf_counter() - started)
    _report("click ack, Socket Mode", socket_ack)
    _report("click ack, HTTP", http_ack)
    _report("click to card updated", to_update)
    _report("answer elsewhere to card updated", elsewhere)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=20)
    anyio.run(bench, parser.parse_args().runs)


if __name__ == "__main__":
    main()
