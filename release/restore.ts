/**
 * `release restore`: recreate the release source from `release-source.bundle`
 * in a fresh checkout, so test gates and the build run on exactly the bytes
 * that were materialized (docs/release-build.md, "Identity facts (materialize
 * and restore)"; docs/architecture.md, "Release: steps and data flow").
 *
 * Order: the bundle's SHA-256 must match `release-source.sha256`; the target
 * directory must be absent or empty; a new repository is initialised there;
 * `git bundle verify`; the bundle must list exactly
 * `refs/heads/release-candidate` and `refs/tags/v<version>`; both refs are
 * fetched (no other tags) and, peeled to commits, must be the same commit;
 * the checkout is detached at
 * the release commit, and the identity facts are proved again
 * (`proveReleaseIdentity`). The checkout is built in a temporary sibling
 * directory and renamed into place only after every check passed, so a
 * failed restore leaves no checkout behind.
 */
import { lstat, mkdtemp, readdir, readFile, rename, rm, rmdir } from "node:fs/promises";
import { basename, dirname, join, resolve as resolvePath } from "node:path";
import { RELEASE_CANDIDATE_REF } from "../src/contract/constants.js";
import { hashFile } from "../src/contract/file-hash.js";
import { ReleaseStepError } from "./errors.js";
import { git, resolveCommit } from "./git.js";
import { bundleHeads, proveReleaseIdentity, requireReleaseBundleRefs, SOURCE_BUNDLE_CHECKSUM_FILE, type ReleaseIdentity } from "./materialize.js";
import { makeDirectory } from "../src/contract/directory.js";

/** Options of {@link restoreSource}. */
export interface RestoreOptions {
  /** Path of `release-source.bundle`. */
  bundle: string;
  /** Path of the checksum file (default: `release-source.sha256` next to the bundle). */
  checksumFile?: string;
  /** The trigger commit the release commit's parent must be. */
  expectedSha: string;
  /** Checkout directory to create (absent or empty; default `./release-source`). */
  dir?: string;
}

/** Output of `release restore`. */
export interface RestoreResult extends ReleaseIdentity {
  restored: true;
  /** Absolute path of the checkout. */
  dir: string;
  /** SHA-256 of the bundle bytes. */
  bundle_sha256: string;
}

/**
 * Check `release-source.sha256` against the bundle bytes: exactly one
 * `sha256sum` line `<64 hex>  <bundle file name>`.
 * @returns the SHA-256 (hex).
 * @throws ReleaseStepError `RELEASE_BUNDLE_CHECKSUM`.
 */
export async function checkBundleChecksum(bundle: string, checksumFile: string): Promise<string> {
  let text: string;
  try {
    text = await readFile(checksumFile, "ascii");
  } catch (error) {
    throw new ReleaseStepError("RELEASE_BUNDLE_CHECKSUM", `cannot read ${checksumFile}: ${(error as NodeJS.ErrnoException).code ?? "error"}`);
  }
  const m = /^([0-9a-f]{64}) {2}([A-Za-z0-9_.-]+)\n?$/.exec(text);
  if (m === null || m[2] !== basename(bundle)) {
    throw new ReleaseStepError("RELEASE_BUNDLE_CHECKSUM", `${checksumFile} must hold exactly one line "<sha256>  ${basename(bundle)}"`);
  }
  const st = await lstat(bundle).catch(() => undefined);
  if (st === undefined || !st.isFile()) throw new ReleaseStepError("RELEASE_BUNDLE_CHECKSUM", `source bundle ${bundle} must be a regular file`);
  const actual = (await hashFile(bundle)).sha256;
  if (actual !== m[1]) throw new ReleaseStepError("RELEASE_BUNDLE_CHECKSUM", `source bundle SHA-256 is ${actual}, ${basename(checksumFile)} says ${m[1]}`);
  return actual;
}

async function requireEmptyDir(dir: string): Promise<void> {
  let st;
  try {
    st = await lstat(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
    throw error;
  }
  if (st.isSymbolicLink() || !st.isDirectory() || (await readdir(dir)).length > 0) {
    throw new ReleaseStepError("RELEASE_OUTPUT_NOT_EMPTY", `restore directory ${dir} must be absent or an empty directory (not a symlink)`);
  }
}

/**
 * `release restore --bundle B --expected-sha S [--dir D]`.
 *
 * @throws ReleaseStepError `RELEASE_BUNDLE_CHECKSUM`, `RELEASE_OUTPUT_NOT_EMPTY`,
 *   `RELEASE_BUNDLE_REFS` (not exactly the two refs, or they differ),
 *   `RELEASE_IDENTITY_MISMATCH`, `GIT_FAILED` (`git bundle verify`/`fetch`).
 *   Nothing is written when the checksum, directory or ref checks fail.
 */
export async function restoreSource(options: RestoreOptions): Promise<RestoreResult> {
  const bundle = resolvePath(options.bundle);
  const checksumFile = resolvePath(options.checksumFile ?? join(dirname(bundle), SOURCE_BUNDLE_CHECKSUM_FILE));
  const dir = resolvePath(options.dir ?? "release-source");
  if (!/^[0-9a-f]{40}$/.test(options.expectedSha)) {
    throw new ReleaseStepError("RELEASE_IDENTITY_MISMATCH", `--expected-sha must be a lowercase 40-character Git SHA, found ${JSON.stringify(options.expectedSha)}`);
  }
  const digest = await checkBundleChecksum(bundle, checksumFile);
  await requireEmptyDir(dir);
  // `git bundle list-heads` needs no repository: check the refs before creating anything.
  const refs = requireReleaseBundleRefs(await bundleHeads(dirname(bundle), bundle));
  // Build the checkout in a sibling temporary directory; it replaces `dir` only after every proof held.
  await makeDirectory(dirname(dir), { purpose: "restore checkout parent directory (--dir)" });
  const work = await mkdtemp(join(dirname(dir), `.${basename(dir)}.restore-`));
  try {
    await git(["init", "--quiet", "--initial-branch=restore", work], { cwd: work });
    await git(["bundle", "verify", "--quiet", bundle], { cwd: work });
    const tagRef = `refs/tags/v${refs.version}`;
    await git(["fetch", "--quiet", "--no-tags", bundle, `${RELEASE_CANDIDATE_REF}:${RELEASE_CANDIDATE_REF}`, `${tagRef}:${tagRef}`], { cwd: work, timeoutMs: 600_000 });
    // Both refs, peeled to commits (the tag may be annotated), must name one release commit.
    const candidate = await resolveCommit(work, RELEASE_CANDIDATE_REF);
    const tagged = await resolveCommit(work, tagRef);
    if (candidate === undefined || candidate !== tagged) {
      throw new ReleaseStepError("RELEASE_BUNDLE_REFS", `source bundle refs disagree: ${RELEASE_CANDIDATE_REF} is ${candidate ?? "not a commit"}, tag v${refs.version} is ${tagged ?? "not a commit"}`);
    }
    await git(["-c", "advice.detachedHead=false", "checkout", "--quiet", "--detach", candidate], { cwd: work });
    const identity = await proveReleaseIdentity(work, { triggerSha: options.expectedSha, version: refs.version, releaseSha: candidate });
    await requireEmptyDir(dir);
    await rmdir(dir).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== "ENOENT") throw error;
    });
    await rename(work, dir);
    return { restored: true, dir, bundle_sha256: digest, ...identity };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
