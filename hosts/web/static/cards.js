// One card per open interrupt, built from its descriptor: option buttons with their
// descriptions, checkboxes and a submit for a multiple choice, "Other" free text when allowed,
// free text alone, and for an approval Approve / Request changes (with feedback) / Decline.
// Every text comes from the run and is set with textContent (or Markdown.render, text-safe).
"use strict";

const Cards = (() => {
  let counter = 0;
  const uid = (prefix) => `${prefix}-${++counter}`;

  function el(tag, attrs = {}, text) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs)) {
      if (value === undefined || value === null || value === false) continue;
      if (key === "className") node.className = value;
      else node.setAttribute(key, value === true ? "" : value);
    }
    if (text !== undefined) node.textContent = text;
    return node;
  }

  // "Answered by ada via cli: beta", "Declined by bob via web", "Approved by ...".
  function describeAnswer(answer) {
    const who = ` by ${answer.answered_by || "someone"}${answer.via ? ` via ${answer.via}` : ""}`;
    const payload = answer.payload;
    if (answer.status === "expired") return "Expired unanswered.";
    if (answer.status === "cancelled") return `Declined${who}.`;
    if (payload && typeof payload === "object") {
      if (Array.isArray(payload.answers)) return `Answered${who}: ${payload.answers.join(", ")}`;
      if ("answer" in payload) return `Answered${who}: ${payload.answer}`;
      if ("approved" in payload) {
        const verdict = payload.approved ? "Approved" : "Changes requested";
        return payload.feedback ? `${verdict}${who}: ${payload.feedback}` : `${verdict}${who}.`;
      }
    }
    return `Answered${who}.`;
  }

  function timeLeft(expiresAt, now = Date.now()) {
    const ms = Date.parse(expiresAt) - now;
    if (!(ms > 0)) return null;
    const minutes = Math.ceil(ms / 60000);
    if (minutes < 60) return `${minutes} min`;
    const hours = Math.floor(minutes / 60);
    if (hours < 48) return `${hours} h ${minutes % 60} min`;
    return `${Math.floor(hours / 24)} d ${hours % 24} h`;
  }

  // Build the card of `interaction` (an InteractionView) of a run of `kind`. `submit(payload)`
  // sends an answer (null declines) and resolves to null, or to an error body to show.
  function build(interaction, kind, submit) {
    const interrupt = interaction.interrupt || {};
    const display = interrupt.display || {};
    const titleId = uid("card-title");
    const statusId = uid("card-status");
    const card = el("article", {
      className: "card",
      "aria-labelledby": titleId,
      "data-run": interaction.run_id,
      "data-interaction": interaction.id,
      "data-state": "open",
      "data-expires": interrupt.expiresAt || interaction.expires_at,
    });
    if (interaction.kind === "async") {
      // An async question (ask_user_async): the run does not wait for it.
      card.dataset.kind = "async";
      card.appendChild(el("p", { className: "card-async" },
        "Asked while the run keeps working: answer when you are ready."));
    }
    if (display.header) card.appendChild(el("p", { className: "card-header" }, display.header));
    const title = display.title || interrupt.message || interaction.id;
    card.appendChild(el("h3", { id: titleId }, title));
    if (display.title && interrupt.message && interrupt.message !== display.title) {
      card.appendChild(Markdown.render(interrupt.message));
    }
    if (display.body) card.appendChild(Markdown.render(display.body));
    for (const section of display.sections || []) {
      const box = el("section", { className: "card-section" });
      box.appendChild(el("h4", {}, section.title));
      box.appendChild(Markdown.render(section.body));
      card.appendChild(box);
    }
    const meta = el("p", { className: "card-meta" });
    meta.appendChild(el("span", { className: "kind", title: "run kind" }, kind || "run"));
    const node = interaction.node_id ? ` · node ${interaction.node_id}` : "";
    meta.appendChild(document.createTextNode(` ${interaction.run_id}${node} · `));
    meta.appendChild(el("span", { className: "expiry" }));
    card.appendChild(meta);

    const controls = el("fieldset", { className: "controls", "aria-describedby": statusId });
    controls.appendChild(el("legend", { className: "visually-hidden" }, `Answer: ${title}`));
    const status = el("p", { id: statusId, className: "card-status", role: "status" });
    const send = async (payload) => {
      controls.disabled = true;
      status.textContent = "Sending…";
      const refused = await submit(payload);
      if (!refused) {
        if (card.dataset.state === "open") status.textContent = "Sent.";
        return;
      }
      if (card.dataset.state === "open") controls.disabled = false;
      showRefusal(status, refused);
    };
    if (interrupt.reason === "confirmation") approval(controls, send);
    else question(controls, interrupt, send);
    const decline = el("button", { type: "button", className: "decline" }, "Decline");
    decline.addEventListener("click", () => send(null));
    controls.appendChild(decline);
    card.appendChild(controls);
    card.appendChild(status);
    tick(card);
    return card;
  }

  function showRefusal(status, refused) {
    status.textContent = refused.message || refused.error || "Refused.";
    const complaints = (refused.complaints || []).filter((c) => c.message !== refused.message);
    if (complaints.length) {
      const list = el("ul", { className: "complaints" });
      for (const c of complaints) list.appendChild(el("li", {}, c.path ? `${c.path}: ${c.message}` : c.message));
      status.appendChild(list);
    }
  }

  function approval(controls, send) {
    const approve = el("button", { type: "button", className: "primary" }, "Approve");
    approve.addEventListener("click", () => send({ approved: true }));
    const areaId = uid("changes");
    const changes = el("button", { type: "button", "aria-expanded": "false", "aria-controls": areaId }, "Request changes");
    const form = el("form", { id: areaId, className: "feedback", hidden: true });
    const fieldId = uid("feedback");
    form.appendChild(el("label", { for: fieldId }, "What should change?"));
    const text = el("textarea", { id: fieldId, rows: "3", maxlength: "10000" });
    form.appendChild(text);
    form.appendChild(el("button", { type: "submit" }, "Send the request"));
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      send({ approved: false, feedback: text.value.trim() || null });
    });
    changes.addEventListener("click", () => {
      form.hidden = !form.hidden;
      changes.setAttribute("aria-expanded", String(!form.hidden));
      if (!form.hidden) text.focus();
    });
    controls.append(approve, changes, form);
  }

  function optionValue(option) {
    return option.value ?? option.label;
  }

  function question(controls, interrupt, send) {
    const options = interrupt.options || [];
    const multiple = interrupt.selection === "multiple";
    const other = interrupt.allowOther !== false || !options.length;
    const boxes = [];
    if (multiple && options.length) {
      const group = el("fieldset", { className: "choices" });
      group.appendChild(el("legend", {}, "Choose one or more"));
      for (const option of options) {
        const id = uid("choice");
        const row = el("div", { className: "option-row" });
        const box = el("input", { type: "checkbox", id, value: optionValue(option) });
        const descId = option.description ? uid("desc") : null;
        if (descId) box.setAttribute("aria-describedby", descId);
        row.append(box, el("label", { for: id }, option.label));
        if (descId) row.appendChild(el("span", { id: descId, className: "desc" }, option.description));
        group.appendChild(row);
        boxes.push(box);
      }
      controls.appendChild(group);
    } else {
      for (const option of options) {
        const row = el("div", { className: "option-row" });
        const button = el("button", { type: "button", className: "option" }, option.label);
        if (option.description) {
          const descId = uid("desc");
          button.setAttribute("aria-describedby", descId);
          row.append(button, el("span", { id: descId, className: "desc" }, option.description));
        } else {
          row.appendChild(button);
        }
        button.addEventListener("click", () => send({ answer: optionValue(option) }));
        controls.appendChild(row);
      }
    }
    let otherInput = null;
    if (other) {
      const form = el("form", { className: "other" });
      const id = uid("other");
      form.appendChild(el("label", { for: id }, options.length ? "Other answer" : "Your answer"));
      otherInput = el(options.length ? "input" : "textarea", { id, maxlength: "10000" });
      if (options.length) otherInput.type = "text";
      form.appendChild(otherInput);
      if (!multiple) form.appendChild(el("button", { type: "submit" }, "Send"));
      form.addEventListener("submit", (event) => {
        event.preventDefault();
        if (multiple) return submitMany();
        const value = otherInput.value.trim();
        if (value) send({ answer: value });
      });
      controls.appendChild(form);
    }
    function submitMany() {
      const answers = boxes.filter((b) => b.checked).map((b) => b.value);
      const typed = otherInput ? otherInput.value.trim() : "";
      if (typed) answers.push(typed);
      send({ answers });
    }
    if (multiple && options.length) {
      const submitButton = el("button", { type: "button", className: "primary" }, "Submit");
      submitButton.addEventListener("click", submitMany);
      controls.appendChild(submitButton);
    }
  }

  // Mark the card answered (or declined, or expired): its controls are disabled and it says
  // who answered through which host.
  function resolve(card, answer) {
    card.dataset.state = answer.status === "expired" ? "expired" : "resolved";
    const controls = card.querySelector(".controls");
    if (controls) controls.disabled = true;
    card.querySelector(".card-status").textContent = describeAnswer(answer);
    card.querySelector(".expiry").textContent = "closed";
  }

  function tick(card) {
    if (card.dataset.state !== "open") return;
    const left = timeLeft(card.dataset.expires);
    const expiry = card.querySelector(".expiry");
    if (left) {
      expiry.textContent = `expires in ${left}`;
    } else {
      expiry.textContent = "expired";
      card.dataset.state = "expired";
      card.querySelector(".controls").disabled = true;
    }
  }

  return { build, resolve, tick, timeLeft, describeAnswer };
})();
