import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appendFile, copyFile, mkdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { createHash } from "node:crypto";
import { join, resolve } from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import { buildRelease } from "../../release/build.js";
import { runGate } from "../../release/gate.js";
import { materializeRelease } from "../../release/materialize.js";
import { checksumsStep, createManifestStep, verifyManifestStep, type CreateManifestOptions } from "../../release/manifest-steps.js";
import { restoreSource } from "../../release/restore.js";
import { readReleaseJsonFile } from "../../src/contract/manifest.js";
import { createFixtureRepo, type FixtureRepo } from "../support/git-fixture.js";

const SDK_VERSION = JSON.parse(await readFile(resolve("node_modules/@modelcontextprotocol/sdk/package.json"), "utf8")).version as string;
const GATES = {
  unit: "test -f index.js && echo unit-ran",
  public_contract: "test -f package.json",
  host_contract: "test -d node_modules/@modelcontextprotocol/sdk",
  build_metadata: "test -d lib",
};

let repo: FixtureRepo;
let work: string;
let source: string;
let trigger: string;
let checkout: string;

/** One real pipeline run up to the built tarball, shared by the tests (each test copies what it mutates). */
beforeAll(async () => {
  repo = await createFixtureRepo({ gates: GATES });
  trigger = await repo.commit("feat: add farewell", { "lib/farewell.js": "export const bye = () => 'bye';\n" });
  work = join(repo.root, "ws");
  await mkdir(work);
  const m = await materializeRelease({ dir: repo.dir, expectedSha: trigger, outputDir: work, environment: { SEMANTIC_RELEASE_ENABLED: "true" }, dateSeconds: 1_767_312_000 });
  if (!m.released) throw new Error("not released");
  source = m.source_sha;
  checkout = join(work, "source");
  await restoreSource({ bundle: join(work, "release-source.bundle"), expectedSha: trigger, dir: checkout });
  // The real MCP SDK of this repository, seen by the checkout's host_contract gate (node_modules is ignored by git).
  await symlink(resolve("node_modules"), join(checkout, "node_modules"));
  for (const gate of Object.keys(GATES)) await runGate({ gate, dir: checkout, evidenceDir: join(work, "evidence"), expectedSha: trigger });
  await buildRelease({ dir: checkout, artifactDir: join(work, "dist"), expectedSha: trigger });
});
afterAll(async () => {
  await repo.cleanup();
});

function base(over: Partial<CreateManifestOptions> = {}): CreateManifestOptions {
  return {
    dir: checkout,
    previousVersion: "0.7.0",
    version: "0.8.0",
    tag: "v0.8.0",
    sourceSha: source,
    runId: "12345",
    runAttempt: 1,
    artifactDir: join(work, "dist"),
    evidenceDir: join(work, "evidence"),
    output: join(work, "release-manifest.json"),
    ...over,
  };
}

async function copyDir(from: string, to: string, files: string[]): Promise<void> {
  await mkdir(to, { recursive: true });
  for (const f of files) await copyFile(join(from, f), join(to, f));
}

async function gone(path: string): Promise<boolean> {
  return readFile(path).then(
    () => false,
    () => true,
  );
}

