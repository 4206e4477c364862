// The page: runs and their open interrupts, live over the WebSocket /ws, with REST for the
// first look. Three views, each at its own address (history.pushState, popstate): the inbox
// (/), the runs list (/runs: runs.js) and a run (/runs/RUN: runview.js). The Rules view (rules.js) reads the remembered decisions over REST. Asks for the token once (or takes it from #token=... in the address, which
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
    runs: null, // the runs list (runs.js), which knows every run the page saw
    view: null, // the run view (runview.js)
    cards: new Map(), // "run/interaction" -> card element
    pending: new Map(), // frame id -> resolve function
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

  function cardKey(runId, interactionId) {
    return `${runId}/${interactionId}`;
  }

  // ------------------------------------------------------------------ views

  // The view the address names: / the inbox, /runs the runs list, /runs/RUN one run.
  function route(focus = false) {
    const path = window.location.pathname;
    const one = /^\/runs\/([^/]+)\/?$/.exec(path);
    const view = one ? "run" : /^\/runs\/?$/.test(path) ? "runs" : "inbox";
    $("view-inbox").hidden = view !== "inbox";
    $("view-runs").hidden = view !== "runs";
    $("run-view").hidden = view !== "run";
    for (const link of document.querySelectorAll("nav.views a")) {
      if (link.dataset.view === (view === "run" ? "runs" : view)) link.setAttribute("aria-current", "page");
      else link.removeAttribute("aria-current");
    }
    document.title = { inbox: "Inbox", runs: "Runs", run: "Run" }[view] + " · pi-recipes";
    if (view === "run") state.view.show(decodeURIComponent(one[1]), focus);
    else state.view.hide();
    if (view === "runs") state.runs.show(window.location.search);
    if (focus) (view === "inbox" ? $("waiting-title") : view === "runs" ? $("runs-title") : null)?.focus();
  }

  function go(path) {
    if (path !== window.location.pathname + window.location.search) history.pushState(null, "", path);
    route(true);
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
        state.runs.onCreated(frame);
        break;
      case "run.status":
        state.runs.onStatus(frame);
        state.rules.changed();  // a leg that ran may have remembered a decision
        break;
      case "interrupt.opened":
        state.runs.ensure(frame.run_id).then(() => addCard(frame.interaction));
        state.view.onOpened(frame);
        break;
      case "interrupt.voted":
        voteCard(frame);
        state.view.onVoted(frame);
        break;
      case "interrupt.resolved":
        resolveCard(frame);
        state.view.onResolved(frame);
        break;
      case "run.event":
        state.view.onEvent(frame);
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
      await state.runs.load();  // the runs list's first page, under its filters
      const { runs } = await api("/api/runs?limit=100");
      const open = new Set();
      for (const run of runs) {
        state.runs.upsert(run, "known");  // the cards say each run's kind
        // A running run may have async questions open: they are answered while it works.
        if (run.status !== "paused_waiting_human" && run.status !== "running") continue;
        const { interactions } = await api(`/api/runs/${encodeURIComponent(run.id)}/interactions/pending`);
        for (const interaction of interactions) {
          open.add(cardKey(interaction.run_id, interaction.id));
          addCard(interaction);
        }
      }
      await closeAnsweredMeanwhile(open);
      route();  // the view the address names, as the store has it now (what it missed)
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
    state.runs = Runs.create({ api, announce, go, changed: (run) => state.view.changed(run) });
    state.view = RunView.create({ api, runs: state.runs, answer, me: () => state.me, announce, go });
    window.addEventListener("popstate", () => route(true));
    document.addEventListener("click", (event) => {
      const link = event.target.closest("a[data-view]");
      if (!link || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
      event.preventDefault();
      go(link.getAttribute("href"));
    });
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
