/**
 * `release materialize`: turn a release intent into a local release commit,
 * a tag and a git bundle of exactly that source — nothing is pushed.
 *
 * docs/release-build.md, "Steps" and "Identity facts (materialize and
 * restore)"; docs/architecture.md, "Release: steps and data flow":
 * HEAD must be the trigger commit; the version is written into package.json
 * and package-lock.json (top-level `version` and `packages[""].version`), the
 * notes are prepended to CHANGELOG.md, the three files are committed as
 * `chore(release): v<version>` by a fixed bot identity and tagged with the
 * annotated tag `v<version>` (same identity, the commit's date); then the identity facts are proved ({@link proveReleaseIdentity})
 * and `release-source.bundle` (refs `refs/heads/release-candidate` and
 * `refs/tags/v<version>` only) plus `release-source.sha256` are written.
 */
import { lstat, readFile, rename, rm, writeFile } from "node:fs/promises";
import { dirname, join, resolve as resolvePath } from "node:path";
import { RELEASE_CANDIDATE_REF, SOURCE_BUNDLE_CHECKSUM_FILE, SOURCE_BUNDLE_FILE } from "../src/contract/constants.js";
import { parseStrictJson } from "../src/contract/canonical-json.js";
import { hashFile } from "../src/contract/file-hash.js";
import { isStableSemver } from "../src/contract/grammar.js";
import { ReleaseStepError } from "./errors.js";
import { changedFiles, git, gitText, headCommit, resolveCommit, statusPorcelain } from "./git.js";
import { releaseIntent, type IntentOptions } from "./intent.js";
import { readReleaseConfig } from "./config.js";
import { createReleaseTag, RELEASE_BOT_IDENTITY, releaseTagProblem } from "./release-tag.js";
import { checkDirectoryWritable, makeDirectory } from "../src/contract/directory.js";

/** The only files a release commit may touch. */
export const RELEASE_COMMIT_FILES = Object.freeze(["CHANGELOG.md", "package-lock.json", "package.json"]);
/** Name of the checksum file written next to the bundle. */
export { SOURCE_BUNDLE_CHECKSUM_FILE };
export { RELEASE_BOT_IDENTITY };
/** Temporary branch name that carries the release commit into the bundle. */
export const RELEASE_CANDIDATE_BRANCH = "release-candidate";

/** Commit message of the release commit for `version`. */
export function releaseCommitMessage(version: string): string {
  return `chore(release): v${version}`;
}

/** The facts that bind a release commit to its trigger. */
export interface ReleaseIdentity {
  /** The release commit (HEAD). */
  source_sha: string;
  /** Its parent, the trigger commit. */
  trigger_sha: string;
  /** `v<version>`. */
  tag: string;
  /** The released version. */
  version: string;
}

/**
 * Prove the identity facts of a release checkout (docs/release-build.md,
 * "Identity facts (materialize and restore)"): HEAD equals `releaseSha` (when given); HEAD^ equals `triggerSha`
 * and HEAD has exactly one parent; the tag `v<version>` (peeled) points at
 * HEAD and is exactly the annotated release tag (`release-tag.ts`: tagger =
 * the release identity, date = the release commit's); the tracked tree is
 * clean (`--untracked-files=no`); the diff
 * `trigger..HEAD` touches only {@link RELEASE_COMMIT_FILES}; package.json at
 * HEAD has `version`; the commit message is `chore(release): v<version>`.
 *
 * @throws ReleaseStepError `RELEASE_IDENTITY_MISMATCH` naming the first fact
 *   that does not hold, `GIT_FAILED`.
 */
