// The official AG-UI client (@ag-ui/client 1.0) through a resume whose leg is cancelled while
// it streams: a start that pauses, the resume (the test cancels the run while its leg holds),
// then the same resume again (a replay). Run with `node --input-type=module` from
// tests/hosts/agui_client (where the client is installed), this file on stdin; what each call
// saw is printed as one JSON line.
import { HttpAgent, buildResumeArray } from "@ag-ui/client";

const url = process.env.AGUI_URL;
const token = process.env.AGUI_TOKEN;
const threadId = process.env.AGUI_THREAD;
const prompt = process.env.AGUI_PROMPT;

function watcher(leg) {
  return {
    onEvent({ event }) {
      leg.types.push(event.type);
    },
    onRunStartedEvent({ event }) {
      leg.started = { runId: event.runId, parentRunId: event.parentRunId ?? null };
    },
    onRunFinishedEvent({ event }) {
      leg.finished = { runId: event.runId, outcome: event.outcome?.type ?? null };
    },
    onRunErrorEvent({ event }) {
      leg.runError = { message: event.message, code: event.code ?? null };
    },
  };
}

async function leg(agent, params) {
  const seen = { types: [], started: null, finished: null, runError: null, error: null };
  const runId = `client-${Math.random().toString(16).slice(2)}`;
  try {
    await agent.runAgent({ runId, ...params }, watcher(seen));
  } catch (error) {
    seen.error = String(error?.message ?? error);
  }
  seen.sentRunId = runId;
  seen.pending = agent.pendingInterrupts.map((i) => i.id);
  return seen;
}

async function main() {
  const agent = new HttpAgent({ url, headers: { Authorization: `Bearer ${token}` }, threadId });
  agent.addMessage({ id: "user-1", role: "user", content: prompt });
  const out = {};
  out.paused = await leg(agent, {});
  const asked = agent.pendingInterrupts;
  const resume = buildResumeArray(asked, {
    [asked[0]?.id]: { status: "resolved", payload: { answer: "blue" } },
  });
  out.cancelled = await leg(agent, { resume });
  out.replayed = await leg(agent, { resume });
  console.log(JSON.stringify(out));
}

main().catch((error) => {
  console.log(JSON.stringify({ error: String(error?.stack ?? error) }));
  process.exitCode = 1;
});
