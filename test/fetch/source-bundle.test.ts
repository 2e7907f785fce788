import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifySourceBundleFile, type SourceBundleExpectation } from "../../src/fetch/source-bundle.js";
import {
  createReleaseFixture,
  fixtureGit,
  variantWithRefsAtOtherCommit,
  variantWithTruncatedBundle,
  type ReleaseFixture,
} from "../support/release-fixture.js";

/** The fix a disagreement between a release's own files ends with, as a regular expression. */
const RELEASE_FIX = "; fix: the release's own files disagree with each other, and a fetch verifies every byte against the pinned digest, so the release was published this way: do not install it, and tell its publisher".replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

let fixture: ReleaseFixture;
let scratchParent: string;
let expectation: SourceBundleExpectation;
const cleanups: Array<() => Promise<void>> = [];

beforeAll(async () => {
  fixture = await createReleaseFixture({ registryRepository: "127.0.0.1:5000/acme/demo-plugin" });
  scratchParent = await mkdtemp(join(tmpdir(), "hpk-scratch-parent-"));
  expectation = { sourceSha: fixture.sourceSha, tag: `v${fixture.version}`, packageName: fixture.packageName, version: fixture.version };
});

afterAll(async () => {
  for (const c of cleanups) await c();
  await fixture.cleanup();
  await rm(scratchParent, { recursive: true, force: true });
});

function bundleOf(f: ReleaseFixture): string {
  return f.files.get("release-source.bundle")!;
}

async function bundleWith(refs: string[]): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "hpk-bundle-"));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const path = join(dir, "b.bundle");
  await fixtureGit(fixture.repoDir, ["bundle", "create", "--quiet", path, ...refs]);
  return path;
}

