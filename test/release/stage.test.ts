/**
 * `release stage` against an `oci-layout:` store (reference 3.16-3.18 SP1,
 * scenarios 11, 12, 14, 28, 32-35, 40): real git bundle, real npm tarball,
 * real layout store; every failure asserts its code and that nothing was uploaded.
 */
import { chmod, copyFile, mkdir, readFile, rm, stat, symlink, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { canonicalJsonPretty, parseStrictJson } from "../../src/contract/canonical-json.js";
import { fetchRelease } from "../../src/fetch/fetch.js";
import { stageRelease } from "../../release/stage.js";
import { runCli } from "../support/cli.js";
import { copyFixture, sha256File, variantWithChecksums, variantWithRefsAtOtherCommit, writeChecksums } from "../support/release-fixture.js";
import { createPipelineFixture, stageInputs, storeBlobs, storeIndex, storeTags, type PipelineFixture } from "../support/release-pipeline-fixture.js";

let pf: PipelineFixture;

beforeAll(async () => {
  pf = await createPipelineFixture();
});

afterAll(async () => {
  await pf.cleanup();
});

describe("release stage: failures before any upload", () => {
  it("refuses a tag that is not candidate-<run_id>-<source_sha> of the manifest (T4)", async () => {
    await expect(stageRelease({ ...stageInputs(pf.fixture), repository: pf.repository, tag: `candidate-99-${pf.fixture.sourceSha}` })).toThrowWithCode("STAGE_TAG_MISMATCH");
    await expect(stageRelease({ ...stageInputs(pf.fixture), repository: pf.repository, tag: "v0.8.0" })).toThrowWithCode("STAGE_TAG_MISMATCH");
    expect(await storeBlobs(pf.storeDir)).toEqual([]);
  });

  it("refuses another repository than the policy's", async () => {
    await expect(stageRelease({ ...stageInputs(pf.fixture), repository: `oci-layout:${pf.root}/elsewhere`, tag: pf.candidateTag })).toThrowWithCode("RELEASE_REPOSITORY_MISMATCH");
  });

  it("refuses an extra file in dist and a symlinked tarball (scenario 40)", async () => {
    const extra = await copyFixture(pf.fixture);
    const inputs = stageInputs(extra);
    await writeFile(join(inputs.artifactDir, "private-notes.txt"), "secret\n");
    await expect(stageRelease({ ...inputs, repository: pf.repository, tag: pf.candidateTag })).toThrowWithCode("STAGE_INPUT_INVALID");
    await extra.cleanup();

    const linked = await copyFixture(pf.fixture);
    const li = stageInputs(linked);
    const tarball = join(li.artifactDir, pf.fixture.tarballName);
    await copyFile(tarball, join(linked.root, "real.tgz"));
    await rm(tarball);
    await symlink(join(linked.root, "real.tgz"), tarball);
    await expect(stageRelease({ ...li, repository: pf.repository, tag: pf.candidateTag })).toThrowWithCode("STAGE_INPUT_INVALID");
    await linked.cleanup();
    expect(await storeBlobs(pf.storeDir)).toEqual([]);
  });

  it("refuses an artifact directory that is a symlink and a static file with another name", async () => {
    const copy = await copyFixture(pf.fixture);
    const inputs = stageInputs(copy);
    await symlink(inputs.artifactDir, join(copy.root, "dist-link"));
    await expect(stageRelease({ ...inputs, artifactDir: join(copy.root, "dist-link"), repository: pf.repository, tag: pf.candidateTag })).toThrowWithCode("STAGE_INPUT_INVALID");
    await copyFile(inputs.manifest, join(copy.root, "manifest.json"));
    await expect(stageRelease({ ...inputs, manifest: join(copy.root, "manifest.json"), repository: pf.repository, tag: pf.candidateTag })).toThrowWithCode("STAGE_INPUT_INVALID");
    await copy.cleanup();
    expect(await storeBlobs(pf.storeDir)).toEqual([]);
  });

  it("refuses checksum files with a missing, duplicated or ../secret line (scenario 35)", async () => {
    const edits: [string, (t: string) => string][] = [
      ["PAYLOAD_CHECKSUM_INCOMPLETE", (t) => t.split("\n").slice(1).join("\n")],
      ["PAYLOAD_CHECKSUM_DUPLICATE", (t) => t + t.split("\n")[0] + "\n"],
      ["PAYLOAD_CHECKSUM_LINE_INVALID", (t) => t + `${"0".repeat(64)}  ../secret\n`],
    ];
    for (const [code, edit] of edits) {
      const variant = await variantWithChecksums(pf.fixture, edit);
      await expect(stageRelease({ ...stageInputs(variant), repository: pf.repository, tag: pf.candidateTag })).toThrowWithCode(code);
      await variant.cleanup();
    }
    expect(await storeBlobs(pf.storeDir)).toEqual([]);
  });

  it("refuses a bundle whose refs point at another commit (scenario 32), a failed gate (scenario 34) and a gate of another source (scenario 33)", async () => {
    const moved = await variantWithRefsAtOtherCommit(pf.fixture);
    await expect(stageRelease({ ...stageInputs(moved), repository: pf.repository, tag: pf.candidateTag })).toThrowWithCode("SOURCE_BUNDLE_SHA_MISMATCH");
    await moved.cleanup();

    const failed = await copyFixture(pf.fixture);
    const manifestPath = failed.files.get("release-manifest.json")!;
    const doc = parseStrictJson(await readFile(manifestPath)) as Record<string, any>;
    doc["evidence"]["host_contract"]["result"] = "failed";
    await writeFile(manifestPath, canonicalJsonPretty(doc));
    await writeChecksums(failed);
    await expect(stageRelease({ ...stageInputs(failed), repository: pf.repository, tag: pf.candidateTag })).toThrowWithCode("GATE_NOT_PASSED");
    doc["evidence"]["host_contract"]["result"] = "passed";
    doc["evidence"]["unit"]["source_sha"] = "c".repeat(40);
    await writeFile(manifestPath, canonicalJsonPretty(doc));
    await writeChecksums(failed);
    await expect(stageRelease({ ...stageInputs(failed), repository: pf.repository, tag: pf.candidateTag })).toThrowWithCode("GATE_OTHER_SOURCE");
    await failed.cleanup();
    expect(await storeBlobs(pf.storeDir)).toEqual([]);
  });

  it("refuses a group-readable store (privacy) before any upload, and creates a missing one 0700", async () => {
    await mkdir(pf.storeDir, { mode: 0o755 });
    await chmod(pf.storeDir, 0o755);
    await expect(stageRelease({ ...stageInputs(pf.fixture), repository: pf.repository, tag: pf.candidateTag })).toThrowWithCode("PRIVACY_LAYOUT_PERMISSIONS");
    expect(await storeBlobs(pf.storeDir)).toEqual([]);
    await rm(pf.storeDir, { recursive: true });
  });
});

describe("release stage: round trip and retry", () => {
  it("stages, writes the stage output last, and a fetch reproduces every file (scenario 11)", async () => {
    const output = join(pf.root, "staged-release.json");
    const result = await stageRelease({ ...stageInputs(pf.fixture), repository: pf.repository, tag: pf.candidateTag, output });
    expect(result.bundle_reference).toMatch(new RegExp(`^oci-layout:${pf.storeDir}@sha256:[0-9a-f]{64}$`));
    expect(result.upload).toBe("tagged");
    expect(result.bootstrapped).toBe(true);
    expect((await stat(pf.storeDir)).mode & 0o777).toBe(0o700);
    expect(await readFile(output, "utf8")).toBe(`{"bundle_reference":"${result.bundle_reference}"}\n`);
    const tags = await storeTags(pf.storeDir);
    expect(tags).toEqual({ [pf.candidateTag]: result.bundle_reference.split("@")[1] });

    const consumer = join(pf.root, "consumer");
    const fetched = await fetchRelease({ reference: result.bundle_reference, repository: pf.repository, outputDir: consumer, progress: null });
    expect(fetched.files.map((f) => f.path).sort()).toEqual([...pf.fixture.files.keys()].sort());
    for (const [path, local] of pf.fixture.files) {
      expect((await readFile(join(consumer, path))).equals(await readFile(local)), path).toBe(true);
    }
  });

  it("re-staging with touched mtimes gives the same reference and uploads nothing (scenarios 12, 14)", async () => {
    const before = { blobs: await storeBlobs(pf.storeDir), index: await storeIndex(pf.storeDir) };
    for (const local of pf.fixture.files.values()) await utimes(local, new Date(), new Date(Date.now() + 3_600_000));
    const output = join(pf.root, "staged-again.json");
    const again = await stageRelease({ ...stageInputs(pf.fixture), repository: pf.repository, tag: pf.candidateTag, output });
    expect(again.upload).toBe("already-tagged");
    expect(await readFile(output, "utf8")).toBe(await readFile(join(pf.root, "staged-release.json"), "utf8"));
    expect(await storeBlobs(pf.storeDir)).toEqual(before.blobs);
    expect(await storeIndex(pf.storeDir)).toBe(before.index);
  });

  it("the CLI stages with flags, prints the result, and exits 2 without --tag", async () => {
    const inputs = stageInputs(pf.fixture);
    await writeFile(join(pf.root, "package.json"), JSON.stringify({ name: pf.fixture.packageName, version: "0.7.0", hermesPluginKit: { repository: pf.repository } }) + "\n");
    const flags = ["--manifest", inputs.manifest, "--artifact-dir", inputs.artifactDir, "--source-bundle", inputs.sourceBundle, "--payload-checksums", inputs.payloadChecksums];
    const output = join(pf.root, "staged-cli.json");
    const ok = await runCli(["release", "stage", "--tag", pf.candidateTag, ...flags, "--output", output], { cwd: pf.root });
    expect(ok.code, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ tag: pf.candidateTag, upload: "already-tagged", version: "0.8.0" });
    expect(await readFile(output, "utf8")).toBe(await readFile(join(pf.root, "staged-release.json"), "utf8"));
    const usage = await runCli(["release", "stage", ...flags], { cwd: pf.root });
    expect(usage.code).toBe(2);
    const refused = await runCli(["release", "stage", "--tag", "candidate-1-x", ...flags, "--json"], { cwd: pf.root });
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stdout)).toMatchObject({ ok: false, code: "STAGE_TAG_MISMATCH" });
  });

  it("refuses to move the candidate tag to other bytes (scenario 28)", async () => {
    const before = await storeTags(pf.storeDir);
    const attempt2 = await copyFixture(pf.fixture);
    const manifestPath = attempt2.files.get("release-manifest.json")!;
    const doc = parseStrictJson(await readFile(manifestPath)) as Record<string, any>;
    doc["evidence"]["workflow"]["run_attempt"] = 2;
    await writeFile(manifestPath, canonicalJsonPretty(doc));
    await writeChecksums(attempt2);
    expect(await sha256File(manifestPath)).not.toBe(await sha256File(pf.fixture.files.get("release-manifest.json")!));
    const output = join(pf.root, "never-written.json");
    await expect(stageRelease({ ...stageInputs(attempt2), repository: pf.repository, tag: pf.candidateTag, output })).toThrowWithCode("RELEASE_TAG_CONFLICT");
    expect(await storeTags(pf.storeDir)).toEqual(before);
    await expect(readFile(output)).rejects.toThrow();
    await attempt2.cleanup();
  });

  it("fails closed without writing the output when the store serves other bytes after the upload (SP1)", async () => {
    const tarballHex = await sha256File(pf.fixture.files.get(`dist/${pf.fixture.tarballName}`)!);
    const blob = join(pf.storeDir, "blobs", "sha256", tarballHex);
    const output = join(pf.root, "staged-corrupt.json");
    const hooks = {
      checkpoint: async (point: string) => {
        if (point !== "stage:uploaded") return;
        const bytes = await readFile(blob);
        bytes[0] = (bytes[0] as number) ^ 0xff;
        await chmod(blob, 0o600);
        await writeFile(blob, bytes);
      },
    };
    await expect(stageRelease({ ...stageInputs(pf.fixture), repository: pf.repository, tag: pf.candidateTag, output, hooks })).toThrowWithCode("OCI_DIGEST_MISMATCH");
    await expect(readFile(output)).rejects.toThrow();
  });
});
