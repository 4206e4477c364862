// Drive the web host's POST /agui with the official AG-UI client (@ag-ui/client 1.0):
// HttpAgent.runAgent, pendingInterrupts and buildResumeArray, through a whole conversation
// (start -> interrupt -> resume -> interrupt -> resume -> success), plus a refused resume.
// The client verifies the event sequence itself; what it saw is printed as one JSON line.
import { HttpAgent, buildResumeArray } from "@ag-ui/client";

import { leg } from "./legs.mjs";

const url = process.env.AGUI_URL;
const token = process.env.AGUI_TOKEN;
const prompt = process.env.AGUI_PROMPT ?? "Release v7.0.0";

async function noted(agent, params) {
  const seen = await leg(agent, params);
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
  out.first = await noted(agent, {});
  const channel = agent.pendingInterrupts;
  out.refused = await noted(agent, {
    resume: buildResumeArray(channel, {
      [channel[0]?.id]: { status: "resolved", payload: { answer: 42 } },
    }),
  });
  out.second = await noted(agent, {
    resume: buildResumeArray(channel, {
      [channel[0]?.id]: { status: "resolved", payload: { answer: "beta" } },
    }),
  });
  const approval = agent.pendingInterrupts;
  out.third = await noted(agent, {
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
