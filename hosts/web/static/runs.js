// The runs list (the view at /runs): a page of runs at a time, newest first (GET /api/runs
// with the filters: status, kind, recipe or workflow, "mine"; "Show more" reads the next page
// with the list's cursor), each with its title (the prompt, shortened), kind, recipe or
// workflow, status and age; new runs and status changes arrive live over the WebSocket. The
// filters live in the address (/runs?status=failed&kind=graph; limit=N: pages of N runs), so
// a filtered list is a link.
// Also the "New run" form: what GET /api/startable lists, a recipe started on a prompt, a
// workflow on its vars (a field per var, by its type), POST /api/runs, then the new run's view.
// It keeps what the page knows of each run (kind, status, title...) for the other views:
// `get(runId)`, `ensure(runId)`. Every text is set with textContent.
"use strict";

const Runs = (() => {
  const PAGE = 25;
  const FILTERS = ["status", "kind", "ref", "mine", "limit"];

  const { el } = Dom;

  // "12 s ago", "5 min ago", "3 h ago", "2 d ago".
  function age(iso, now = Date.now()) {
    const then = new Date(iso).getTime();
    if (Number.isNaN(then)) return "";
    const seconds = Math.max(0, Math.round((now - then) / 1000));
    if (seconds < 60) return `${seconds} s ago`;
    if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
    if (seconds < 86400) return `${Math.floor(seconds / 3600)} h ago`;
    return `${Math.floor(seconds / 86400)} d ago`;
  }

  // A recipe's or workflow's name from its ref: "examples/release.py" -> "release",
  // "pkg.mod:fn" -> "fn".
  function refName(ref) {
    if (!ref) return "";
    const [path, fn] = ref.split(":");
    if (fn) return fn;
    return path.split("/").pop().replace(/\.(py|iter|ya?ml)$/, "");
  }

  function statusText(status) {
    return status === "paused_waiting_human" ? "waiting for an answer" : status.replaceAll("_", " ");
  }

  // `api(path, options)` calls REST; `announce(text)` tells a screen reader; `go(path)` moves
  // the page to another view; `changed(run)` is told of every change to a run.
  function create({ api, announce, go, changed }) {
    const $ = (id) => document.getElementById(id);
    const runs = new Map(); // run id -> what the page knows of it
    const shown = new Set(); // the runs the list holds (its pages, and new ones that match)
    let filters = { status: "", kind: "", ref: "", mine: false, limit: PAGE };
    let next = null; // the cursor of the next page
    let loading = 0; // the latest load's number: an older one's answer is dropped
    let startable = null; // GET /api/startable, once read
    let reading = null; // the read of it under way (or done), shared by whoever asks

    function follow(event, link) {
      if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
      event.preventDefault();
      go(link.getAttribute("href"));
    }

    function matches(run) {
      if (filters.status && run.status !== filters.status) return false;
      if (filters.kind && run.kind !== filters.kind) return false;
      if (filters.ref && run.ref !== filters.ref) return false;
      return !filters.mine;  // a new run has no answer of mine yet
    }

    function runItem(run, place = "top") {
      let item = $("runs").querySelector(`li[data-run="${CSS.escape(run.id)}"]`);
      if (!item) {
        item = el("li", { "data-run": run.id });
        const open = el("a", { className: "run-link", href: `/runs/${encodeURIComponent(run.id)}` });
        open.addEventListener("click", (event) => follow(event, open));
        const facts = el("span", { className: "run-facts-line" });
        facts.append(
          el("span", { className: "kind" }),
          el("span", { className: "status" }),
          el("span", { className: "run-ref" }),
          el("time", { className: "run-age" }),
        );
        item.append(open, facts, el("span", { className: "run-detail" }));
        if (place === "top") $("runs").prepend(item);
        else $("runs").appendChild(item);
      }
      const link = item.querySelector(".run-link");
      link.textContent = run.title || `Run ${run.id}`;
      link.title = run.id;
      item.querySelector(".kind").textContent = run.kind;
      const status = item.querySelector(".status");
      status.textContent = statusText(run.status);
      status.dataset.status = run.status;
      const ref = item.querySelector(".run-ref");
      const name = run.kind === "graph" ? run.agent || refName(run.ref) : refName(run.ref);
      ref.textContent = name;
      ref.title = run.ref || "";
      const when = item.querySelector(".run-age");
      if (run.updated_at) {
        when.dateTime = run.updated_at;
        when.textContent = age(run.updated_at);
        when.title = `updated ${new Date(run.updated_at).toLocaleString()}`;
      }
      item.querySelector(".run-detail").textContent =
        [run.kind === "graph" ? "" : run.agent, run.error !== run.status && run.error,
          run.warning && `⚠ ${run.warning}`]
          .filter(Boolean).join(" · ");
      return item;
    }

    function showEmpty() {
      const filtered = filters.status || filters.kind || filters.ref || filters.mine;
      $("no-runs").textContent = filtered ? "No run matches these filters." : "No runs yet.";
      $("no-runs").hidden = shown.size > 0;
    }

    // Learn of a run (a REST read, a frame); `place`: where a run new to the list goes ("top",
    // "bottom": a page read in order; "known": nowhere, the page only learns of it).
    function upsert(run, place = "top") {
      const known = runs.get(run.id) || {};
      const merged = { ...known, ...run };
      if (!run.title && known.title) merged.title = known.title;  // a summary read without it
      runs.set(run.id, merged);
      // Live news (`place` "top") of a run the list does not hold yet: it goes on top when it
      // matches the filters (a new run; one whose status now does).
      if (shown.has(run.id) || (place === "top" && matches(merged))) {
        shown.add(run.id);
        runItem(merged, place);
      }
      showEmpty();
      changed(merged);
    }

    async function ensure(runId, place = "top") {
      if (runs.has(runId)) return runs.get(runId);
      runs.set(runId, { id: runId, kind: "run", status: "running", agent: "" });
      try {
        const run = await api(`/api/runs/${encodeURIComponent(runId)}`);
        runs.delete(runId);  // new to the page: the list takes it if it matches
        upsert(run, place);
      } catch (error) { /* shown when it arrives */ }
      return runs.get(runId);
    }

    function setStatus(runId, kind, status, error, warning) {
      const run = runs.get(runId) || { id: runId, agent: "" };
      upsert({
        ...run, kind: kind || run.kind || "run", status, error: error || null, warning: warning || null,
        updated_at: new Date().toISOString(),
      });
      if (status === "finished" || status === "failed" || status === "cancelled") {
        announce(`Run ${runId} ${status}.${warning ? ` ${warning}` : ""}`);
      }
    }

    // A run.status frame.
    function onStatus(frame) {
      return ensure(frame.run_id).then(() => setStatus(frame.run_id, frame.kind, frame.to, frame.error, frame.warning));
    }

    // A run.created frame.
    function onCreated(frame) {
      upsert(frame.run);
    }

    function query(cursor) {
      const params = new URLSearchParams({ limit: String(filters.limit) });
      for (const name of ["status", "kind", "ref"]) if (filters[name]) params.set(name, filters[name]);
      if (filters.mine) params.set("mine", "true");
      if (cursor) params.set("cursor", cursor);
      return `/api/runs?${params}`;
    }

    // The first page under the filters (what the store holds now), replacing the list.
    async function load() {
      const mine = ++loading;
      const page = await api(query(null));
      if (mine !== loading) return page.runs;
      shown.clear();
      $("runs").textContent = "";
      for (const run of page.runs) {
        shown.add(run.id);
        upsert(run, "bottom");
      }
      next = page.next;
      $("runs-more").hidden = !next;
      showEmpty();
      $("runs-count").textContent = "";
      return page.runs;
    }

    async function more() {
      if (!next) return;
      const mine = loading;
      const page = await api(query(next));
      if (mine !== loading) return;
      for (const run of page.runs) {
        shown.add(run.id);
        upsert(run, "bottom");
      }
      next = page.next;
      $("runs-more").hidden = !next;
      $("runs-count").textContent = `${shown.size} runs shown${next ? "; more to read" : ""}.`;
      const first = page.runs[0] && $("runs").querySelector(`li[data-run="${CSS.escape(page.runs[0].id)}"] .run-link`);
      if (first) first.focus();
    }

    // ---------------------------------------------------------------- filters and the address

    function filtersFrom(search) {
      const params = new URLSearchParams(search);
      return {
        status: params.get("status") || "",
        kind: params.get("kind") || "",
        ref: params.get("ref") || "",
        mine: params.get("mine") === "true",
        limit: Math.min(100, Math.max(1, Number.parseInt(params.get("limit"), 10) || PAGE)),
      };
    }

    function search() {
      const params = new URLSearchParams();
      for (const name of ["status", "kind", "ref"]) if (filters[name]) params.set(name, filters[name]);
      if (filters.mine) params.set("mine", "true");
      if (filters.limit !== PAGE) params.set("limit", String(filters.limit));  // a page's length
      const text = params.toString();
      return text ? `?${text}` : "";
    }

    function refOption(ref, label) {
      const select = $("filter-ref");
      if ([...select.options].some((o) => o.value === ref)) return;
      select.appendChild(el("option", { value: ref, title: ref }, label || refName(ref)));
    }

    function showFilters() {
      $("filter-status").value = filters.status;
      $("filter-kind").value = filters.kind;
      if (filters.ref) refOption(filters.ref);
      $("filter-ref").value = filters.ref;
      $("filter-mine").checked = filters.mine;
    }

    // The list's view is shown, with the address's filters (`search`, "?status=...").
    async function show(searchText) {
      readStartable();
      const wanted = filtersFrom(searchText);
      const same = FILTERS.every((name) => wanted[name] === filters[name]);
      filters = wanted;
      showFilters();
      if (!same) {
        try { await load(); } catch (error) { $("runs-count").textContent = `Could not read the runs: ${error.message}`; }
      }
    }

    async function filtered() {
      filters = {
        status: $("filter-status").value,
        kind: $("filter-kind").value,
        ref: $("filter-ref").value,
        mine: $("filter-mine").checked,
        limit: filters.limit,
      };
      history.replaceState(null, "", `/runs${search()}`);
      try {
        await load();
        const count = shown.size;
        $("runs-count").textContent = `${count}${next ? "+" : ""} ${count === 1 ? "run" : "runs"} shown.`;
      } catch (error) {
        $("runs-count").textContent = `Could not read the runs: ${error.message}`;
      }
    }

    // ---------------------------------------------------------------- a new run

    // One read at a time: the list view and the form's button may both ask before the first
    // answer comes, and a second filling of the select would undo a choice made in between.
    function readStartable() {
      if (!reading) reading = fillStartable().then((found) => (found ? found : (reading = null)));
      return reading;
    }

    async function fillStartable() {
      try {
        startable = (await api("/api/startable")).startable;
      } catch (error) {
        return null;
      }
      const what = $("new-run-what");
      what.textContent = "";
      startable.forEach((item, index) => {
        const label = `${item.kind === "graph" ? "Workflow" : "Recipe"}: ${item.name}`;
        what.appendChild(el("option", { value: String(index), title: item.ref }, label));
        refOption(item.ref, item.name);
      });
      if (filters.ref) $("filter-ref").value = filters.ref;
      chosen();
      return startable;
    }

    function varField(v) {
      const id = `new-run-var-${v.name}`;
      const row = el("div", { className: "field var-field", "data-var": v.name, "data-type": v.type });
      const help = [v.type, v.required ? "required" : v.default !== null && v.default !== undefined ? `default ${JSON.stringify(v.default)}` : ""]
        .filter(Boolean).join(", ");
      let input;
      if (v.enum && v.enum.length) {
        input = el("select", { id, name: v.name });
        for (const option of v.enum) input.appendChild(el("option", { value: option }, option));
        if (v.default !== null && v.default !== undefined) input.value = String(v.default);
      } else if (v.type === "bool") {
        input = el("select", { id, name: v.name });
        if (!v.required) input.appendChild(el("option", { value: "" }, "(default)"));
        input.append(el("option", { value: "true" }, "true"), el("option", { value: "false" }, "false"));
        if (v.default !== null && v.default !== undefined) input.value = String(v.default);
      } else if (v.type === "json" || v.type === "string[]") {
        input = el("textarea", { id, name: v.name, rows: "2", className: "json" });
        if (v.default !== null && v.default !== undefined) input.value = JSON.stringify(v.default);
        if (v.type === "string[]" && !input.value) input.placeholder = '["a", "b"]';
      } else {
        input = el("input", {
          id, name: v.name, type: v.type === "int" || v.type === "float" ? "number" : "text",
          step: v.type === "float" ? "any" : undefined,
        });
        if (v.default !== null && v.default !== undefined) input.value = String(v.default);
      }
      if (v.required) input.required = true;
      input.setAttribute("aria-describedby", `${id}-help`);
      row.append(el("label", { for: id }, v.name), input, el("span", { id: `${id}-help`, className: "help" }, help));
      return row;
    }

    function chosen() {
      const item = startable && startable[Number($("new-run-what").value)];
      if (!item) return;
      const graph = item.kind === "graph";
      $("new-run-prompt-field").hidden = graph;
      $("new-run-prompt").required = !graph;
      $("new-run-vars").hidden = !graph;
      const fields = $("new-run-var-fields");
      fields.textContent = "";
      if (graph) {
        const asked = item.vars.filter((v) => !v.derived);
        for (const v of asked) fields.appendChild(varField(v));
        if (!asked.length) fields.appendChild(el("p", { className: "help" }, "This workflow has no vars to set."));
      }
    }

    function openForm(open) {
      $("new-run").hidden = !open;
      $("new-run-toggle").setAttribute("aria-expanded", String(open));
      $("new-run-error").textContent = "";
      if (open) readStartable().then(() => $("new-run-what").focus());
    }

    async function start(event) {
      event.preventDefault();
      const item = startable && startable[Number($("new-run-what").value)];
      if (!item) return;
      const error = $("new-run-error");
      error.textContent = "";
      let body;
      if (item.kind === "graph") {
        const vars = {};
        for (const row of $("new-run-var-fields").querySelectorAll(".var-field")) {
          const value = row.querySelector("input, select, textarea").value;
          if (value === "") continue;  // its default
          const type = row.dataset.type;
          if (type === "json" || type === "string[]") {
            try { vars[row.dataset.var] = JSON.parse(value); } catch (problem) {
              error.textContent = `${row.dataset.var}: not JSON (${problem.message})`;
              return;
            }
          } else {
            vars[row.dataset.var] = value;  // the server reads it as the var's type
          }
        }
        body = { workflow: item.ref, vars };
      } else {
        const prompt = $("new-run-prompt").value;
        if (!prompt.trim()) { error.textContent = "Write a prompt."; return; }
        body = { prompt };
      }
      const button = $("new-run").querySelector('button[type="submit"]');
      button.disabled = true;
      try {
        const started = await api("/api/runs", { method: "POST", body: JSON.stringify(body) });
        $("new-run-prompt").value = "";
        openForm(false);
        announce(`Run ${started.run_id} started.`);
        go(`/runs/${encodeURIComponent(started.run_id)}`);
      } catch (problem) {
        if (problem.message === "unauthorized") return;
        const said = (problem.body && problem.body.complaints || []).map((c) => c.message).join("; ");
        error.textContent = `Not started: ${said || problem.message}`;
      } finally {
        button.disabled = false;
      }
    }

    $("run-filters").addEventListener("change", filtered);
    $("run-filters").addEventListener("submit", (event) => event.preventDefault());
    $("runs-more").addEventListener("click", () => more().catch((error) => {
      $("runs-count").textContent = `Could not read more runs: ${error.message}`;
    }));
    $("new-run-toggle").addEventListener("click", () => openForm($("new-run").hidden));
    $("new-run-cancel").addEventListener("click", () => { openForm(false); $("new-run-toggle").focus(); });
    $("new-run-what").addEventListener("change", chosen);
    $("new-run").addEventListener("submit", start);
    window.setInterval(() => {
      for (const time of $("runs").querySelectorAll("time.run-age")) {
        if (time.dateTime) time.textContent = age(time.dateTime);
      }
    }, 30000);

    return {
      get: (runId) => runs.get(runId), ensure, upsert, onStatus, onCreated, load, show,
      openForm, search, age, refName, statusText,
    };
  }

  return { create };
})();
