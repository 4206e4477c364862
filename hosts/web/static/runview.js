// The run view (the view at /runs/RUN, a link anyone signed in can open): one run's title,
// status, recipe or workflow, times, prompt, its questions and how each was answered (open
// ones answerable here, with the same cards as the inbox), its final text or error, and its
// transcript (messages, tool calls and their results), rebuilt from REST and then streamed
// live from the run's run.event frames. Buttons: Cancel (a running or paused run, after a
// confirmation), Retry (a failed_resumable run), New run. A graph run's workflow is drawn by
// PiGraph (graph.js) when the page has it. Every text is set with textContent.
"use strict";

const RunView = (() => {
  const { el, when } = Dom;

  const ENDED = new Set(["finished", "failed", "cancelled"]);

  // `api(path, options)` calls REST; `runs` is the runs list (runs.js), which knows each run;
  // `answer(interaction, payload)` sends an answer (as the inbox's cards do); `me()` is who
  // signed in; `announce(text)` tells a screen reader; `go(path)` moves to another view.
  function create({ api, runs, answer, me, announce, go }) {
    const $ = (id) => document.getElementById(id);
    let viewed = null; // the run shown
    let transcript = new Map(); // message/tool id -> {node, stored}
    let questions = new Map(); // interaction id -> card
    let graph = null; // PiGraph's drawing of a graph run
    let early = null; // while the run's history loads: its live frames, applied after it

    function showStatus(run) {
      const line = $("run-view-status");
      const why = run.error && run.error !== run.status ? ` · ${run.error}` : "";
      line.textContent = `${run.kind} · ${statusText(run.status)}${why}`;
      line.dataset.status = run.status;
      const warning = $("run-view-warning");
      warning.textContent = run.warning ? `⚠ ${run.warning}` : "";
      warning.hidden = !run.warning;
      $("run-view-title").textContent = run.title || `Run ${run.id}`;
      $("run-cancel").hidden = !(run.status === "running" || run.status === "paused_waiting_human");
      $("run-retry").hidden = run.status !== "failed_resumable";
      showFacts(run);
    }

    function statusText(status) {
      return status === "paused_waiting_human" ? "waiting for an answer" : status.replaceAll("_", " ");
    }

    function showFacts(run) {
      const facts = $("run-facts");
      facts.textContent = "";
      const add = (term, value) => {
        if (value === undefined || value === null || value === "") return;
        const row = el("div");
        row.append(el("dt", {}, term));
        const dd = el("dd");
        if (value instanceof Node) dd.appendChild(value); else dd.textContent = value;
        row.appendChild(dd);
        facts.appendChild(row);
      };
      add("Run", run.id);
      add(run.kind === "graph" ? "Workflow" : "Recipe", run.ref);
      if (run.kind !== "graph") add("Agent", run.agent);
      else add("Workflow name", run.agent);
      if (run.created_at) add("Started", when(run.created_at));
      if (run.updated_at) add("Updated", when(run.updated_at));
      if (run.parent_run_id) add("Part of", run.parent_run_id);
    }

    // A run changed (the runs list tells): the view follows if it is the one shown. A leg
    // that ended (the run stopped running) is read again from the store, in order: the page
    // may have been opened in the middle of it, when only its later events arrived live.
    let lastStatus = null;
    function changed(run) {
      if (viewed !== run.id) return;
      showStatus(run);
      const legEnded = lastStatus === "running" && run.status !== "running";
      lastStatus = run.status;
      if (ENDED.has(run.status) || run.status === "failed_resumable") outcome(run.id, run.status);
      if (legEnded && !early) history(run.id);
    }

    async function history(runId) {
      let events;
      try {
        ({ events } = await api(`/api/runs/${encodeURIComponent(runId)}/agui`));
      } catch (error) { return; }
      if (viewed !== runId || early) return;
      transcript = new Map();
      $("transcript").textContent = "";
      for (const event of events) applyEvent(event, event.type, false);
    }

    // The final text or the error, read from the run's detail once it has ended.
    let outcomeFor = null; // "run/status" whose outcome is shown (or being read)
    async function outcome(runId, status, detail) {
      const key = `${runId}/${status}`;
      if (!detail) {
        if (outcomeFor === key) return;
        outcomeFor = key;
        try { detail = await api(`/api/runs/${encodeURIComponent(runId)}`); } catch (error) { outcomeFor = null; return; }
        if (viewed !== runId) return;
      }
      outcomeFor = key;
      const box = $("run-outcome");
      box.textContent = "";
      const ended = ENDED.has(detail.status) || detail.status === "failed_resumable";
      if (!ended) { box.hidden = true; $("run-outcome-title").hidden = true; return; }
      if (detail.status === "cancelled") {
        const why = detail.error && detail.error !== "cancelled" ? `: ${detail.error}` : ".";
        box.appendChild(el("p", { className: "run-error" }, `Cancelled${why}`));
      } else if (detail.error) {
        box.appendChild(el("p", { className: "run-error" }, `Error: ${detail.error}`));
      }
      if (detail.text) box.appendChild(el("div", { className: "run-text" }, detail.text));
      if (!box.childNodes.length) box.appendChild(el("p", { className: "empty" }, `The run ${statusText(detail.status)} with no final text.`));
      box.hidden = false;
      $("run-outcome-title").hidden = false;
    }

    async function show(runId, focus = true) {
      const again = viewed === runId;
      viewed = runId;
      early = [];
      lastStatus = null;
      $("run-view").dataset.viewing = runId;
      $("run-view").setAttribute("aria-busy", "true");
      transcript = new Map();
      questions = new Map();
      outcomeFor = null;
      $("transcript").textContent = "";
      $("run-questions").textContent = "";
      $("run-no-questions").hidden = false;
      $("run-prompt").textContent = "";
      $("run-action-status").textContent = "";
      $("run-outcome").hidden = true;
      $("run-outcome-title").hidden = true;
      if (!again) unmount();
      $("run-view-title").textContent = `Run ${runId}`;
      const run = await runs.ensure(runId, "known");
      if (viewed !== runId) return;
      showStatus(run);
      try {  // the run as it stands, with what only its detail says (a finished run's warning)
        const detail = await api(`/api/runs/${encodeURIComponent(runId)}`);
        if (viewed !== runId) return;
        runs.upsert(detail, "known");
        $("run-prompt").textContent = detail.prompt || "(none)";
        for (const interaction of detail.interactions) addQuestion(interaction);
        await outcome(runId, detail.status, detail);
        if (detail.kind === "graph") mount(runId);
      } catch (error) {
        if (viewed === runId && error.body && error.body.error === "unknown run") {
          unknown(runId);
          return;
        }
        if (viewed === runId && error.message !== "unauthorized") {
          $("run-action-status").textContent = `Could not read the run: ${error.message}`;
        }
      }
      try {
        const { events } = await api(`/api/runs/${encodeURIComponent(runId)}/agui`);
        if (viewed !== runId) return;
        for (const event of events) applyEvent(event, event.type, false);
      } catch (error) { /* the live frames still come */ }
      if (viewed !== runId) return;
      const arrived = early || [];
      early = null;
      for (const frame of arrived) onEvent(frame);
      $("run-view").removeAttribute("aria-busy");
      if (focus) $("run-view-title").focus?.();
    }

    // An address naming no run of this server's store.
    function unknown(runId) {
      early = null;
      $("run-view").removeAttribute("aria-busy");
      $("run-view-title").textContent = "No such run";
      const line = $("run-view-status");
      line.textContent = `This server has no run ${runId}.`;
      delete line.dataset.status;
      $("run-facts").textContent = "";
      $("run-prompt").textContent = "";
      $("run-cancel").hidden = true;
      $("run-retry").hidden = true;
    }

    function hide() {
      viewed = null;
      early = null;
      unmount();
    }

    // ---------------------------------------------------------------- the workflow's picture

    function mount(runId) {
      const box = $("run-graph");
      if (graph || !window.PiGraph) return;
      box.hidden = false;
      try {
        graph = window.PiGraph.mount(box, runId, api);
      } catch (error) {
        box.hidden = true;
        graph = null;
      }
    }

    function unmount() {
      if (graph) { try { graph.destroy(); } catch (error) { /* gone either way */ } }
      graph = null;
      const box = $("run-graph");
      box.textContent = "";
      box.hidden = true;
    }

    // ---------------------------------------------------------------- questions

    function addQuestion(interaction) {
      // An await record is the run's wait for its async questions: the system settles it.
      if (interaction.kind === "await" || questions.has(interaction.id)) return;
      const run = runs.get(interaction.run_id) || {};
      const card = Cards.build(interaction, run.kind, (payload) => answer(interaction, payload), me());
      // The inbox has a card of its own for an open question: this one is found by the run.
      card.removeAttribute("data-run");
      card.dataset.questionOf = interaction.run_id;
      questions.set(interaction.id, card);
      $("run-questions").appendChild(card);
      $("run-no-questions").hidden = true;
      if (interaction.answer) {
        Cards.resolve(card, { ...interaction.answer, answered_at: interaction.answered_at });
      } else if (interaction.approvals && interaction.approvals.length) {
        Cards.votes(card, interaction, me());
      }
    }

    // interrupt.opened / interrupt.voted / interrupt.resolved frames of the viewed run.
    function onOpened(frame) {
      if (frame.run_id === viewed) addQuestion(frame.interaction);
    }

    function onVoted(frame) {
      const card = frame.run_id === viewed && questions.get(frame.interaction_id);
      if (card && card.dataset.state === "open") Cards.votes(card, frame, me());
    }

    function onReminded(frame) {
      const card = frame.run_id === viewed && questions.get(frame.interaction_id);
      if (card && card.dataset.state === "open") Cards.reach(card, frame);
    }

    function onResolved(frame) {
      const card = frame.run_id === viewed && questions.get(frame.interaction_id);
      if (!card || card.dataset.state !== "open") return;
      Cards.resolve(card, { ...frame, answered_at: frame.answered_at || new Date().toISOString() });
    }

    // ---------------------------------------------------------------- the transcript

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

    // A run.event frame: applied when it is the viewed run's (and drawn, for a graph run).
    function onEvent(frame) {
      if (frame.run_id !== viewed) { runs.ensure(frame.run_id); return; }
      if (early) { early.push(frame); return; }
      applyEvent(frame.event, frame.event.type, frame.live);
      if (graph) { try { graph.update(frame.event); } catch (error) { /* the picture lags */ } }
    }

    // ---------------------------------------------------------------- the buttons

    async function act(verb, path, done) {
      const runId = viewed;
      const line = $("run-action-status");
      line.textContent = `${verb}…`;
      try {
        const ref = await api(`/api/runs/${encodeURIComponent(runId)}/${path}`, { method: "POST", body: "{}" });
        line.textContent = done(ref);
        announce(line.textContent);
      } catch (error) {
        if (error.message === "unauthorized") return;
        line.textContent = `${verb} refused: ${error.message}`;
        announce(line.textContent);
      }
    }

    $("run-cancel").addEventListener("click", () => {
      if (!viewed) return;
      if (!window.confirm(`Cancel run ${viewed}? Its open questions close as cancelled.`)) return;
      act("Cancelling", "cancel", (ref) => `Run ${ref.run_id} ${statusText(ref.status)}.`);
    });
    $("run-retry").addEventListener("click", () => {
      if (!viewed) return;
      act("Retrying", "retry", (ref) => `Run ${ref.run_id} retried: ${statusText(ref.status)}.`);
    });
    $("run-new").addEventListener("click", () => {
      go("/runs");
      runs.openForm(true);
    });

    return { show, hide, changed, onEvent, onOpened, onVoted, onReminded, onResolved, viewed: () => viewed };
  }

  return { create };
})();
