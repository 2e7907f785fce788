/**
 * The flags a `release run` records when it starts and how a resume takes
 * them (release/run-flags.ts; docs/release-run.md, "Resuming"): a flag left
 * out takes the recorded value, a flag given with the recorded value is fine,
 * one given with another value is RUN_FLAG_MISMATCH naming both values and the
 * fix; a state without recorded flags resumes with the flags as given.
 */
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { recordRunFlags, resumeRunOptions, RunFlagsSchema, type RunFlags } from "../../release/run-flags.js";
import type { RunOptions } from "../../release/run-context.js";

const base: RunOptions = { source: "/src", workspace: "/ws" };
const STATE = "/ws/run-state.json";
const none: RunFlags = { plain_http: false, registry_config: null, pass_env: [], attest_key: null, chunk_size: null, mcp_sdk_version: null, github_release: false };
const all: RunFlags = { plain_http: true, registry_config: "/cfg/docker.json", pass_env: ["A_VAR", "B_VAR"], attest_key: "/keys/attest.pem", chunk_size: 1_048_576, mcp_sdk_version: "1.2.3", github_release: true };

describe("recordRunFlags", () => {
  it("records every flag that changes a resumed run: paths absolute, names sorted, never a file's contents", () => {
    const flags = recordRunFlags({ ...base, plainHttp: true, registryConfig: "rel/config.json", gatePassEnv: ["B_VAR", "A_VAR", "B_VAR"], attestKey: "k.pem", chunkSize: 65536, mcpSdkVersion: "1.0.0", githubRelease: true, credentials: { username: "u", password: "secret-pw" } });
    expect(flags).toEqual({ plain_http: true, registry_config: resolve("rel/config.json"), pass_env: ["A_VAR", "B_VAR"], attest_key: resolve("k.pem"), chunk_size: 65536, mcp_sdk_version: "1.0.0", github_release: true });
    expect(JSON.stringify(flags)).not.toContain("secret-pw");
    expect(RunFlagsSchema.parse(flags)).toEqual(flags);
  });

  it("records a run without flags as all off", () => {
    expect(recordRunFlags(base)).toEqual(none);
  });

  it("the schema is exact: an unknown key is refused", () => {
    expect(RunFlagsSchema.safeParse({ ...none, password: "x" }).success).toBe(false);
  });
});

describe("resumeRunOptions", () => {
  it("a fresh run (no state) and a state without recorded flags keep the options as given", () => {
    const given: RunOptions = { ...base, plainHttp: true, registryConfig: "/other.json" };
    expect(resumeRunOptions(given, undefined, STATE, {})).toBe(given);
    expect(resumeRunOptions(given, { run_attempt: 1 }, STATE, {})).toEqual(given);
    expect(resumeRunOptions(base, { run_attempt: 1 }, STATE, {})).toEqual(base);
  });

  it("a flag left out takes the recorded value (the CLI's false switches count as left out)", () => {
    const resumed = resumeRunOptions({ ...base, plainHttp: false, githubRelease: false }, { run_attempt: 1, flags: all }, STATE, {});
    expect(resumed).toMatchObject({ plainHttp: true, registryConfig: "/cfg/docker.json", gatePassEnv: ["A_VAR", "B_VAR"], attestKey: "/keys/attest.pem", chunkSize: 1_048_576, mcpSdkVersion: "1.2.3", githubRelease: true });
  });

  it("a flag repeated with the recorded value is accepted (pass-env in any order)", () => {
    const given: RunOptions = { ...base, plainHttp: true, registryConfig: "/cfg/docker.json", gatePassEnv: ["B_VAR", "A_VAR"], attestKey: "/keys/attest.pem", chunkSize: 1_048_576, mcpSdkVersion: "1.2.3", githubRelease: true, runAttempt: 1 };
    expect(resumeRunOptions(given, { run_attempt: 1, flags: all }, STATE, {})).toMatchObject({ plainHttp: true, registryConfig: "/cfg/docker.json" });
  });

  it("nothing recorded and nothing given: the options stay off", () => {
    expect(resumeRunOptions(base, { run_attempt: 1, flags: none }, STATE, {})).toEqual(base);
  });

  it.each<[string, RunOptions, RunFlags, RegExp]>([
    ["--plain-http given, recorded off", { ...base, plainHttp: true }, none, /--plain-http: recorded without --plain-http \(HTTPS\), given --plain-http.*leave out --plain-http/],
    ["--registry-config another path", { ...base, registryConfig: "/other/config.json" }, all, /--registry-config: recorded \/cfg\/docker\.json, given \/other\/config\.json.*--registry-config \/cfg\/docker\.json/],
    ["--registry-config given, recorded none", { ...base, registryConfig: "/other/config.json" }, none, /recorded no --registry-config .*given \/other\/config\.json.*leave out --registry-config/],
    ["--pass-env other names", { ...base, gatePassEnv: ["C_VAR"] }, all, /--pass-env: recorded --pass-env A_VAR B_VAR, given --pass-env C_VAR/],
    ["--chunk-size another size", { ...base, chunkSize: 65536 }, all, /--chunk-size: recorded 1048576, given 65536.*--chunk-size 1048576/],
    ["--mcp-sdk-version another version", { ...base, mcpSdkVersion: "9.9.9" }, all, /--mcp-sdk-version: recorded 1\.2\.3, given 9\.9\.9/],
    ["--github-release given, recorded off", { ...base, githubRelease: true }, none, /--github-release: recorded without --github-release/],
    ["--run-attempt another attempt", { ...base, runAttempt: 2 }, all, /--run-attempt: recorded 1, given 2.*--run-attempt 1/],
  ])("%s is RUN_FLAG_MISMATCH naming both values, the state file and the fix", (_label, given, flags, message) => {
    const run = () => resumeRunOptions(given, { run_attempt: 1, flags }, STATE, {});
    expect(run).toThrowWithCode("RUN_FLAG_MISMATCH");
    expect(run).toThrow(message);
    expect(run).toThrow(/recorded in \/ws\/run-state\.json.*fix: repeat the original flags or leave them out .*or start a fresh run with a new --workspace/);
  });

  it("names every disagreeing flag in one refusal", () => {
    const run = () => resumeRunOptions({ ...base, registryConfig: "/x.json", chunkSize: 65536 }, { run_attempt: 1, flags: all }, STATE, {});
    expect(run).toThrowWithCode("RUN_FLAG_MISMATCH");
    expect(run).toThrow(/--registry-config: .*; --chunk-size: /);
  });

  it("an attestation key file given on resume replaces the recorded path (its key checks govern it); the variable counts only for a run that attested", () => {
    expect(resumeRunOptions({ ...base, attestKey: "/keys/moved.pem" }, { run_attempt: 1, flags: all }, STATE, {}).attestKey).toBe("/keys/moved.pem");
    expect(resumeRunOptions({ ...base, attestKey: "/keys/new.pem" }, { run_attempt: 1, flags: none }, STATE, {}).attestKey).toBe("/keys/new.pem");
    const env = { HERMES_PLUGIN_KIT_ATTEST_KEY_FILE: "/keys/mounted.pem" };
    expect(resumeRunOptions(base, { run_attempt: 1, flags: all }, STATE, env).attestKey).toBe("/keys/mounted.pem");
    expect(resumeRunOptions(base, { run_attempt: 1, flags: all }, STATE, {}).attestKey).toBe("/keys/attest.pem");
    expect(resumeRunOptions(base, { run_attempt: 1, flags: none }, STATE, env).attestKey).toBeUndefined();
  });
});
