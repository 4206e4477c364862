// What pi's RpcClient runs as its "CLI": it spawns `node <cliPath> --mode rpc [args]`, so this
// file drops `--mode rpc` and runs `$PI_RECIPES rpc [args]` (PI_RECIPES: the pi-recipes command,
// default `pi-recipes` on PATH) with the same stdio. SIGTERM/SIGINT/SIGHUP are passed on; the
// shim exits with the host's exit code (128 + n when a signal ended it).
import { spawn } from "node:child_process";

const args = process.argv.slice(2);
if (args[0] === "--mode" && args[1] === "rpc") args.splice(0, 2);
const child = spawn(process.env.PI_RECIPES || "pi-recipes", ["rpc", ...args], { stdio: "inherit" });
const SIGNALS = { SIGHUP: 1, SIGINT: 2, SIGTERM: 15 };
for (const signal of Object.keys(SIGNALS)) process.on(signal, () => child.kill(signal));
child.on("error", (error) => {
  process.stderr.write(`shim: cannot start ${process.env.PI_RECIPES || "pi-recipes"}: ${error.message}\n`);
  process.exit(127);
});
child.on("exit", (code, signal) => process.exit(code ?? 128 + (SIGNALS[signal] ?? 0)));