export async function proveReleaseIdentity(dir: string, expected: { triggerSha: string; version: string; releaseSha?: string }): Promise<ReleaseIdentity> {
  const fail = (fact: string): never => {
    throw new ReleaseStepError("RELEASE_IDENTITY_MISMATCH", `release identity: ${fact}`);
  };
  const head = await headCommit(dir);
  if (expected.releaseSha !== undefined && head !== expected.releaseSha) fail(`HEAD is ${head}, expected the release commit ${expected.releaseSha}`);
  const parents = (await gitText(["rev-list", "--parents", "-n", "1", head], { cwd: dir })).split(" ").slice(1);
  if (parents.length !== 1 || parents[0] !== expected.triggerSha) {
    fail(`HEAD^ is ${parents.join(",") || "none"}, expected exactly the trigger ${expected.triggerSha}`);
  }
  const tag = `v${expected.version}`;
  const tagged = await resolveCommit(dir, `refs/tags/${tag}`);
  if (tagged !== head) fail(`tag ${tag} points at ${tagged ?? "nothing"}, expected HEAD ${head}`);
  const tagProblem = await releaseTagProblem(dir, expected.version, head);
  if (tagProblem !== undefined) fail(tagProblem);
  const dirty = await statusPorcelain(dir, false);
  if (dirty.length > 0) fail(`tracked tree is not clean (${dirty[0]})`);
  const touched = await changedFiles(dir, expected.triggerSha, head);
  const extra = touched.filter((p) => !RELEASE_COMMIT_FILES.includes(p));
  if (extra.length > 0) fail(`the release commit touches ${extra.join(", ")}; only ${RELEASE_COMMIT_FILES.join(", ")} are allowed`);
  const pkgText = await gitText(["show", `${head}:package.json`], { cwd: dir });
  let pkgVersion: unknown;
  try {
    pkgVersion = parseStrictJson(pkgText, { rejectIntegralFloats: false })["version"];
  } catch {
    fail("package.json at HEAD is not strict JSON");
  }
  if (pkgVersion !== expected.version) fail(`package.json at HEAD has version ${JSON.stringify(pkgVersion)}, expected ${expected.version}`);
  const subject = await gitText(["log", "-1", "--format=%s", head], { cwd: dir });
  if (subject !== releaseCommitMessage(expected.version)) fail(`release commit message is ${JSON.stringify(subject)}, expected ${JSON.stringify(releaseCommitMessage(expected.version))}`);
  return { source_sha: head, trigger_sha: expected.triggerSha, tag, version: expected.version };
}

/** Options of {@link attachTrigger}. */
export interface AttachTriggerOptions {
  /** The checkout (default `process.cwd()`). */
  dir?: string;
  /** The trigger commit HEAD must equal. */
  expectedSha: string;
  /** Release branch (default `main`). */
  branch?: string;
  /** Environment read for `GITHUB_REF` (default `process.env`). */
  environment?: NodeJS.ProcessEnv;
}

/**
 * `release attach-trigger` (docs/release-build.md, "Steps"): when `GITHUB_REF` is set it must be
 * `refs/heads/<branch>`; HEAD must equal the trigger; the local branch is
 * force-created at the trigger and checked out (CI checkouts are detached,
 * semantic-release needs a branch); then branch and HEAD are checked again.
 *
 * @throws ReleaseStepError `RELEASE_HEAD_MISMATCH`, `GIT_FAILED`.
 */
export async function attachTrigger(options: AttachTriggerOptions): Promise<{ branch: string; head: string }> {
  const dir = resolvePath(options.dir ?? process.cwd());
  const branch = options.branch ?? "main";
  const ref = (options.environment ?? process.env)["GITHUB_REF"];
  if (ref !== undefined && ref !== `refs/heads/${branch}`) {
    throw new ReleaseStepError("RELEASE_HEAD_MISMATCH", `GITHUB_REF is ${JSON.stringify(ref)}, releases run only from refs/heads/${branch}`);
  }
  if (!/^[0-9a-f]{40}$/.test(options.expectedSha)) throw new ReleaseStepError("RELEASE_HEAD_MISMATCH", `--expected-sha must be a lowercase 40-character Git SHA, found ${JSON.stringify(options.expectedSha)}`);
  const head = await headCommit(dir);
  if (head !== options.expectedSha) throw new ReleaseStepError("RELEASE_HEAD_MISMATCH", `HEAD is ${head}, expected the trigger commit ${options.expectedSha}`);
  await git(["-c", "advice.detachedHead=false", "checkout", "--quiet", "-B", branch, options.expectedSha], { cwd: dir });
  const now = await headCommit(dir);
  const onBranch = (await gitText(["symbolic-ref", "--quiet", "--short", "HEAD"], { cwd: dir, allowFailure: true })).trim();
  if (now !== options.expectedSha || onBranch !== branch) {
    throw new ReleaseStepError("RELEASE_HEAD_MISMATCH", `after attaching, HEAD is ${now} on ${onBranch || "no branch"}, expected ${options.expectedSha} on ${branch}`);
  }
  return { branch, head: now };
}

