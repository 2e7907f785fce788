// Placeholder demo until the full release pipeline lands (issue 8): it runs
// what exists — builds a tested manifest for a freshly packed package and
// verifies it and a receipt derived from it through the real CLI.
import { execFileSync } from "node:child_process";
import { mkdtempSync, mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  DEFAULT_GATE_COMMANDS, buildPublishedReceipt, canonicalJson, createTestedManifest, inspectDistDir, testedManifestBytes,
} from "../dist/src/contract/index.js";

const ws = mkdtempSync(join(tmpdir(), "hpk-demo-"));
const src = join(ws, "pkg");
const dist = join(ws, "dist");
mkdirSync(src); mkdirSync(dist);
writeFileSync(join(src, "package.json"), JSON.stringify({ name: "demo-plugin", version: "0.8.0", files: ["index.js"] }));
writeFileSync(join(src, "index.js"), "export const answer = 42;\n");
execFileSync("npm", ["pack", "--pack-destination", dist, "--silent"], { cwd: src, stdio: "ignore" });
const policy = { package: "demo-plugin", registryRepository: "ghcr.io/acme/demo-plugin", gates: { ...DEFAULT_GATE_COMMANDS } };
const sha = "a".repeat(40);
const gate = (command) => ({ status: "passed", result: "passed", source_sha: sha, command });
const manifest = createTestedManifest({
  policy, previousVersion: "0.7.0", version: "0.8.0", tag: "v0.8.0", sourceSha: sha, runId: "1", runAttempt: 1,
  gates: { unit: gate(policy.gates.unit), public_contract: gate(policy.gates.public_contract), host_contract: { ...gate(policy.gates.host_contract), mcp_sdk_version: "1.32.2" }, build_metadata: gate(policy.gates.build_metadata) },
  artifacts: await inspectDistDir(dist, policy, "0.8.0"),
});
writeFileSync(join(ws, "release-manifest.json"), testedManifestBytes(manifest));
const a = manifest.artifacts[0];
const ref = `${policy.registryRepository}@sha256:${"b".repeat(64)}`;
const receipt = buildPublishedReceipt(manifest, ref, [
  { path: `dist/${a.filename}`, digest: `sha256:${a.sha256}`, size: a.size },
  { path: "release-manifest.json", digest: `sha256:${"1".repeat(64)}`, size: 1 },
  { path: "release-payload.sha256", digest: `sha256:${"2".repeat(64)}`, size: 1 },
  { path: "release-source.bundle", digest: `sha256:${"3".repeat(64)}`, size: 1 },
], policy);
writeFileSync(join(ws, "release-receipt.json"), canonicalJson(receipt));
const cli = new URL("../dist/src/cli/main.js", import.meta.url).pathname;
const flags = ["--package", "demo-plugin", "--repository", policy.registryRepository];
execFileSync(process.execPath, [cli, "verify-manifest", "--manifest", join(ws, "release-manifest.json"), "--artifact-dir", dist, ...flags], { stdio: "inherit" });
execFileSync(process.execPath, [cli, "verify-final-receipt", "--receipt", join(ws, "release-receipt.json"), ...flags, "--expect-bundle-reference", ref], { stdio: "inherit" });
console.log(`demo: contract layer only (the full release pipeline is not wired yet); workspace ${ws}`);
