/**
 * The exit status of a command that a signal reaches (src/cli/interrupt.ts `withInterrupts`), with the
 * signal's timing under the test's control: a child process runs the built `withInterrupts`
 * (dist/src/cli/interrupt.js, `npm run build` first) around an action that stands for `fetch`.
 *
 * Rule: once the action has returned (the install committed, its output printed), the result is the
 * command's: a SIGINT/SIGTERM landing while the process shuts down exits 0, never 130/143 (before the fix
 * the handlers were removed first and the default behaviour killed the process with SIGINT: "verified and
 * installed" on stdout, status 130). A signal before the commit stops the action: 130/143, `INTERRUPTED`,
 * no success line.
 */
import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { expect, it } from "vitest";
import { CLI } from "../support/cli.js";

const cliDir = dirname(CLI);
const url = (file: string) => JSON.stringify(pathToFileURL(join(cliDir, file)).href);

function run(script: string, onStdout?: (text: string, kill: (signal: NodeJS.Signals) => void) => void): Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => {
    stdout += d;
    onStdout?.(stdout, (signal) => child.kill(signal));
  });
  child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  const killer = setTimeout(() => child.kill("SIGKILL"), 30_000);
  return new Promise((resolve) =>
    child.on("close", (code, signal) => {
      clearTimeout(killer);
      resolve({ code, signal, stdout, stderr });
    }),
  );
}

for (const name of ["SIGINT", "SIGTERM"] as const) {
  it(`${name} landing after the committed fetch returned (while the process shuts down): exit 0, output kept`, async () => {
    // The action commits and prints; the signal is raised right after withInterrupts returned, and the
    // process stays alive a moment longer (as when stdout is still draining), so it surely lands.
    const script = `
      const { withInterrupts } = await import(${url("interrupt.js")});
      const { runAction, printLine } = await import(${url("output.js")});
      process.exitCode = await withInterrupts("fetch", () => runAction(false, async () => { printLine("verified and installed bundle 0.3.0"); }));
      process.kill(process.pid, ${JSON.stringify(name)});
      setTimeout(() => {}, 300);
    `;
    const result = await run(script);
    expect(result).toMatchObject({ code: 0, signal: null });
    expect(result.stdout).toBe("verified and installed bundle 0.3.0\n");
    expect(result.stderr).toBe("");
  });

  it(`${name} before the commit: the action is stopped, exit ${name === "SIGINT" ? 130 : 143} with INTERRUPTED and no success line`, async () => {
    const script = `
      const { withInterrupts } = await import(${url("interrupt.js")});
      const { runAction, printLine } = await import(${url("output.js")});
      process.exitCode = await withInterrupts("fetch", (signal) => runAction(false, async () => {
        process.stdout.write("ready\\n");
        // Work under way (a transfer holds the event loop open) until the signal aborts it.
        const busy = setInterval(() => {}, 1000);
        await new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason))).finally(() => clearInterval(busy));
        printLine("verified and installed bundle 0.3.0");
      }));
    `;
    const result = await run(script, (text, kill) => {
      if (text === "ready\n") kill(name);
    });
    expect(result).toMatchObject({ code: name === "SIGINT" ? 130 : 143, signal: null });
    expect(result.stdout).toBe("ready\n");
    expect(result.stderr).toMatch(new RegExp(`fetch interrupted \\(${name}\\).*\\[INTERRUPTED\\]\\n$`));
  });
}
