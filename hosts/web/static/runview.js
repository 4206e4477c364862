// The run view (the view at /runs/RUN): one run's status and its transcript (messages, tool
// calls and their results), rebuilt from REST and then streamed live from the run's
// run.event frames. Every text is set with textContent.
"use strict";

const RunView = (() => {
  // `api(path, options)` calls REST; `runs` is the runs list (runs.js), which knows each run.
  function create({ api, runs }) {
    const $ = (id) => document.getElementById(id);
    let viewed = null; // the run shown
    let transcript = new Map(); // message/tool id -> {node, stored}

    function showStatus(run) {
      const line = $("run-view-status");
      line.textContent = `${run.kind} · ${run.status.replaceAll("_", " ")}${run.error ? ` · ${run.error}` : ""}`;
      line.dataset.status = run.status;
      const warning = $("run-view-warning");
      warning.textContent = run.warning ? `⚠ ${run.warning}` : "";
      warning.hidden = !run.warning;
    }

    // A run changed (the runs list tells): the view follows if it is the one shown.
    function changed(run) {
      if (viewed === run.id) showStatus(run);
    }

    async function show(runId, focus = true) {
      viewed = runId;
      transcript = new Map();
      $("transcript").textContent = "";
      $("run-view-title").textContent = `Run ${runId}`;
      const run = await runs.ensure(runId);
      showStatus(run);
      try {  // the run as it stands, with what only its detail says (a finished run's warning)
        const detail = await api(`/api/runs/${encodeURIComponent(runId)}`);
        if (viewed === runId) runs.upsert(detail);
      } catch (error) { /* the list's summary stays */ }
      try {
        const { events } = await api(`/api/runs/${encodeURIComponent(runId)}/agui`);
        if (viewed !== runId) return;
        for (const event of events) applyEvent(event, event.type, false);
      } catch (error) { /* the live frames still come */ }
      if (focus) $("run-view-title").focus?.();
    }

    function hide() {
      viewed = null;
    }

    function entry(key, role, label) {
      let found = transcript.get(key);
      if (found) return found;
      const item = document.createElement("li");
      item.className = `entry ${role}`;
      const who = document.createElement("span");
      who.className = "entry-role";
      who.textContent = label;
      const text = document.createElement("div");
      text.className = "entry-text";
      item.append(who, text);
      $("transcript").appendChild(item);
      found = { node: text, stored: false, item };
      transcript.set(key, found);
      return found;
    }

    // One AG-UI event of the viewed run; `live` deltas append, stored (coalesced) text replaces.
    function applyEvent(event, type, live) {
      type = type || event.type;
      if (type === "TEXT_MESSAGE_CONTENT") {
        const item = entry(event.messageId, "assistant", "Assistant");
        if (live && item.stored) return;
        if (!live && !item.stored) { item.stored = true; item.node.textContent = ""; }
        item.node.textContent += event.delta;
      } else if (type === "TOOL_CALL_START") {
        entry(`call-${event.toolCallId}`, "tool", `Tool call: ${event.toolCallName}`);
      } else if (type === "TOOL_CALL_ARGS") {
        const item = entry(`call-${event.toolCallId}`, "tool", "Tool call");
        if (!live && !item.stored) { item.stored = true; item.node.textContent = ""; }
        if (live && item.stored) return;
        item.node.textContent += event.delta;
      } else if (type === "TOOL_CALL_RESULT") {
        const item = entry(`result-${event.toolCallId}`, "result", "Tool result");
        item.node.textContent = event.content;
      } else if (type === "RUN_ERROR") {
        const item = entry(`error-${transcript.size}`, "error", "Error");
        item.node.textContent = event.message;
      }
    }

    // A run.event frame: applied when it is the viewed run's.
    function onEvent(frame) {
      if (frame.run_id === viewed) applyEvent(frame.event, frame.event.type, frame.live);
      else runs.ensure(frame.run_id);
    }

    return { show, hide, changed, onEvent, viewed: () => viewed };
  }

  return { create };
})();
