/**
 * fetch against an `oci-layout:` store (the embedded default store): round
 * trip, idempotence, privacy of the store directory, and blob tampering.
 */
import { chmod, cp, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LayoutTarget } from "../../src/oci/layout-target.js";
import { layoutBlobPath } from "../../src/oci/layout.js";
import { downloadRelease, fetchRelease, type OpenReadTarget } from "../../src/fetch/fetch.js";
import { createReleaseFixture, stageFixture, type ReleaseFixture, type StagedRelease } from "../support/release-fixture.js";
import { runCli } from "../support/cli.js";

let root: string;
let storeDir: string;
let repository: string;
let fixture: ReleaseFixture;
let staged: StagedRelease;
const openLayout: OpenReadTarget = async (repo) => {
  if (repo.kind !== "layout") throw new Error("layout only");
  return LayoutTarget.open(repo.dir);
};

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "hpk-fetch-layout-"));
  storeDir = join(root, "store");
  repository = `oci-layout:${storeDir}`;
  fixture = await createReleaseFixture({ registryRepository: repository });
  staged = await stageFixture(fixture, await LayoutTarget.open(storeDir, { create: true }), repository);
  await chmod(storeDir, 0o700);
});

afterAll(async () => {
  await fixture.cleanup();
  await rm(root, { recursive: true, force: true });
});