describe("verifySourceBundleFile", () => {
  it("accepts the release bundle and leaves no scratch repository behind", async () => {
    await verifySourceBundleFile(bundleOf(fixture), expectation, { tmpDir: scratchParent });
    expect(await readdir(scratchParent)).toEqual([]);
  });

  it("ignores a hostile inherited git environment (GIT_DIR, GIT_CONFIG_*)", async () => {
    const saved = { ...process.env };
    process.env["GIT_DIR"] = "/nonexistent";
    process.env["GIT_CONFIG_COUNT"] = "1";
    process.env["GIT_CONFIG_KEY_0"] = "core.hooksPath";
    process.env["GIT_CONFIG_VALUE_0"] = "/tmp/evil-hooks";
    try {
      await verifySourceBundleFile(bundleOf(fixture), expectation);
    } finally {
      for (const k of ["GIT_DIR", "GIT_CONFIG_COUNT", "GIT_CONFIG_KEY_0", "GIT_CONFIG_VALUE_0"]) {
        if (saved[k] === undefined) delete process.env[k];
        else process.env[k] = saved[k];
      }
    }
  });

  it("refuses refs that point at another commit", async () => {
    const variant = await variantWithRefsAtOtherCommit(fixture);
    cleanups.push(variant.cleanup);
    await expect(() => verifySourceBundleFile(bundleOf(variant), expectation, { tmpDir: scratchParent })).toThrowWithCode("SOURCE_BUNDLE_SHA_MISMATCH");
    // Names the tested manifest's source and ends with the fix (the release's files disagree).
    await expect(verifySourceBundleFile(bundleOf(variant), expectation, { tmpDir: scratchParent })).rejects.toThrow(new RegExp(`, the tested manifest's source_sha is ${expectation.sourceSha}${RELEASE_FIX}$`));
    expect(await readdir(scratchParent)).toEqual([]);
  });

  it("refuses a truncated bundle (caught by the real unbundle)", async () => {
    const variant = await variantWithTruncatedBundle(fixture);
    cleanups.push(variant.cleanup);
    await expect(() => verifySourceBundleFile(bundleOf(variant), expectation, { tmpDir: scratchParent })).toThrowWithCode("SOURCE_BUNDLE_GIT_FAILED");
    expect(await readdir(scratchParent)).toEqual([]);
  });

  it("refuses a bundle whose pack data is corrupted in the middle", async () => {
    const dir = await mkdtemp(join(tmpdir(), "hpk-corrupt-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const bytes = Buffer.from(await readFile(bundleOf(fixture)));
    const packStart = bytes.indexOf(Buffer.from("PACK"));
    expect(packStart).toBeGreaterThan(0);
    const at = packStart + Math.floor((bytes.length - packStart) / 2);
    bytes[at] = bytes[at]! ^ 0xff;
    const path = join(dir, "corrupt.bundle");
    await writeFile(path, bytes);
    await expect(() => verifySourceBundleFile(path, expectation)).toThrowWithCode("SOURCE_BUNDLE_GIT_FAILED");
    await expect(verifySourceBundleFile(path, expectation)).rejects.toThrow(/: the bundle is truncated or corrupt, needs commits it does not carry, or git could not work here; fix: check that git runs and TMPDIR has room, then fetch again; if it fails the same way, the release's source bundle is broken: do not install it, and tell its publisher$/);
  });

  it("refuses a file that is not a bundle", async () => {
    const dir = await mkdtemp(join(tmpdir(), "hpk-notbundle-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    await writeFile(join(dir, "x.bundle"), "not a bundle\n");
    await expect(() => verifySourceBundleFile(join(dir, "x.bundle"), expectation)).toThrowWithCode("SOURCE_BUNDLE_GIT_FAILED");
  });

  it("refuses an extra ref, a missing ref and another tag", async () => {
    const extra = await bundleWith(["refs/heads/release-candidate", `refs/tags/v${fixture.version}`, "refs/heads/main"]);
    await expect(() => verifySourceBundleFile(extra, expectation)).toThrowWithCode("SOURCE_BUNDLE_REFS_MISMATCH");
    const missing = await bundleWith(["refs/heads/release-candidate"]);
    await expect(() => verifySourceBundleFile(missing, expectation)).toThrowWithCode("SOURCE_BUNDLE_REFS_MISMATCH");
    await expect(() => verifySourceBundleFile(bundleOf(fixture), { ...expectation, tag: "v9.9.9" })).toThrowWithCode("SOURCE_BUNDLE_REFS_MISMATCH");
    await expect(verifySourceBundleFile(extra, expectation)).rejects.toThrow(new RegExp(`${RELEASE_FIX}$`));
  });

  it("refuses a bundle with prerequisites (not self-contained)", async () => {
    const thin = await bundleWith([`${fixture.sourceSha}~1..refs/heads/release-candidate`, `refs/tags/v${fixture.version}`]);
    await expect(() => verifySourceBundleFile(thin, expectation)).toThrowWithCode("SOURCE_BUNDLE_GIT_FAILED");
  });

  it("refuses package.json with another name or version at source_sha", async () => {
    await expect(() => verifySourceBundleFile(bundleOf(fixture), { ...expectation, version: "0.8.1" })).toThrowWithCode("SOURCE_BUNDLE_PACKAGE_MISMATCH");
    await expect(() => verifySourceBundleFile(bundleOf(fixture), { ...expectation, packageName: "other" })).toThrowWithCode("SOURCE_BUNDLE_PACKAGE_MISMATCH");
    await expect(verifySourceBundleFile(bundleOf(fixture), { ...expectation, packageName: "other" })).rejects.toThrow(new RegExp(`, the tested manifest "other"@"${expectation.version}"${RELEASE_FIX}$`));
  });

  it("reports a missing git executable as SOURCE_BUNDLE_GIT_FAILED", async () => {
    await expect(() => verifySourceBundleFile(bundleOf(fixture), expectation, { git: "/nonexistent/git" })).toThrowWithCode("SOURCE_BUNDLE_GIT_FAILED");
  });

  it("refuses a malformed source_sha before running git", async () => {
    await expect(() => verifySourceBundleFile(bundleOf(fixture), { ...expectation, sourceSha: "HEAD" })).toThrowWithCode("SOURCE_BUNDLE_SHA_MISMATCH");
  });
});
