// What the official AG-UI client (@ag-ui/client 1.0) saw of one call: shared by the drivers
// in this folder, which each print what they saw as one JSON line.

// The subscriber that notes a leg's event types, its RUN_STARTED, RUN_FINISHED and RUN_ERROR.
export function watcher(leg) {
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

// One HttpAgent.runAgent call with a fresh run id: what it saw, the id it sent, its result or
// the error it threw. The caller notes the agent's pending interrupts as it needs them.
export async function leg(agent, params) {
  const seen = { types: [], started: null, finished: null, runError: null, error: null };
  const runId = `client-${Math.random().toString(16).slice(2)}`;
  try {
    const result = await agent.runAgent({ runId, ...params }, watcher(seen));
    seen.result = result.result ?? null;
  } catch (error) {
    seen.error = String(error?.message ?? error);
  }
  seen.sentRunId = runId;
  return seen;
}
