// The page: runs and their open interrupts, live over the WebSocket /ws, with REST for the
// first look. Three views, each at its own address (history.pushState, popstate): the inbox
// (/: inbox.js, the open questions and their History), the runs list (/runs: runs.js) and a
// run (/runs/RUN: runview.js). The Rules view (rules.js) reads the remembered decisions over REST. Asks for the token once (or takes it from #token=... in the address, which
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
    inbox: null, // the inbox (inbox.js): the open questions and their History
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
    if (focus) (view === "inbox" ? $("for-you-title") : view === "runs" ? $("runs-title") : null)?.focus();
  }

  function go(path) {
    if (path !== window.location.pathname + window.location.search) history.pushState(null, "", path);
    route(true);
  }

  // ------------------------------------------------------------------ the socket

  function onFrame(frame) {
    switch (frame.type) {
      case "ack":
      case "error":
        state.inbox.onReply(frame);
        break;
      case "run.created":
        state.runs.onCreated(frame);
        break;
      case "run.status":
        state.runs.onStatus(frame);
        state.rules.changed();  // a leg that ran may have remembered a decision
        break;
      case "interrupt.opened":
        state.runs.ensure(frame.run_id).then(() => state.inbox.onOpened(frame));
        state.view.onOpened(frame);
        break;
      case "interrupt.voted":
        state.inbox.onVoted(frame);
        state.view.onVoted(frame);
        break;
      case "interrupt.reminded":
        state.inbox.onReminded(frame);
        state.view.onReminded(frame);
        break;
      case "interrupt.resolved":
        state.inbox.onResolved(frame);
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
      await state.runs.load();  // the runs list's first page, under its filters
      const { runs } = await api("/api/runs?limit=100");
      for (const run of runs) state.runs.upsert(run, "known");  // the cards say each run's kind
      await state.inbox.load();  // the open questions, and those closed meanwhile
      route();  // the view the address names, as the store has it now (what it missed)
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
    state.runs = Runs.create({ api, announce, go, changed: (run) => state.view.changed(run) });
    state.view = RunView.create({ api, runs: state.runs, answer: state.inbox.answer, me: () => state.me, announce, go });
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
