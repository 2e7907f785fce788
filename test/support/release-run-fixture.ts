/**
 * A package ready for `release run`: a real git repository (fixed identity
 * and dates) of a small npm package with a baseline tag `v0.7.0`, one
 * `feat:` commit on top, a local bare `origin` holding both, and a private
 * `oci-layout:` store named by its package.json. The policy's install command (hermesPluginKit.install) links
 * this repository's node_modules so the host_contract gate finds the real MCP SDK.
 */
import { createHash, generateKeyPairSync } from "node:crypto";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "vitest";
import { gitText } from "../../release/git.js";
import { releaseTagProblem } from "../../release/release-tag.js";
import { parseStrictJson } from "../../src/contract/canonical-json.js";
import { LayoutTarget } from "../../src/oci/layout-target.js";
import { runCli, type CliResult } from "./cli.js";
import type { GitHubEmulator } from "./github-emulator.js";
import { createFixtureRepo, type FixtureRepo } from "./git-fixture.js";

/** What a run test needs. */
export interface RunFixture {
  repo: FixtureRepo;
  /** `oci-layout:<dir>`. */
  repository: string;
  storeDir: string;
  /** A fresh workspace path (not created). */
  workspace: string;
  /** The trigger commit (HEAD of the checkout, pushed to origin main). */
  triggerSha: string;
  /** A throwaway P-256 attestation key (PEM, mode 0600) for `release run --attest-key`, and its public key. */
  attestKey: string;
  attestPub: string;
  cleanup(): Promise<void>;
}

/** The repository root (for its node_modules). */
export const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));

/**
 * Create the fixture package (baseline + one `trigger` commit, by default a
 * `feat:`), its origin and an empty store location; `registryRepository`
 * replaces the `oci-layout:` store in package.json; `install` is a shell prefix run before the
 * install command that links node_modules (e.g. one that sleeps, to interrupt it).
 */
export async function createRunFixture(
  name = "fixture-plugin",
  trigger: { message: string; files: Record<string, string> } = { message: "feat: add a farewell\n", files: { "lib/farewell.js": "export function farewell(name) {\n  return `bye ${name}`;\n}\n" } },
  registryRepository?: string,
  installPrefix?: string,
): Promise<RunFixture> {
  const scratch = await mkdtemp(join(tmpdir(), "hpk-run-"));
  const storeDir = join(scratch, "store");
  const repository = registryRepository ?? `oci-layout:${storeDir}`;
  const repo = await createFixtureRepo({
    name,
    packageJson: {
      hermesPluginKit: {
        repository,
        // The policy's install command makes the restored checkout runnable (here: this repository's node_modules).
        install: `${installPrefix ?? ""}ln -s ${JSON.stringify(join(REPO_ROOT, "node_modules"))} node_modules`,
        gates: { unit: "test -f index.js", public_contract: "test -f package.json", host_contract: "test -d node_modules/@modelcontextprotocol/sdk", build_metadata: "test -d lib" },
      },
    },
  });
  const triggerSha = await repo.commit(trigger.message, trigger.files);
  await repo.git(["push", "--quiet", "origin", "main"]);
  const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const attestKey = join(scratch, "attest-key.pem");
  const attestPub = join(scratch, "attest-key.pub");
  await writeFile(attestKey, privateKey.export({ format: "pem", type: "pkcs8" }), { mode: 0o600 });
  await writeFile(attestPub, publicKey.export({ format: "pem", type: "spki" }));
  return {
    attestKey,
    attestPub,
    repo,
    repository,
    storeDir,
    workspace: join(scratch, "workspace"),
    triggerSha,
    cleanup: async () => {
      await repo.cleanup();
      await rm(scratch, { recursive: true, force: true });
    },
  };
}

/** One `release run` CLI invocation of a crash chain. */
export interface CrashRun {
  /** The crash point, or `null` for an uninterrupted run. */
  point: string | null;
  result: CliResult;
}

/**
 * Run the built `hermes-plugin-kit release run` over `rf.workspace` once per
 * crash point (HERMES_PLUGIN_KIT_CRASH_AT, each run resuming the previous
 * one's workspace), then once uninterrupted and once more to verify.
 * Every run uses run id 5150, the fixture's attestation key, `--github-release`
 * with `env` (GitHub emulator variables) and `SEMANTIC_RELEASE_ENABLED=true`.
 */
export async function runCrashChain(rf: RunFixture, points: readonly string[], env: Record<string, string>): Promise<CrashRun[]> {
  const runs: CrashRun[] = [];
  const once = async (point: string | null) => {
    const result = await runCli(["release", "run", "--workspace", rf.workspace, "--source", rf.repo.dir, "--run-id", "5150", "--attest-key", rf.attestKey, "--github-release"], {
      cwd: rf.repo.root,
      env: { ...env, SEMANTIC_RELEASE_ENABLED: "true", HERMES_PLUGIN_KIT_CRASH_AT: point ?? "" },
    });
    runs.push({ point, result });
    return result;
  };
  for (const point of points) await once(point);
  await once(null);
  await once(null);
  return runs;
}

