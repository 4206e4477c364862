// One card per open interrupt, built from its descriptor: option buttons with their
// descriptions, checkboxes and a submit for a multiple choice, "Other" free text when allowed,
// free text alone, and for an approval Approve / Request changes (with feedback) / Decline;
// an approval of a tool call also offers Edit arguments (a form built from the tool's
// parameters) and Approve always / Decline always (for this run or this conversation).
// Every text comes from the run and is set with textContent (or Markdown.render, text-safe).
"use strict";

const Cards = (() => {
  let counter = 0;
  const uid = (prefix) => `${prefix}-${++counter}`;

  const { el } = Dom;

  // The label of the option of `interrupt` whose value is `value` (what a person chose, as
  // they saw it), or the value itself for a typed answer.
  function labelOf(interrupt, value) {
    const found = ((interrupt || {}).options || []).find((o) => optionValue(o) === value);
    return found ? found.label : String(value);
  }

  // "Answered by ada via cli: Beta", "Declined by bob via web", "Approved by ...": the labels
  // of the options chosen (`interrupt`'s), never their values.
  function describeAnswer(answer, interrupt) {
    const who = ` by ${answer.answered_by || "someone"}${answer.via ? ` via ${answer.via}` : ""}`;
    const payload = answer.payload;
    if (answer.status === "expired") return "Expired unanswered.";
    if (answer.status === "cancelled") return `Declined${who}.`;
    if (payload && typeof payload === "object") {
      if (Array.isArray(payload.answers)) {
        return `Answered${who}: ${payload.answers.map((v) => labelOf(interrupt, v)).join(", ")}`;
      }
      if ("answer" in payload) return `Answered${who}: ${labelOf(interrupt, payload.answer)}`;
      if ("approved" in payload) {
        const remember = payload.remember && typeof payload.remember === "object" ? payload.remember : null;
        let verdict = payload.approved ? "Approved" : "Changes requested";
        if (remember) {
          const scope = remember.scope === "thread" ? "this conversation" : "this run";
          const which = remember.args ? ", these arguments only" : "";
          verdict = `${payload.approved ? "Approved" : "Declined"} always (${scope}${which})`;
        } else if (payload.approved && payload.args && typeof payload.args === "object") {
          verdict = "Approved with edited arguments";
        }
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

  // "just now", "5 min ago", "3 h ago", "2 d ago": how long ago `at` was.
  function age(at, now = Date.now()) {
    const minutes = Math.floor((now - Date.parse(at)) / 60000);
    if (!(minutes >= 1)) return "just now";
    if (minutes < 60) return `${minutes} min ago`;
    const hours = Math.floor(minutes / 60);
    return hours < 48 ? `${hours} h ago` : `${Math.floor(hours / 24)} d ago`;
  }

  // Who else may answer `interrupt` besides `me`: "Open to anyone", "Also for: group:release",
  // "Only you may answer".
  function whoElse(interrupt, me, escalated = []) {
    const approvers = approversOf(interrupt, escalated);
    if (!approvers) return "Open to anyone";
    const mine = new Set([me && me.name, ...((me && me.groups) || []).map((g) => `group:${g}`)]);
    const others = approvers.filter((a) => !mine.has(a));
    return others.length ? `Also for: ${others.join(", ")}` : "Only you may answer";
  }

  // Who may answer `interrupt` as its approvers say, or null when anyone may; with those an
  // escalation added (`escalated`: the interaction's escalated_to), who may answer it too.
  function approversOf(interrupt, escalated = []) {
    const named = ((interrupt || {}).metadata || {}).approvers;
    if (!Array.isArray(named) || !named.length) return null;
    const all = [...named, ...(escalated || [])].filter((e) => typeof e === "string");
    return [...new Set(all)];
  }

  // Whether `me` ({name, groups}) may answer `interrupt`: the server's rule, shown before it
  // is asked (it refuses anyone else all the same).
  function mayAnswer(interrupt, me, escalated = []) {
    const approvers = approversOf(interrupt, escalated);
    if (!approvers) return true;
    if (!me) return false;
    return approvers.includes(me.name) || (me.groups || []).some((g) => approvers.includes(`group:${g}`));
  }

  // Build the card of `interaction` (an InteractionView) of a run of `kind`. `submit(payload)`
  // sends an answer (null declines) and resolves to null, or to an error body to show.
  // `me` is who signed in: a card they may not answer is shown read-only, saying who may.
  const interrupts = new WeakMap(); // card -> its interrupt (what its answer is described by)

  function build(interaction, kind, submit, me) {
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
      "data-requested": interaction.requested_at,
    });
    interrupts.set(card, interrupt);
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
    // The run it belongs to (its prompt and recipe, filled in by setRun), its age, time left
    // and who else may answer.
    const run = el("p", { className: "card-run" });
    run.append(el("span", { className: "card-run-title" }), el("span", { className: "card-recipe" }));
    card.appendChild(run);
    const meta = el("p", { className: "card-meta" });
    meta.appendChild(el("span", { className: "kind", title: "run kind" }, kind || "run"));
    const node = interaction.node_id ? ` · node ${interaction.node_id}` : "";
    meta.appendChild(document.createTextNode(` ${interaction.run_id}${node} · asked `));
    meta.appendChild(el("span", { className: "age" }));
    meta.appendChild(document.createTextNode(" · "));
    meta.appendChild(el("span", { className: "expiry" }));
    const escalated = interaction.escalated_to || [];
    if (mayAnswer(interrupt, me, escalated)) {
      meta.appendChild(el("span", { className: "card-who" }, whoElse(interrupt, me, escalated)));
    }
    card.appendChild(meta);

    const controls = el("fieldset", { className: "controls", "aria-describedby": statusId });
    controls.appendChild(el("legend", { className: "visually-hidden" }, `Answer: ${title}`));
    const status = el("p", { id: statusId, className: "card-status", role: "status" });
    // `beside` (optional) is where a refusal is shown instead of the card's status line: the
    // form that sent it, which stays as it was filled in.
    const send = async (payload, beside) => {
      controls.disabled = true;
      status.textContent = "Sending…";
      if (beside) beside.textContent = "";
      const refused = await submit(payload);
      if (!refused) {
        if (card.dataset.state === "open") status.textContent = "Sent.";
        return;
      }
      if (refused.vote) {  // one vote of an approval that needs several: it stays open
        const { approvals, required_approvals: needed } = refused.vote;
        status.textContent = `Your vote is counted: ${approvals.length} of ${needed} approvals` +
          (approvals.length ? ` (${approvals.join(", ")})` : "") + ". Waiting for the others.";
        return;
      }
      if (card.dataset.state === "open" && !card.dataset.readonly && !card.dataset.voted) {
        controls.disabled = false;
      }
      if (beside) {
        status.textContent = "Not sent.";
        showRefusal(beside, refused);
      } else {
        showRefusal(status, refused);
      }
    };
    if (interrupt.reason === "confirmation") {
      approval(controls, send);
      const metadata = interrupt.metadata || {};
      if (metadata.kind === "tool_call" && isObject(metadata.args_schema)) {
        editArguments(controls, metadata, send);
        always(controls, send);
      }
    } else {
      question(controls, interrupt, send);
    }
    const decline = el("button", { type: "button", className: "decline", "data-key": "d", "aria-keyshortcuts": "d" }, "Decline");
    decline.addEventListener("click", () => send(null));
    controls.appendChild(decline);
    card.appendChild(controls);
    card.appendChild(status);
    if (interaction.required_approvals > 1) {
      // An approval several people must give: who approved so far, said when it changes.
      card.insertBefore(el("p", { className: "card-votes", role: "status" }), controls);
      votes(card, interaction, me);
    }
    if (interaction.unreadable) {
      // Stored in a form this server cannot read: shown, never answered (it would be refused).
      card.dataset.readonly = "true";
      controls.disabled = true;
      const why = `Unreadable: ${interaction.unreadable}. This question cannot be answered here.`;
      card.insertBefore(el("p", { className: "card-only card-unreadable", role: "note" }, why), controls);
    } else if (!mayAnswer(interrupt, me, escalated)) {
      card.dataset.readonly = "true";
      controls.disabled = true;
      const only = `Only ${approversOf(interrupt, escalated).join(", ")} may answer this`;
      card.insertBefore(el("p", { className: "card-only", role: "note" }, only), controls);
    }
    reach(card, interaction);
    tick(card);
    return card;
  }

  // "Reminded 2× · Escalated to group:oncall": a small badge once a question was reminded of
  // or escalated (`info`: {reminded, escalated_to} of a view, or an interrupt.reminded frame).
  function reach(card, info) {
    const reminded = info.escalated === undefined ? info.reminded : (info.escalated ? null : info.count);
    const to = info.escalated ? info.added : info.escalated_to;
    if (reminded) card.dataset.reminded = String(reminded);
    if (to && to.length) card.dataset.escalatedTo = to.join(", ");
    const said = [card.dataset.reminded ? `Reminded ${card.dataset.reminded}×` : "",
      card.dataset.escalatedTo ? `Escalated to ${card.dataset.escalatedTo}` : ""].filter(Boolean);
    if (!said.length) return;
    let badge = card.querySelector(".card-reach");
    if (!badge) {
      badge = el("p", { className: "card-reach", role: "note" });
      card.insertBefore(badge, card.querySelector(".controls"));
    }
    badge.textContent = said.join(" · ");
  }

  // "1 of 2 approvals: ada": the votes so far on an approval several people must give
  // (`tally`: {approvals, required_approvals}), shown on its card. Someone who approved it
  // (`me`) may not vote again: their card stays closed and says so. Returns the line.
  function votes(card, tally, me) {
    const approvals = tally.approvals || [];
    const line = `${approvals.length} of ${tally.required_approvals} approvals` +
      (approvals.length ? `: ${approvals.join(", ")}` : "");
    const shown = card.querySelector(".card-votes");
    if (shown) shown.textContent = line;
    if (card.dataset.state === "open" && me && approvals.includes(me.name)) {
      card.dataset.voted = "true";
      card.querySelector(".controls").disabled = true;
      const status = card.querySelector(".card-status");
      if (!status.textContent.startsWith("Your vote")) {
        status.textContent = "You have approved this: waiting for the others.";
      }
    }
    return line;
  }

  function showRefusal(status, refused) {
    status.textContent = refused.message || refused.error || "Refused.";
    const said = refused.message || "";
    const complaints = (refused.complaints || []).filter((c) => !said.includes(c.message));
    if (complaints.length) {
      const list = el("ul", { className: "complaints" });
      for (const c of complaints) list.appendChild(el("li", {}, c.path ? `${c.path}: ${c.message}` : c.message));
      status.appendChild(list);
    }
  }

  function approval(controls, send) {
    const approve = el("button", { type: "button", className: "primary", "data-key": "a", "aria-keyshortcuts": "a" }, "Approve");
    approve.addEventListener("click", () => send({ approved: true }));
    const areaId = uid("changes");
    const changes = el("button", {
      type: "button", "aria-expanded": "false", "aria-controls": areaId, "data-key": "r", "aria-keyshortcuts": "r",
    }, "Request changes");
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

  function isObject(value) {
    return value !== null && typeof value === "object" && !Array.isArray(value);
  }

  // A button that shows and hides `area` (aria-expanded), focusing `first` when shown.
  function disclosure(label, area, first) {
    const button = el("button", { type: "button", "aria-expanded": "false", "aria-controls": area.id }, label);
    button.addEventListener("click", () => {
      area.hidden = !area.hidden;
      button.setAttribute("aria-expanded", String(!area.hidden));
      if (!area.hidden && first()) first().focus();
    });
    return button;
  }

  const FLAT = ["string", "number", "integer", "boolean"];

  // The fields of a tool's arguments, one per property, where every property is flat (a
  // string, a number, an integer, a boolean, an enum of strings): as the MCP host's form.
  // null otherwise (the arguments are then edited as one JSON object).
  function flatFields(schema) {
    const properties = schema.properties;
    if (!isObject(properties)) return null;
    const fields = [];
    for (const [name, prop] of Object.entries(properties)) {
      if (!isObject(prop) || !FLAT.includes(prop.type)) return null;
      if ("enum" in prop && (prop.type !== "string" || !Array.isArray(prop.enum))) return null;
      fields.push({ name, prop });
    }
    return fields;
  }

  // One labelled control per argument, prefilled with the call's own value; `read()` gives
  // the value to send (undefined: left out, an optional field left empty).
  function argumentField(name, prop, value, required) {
    const id = uid("arg");
    const row = el("div", { className: "arg-row" });
    const label = el("label", { for: id }, prop.title || name);
    let input;
    let read;
    if (prop.type === "boolean") {
      input = el("input", { type: "checkbox", id });
      input.checked = value === true;
      read = () => input.checked;
      row.append(input, label);
    } else if (Array.isArray(prop.enum)) {
      input = el("select", { id });
      if (!required) input.appendChild(el("option", { value: "" }, "(not set)"));
      for (const choice of prop.enum) input.appendChild(el("option", { value: String(choice) }, String(choice)));
      input.value = value === undefined || value === null ? "" : String(value);
      read = () => (input.value === "" && !required ? undefined : input.value);
      row.append(label, input);
    } else if (prop.type === "number" || prop.type === "integer") {
      input = el("input", { type: "number", id, step: prop.type === "integer" ? "1" : "any", inputmode: prop.type === "integer" ? "numeric" : "decimal" });
      input.value = typeof value === "number" ? String(value) : "";
      read = () => {
        const text = input.value.trim();
        if (text === "") return required ? null : undefined;
        const number = Number(text);
        return Number.isNaN(number) ? text : number;
      };
      row.append(label, input);
    } else {
      input = el("input", { type: "text", id });
      input.value = typeof value === "string" ? value : "";
      read = () => (input.value === "" && !required ? undefined : input.value);
      row.append(label, input);
    }
    if (required) input.setAttribute("aria-required", "true");
    if (prop.description) {
      const descId = uid("desc");
      input.setAttribute("aria-describedby", descId);
      row.appendChild(el("span", { id: descId, className: "desc" }, prop.description));
    }
    return { row, input, read, name };
  }

  // "Edit arguments": a form of the tool's arguments (fields, or one JSON text) that
  // approves the call with what it holds: {approved: true, args}. The server checks the
  // arguments against the tool's parameters; its refusal is shown beside the form.
  function editArguments(controls, metadata, send) {
    const schema = metadata.args_schema;
    const given = isObject(metadata.arguments) ? metadata.arguments : {};
    const required = new Set(Array.isArray(schema.required) ? schema.required : []);
    const formId = uid("edit-args");
    const form = el("form", { id: formId, className: "edit-args", hidden: true, novalidate: true });
    const titleId = uid("edit-title");
    form.setAttribute("aria-labelledby", titleId);
    form.appendChild(el("h4", { id: titleId }, `Arguments of ${metadata.tool || "the tool"}`));
    const flat = flatFields(schema);
    let read;
    let first;
    if (flat) {
      const fields = flat.map(({ name, prop }) => argumentField(name, prop, given[name], required.has(name)));
      for (const field of fields) form.appendChild(field.row);
      first = fields.length ? fields[0].input : null;
      read = () => {
        const args = {};
        for (const field of fields) {
          const value = field.read();
          if (value !== undefined) args[field.name] = value;
        }
        return args;
      };
    } else {
      const id = uid("args-json");
      const helpId = uid("help");
      form.appendChild(el("label", { for: id }, "Arguments (JSON)"));
      const text = el("textarea", { id, rows: "6", spellcheck: "false", "aria-describedby": helpId, className: "json" });
      text.value = JSON.stringify(given, null, 2);
      form.appendChild(text);
      form.appendChild(el("p", { id: helpId, className: "help" }, "One JSON object: the arguments the tool runs with."));
      first = text;
      read = () => {
        let args;
        try {
          args = JSON.parse(text.value);
        } catch (error) {
          throw new Error(`The arguments are not JSON: ${error.message}`);
        }
        if (!isObject(args)) throw new Error("The arguments must be one JSON object ({…}).");
        return args;
      };
    }
    const error = el("div", { className: "form-error", role: "alert" });
    form.appendChild(error);
    form.appendChild(el("button", { type: "submit", className: "primary" }, "Approve with these arguments"));
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      let args;
      try {
        args = read();
      } catch (problem) {
        error.textContent = problem.message;
        return;
      }
      send({ approved: true, args }, error);
    });
    controls.append(disclosure("Edit arguments", form, () => first), form);
  }

  // "Approve always" / "Decline always": the decision sticks for this tool in this run or in
  // this conversation, for any arguments or only these: {approved, remember: {scope, args}}.
  function always(controls, send) {
    const boxId = uid("always");
    const box = el("div", { id: boxId, className: "always", hidden: true });
    const scopes = el("fieldset", { className: "scope" });
    scopes.appendChild(el("legend", {}, "Remember the decision for"));
    const group = uid("scope");
    const radios = [];
    for (const [value, text] of [["run", "this run"], ["thread", "this conversation"]]) {
      const id = uid("scope");
      const radio = el("input", { type: "radio", id, name: group, value });
      radio.checked = value === "run";
      radios.push(radio);
      const row = el("div", { className: "option-row" });
      row.append(radio, el("label", { for: id }, text));
      scopes.appendChild(row);
    }
    const onlyId = uid("only");
    const only = el("input", { type: "checkbox", id: onlyId });
    const onlyRow = el("div", { className: "option-row" });
    onlyRow.append(only, el("label", { for: onlyId }, "only these arguments"));
    const error = el("div", { className: "form-error", role: "alert" });
    const remember = () => ({ scope: radios.find((r) => r.checked).value, args: only.checked });
    const approve = el("button", { type: "button", className: "primary" }, "Approve always");
    approve.addEventListener("click", () => send({ approved: true, remember: remember() }, error));
    const decline = el("button", { type: "button", className: "decline" }, "Decline always");
    decline.addEventListener("click", () => send({ approved: false, remember: remember() }, error));
    const buttons = el("div", { className: "option-row" });
    buttons.append(approve, decline);
    box.append(scopes, onlyRow, buttons, error);
    controls.append(disclosure("Approve or decline always…", box, () => radios[0]), box);
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
    card.dataset.outcome = answer.status; // resolved, cancelled (declined) or expired
    const controls = card.querySelector(".controls");
    if (controls) controls.disabled = true;
    card.querySelector(".card-status").textContent = describeAnswer(answer, interrupts.get(card));
    card.querySelector(".expiry").textContent = "closed";
    const at = answer.answered_at;
    if (at) {
      card.dataset.answered = at;
      let when = card.querySelector(".card-when");
      if (!when) {
        when = el("p", { className: "card-when" });
        card.querySelector(".card-status").after(when);
      }
      when.textContent = "";
      when.append("at ", el("time", { datetime: at }, new Date(at).toLocaleString()));
    }
  }

  // Fill in the run `brief` ({kind, name, title, ...}, from /api/me) on `card`.
  function setRun(card, brief) {
    if (!brief) return;
    card.querySelector(".card-run-title").textContent = brief.title;
    card.querySelector(".card-recipe").textContent = brief.name;
    card.querySelector(".kind").textContent = brief.kind;
    card.dataset.search = [brief.title, brief.name].join(" ").toLowerCase();
  }

  // What the inbox's search looks through: the card's question, texts, run title and recipe.
  function searchText(card) {
    const title = card.querySelector("h3").textContent;
    const body = Array.from(card.querySelectorAll(".md, .card-header")).map((n) => n.textContent);
    return [title, ...body, card.dataset.search || ""].join(" ").toLowerCase();
  }

  function tick(card) {
    if (card.dataset.requested) card.querySelector(".age").textContent = age(card.dataset.requested);
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

  return {
    build, resolve, setRun, searchText, tick, votes, reach, timeLeft, describeAnswer, mayAnswer,
    approversOf,
  };
})();
