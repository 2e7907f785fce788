/**
 * A valid release bundle payload built from real parts, for fetch tests: a
 * real git repository whose release commit has a `package.json`, a real
 * `git bundle` holding exactly `refs/heads/release-candidate` and
 * `refs/tags/v<version>`, a real `npm pack` tarball, a tested manifest made
 * by the contract's own `createTestedManifest`, and `release-payload.sha256`.
 *
 * Every variant a tampering test needs (refs at another commit, a truncated
 * bundle, edited checksum lines) is produced by rebuilding the payload with
 * consistent checksums, so the test reaches the check it targets.
 */
import { execFile } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { copyFile, mkdir, mkdtemp, readFile, rm, truncate, writeFile, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import {
  DEFAULT_GATE_COMMANDS,
  createTestedManifest,
  inspectDistDir,
  testedManifestBytes,
  type PackagePolicy,
  type TestedManifest,
} from "../../src/contract/index.js";
import { bundleChecksumPaths, formatPayloadChecksums } from "../../src/contract/payload.js";
import { packTinyPackage, passedGates } from "./contract-fixture.js";
import { createReleaseTag } from "../../release/release-tag.js";

const run = promisify(execFile);

/** Options of {@link createReleaseFixture}. */
export interface ReleaseFixtureOptions {
  /** The registry repository the manifest names (policy.registryRepository). */
  registryRepository: string;
  /** npm package name (default `demo-plugin`). */
  packageName?: string;
  /** Release version (default `0.8.0`); previous is one minor below. */
  version?: string;
  /** Commit this many incompressible bytes (`assets/pad.bin`) so the source bundle is at least that large. */
  padSourceBytes?: number;
}

/** A built payload: payload path -> local file. */
export interface ReleaseFixture {
  root: string;
  policy: PackagePolicy;
  packageName: string;
  version: string;
  /** The release commit the manifest names. */
  sourceSha: string;
  /** A second commit (not the release) for "refs at another commit" variants. */
  otherSha: string;
  manifest: TestedManifest;
  tarballName: string;
  /** The 4 bundle payload files, payload path -> absolute local path. */
  files: Map<string, string>;
  /** The bundle's git repository. */
  repoDir: string;
  cleanup(): Promise<void>;
}

function gitEnv(): NodeJS.ProcessEnv {
  return {
    PATH: process.env["PATH"],
    HOME: tmpdir(),
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_AUTHOR_NAME: "Fixture Author",
    GIT_AUTHOR_EMAIL: "fixture@example.invalid",
    GIT_COMMITTER_NAME: "Fixture Author",
    GIT_COMMITTER_EMAIL: "fixture@example.invalid",
    GIT_AUTHOR_DATE: "1767225600 +0000",
    GIT_COMMITTER_DATE: "1767225600 +0000",
  };
}

/** Run git with isolated config in `cwd`; returns trimmed stdout. */
export async function fixtureGit(cwd: string, args: string[]): Promise<string> {
  const { stdout } = await run("git", ["-c", "core.hooksPath=/dev/null", "-c", "commit.gpgsign=false", "-c", "tag.gpgsign=false", ...args], { cwd, env: gitEnv() });
  return stdout.trim();
}

/** SHA-256 hex of a file. */
export async function sha256File(path: string): Promise<string> {
  return createHash("sha256").update(await readFile(path)).digest("hex");
}

/**
 * Build a valid release payload in a fresh temp directory.
 */
export async function createReleaseFixture(options: ReleaseFixtureOptions): Promise<ReleaseFixture> {
  const packageName = options.packageName ?? "demo-plugin";
  const version = options.version ?? "0.8.0";
  const [major, minor] = version.split(".").map(Number) as [number, number];
  const previousVersion = minor > 0 ? `${major}.${minor - 1}.0` : `${major - 1}.0.0`;
  const policy: PackagePolicy = { package: packageName, registryRepository: options.registryRepository, gates: { ...DEFAULT_GATE_COMMANDS }, install: "npm ci" };
  const root = await mkdtemp(join(tmpdir(), "hpk-fixture-"));
  const repoDir = join(root, "repo");
  await mkdir(repoDir);
  await fixtureGit(repoDir, ["init", "--quiet", "--initial-branch=main"]);
  await writeFile(join(repoDir, "package.json"), JSON.stringify({ name: packageName, version: previousVersion }, null, 2) + "\n");
  await writeFile(join(repoDir, "index.js"), "export const answer = 42;\n");
  if (options.padSourceBytes !== undefined) {
    await mkdir(join(repoDir, "assets"));
    await writeFile(join(repoDir, "assets", "pad.bin"), randomBytes(options.padSourceBytes));
  }
  await fixtureGit(repoDir, ["add", "-A"]);
  await fixtureGit(repoDir, ["commit", "--quiet", "-m", "feat: initial"]);
  await writeFile(join(repoDir, "package.json"), JSON.stringify({ name: packageName, version }, null, 2) + "\n");
  await writeFile(join(repoDir, "CHANGELOG.md"), `# ${version}\n`);
  await fixtureGit(repoDir, ["add", "-A"]);
  await fixtureGit(repoDir, ["commit", "--quiet", "-m", `chore(release): v${version}`]);
  const sourceSha = await fixtureGit(repoDir, ["rev-parse", "HEAD"]);
  await writeFile(join(repoDir, "later.txt"), "later\n");
  await fixtureGit(repoDir, ["add", "-A"]);
  await fixtureGit(repoDir, ["commit", "--quiet", "-m", "fix: later"]);
  const otherSha = await fixtureGit(repoDir, ["rev-parse", "HEAD"]);
  await fixtureGit(repoDir, ["branch", "release-candidate", sourceSha]);
  await createReleaseTag(repoDir, version, sourceSha);

  const payloadDir = join(root, "payload");
  await mkdir(payloadDir);
  await fixtureGit(repoDir, ["bundle", "create", "--quiet", join(payloadDir, "release-source.bundle"), "refs/heads/release-candidate", `refs/tags/v${version}`]);
  const dist = await packTinyPackage(join(root, "pack"), packageName, version);
  const tarballName = `${packageName.startsWith("@") ? packageName.slice(1).replace("/", "-") : packageName}-${version}.tgz`;
  await mkdir(join(payloadDir, "dist"));
  await copyFile(join(dist, tarballName), join(payloadDir, "dist", tarballName));
  const manifest = createTestedManifest({
    policy,
    previousVersion,
    version,
    tag: `v${version}`,
    sourceSha,
    runId: "12345",
    runAttempt: 1,
    gates: passedGates(sourceSha, policy),
    artifacts: await inspectDistDir(join(payloadDir, "dist"), policy, version),
  });
  await writeFile(join(payloadDir, "release-manifest.json"), testedManifestBytes(manifest));
  const files = new Map<string, string>([
    ["release-source.bundle", join(payloadDir, "release-source.bundle")],
    ["release-manifest.json", join(payloadDir, "release-manifest.json")],
    [`dist/${tarballName}`, join(payloadDir, "dist", tarballName)],
    ["release-payload.sha256", join(payloadDir, "release-payload.sha256")],
  ]);
  const fixture: ReleaseFixture = {
    root,
    policy,
    packageName,
    version,
    sourceSha,
    otherSha,
    manifest,
    tarballName,
    files,
    repoDir,
    cleanup: () => rm(root, { recursive: true, force: true }),
  };
  await writeChecksums(fixture);
  return fixture;
}

/** (Re)write `release-payload.sha256` from the current payload bytes, in the pipeline's order. */
export async function writeChecksums(fixture: ReleaseFixture, edit?: (text: string) => string): Promise<void> {
  const entries = [];
  for (const path of bundleChecksumPaths(fixture.packageName, fixture.version)) {
    entries.push({ path, sha256: await sha256File(fixture.files.get(path)!) });
  }
  const text = formatPayloadChecksums(entries);
  await writeFile(fixture.files.get("release-payload.sha256")!, edit === undefined ? text : edit(text));
}

/**
 * A copy of the fixture's payload (new temp dir) whose source bundle holds
 * the release refs at `otherSha` instead of `sourceSha`; checksums regenerated.
 */
export async function variantWithRefsAtOtherCommit(fixture: ReleaseFixture): Promise<ReleaseFixture> {
  const copy = await copyFixture(fixture);
  const work = join(copy.root, "refs-repo");
  await fixtureGit(fixture.root, ["clone", "--quiet", "--mirror", fixture.repoDir, work]);
  await fixtureGit(work, ["update-ref", "refs/heads/release-candidate", fixture.otherSha]);
  await fixtureGit(work, ["tag", "-f", "-a", "-m", "moved", `v${fixture.version}`, fixture.otherSha]);
  const bundle = copy.files.get("release-source.bundle")!;
  await rm(bundle);
  await fixtureGit(work, ["bundle", "create", "--quiet", bundle, "refs/heads/release-candidate", `refs/tags/v${fixture.version}`]);
  await writeChecksums(copy);
  return copy;
}

/** A copy of the fixture's payload whose source bundle is cut to `keepBytes` (default: 60 % of it); checksums regenerated. */
export async function variantWithTruncatedBundle(fixture: ReleaseFixture, keepBytes?: number): Promise<ReleaseFixture> {
  const copy = await copyFixture(fixture);
  const bundle = copy.files.get("release-source.bundle")!;
  const size = (await stat(bundle)).size;
  await truncate(bundle, keepBytes ?? Math.floor(size * 0.6));
  await writeChecksums(copy);
  return copy;
}

/** A copy of the fixture's payload with the checksum text edited by `edit` (applied to valid text). */
export async function variantWithChecksums(fixture: ReleaseFixture, edit: (text: string) => string): Promise<ReleaseFixture> {
  const copy = await copyFixture(fixture);
  await writeChecksums(copy, edit);
  return copy;
}

/**
 * A copy of the fixture's payload whose tarball is replaced by `tarball`
 * (same file name); the tested manifest records the new bytes' SHA-256 and
 * size without inspecting them (as a forger would), and records
 * `installTime` when given (declared by the policy), checksums regenerated.
 */
export async function variantWithTarball(fixture: ReleaseFixture, tarball: Buffer, installTime?: string[]): Promise<ReleaseFixture> {
  const copy = await copyFixture(fixture);
  await writeFile(copy.files.get(`dist/${fixture.tarballName}`)!, tarball);
  const m = fixture.manifest;
  const policy = installTime === undefined ? fixture.policy : { ...fixture.policy, installTime };
  const manifest = createTestedManifest({
    policy,
    previousVersion: m.previous_version,
    version: m.version,
    tag: m.tag,
    sourceSha: m.source_sha,
    runId: m.evidence.workflow.run_id,
    runAttempt: m.evidence.workflow.run_attempt,
    gates: passedGates(m.source_sha, fixture.policy),
    artifacts: [{ filename: fixture.tarballName, sha256: createHash("sha256").update(tarball).digest("hex"), size: tarball.length }],
    ...(installTime === undefined ? {} : { installTime }),
  });
  await writeFile(copy.files.get("release-manifest.json")!, testedManifestBytes(manifest));
  await writeChecksums(copy);
  return { ...copy, manifest };
}

/** Copy the payload files into a fresh temp root (the git repo is shared). */
export async function copyFixture(fixture: ReleaseFixture): Promise<ReleaseFixture> {
  const root = await mkdtemp(join(tmpdir(), "hpk-fixture-variant-"));
  const files = new Map<string, string>();
  for (const [path, local] of fixture.files) {
    const target = join(root, "payload", path);
    await mkdir(dirname(target), { recursive: true });
    await copyFile(local, target);
    files.set(path, target);
  }
  return { ...fixture, root, files, cleanup: () => rm(root, { recursive: true, force: true }) };
}

/** What {@link stageFixture} pushed. */
export interface StagedRelease {
  /** Bundle manifest descriptor. */
  bundle: { mediaType: string; digest: string; size: number };
  /** The canonical bundle manifest bytes. */
  bundleManifestBytes: Buffer;
  /** Receipt manifest descriptor. */
  receipt: { mediaType: string; digest: string; size: number };
  /** The receipt file bytes. */
  receiptBytes: Buffer;
}

/**
 * Stage the fixture into `dst` the way the pipeline does: a deterministic
 * layout (`writeLayout`) copied to `dst` with tag `v<version>`, then a
 * published receipt for that bundle reference, copied with tag `v<version>-receipt`.
 * @param repository the repository string references name (`host:port/path` or `oci-layout:<dir>`).
 */
export async function stageFixture(fixture: ReleaseFixture, dst: import("../../src/oci/target.js").Target, repository: string): Promise<StagedRelease> {
  const { writeLayout } = await import("../../src/oci/layout.js");
  const { LayoutTarget } = await import("../../src/oci/layout-target.js");
  const { copy } = await import("../../src/oci/transfer.js");
  const { RELEASE_ARTIFACT_TYPE, RECEIPT_ARTIFACT_TYPE } = await import("../../src/contract/constants.js");
  const { buildPublishedReceipt, receiptBytes } = await import("../../src/contract/manifest.js");
  const work = await mkdtemp(join(tmpdir(), "hpk-stage-"));
  try {
    const bundleLayout = join(work, "bundle");
    const written = await writeLayout(bundleLayout, RELEASE_ARTIFACT_TYPE, fixture.files);
    const bundle = await copy(await LayoutTarget.open(bundleLayout), dst, "payload", { tag: `v${fixture.version}` });
    const layers = [];
    for (const [path, local] of fixture.files) {
      const bytes = await readFile(local);
      layers.push({ path, digest: "sha256:" + createHash("sha256").update(bytes).digest("hex"), size: bytes.length });
    }
    const receipt = buildPublishedReceipt(fixture.manifest, `${repository}@${bundle.digest}`, layers, { ...fixture.policy, registryRepository: repository });
    const receiptFile = join(work, "release-receipt.json");
    const rBytes = receiptBytes(receipt);
    await writeFile(receiptFile, rBytes);
    const receiptLayout = join(work, "receipt");
    await writeLayout(receiptLayout, RECEIPT_ARTIFACT_TYPE, new Map([["release-receipt.json", receiptFile]]));
    const receiptDesc = await copy(await LayoutTarget.open(receiptLayout), dst, "payload", { tag: `v${fixture.version}-receipt` });
    return {
      bundle: { mediaType: bundle.mediaType, digest: bundle.digest, size: bundle.size },
      bundleManifestBytes: written.manifestBytes,
      receipt: { mediaType: receiptDesc.mediaType, digest: receiptDesc.digest, size: receiptDesc.size },
      receiptBytes: rBytes,
    };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