/**
 * Refs listed in a bundle (`git bundle list-heads`), as `ref -> sha`.
 * @throws ReleaseStepError `GIT_FAILED`, `RELEASE_BUNDLE_REFS` for a duplicated ref.
 */
export async function bundleHeads(cwd: string, bundle: string): Promise<Map<string, string>> {
  const out = await gitText(["bundle", "list-heads", bundle], { cwd });
  const heads = new Map<string, string>();
  for (const line of out.split("\n")) {
    if (line.length === 0) continue;
    const [sha, ref] = line.split(" ");
    if (sha === undefined || ref === undefined) continue;
    if (heads.has(ref)) throw new ReleaseStepError("RELEASE_BUNDLE_REFS", `source bundle lists ${ref} twice`);
    heads.set(ref, sha);
  }
  return heads;
}

/**
 * Require a bundle to hold exactly `refs/heads/release-candidate` and
 * `refs/tags/v<version>`; returns the version.
 * @throws ReleaseStepError `RELEASE_BUNDLE_REFS`.
 */
export function requireReleaseBundleRefs(heads: Map<string, string>, version?: string): { version: string; candidateSha: string; tagSha: string } {
  const refs = [...heads.keys()].sort();
  const tags = refs.filter((r) => r.startsWith("refs/tags/v") && isStableSemver(r.slice("refs/tags/v".length)));
  const found = refs.join(", ") || "none";
  if (refs.length !== 2 || !heads.has(RELEASE_CANDIDATE_REF) || tags.length !== 1) {
    throw new ReleaseStepError("RELEASE_BUNDLE_REFS", `source bundle refs must be exactly ${RELEASE_CANDIDATE_REF} and refs/tags/v<version>, found ${found}`);
  }
  const tagRef = tags[0] as string;
  const bundleVersion = tagRef.slice("refs/tags/v".length);
  if (version !== undefined && bundleVersion !== version) {
    throw new ReleaseStepError("RELEASE_BUNDLE_REFS", `source bundle tag ${tagRef} does not match the release version ${version}`);
  }
  return { version: bundleVersion, candidateSha: heads.get(RELEASE_CANDIDATE_REF) as string, tagSha: heads.get(tagRef) as string };
}

function detectIndent(text: string): string | number {
  const m = /^\{\r?\n([ \t]+)"/.exec(text);
  return m?.[1] ?? 2;
}

async function rewriteJson(path: string, mutate: (doc: Record<string, unknown>) => void, code: "RELEASE_CONFIG_INVALID" | "RELEASE_LOCKFILE_INVALID"): Promise<string> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    throw new ReleaseStepError(code, `cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? "error"}`);
  }
  try {
    parseStrictJson(text, { rejectIntegralFloats: false });
  } catch (error) {
    throw new ReleaseStepError(code, `${path} is not strict JSON: ${(error as Error).message}`);
  }
  // The strict parse refused duplicates, a BOM and NaN; JSON.parse keeps the key order for rewriting.
  const ordered = JSON.parse(text) as Record<string, unknown>;
  mutate(ordered);
  const newline = text.includes("\r\n") ? "\r\n" : "\n";
  let out = JSON.stringify(ordered, null, detectIndent(text));
  if (newline === "\r\n") out = out.replace(/\n/g, "\r\n");
  return out + (text.endsWith("\n") ? newline : "");
}

/**
 * The new package.json and package-lock.json texts with `version` set
 * (lockfile: top-level `version` and `packages[""].version`, which must
 * both be `previous` before), key order and indentation kept.
 * @throws ReleaseStepError `RELEASE_CONFIG_INVALID`, `RELEASE_LOCKFILE_INVALID`.
 */
