/**
 * .github/workflows/{test,release}.yml: parsed with the `yaml` package and
 * checked for the invariants of reference section 6 and the "removed from
 * newest" regression ideas of section 7; then selected steps are run for real
 * under bash exactly as Actions runs them (`bash --noprofile --norc -eo
 * pipefail`), with `npx` resolving to the built CLI and the GitHub API
 * emulator behind it (scenarios 9, 22-25).
 */
import { spawn } from "node:child_process";
import { chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Command } from "commander";
import YAML from "yaml";
import { CLI } from "../support/cli.js";
import { LayoutTarget } from "../../src/oci/layout-target.js";
import { fixtureFacts, makeTestKey, pushAttestation } from "../support/provenance-fixture.js";
import { createReleaseFixture, stageFixture, type ReleaseFixture } from "../support/release-fixture.js";
import { startGitHubEmulator, type GitHubEmulator } from "../support/github-emulator.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
type Step = { id?: string; name?: string; uses?: string; run?: string; env?: Record<string, string>; with?: Record<string, unknown>; if?: string; shell?: string };
type Job = {
  needs?: string | string[];
  if?: string;
  environment?: string | { name: string };
  permissions?: Record<string, string> | string;
  env?: Record<string, string>;
  steps: Step[];
  outputs?: Record<string, string>;
};
type Workflow = { name: string; on: Record<string, unknown>; permissions: unknown; jobs: Record<string, Job>; env?: Record<string, string>; concurrency?: unknown; defaults?: unknown };

async function load(name: string): Promise<{ text: string; doc: Workflow }> {
  const text = await readFile(join(ROOT, ".github/workflows", name), "utf8");
  // uniqueKeys (default true) refuses duplicate keys.
  const doc = YAML.parse(text, { uniqueKeys: true, strict: true }) as Workflow;
  return { text, doc };
}

const needsOf = (job: Job): string[] => (job.needs === undefined ? [] : Array.isArray(job.needs) ? job.needs : [job.needs]);

function ancestors(jobs: Record<string, Job>, name: string, seen = new Set<string>()): Set<string> {
  for (const parent of needsOf(jobs[name]!)) {
    if (!seen.has(parent)) {
      seen.add(parent);
      ancestors(jobs, parent, seen);
    }
  }
  return seen;
}

let release: { text: string; doc: Workflow };
let test: { text: string; doc: Workflow };

beforeAll(async () => {
  release = await load("release.yml");
  test = await load("test.yml");
});

