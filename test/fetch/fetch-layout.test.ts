/**
 * fetch against an `oci-layout:` store (the embedded default store): round
 * trip, idempotence, privacy of the store directory, and blob tampering; the
 * library options are checked before any network or disk work.
 */
import { chmod, cp, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LayoutTarget } from "../../src/oci/layout-target.js";
import { layoutBlobPath } from "../../src/oci/layout.js";
import { downloadRelease, fetchRelease, inspectRelease, type DownloadOptions, type FetchReleaseOptions, type OpenReadTarget } from "../../src/fetch/fetch.js";
import { resolveTagReference } from "../../src/fetch/resolve.js";
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
      expect(await readdir(parent)).toEqual([expect.stringMatching(/^hpk-fetch-/)]);
      // dir (the payload) is inside the one directory cleanup() removes, with every local file.
      expect(dirname(download.dir)).toBe(join(parent, (await readdir(parent))[0] as string));
      for (const file of download.localFiles.values()) expect(file.startsWith(download.dir + "/")).toBe(true);
      await download.cleanup();
      expect(await readdir(parent)).toEqual([]);
      // Idempotent (docs/fetch.md "Downloading without installing"): a second call resolves and does nothing.
      await expect(download.cleanup()).resolves.toBeUndefined();
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

describe("library options: checked before any network or disk work, refused with a code naming the option", () => {
  /** A private TMPDIR (also `tmpDir`) and an output directory; the target opener counts its calls. */
  async function attempt(call: (context: { out: string; tmp: string; open: OpenReadTarget }) => Promise<unknown>): Promise<{ error: unknown; opened: number; leftInTmp: string[]; out: string }> {
    const tmp = await mkdtemp(join(root, "options-tmp-"));
    const out = join(root, `options-out-${tmp.slice(-6)}`);
    let opened = 0;
    const open: OpenReadTarget = async (repo, options) => {
      opened += 1;
      return openLayout(repo, options);
    };
    const saved = process.env["TMPDIR"];
    process.env["TMPDIR"] = tmp;
    try {
      const error = await call({ out, tmp, open }).then(() => undefined, (e: unknown) => e);
      return { error, opened, leftInTmp: await readdir(tmp), out };
    } finally {
      if (saved === undefined) delete process.env["TMPDIR"];
      else process.env["TMPDIR"] = saved;
    }
  }
  const reference = () => `${repository}@${staged.bundle.digest}`;
  const base = (out: string, tmp: string, open: OpenReadTarget): FetchReleaseOptions => ({ reference: reference(), repository, outputDir: out, openTarget: open, progress: null, tmpDir: tmp });
  const downloadBase = (tmp: string, open: OpenReadTarget): DownloadOptions => ({ reference: reference(), repository, openTarget: open, progress: null, tmpDir: tmp });

  it.each([
    ["fetchRelease(undefined)", "POLICY_INVALID", /^fetchRelease needs its options as an object \{ reference, outputDir, repository\?, .*\}, found nothing$/, () => fetchRelease(undefined as never)],
    ["fetchRelease(null)", "POLICY_INVALID", /^fetchRelease needs its options as an object .*, found null$/, () => fetchRelease(null as never)],
    ["fetchRelease(a reference string)", "POLICY_INVALID", /^fetchRelease needs its options as an object .*, found "oci-layout:/, () => fetchRelease(reference() as never)],
    ["downloadRelease(undefined)", "POLICY_INVALID", /^downloadRelease needs its options as an object \{ reference, repository\?, .*\}, found nothing$/, () => downloadRelease(undefined as never)],
    ["inspectRelease([])", "POLICY_INVALID", /^inspectRelease needs its options as an object .*, found an array$/, () => inspectRelease([] as never)],
    ["expect: \"bundel\"", "POLICY_INVALID", /^fetchRelease option expect must be "bundle" or "receipt" \(the artifact kind to accept; omit it to accept either\), found "bundel"$/, (c: Ctx) => fetchRelease({ ...base(c.out, c.tmp, c.open), expect: "bundel" as never })],
    ["downloadRelease expect: 1", "POLICY_INVALID", /^downloadRelease option expect must be "bundle" or "receipt" .*, found number 1$/, (c: Ctx) => downloadRelease({ ...downloadBase(c.tmp, c.open), expect: 1 as never })],
    // downloadRelease installs nothing: an outputDir given to it would be ignored (fetchRelease installs).
    ["downloadRelease outputDir (fetchRelease's option)", "POLICY_INVALID", /^downloadRelease option "outputDir" is not one it reads \(it reads reference, repository, /, (c: Ctx) => downloadRelease({ ...downloadBase(c.tmp, c.open), outputDir: c.out } as never)],
    ["inspectRelease provenance (fetchRelease's option)", "POLICY_INVALID", /^inspectRelease option "provenance" is not one it reads/, (c: Ctx) => inspectRelease({ ...downloadBase(c.tmp, c.open), provenance: { policy: { owner: "acme" } } } as never)],
    // Options of the wrong kind: plainHttp "yes" would be read as false, a signal that is none would never stop the call.
    ["signal: \"stop\"", "POLICY_INVALID", /^fetchRelease option signal must be an AbortSignal \(e\.g\. new AbortController\(\)\.signal: a boolean aborted, addEventListener and removeEventListener\), found "stop"$/, (c: Ctx) => fetchRelease({ ...base(c.out, c.tmp, c.open), signal: "stop" as never })],
    // Accepted by duck typing on `"aborted" in value` while the transport refused it.
    ["signal: { aborted: \"no\" }", "POLICY_INVALID", /^fetchRelease option signal must be an AbortSignal \(.*\), found /, (c: Ctx) => fetchRelease({ ...base(c.out, c.tmp, c.open), signal: { aborted: "no" } as never })],
    ["plainHttp: \"yes\"", "POLICY_INVALID", /^downloadRelease option plainHttp must be true or false, found "yes"$/, (c: Ctx) => downloadRelease({ ...downloadBase(c.tmp, c.open), plainHttp: "yes" as never })],
    ["tmpDir: 5", "POLICY_INVALID", /^inspectRelease option tmpDir must be a non-empty string, found number 5$/, (c: Ctx) => inspectRelease({ ...downloadBase(c.tmp, c.open), tmpDir: 5 as never })],
    ["progressDelayMs: -1", "POLICY_INVALID", /^fetchRelease option progressDelayMs must be a finite number >= 0, found number -1$/, (c: Ctx) => fetchRelease({ ...base(c.out, c.tmp, c.open), progressDelayMs: -1 })],
    ["replace: \"yes\"", "POLICY_INVALID", /^fetchRelease option replace must be true or false, found "yes"$/, (c: Ctx) => fetchRelease({ ...base(c.out, c.tmp, c.open), replace: "yes" as never })],
    // A credential given as a string is refused by its type only: the message never holds the secret.
    ["credentials: a string", "POLICY_INVALID", /^fetchRelease option credentials must be an object, found a string$/, (c: Ctx) => fetchRelease({ ...base(c.out, c.tmp, c.open), credentials: "alice:s3cret-value" as never })],
    ["resolveTagReference plainHtp (misspelt)", "POLICY_INVALID", /^resolveTagReference option "plainHtp" is not one it reads .*did you mean "plainHttp"\?/, () => resolveTagReference(`${repository}:v0.8.0`, { plainHtp: true } as never)],
    ["resolveTagReference openTarget: 5", "POLICY_INVALID", /^resolveTagReference option openTarget must be a function, found number 5$/, () => resolveTagReference(`${repository}:v0.8.0`, { openTarget: 5 } as never)],
    ["provenance: {}", "PROVENANCE_POLICY_INVALID", /^fetchRelease option provenance.policy must be an object \(who may have signed: a key, or --owner\/--repo \.\.\.\), found nothing; expected provenance \{ policy: /, (c: Ctx) => fetchRelease({ ...base(c.out, c.tmp, c.open), provenance: {} as never })],
    ["provenance: true", "PROVENANCE_POLICY_INVALID", /^fetchRelease option provenance must be \{ policy: .*\}, found boolean true$/, (c: Ctx) => fetchRelease({ ...base(c.out, c.tmp, c.open), provenance: true as never })],
    ["provenance: { policy: {} }", "PROVENANCE_POLICY_INVALID", /^a keyless provenance policy needs --owner or --repo/, (c: Ctx) => fetchRelease({ ...base(c.out, c.tmp, c.open), provenance: { policy: {} } })],
    ["repository: 42", "POLICY_INVALID", /^fetchRelease option repository must be the registry repository you trust, e\.g\. ghcr\.io\/acme\/plugin \(a non-empty string\), found number 42$/, (c: Ctx) => fetchRelease({ ...base(c.out, c.tmp, c.open), repository: 42 as never })],
    ["repository: another store", "REFERENCE_REPOSITORY_MISMATCH", /./, (c: Ctx) => fetchRelease({ ...base(c.out, c.tmp, c.open), repository: `oci-layout:${root}/other-store` })],
    ["no outputDir", "POLICY_INVALID", /^fetchRelease option outputDir must be the output directory to install into \(a non-empty string\), found nothing$/, (c: Ctx) => fetchRelease({ ...base(c.out, c.tmp, c.open), outputDir: undefined as never })],
    ["policy: \"strict\"", "POLICY_INVALID", /^fetchRelease option policy must be an object \{ package\?, gates\?, sources\? \}, found "strict"$/, (c: Ctx) => fetchRelease({ ...base(c.out, c.tmp, c.open), policy: "strict" as never })],
    ["policy.package: 42", "POLICY_INVALID", /^fetchRelease option policy\.package must be an npm package name \(lowercase letters, .*, at most 214 characters\), found number 42$/, (c: Ctx) => fetchRelease({ ...base(c.out, c.tmp, c.open), policy: { package: 42 as never } })],
    ["reference: undefined", "REFERENCE_NOT_PINNED", /found nothing$/, (c: Ctx) => fetchRelease({ ...base(c.out, c.tmp, c.open), reference: undefined as never })],
    // A misspelt option would be ignored and check less than asked (provenanse installed unsigned bytes).
    ["provenanse (misspelt)", "POLICY_INVALID", /^fetchRelease option "provenanse" is not one it reads \(it reads .*\); did you mean "provenance"\?; an ignored option would check less than you asked$/, (c: Ctx) => fetchRelease({ ...base(c.out, c.tmp, c.open), provenanse: { policy: { key: "x" } } } as never)],
    ["downloadRelease repositry (misspelt)", "POLICY_INVALID", /did you mean "repository"\?/, (c: Ctx) => downloadRelease({ ...downloadBase(c.tmp, c.open), repositry: "x" } as never)],
    ["policy.gate (misspelt)", "POLICY_INVALID", /^fetchRelease policy key "gate" is not one it reads \(it reads package, gates, sources\); did you mean "gates"\?/, (c: Ctx) => fetchRelease({ ...base(c.out, c.tmp, c.open), policy: { gate: { unit: "evil" } } as never })],
    ["policy.sources.gate (misspelt)", "POLICY_INVALID", /^fetchRelease policy\.sources key "gate" is not one it reads \(it reads package, repository, gates\); did you mean "gates"\?/, (c: Ctx) => fetchRelease({ ...base(c.out, c.tmp, c.open), policy: { sources: { gate: "--expect-gate" } } as never })],
    ["policy.sources.gates: 5", "POLICY_INVALID", /^fetchRelease policy\.sources option gates must be a non-empty string, found number 5$/, (c: Ctx) => fetchRelease({ ...base(c.out, c.tmp, c.open), policy: { sources: { gates: 5 } } as never })],
    ["provenance.trustedRot (misspelt)", "PROVENANCE_POLICY_INVALID", /^fetchRelease option provenance has "trustedRot", which it does not read \(did you mean "trustedRoot"\?\)/, (c: Ctx) => fetchRelease({ ...base(c.out, c.tmp, c.open), provenance: { policy: { owner: "acme" }, trustedRot: {} } as never })],
    ["resolveTagReference(undefined)", "TAG_REFERENCE_INVALID", /^expected <repository>:<tag> \(a string, e\.g\. ghcr\.io\/acme\/plugin:v1\.2\.0\), found nothing$/, () => resolveTagReference(undefined as never)],
    ["resolveTagReference(tag, null)", "POLICY_INVALID", /^resolveTagReference needs its options as an object \{ plainHttp\?, .*\}, found null$/, () => resolveTagReference(`${repository}:v0.8.0`, null as never)],
  ] as Array<[string, string, RegExp, (c: Ctx) => Promise<unknown>]>)("%s -> %s before any read; no temp directory, no output directory", async (_name, code, message, call) => {
    const run = await attempt(call);
    expect(run.error).toThrowWithCode(code);
    expect((run.error as Error).message).toMatch(message);
    expect(run.opened).toBe(0);
    expect(run.leftInTmp).toEqual([]);
    await expect(readdir(run.out)).rejects.toThrow(/ENOENT/);
  });

  it("passing: without repository the library pins the repository of the reference, as fetch does (a mismatch says it came from the pinned reference); expect \"bundle\" and \"receipt\" are accepted", async () => {
    const run = await attempt(({ out, tmp, open }) => fetchRelease({ reference: reference(), outputDir: out, openTarget: open, progress: null, tmpDir: tmp, expect: "bundle" }));
    expect(run.error).toBeUndefined();
    expect(run.opened).toBe(1);
    expect(run.leftInTmp).toEqual([]);
    expect((await readdir(run.out)).sort()).toEqual(["dist", "release-manifest.json", "release-payload.sha256", "release-source.bundle"]);
    const receipt = await attempt(({ out, tmp, open }) => fetchRelease({ reference: `${repository}@${staged.receipt.digest}`, outputDir: out, openTarget: open, progress: null, tmpDir: tmp, expect: "receipt" }));
    expect(receipt.error).toBeUndefined();
    expect(await readdir(receipt.out)).toEqual(["release-receipt.json"]);
    // A copy in another store, fetched without repository: the same refusal and wording as the CLI's.
    const copyDir = join(root, "copied-store-2");
    await cp(storeDir, copyDir, { recursive: true });
    const copied = await attempt(({ out, tmp, open }) => fetchRelease({ reference: `oci-layout:${copyDir}@${staged.bundle.digest}`, outputDir: out, openTarget: open, progress: null, tmpDir: tmp }));
    expect(copied.error).toThrowWithCode("RECEIPT_REGISTRY_MISMATCH");
    expect((copied.error as Error).message).toContain(`registry_repository must be ${JSON.stringify(`oci-layout:${copyDir}`)} (from the pinned reference)`);
    expect(copied.leftInTmp).toEqual([]);
    await expect(readdir(copied.out)).rejects.toThrow(/ENOENT/);
  });

  it("passing: a well-formed provenance policy is checked after the download (here no attestation: PROVENANCE_NOT_FOUND), nothing installed or left", async () => {
    const run = await attempt(({ out, tmp, open }) => fetchRelease({ ...base(out, tmp, open), provenance: { policy: { owner: "acme" } } }));
    expect(run.error).toThrowWithCode("PROVENANCE_NOT_FOUND");
    expect(run.opened).toBe(1);
    expect(run.leftInTmp).toEqual([]);
    await expect(readdir(run.out)).rejects.toThrow(/ENOENT/);
  });

  it("passing: every option of its kind is accepted (a real AbortSignal, false flags, a 0 ms delay, a stream); downloadRelease reads only its own options", async () => {
    const controller = new AbortController();
    const run = await attempt(({ out, tmp, open }) =>
      fetchRelease({ ...base(out, tmp, open), signal: controller.signal, plainHttp: false, replace: false, progressDelayMs: 0, progressLines: false, progress: process.stderr, env: { PATH: process.env["PATH"] }, onCommit: () => undefined, onManifest: () => undefined }),
    );
    expect(run.error).toBeUndefined();
    expect(run.opened).toBe(1);
    const download = await attempt(async ({ tmp, open }) => {
      const got = await downloadRelease({ ...downloadBase(tmp, open), signal: controller.signal, expect: "bundle", policy: { package: "demo-plugin" } });
      await got.cleanup();
    });
    expect(download.error).toBeUndefined();
    expect(download.leftInTmp).toEqual([]);
  });

  it("passing: resolveTagReference with its options resolves the tag to the pinned reference", async () => {
    const resolved = await resolveTagReference(`${repository}:v0.8.0`, { openTarget: openLayout });
    expect(resolved.reference).toBe(reference());
  });
});

type Ctx = { out: string; tmp: string; open: OpenReadTarget };
