// The page: runs and their open interrupts, live over the WebSocket /ws, with REST for the
// first look; the inbox (inbox.js) holds the cards and their History; the Rules view
// (rules.js) reads the remembered decisions over REST. Asks for the token once (or takes it from #token=... in the address, which
// never reaches the server) and keeps it in this browser.
"use strict";

(() => {
  const TOKEN_KEY = "pi-recipes-token";
  const $ = (id) => document.getElementById(id);
  const state = {
    token: null,
    me: null, // who signed in: {name, groups, via} (GET /api/me)
    socket: null,
    retry: 0,
    runs: new Map(), // run id -> RunView
    viewed: null, // the run shown in the run view
    transcript: new Map(), // message/tool id -> {node, stored}
    rules: null, // the Rules view (rules.js)
    inbox: null, // the inbox (inbox.js): the open questions and their History
  };

  function announce(text) {
    const box = $("announcer");
    box.textContent = "";
    window.setTimeout(() => { box.textContent = text; }, 50);
  }

  function setConnection(stateName, text) {
    const line = $("connection");
    line.dataset.state = stateName;
    line.textContent = text;
  }

  // ------------------------------------------------------------------ token and REST

  function takeTokenFromAddress() {
    const match = /(?:^|[#&])token=([^&]+)/.exec(window.location.hash);
    if (!match) return;
    localStorage.setItem(TOKEN_KEY, decodeURIComponent(match[1]));
    history.replaceState(null, "", window.location.pathname + window.location.search);
  }

  function askForToken(message) {
    $("main").hidden = true;
    $("login").hidden = false;
    $("login-error").textContent = message || "";
    $("token").focus();
  }

  async function api(path, options = {}) {
    // Without a token the request may still be signed in, by a proxy in front of the server.
    const headers = { "Content-Type": "application/json" };
    if (state.token) headers.Authorization = `Bearer ${state.token}`;
    const response = await fetch(path, { ...options, headers });
    if (response.status === 401) {
      const refused = state.token !== null;
      localStorage.removeItem(TOKEN_KEY);
      state.token = null;
      state.me = null;
      if (state.socket) state.socket.close();
      askForToken(refused ? "That token was refused. Enter the server's token." : "");
      throw new Error("unauthorized");
    }
    const body = await response.json().catch(() => ({}));
    if (!response.ok) throw Object.assign(new Error(body.message || response.statusText), { body });
    return body;
  }

  // ------------------------------------------------------------------ runs

  function runItem(run) {
    let item = document.querySelector(`li[data-run="${CSS.escape(run.id)}"]`);
    if (!item) {
      item = document.createElement("li");
      item.dataset.run = run.id;
      const open = document.createElement("button");
      open.type = "button";
      open.className = "run-link";
      open.addEventListener("click", () => showRun(run.id));
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
    $("no-runs").hidden = state.runs.size > 0;
    return item;
  }

  function upsertRun(run) {
    const known = state.runs.get(run.id) || {};
    const merged = { ...known, ...run };
    state.runs.set(run.id, merged);
    runItem(merged);
    if (state.viewed === run.id) showStatus(merged);
  }

  async function ensureRun(runId) {
    if (state.runs.has(runId)) return state.runs.get(runId);
    state.runs.set(runId, { id: runId, kind: "run", status: "running", agent: "" });
    try {
      upsertRun(await api(`/api/runs/${encodeURIComponent(runId)}`));
    } catch (error) { /* shown when it arrives */ }
    return state.runs.get(runId);
  }

  function setStatus(runId, kind, status, error, warning) {
    const run = state.runs.get(runId) || { id: runId, agent: "" };
    upsertRun({
      ...run, kind: kind || run.kind || "run", status, error: error || null, warning: warning || null,
    });
    if (status === "finished" || status === "failed" || status === "cancelled") {
      announce(`Run ${runId} ${status}.${warning ? ` ${warning}` : ""}`);
    }
  }

  // ------------------------------------------------------------------ the run view

  function showStatus(run) {
    const line = $("run-view-status");
    line.textContent = `${run.kind} · ${run.status.replaceAll("_", " ")}${run.error ? ` · ${run.error}` : ""}`;
    line.dataset.status = run.status;
    const warning = $("run-view-warning");
    warning.textContent = run.warning ? `⚠ ${run.warning}` : "";
    warning.hidden = !run.warning;
  }

  async function showRun(runId, focus = true) {
    state.viewed = runId;
    state.transcript = new Map();
    $("transcript").textContent = "";
    $("run-view").hidden = false;
    $("run-view-title").textContent = `Run ${runId}`;
    const run = await ensureRun(runId);
    showStatus(run);
    try {  // the run as it stands, with what only its detail says (a finished run's warning)
      const detail = await api(`/api/runs/${encodeURIComponent(runId)}`);
      if (state.viewed === runId) upsertRun(detail);
    } catch (error) { /* the list's summary stays */ }
    try {
      const { events } = await api(`/api/runs/${encodeURIComponent(runId)}/agui`);
      if (state.viewed !== runId) return;
      for (const event of events) applyEvent(event, event.type, false);
    } catch (error) { /* the live frames still come */ }
    if (focus) $("run-view-title").focus?.();
  }

  function entry(key, role, label) {
    let found = state.transcript.get(key);
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
    state.transcript.set(key, found);
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
      const item = entry(`error-${state.transcript.size}`, "error", "Error");
      item.node.textContent = event.message;
    }
  }

  // ------------------------------------------------------------------ the socket

  function onFrame(frame) {
    switch (frame.type) {
      case "ack":
      case "error":
        state.inbox.onReply(frame);
        break;
      case "run.created":
        upsertRun(frame.run);
        break;
      case "run.status":
        ensureRun(frame.run_id).then(() => setStatus(frame.run_id, frame.kind, frame.to, frame.error, frame.warning));
        state.rules.changed();  // a leg that ran may have remembered a decision
        break;
      case "interrupt.opened":
        ensureRun(frame.run_id).then(() => state.inbox.onOpened(frame));
        break;
      case "interrupt.voted":
        state.inbox.onVoted(frame);
        break;
      case "interrupt.resolved":
        state.inbox.onResolved(frame);
        break;
      case "run.event":
        if (frame.run_id === state.viewed) applyEvent(frame.event, frame.event.type, frame.live);
        else ensureRun(frame.run_id);
        break;
      default:
        break;
    }
  }

  function connect() {
    const scheme = window.location.protocol === "https:" ? "wss" : "ws";
    setConnection("connecting", "Connecting…");
    const protocols = state.token ? ["pi-recipes.v1", `bearer.${state.token}`] : ["pi-recipes.v1"];
    const socket = new WebSocket(`${scheme}://${window.location.host}/ws`, protocols);
    state.socket = socket;
    socket.addEventListener("open", () => {
      state.retry = 0;
      socket.send(JSON.stringify({ type: "subscribe", run_id: null, id: "all" }));
    });
    socket.addEventListener("message", (message) => {
      let frame;
      try { frame = JSON.parse(message.data); } catch (error) { return; }
      if (frame.type === "subscribed") {
        setConnection("online", "Connected");
        load();
      } else {
        onFrame(frame);
      }
    });
    socket.addEventListener("close", (event) => {
      if (state.socket !== socket) return;
      state.socket = null;
      state.inbox.onClosed();
      if (!state.me) return;  // signed out: the page asks for a token
      const wait = Math.min(10000, 500 * 2 ** state.retry++);
      setConnection("offline", `Disconnected (${event.code}); reconnecting in ${Math.round(wait / 1000)} s`);
      window.setTimeout(connect, wait);
    });
  }

  // What the store holds now (after subscribing, so nothing slips in between).
  async function load() {
    try {
      const { runs } = await api("/api/runs?limit=100");
      for (const run of runs.reverse()) upsertRun(run);
      await state.inbox.load();  // the open questions, and those closed meanwhile
      if (state.viewed) await showRun(state.viewed, false);  // what it missed while cut off
      await state.rules.load();  // if it is open
      $("main").hidden = false;
      $("login").hidden = true;
    } catch (error) {
      if (error.message !== "unauthorized") setConnection("offline", `Could not load the runs: ${error.message}`);
    }
  }

  function start() {
    takeTokenFromAddress();
    state.rules = Rules.create({ api, announce });
    state.inbox = Inbox.create({ api, announce, me: () => state.me, socket: () => state.socket });
    $("login-form").addEventListener("submit", (event) => {
      event.preventDefault();
      const token = $("token").value.trim();
      if (!token) return;
      localStorage.setItem(TOKEN_KEY, token);
      $("token").value = "";
      state.token = token;
      $("login").hidden = true;
      checkThenConnect();
    });
    window.setInterval(() => {
      if (state.socket && state.socket.readyState === WebSocket.OPEN) {
        state.socket.send(JSON.stringify({ type: "ping" }));
      }
    }, 25000);
    state.token = localStorage.getItem(TOKEN_KEY);
    checkThenConnect();  // without a token: signed in by a proxy, or asked for one
  }

  // A refused WebSocket handshake tells the page nothing: check the token over REST first,
  // learning who it signs in.
  async function checkThenConnect() {
    try {
      state.me = await api("/api/me");
    } catch (error) {
      if (error.message !== "unauthorized") window.setTimeout(checkThenConnect, 2000);
      return;
    }
    const line = $("signed-in");
    line.textContent = `Signed in as ${state.me.name}`;
    line.title = state.me.groups.length ? `groups: ${state.me.groups.join(", ")}` : "";
    line.hidden = false;
    connect();
  }

  start();
})();