/**
 * Assert that a crash chain converged (docs/architecture.md, "Release: steps
 * and data flow": a rerun after a crash anywhere converges):
 * every killed run died by SIGKILL with no output; recorded release SHA,
 * bundle and receipt references never changed once recorded; the final run
 * succeeded and the verifying rerun gave the same receipt bytes; each store
 * tag names its one digest and no other release or receipt manifest was ever
 * stored; origin was promoted to the release commit; the emulator holds one
 * GitHub Release created by one POST; no output carries `secret`.
 */
export async function expectCrashChainConverged(rf: RunFixture, runs: CrashRun[], github: GitHubEmulator, secret: string): Promise<void> {
  const seen: Record<string, string> = {};
  for (const { point, result } of runs.slice(0, -2)) {
    expect(result.code, `${point}: expected SIGKILL, got exit ${result.code}: ${result.stderr}`).toBe(-1);
    expect(result.stdout, String(point)).toBe("");
  }
  const final = runs[runs.length - 2]!.result;
  const again = runs[runs.length - 1]!.result;
  expect(final.code, final.stderr).toBe(0);
  expect(again.code, again.stderr).toBe(0);
  const result = JSON.parse(final.stdout) as Record<string, unknown>;
  const verified = JSON.parse(again.stdout) as Record<string, unknown>;
  expect(result["released"]).toBe(true);
  expect({ ...verified, steps: [] }).toEqual({ ...result, steps: [] });
  // Every step of the verifying rerun is verified, except one skipped with the same reason in the final run (attest without a key).
  const skipped = new Set((result["steps"] as { step: string; status: string; reason?: string }[]).filter((s) => s.status === "skipped").map((s) => `${s.step}:${s.reason ?? ""}`));
  const notVerified = (verified["steps"] as { step: string; status: string; reason?: string }[]).filter((s) => s.status !== "verified" && !(s.status === "skipped" && skipped.has(`${s.step}:${s.reason ?? ""}`)));
  expect(notVerified, again.stdout + again.stderr).toEqual([]);
  const state = parseStrictJson(await readFile(join(rf.workspace, "run-state.json"))) as { steps: Record<string, Record<string, unknown>> };
  seen["release"] = String(state.steps["materialize"]?.["source_sha"]);
  expect(result["release_sha"]).toBe(seen["release"]);
  const receiptBytes = await readFile(join(rf.workspace, "release-receipt.json"));
  expect(createHash("sha256").update(receiptBytes).digest("hex")).toBe(result["receipt_sha256"]);

  const bundleDigest = String(result["bundle_reference"]).split("@")[1]!;
  const receiptDigest = String(result["receipt_reference"]).split("@")[1]!;
  const store = await LayoutTarget.open(rf.storeDir);
  const tags: Record<string, string> = {};
  for (const tag of await store.tags()) tags[tag] = (await store.resolve(tag)).digest;
  const referrersTag = `sha256-${bundleDigest.slice("sha256:".length)}`;
  expect(tags).toEqual({ [`candidate-5150-${String(result["release_sha"])}`]: bundleDigest, "v0.8.0": bundleDigest, "v0.8.0-receipt": receiptDigest, [referrersTag]: tags[referrersTag] });
  // Exactly one attestation, whatever crashed around it (a killed attest is not signed again), and it verifies.
  const { listReferrers } = await import("../../src/oci/referrers.js");
  const bundle = await store.resolve(bundleDigest);
  const attestations = (await listReferrers(store, bundle)).descriptors;
  expect(attestations.map((d) => `${rf.repository}@${d.digest}`)).toEqual([result["attestation_reference"]]);
  const provenance = await runCli(["verify-provenance", "--reference", String(result["bundle_reference"]), "--key", rf.attestPub, "--json"]);
  expect(provenance.code, provenance.stderr).toBe(0);
  const manifests: string[] = [];
  for (const blob of await readdir(join(rf.storeDir, "blobs", "sha256"))) {
    const bytes = await readFile(join(rf.storeDir, "blobs", "sha256", blob));
    if (bytes.length < 65536 && bytes.subarray(0, 64).toString("latin1").startsWith('{"artifactType"')) manifests.push(`sha256:${blob}`);
  }
  expect(manifests.sort()).toEqual([bundleDigest, receiptDigest].sort());

  const origin = rf.repo.origin!;
  expect(await gitText(["rev-parse", "refs/heads/main"], { cwd: origin })).toBe(result["release_sha"]);
  expect(await gitText(["rev-parse", "refs/tags/v0.8.0^{commit}"], { cwd: origin })).toBe(result["release_sha"]);
  expect(await gitText(["rev-parse", `${String(result["release_sha"])}^`], { cwd: origin })).toBe(rf.triggerSha);
  // The pushed tag is the exact annotated release tag (bot tagger, the release commit's date), named by describe.
  expect(await releaseTagProblem(origin, "0.8.0", String(result["release_sha"]))).toBeUndefined();
  expect(await gitText(["describe", String(result["release_sha"])], { cwd: origin })).toBe("v0.8.0");
  expect(github.releases("acme", "fixture-plugin")).toHaveLength(1);
  expect(github.count("POST", "/repos/acme/fixture-plugin/releases")).toBe(1);
  for (const { result: r } of runs) expect(r.stdout + r.stderr).not.toContain(secret);
}
