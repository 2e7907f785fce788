/**
 * Two `hermes-plugin-kit release publish` processes racing on the same
 * version (docs/release-run.md "`release publish`"): exactly one binds each tag, the other
 * converges; the store ends with one digest per tag and both processes
 * write identical receipt bytes and references. Runs the built CLI.
 */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stageRelease } from "../../release/stage.js";
import { openTarget } from "../../src/oci/open.js";
import { runCli } from "../support/cli.js";
import { createReleaseFixture, type ReleaseFixture } from "../support/release-fixture.js";
import { describeRegistry, startRegistry, type RunningRegistry } from "../support/registry.js";
import { createPipelineFixture, stageInputs, storeTags, type PipelineFixture } from "../support/release-pipeline-fixture.js";

let pf: PipelineFixture;
let reference: string;
let cwd: string;

beforeAll(async () => {
  pf = await createPipelineFixture();
  reference = (await stageRelease({ ...stageInputs(pf.fixture), repository: pf.repository, tag: pf.candidateTag })).bundle_reference;
  // The checkout the CLI runs in: its package.json names the package and the store.
  cwd = pf.root;
  await writeFile(join(cwd, "package.json"), JSON.stringify({ name: pf.fixture.packageName, version: "0.7.0", hermesPluginKit: { repository: pf.repository } }, null, 2) + "\n");
});

afterAll(async () => {
  await pf.cleanup();
});

describe("racing release publish processes", () => {
  it("exactly one binds v<V> and v<V>-receipt; both converge to the same receipt bytes", async () => {
    const run = (n: number) =>
      runCli(["release", "publish", "--reference", reference, "--output", join(cwd, `receipt-${n}.json`), "--references", join(cwd, `publication-${n}.json`)], { cwd });
    const [a, b] = await Promise.all([run(1), run(2)]);
    expect(a.code, a.stderr).toBe(0);
    expect(b.code, b.stderr).toBe(0);
    const ra = JSON.parse(a.stdout) as { bind: string; receipt_bind: string; receipt_reference: string };
    const rb = JSON.parse(b.stdout) as { bind: string; receipt_bind: string; receipt_reference: string };
    expect([ra.bind, rb.bind].sort()).toEqual(["already-tagged", "tagged"]);
    expect([ra.receipt_bind, rb.receipt_bind].sort()).toEqual(["already-tagged", "tagged"]);
    expect(ra.receipt_reference).toBe(rb.receipt_reference);
    expect((await readFile(join(cwd, "receipt-1.json"))).equals(await readFile(join(cwd, "receipt-2.json")))).toBe(true);
    expect(await readFile(join(cwd, "publication-1.json"), "utf8")).toBe(await readFile(join(cwd, "publication-2.json"), "utf8"));
    const tags = await storeTags(pf.storeDir);
    expect(tags).toEqual({
      [pf.candidateTag]: reference.split("@")[1],
      "v0.8.0": reference.split("@")[1],
      "v0.8.0-receipt": ra.receipt_reference.split("@")[1],
    });
    // One index entry per tag: nothing was duplicated by the race.
    const index = JSON.parse(await readFile(join(pf.storeDir, "index.json"), "utf8")) as { manifests: unknown[] };
    expect(index.manifests).toHaveLength(3);
  });

  it("a CLI failure exits 1 with a coded message (tag reference)", async () => {
    const result = await runCli(["release", "publish", "--reference", `${pf.repository}:v0.8.0`], { cwd });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("[REFERENCE_NOT_PINNED]");
  });
});

describeRegistry("racing release publish processes on a Bearer-auth registry", () => {
  let registry: RunningRegistry;
  let fixture: ReleaseFixture;
  let repository: string;
  let bundle: string;
  let credentials: { username: string; password: string };

  beforeAll(async () => {
    registry = await startRegistry({ auth: "bearer" });
    repository = `${registry.host}/acme/race-plugin`;
    credentials = { username: registry.username!, password: registry.password! };
    fixture = await createReleaseFixture({ registryRepository: repository, packageName: "race-plugin" });
    bundle = (await stageRelease({ ...stageInputs(fixture), repository, plainHttp: true, credentials, tag: `candidate-12345-${fixture.sourceSha}` })).bundle_reference;
    await writeFile(join(fixture.root, "package.json"), JSON.stringify({ name: "race-plugin", version: "0.7.0", hermesPluginKit: { repository } }) + "\n");
  });

  afterAll(async () => {
    await fixture?.cleanup();
    await registry?.stop();
  });

  it("both converge on one digest per tag and identical receipt bytes (HTTP tags have no compare-and-set)", async () => {
    const env = { REGISTRY_USERNAME: credentials.username, REGISTRY_PASSWORD: credentials.password };
    const run = (n: number) =>
      runCli(["release", "publish", "--plain-http", "--reference", bundle, "--output", join(fixture.root, `receipt-${n}.json`), "--references", join(fixture.root, `publication-${n}.json`)], { cwd: fixture.root, env });
    const [a, b] = await Promise.all([run(1), run(2)]);
    expect(a.code, a.stderr).toBe(0);
    expect(b.code, b.stderr).toBe(0);
    const ra = JSON.parse(a.stdout) as { bind: string; receipt_reference: string };
    const rb = JSON.parse(b.stdout) as { bind: string; receipt_reference: string };
    expect([ra.bind, rb.bind]).toContain("tagged");
    expect(ra.receipt_reference).toBe(rb.receipt_reference);
    expect((await readFile(join(fixture.root, "receipt-1.json"))).equals(await readFile(join(fixture.root, "receipt-2.json")))).toBe(true);
    const target = await openTarget(repository, { plainHttp: true, credentials });
    expect((await target.tags()).sort()).toEqual([`candidate-12345-${fixture.sourceSha}`, "v0.8.0", "v0.8.0-receipt"].sort());
    expect((await target.resolve("v0.8.0")).digest).toBe(bundle.split("@")[1]);
    expect((await target.resolve("v0.8.0-receipt")).digest).toBe(ra.receipt_reference.split("@")[1]);
    for (const output of [a, b]) expect(output.stdout + output.stderr).not.toContain(credentials.password);
  });
});
