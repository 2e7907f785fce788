/**
 * `release run` against Debian's registry with Basic auth on loopback (the
 * `--start-registry` path of the demo): every step runs, credentials come in
 * as options, a rerun re-verifies every step through the registry.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { openTarget } from "../../src/oci/open.js";
import { runRelease, type RunResult } from "../../release/run.js";
import { describeRegistry, startRegistry, type RunningRegistry } from "../support/registry.js";
import { createRunFixture, type RunFixture } from "../support/release-run-fixture.js";

describeRegistry("release run through a Basic-auth registry", () => {
  let registry: RunningRegistry;
  let rf: RunFixture;
  let repository: string;

  beforeAll(async () => {
    registry = await startRegistry({ auth: "basic" });
    repository = `${registry.host}/acme/fixture-plugin`;
    rf = await createRunFixture("fixture-plugin", undefined, repository);
  });

  afterAll(async () => {
    await rf?.cleanup();
    await registry?.stop();
  });

  it("releases, then a rerun verifies every step and converges", async () => {
    const credentials = { username: registry.username!, password: registry.password! };
    const options = { source: rf.repo.dir, workspace: rf.workspace, env: { ...process.env, SEMANTIC_RELEASE_ENABLED: "true" }, progress: null, runId: "31", plainHttp: true, credentials };
    const first = (await runRelease(options)) as Extract<RunResult, { released: true }>;
    expect(first.released).toBe(true);
    expect(first.bundle_reference.startsWith(`${repository}@sha256:`)).toBe(true);
    const target = await openTarget(repository, { plainHttp: true, credentials });
    expect((await target.tags()).sort()).toEqual([`candidate-31-${first.release_sha}`, "v0.8.0", "v0.8.0-receipt"].sort());
    expect((await target.resolve("v0.8.0")).digest).toBe(first.bundle_reference.split("@")[1]);
    const again = (await runRelease(options)) as Extract<RunResult, { released: true }>;
    expect(again.steps.filter((s) => s.status !== "skipped").map((s) => s.status)).toEqual(Array(10).fill("verified"));
    expect({ ...again, steps: [] }).toEqual({ ...first, steps: [] });
  }, 180_000); // a release run and its rerun against a real registry: 35 s in one loaded CI run, over 60 s in another
});
