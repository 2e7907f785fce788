/**
 * Racing writers against Debian's docker-registry: several `copy` calls push
 * the same artifact (as two `release publish` processes push the same
 * receipt) at once. The registry's filesystem driver rewrites a blob's link
 * file in place when a second writer commits the same blob, so a manifest PUT
 * of the first writer can meet an empty link and be refused with
 * `HTTP 400 (DIGEST_INVALID, MANIFEST_BLOB_UNKNOWN)` (the failure seen once in
 * `publish-race.test.ts` under load). Every writer must converge: blobs
 * confirmed again, the manifest pushed again, the tag naming the digest.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { LayoutTarget, RegistryTarget, copy, fetchManifest, writeLayout, type Target } from "../../src/oci/index.js";
import { describeRegistry, startRegistry, type RunningRegistry } from "../support/registry.js";

describeRegistry("racing writers of one artifact", () => {
  let registry: RunningRegistry;
  let work: string;
  beforeAll(async () => {
    registry = await startRegistry({ auth: "none" });
    work = await mkdtemp(path.join(os.tmpdir(), "hpk-race-"));
  });
  afterAll(async () => {
    await registry?.stop();
    await rm(work, { recursive: true, force: true });
  });

  it("three writers x 20 rounds all succeed and each tag names the digest", async () => {
    const refused: string[] = [];
    const watched = (t: Target): Target => ({
      resolve: (r) => t.resolve(r),
      fetch: (d) => t.fetch(d),
      exists: (d) => t.exists(d),
      tags: () => t.tags(),
      tag: (d, g) => t.tag(d, g),
      async push(d, c) {
        try {
          await t.push(d, c);
        } catch (error) {
          refused.push((error as { code?: string }).code ?? "?");
          throw error;
        }
      },
    });
    for (let round = 0; round < 20; round += 1) {
      const file = path.join(work, `receipt-${round}.json`);
      await writeFile(file, randomBytes(64 * 1024));
      const layout = path.join(work, `layout-${round}`);
      const { manifest } = await writeLayout(layout, "application/vnd.hermes-plugin-kit.receipt.v2", new Map([["release-receipt.json", file]]));
      const writer = async (): Promise<string> => {
        const dst = new RegistryTarget({ registry: registry.host, repository: "acme/race", plainHttp: true });
        try {
          return (await copy(await LayoutTarget.open(layout), watched(dst), manifest.digest, { tag: `v${round}` })).digest;
        } finally {
          await dst.close();
        }
      };
      const digests = await Promise.all([writer(), writer(), writer()]);
      expect(digests).toEqual([manifest.digest, manifest.digest, manifest.digest]);
      const reader = new RegistryTarget({ registry: registry.host, repository: "acme/race", plainHttp: true });
      const tagged = await reader.resolve(`v${round}`);
      expect(tagged.digest).toBe(manifest.digest);
      expect((await fetchManifest(reader, tagged)).length).toBe(manifest.size);
    }
    // Only the race's refusal may have happened on the way (and was repeated); nothing else.
    expect(refused.filter((code) => code !== "OCI_MANIFEST_BLOB_UNKNOWN")).toEqual([]);
  });
});
