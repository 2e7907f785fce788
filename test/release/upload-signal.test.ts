/**
 * The run's signal reaches the uploads of its steps (release/registry-access.ts -> src/oci copy's
 * `signal`): an aborted run pushes nothing more and binds no tag.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ReleasePolicy } from "../../src/contract/policy.js";
import { bootstrapPusher, resolveAccess } from "../../release/registry-access.js";

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "hpk-upload-signal-"));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** The tags of a layout store's index.json. */
async function tags(store: string): Promise<string[]> {
  const index = JSON.parse(await readFile(join(store, "index.json"), "utf8")) as { manifests: { annotations?: Record<string, string> }[] };
  return index.manifests.map((m) => m.annotations?.["org.opencontainers.image.ref.name"] ?? "");
}

describe("the run's signal stops its uploads", () => {
  it("an aborted signal: the bootstrap upload rejects with INTERRUPTED and no tag is bound; without one it is pushed and tagged", async () => {
    const store = join(root, "aborted");
    const repository = `oci-layout:${store}`;
    const policy = { registryRepository: repository } as ReleasePolicy;
    const controller = new AbortController();
    controller.abort();
    const aborted = resolveAccess({ repository, signal: controller.signal, env: {} }, policy);
    await expect(bootstrapPusher(aborted, root)()).toThrowWithCode("INTERRUPTED");
    expect(await tags(store)).toEqual([]);
    await bootstrapPusher(resolveAccess({ repository, env: {} }, policy), root)();
    expect(await tags(store)).toEqual(["private-bootstrap"]);
  });
});