export async function versionedManifests(dir: string, previous: string, version: string): Promise<{ packageJson: string; lockfile: string }> {
  const packageJson = await rewriteJson(join(dir, "package.json"), (doc) => {
    if (doc["version"] !== previous) throw new ReleaseStepError("RELEASE_CONFIG_INVALID", `package.json version is ${JSON.stringify(doc["version"])}, expected ${previous}`);
    doc["version"] = version;
  }, "RELEASE_CONFIG_INVALID");
  const lockfile = await rewriteJson(join(dir, "package-lock.json"), (doc) => {
    if (doc["version"] !== previous) throw new ReleaseStepError("RELEASE_LOCKFILE_INVALID", `package-lock.json version is ${JSON.stringify(doc["version"])}, expected ${previous}`);
    doc["version"] = version;
    const packages = doc["packages"];
    if (packages !== undefined) {
      const root = (packages as Record<string, unknown>)[""] as Record<string, unknown> | undefined;
      if (root === undefined || typeof root !== "object" || root["version"] !== previous) {
        throw new ReleaseStepError("RELEASE_LOCKFILE_INVALID", `package-lock.json packages[""].version is ${JSON.stringify(root?.["version"])}, expected ${previous}`);
      }
      root["version"] = version;
    }
  }, "RELEASE_LOCKFILE_INVALID");
  return { packageJson, lockfile };
}

/**
 * CHANGELOG.md with `notes` prepended: after a leading `# ` title line when
 * there is one, else at the top. An absent file becomes `# Changelog` + notes.
 */
export function prependChangelog(existing: string | undefined, notes: string): string {
  const body = notes.trim() + "\n";
  if (existing === undefined || existing.trim().length === 0) return `# Changelog\n\n${body}`;
  const m = /^# [^\n]*\n/.exec(existing);
  if (m === null) return `${body}\n${existing}`;
  const rest = existing.slice(m[0].length).replace(/^\n+/, "");
  return `${m[0]}\n${body}${rest.length > 0 ? `\n${rest}` : ""}`;
}

/** Options of {@link materializeRelease}. */
export interface MaterializeOptions extends IntentOptions {
  /** The trigger commit HEAD must equal (40 lowercase hex). */
  expectedSha: string;
  /** Directory receiving `release-source.bundle` and `release-source.sha256` (default `process.cwd()`). */
  outputDir?: string;
  /** Commit/tag date of the release commit, seconds since the epoch (default: now). */
  dateSeconds?: number;
}

/** Output of `release materialize`. */
export type MaterializeResult =
  | { released: false; disarmed: true }
  | { released: false; previous_version: string; trigger_sha: string }
  | {
      released: true;
      previous_version: string;
      version: string;
      tag: string;
      release_class: string;
      source_sha: string;
      trigger_sha: string;
      bundle: string;
      bundle_sha256: string;
      checksum_file: string;
      /** The release notes prepended to CHANGELOG.md (Markdown). */
      notes: string;
    };

async function absent(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return false;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return true;
    throw error;
  }
}

/**
 * HEAD must be the trigger commit. When HEAD is instead the release commit
 * already made from it (tagged, parent = trigger), say so.
 * @throws ReleaseStepError `RELEASE_HEAD_MISMATCH`, `RELEASE_TAG_EXISTS`.
 */
async function requireTriggerHead(dir: string, trigger: string): Promise<void> {
  if (!/^[0-9a-f]{40}$/.test(trigger)) throw new ReleaseStepError("RELEASE_HEAD_MISMATCH", `--expected-sha must be a lowercase 40-character Git SHA, found ${JSON.stringify(trigger)}`);
  const head = await headCommit(dir);
  if (head === trigger) return;
  const config = await readReleaseConfig(dir);
  const tag = `v${config.version}`;
  const tagged = await resolveCommit(dir, `refs/tags/${tag}`);
  const parent = await resolveCommit(dir, "HEAD^");
  if (tagged === head && parent === trigger) {
    throw new ReleaseStepError("RELEASE_TAG_EXISTS", `already materialized: tag ${tag} exists on HEAD ${head}, whose parent is the trigger ${trigger}; refusing to release again`);
  }
  throw new ReleaseStepError("RELEASE_HEAD_MISMATCH", `HEAD is ${head}, expected the trigger commit ${trigger}`);
}

/**
 * The outputs (bundle, checksum file) and the `release-candidate` branch must not exist yet.
 * @throws ReleaseStepError `RELEASE_OUTPUT_NOT_EMPTY`.
 */
async function refuseExistingOutputs(dir: string, paths: readonly string[]): Promise<void> {
  for (const path of paths) {
    if (!(await absent(path))) throw new ReleaseStepError("RELEASE_OUTPUT_NOT_EMPTY", `${path} already exists; refusing to overwrite a source bundle`);
  }
  if ((await resolveCommit(dir, `refs/heads/${RELEASE_CANDIDATE_BRANCH}`)) !== undefined) {
    throw new ReleaseStepError("RELEASE_OUTPUT_NOT_EMPTY", `branch ${RELEASE_CANDIDATE_BRANCH} already exists in ${dir}`);
  }
}

