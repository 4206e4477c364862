// The workflow as a picture: a graph run's nodes, edges and node states, drawn as inline SVG
// from GET /api/runs/{id}/picture (laid out on the server), with the node path below it.
// No framework and nothing inline (the page's CSP): every element is built with
// createElementNS / createElement and every text set with textContent.
//
//   const view = PiGraph.mount(container, runId, api);  // api(path) -> parsed JSON, throws
//   view.update(event);   // a stored run event as it arrives: states re-read (debounced)
//   view.refresh();       // re-read now (a promise)
//   view.destroy();
(function () {
  "use strict";

  const SVG = "http://www.w3.org/2000/svg";
  const DEBOUNCE_MS = 150;
  const STATES = {
    not_reached: { text: "not reached", mark: "" },
    running: { text: "running", mark: "▶" },
    waiting: { text: "waiting for a person", mark: "⏸" },
    done: { text: "done", mark: "✓" },
    skipped: { text: "skipped by a route", mark: "⤼" },
    failed: { text: "failed", mark: "✗" },
    cancelled: { text: "cancelled", mark: "■" },
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
    return STATES[name] || { text: String(name), mark: "" };
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
    const top = node.y + node.height / 2 - (lines.length - 1) * 8 + 4.5;
    lines.forEach(([text, cls], n) => {
      const line = svg("text", { x: cx, y: top + n * 16, "text-anchor": "middle", class: cls }, group);
      line.textContent = text;
    });
    const badge = svg("g", { class: "pigraph-badge", "aria-hidden": "true" }, group);
    const pill = svg("rect", { y: node.y - 9, height: 18, rx: 9 }, badge);
    const said = svg("text", { y: node.y + 4, "text-anchor": "end" }, badge);
    return { node, group, title, badge, pill, said };
  }

  function setState(drawn, state) {
    const { node, group, title, badge, pill, said } = drawn;
    const known = stateOf(state);
    group.setAttribute("data-state", state);
    const kind = KINDS[node.kind] || node.kind;
    const label = `${node.label}, ${kind}${node.entry ? ", the entry" : ""}: ${known.text}`;
    group.setAttribute("aria-label", label);
    title.textContent = label;
    badge.setAttribute("visibility", state === "not_reached" ? "hidden" : "visible");
    said.textContent = `${known.mark} ${known.text}`;
    const width = said.textContent.length * 6.4 + 14;
    const right = node.x + node.width + 6;
    pill.setAttribute("x", right - width);
    pill.setAttribute("width", width);
    said.setAttribute("x", right - 7);
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
      draw(data.picture);
      for (const [id, one] of drawn) setState(one, (data.states || {})[id] || "not_reached");
      showPath(data.path || []);
      const active = Object.entries(data.states || {})
        .filter(([, state]) => state === "running" || state === "waiting" || state === "failed")
        .map(([id, state]) => `${id} ${stateOf(state).text}`);
      summary.textContent = `Run ${data.status.replaceAll("_", " ")}` +
        (active.length ? `: ${active.join(", ")}` : "");
      root.dataset.status = data.status;
    }

    async function refresh() {
      const mine = (asked = api(`/api/runs/${encodeURIComponent(runId)}/picture`));
      let data;
      try {
        data = await mine;
      } catch (error) {
        if (!gone && mine === asked) summary.textContent = `The picture could not be read: ${error.message}`;
        return;
      }
      if (!gone && mine === asked) show(data);  // a slower, older answer never wins
    }

    function update() {
      if (gone) return;
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
