/**
 * The output convention the README states, checked on every command through
 * the real CLI (the commander tree is walked, so a new command is checked too):
 *
 * - `release <step>` (every step but `demo`) always prints exactly one JSON
 *   object on stdout, failures included (`{"ok": false, "code", "message"}`);
 * - every other command prints text on stdout, and nothing there on failure;
 * - a failure (exit 1) is one line `hermes-plugin-kit: <message> [<CODE>]` on
 *   stderr, unless `--json` was given: then the one JSON object on stdout is
 *   the whole answer and stderr stays empty.
 *
 * Each command runs in an empty directory with placeholder values for its
 * required arguments, which name nothing that exists, so it fails before it
 * writes anything (a few get one flag more so that they fail early: see FAIL_FAST).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli } from "../support/cli.js";
import type { Command } from "commander";
import { leafCommands } from "../support/cli-tree.js";

/** Flags that make a command fail at once in an empty directory instead of doing real work. */
const FAIL_FAST: Record<string, string[]> = {
  "release demo": ["--package", "missing-package"],
  "release run": ["--source", "missing-source"],
  // init would scaffold into the placeholder directory; a name it refuses stops it before any write.
  init: ["--name", "Not A Package Name"],
};

/** Commands whose stdout is always one JSON object (the release steps workflows parse). */
const alwaysJson = (path: string[]) => path[0] === "release" && path[1] !== "demo";


function failingArgs(path: string[], command: Command): string[] {
  const args = command.registeredArguments.filter((a) => a.required).map(() => "missing-input");
  const options = command.options.filter((o) => o.mandatory).flatMap((o) => [o.long as string, o.argChoices?.[0] ?? "missing-input"]);
  return [...path, ...args, ...options, ...(FAIL_FAST[path.join(" ")] ?? [])];
}

/** `hermes-plugin-kit: <message>`, with ` [<CODE>]` unless it is a usage error. */
const ERROR_LINE = /^hermes-plugin-kit: .+\n$/;

let cwd: string;
beforeAll(async () => {
  cwd = await mkdtemp(join(tmpdir(), "hpk-output-convention-"));
});
afterAll(async () => {
  await rm(cwd, { recursive: true, force: true });
});

const env = { SEMANTIC_RELEASE_ENABLED: "true", GH_TOKEN: undefined, GITHUB_TOKEN: undefined, REGISTRY_USERNAME: undefined, REGISTRY_PASSWORD: undefined, REGISTRY_TOKEN: undefined };

describe("output convention of every command", () => {
  it.each(leafCommands().map((l) => [l.path.join(" "), l] as const))("%s", async (_name, { path, command }) => {
    const args = failingArgs(path, command);
    const plain = await runCli(args, { cwd, env, timeoutMs: 60_000 });
    expect([1, 2], `${args.join(" ")}\n${plain.stderr}`).toContain(plain.code);
    // Progress lines may come first (release demo); the error is the one last line.
    const errLines = plain.stderr.trimEnd().split("\n");
    expect(`${errLines.at(-1)}\n`, "the error line ends stderr").toMatch(ERROR_LINE);
    expect(errLines.filter((l) => l.startsWith("hermes-plugin-kit:")), "exactly one error line").toHaveLength(1);
    if (alwaysJson(path)) {
      expect(plain.stdout.split("\n")).toHaveLength(2);
      expect(JSON.parse(plain.stdout)).toMatchObject({ ok: false, code: expect.stringMatching(/^[A-Z][A-Z0-9_]+$/), message: expect.any(String) });
      const code = (JSON.parse(plain.stdout) as { code: string }).code;
      // The error line names the code, except a usage error's (exit 2), which needs none.
      if (code === "USAGE") expect(plain.code).toBe(2);
      else expect(plain.stderr).toContain(`[${code}]`);
    } else {
      expect(plain.stdout, "a text command prints nothing on stdout when it fails").toBe("");
    }

    const json = await runCli([...args, "--json"], { cwd, env, timeoutMs: 60_000 });
    expect(json.code).toBe(plain.code);
    expect(json.stderr.split("\n").filter((l) => l.startsWith("hermes-plugin-kit:")), "with --json the JSON object is the whole answer").toEqual([]);
    expect(json.stdout.split("\n")).toHaveLength(2);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, code: expect.stringMatching(/^[A-Z][A-Z0-9_]+$/) });
    // Failing early wrote nothing.
    expect(await readdir(cwd)).toEqual([]);
  }, 130_000);
});

describe("a report is an answer, not an error", () => {
  it("plugin doctor on a package with findings: the report on stdout, exit 1, nothing on stderr", async () => {
    const empty = await mkdtemp(join(tmpdir(), "hpk-doctor-empty-"));
    // An unbuilt plugin project (a plugin directory without plugin.json): a report with findings.
    await writeFile(join(empty, "package.json"), '{"name":"unbuilt","hermesPluginKit":{}}');
    try {
      const text = await runCli(["plugin", "doctor", empty, "--no-call"], { env });
      expect(text.code).toBe(1);
      expect(text.stderr).toBe("");
      expect(text.stdout).toContain("ERROR [PLUGIN_JSON_MISSING]");
      const json = await runCli(["plugin", "doctor", empty, "--no-call", "--json"], { env });
      expect(json.code).toBe(1);
      expect(json.stderr).toBe("");
      expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, findings: expect.arrayContaining([expect.objectContaining({ rule: "PLUGIN_JSON_MISSING", severity: "error" })]) });
    } finally {
      await rm(empty, { recursive: true, force: true });
    }
  });
});

describe("release run with a source that is not there", () => {
  it("fails with RUN_SOURCE_INVALID before it creates the workspace", async () => {
    const r = await runCli(["release", "run", "--workspace", "ws", "--source", "no-such-checkout"], { cwd, env });
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, code: "RUN_SOURCE_INVALID" });
    expect(r.stderr).toMatch(/^hermes-plugin-kit: the source checkout .*no-such-checkout is not a directory: pass --source .* \[RUN_SOURCE_INVALID\]\n$/);
    expect(await readdir(cwd)).toEqual([]);
  });
  it("a directory that is no git checkout: RUN_SOURCE_INVALID saying so, with the fix (it said 'HEAD of <dir> does not resolve to a commit')", async () => {
    const plain = await mkdtemp(join(tmpdir(), "hpk-not-git-"));
    try {
      const r = await runCli(["release", "run", "--workspace", join(cwd, "ws"), "--source", plain], { cwd, env });
      expect(r.code).toBe(1);
      expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, code: "RUN_SOURCE_INVALID" });
      expect(r.stderr).toBe(
        `hermes-plugin-kit: the source ${plain} is not a git checkout: run it in your plugin's repository (or pass --source <checkout>), or make this directory one: git init -b main && git add -A && git commit -m "chore: initial commit" [RUN_SOURCE_INVALID]\n`,
      );
      expect(await readdir(cwd)).toEqual([]);
    } finally {
      await rm(plain, { recursive: true, force: true });
    }
  });
});
