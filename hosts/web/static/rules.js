// The Rules view: the decisions approvers asked to remember ("Approve always", "Decline
// always"), read from GET /api/decisions (the revoked ones too, marked so), each with a Revoke
// button (POST /api/decisions/ID/revoke): the tool's next call then asks again. Every text
// comes from the store and is set with textContent.
"use strict";

const Rules = (() => {
  const { el, when } = Dom;

  // "In this run (run-1)", "In this conversation (thread-1)".
  function where(decision) {
    return decision.scope === "thread"
      ? `In this conversation (${decision.thread_id})`
      : `In this run (${decision.run_id})`;
  }

  // `api(path, options)` calls REST with the page's token (the server records who signed in
  // as the one who revokes); `announce(text)` tells a screen reader.
  function create({ api, announce }) {
    const $ = (id) => document.getElementById(id);
    const view = $("rules-view");
    const list = $("rules");
    const status = $("rules-status");
    let loading = null;
    let again = false;
    let soon = null;

    // "2 in force, newest first." (or that there are none), from the rows shown.
    function count() {
      const rows = list.querySelectorAll("li.rule");
      const active = list.querySelectorAll('li.rule[data-state="active"]').length;
      status.textContent = rows.length ? `${active} in force, newest first.` : "No remembered decisions.";
    }

    function revokedLine(row, decision) {
      let line = row.querySelector(".rule-revoked");
      if (!line) {
        line = el("p", { className: "rule-revoked" });
        row.querySelector(".rule-body").appendChild(line);
      }
      line.textContent = `Revoked by ${decision.revoked_by || "someone"} at `;
      line.appendChild(when(decision.revoked_at));
    }

    function showRevoked(row, decision) {
      row.dataset.state = "revoked";
      row.querySelector(".rule-state").textContent = "revoked";
      revokedLine(row, decision);
      const button = row.querySelector("button.revoke");
      if (button) button.remove();
    }

    async function revoke(row, decision, button) {
      const error = row.querySelector(".form-error");
      error.textContent = "";
      button.disabled = true;
      try {
        const record = await api(`/api/decisions/${encodeURIComponent(decision.id)}/revoke`, {
          method: "POST",
          body: "{}",
        });
        showRevoked(row, record);
        count();
        announce(`Revoked: ${decision.action} ${decision.tool}. Its next call asks again.`);
        row.focus();  // its button is gone: focus stays on the rule
      } catch (problem) {
        if (problem.message === "unauthorized") return;
        button.disabled = false;
        error.textContent = `Not revoked: ${problem.message}`;
      }
    }

    function row(decision) {
      const titleId = `rule-${decision.id}`;
      const item = el("li", {
        className: "rule",
        "data-decision": decision.id,
        "data-run": decision.run_id,
        "data-action": decision.action,
        "data-state": decision.revoked_at ? "revoked" : "active",
        "aria-labelledby": titleId,
        tabindex: "-1",
      });
      const body = el("div", { className: "rule-body" });
      const title = el("p", { id: titleId, className: "rule-title" });
      title.append(
        el("span", { className: "rule-action" }, decision.action === "deny" ? "Deny" : "Allow"),
        " ",
        el("code", { className: "rule-tool" }, decision.tool),
        " ",
        el("span", { className: "rule-state" }, decision.revoked_at ? "revoked" : "active"),
      );
      const scope = el("p", { className: "rule-where" }, where(decision));
      const args = el("p", { className: "rule-args" });
      if (decision.args) {
        args.append("Only these arguments: ", el("code", {}, JSON.stringify(decision.args)));
      } else {
        args.textContent = "Any arguments";
      }
      const decided = el("p", { className: "rule-who" }, `Decided by ${decision.decided_by || "someone"} at `);
      decided.appendChild(when(decision.created_at));
      body.append(title, scope, args, decided);
      if (decision.reason) body.appendChild(el("p", { className: "rule-reason" }, `Feedback: ${decision.reason}`));
      item.appendChild(body);
      if (decision.revoked_at) {
        revokedLine(item, decision);
      } else {
        const button = el("button", { type: "button", className: "revoke decline" }, "Revoke");
        button.appendChild(el("span", { className: "visually-hidden" },
          ` ${decision.action} ${decision.tool} (${decision.id})`));
        button.addEventListener("click", () => revoke(item, decision, button));
        item.appendChild(button);
      }
      item.appendChild(el("p", { className: "form-error", role: "alert" }));
      return item;
    }

    async function read() {
      status.textContent = "Loading…";
      try {
        const { decisions } = await api("/api/decisions?include_revoked=true&limit=100");
        list.textContent = "";
        for (const decision of decisions) list.appendChild(row(decision));
        count();
      } catch (problem) {
        if (problem.message !== "unauthorized") status.textContent = `Could not load the rules: ${problem.message}`;
      }
    }

    // Read the decisions again (one read at a time; a call meanwhile reads once more after).
    async function load() {
      if (loading) { again = true; return loading; }
      loading = (async () => {
        do { again = false; await read(); } while (again);
      })();
      try { await loading; } finally { loading = null; }
    }

    // Reload shortly, if the view is open (a run's status changed: its approvals may have
    // remembered a decision).
    function changed() {
      if (view.hidden || soon !== null) return;
      soon = window.setTimeout(() => { soon = null; load(); }, 300);
    }

    function toggle(button) {
      view.hidden = !view.hidden;
      button.setAttribute("aria-expanded", String(!view.hidden));
      if (!view.hidden) load();
    }

    const button = $("rules-toggle");
    button.addEventListener("click", () => toggle(button));
    $("rules-refresh").addEventListener("click", () => load());
    return { load: () => (view.hidden ? Promise.resolve() : load()), changed };
  }

  return { create, where };
})();
