// The official AG-UI client (@ag-ui/client 1.0) through a resume whose leg is cancelled while
// it streams: a start that pauses, the resume (the test cancels the run while its leg holds),
// then the same resume again (a replay). What each call saw is printed as one JSON line.
import { HttpAgent, buildResumeArray } from "@ag-ui/client";

import { leg } from "./legs.mjs";

const url = process.env.AGUI_URL;
const token = process.env.AGUI_TOKEN;
const threadId = process.env.AGUI_THREAD;
const prompt = process.env.AGUI_PROMPT;

async function noted(agent, params) {
  const seen = await leg(agent, params);
  seen.pending = agent.pendingInterrupts.map((i) => i.id);
  return seen;
}

async function main() {
  const agent = new HttpAgent({ url, headers: { Authorization: `Bearer ${token}` }, threadId });
  agent.addMessage({ id: "user-1", role: "user", content: prompt });
  const out = {};
  out.paused = await noted(agent, {});
  const asked = agent.pendingInterrupts;
  const resume = buildResumeArray(asked, {
    [asked[0]?.id]: { status: "resolved", payload: { answer: "blue" } },
  });
  out.cancelled = await noted(agent, { resume });
  out.replayed = await noted(agent, { resume });
  console.log(JSON.stringify(out));
}

main().catch((error) => {
  console.log(JSON.stringify({ error: String(error?.stack ?? error) }));
  process.exitCode = 1;
});
