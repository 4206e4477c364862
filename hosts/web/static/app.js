// The page: runs and their open interrupts, live over the WebSocket /ws, with REST for the
// first look; the Rules view (rules.js) reads the remembered decisions over REST. Asks for the token once (or takes it from #token=... in the address, which
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
    cards: new Map(), // "run/interaction" -> card element
    pending: new Map(), // frame id -> resolve function
    viewed: null, // the run shown in the run view
    transcript: new Map(), // message/tool id -> {node, stored}
    frameCounter: 0,
    rules: null, // the Rules view (rules.js)
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

  function cardKey(runId, interactionId) {
    return `${runId}/${interactionId}`;
  }

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

  // ------------------------------------------------------------------ cards

  function addCard(interaction) {
    const key = cardKey(interaction.run_id, interaction.id);
    // An await record is the run's wait for its async questions: their cards are the ones
    // to answer, and the system settles it.
    if (state.cards.has(key) || interaction.kind === "await") return;
    const kind = (state.runs.get(interaction.run_id) || {}).kind;
    const card = Cards.build(interaction, kind, (payload) => answer(interaction, payload), state.me);
    state.cards.set(key, card);
    $("cards").appendChild(card);
    $("no-cards").hidden = true;
    if (interaction.answer) Cards.resolve(card, interaction.answer);
    else announce(`New question: ${card.querySelector("h3").textContent}`);
  }

  function resolveCard(frame) {
    const card = state.cards.get(cardKey(frame.run_id, frame.interaction_id));
    if (!card || card.dataset.state !== "open") return;
    Cards.resolve(card, frame);
    announce(`${card.querySelector("h3").textContent}: ${card.querySelector(".card-status").textContent}`);
  }

  // Someone voted on an approval several people must give: its card says who approved so far.
  function voteCard(frame) {
    const card = state.cards.get(cardKey(frame.run_id, frame.interaction_id));
    if (!card || card.dataset.state !== "open") return;
    const line = Cards.votes(card, frame, state.me);
    announce(`${card.querySelector("h3").textContent}: ${line}`);
  }

  function answer(interaction, payload) {
    const id = `f${++state.frameCounter}`;  // the server records who signed in as who answers
    const frame = payload === null
      ? { type: "decline", id, run_id: interaction.run_id, interaction_id: interaction.id }
      : { type: "answer", id, run_id: interaction.run_id, interaction_id: interaction.id, payload };
    if (!state.socket || state.socket.readyState !== WebSocket.OPEN) {
      return Promise.resolve({ message: "Not connected; try again in a moment." });
    }
    return new Promise((resolve) => {
      const timer = window.setTimeout(() => {
        state.pending.delete(id);
        resolve({ message: "No reply from the server; check the run before answering again." });
      }, 15000);
      state.pending.set(id, (reply) => {
        window.clearTimeout(timer);
        // an ack is no refusal; one that did not settle the question was one vote of several
        if (reply.type !== "ack") resolve(reply);
        else resolve(reply.settled === false ? { vote: reply } : null);
      });
      state.socket.send(JSON.stringify(frame));
    });
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
      case "error": {
        const reply = state.pending.get(frame.id);
        if (reply) { state.pending.delete(frame.id); reply(frame); }
        break;
      }
      case "run.created":
        upsertRun(frame.run);
        break;
      case "run.status":
        ensureRun(frame.run_id).then(() => setStatus(frame.run_id, frame.kind, frame.to, frame.error, frame.warning));
        state.rules.changed();  // a leg that ran may have remembered a decision
        break;
      case "interrupt.opened":
        ensureRun(frame.run_id).then(() => addCard(frame.interaction));
        break;
      case "interrupt.voted":
        voteCard(frame);
        break;
      case "interrupt.reminded": {
        const card = state.cards.get(cardKey(frame.run_id, frame.interaction_id));
        if (card && card.dataset.state === "open") Cards.reach(card, frame);
        break;
      }
      case "interrupt.resolved":
        resolveCard(frame);
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
      for (const reply of state.pending.values()) reply({ message: "The connection closed; try again." });
      state.pending.clear();
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
      const open = new Set();
      for (const run of runs) {
        // A running run may have async questions open: they are answered while it works.
        if (run.status !== "paused_waiting_human" && run.status !== "running") continue;
        const { interactions } = await api(`/api/runs/${encodeURIComponent(run.id)}/interactions/pending`);
        for (const interaction of interactions) {
          open.add(cardKey(interaction.run_id, interaction.id));
          addCard(interaction);
        }
      }
      await closeAnsweredMeanwhile(open);
      if (state.viewed) await showRun(state.viewed, false);  // what it missed while cut off
      await state.rules.load();  // if it is open
      $("main").hidden = false;
      $("login").hidden = true;
    } catch (error) {
      if (error.message !== "unauthorized") setConnection("offline", `Could not load the runs: ${error.message}`);
    }
  }

  // Cards still open here whose questions were answered (or closed) while the page was not
  // connected: their frames were missed, so read how each was answered.
  async function closeAnsweredMeanwhile(open) {
    const stale = new Map();
    for (const [key, card] of state.cards) {
      if (card.dataset.state !== "open" || open.has(key)) continue;
      const runId = card.dataset.run;
      if (!stale.has(runId)) stale.set(runId, []);
      stale.get(runId).push(card);
    }
    for (const [runId, cards] of stale) {
      try {
        const { interactions } = await api(`/api/runs/${encodeURIComponent(runId)}`);
        const answers = new Map(interactions.map((i) => [i.id, i.answer]));
        for (const card of cards) {
          const answer = answers.get(card.dataset.interaction);
          if (answer) Cards.resolve(card, answer);
        }
      } catch (error) { /* the card stays as it was; answering it says why if it cannot */ }
    }
  }

  function start() {
    takeTokenFromAddress();
    state.rules = Rules.create({ api, announce });
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
    window.setInterval(() => { for (const card of state.cards.values()) Cards.tick(card); }, 30000);
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
