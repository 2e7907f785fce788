/**
 * A signal that lands while the CLI starts up (src/cli/main.cts holds signal handlers before it compiles
 * its bundle; runCli installs the run's own, src/cli/interrupt.ts `watchRunInterrupts`, before any command
 * is set up), or during a command without interrupt handling of its own, is answered like every
 * interruption: exit 130/143/129 with `INTERRUPTED`, with `--json` one JSON object on stdout (before: killed
 * by the signal with an empty stdout), the error line on stderr otherwise.
 *
 * Deterministic: a module preloaded with `node -r` reports on stderr the moment a handler of each signal is
 * installed (and whether the CLI bundle was read by then), and the test signals the child at that moment,
 * i.e. before the bundle is compiled. Built CLI: `npm run build` first.
 */
import { spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { CLI } from "../support/cli.js";

const MARKER = "<signal handler installed>";
let work: string;
let preload: string;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "hpk-startup-signal-"));
  preload = join(work, "first-handler.cjs");
  await writeFile(
    preload,
    `const fs = require("node:fs");
let bundleRead = false;
const readFileSync = fs.readFileSync;
fs.readFileSync = function (file, ...rest) {
  if (String(file).endsWith("cli-bundle.cjs")) bundleRead = true;
  return readFileSync.call(this, file, ...rest);
};
let told = false;
const on = process.on;
process.on = process.addListener = function (...args) {
  const result = on.apply(this, args);
  // Once a handler of each of the three signals is in place (added, not about to be).
  if (!told && ["SIGINT", "SIGTERM", "SIGHUP"].every((name) => process.listenerCount(name) > 0)) {
    told = true;
    fs.writeSync(2, ${JSON.stringify(MARKER)} + (bundleRead ? " after the bundle was read" : " before the bundle was read") + "\\n");
  }
  return result;
};
`,
  );
  await writeFile(join(work, "release-receipt.json"), "{}\n");
});
afterAll(async () => {
  if (work !== undefined) await rm(work, { recursive: true, force: true });
});

/** Run the CLI under the preload; `name` is sent the moment the first handler is installed. */
function interruptedAtStart(name: NodeJS.Signals, args: readonly string[]): Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string; marker: string }> {
  const child = spawn(process.execPath, ["-r", preload, CLI, ...args], { cwd: work, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, HERMES_PLUGIN_KIT_CODE_CACHE: "0" } });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
  child.stderr.setEncoding("utf8").on("data", (d: string) => {
    stderr += d;
    if (stderr.includes(MARKER) && !child.killed) child.kill(name);
  });
  const killer = setTimeout(() => child.kill("SIGKILL"), 30_000);
  return new Promise((resolve) =>
    child.on("close", (code, signal) => {
      clearTimeout(killer);
      const lines = stderr.split("\n");
      const marker = lines.find((l) => l.startsWith(MARKER)) ?? "";
      resolve({ code, signal, stdout, stderr: lines.filter((l) => !l.startsWith(MARKER)).join("\n"), marker });
    }),
  );
}

const STATUS = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 } as const;

for (const name of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
  it(`${name} before the bundle is compiled, verify-final-receipt --json: exit ${STATUS[name]}, one INTERRUPTED object on stdout, nothing on stderr`, async () => {
    const result = await interruptedAtStart(name, ["verify-final-receipt", "--receipt", "release-receipt.json", "--repository", "127.0.0.1:5000/acme/p", "--json"]);
    expect(result.marker).toBe(`${MARKER} before the bundle was read`);
    expect(result).toMatchObject({ code: STATUS[name], signal: null, stderr: "" });
    expect(result.stdout.endsWith("\n") && result.stdout.indexOf("\n") === result.stdout.length - 1).toBe(true);
    const answer = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(Object.keys(answer).sort()).toEqual(["code", "message", "ok"]);
    expect(answer).toMatchObject({ ok: false, code: "INTERRUPTED" });
    expect(answer["message"]).toMatch(new RegExp(`^verify-final-receipt interrupted \\(${name}\\) (during start-up, before it did anything|before it finished: it stopped where it was, without its result)`));
  });
}

it("SIGINT at start-up, text answer: the error line on stderr, nothing on stdout, exit 130", async () => {
  const result = await interruptedAtStart("SIGINT", ["verify-final-receipt", "--receipt", "release-receipt.json", "--repository", "127.0.0.1:5000/acme/p"]);
  expect(result).toMatchObject({ code: 130, signal: null, stdout: "" });
  expect(result.stderr).toMatch(/^hermes-plugin-kit: verify-final-receipt interrupted \(SIGINT\) (during start-up|before it finished)[^\n]* \[INTERRUPTED\]\n$/);
});

it("SIGINT at start-up of a release step (whose answer is always JSON) without --json: the object on stdout and the line on stderr", async () => {
  const result = await interruptedAtStart("SIGINT", ["release", "verify-manifest", "--manifest", "release-receipt.json", "--artifact-dir", "."]);
  expect(result).toMatchObject({ code: 130, signal: null });
  expect(JSON.parse(result.stdout)).toMatchObject({ ok: false, code: "INTERRUPTED", message: expect.stringMatching(/^release verify-manifest interrupted \(SIGINT\)/) });
  expect(result.stderr).toMatch(/^hermes-plugin-kit: release verify-manifest interrupted \(SIGINT\)[^\n]* \[INTERRUPTED\]\n$/);
});

it("SIGTERM at start-up of fetch --json (its own watch is not installed yet): exit 143, one INTERRUPTED object", async () => {
  const result = await interruptedAtStart("SIGTERM", ["fetch", "--reference", `oci-layout:${work}/store@sha256:${"a".repeat(64)}`, "--output-dir", "out", "--json"]);
  expect(result).toMatchObject({ code: 143, signal: null, stderr: "" });
  expect(JSON.parse(result.stdout)).toMatchObject({ ok: false, code: "INTERRUPTED", message: expect.stringMatching(/^fetch interrupted \(SIGTERM\)/) });
});
