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
 *
 * Node's own shutdown (an empty event loop) closes the signal handles first, which gives the signals back
 * their default (killing) behaviour, and then tears down for tens of milliseconds: a signal landing there
 * killed a process that had printed its success (the `fetch ... --json` of a user: `{"ok":true,...}`,
 * every file installed, exit 130). The tests below signal the child as soon as its `exit` event says it is
 * shutting down (before the fix: 39 of 40 such runs died by SIGINT). The real CLI is run the same way,
 * fetching from an `oci-layout:` store, with a preloaded module (`node -r`) that prints the marker.
 */
import { spawn } from "node:child_process";
import { chmod, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LayoutTarget } from "../../src/oci/layout-target.js";
import { CLI } from "../support/cli.js";
import { createReleaseFixture, stageFixture, type ReleaseFixture } from "../support/release-fixture.js";

const cliDir = dirname(CLI);
const url = (file: string) => JSON.stringify(pathToFileURL(join(cliDir, file)).href);

type Outcome = { code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string };

function run(script: string, onStdout?: (text: string, kill: (signal: NodeJS.Signals) => void) => void): Promise<Outcome> {
  return runNode(["--input-type=module", "-e", script], onStdout);
}

function runNode(args: readonly string[], onStdout?: (text: string, kill: (signal: NodeJS.Signals) => void) => void, env?: NodeJS.ProcessEnv): Promise<Outcome> {
  const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"], ...(env === undefined ? {} : { env }) });
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

describe("one signal delivered twice (GNU timeout signals the process, then its process group) is one signal", () => {
  // The action removes what it made on abort (it takes 200 ms, as a temp directory's removal may) and only then
  // rejects; a second signal would exit at once, before the cleanup and without the answer.
  const script = (gapMs: number) => `
    const { withInterrupts } = await import(${url("interrupt.js")});
    const { runAction, printLine } = await import(${url("output.js")});
    process.exitCode = await withInterrupts("fetch", (signal) => runAction(true, async () => {
      // Delivered twice: once the first SIGINT is handled, the same signal comes again a moment later
      // (as GNU timeout's kill of the process group follows its kill of the process).
      if (${gapMs} >= 0) process.once("SIGINT", () => setImmediate(() => process.kill(process.pid, "SIGINT")));
      process.stdout.write("ready\\n");
      const busy = setInterval(() => {}, 1000);
      await new Promise((_, reject) => signal.addEventListener("abort", () => setTimeout(() => { process.stdout.write("cleaned\\n"); reject(signal.reason); }, 200))).finally(() => clearInterval(busy));
    }));
  `;
  it("the same SIGINT again a moment after the first was handled: the cleanup runs and the one JSON answer is printed, exit 130", async () => {
    const result = await run(script(0), (text, kill) => {
      if (text === "ready\n") kill("SIGINT");
    });
    expect(result).toMatchObject({ code: 130, signal: null });
    const lines = result.stdout.split("\n").filter((line) => line !== "");
    expect(lines.slice(0, 2)).toEqual(["ready", "cleaned"]);
    expect(JSON.parse(lines[2] as string)).toMatchObject({ ok: false, code: "INTERRUPTED" });
    expect(lines).toHaveLength(3);
  });
  /** Press Ctrl-C on "ready", and again 700 ms later (a second press, not a duplicate delivery). */
  const pressTwice = () => {
    let sent = false;
    return (text: string, kill: (signal: NodeJS.Signals) => void) => {
      if (text === "ready\n" && !sent) {
        sent = true;
        kill("SIGINT");
        setTimeout(() => kill("SIGINT"), 700);
      }
    };
  };
  /** The run's watch as `runCli` installs it, answering as the command line says (`--json`: one JSON object only). */
  const withRunWatch = (text: string, json: boolean) =>
    text.replace("process.exitCode = await withInterrupts", `(await import(${url("interrupt.js")})).watchRunInterrupts({ what: "fetch", json: ${json}, only: ${json}, started: true });\n    process.exitCode = await withInterrupts`);
  const CUT = "fetch interrupted (SIGINT), and SIGINT came before it had finished stopping: it exited at once, before its cleanup finished, killing (SIGKILL) any command it had started that still ran; temporary files it made (hpk-* under TMPDIR) may be left, and what it was doing did not finish (run it again; remove the leftovers once no hermes-plugin-kit command runs)";

  it("--json, a second SIGINT a press later (over 500 ms): exits 130 at once (no cleanup line) with exactly one INTERRUPTED object on stdout, saying the cleanup did not finish", async () => {
    const result = await run(withRunWatch(script(-1).replace("200))", "3000))"), true), pressTwice());
    expect(result).toMatchObject({ code: 130, signal: null });
    const lines = result.stdout.split("\n").filter((line) => line !== "");
    expect(lines[0]).toBe("ready");
    expect(lines).toHaveLength(2);
    expect(JSON.parse(lines[1] as string)).toEqual({ ok: false, code: "INTERRUPTED", message: CUT });
    expect(result.stderr).toBe("");
  });

  it("a text answer, a second SIGINT a press later: exits 130 at once with the error line on stderr, nothing more on stdout", async () => {
    const result = await run(withRunWatch(script(-1).replace("200))", "3000))"), false), pressTwice());
    expect(result).toMatchObject({ code: 130, signal: null });
    expect(result.stdout).toBe("ready\n");
    expect(result.stderr).toBe(`hermes-plugin-kit: ${CUT} [INTERRUPTED]\n`);
  });

  it("--json, a second SIGINT after the command's answer began on stdout: that answer stands alone (no second object)", async () => {
    const begun = `
      const { withInterrupts, watchRunInterrupts } = await import(${url("interrupt.js")});
      const { printJson } = await import(${url("output.js")});
      watchRunInterrupts({ what: "fetch", json: true, only: true, started: true });
      process.exitCode = await withInterrupts("fetch", async (signal) => {
        printJson({ ok: false, code: "SOMETHING", message: "the answer" });
        process.stderr.write("ready\\n");
        const busy = setInterval(() => {}, 1000);
        await new Promise(() => {});
        return 1;
      });
    `;
    let sent = false;
    const result = await run(begun, (text, kill) => {
      if (!sent && text.includes("the answer")) {
        sent = true;
        setTimeout(() => kill("SIGINT"), 100);
        setTimeout(() => kill("SIGINT"), 800);
      }
    });
    expect(result).toMatchObject({ code: 130, signal: null });
    expect(result.stdout).toBe('{"ok":false,"code":"SOMETHING","message":"the answer"}\n');
  });
});

it("--json, work that has not stopped 10 s after the first SIGINT (GRACE_MS): exits 130 with exactly one INTERRUPTED object on stdout", async () => {
  const script = `
    const { withInterrupts, watchRunInterrupts } = await import(${url("interrupt.js")});
    const { runAction } = await import(${url("output.js")});
    watchRunInterrupts({ what: "fetch", json: true, only: true, started: true });
    process.exitCode = await withInterrupts("fetch", () => runAction(true, async () => {
      process.stdout.write("ready\\n");
      // Cleanup that never ends (a removal stuck on a dead mount): the abort is not answered.
      const busy = setInterval(() => {}, 1000);
      await new Promise(() => {});
    }));
  `;
  const started = Date.now();
  const result = await run(script, (text, kill) => {
    if (text === "ready\n") kill("SIGINT");
  });
  expect(Date.now() - started).toBeGreaterThanOrEqual(10_000);
  expect(result).toMatchObject({ code: 130, signal: null });
  const lines = result.stdout.split("\n").filter((line) => line !== "");
  expect(lines).toHaveLength(2);
  expect(JSON.parse(lines[1] as string)).toEqual({
    ok: false,
    code: "INTERRUPTED",
    message:
      "fetch interrupted (SIGINT), and it had not finished stopping after 10 s: it exited at once, before its cleanup finished, killing (SIGKILL) any command it had started that still ran; temporary files it made (hpk-* under TMPDIR) may be left, and what it was doing did not finish (run it again; remove the leftovers once no hermes-plugin-kit command runs)",
  });
  expect(result.stderr).toBe("");
}, 40_000);

/** The marker a child prints (synchronously) from its `exit` event: from here on Node shuts down. */
const EXITING = "<exiting>\n";
/** On the marker, signal the child at once (the marker is the last thing it writes). */
const signalOnExit = (name: NodeJS.Signals) => (text: string, kill: (signal: NodeJS.Signals) => void) => {
  if (text.endsWith(EXITING)) kill(name);
};

for (const name of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
  it(`${name} landing while Node shuts down after a committed result (its signal handles closed by a natural exit): exit 0, output kept`, async () => {
    const script = `
      const { writeSync } = await import("node:fs");
      const { withInterrupts } = await import(${url("interrupt.js")});
      const { runAction, printLine } = await import(${url("output.js")});
      process.on("exit", () => writeSync(1, ${JSON.stringify(EXITING)}));
      process.exitCode = await withInterrupts("fetch", () => runAction(false, async () => { printLine("verified and installed bundle 0.3.0"); }));
    `;
    for (let round = 0; round < 5; round += 1) {
      const result = await run(script, signalOnExit(name));
      expect(result).toMatchObject({ code: 0, signal: null, stderr: "" });
      expect(result.stdout).toBe(`verified and installed bundle 0.3.0\n${EXITING}`);
    }
  });
}

it("two signals after the commit, before the result is printed: neither stops it, the success is printed, exit 0", async () => {
  const script = `
    const { withInterrupts } = await import(${url("interrupt.js")});
    const { runAction, printLine } = await import(${url("output.js")});
    process.exitCode = await withInterrupts("fetch", (signal, commit) => runAction(false, async () => {
      commit();
      process.kill(process.pid, "SIGINT");
      await new Promise((resolve) => setTimeout(resolve, 100));
      process.kill(process.pid, "SIGTERM");
      await new Promise((resolve) => setTimeout(resolve, 100));
      if (signal.aborted) throw new Error("aborted after the commit");
      printLine("verified and installed bundle 0.3.0");
    }));
  `;
  const result = await run(script);
  expect(result).toMatchObject({ code: 0, signal: null, stderr: "" });
  expect(result.stdout).toBe("verified and installed bundle 0.3.0\n");
});

it("a success whose caller then sets exit 1 (stdout refused the answer) keeps exit 1 when a signal lands during the shutdown", async () => {
  const script = `
    const { writeSync } = await import("node:fs");
    const { withInterrupts } = await import(${url("interrupt.js")});
    process.on("exit", () => writeSync(1, ${JSON.stringify(EXITING)}));
    const code = await withInterrupts("fetch", async () => 0);
    process.exitCode = code === 0 ? 1 : code;
  `;
  const result = await run(script, signalOnExit("SIGINT"));
  expect(result).toMatchObject({ code: 1, signal: null, stdout: EXITING });
});

describe("the built CLI: fetch --json from an oci-layout store, signalled while it shuts down after printing", () => {
  let work: string;
  let fixture: ReleaseFixture;
  let reference: string;
  let preload: string;

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), "hpk-commit-exit-"));
    const store = join(work, "store");
    const repository = `oci-layout:${store}`;
    fixture = await createReleaseFixture({ registryRepository: repository });
    const staged = await stageFixture(fixture, await LayoutTarget.open(store, { create: true }), repository);
    await chmod(store, 0o700);
    reference = `${repository}@${staged.bundle.digest}`;
    preload = join(work, "exit-marker.cjs");
    await writeFile(preload, `process.on("exit", () => require("node:fs").writeSync(1, ${JSON.stringify(EXITING)}));\n`);
  }, 120_000);
  afterAll(async () => {
    await fixture?.cleanup();
    if (work !== undefined) await rm(work, { recursive: true, force: true });
  });

  for (const name of ["SIGINT", "SIGTERM"] as const) {
    it(`${name}: exit 0, one {"ok":true} object on stdout, every file installed`, async () => {
      for (let round = 0; round < 3; round += 1) {
        const out = join(work, `out-${name}-${round}`);
        const result = await runNode(["-r", preload, CLI, "fetch", "--reference", reference, "--output-dir", out, "--json"], signalOnExit(name), { ...process.env, HERMES_PLUGIN_KIT_CODE_CACHE: "0" });
        expect(result).toMatchObject({ code: 0, signal: null, stderr: "" });
        expect(result.stdout.endsWith(EXITING)).toBe(true);
        const answer = JSON.parse(result.stdout.slice(0, -EXITING.length)) as { ok: boolean; files: { path: string }[] };
        expect(answer.ok).toBe(true);
        const installed = (await readdir(out, { recursive: true, withFileTypes: true })).filter((e) => e.isFile()).length;
        expect(installed).toBe(answer.files.length);
      }
    }, 120_000);
  }
});
