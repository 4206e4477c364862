// The runs list (the view at /runs): every run the page knows of, newest first, kept live by
// the WebSocket's run frames. It also keeps what the page knows of each run (its kind, status,
// error) for the other views: `get(runId)`, `ensure(runId)`. Every text is set with textContent.
"use strict";

const Runs = (() => {
  // `api(path, options)` calls REST; `announce(text)` tells a screen reader; `go(path)` moves
  // the page to another view; `changed(run)` is told of every change to a run.
  function create({ api, announce, go, changed }) {
    const $ = (id) => document.getElementById(id);
    const runs = new Map(); // run id -> what the page knows of it

    function runItem(run) {
      let item = document.querySelector(`li[data-run="${CSS.escape(run.id)}"]`);
      if (!item) {
        item = document.createElement("li");
        item.dataset.run = run.id;
        const open = document.createElement("a");
        open.className = "run-link";
        open.href = `/runs/${encodeURIComponent(run.id)}`;
        open.addEventListener("click", (event) => {
          if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
          event.preventDefault();
          go(open.getAttribute("href"));
        });
        const kind = document.createElement("span");
        kind.className = "kind";
        const status = document.createElement("span");
        status.className = "status";
        const detail = document.createElement("span");
        detail.className = "run-detail";
        item.append(open, kind, status, detail);
        $("runs").prepend(item);
      }
      item.querySelector(".run-link").textContent = run.id;
      item.querySelector(".kind").textContent = run.kind;
      const status = item.querySelector(".status");
      status.textContent = run.status.replaceAll("_", " ");
      status.dataset.status = run.status;
      item.querySelector(".run-detail").textContent =
        [run.agent, run.error, run.warning && `⚠ ${run.warning}`].filter(Boolean).join(" · ");
      $("no-runs").hidden = runs.size > 0;
      return item;
    }

    function upsert(run) {
      const known = runs.get(run.id) || {};
      const merged = { ...known, ...run };
      runs.set(run.id, merged);
      runItem(merged);
      changed(merged);
    }

    async function ensure(runId) {
      if (runs.has(runId)) return runs.get(runId);
      runs.set(runId, { id: runId, kind: "run", status: "running", agent: "" });
      try {
        upsert(await api(`/api/runs/${encodeURIComponent(runId)}`));
      } catch (error) { /* shown when it arrives */ }
      return runs.get(runId);
    }

    function setStatus(runId, kind, status, error, warning) {
      const run = runs.get(runId) || { id: runId, agent: "" };
      upsert({
        ...run, kind: kind || run.kind || "run", status, error: error || null, warning: warning || null,
      });
      if (status === "finished" || status === "failed" || status === "cancelled") {
        announce(`Run ${runId} ${status}.${warning ? ` ${warning}` : ""}`);
      }
    }

    // A run.status frame.
    function onStatus(frame) {
      return ensure(frame.run_id).then(() => setStatus(frame.run_id, frame.kind, frame.to, frame.error, frame.warning));
    }

    // What the store holds now: the newest runs, oldest of them first.
    async function load() {
      const { runs: listed } = await api("/api/runs?limit=100");
      for (const run of listed.slice().reverse()) upsert(run);
      return listed;
    }

    return { get: (runId) => runs.get(runId), ensure, upsert, onStatus, load };
  }

  return { create };
})();
