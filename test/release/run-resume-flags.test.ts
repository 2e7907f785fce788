/**
 * `release run` records the flags that change what a resumed run does
 * (release/run-flags.ts; docs/release-run.md, "Resuming") and a resume uses
 * them without the user repeating them: the real pipeline over the fixture
 * package, stopped after `restore`, interrupted after `gates`, resumed with no
 * flags at all. A flag given with another value is RUN_FLAG_MISMATCH (real run
 * and dry run) and changes nothing; a run state written before flags were
 * recorded still resumes, with the flags as given.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseStrictJson } from "../../src/contract/canonical-json.js";
import { dryRunRelease } from "../../release/dry-run.js";
import { runRelease, type RunOptions, type RunResult } from "../../release/run.js";
import { createRunFixture, type RunFixture } from "../support/release-run-fixture.js";

let rf: RunFixture;
let scratch: string;
let probe: string;
let registryConfig: string;
const env = { ...process.env, SEMANTIC_RELEASE_ENABLED: "true" };
/** A Docker client config whose auth must never reach the run state (user "u", password "s3cret-in-config"). */
const AUTH = Buffer.from("u:s3cret-in-config").toString("base64");

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "hpk-resume-flags-"));
  probe = join(scratch, "probe");
  registryConfig = join(scratch, "docker-config.json");
  await writeFile(registryConfig, JSON.stringify({ auths: { "registry.example.invalid": { auth: AUTH } } }), { mode: 0o600 });
  // The install command records what it sees of RESUME_PROBE: passed only through --pass-env.
  rf = await createRunFixture("resume-flags-plugin", undefined, undefined, `printf '%s' "\${RESUME_PROBE-unset}" > ${JSON.stringify(probe)}; `);
});

afterAll(async () => {
  await rf.cleanup();
  await rm(scratch, { recursive: true, force: true });
});

const statePath = () => join(rf.workspace, "run-state.json");
const options = (extra: Partial<RunOptions> = {}): RunOptions => ({ source: rf.repo.dir, workspace: rf.workspace, env, progress: null, ...extra });

describe("release run: the flags of a resumed run", () => {
  it("records --plain-http, --registry-config (its path only), --pass-env when the run starts", async () => {
    const stopped = await runRelease(
      options({
        runId: "77",
        plainHttp: true,
        registryConfig,
        gatePassEnv: ["RESUME_PROBE"],
        env: { ...env, RESUME_PROBE: "first" },
        hooks: {
          checkpoint: (point) => {
            if (point === "restore:recorded") throw new Error("stopped by the test after restore");
          },
        },
      }),
    ).catch((e: unknown) => e);
    expect((stopped as Error).message).toBe("stopped by the test after restore");
    const bytes = await readFile(statePath(), "utf8");
    const state = parseStrictJson(Buffer.from(bytes)) as Record<string, unknown>;
    expect(state["flags"]).toEqual({ plain_http: true, registry_config: registryConfig, pass_env: ["RESUME_PROBE"], attest_key: null, chunk_size: null, mcp_sdk_version: null, github_release: false });
    expect(Object.keys(state["steps"] as object)).toEqual(["intent", "materialize", "restore"]);
    // The config's path, never its contents or the credential in it.
    expect(bytes).not.toContain(AUTH);
    expect(bytes).not.toContain("s3cret-in-config");
  });

  it.each<[string, Partial<RunOptions>, RegExp]>([
    ["another --registry-config", { registryConfig: "/elsewhere/config.json" }, /--registry-config: recorded .*docker-config\.json, given \/elsewhere\/config\.json/],
    ["another --pass-env", { gatePassEnv: ["OTHER_PROBE"] }, /--pass-env: recorded --pass-env RESUME_PROBE, given --pass-env OTHER_PROBE/],
    ["--github-release the run started without", { githubRelease: true }, /--github-release: recorded without --github-release/],
    ["another --run-attempt", { runAttempt: 3 }, /--run-attempt: recorded 1, given 3/],
  ])("a resume with %s is refused (RUN_FLAG_MISMATCH) before anything changes", async (_label, extra, message) => {
    const before = await readFile(statePath());
    for (const attempt of [() => runRelease(options(extra)), () => dryRunRelease(options(extra))]) {
      const error = await attempt().catch((e: unknown) => e);
      expect(error).toThrowWithCode("RUN_FLAG_MISMATCH");
      expect((error as Error).message).toMatch(message);
      expect((error as Error).message).toMatch(/fix: repeat the original flags or leave them out .*or start a fresh run with a new --workspace/);
    }
    expect((await readFile(statePath())).equals(before)).toBe(true);
    expect(existsSync(join(rf.workspace, "run.lock"))).toBe(false);
  });

  it("a resume without the flags uses the recorded ones: the install command gets the --pass-env variable, the resume hint repeats them", async () => {
    const controller = new AbortController();
    // As the CLI passes them when the switches are left out: false.
    const error = await runRelease(
      options({
        plainHttp: false,
        githubRelease: false,
        env: { ...env, RESUME_PROBE: "second" },
        signal: controller.signal,
        hooks: { checkpoint: (point) => void (point === "gates:recorded" ? controller.abort() : undefined) },
      }),
    ).catch((e: unknown) => e);
    expect(error).toThrowWithCode("INTERRUPTED");
    expect(await readFile(probe, "utf8")).toBe("second");
    const hint = (error as Error).message;
    expect(hint).toContain("--plain-http");
    expect(hint).toContain(`--registry-config ${registryConfig}`);
    expect(hint).toContain("--pass-env RESUME_PROBE");
    expect(hint).not.toContain("s3cret-in-config");
  });

  it("a resume repeating a recorded flag and leaving out the rest finishes the release with the recorded flags", async () => {
    const result = (await runRelease(options({ plainHttp: true }))) as Extract<RunResult, { released: true }>;
    expect(result.released).toBe(true);
    // --plain-http reached the run although only the first run gave it with the rest: the next steps carry it.
    expect(result.next_steps.join("\n")).toContain("--plain-http");
    expect((parseStrictJson(await readFile(statePath())) as Record<string, unknown>)["flags"]).toMatchObject({ plain_http: true, registry_config: registryConfig, pass_env: ["RESUME_PROBE"] });
  });

  it("a run state written before flags were recorded still resumes, with the flags as given, and is not rewritten", async () => {
    const state = parseStrictJson(await readFile(statePath())) as Record<string, unknown>;
    delete state["flags"];
    const legacy = JSON.stringify(state);
    await writeFile(statePath(), legacy);
    const plain = (await runRelease(options())) as Extract<RunResult, { released: true }>;
    expect(plain.released).toBe(true);
    expect(plain.steps.filter((s) => s.status !== "skipped").every((s) => s.status === "verified")).toBe(true);
    expect(plain.next_steps.join("\n")).not.toContain("--plain-http");
    // Nothing recorded to disagree with: another --registry-config is taken as given.
    const given = (await runRelease(options({ plainHttp: true, registryConfig: "/elsewhere/config.json" }))) as Extract<RunResult, { released: true }>;
    expect(given.next_steps.join("\n")).toContain("--plain-http");
    expect({ ...given, steps: [], next_steps: [] }).toEqual({ ...plain, steps: [], next_steps: [] });
    expect(await readFile(statePath(), "utf8")).toBe(legacy);
  });
});