/** The new texts of the three release files. */
interface ReleaseFileTexts {
  packageJson: string;
  lockfile: string;
  changelog: string;
}

/**
 * Write the three release files and commit them as the release bot. Until
 * the commit exists, a failure puts the three files back as they were.
 * @throws ReleaseStepError `GIT_FAILED`.
 */
async function commitReleaseFiles(dir: string, trigger: string, version: string, texts: ReleaseFileTexts, dateSeconds: number | undefined): Promise<void> {
  const originals = new Map<string, Buffer | undefined>();
  for (const file of RELEASE_COMMIT_FILES) originals.set(file, await readFile(join(dir, file)).catch(() => undefined));
  const rollback = async () => {
    for (const [file, bytes] of originals) {
      if (bytes === undefined) await rm(join(dir, file), { force: true });
      else await writeFile(join(dir, file), bytes);
    }
    await git(["reset", "--quiet", "--", ...RELEASE_COMMIT_FILES], { cwd: dir, allowFailure: true });
  };
  const date = `${dateSeconds ?? Math.floor(Date.now() / 1000)} +0000`;
  const identity = {
    GIT_AUTHOR_NAME: RELEASE_BOT_IDENTITY.name,
    GIT_AUTHOR_EMAIL: RELEASE_BOT_IDENTITY.email,
    GIT_COMMITTER_NAME: RELEASE_BOT_IDENTITY.name,
    GIT_COMMITTER_EMAIL: RELEASE_BOT_IDENTITY.email,
    GIT_AUTHOR_DATE: date,
    GIT_COMMITTER_DATE: date,
  };
  try {
    await writeFile(join(dir, "package.json"), texts.packageJson);
    await writeFile(join(dir, "package-lock.json"), texts.lockfile);
    await writeFile(join(dir, "CHANGELOG.md"), texts.changelog);
    await git(["add", "--", ...RELEASE_COMMIT_FILES], { cwd: dir });
    await git(["-c", "commit.gpgsign=false", "commit", "--quiet", "--no-verify", "-m", releaseCommitMessage(version), "--", ...RELEASE_COMMIT_FILES], { cwd: dir, env: identity });
  } catch (error) {
    if ((await headCommit(dir)) === trigger) await rollback();
    throw error;
  }
}

/**
 * Bundle `release-candidate` (at the proved release commit) and the tag into
 * `<bundlePath>.partial`, check its refs name exactly that commit and the tag
 * object just written, then rename it into place and write the checksum file.
 * @returns the bundle's SHA-256 (hex).
 * @throws ReleaseStepError `RELEASE_BUNDLE_REFS`, `GIT_FAILED`.
 */
async function writeSourceBundle(dir: string, out: { bundlePath: string; checksumPath: string }, release: { version: string; tag: string }, sourceSha: string, tagObject: string): Promise<string> {
  const { version, tag } = release;
  await makeDirectory(dirname(out.bundlePath), { purpose: "bundle output directory (--output-dir)" });
  const partial = `${out.bundlePath}.partial`;
  await rm(partial, { force: true });
  await git(["branch", RELEASE_CANDIDATE_BRANCH, sourceSha], { cwd: dir });
  try {
    await git(["bundle", "create", "--quiet", partial, RELEASE_CANDIDATE_REF, `refs/tags/${tag}`], { cwd: dir, timeoutMs: 600_000 });
  } finally {
    await git(["branch", "-D", RELEASE_CANDIDATE_BRANCH], { cwd: dir });
  }
  const heads = await bundleHeads(dir, partial);
  const refs = requireReleaseBundleRefs(heads, version);
  // The bundle lists the annotated tag's object: it must be the tag just written, peeling to the release commit.
  const tagPeeled = await resolveCommit(dir, refs.tagSha);
  if (refs.candidateSha !== sourceSha || refs.tagSha !== tagObject || tagPeeled !== sourceSha) {
    throw new ReleaseStepError("RELEASE_BUNDLE_REFS", `source bundle refs point at ${refs.candidateSha} and tag object ${refs.tagSha} (peeled ${tagPeeled ?? "nothing"}), expected ${sourceSha} and tag object ${tagObject}`);
  }
  const digest = (await hashFile(partial)).sha256;
  await rename(partial, out.bundlePath);
  await writeFile(out.checksumPath, `${digest}  ${SOURCE_BUNDLE_FILE}\n`);
  return digest;
}

