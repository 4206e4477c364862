// The inbox, the page's first view: the open questions "For you" (their approvers name who
// signed in or one of their groups), "Open to anyone", "For others" (read-only: who may answer
// is said on each), and the History of closed ones (answered, declined, expired), newest first.
// A card answered here or elsewhere moves to History live. Keyboard: j/k move between open
// cards, a approve, r request changes, d decline, / search, ? says the keys; each move and
// action is announced. Read over REST (/api/me/inbox, /api/me/history), live over the page's
// WebSocket frames (app.js hands them here).
"use strict";

const Inbox = (() => {
  const PARTS = ["for-you", "anyone", "others"];
  const NAMES = { "for-you": "For you", anyone: "Open to anyone", others: "For others" };
  const KEYS = "Keys: j and k, next and previous question; a, approve; r, request changes; " +
    "d, decline; slash, search the inbox.";
  const HISTORY_PAGE = 20;
  const INBOX_PAGES = 10; // of 200 each: what the page reads of a very long inbox

  function create({ api, announce, me, socket }) {
    const $ = (id) => document.getElementById(id);
    const cards = new Map(); // "run/interaction" -> card element
    const pending = new Map(); // frame id -> resolve function
    const briefs = new Map(); // run id -> its brief ({kind, name, title, ...}) or a promise
    const asked = new Map(); // "run/interaction" -> the interaction its card was built from
    let frameCounter = 0;
    let current = null; // the card j/k moved to
    let historyNext; // the `before` of the next History page (undefined: not read yet)
    let query = "";

    const key = (runId, interactionId) => `${runId}/${interactionId}`;
    const list = (part) => $(`${part}-cards`);
    const title = (card) => card.querySelector("h3").textContent;

    // Which part an open `interaction` goes in, for who signed in.
    function partOf(interaction) {
      const interrupt = interaction.interrupt || {};
      const escalated = interaction.escalated_to || [];
      if (!Cards.mayAnswer(interrupt, me(), escalated)) return "others";
      return Cards.approversOf(interrupt, escalated) ? "for-you" : "anyone";
    }

    // Put `card` in `container`, sorted newest first by its `attr` time.
    function place(container, card, attr) {
      const at = Date.parse(card.dataset[attr] || "") || 0;
      const after = Array.from(container.children).find(
        (other) => other !== card && (Date.parse(other.dataset[attr] || "") || 0) < at,
      );
      container.insertBefore(card, after || null);
    }

    // ------------------------------------------------------------------ cards

    function add(interaction, run) {
      const id = key(interaction.run_id, interaction.id);
      // An await record is the run's wait for its async questions: their cards are the ones
      // to answer, and the system settles it.
      if (cards.has(id) || interaction.kind === "await") return null;
      const card = Cards.build(interaction, run && run.kind, (payload) => answer(interaction, payload), me());
      cards.set(id, card);
      asked.set(id, interaction);
      if (run) Cards.setRun(card, run);
      else brief(interaction.run_id).then((found) => Cards.setRun(card, found));
      if (interaction.answer) {
        closeCard(card, { ...interaction.answer, answered_at: interaction.answered_at });
      } else {
        place(list(partOf(interaction)), card, "requested");
      }
      filter(card);
      counts();
      return card;
    }

    // The brief of a run whose card came over the socket (the frame carries none).
    function brief(runId) {
      if (!briefs.has(runId)) {
        const asked = api(`/api/me/inbox?others=true&limit=1&run_id=${encodeURIComponent(runId)}`)
          .then(({ interactions }) => {
            const found = interactions.length ? interactions[0].run : null;
            if (found) briefs.set(runId, found);
            else briefs.delete(runId);
            return found;
          })
          .catch(() => { briefs.delete(runId); return null; });
        briefs.set(runId, asked);
      }
      return Promise.resolve(briefs.get(runId));
    }

    // Close `card` with `answer` and move it to History, in answer order.
    function closeCard(card, answer) {
      Cards.resolve(card, answer);
      if (card === current) current = null;
      card.classList.remove("current");
      card.removeAttribute("tabindex");
      const focused = card.contains(document.activeElement);
      place(list("history"), card, "answered");
      if (focused) card.querySelector("h3").setAttribute("tabindex", "-1");
      if (focused) card.querySelector("h3").focus();
      counts();
    }

    function onOpened(frame) {
      const card = add(frame.interaction, briefs.get(frame.run_id) instanceof Promise ? null : briefs.get(frame.run_id));
      if (card && card.dataset.state === "open") announce(`New question: ${title(card)}`);
    }

    function onResolved(frame) {
      const card = cards.get(key(frame.run_id, frame.interaction_id));
      if (!card || card.dataset.state !== "open") return;
      closeCard(card, frame);
      announce(`${title(card)}: ${card.querySelector(".card-status").textContent}`);
    }

    // A question was reminded of, or escalated: its card says so; an escalation may let who
    // signed in answer it now, so its card is built again, in the part it now belongs to.
    function onReminded(frame) {
      const id = key(frame.run_id, frame.interaction_id);
      const card = cards.get(id);
      if (!card || card.dataset.state !== "open") return;
      const interaction = asked.get(id);
      if (!frame.escalated || !interaction) {
        Cards.reach(card, frame);
        return;
      }
      const escalated = [...(interaction.escalated_to || []), ...(frame.added || [])];
      const now = { ...interaction, escalated_to: [...new Set(escalated)], reminded: Number(card.dataset.reminded) || 0 };
      const brief = card.dataset.run && briefs.get(frame.run_id);
      if (card === current) current = null;
      cards.delete(id);
      card.remove();
      const again = add(now, brief instanceof Promise ? null : brief);
      if (again) announce(`${title(again)}: escalated to ${(frame.added || []).join(", ")}`);
    }

    // Someone voted on an approval several people must give: its card says who approved so far.
    function onVoted(frame) {
      const card = cards.get(key(frame.run_id, frame.interaction_id));
      if (!card || card.dataset.state !== "open") return;
      const line = Cards.votes(card, frame, me());
      announce(`${title(card)}: ${line}`);
    }

    function answer(interaction, payload) {
      const id = `i${++frameCounter}`;  // the server records who signed in as who answers
      const frame = payload === null
        ? { type: "decline", id, run_id: interaction.run_id, interaction_id: interaction.id }
        : { type: "answer", id, run_id: interaction.run_id, interaction_id: interaction.id, payload };
      const open = socket();
      if (!open || open.readyState !== WebSocket.OPEN) {
        return Promise.resolve({ message: "Not connected; try again in a moment." });
      }
      return new Promise((resolve) => {
        const timer = window.setTimeout(() => {
          pending.delete(id);
          resolve({ message: "No reply from the server; check the run before answering again." });
        }, 15000);
        pending.set(id, (reply) => {
          window.clearTimeout(timer);
          // an ack is no refusal; one that did not settle the question was one vote of several
          if (reply.type !== "ack") resolve(reply);
          else resolve(reply.settled === false ? { vote: reply } : null);
        });
        open.send(JSON.stringify(frame));
      });
    }

    // The reply to a frame this inbox sent (an ack or an error); false when it sent none such.
    function onReply(frame) {
      const reply = pending.get(frame.id);
      if (!reply) return false;
      pending.delete(frame.id);
      reply(frame);
      return true;
    }

    // The connection closed: every answer waiting for its reply is told so.
    function onClosed() {
      for (const reply of pending.values()) reply({ message: "The connection closed; try again." });
      pending.clear();
    }

    // ------------------------------------------------------------------ reading the store

    // What the store holds now: the open questions, those closed while the page was cut off,
    // and the History's first page.
    async function load() {
      const open = new Set();
      let after = null;
      for (let page = 0; page < INBOX_PAGES; page++) {
        const params = new URLSearchParams({ others: "true", limit: "200" });
        if (after) params.set("after", after);
        const inbox = await api(`/api/me/inbox?${params}`);
        for (const item of inbox.interactions) {
          briefs.set(item.run_id, item.run);
          open.add(key(item.run_id, item.id));
          add(item, item.run);
        }
        after = inbox.next;
        if (!after) break;
      }
      await closeAnsweredMeanwhile(open);
      await readHistory(historyNext === undefined ? null : undefined);
    }

    // Cards still open here whose questions were answered (or closed) while the page was not
    // connected: their frames were missed, so read how each was answered.
    async function closeAnsweredMeanwhile(open) {
      const stale = new Map();
      for (const [id, card] of cards) {
        if (card.dataset.state !== "open" || open.has(id)) continue;
        const runId = card.dataset.run;
        if (!stale.has(runId)) stale.set(runId, []);
        stale.get(runId).push(card);
      }
      for (const [runId, found] of stale) {
        try {
          const { interactions } = await api(`/api/runs/${encodeURIComponent(runId)}`);
          const byId = new Map(interactions.map((i) => [i.id, i]));
          for (const card of found) {
            const stored = byId.get(card.dataset.interaction);
            if (stored && stored.answer) closeCard(card, { ...stored.answer, answered_at: stored.answered_at });
          }
        } catch (error) { /* the card stays as it was; answering it says why if it cannot */ }
      }
    }

    // One page of History: the newest (`before` null), the next older one (`before` a
    // cursor), or the newest again without moving where "Show older" reads on (undefined).
    async function readHistory(before) {
      const params = new URLSearchParams({ limit: String(HISTORY_PAGE) });
      if (before) params.set("before", before);
      const page = await api(`/api/me/history?${params}`);
      for (const item of page.interactions) {
        const card = cards.get(key(item.run_id, item.id));
        if (!card) add(item, item.run);
        else if (card.dataset.state === "open") {
          closeCard(card, { ...item.answer, answered_at: item.answered_at });
        }
      }
      if (before !== undefined) historyNext = page.next;
      $("history-more").hidden = !historyNext;
      return page.interactions.length;
    }

    async function readOlder() {
      const button = $("history-more");
      button.disabled = true;
      try {
        const read = await readHistory(historyNext);
        announce(`${read} older question${read === 1 ? "" : "s"} in History.`);
      } catch (error) {
        if (error.message !== "unauthorized") announce(`Could not read History: ${error.message}`);
      } finally {
        button.disabled = false;
      }
    }

    // ------------------------------------------------------------------ counts and search

    function counts() {
      for (const part of [...PARTS, "history"]) {
        const all = Array.from(list(part).children);
        const shown = all.filter((card) => !card.hidden).length;
        const section = list(part).closest("section");
        const count = section.querySelector(".count");
        if (count) count.textContent = shown === all.length ? `(${all.length})` : `(${shown} of ${all.length})`;
        section.querySelector(".empty").hidden = shown > 0;
        if (part === "others") section.hidden = all.length === 0;
      }
    }

    function filter(card) {
      card.hidden = query !== "" && !Cards.searchText(card).includes(query);
    }

    function search(text) {
      query = text.trim().toLowerCase();
      for (const card of cards.values()) filter(card);
      if (current && current.hidden) setCurrent(null);
      counts();
      const open = openCards().length;
      announce(query ? `${open} open question${open === 1 ? " matches" : "s match"}.` : "Showing every question.");
    }

    // ------------------------------------------------------------------ keyboard

    function openCards() {
      return PARTS.flatMap((part) => Array.from(list(part).children)).filter((card) => !card.hidden);
    }

    function setCurrent(card) {
      if (current) {
        current.classList.remove("current");
        current.removeAttribute("tabindex");
      }
      current = card;
      if (!card) return;
      card.classList.add("current");
      card.setAttribute("tabindex", "-1");
      card.focus();
    }

    // The open card the keys act on: the one focus is in, else the one j/k moved to.
    function focusedCard() {
      const inside = document.activeElement && document.activeElement.closest("article.card");
      if (inside && inside.dataset.state === "open") return inside;
      return current && current.dataset.state === "open" ? current : null;
    }

    function move(step) {
      const open = openCards();
      if (!open.length) {
        announce(query ? "No open question matches the search." : "No question is open.");
        return;
      }
      const at = open.indexOf(focusedCard());
      const next = at === -1 ? (step > 0 ? 0 : open.length - 1) : at + step;
      if (next < 0 || next >= open.length) {
        announce(next < 0 ? "This is the first question." : "This is the last question.");
        return;
      }
      const card = open[next];
      setCurrent(card);
      const part = NAMES[card.parentElement.dataset.part];
      const run = card.querySelector(".card-run-title").textContent;
      announce(`${next + 1} of ${open.length}, ${part}: ${title(card)}${run ? ` (run: ${run})` : ""}`);
    }

    // a, r or d on the current card: the button with that key, if it has one and may be used.
    function act(letter) {
      const card = focusedCard();
      if (!card) {
        announce("Choose a question first: j or k moves to one.");
        return;
      }
      if (card.dataset.readonly) {
        announce(card.querySelector(".card-only").textContent);
        return;
      }
      const button = card.querySelector(`.controls [data-key="${letter}"]`);
      if (!button) {
        announce(`${title(card)} is a question: choose an answer, or d to decline.`);
        return;
      }
      if (button.disabled || card.querySelector(".controls").disabled) {
        announce(`${title(card)}: ${card.querySelector(".card-status").textContent || "waiting"}`);
        return;
      }
      if (letter === "r") {
        const form = document.getElementById(button.getAttribute("aria-controls"));
        if (form.hidden) button.click();
        else form.querySelector("textarea").focus();
        announce(`Request changes to ${title(card)}: write what should change, then Enter on Send.`);
        return;
      }
      announce(`${letter === "a" ? "Approving" : "Declining"}: ${title(card)}`);
      button.click();
    }

    function typing(target) {
      if (!target || !target.closest) return false;
      return Boolean(target.closest("input, textarea, select, [contenteditable]"));
    }

    function onKey(event) {
      if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return;
      if ($("main").hidden || $("inbox").hidden) return;
      const field = $("inbox-search");
      if (event.target === field && event.key === "Escape") {
        event.preventDefault();
        if (current) current.focus(); else field.blur();
        return;
      }
      if (typing(event.target)) return;
      const actions = {
        j: () => move(1),
        k: () => move(-1),
        a: () => act("a"),
        r: () => act("r"),
        d: () => act("d"),
        "/": () => { field.focus(); field.select(); },
        "?": () => announce(KEYS),
      };
      const run = actions[event.key];
      if (!run) return;
      event.preventDefault();
      run();
    }

    // ------------------------------------------------------------------ wiring

    document.addEventListener("keydown", onKey);
    $("inbox-search").addEventListener("input", (event) => search(event.target.value));
    $("history-more").addEventListener("click", readOlder);
    window.setInterval(() => { for (const card of cards.values()) Cards.tick(card); }, 30000);
    counts();

    return { load, answer, onOpened, onResolved, onVoted, onReminded, onReply, onClosed };
  }

  return { create };
})();
