// Drives `pi-recipes rpc` with pi's own RpcClient (the pinned @earendil-works/pi-coding-agent)
// through one session, and prints what it saw as one JSON object on the last line of stdout.
//
//   PI_RECIPES=<the pi-recipes command> PI_RECIPE=<recipe path> node drive.mjs
//
// The recipe is tests/hosts/rpc_recipe.py: "slow" asks a select, "deploy" a confirm, "fruits" a
// multiple choice. Every wait is bounded (WAIT ms); a step that fails makes the script exit 1
// with the error, after stopping the host.
import { fileURLToPath } from "node:url";

// The package's index also loads pi's whole CLI, which needs Node 22; the client itself needs
// nothing new, so it is imported from its own module, resolved through the package.
const entry = import.meta.resolve("@earendil-works/pi-coding-agent");
const { RpcClient } = await import(new URL("./modes/rpc/rpc-client.js", entry).href);

const WAIT = 10_000;
const shim = fileURLToPath(new URL("./shim.mjs", import.meta.url));
const client = new RpcClient({ cliPath: shim, args: [process.env.PI_RECIPE] });

const events = [];
client.onEvent((event) => events.push(event));

function waitFor(predicate, what) {
  return new Promise((resolve, reject) => {
    const found = events.find(predicate);
    if (found) return resolve(found);
    const timer = setTimeout(() => {
      stop();
      reject(new Error(`no ${what} within ${WAIT} ms`));
    }, WAIT);
    const stop = client.onEvent((event) => {
      if (predicate(event)) {
        clearTimeout(timer);
        stop();
        resolve(event);
      }
    });
  });
}

const DIALOGS = ["select", "confirm", "input", "editor"];
let answered = new Set();

async function nextDialog() {
  const dialog = await waitFor(
    (e) => e.type === "extension_ui_request" && DIALOGS.includes(e.method) && !answered.has(e.id),
    "dialog",
  );
  answered.add(dialog.id);
  return dialog;
}

function answer(dialog, fields) {
  client.process.stdin.write(`${JSON.stringify({ type: "extension_ui_response", id: dialog.id, ...fields })}\n`);
}

/** Prompt, run `during` while the agent works, wait for agent_settled; the run's records. */
async function run(message, during = async () => {}) {
  const start = events.length;
  const idle = client.waitForIdle(WAIT);
  const disposition = await client.prompt(message);
  await during();
  await idle;
  const seen = events.slice(start);
  const ends = seen.filter((e) => e.type === "tool_execution_end");
  return {
    disposition,
    results: ends.map((e) => e.result.content.map((c) => c.text).join("")),
    settled: seen.filter((e) => e.type === "agent_settled"),
    agentEnd: seen.filter((e) => e.type === "agent_end").map((e) => ({ status: e.status, willRetry: e.willRetry, messages: e.messages.length })),
    types: seen.map((e) => e.type),
  };
}

const out = {};
let exit = null;
try {
  await client.start();
  client.process.on("exit", (code, signal) => { exit = { code, signal }; });

  out.echo = await run("hi");

  out.select = await run("slow", async () => {
    const dialog = await nextDialog();
    out.selectRequest = dialog;
    answer(dialog, { value: "Pear" });
  });

  out.confirm = await run("deploy", async () => {
    const dialog = await nextDialog();
    out.confirmRequest = dialog;
    answer(dialog, { confirmed: false });
  });

  const rows = [];
  out.multiSelect = await run("fruits", async () => {
    for (const label of ["Apple", "Plum", "Done"]) {
      const dialog = await nextDialog();
      rows.push(dialog.options);
      answer(dialog, { value: dialog.options.find((o) => o.endsWith(label)) });
    }
  });
  out.multiSelect.rows = rows;

  // A tool that declares its approval: its arguments edited in an editor, then approved
  // always for the session, then a call that asks nothing.
  out.shipEdit = await run("ship", async () => {
    const choice = await nextDialog();
    out.shipChoice = choice;
    answer(choice, { value: "Edit arguments" });
    const editor = await nextDialog();
    out.shipEditor = editor;
    answer(editor, { value: '{"env": "canary"}' });
  });
  out.shipAlways = await run("ship", async () => {
    answer(await nextDialog(), { value: "Approve always" });
    const where = await nextDialog();
    out.shipWhere = where;
    answer(where, { value: "In this run" });
  });
  const dialogsBefore = events.filter((e) => e.type === "extension_ui_request").length;
  out.shipAgain = await run("ship");
  out.shipAgain.dialogs = events.filter((e) => e.type === "extension_ui_request").length - dialogsBefore;

  out.steer = await run("slow", async () => {
    const dialog = await nextDialog();
    out.steerDisposition = await client.steer("steered");
    out.stateWhileBusy = await client.getState();
    answer(dialog, { value: "Apple" });
  });

  out.abort = await run("slow", async () => {
    const dialog = await nextDialog();
    await client.abort();
    out.abortCancel = events.find((e) => e.method === "cancel" && e.targetId === dialog.id) ?? null;
  });

  out.state = await client.getState();
  out.messages = (await client.getMessages()).map((m) => ({
    role: m.role,
    text: typeof m.content === "string" ? m.content : m.content.filter((c) => c.type === "text").map((c) => c.text).join(""),
    timestamp: typeof m.timestamp,
  }));
} catch (error) {
  out.error = String(error?.message ?? error);
} finally {
  await client.stop();
  out.exit = exit;
}
console.log(JSON.stringify(out));
process.exit(out.error ? 1 : 0);
