// The workflow as a picture: a graph run's nodes, edges and node states, drawn as inline SVG
// from GET /api/runs/{id}/picture (laid out on the server), with the node path below it.
// No framework and nothing inline (the page's CSP): every element is built with
// createElementNS / createElement and every text set with textContent.
//
//   const view = PiGraph.mount(container, runId, api);  // api(path) -> parsed JSON, throws
//   view.update(event);   // a run event (AG-UI JSON) as it arrives: a graph event shows at
//                         // once; the states are re-read (debounced) when a leg ends
//   view.refresh();       // re-read now (a promise)
//   view.destroy();
(function () {
  "use strict";

  const SVG = "http://www.w3.org/2000/svg";
  const DEBOUNCE_MS = 150;
  // What a live graph event says of its node until the leg's end is stored and read back.
  const LIVE = {
    node_started: "running", node_finished: "done", node_failed: "failed",
    human_input_requested: "waiting",
  };
  // Events written with (or after) a leg's stored state: re-reading the picture then sees it.
  const SETTLED = new Set(["RUN_STARTED", "RUN_FINISHED", "RUN_ERROR", "leg_ended", "run_paused",
    "run_finished", "run_failed", "run_cancelled", "run_resumed"]);
  const STATES = {
    not_reached: { text: "not reached", short: "not reached", mark: "" },
    running: { text: "running", short: "running", mark: "▶" },
    waiting: { text: "waiting for a person", short: "waiting", mark: "…" },
    done: { text: "done", short: "done", mark: "✓" },
    skipped: { text: "skipped by a route", short: "skipped", mark: "⤼" },
    failed: { text: "failed", short: "failed", mark: "✗" },
    cancelled: { text: "cancelled", short: "cancelled", mark: "■" },
  };
  const RUN_STATUSES = {
    running: "Running", paused_waiting_human: "Paused, waiting for a person",
    finished: "Finished", failed: "Failed", failed_resumable: "Failed (it can be retried)",
    cancelled: "Cancelled",
  };
  const KINDS = {
    agent: "agent", judge: "judge", human: "person", await_answers: "await answers",
    compute: "compute", tool: "tool", router: "router", fan_out: "fan out",
    done: "done", fail: "fail",
  };

  function svg(tag, attrs, parent) {
    const node = document.createElementNS(SVG, tag);
    for (const [name, value] of Object.entries(attrs || {})) node.setAttribute(name, String(value));
    if (parent) parent.appendChild(node);
    return node;
  }

  function html(tag, className, parent, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    if (parent) parent.appendChild(node);
    return node;
  }

  function stateOf(name) {
    return STATES[name] || { text: String(name), short: String(name), mark: "" };
  }

  function markers(root) {
    const defs = svg("defs", {}, root);
    for (const name of ["arrow", "arrow-back"]) {
      const marker = svg("marker", {
        id: `pigraph-${name}`, viewBox: "0 0 10 10", refX: 9, refY: 5,
        markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse",
      }, defs);
      svg("path", { d: "M0,0 L10,5 L0,10 Z", class: `pigraph-${name}` }, marker);
    }
  }

  function drawEdge(layer, edge) {
    const group = svg("g", { class: edge.back ? "pigraph-edge back" : "pigraph-edge" }, layer);
    group.dataset.edge = edge.id;
    const title = svg("title", {}, group);
    title.textContent = `${edge.from} → ${edge.to}${edge.label ? ` (${edge.label})` : ""}`;
    svg("polyline", {
      points: edge.points.map(([x, y]) => `${x},${y}`).join(" "),
      "marker-end": `url(#pigraph-${edge.back ? "arrow-back" : "arrow"})`,
    }, group);
    if (edge.label && edge.label_x !== null && edge.label_y !== null) {
      const width = edge.label_width || edge.label.length * 6.7 + 14;
      svg("rect", { x: edge.label_x - width / 2, y: edge.label_y - 10, width, height: 20, rx: 4 }, group);
      const text = svg("text", { x: edge.label_x, y: edge.label_y + 4, "text-anchor": "middle" }, group);
      text.textContent = edge.label;
    }
  }

  function drawNode(layer, node) {
    const group = svg("g", {
      class: `pigraph-node kind-${node.kind}${node.entry ? " entry" : ""}`,
      role: "img", tabindex: "0",
    }, layer);
    group.dataset.node = node.id;
    const title = svg("title", {}, group);
    svg("path", { d: node.shape }, group);
    const lines = [[node.label, "name"], [node.detail, "detail"], [node.routes, "routes"]]
      .filter(([text]) => text);
    const cx = node.x + node.width / 2;
    const room = node.height - (node.state_y === null || node.state_y === undefined ? 0 : 15);
    const top = node.y + room / 2 - (lines.length - 1) * 8 + 4.5;
    lines.forEach(([text, cls], n) => {
      const line = svg("text", { x: cx, y: top + n * 16, "text-anchor": "middle", class: cls }, group);
      line.textContent = text;
    });
    // The state in words, on the line kept for it (under the node in a picture without one).
    const below = node.state_y === null || node.state_y === undefined;
    const said = svg("text", {
      x: cx, y: below ? node.y + node.height + 12 : node.state_y, "text-anchor": "middle",
      class: "pigraph-state", "aria-hidden": "true",
    }, group);
    return { node, group, title, said };
  }

  function setState(drawn, state) {
    const { node, group, title, said } = drawn;
    const known = stateOf(state);
    group.setAttribute("data-state", state);
    const kind = KINDS[node.kind] || node.kind;
    const label = `${node.label}, ${kind}${node.entry ? ", the entry" : ""}: ${known.text}`;
    group.setAttribute("aria-label", label);
    title.textContent = label;
    said.textContent = known.mark ? `${known.mark} ${known.short}` : known.short;
  }

  function mount(container, runId, api) {
    const root = html("section", "pigraph", container);
    root.setAttribute("aria-label", "The workflow");
    const summary = html("p", "pigraph-summary", root);
    summary.setAttribute("role", "status");
    summary.setAttribute("aria-live", "polite");
    const figure = html("div", "pigraph-figure", root);
    const legend = html("ul", "pigraph-legend", root);
    legend.setAttribute("aria-label", "Node states");
    for (const [name, known] of Object.entries(STATES)) {
      const item = html("li", `pigraph-key state-${name}`, legend);
      html("span", "pigraph-swatch", item).setAttribute("aria-hidden", "true");
      item.appendChild(document.createTextNode(`${known.mark ? `${known.mark} ` : ""}${known.text}`));
    }
    html("h3", "pigraph-path-title", root, "Node path");
    const path = html("ol", "pigraph-path", root);
    const none = html("p", "pigraph-empty", root, "No node has run yet.");

    let drawn = new Map();
    let shown = null;  // the picture drawn (a workflow's layout does not change during a run)
    let timer = null;
    let gone = false;
    let asked = null;
    let last = null;  // the picture's data as last read
    let live = new Map();  // node -> state, from live events since the last settled read
    let settle = false;

    function draw(picture) {
      const key = JSON.stringify([picture.workflow, picture.width, picture.height, picture.nodes.length]);
      if (key === shown) return;
      shown = key;
      figure.replaceChildren();
      drawn = new Map();
      const root = svg("svg", {
        class: "pigraph-svg", viewBox: `0 0 ${picture.width} ${picture.height + 10}`,
        width: picture.width, role: "group",
        "aria-label": `Workflow ${picture.workflow}: ${picture.nodes.length} nodes`,
      });
      markers(root);
      const edges = svg("g", { class: "pigraph-edges" }, root);
      for (const edge of picture.edges) drawEdge(edges, edge);
      const nodes = svg("g", { class: "pigraph-nodes" }, root);
      for (const node of picture.nodes) drawn.set(node.id, drawNode(nodes, node));
      figure.appendChild(root);
    }

    function showPath(steps) {
      path.replaceChildren();
      none.hidden = steps.length > 0;
      for (const step of steps) {
        const known = stateOf(step.state);
        const item = html("li", `pigraph-step state-${step.state}`, path);
        item.dataset.node = step.node;
        html("span", "pigraph-step-node", item, `${step.node} #${step.visit}`);
        const where = step.branch !== "main" ? ` [${step.branch}]` : "";
        const route = step.route ? ` (route ${step.route})` : "";
        html("span", "pigraph-step-state", item, ` ${known.mark} ${known.text}${route}${where}`);
      }
    }

    function show(data) {
      last = data;
      draw(data.picture);
      const states = { ...(data.states || {}), ...Object.fromEntries(live) };
      for (const [id, one] of drawn) setState(one, states[id] || "not_reached");
      showPath(data.path || []);
      const by = {};
      for (const [id, state] of Object.entries(states)) {
        if (state === "running" || state === "waiting" || state === "failed") (by[state] ||= []).push(id);
      }
      const said = Object.entries(by).map(([state, ids]) => `${state}: ${ids.join(", ")}`);
      summary.textContent = [RUN_STATUSES[data.status] || data.status, ...said].join(" · ");
      root.dataset.status = data.status;
    }

    async function refresh() {
      const settling = settle;
      settle = false;
      const mine = (asked = api(`/api/runs/${encodeURIComponent(runId)}/picture`));
      let data;
      try {
        data = await mine;
      } catch (error) {
        if (!gone && mine === asked) summary.textContent = `The picture could not be read: ${error.message}`;
        return;
      }
      if (gone || mine !== asked) return;  // a slower, older answer never wins
      if (settling) live = new Map();
      show(data);
    }

    function update(event) {
      if (gone || !event) return;
      const name = event.type === "CUSTOM" ? event.name : event.type;
      const value = event.value || {};
      if (event.type === "CUSTOM" && LIVE[name] && value.node_id && drawn.has(value.node_id)) {
        live.set(value.node_id, LIVE[name]);
        if (last) show(last);
      }
      if (!SETTLED.has(name) && !(event.type === "CUSTOM" && LIVE[name])) return;
      if (SETTLED.has(name)) settle = true;
      window.clearTimeout(timer);
      timer = window.setTimeout(refresh, DEBOUNCE_MS);
    }

    function destroy() {
      gone = true;
      window.clearTimeout(timer);
      root.remove();
    }

    refresh();
    return { update, refresh, destroy };
  }

  window.PiGraph = { mount };
})();