/**
 * A Git commit id: 40 lowercase hex (SHA-1 repositories) or 64 (SHA-256 repositories).
 * @throws ReleaseStepError `RELEASE_HEAD_MISMATCH` for anything else.
 */
function requireCommitIdShape(sha: unknown): void {
  if (typeof sha === "string" && /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/.test(sha)) return;
  throw new ReleaseStepError(
    "RELEASE_HEAD_MISMATCH",
    `--expected-sha must be a Git commit id (40 lowercase hex characters, or 64 in a SHA-256 repository), found ${JSON.stringify(sha)}; pass the trigger commit, e.g. --expected-sha "$(git rev-parse HEAD)"`,
  );
}

/**
 * `release materialize --expected-sha S` (docs/release-build.md, "Steps").
 *
 * Order: HEAD check, intent (baseline, history, next tag absent locally and
 * on the remote), output files absent, then the writes (package.json,
 * package-lock.json, CHANGELOG.md, commit, tag), identity proof, bundle.
 * A second run after success refuses with `RELEASE_TAG_EXISTS` and changes nothing.
 *
 * @throws ReleaseStepError `RELEASE_HEAD_MISMATCH` (also a malformed `expectedSha`,
 *   checked first, armed or not), `RELEASE_TAG_EXISTS`, `RELEASE_OUTPUT_NOT_EMPTY`,
 *   IoError `IO_NOT_A_DIRECTORY` / `IO_DIRECTORY_UNWRITABLE` (output directory), every code of `releaseIntent`,
 *   `RELEASE_LOCKFILE_INVALID`, `RELEASE_IDENTITY_MISMATCH`,
 *   `RELEASE_BUNDLE_REFS`, `GIT_FAILED`.
 */
export async function materializeRelease(options: MaterializeOptions): Promise<MaterializeResult> {
  // The shape first, armed or not: a malformed trigger is refused before anything else.
  requireCommitIdShape(options.expectedSha);
  const environment = options.environment ?? process.env;
  if (environment["SEMANTIC_RELEASE_ENABLED"] !== "true") return { released: false, disarmed: true };
  const dir = resolvePath(options.dir ?? process.cwd());
  const outputDir = resolvePath(options.outputDir ?? process.cwd());
  checkDirectoryWritable(outputDir, { purpose: "bundle output directory (--output-dir)" });
  const trigger = options.expectedSha;
  await requireTriggerHead(dir, trigger);
  const intent = await releaseIntent({ ...options, dir, environment });
  if (!("previous_version" in intent)) return { released: false, disarmed: true };
  if (!intent.released || intent.version === null || intent.tag === null || intent.release_class === null) {
    return { released: false, previous_version: intent.previous_version, trigger_sha: trigger };
  }
  const { version, tag } = intent;
  const out = { bundlePath: join(outputDir, SOURCE_BUNDLE_FILE), checksumPath: join(outputDir, SOURCE_BUNDLE_CHECKSUM_FILE) };
  await refuseExistingOutputs(dir, [out.bundlePath, out.checksumPath]);
  const { packageJson, lockfile } = await versionedManifests(dir, intent.previous_version, version);
  let changelog: string | undefined;
  try {
    changelog = await readFile(join(dir, "CHANGELOG.md"), "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  // Writes start here.
  await commitReleaseFiles(dir, trigger, version, { packageJson, lockfile, changelog: prependChangelog(changelog, intent.notes) }, options.dateSeconds);
  const tagObject = await createReleaseTag(dir, version, await headCommit(dir));
  const proved = await proveReleaseIdentity(dir, { triggerSha: trigger, version });
  const digest = await writeSourceBundle(dir, out, { version, tag }, proved.source_sha, tagObject);
  return {
    released: true,
    previous_version: intent.previous_version,
    version,
    tag,
    release_class: intent.release_class,
    source_sha: proved.source_sha,
    trigger_sha: trigger,
    bundle: out.bundlePath,
    bundle_sha256: digest,
    checksum_file: out.checksumPath,
    notes: intent.notes,
  };
}
