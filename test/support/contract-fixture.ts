/**
 * Fixtures for contract tests: a real npm tarball made with `npm pack`, a
 * policy, and valid tested manifests / published receipts built through the
 * contract's own builders.
 */
import { execFile } from "node:child_process";
import { mkdtemp, mkdir, writeFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import {
  DEFAULT_GATE_COMMANDS,
  buildPublishedReceipt,
  createTestedManifest,
  inspectDistDir,
  type PublishedReceipt,
  type PackagePolicy,
  type TestedManifest,
} from "../../src/contract/index.js";

const run = promisify(execFile);

export const SOURCE_SHA = "a".repeat(40);
export const POLICY: PackagePolicy = {
  package: "demo-plugin",
  registryRepository: "ghcr.io/acme/demo-plugin",
  gates: { ...DEFAULT_GATE_COMMANDS },
  install: "npm ci",
};
export const BUNDLE_DIGEST = "sha256:" + "b".repeat(64);
export const BUNDLE_REFERENCE = `${POLICY.registryRepository}@${BUNDLE_DIGEST}`;

/** Make a temp dir removed by the returned cleanup. */
export async function tempDir(prefix = "hpk-test-"): Promise<string> {
  return mkdtemp(join(tmpdir(), prefix));
}

/**
 * `npm pack` a tiny package `name@version` into `<root>/dist` (the real tool,
 * so the tarball has npm's layout) and return the dist directory.
 */
export async function packTinyPackage(root: string, name: string, version: string, packageJsonVersion = version): Promise<string> {
  const src = join(root, "src-pkg");
  await mkdir(src, { recursive: true });
  await writeFile(join(src, "package.json"), JSON.stringify({ name, version: packageJsonVersion, files: ["index.js"] }, null, 2));
  await writeFile(join(src, "index.js"), "export const answer = 42;\n");
  const dist = join(root, "dist");
  await mkdir(dist, { recursive: true });
  await run("npm", ["pack", "--pack-destination", dist, "--silent"], { cwd: src, env: { ...process.env, npm_config_ignore_scripts: "true" } });
  await rm(src, { recursive: true, force: true });
  return dist;
}

/** Gate evidence as `release gate` records it. */
export function passedGates(sourceSha = SOURCE_SHA, policy = POLICY) {
  const gate = (command: string) => ({ status: "passed", result: "passed", source_sha: sourceSha, command });
  return {
    unit: gate(policy.gates.unit),
    public_contract: gate(policy.gates.public_contract),
    host_contract: { ...gate(policy.gates.host_contract), mcp_sdk_version: "1.32.2" },
    build_metadata: gate(policy.gates.build_metadata),
  };
}

/** A valid tested manifest for the dist directory (0.7.0 -> 0.8.0 by default). */
export async function testedManifestFor(dist: string, version = "0.8.0", previousVersion = "0.7.0"): Promise<TestedManifest> {
  return createTestedManifest({
    policy: POLICY,
    previousVersion,
    version,
    tag: `v${version}`,
    sourceSha: SOURCE_SHA,
    runId: "12345",
    runAttempt: 1,
    gates: passedGates(),
    artifacts: await inspectDistDir(dist, POLICY, version),
  });
}

/** A valid published receipt derived from a tested manifest with synthetic layer digests for the static files. */
export function receiptFor(manifest: TestedManifest): PublishedReceipt {
  const artifact = manifest.artifacts[0]!;
  const layers = [
    { path: `dist/${artifact.filename}`, digest: `sha256:${artifact.sha256}`, size: artifact.size },
    { path: "release-manifest.json", digest: "sha256:" + "1".repeat(64), size: 1200 },
    { path: "release-payload.sha256", digest: "sha256:" + "2".repeat(64), size: 250 },
    { path: "release-source.bundle", digest: "sha256:" + "3".repeat(64), size: 4096 },
  ];
  return buildPublishedReceipt(manifest, BUNDLE_REFERENCE, layers, POLICY);
}

/** Deep clone through JSON. */
export function clone<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}
