// Drive the web host's POST /agui with the official AG-UI client (@ag-ui/client 1.0):
// HttpAgent.runAgent, pendingInterrupts and buildResumeArray, through a whole conversation
// (start -> interrupt -> resume -> interrupt -> resume -> success), plus a refused resume.
// The client verifies the event sequence itself; what it saw is printed as one JSON line.
import { HttpAgent, buildResumeArray } from "@ag-ui/client";

const url = process.env.AGUI_URL;
const token = process.env.AGUI_TOKEN;
const prompt = process.env.AGUI_PROMPT ?? "Release v7.0.0";

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
    const result = await agent.runAgent({ runId, ...params }, watcher(seen));
    seen.result = result.result ?? null;
  } catch (error) {
    seen.error = String(error?.message ?? error);
  }
  seen.sentRunId = runId;
  seen.pending = agent.pendingInterrupts.map((i) => ({
    id: i.id,
    reason: i.reason,
    message: i.message,
    options: i.options ?? null,
    responseSchema: i.responseSchema ?? null,
  }));
  return seen;
}

async function main() {
  const agent = new HttpAgent({
    url,
    headers: { Authorization: `Bearer ${token}` },
    threadId: `thread-client-${Date.now()}`,
  });
  agent.addMessage({ id: "user-1", role: "user", content: prompt });
  const out = { threadId: agent.threadId };
  out.first = await leg(agent, {});
  const channel = agent.pendingInterrupts;
  out.refused = await leg(agent, {
    resume: buildResumeArray(channel, {
      [channel[0]?.id]: { status: "resolved", payload: { answer: 42 } },
    }),
  });
  out.second = await leg(agent, {
    resume: buildResumeArray(channel, {
      [channel[0]?.id]: { status: "resolved", payload: { answer: "beta" } },
    }),
  });
  const approval = agent.pendingInterrupts;
  out.third = await leg(agent, {
    resume: buildResumeArray(approval, {
      [approval[0]?.id]: { status: "resolved", payload: { approved: true, feedback: "ship" } },
    }),
  });
  out.messages = agent.messages.map((m) => ({ role: m.role, content: m.content ?? null }));
  console.log(JSON.stringify(out));
}

main().catch((error) => {
  console.log(JSON.stringify({ error: String(error?.stack ?? error) }));
  process.exitCode = 1;
});