describe("both workflows", () => {
  it.each(["release.yml", "test.yml"])("%s: read-only top-level permissions, no pull_request_target, pinned actions, no credential persistence", async (name) => {
    const { text, doc } = name === "release.yml" ? release : test;
    expect(doc.permissions).toEqual({ contents: "read" });
    expect(Object.keys(doc.on)).not.toContain("pull_request_target");
    expect(text).not.toContain("pull_request_target");
    // Every uses: line is pinned to a 40-hex commit with a version comment.
    const usesLines = text.split("\n").filter((line) => /^\s*(-\s+)?uses:/.test(line));
    expect(usesLines.length).toBeGreaterThan(0);
    for (const line of usesLines) {
      expect(line).toMatch(/uses:\s+[A-Za-z0-9_.-]+\/[A-Za-z0-9_./-]+@[0-9a-f]{40}\s+#\s+v\d+(\.\d+)*\s*$/);
    }
    // Same action, same pin everywhere.
    const pins = new Map<string, Set<string>>();
    for (const line of usesLines) {
      const [, action, sha] = /uses:\s+([^@\s]+)@([0-9a-f]{40})/.exec(line)!;
      (pins.get(action!) ?? pins.set(action!, new Set()).get(action!)!).add(sha!);
    }
    for (const shas of pins.values()) expect(shas.size).toBe(1);
    // Every checkout step sets persist-credentials: false (counts agree in the text too).
    const steps = Object.values(doc.jobs).flatMap((job) => job.steps);
    const checkouts = steps.filter((step) => step.uses?.startsWith("actions/checkout@"));
    expect(checkouts.length).toBeGreaterThan(0);
    for (const step of checkouts) expect(step.with?.["persist-credentials"]).toBe(false);
    expect((text.match(/persist-credentials: false/g) ?? []).length).toBe((text.match(/uses: actions\/checkout@/g) ?? []).length);
    // Run scripts never interpolate expressions (script injection): values go through env.
    for (const step of steps) if (step.run !== undefined) expect(step.run).not.toContain("${{");
    // No Makefile-era commands, no secrets at workflow or job level.
    expect(text).not.toMatch(/\bmake\s/);
    expect(JSON.stringify(doc.env ?? {})).not.toContain("secrets.");
    for (const job of Object.values(doc.jobs)) expect(JSON.stringify(job.env ?? {})).not.toContain("secrets.");
    for (const step of steps) expect(JSON.stringify(step.with ?? {})).not.toContain("secrets.");
  });
});

describe("test.yml", () => {
  it("runs the .ci/run lanes read-only on push and pull_request", () => {
    const { doc } = test;
    expect(Object.keys(doc.on).sort()).toEqual(["pull_request", "push", "workflow_dispatch"]);
    expect(test.text).not.toContain("secrets.");
    for (const job of Object.values(doc.jobs)) {
      expect(job.permissions === undefined || JSON.stringify(job.permissions) === JSON.stringify({ contents: "read" })).toBe(true);
      expect(job.environment).toBeUndefined();
    }
    const runs = Object.values(doc.jobs).flatMap((job) => job.steps.map((step) => step.run ?? ""));
    for (const recipe of ["npx just test", "npx just test-release", "npx just test-contract", "npx just build", "npx just check-dist"]) {
      expect(runs.some((run) => run.split("\n").some((line) => line.trim() === recipe))).toBe(true);
    }
    const registryLanes = Object.values(doc.jobs).filter((job) => job.steps.some((step) => step.run === "npx just test" || step.run === "npx just test-release"));
    for (const job of registryLanes) expect(job.steps.some((step) => step.env?.["REQUIRE_REGISTRY"] === "1")).toBe(true);
  });
});

describe("release.yml structure", () => {
  const ORDER = ["activation", "materialize", "immutable-release-control", "unit-tests", "contract-tests", "build-stage", "attest", "promote", "publish", "github-release"];

  it("has exactly the pipeline jobs, triggers and a non-cancelling concurrency group", () => {
    const { doc } = release;
    expect(Object.keys(doc.jobs)).toEqual(ORDER);
    expect(Object.keys(doc.on).sort()).toEqual(["push", "workflow_dispatch"]);
    expect(doc.on["push"]).toEqual({ branches: ["main"] });
    expect(doc.concurrency).toEqual({ group: "semantic-release-main", "cancel-in-progress": false });
  });

  it("orders the jobs by the needs graph: tests before the single build, build before promote, github-release last", () => {
    const { jobs } = release.doc;
    expect(needsOf(jobs["activation"]!)).toEqual([]);
    expect(needsOf(jobs["materialize"]!)).toEqual(["activation"]);
    for (const name of ["immutable-release-control", "unit-tests", "contract-tests"]) expect(needsOf(jobs[name]!)).toEqual(["materialize"]);
    expect(new Set(needsOf(jobs["build-stage"]!))).toEqual(new Set(["materialize", "unit-tests", "contract-tests"]));
    expect(new Set(needsOf(jobs["attest"]!))).toEqual(new Set(["materialize", "build-stage"]));
    // Nothing is promoted before the staged bundle's provenance is stored and verified.
    expect(new Set(needsOf(jobs["promote"]!))).toEqual(new Set(["materialize", "build-stage", "immutable-release-control", "attest"]));
    expect(ancestors(jobs, "publish").has("promote")).toBe(true);
    expect(ancestors(jobs, "github-release")).toEqual(new Set(ORDER.slice(0, -1)));
    // github-release is the only sink; every job depends (transitively) on activation.
    const needed = new Set(Object.values(jobs).flatMap(needsOf));
    expect(ORDER.filter((name) => !needed.has(name))).toEqual(["github-release"]);
    for (const name of ORDER.slice(1)) expect(ancestors(jobs, name).has("activation")).toBe(true);
    // The declared order is a topological order.
    ORDER.forEach((name, index) => {
      for (const parent of needsOf(jobs[name]!)) expect(ORDER.indexOf(parent)).toBeLessThan(index);
    });
  });

  it("gates every job on the switch; nothing protected runs without release intent", () => {
    const { jobs } = release.doc;
    expect(jobs["materialize"]!.if).toBe("needs.activation.outputs.enabled == 'true'");
    for (const name of ORDER.slice(2)) {
      expect(jobs[name]!.if).toContain("needs.materialize.outputs.released == 'true'");
      expect(jobs[name]!.if).not.toMatch(/always\(\)|failure\(\)|cancelled\(\)/);
    }
    const protectedJobs = Object.entries(jobs).filter(([, job]) => job.environment !== undefined);
    expect(Object.fromEntries(protectedJobs.map(([name, job]) => [name, job.environment]))).toEqual({
      "immutable-release-control": "source-promotion",
      "build-stage": "private-artifacts",
      attest: "private-artifacts",
      promote: "source-promotion",
      publish: "private-artifacts",
    });
    for (const [name] of protectedJobs) expect(ancestors(jobs, name).has("materialize")).toBe(true);
    expect(jobs["promote"]!.if).toContain("needs.immutable-release-control.outputs.enabled == 'true'");
  });

  it("activation needs no permissions and no secrets and reads vars.SEMANTIC_RELEASE_ENABLED", () => {
    const activation = release.doc.jobs["activation"]!;
    expect(activation.permissions).toEqual({});
    expect(JSON.stringify(activation)).not.toContain("secrets.");
    expect(activation.steps).toHaveLength(1);
    expect(activation.steps[0]!.env).toEqual({ SEMANTIC_RELEASE_ENABLED: "${{ vars.SEMANTIC_RELEASE_ENABLED }}" });
  });

  it("permissions: read everywhere, contents: write only for github-release, OIDC/attestations/packages only for attest", () => {
    const { jobs } = release.doc;
    for (const [name, job] of Object.entries(jobs)) {
      if (name === "activation") continue;
      if (name === "attest") {
        expect(job.permissions).toEqual({ contents: "read", "id-token": "write", attestations: "write", packages: "write" });
        continue;
      }
      expect(job.permissions).toEqual({ contents: name === "github-release" ? "write" : "read" });
    }
    expect((release.text.match(/id-token: write/g) ?? []).length).toBe(1);
    expect((release.text.match(/attestations: write/g) ?? []).length).toBe(1);
    expect((release.text.match(/packages: write/g) ?? []).length).toBe(1);
  });

  it("attest: GitHub's attest action pinned by SHA signs our predicate for the staged digest, pushes it as a referrer, and the CLI verifies it", () => {
    const attest = release.doc.jobs["attest"]!;
    const predicate = attest.steps.find((s) => s.id === "predicate")!;
    const lines = predicate.run!.split("\n").map((l) => l.trim());
    expect(lines.some((l) => l.startsWith('if npx hermes-plugin-kit verify-provenance --reference "$BUNDLE_REFERENCE" --repo "$GITHUB_REPOSITORY" --json'))).toBe(true);
    expect(lines.some((l) => l.startsWith('npx hermes-plugin-kit release provenance-predicate --repository "$PRIVATE_REPOSITORY" --reference "$BUNDLE_REFERENCE" --output "$RUNNER_TEMP/predicate.json"'))).toBe(true);
    const action = attest.steps.find((s) => s.uses?.startsWith("actions/attest@"))!;
    expect(action.uses).toBe("actions/attest@1e69f48acb82d1966a394da916b4c1698aa569d6");
    expect(action.if).toBe("steps.predicate.outputs.attested == 'false'");
    expect(action.with).toEqual({
      "subject-name": "${{ env.PRIVATE_REPOSITORY }}",
      "subject-digest": "${{ steps.predicate.outputs.subject_digest }}",
      "predicate-type": "https://slsa.dev/provenance/v1",
      "predicate-path": "${{ runner.temp }}/predicate.json",
      "push-to-registry": true,
      "create-storage-record": false,
    });
    const index = attest.steps.indexOf(action);
    const login = attest.steps[index - 1]!;
    expect(login.if).toBe(action.if);
    expect(login.run).toContain('printf \'%s\' "$GH_TOKEN" | docker login ghcr.io --username "$GITHUB_ACTOR" --password-stdin');
    const logout = attest.steps[index + 1]!;
    expect(logout).toMatchObject({ if: "always()", run: "docker logout ghcr.io || true" });
    const verify = attest.steps[attest.steps.length - 1]!;
    expect(verify.run!.split("\n").map((l) => l.trim())).toContain('npx hermes-plugin-kit verify-provenance --reference "$BUNDLE_REFERENCE" --repo "$GITHUB_REPOSITORY"');
    expect(verify.if).toBeUndefined();
  });

  it("maps each secret only on the steps that need it", () => {
    const { jobs } = release.doc;
    const uses: Record<string, string[]> = {};
    for (const [jobName, job] of Object.entries(jobs)) {
      job.steps.forEach((step, index) => {
        for (const [key, value] of Object.entries(step.env ?? {})) {
          const match = /\$\{\{\s*(secrets\.[A-Z_]+|github\.token)\s*\}\}/.exec(value);
          if (match !== null) (uses[match[1]!] ??= []).push(`${jobName}#${step.id ?? index}:${key}`);
        }
      });
    }
    expect(uses).toEqual({
      "secrets.SOURCE_PROMOTION_TOKEN": ["immutable-release-control#verify:GH_TOKEN", expect.stringMatching(/^promote#\d+:SOURCE_PROMOTION_TOKEN$/)],
      "secrets.PRIVATE_ARTIFACTS_TOKEN": [
        "build-stage#stage:GH_TOKEN",
        "attest#predicate:GH_TOKEN",
        expect.stringMatching(/^attest#\d+:GH_TOKEN$/),
        expect.stringMatching(/^attest#\d+:GH_TOKEN$/),
        expect.stringMatching(/^promote#\d+:GH_TOKEN$/),
        "publish#publish:GH_TOKEN",
      ],
      "github.token": [expect.stringMatching(/^github-release#\d+:GH_TOKEN$/)],
    });
    // No secret anywhere else in the text (e.g. in with: or run:).
    expect((release.text.match(/secrets\./g) ?? []).length).toBe(8);
    expect(release.text).not.toContain("GITHUB_TOKEN }}");
  });

  it("build runs exactly once, in build-stage, after both test jobs; only source and test evidence travel as Actions artifacts", () => {
    const lines = Object.entries(release.doc.jobs).flatMap(([name, job]) => job.steps.flatMap((step) => (step.run ?? "").split("\n").map((line) => ({ job: name, line: line.trim() }))));
    const jobsRunning = (prefix: string) => lines.filter(({ line }) => line.startsWith(prefix)).map(({ job }) => job);
    expect(jobsRunning("npx hermes-plugin-kit release build ")).toEqual(["build-stage"]);
    expect(jobsRunning("npx hermes-plugin-kit release gate build_metadata ")).toEqual(["build-stage"]);
    expect(jobsRunning("npx hermes-plugin-kit release gate unit ")).toEqual(["unit-tests"]);
    expect(jobsRunning("npx hermes-plugin-kit release gate public_contract ")).toEqual(["unit-tests"]);
    expect(jobsRunning("npx hermes-plugin-kit release gate host_contract ")).toEqual(["contract-tests"]);
    expect(jobsRunning("npm pack")).toEqual([]);
    // The build job needs exactly materialize and both test jobs (tests before the one build).
    expect(new Set(needsOf(release.doc.jobs["build-stage"]!))).toEqual(new Set(["materialize", "unit-tests", "contract-tests"]));
    const uploads = Object.values(release.doc.jobs).flatMap((job) => job.steps.filter((step) => step.uses?.startsWith("actions/upload-artifact@")));
    const names = uploads.map((step) => String(step.with?.["name"]));
    expect(names).toEqual([
      "${{ steps.materialize.outputs.source_artifact_name }}",
      "release-evidence-unit-${{ needs.materialize.outputs.release_sha }}",
      "release-evidence-contract-${{ needs.materialize.outputs.release_sha }}",
    ]);
    for (const step of uploads) expect(String(step.with?.["path"])).not.toMatch(/dist|receipt|release-manifest|payload/);
    const source = uploads[0]!.with!;
    expect(source).toMatchObject({ "compression-level": 0, "retention-days": 90, "if-no-files-found": "error" });
  });

  it("steps call the CLI: each pipeline step exactly where it belongs", () => {
    const where = (command: string) =>
      Object.entries(release.doc.jobs)
        .filter(([, job]) => job.steps.some((step) => (step.run ?? "").split("\n").some((line) => line.trim().startsWith(`npx hermes-plugin-kit release ${command} `) || line.trim() === `npx hermes-plugin-kit release ${command}`)))
        .map(([name]) => name);
    expect(where("materialize")).toEqual(["materialize"]);
    expect(where("check-immutable")).toEqual(["immutable-release-control"]);
    expect(where("restore")).toEqual(["unit-tests", "contract-tests", "build-stage"]);
    expect(where("create-manifest")).toEqual(["build-stage"]);
    expect(where("verify-manifest")).toEqual(["build-stage"]);
    expect(where("checksums")).toEqual(["build-stage"]);
    expect(where("check-private")).toEqual(["build-stage"]);
    expect(where("stage")).toEqual(["build-stage"]);
    expect(where("promote")).toEqual(["promote"]);
    expect(where("publish")).toEqual(["publish"]);
    expect(where("github-release")).toEqual(["github-release"]);
    expect(where("provenance-predicate")).toEqual(["attest"]);
    const stage = release.doc.jobs["build-stage"]!.steps.find((step) => step.id === "stage")!;
    expect(stage.run).toContain("release check-private --repository \"$PRIVATE_REPOSITORY\" --bootstrap");
    expect(stage.run).toContain('--tag "candidate-$GITHUB_RUN_ID-$RELEASE_SHA"');
  });

  it("every job installs the locked dependencies (just comes from rust-just) before running just or the CLI", () => {
    for (const [name, job] of Object.entries({ ...release.doc.jobs, ...test.doc.jobs })) {
      let installed = false;
      for (const candidate of job.steps) {
        const run = candidate.run ?? "";
        if (/(^|\n)\s*npx (just|hermes-plugin-kit)\b/.test(run) && !installed) throw new Error(`${name}: just/CLI before npm ci`);
        if (/(^|\n)\s*npm ci --engine-strict\b/.test(run)) installed = true;
      }
    }
    // The restored source gets its own locked install before its gates run.
    for (const name of ["unit-tests", "contract-tests", "build-stage"]) {
      const gates = release.doc.jobs[name]!.steps.find((candidate) => (candidate.run ?? "").includes("release gate "))!;
      const lines = gates.run!.split("\n").map((line) => line.trim());
      expect(lines.indexOf('cd "$RUNNER_TEMP/release"')).toBe(0);
      expect(lines.indexOf("npm ci --engine-strict --no-audit --no-fund")).toBe(1);
    }
  });

  it("every `npx hermes-plugin-kit release <step>` line matches the built CLI: known flags, required flags given, arguments counted", async () => {
    const { buildProgram } = (await import(new URL("../../dist/src/cli/program.js", import.meta.url).href)) as { buildProgram: () => Command };
    const releaseCommand = buildProgram().commands.find((command) => command.name() === "release")!;
    const lines = Object.values(release.doc.jobs).flatMap((job) => job.steps.flatMap((candidate) => (candidate.run ?? "").split("\n").map((line) => line.trim())));
    const invocations = lines.filter((line) => line.startsWith("npx hermes-plugin-kit release "));
    expect(invocations.length).toBeGreaterThanOrEqual(15);
    let checked = 0;
    for (const line of invocations) {
      const words: string[] = [];
      for (const token of line.match(/"[^"]*"|'[^']*'|\S+/g) ?? []) {
        if (token.startsWith(">") || token === "|" || token === "&&") break;
        words.push(token);
      }
      const stepName = words[3]!;
      const command = releaseCommand.commands.find((candidate) => candidate.name() === stepName);
      if (command === undefined) throw new Error(`unknown release step ${stepName} in: ${line}`);
      const options = new Map(command.options.map((option) => [option.long!, option]));
      const given = new Set<string>();
      const positional: string[] = [];
      for (let i = 4; i < words.length; i += 1) {
        const word = words[i]!;
        if (!word.startsWith("--")) {
          positional.push(word);
          continue;
        }
        const option = options.get(word);
        expect(option, `release ${stepName} has no option ${word}`).toBeDefined();
        given.add(word);
        if (option!.required || option!.optional) i += 1;
      }
      for (const option of command.options) if (option.mandatory) expect(given.has(option.long!), `release ${stepName} needs ${option.long}`).toBe(true);
      expect(positional.length, `positional arguments of release ${stepName}`).toBe(command.registeredArguments.length);
      checked += 1;
    }
    expect(checked).toBe(invocations.length);
  });

  it("each token-using step aborts on an empty token as its first statement", () => {
    const { jobs } = release.doc;
    const tokenSteps = Object.values(jobs).flatMap((job) => job.steps.filter((step) => Object.values(step.env ?? {}).some((value) => value.includes("secrets."))));
    expect(tokenSteps).toHaveLength(7);
    for (const step of tokenSteps) expect(step.run!.split("\n")[0]).toMatch(/^if \[ -z "\$\{[A-Z_]+-\}" \]; then .*exit 1; fi$/);
  });
});

// ---------------------------------------------------------------------------
// Running steps for real

interface StepRun {
  code: number;
  stdout: string;
  stderr: string;
  output: string;
  npxCalls: string[];
}

let work: string;
let api: GitHubEmulator;

function step(job: string, id: string | number): Step {
  const steps = release.doc.jobs[job]!.steps;
  const found = typeof id === "number" ? steps[id] : steps.find((candidate) => candidate.id === id);
  if (found === undefined) throw new Error(`no step ${job}#${id}`);
  return found;
}

/** Resolve `${{ expr }}` env values from `context` (unknown expressions fail the test). */
function resolveEnv(env: Record<string, string> | undefined, context: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(env ?? {})) {
    const match = /^\$\{\{\s*(.+?)\s*\}\}$/.exec(value);
    if (match === null) {
      out[key] = value;
      continue;
    }
    if (!(match[1]! in context)) throw new Error(`no context value for ${match[1]}`);
    const resolved = context[match[1]!];
    out[key] = resolved ?? "";
  }
  return out;
}

/**
 * Run one step's script under bash in a fresh directory, as Actions runs it in the job's checkout;
 * `checkout` holds the files of that checkout the step reads (e.g. its package.json).
 */
async function runStep(target: Step, context: Record<string, string | undefined>, extraEnv: Record<string, string> = {}, checkout: Record<string, string> = {}): Promise<StepRun> {
  const dir = await mkdtemp(join(work, "step-"));
  for (const [name, text] of Object.entries(checkout)) await writeFile(join(dir, name), text);
  const script = join(dir, "step.sh");
  const output = join(dir, "github-output");
  const npxLog = join(dir, "npx.log");
  await writeFile(script, target.run!);
  await writeFile(output, "");
  await writeFile(npxLog, "");
  const env: Record<string, string> = {
    PATH: `${join(work, "bin")}:${process.env["PATH"] ?? "/usr/bin:/bin"}`,
    HOME: dir,
    GITHUB_OUTPUT: output,
    RUNNER_TEMP: dir,
    NPX_LOG: npxLog,
    HPK_CLI: CLI,
    ...extraEnv,
    ...resolveEnv(target.env, context),
  };
  return new Promise((resolve, reject) => {
    const child = spawn("bash", ["--noprofile", "--norc", "-eo", "pipefail", script], { env, cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
    child.on("error", reject);
    child.on("close", async (code) => {
      clearTimeout(timer);
      const calls = (await readFile(npxLog, "utf8")).split("\n").filter((line) => line.length > 0);
      resolve({ code: code ?? -1, stdout, stderr, output: await readFile(output, "utf8"), npxCalls: calls });
    });
  });
}

describe("release.yml steps run under bash", () => {
  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), "hpk-workflow-"));
    const bin = join(work, "bin");
    await (await import("node:fs/promises")).mkdir(bin);
    // `npx hermes-plugin-kit ...` runs the built CLI; anything else is refused.
    await writeFile(
      join(bin, "npx"),
      '#!/usr/bin/env bash\nprintf "%s\\n" "$*" >> "$NPX_LOG"\nif [ "$1" = "hermes-plugin-kit" ]; then shift; exec node "$HPK_CLI" "$@"; fi\necho "unexpected npx $*" >&2\nexit 97\n',
    );
    await chmod(join(bin, "npx"), 0o755);
    api = await startGitHubEmulator();
  });
  afterAll(async () => {
    await api.close();
    await rm(work, { recursive: true, force: true });
  });

  it.each([
    ["true", "enabled=true\n"],
    ["false", "enabled=false\n"],
    ["", "enabled=false\n"],
    ["TRUE", "enabled=false\n"],
    [" true", "enabled=false\n"],
    ["true ", "enabled=false\n"],
    ["1", "enabled=false\n"],
    [undefined, "enabled=false\n"],
  ])("activation with SEMANTIC_RELEASE_ENABLED=%j succeeds and writes %j", async (value, expected) => {
    const result = await runStep(step("activation", "switch"), { "vars.SEMANTIC_RELEASE_ENABLED": value });
    expect(result.code).toBe(0);
    expect(result.output).toBe(expected);
    if (expected === "enabled=false\n") expect(result.stdout).toContain("disarmed");
  });

  const verifyContext = () => ({ "secrets.SOURCE_PROMOTION_TOKEN": api.token });
  const verifyEnv = () => ({ GITHUB_API_URL: api.url, GITHUB_REPOSITORY: "acme/widget" });

  it("immutable-release-control/verify: token present and enabled -> exit 0, output exactly enabled=true", async () => {
    api.requests.length = 0;
    api.clearFailures();
    api.setImmutableReleases("acme", "widget", true);
    const result = await runStep(step("immutable-release-control", "verify"), verifyContext(), verifyEnv());
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.output).toBe("enabled=true\n");
    expect(JSON.parse(result.stdout)).toEqual({ ok: true, repository: "acme/widget", enabled: true, enforced_by_owner: false });
    expect(api.requests.map((r) => `${r.path} ${r.authorized}`)).toEqual(["/repos/acme/widget/immutable-releases true"]);
    expect(result.stdout + result.stderr).not.toContain(api.token);
  });

  it("immutable-release-control/verify: empty token -> fails, the CLI and the API are never called, no output", async () => {
    api.requests.length = 0;
    const result = await runStep(step("immutable-release-control", "verify"), { "secrets.SOURCE_PROMOTION_TOKEN": "" }, verifyEnv());
    expect(result.code).not.toBe(0);
    expect(result.npxCalls).toEqual([]);
    expect(api.requests).toHaveLength(0);
    expect(result.output).toBe("");
  });

  it("immutable-release-control/verify: disabled -> fails, no output", async () => {
    api.clearFailures();
    api.setImmutableReleases("acme", "widget", false);
    const result = await runStep(step("immutable-release-control", "verify"), verifyContext(), verifyEnv());
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("IMMUTABLE_RELEASES_DISABLED");
    expect(result.output).toBe("");
  });

  it("immutable-release-control/verify: API failure -> fails, no output", async () => {
    api.setImmutableReleases("acme", "widget", true);
    api.fail("/repos/acme/widget/immutable-releases", 500);
    const result = await runStep(step("immutable-release-control", "verify"), verifyContext(), verifyEnv());
    api.clearFailures();
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("GITHUB_API_FAILED");
    expect(result.stderr).not.toContain(api.token);
    expect(result.output).toBe("");
  });

  it("promote: an empty SOURCE_PROMOTION_TOKEN exits non-zero before anything is invoked", async () => {
    const promote = release.doc.jobs["promote"]!.steps.find((candidate) => candidate.run?.includes("release promote"))!;
    const result = await runStep(promote, {
      "secrets.SOURCE_PROMOTION_TOKEN": "",
      "secrets.PRIVATE_ARTIFACTS_TOKEN": "read-token",
      "needs.build-stage.outputs.bundle_reference": `ghcr.io/offendingcommit/hermes-plugin-kit@sha256:${"a".repeat(64)}`,
      "github.sha": "1".repeat(40),
    });
    expect(result.code).not.toBe(0);
    expect(result.npxCalls).toEqual([]);
    expect(result.stdout).toContain("SOURCE_PROMOTION_TOKEN is empty");
  });

  it("build-stage/stage and publish: an empty PRIVATE_ARTIFACTS_TOKEN exits non-zero before anything is invoked", async () => {
    const stageResult = await runStep(step("build-stage", "stage"), { "secrets.PRIVATE_ARTIFACTS_TOKEN": "", "needs.materialize.outputs.release_sha": "1".repeat(40) });
    expect(stageResult.code).not.toBe(0);
    expect(stageResult.npxCalls).toEqual([]);
    expect(stageResult.output).toBe("");
    const publishResult = await runStep(step("publish", "publish"), { "secrets.PRIVATE_ARTIFACTS_TOKEN": "", "needs.build-stage.outputs.bundle_reference": "x" });
    expect(publishResult.code).not.toBe(0);
    expect(publishResult.npxCalls).toEqual([]);
  });

  describe("attest/predicate against a real staged release (oci-layout store)", () => {
    let fixture: ReleaseFixture;
    let storeDir: string;
    let repository: string;
    let bundleReference: string;
    const context = () => ({ "secrets.PRIVATE_ARTIFACTS_TOKEN": "any-token", "needs.build-stage.outputs.bundle_reference": bundleReference });
    const extra = () => ({ GITHUB_REPOSITORY: "acme/demo-plugin", PRIVATE_REPOSITORY: repository });
    const checkout = () => ({ "package.json": JSON.stringify({ name: "hermes-plugin-kit", version: "0.1.0", hermesPluginKit: { repository } }) });

    beforeAll(async () => {
      storeDir = join(work, "attest-store");
      repository = `oci-layout:${storeDir}`;
      // The step runs in the job's checkout of hermes-plugin-kit: its package.json names the package (see `checkout`).
      fixture = await createReleaseFixture({ registryRepository: repository, packageName: "hermes-plugin-kit" });
      const staged = await stageFixture(fixture, await LayoutTarget.open(storeDir, { create: true }), repository);
      await chmod(storeDir, 0o700);
      bundleReference = `${repository}@${staged.bundle.digest}`;
    });
    afterAll(async () => {
      await fixture?.cleanup();
    });

    it("an empty PRIVATE_ARTIFACTS_TOKEN exits non-zero before anything is invoked", async () => {
      const result = await runStep(step("attest", "predicate"), { ...context(), "secrets.PRIVATE_ARTIFACTS_TOKEN": "" }, extra(), checkout());
      expect(result.code).not.toBe(0);
      expect(result.npxCalls).toEqual([]);
      expect(result.output).toBe("");
    });

    it("no attestation yet: writes the predicate of the staged bundle and outputs attested=false with its digest", async () => {
      const result = await runStep(step("attest", "predicate"), context(), extra(), checkout());
      // The first probe's refusal (PROVENANCE_NOT_FOUND) is the expected answer here; with --json it is the
      // JSON object the step reads, and nothing reaches stderr.
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
      expect(result.output).toBe(`attested=false\nsubject_digest=${bundleReference.split("@")[1]}\n`);
      expect(result.npxCalls.map((c) => c.split(" ").slice(0, 3).join(" "))).toEqual(["hermes-plugin-kit verify-provenance --reference", "hermes-plugin-kit release provenance-predicate"]);
    });

    it("an attestation that does not verify for this release fails the job (no second attestation is made)", async () => {
      const key = await makeTestKey(work, "workflow-attest");
      const target = await LayoutTarget.open(storeDir);
      const subject = await target.resolve(bundleReference.split("@")[1]!);
      await pushAttestation(target, subject, await fixtureFacts(fixture, repository, subject.digest), { kind: "key", privateKey: key.privateKey });
      const result = await runStep(step("attest", "predicate"), context(), extra(), checkout());
      expect(result.code).toBe(1);
      expect(result.stdout).toContain("::error::the bundle has attestations that do not verify for this release (PROVENANCE_CERTIFICATE_REQUIRED)");
      expect(result.output).toBe("");
      expect(result.npxCalls).toHaveLength(1);
    });
  });
});