describe("release gate", () => {
  it("records evidence with the declared command, HEAD and (host_contract) the MCP SDK version", async () => {
    const unit = JSON.parse(await readFile(join(work, "evidence", "unit.json"), "utf8"));
    expect(unit).toEqual({ command: GATES.unit, result: "passed", source_sha: source, status: "passed" });
    const host = JSON.parse(await readFile(join(work, "evidence", "host_contract.json"), "utf8"));
    expect(host).toEqual({ command: GATES.host_contract, mcp_sdk_version: SDK_VERSION, result: "passed", source_sha: source, status: "passed" });
  });

  it("a failing command records failed evidence and throws; a tree-changing command writes none", async () => {
    const r = await createFixtureRepo({ origin: false, gates: { unit: "exit 3", public_contract: "echo changed >> README.md", host_contract: "true", build_metadata: "true" } });
    try {
      const ev = join(r.root, "evidence");
      await expect(runGate({ gate: "unit", dir: r.dir, evidenceDir: ev })).rejects.toMatchObject({ code: "RELEASE_GATE_FAILED" });
      // The message says how to go on: a new commit, and a fresh workspace for `release run` (a found trial resumed the failed commit).
      await expect(runGate({ gate: "unit", dir: r.dir, evidenceDir: ev })).rejects.toThrow(/fix: make the gate pass in a new commit on origin's main.*fresh --workspace/);
      expect(JSON.parse(await readFile(join(ev, "unit.json"), "utf8"))).toMatchObject({ status: "failed", result: "failed" });
      await expect(runGate({ gate: "public_contract", dir: r.dir, evidenceDir: ev })).rejects.toMatchObject({ code: "RELEASE_GATE_TREE_CHANGED" });
      expect(await gone(join(ev, "public_contract.json"))).toBe(true);
      await expect(runGate({ gate: "host_contract", dir: r.dir, evidenceDir: ev })).rejects.toMatchObject({ code: "RELEASE_TREE_DIRTY" });
      await expect(runGate({ gate: "lint", dir: r.dir, evidenceDir: ev })).rejects.toMatchObject({ code: "RELEASE_GATE_UNKNOWN" });
    } finally {
      await r.cleanup();
    }
  });

  it("with --expected-sha, a checkout whose identity does not hold gets no evidence", async () => {
    const ev = join(work, "ev-identity");
    await expect(runGate({ gate: "unit", dir: checkout, evidenceDir: ev, expectedSha: "d".repeat(40) })).rejects.toMatchObject({ code: "RELEASE_IDENTITY_MISMATCH" });
    expect(await gone(join(ev, "unit.json"))).toBe(true);
  });

  it("host_contract without an installed MCP SDK fails closed", async () => {
    const r = await createFixtureRepo({ origin: false });
    try {
      await expect(runGate({ gate: "host_contract", dir: r.dir, evidenceDir: join(r.root, "ev") })).rejects.toMatchObject({ code: "RELEASE_MCP_SDK_VERSION" });
    } finally {
      await r.cleanup();
    }
  });
});

describe("release create-manifest / verify-manifest / checksums", () => {
  it("creates, verifies and checksums the tested manifest", async () => {
    const created = await createManifestStep(base());
    expect(created).toMatchObject({ version: "0.8.0", tag: "v0.8.0", release_class: "minor", source_sha: source, promotion: { automatic_candidate: true, state: "automatic_candidate" } });
    const doc = await readReleaseJsonFile(join(work, "release-manifest.json"));
    expect(doc).toMatchObject({
      schema_version: 2,
      receipt_state: "tested",
      package: "fixture-plugin",
      previous_version: "0.7.0",
      registry_repository: "oci-layout:/tmp/fixture-plugin-store",
      evidence: {
        unit: { command: GATES.unit, source_sha: source },
        host_contract: { command: GATES.host_contract, mcp_sdk_version: SDK_VERSION },
        build_metadata: { command: GATES.build_metadata },
        workflow: { name: "release.yml", run_id: "12345", run_attempt: 1, source_sha: source },
      },
    });
    const bytes = await readFile(join(work, "release-manifest.json"));
    expect(bytes.toString("utf8").endsWith("}\n")).toBe(true);
    expect(createHash("sha256").update(bytes).digest("hex")).toBe(created.sha256);
    const verified = await verifyManifestStep({ dir: checkout, manifest: join(work, "release-manifest.json"), artifactDir: join(work, "dist") });
    expect(verified).toEqual(created);
    const sums = await checksumsStep({ dir: checkout, bundle: join(work, "release-source.bundle"), manifest: join(work, "release-manifest.json"), artifactDir: join(work, "dist"), output: join(work, "release-payload.sha256") });
    const text = await readFile(join(work, "release-payload.sha256"), "utf8");
    const hex = async (p: string) => createHash("sha256").update(await readFile(p)).digest("hex");
    expect(text).toBe(
      `${await hex(join(work, "release-source.bundle"))}  release-source.bundle\n` +
        `${created.sha256}  release-manifest.json\n` +
        `${await hex(join(work, "dist", "fixture-plugin-0.8.0.tgz"))}  dist/fixture-plugin-0.8.0.tgz\n`,
    );
    expect(sums.entries.map((e) => e.path)).toEqual(["release-source.bundle", "release-manifest.json", "dist/fixture-plugin-0.8.0.tgz"]);
  });

  it.each([
    ["a version skip", { previousVersion: "0.6.0" }, "RELEASE_NOT_ONE_BUMP"],
    ["a downgrade", { previousVersion: "0.9.0" }, "RELEASE_NOT_ONE_BUMP"],
    ["a tag for another version", { tag: "v0.8.1" }, "TAG_VERSION_MISMATCH"],
    ["a run id with a leading zero", { runId: "012" }, "WORKFLOW_EVIDENCE_INVALID"],
    ["a zero run attempt", { runAttempt: 0 }, "WORKFLOW_EVIDENCE_INVALID"],
    ["another source SHA than the checkout", { sourceSha: "c".repeat(40) }, "RELEASE_IDENTITY_MISMATCH"],
    ["a version the checkout does not have", { version: "0.9.0", previousVersion: "0.8.0", tag: "v0.9.0" }, "RELEASE_CONFIG_INVALID"],
    ["an MCP SDK version other than the one exercised", { mcpSdkVersion: "9.9.9" }, "RELEASE_MCP_SDK_VERSION"],
  ])("refuses %s and writes nothing", async (_name, over, code) => {
    const output = join(work, `refused-${code}-${Math.random().toString(16).slice(2)}.json`);
    await expect(createManifestStep(base({ ...over, output }))).rejects.toMatchObject({ code });
    expect(await gone(output)).toBe(true);
  });

  it.each([
    ["unit", (e: Record<string, unknown>) => ({ ...e, result: "failed" }), "GATE_NOT_PASSED"],
    ["host_contract", (e: Record<string, unknown>) => ({ ...e, status: "failed", result: "failed" }), "GATE_NOT_PASSED"],
    ["public_contract", (e: Record<string, unknown>) => ({ ...e, source_sha: "c".repeat(40) }), "GATE_OTHER_SOURCE"],
    ["build_metadata", (e: Record<string, unknown>) => ({ ...e, source_sha: "c".repeat(40) }), "GATE_OTHER_SOURCE"],
    ["unit", (e: Record<string, unknown>) => ({ ...e, command: "true" }), "GATE_COMMAND_MISMATCH"],
    ["unit", (e: Record<string, unknown>) => ({ ...e, extra: "x" }), "RELEASE_EVIDENCE_INVALID"],
    ["unit", (e: Record<string, unknown>) => ({ ...e, mcp_sdk_version: "1.0.0" }), "RELEASE_EVIDENCE_INVALID"],
  ])("refuses %s evidence that was tampered (%#)", async (gate, mutate, code) => {
    const ev = join(work, `ev-${Math.random().toString(16).slice(2)}`);
    await copyDir(join(work, "evidence"), ev, ["unit.json", "public_contract.json", "host_contract.json", "build_metadata.json"]);
    const original = JSON.parse(await readFile(join(ev, `${gate}.json`), "utf8"));
    await writeFile(join(ev, `${gate}.json`), JSON.stringify(mutate(original)));
    const output = join(ev, "manifest.json");
    await expect(createManifestStep(base({ evidenceDir: ev, output }))).rejects.toMatchObject({ code });
    expect(await gone(output)).toBe(true);
  });

  it("refuses missing or duplicate-key evidence", async () => {
    const ev = join(work, "ev-missing");
    await copyDir(join(work, "evidence"), ev, ["unit.json", "public_contract.json", "host_contract.json"]);
    await expect(createManifestStep(base({ evidenceDir: ev, output: join(ev, "m.json") }))).rejects.toMatchObject({ code: "RELEASE_JSON_UNREADABLE" });
    await writeFile(join(ev, "build_metadata.json"), `{"status":"passed","status":"passed","result":"passed","source_sha":"${source}","command":"${GATES.build_metadata}"}`);
    await expect(createManifestStep(base({ evidenceDir: ev, output: join(ev, "m.json") }))).rejects.toMatchObject({ code: "JSON_DUPLICATE_KEY" });
  });

  it("refuses tarball bytes appended after create-manifest, an extra file and a symlink in dist", async () => {
    const dist = join(work, "dist-tampered");
    await copyDir(join(work, "dist"), dist, ["fixture-plugin-0.8.0.tgz"]);
    const manifest = join(work, "m-tampered.json");
    await createManifestStep(base({ artifactDir: dist, output: manifest }));
    const tarball = join(dist, "fixture-plugin-0.8.0.tgz");
    const original = await readFile(tarball);
    // Bytes appended after the gzip member: refused by the size the manifest pins, before the file is read.
    await appendFile(tarball, Buffer.from([0]));
    await expect(verifyManifestStep({ dir: checkout, manifest, artifactDir: dist })).rejects.toMatchObject({ code: "ARTIFACT_SIZE_MISMATCH" });
    // The same members compressed differently: a valid tarball whose bytes are not the tested ones
    // (refused by size when recompression changed it, else by digest, before it is unpacked).
    const recompressed = gzipSync(gunzipSync(original), { level: 1 });
    await writeFile(tarball, recompressed);
    await expect(verifyManifestStep({ dir: checkout, manifest, artifactDir: dist })).rejects.toMatchObject({ code: recompressed.length === original.length ? "ARTIFACT_SHA256_MISMATCH" : "ARTIFACT_SIZE_MISMATCH" });
    const out = join(work, "sums-tampered");
    await expect(checksumsStep({ dir: checkout, bundle: join(work, "release-source.bundle"), manifest, artifactDir: dist, output: out })).rejects.toMatchObject({ code: recompressed.length === original.length ? "ARTIFACT_SHA256_MISMATCH" : "ARTIFACT_SIZE_MISMATCH" });
    expect(await gone(out)).toBe(true);

    const extra = join(work, "dist-extra");
    await copyDir(join(work, "dist"), extra, ["fixture-plugin-0.8.0.tgz"]);
    await writeFile(join(extra, "private-notes.txt"), "x");
    await expect(createManifestStep(base({ artifactDir: extra, output: join(work, "m-extra.json") }))).rejects.toMatchObject({ code: "DIST_UNEXPECTED_FILE" });

    const linked = join(work, "dist-linked");
    await mkdir(linked);
    await symlink(join(work, "dist", "fixture-plugin-0.8.0.tgz"), join(linked, "fixture-plugin-0.8.0.tgz"));
    await expect(createManifestStep(base({ artifactDir: linked, output: join(work, "m-linked.json") }))).rejects.toMatchObject({ code: "ARTIFACT_NOT_REGULAR" });
    await rm(linked, { recursive: true });
  });
});

describe("a major release end to end", () => {
  it("feat! from 0.7.0 gives 1.0.0, class major, promotion manual_migration_required", async () => {
    const r = await createFixtureRepo({ gates: GATES });
    try {
      const t = await r.commit("feat!: replace the greeting api", { "lib/greet.js": "export const greet = () => 'hi';\n" });
      const ws = join(r.root, "ws");
      await mkdir(ws);
      const m = await materializeRelease({ dir: r.dir, expectedSha: t, outputDir: ws, environment: { SEMANTIC_RELEASE_ENABLED: "true" }, dateSeconds: 1_767_312_000 });
      if (!m.released) throw new Error("not released");
      expect(m).toMatchObject({ version: "1.0.0", release_class: "major" });
      const co = join(ws, "source");
      await restoreSource({ bundle: join(ws, "release-source.bundle"), expectedSha: t, dir: co });
      await symlink(resolve("node_modules"), join(co, "node_modules"));
      for (const gate of Object.keys(GATES)) await runGate({ gate, dir: co, evidenceDir: join(ws, "evidence"), expectedSha: t });
      await buildRelease({ dir: co, artifactDir: join(ws, "dist"), expectedSha: t });
      const created = await createManifestStep({
        dir: co,
        previousVersion: "0.7.0",
        version: "1.0.0",
        tag: "v1.0.0",
        sourceSha: m.source_sha,
        runId: "777",
        runAttempt: 2,
        artifactDir: join(ws, "dist"),
        evidenceDir: join(ws, "evidence"),
        output: join(ws, "release-manifest.json"),
      });
      expect(created).toMatchObject({ release_class: "major", promotion: { automatic_candidate: false, state: "manual_migration_required" }, artifacts: [{ filename: "fixture-plugin-1.0.0.tgz" }] });
    } finally {
      await r.cleanup();
    }
  });
});