describe("fetch from an oci-layout store", () => {
  it("round trip: the bundle is installed byte for byte; a second fetch is a no-op", async () => {
    const out = join(root, "out-roundtrip");
    const reference = `${repository}@${staged.bundle.digest}`;
    const result = await fetchRelease({ reference, repository, outputDir: out, openTarget: openLayout, progress: null });
    expect(result.reference).toBe(reference);
    expect(result.artifactType).toBe("application/vnd.hermes-plugin-kit.release.v2");
    expect(result.version).toBe("0.8.0");
    expect(result.files.map((f) => f.path)).toEqual(["dist/demo-plugin-0.8.0.tgz", "release-manifest.json", "release-payload.sha256", "release-source.bundle"]);
    for (const [path, local] of fixture.files) {
      expect((await readFile(join(out, path))).equals(await readFile(local))).toBe(true);
    }
    const again = await fetchRelease({ reference, repository, outputDir: out, openTarget: openLayout, progress: null });
    expect(again).toEqual(result);
  });

  it("fetches the receipt artifact and verifies it", async () => {
    const out = join(root, "out-receipt");
    const result = await fetchRelease({ reference: `${repository}@${staged.receipt.digest}`, repository, outputDir: out, openTarget: openLayout, progress: null, expect: "receipt" });
    expect(result.artifactType).toBe("application/vnd.hermes-plugin-kit.receipt.v2");
    expect((await readFile(join(out, "release-receipt.json"))).equals(staged.receiptBytes)).toBe(true);
  });

  it("draws the progress bar only on a TTY stream, nothing on a pipe", async () => {
    const lines: string[] = [];
    const tty = { isTTY: true, write: (s: string) => lines.push(s) } as unknown as NodeJS.WritableStream;
    const download = await downloadRelease({ reference: `${repository}@${staged.bundle.digest}`, repository, openTarget: openLayout, progress: tty, progressDelayMs: 0 });
    await download.cleanup();
    expect(lines.join("")).toMatch(/\rfetch +\[[#.]+\] +[0-9]+% /);
    expect(lines.join("")).toMatch(/\rfetch [0-9.]+ MiB in [0-9.]+ s \([0-9.]+ MB\/s\)\x1b\[K\n$/);
    const piped: string[] = [];
    const pipe = { write: (s: string) => piped.push(s) } as unknown as NodeJS.WritableStream;
    const again = await downloadRelease({ reference: `${repository}@${staged.bundle.digest}`, repository, openTarget: openLayout, progress: pipe, progressDelayMs: 0 });
    await again.cleanup();
    expect(piped).toEqual([]);
  });

  it("removes its private temp directory on success and failure", async () => {
    const parent = await mkdtemp(join(tmpdir(), "hpk-fetch-tmp-"));
    try {
      const download = await downloadRelease({ reference: `${repository}@${staged.bundle.digest}`, repository, openTarget: openLayout, progress: null, tmpDir: parent });
      expect((await readdir(parent)).length).toBe(1);
      await download.cleanup();
      expect(await readdir(parent)).toEqual([]);
      await expect(() => downloadRelease({ reference: `${repository}@${staged.bundle.digest}`, repository, openTarget: openLayout, progress: null, tmpDir: parent, expect: "receipt" })).toThrowWithCode("FETCH_ARTIFACT_TYPE_MISMATCH");
      expect(await readdir(parent)).toEqual([]);
    } finally {
      await rm(parent, { recursive: true, force: true });
    }
  });

  it("privacy: a group-readable store stops the fetch before any blob is read; D not created", async () => {
    const out = join(root, "out-groupreadable");
    let opened = 0;
    const counting: OpenReadTarget = async (repo) => {
      opened += 1;
      return openLayout(repo, { plainHttp: false });
    };
    await chmod(storeDir, 0o750);
    try {
      await expect(() => fetchRelease({ reference: `${repository}@${staged.bundle.digest}`, repository, outputDir: out, openTarget: counting, progress: null })).toThrowWithCode("PRIVACY_LAYOUT_PERMISSIONS");
    } finally {
      await chmod(storeDir, 0o700);
    }
    expect(opened).toBe(0);
    await expect(readdir(out)).rejects.toThrow();
  });

  it("a bit-flipped layer fails with OCI_DIGEST_MISMATCH; D not created", async () => {
    const out = join(root, "out-bitflip");
    const blob = layoutBlobPath(storeDir, "sha256:" + (await import("../support/release-fixture.js").then((m) => m.sha256File(fixture.files.get("release-source.bundle")!))));
    const original = await readFile(blob);
    const flipped = Buffer.from(original);
    flipped[0] = flipped[0]! ^ 0x01;
    await chmod(blob, 0o600);
    await writeFile(blob, flipped);
    try {
      const fetching = fetchRelease({ reference: `${repository}@${staged.bundle.digest}`, repository, outputDir: out, openTarget: openLayout, progress: null });
      await expect(() => fetching).toThrowWithCode("OCI_DIGEST_MISMATCH");
      // What it means and what to do, not only the two digests.
      await expect(fetching).rejects.toThrow(/the registry served other bytes than the pinned digest .*@sha256:[0-9a-f]{64} stands for; nothing was installed; fix: do not install these bytes.*report it to the release's publisher/);
    } finally {
      await writeFile(blob, original);
    }
    await expect(readdir(out)).rejects.toThrow();
  });

  it("a release copied into another store is refused there: RECEIPT_REGISTRY_MISMATCH naming the tested manifest and the store it was made for; nothing installed", async () => {
    const copyDir = join(root, "copied-store");
    await cp(storeDir, copyDir, { recursive: true });
    const copy = `oci-layout:${copyDir}`;
    const out = join(root, "out-copied");
    const fetching = fetchRelease({ reference: `${copy}@${staged.bundle.digest}`, repository: copy, outputDir: out, openTarget: openLayout, progress: null, policy: { sources: { repository: "the pinned reference" } } });
    await expect(() => fetching).toThrowWithCode("RECEIPT_REGISTRY_MISMATCH");
    await expect(fetching).rejects.toThrow(`tested manifest registry mismatch: registry_repository must be ${JSON.stringify(copy)} (from the pinned reference), found ${JSON.stringify(repository)}; this release was made for ${JSON.stringify(repository)} and verifies only from there`);
    const cli = await runCli(["fetch", "--reference", `${copy}@${staged.bundle.digest}`, "--output-dir", out]);
    expect(cli.code).toBe(1);
    expect(cli.stderr).toContain(`tested manifest registry mismatch: registry_repository must be ${JSON.stringify(copy)} (from the pinned reference)`);
    expect(cli.stderr).toContain(`fetch it from ${JSON.stringify(repository)}, or pin a release made for the repository you use [RECEIPT_REGISTRY_MISMATCH]`);
    await expect(readdir(out)).rejects.toThrow();
  });
});
