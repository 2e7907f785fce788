/**
 * The source bundle check: `release-source.bundle` is unbundled for real into
 * a fresh scratch bare repository by an isolated git (no system or global
 * config, hooks disabled, no inherited `GIT_*` environment), and must hold
 * exactly the release refs at the release commit whose `package.json` names
 * the release.
 *
 * Checks B1-B4 (docs/fetch.md "hermes-plugin-kit fetch"; git-bundle(1)):
 * `package.json` names the release, and the refs are fetched with
 * object checking (`git bundle verify` alone does not read the pack data, so
 * a truncated or corrupted pack is only caught by the real fetch).
 */
import { rm } from "node:fs/promises";
import { join, resolve } from "node:path";
import { makeTempDirectory } from "../contract/directory.js";
import { parseStrictJson } from "../contract/canonical-json.js";
import { RELEASE_CANDIDATE_REF } from "../contract/constants.js";
import { describeValue, isGitSha } from "../contract/grammar.js";
import { childEnvironment, runBounded, type ChildEnvironment } from "../oci/subprocess.js";
import { InterruptedError, interruption, throwIfInterrupted } from "../contract/errors.js";
import { FetchError, RELEASE_FILES_DISAGREE_FIX } from "./errors.js";

/** What the bundle must prove (taken from the verified tested manifest). */
export interface SourceBundleExpectation {
  /** The release commit, 40 lowercase hex. */
  sourceSha: string;
  /** The release tag, `v<version>`. */
  tag: string;
  /** npm package name `package.json` must have at `sourceSha`. */
  packageName: string;
  /** Version `package.json` must have at `sourceSha`. */
  version: string;
}

/** Options of {@link verifySourceBundleFile}. */
export interface SourceBundleOptions {
  /** Parent directory of the scratch repository (default: the OS temp directory). */
  tmpDir?: string;
  /** Time limit per git invocation in ms (default 60 000). */
  timeoutMs?: number;
  /** The git executable (default `git` on PATH). */
  git?: string;
  /**
   * Stop the check: the git running is stopped with everything it started (its own process group: SIGTERM,
   * then SIGKILL) and waited for, the scratch repository is removed, then the call rejects with
   * InterruptedError `INTERRUPTED`.
   */
  signal?: AbortSignal;
}

const MAX_GIT_OUTPUT = 4 * 1024 * 1024;
const MAX_PACKAGE_JSON_BYTES = 1024 * 1024;

/** The environment of every isolated git run: nothing inherited but PATH. */
function isolatedEnv(home: string): ChildEnvironment {
  return childEnvironment(["PATH"], {
    ...(process.env["PATH"] === undefined ? { PATH: "/usr/bin:/bin" } : {}),
    HOME: home,
    LC_ALL: "C",
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_ATTR_NOSYSTEM: "1",
    GIT_TERMINAL_PROMPT: "0",
    GIT_ALLOW_PROTOCOL: "file",
  });
}

interface GitResult {
  code: number | null;
  stdout: Buffer;
}

/**
 * Run the isolated git through the bounded runner; stderr is discarded (never echoed). Git runs in a process
 * group of its own, so a stop (timeout, abort) ends the helpers it starts too (`git fetch` runs
 * `index-pack`, which writes into the scratch repository), and the run settles only once all of them ended.
 */
async function runGit(git: string, args: string[], env: ChildEnvironment, timeoutMs: number, signal: AbortSignal | undefined): Promise<GitResult> {
  throwIfInterrupted(signal);
  const run = await runBounded(git, ["-c", "core.hooksPath=/dev/null", "-c", "protocol.allow=never", "-c", "protocol.file.allow=always", ...args], {
    env,
    timeoutMs,
    maxOutputBytes: MAX_GIT_OUTPUT,
    output: "stdout",
    processGroup: true,
    ...(signal === undefined ? {} : { signal }),
  });
  const outcome = run.outcome;
  if (outcome.kind === "aborted") throw interruption(signal) ?? new InterruptedError(undefined);
  if (outcome.kind === "start-failed") {
    throw new FetchError(
      "SOURCE_BUNDLE_GIT_FAILED",
      outcome.errno === "ENOENT"
        ? `source bundle check could not run git: ${git} was not found${git.includes("/") ? "" : " on PATH"} (ENOENT); the bundle's source identity is checked with git; fix: install git (Debian/Ubuntu: apt-get install git; macOS: xcode-select --install; else https://git-scm.com/downloads), or put the directory holding it on PATH`
        : `source bundle check could not run git (${outcome.errno}); fix: check that ${git} runs (${git} --version)`,
    );
  }
  return { code: outcome.kind === "exited" ? outcome.code : null, stdout: run.stdout };
}

/**
 * Verify a release source bundle (check B1-B4, docs/fetch.md) in a fresh scratch bare
 * repository that is always removed afterwards.
 *
 * @param bundlePath the `release-source.bundle` file.
 * @throws FetchError
 *   `SOURCE_BUNDLE_GIT_FAILED` (any git step failed: not a bundle, a bundle
 *   with prerequisites, a truncated or corrupt pack; the message names the
 *   git subcommand, never its output);
 *   `SOURCE_BUNDLE_REFS_MISMATCH` (the bundle's refs are not exactly
 *   `refs/heads/release-candidate` and `refs/tags/<tag>`);
 *   `SOURCE_BUNDLE_SHA_MISMATCH` (a ref does not peel to `sourceSha`);
 *   `SOURCE_BUNDLE_PACKAGE_MISMATCH` (`package.json` at `sourceSha` is
 *   missing, unreadable, or has another name or version);
 *   InterruptedError `INTERRUPTED` (`options.signal` aborted; git stopped, the scratch repository removed).
 */
export async function verifySourceBundleFile(bundlePath: string, expect: SourceBundleExpectation, options: SourceBundleOptions = {}): Promise<void> {
  if (!isGitSha(expect.sourceSha)) {
    throw new FetchError("SOURCE_BUNDLE_SHA_MISMATCH", `source_sha must be a lowercase 40-character Git SHA, found ${describeValue(expect.sourceSha)}`);
  }
  const bundle = resolve(bundlePath);
  const tagRef = `refs/tags/${expect.tag}`;
  const expectedRefs = [RELEASE_CANDIDATE_REF, tagRef];
  throwIfInterrupted(options.signal);
  const scratch = await makeTempDirectory("hpk-source-", options.tmpDir);
  try {
    const repo = await initScratchRepository(scratch, options.git ?? "git", options.timeoutMs ?? 60_000, options.signal);
    await repo.step("bundle verify", [repo.gitDir, "bundle", "verify", "--quiet", bundle]);
    checkBundleHeads((await repo.step("bundle list-heads", [repo.gitDir, "bundle", "list-heads", bundle])).toString("utf8"), expectedRefs);
    await repo.step("fetch", [
      repo.gitDir,
      "-c",
      "transfer.fsckObjects=true",
      "-c",
      "fetch.fsckObjects=true",
      "fetch",
      "--quiet",
      "--no-tags",
      "--no-write-fetch-head",
      "--end-of-options",
      bundle,
      `${RELEASE_CANDIDATE_REF}:${RELEASE_CANDIDATE_REF}`,
      `${tagRef}:${tagRef}`,
    ]);
    for (const ref of expectedRefs) {
      const peeled = (await repo.step("rev-parse", [repo.gitDir, "rev-parse", "--verify", "--quiet", "--end-of-options", `${ref}^{commit}`])).toString("utf8").trim();
      if (peeled !== expect.sourceSha) {
        throw new FetchError("SOURCE_BUNDLE_SHA_MISMATCH", `source bundle used another source SHA: ${ref} peels to ${describeValue(peeled)}, the tested manifest's source_sha is ${expect.sourceSha}${RELEASE_FILES_DISAGREE_FIX}`);
      }
    }
    await checkPackageJsonAt(repo, expect);
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/** The isolated scratch bare repository: `step` runs git and fails on a non-zero exit, `run` returns the result. */
interface ScratchRepository {
  gitDir: string;
  step: (name: string, args: string[]) => Promise<Buffer>;
  run: (args: string[]) => Promise<GitResult>;
}

/** Create the scratch bare repository `<scratch>/repo.git`. @throws FetchError `SOURCE_BUNDLE_GIT_FAILED`. */
async function initScratchRepository(scratch: string, git: string, timeoutMs: number, signal: AbortSignal | undefined): Promise<ScratchRepository> {
  const repo = join(scratch, "repo.git");
  const env = isolatedEnv(scratch);
  const run = (args: string[]) => runGit(git, args, env, timeoutMs, signal);
  const step = async (name: string, args: string[]): Promise<Buffer> => {
    const result = await run(args);
    if (result.code !== 0) {
      throw new FetchError("SOURCE_BUNDLE_GIT_FAILED", `source bundle git ${name} verification failed (exit ${result.code === null ? "killed" : result.code}): the bundle is truncated or corrupt, needs commits it does not carry, or git could not work here; fix: check that git runs and TMPDIR has room, then fetch again; if it fails the same way, the release's source bundle is broken: do not install it, and tell its publisher`);
    }
    return result.stdout;
  };
  await step("init", ["init", "--quiet", "--bare", repo]);
  return { gitDir: `--git-dir=${repo}`, step, run };
}

/** The bundle's heads (`git bundle list-heads`) are exactly `expectedRefs`. @throws FetchError `SOURCE_BUNDLE_REFS_MISMATCH`. */
function checkBundleHeads(heads: string, expectedRefs: readonly string[]): void {
  const refs = new Map<string, string>();
  const lines = heads.split("\n").filter((l) => l.length > 0);
  for (const line of lines) {
    const match = /^([0-9a-f]{40}) (\S+)$/.exec(line);
    if (match === null) throw new FetchError("SOURCE_BUNDLE_REFS_MISMATCH", `source bundle refs do not match the release identity: unexpected ref line ${describeValue(line)}${RELEASE_FILES_DISAGREE_FIX}`);
    refs.set(match[2] as string, match[1] as string);
  }
  if (lines.length !== 2 || refs.size !== 2 || !expectedRefs.every((r) => refs.has(r))) {
    throw new FetchError(
      "SOURCE_BUNDLE_REFS_MISMATCH",
      `source bundle refs do not match the release identity: expected exactly ${expectedRefs.join(" and ")}, found ${[...refs.keys()].join(", ") || "none"}${RELEASE_FILES_DISAGREE_FIX}`,
    );
  }
}

/** `package.json` at the source SHA is a blob of at most {@link MAX_PACKAGE_JSON_BYTES} naming the expected package and version. @throws FetchError `SOURCE_BUNDLE_PACKAGE_MISMATCH`, `SOURCE_BUNDLE_GIT_FAILED`. */
async function checkPackageJsonAt(repo: ScratchRepository, expect: SourceBundleExpectation): Promise<void> {
  const object = `${expect.sourceSha}:package.json`;
  const typeResult = await repo.run([repo.gitDir, "cat-file", "-t", "--end-of-options", object]);
  const sizeResult = await repo.run([repo.gitDir, "cat-file", "-s", "--end-of-options", object]);
  const size = Number(sizeResult.stdout.toString("utf8").trim());
  if (typeResult.code !== 0 || typeResult.stdout.toString("utf8").trim() !== "blob" || sizeResult.code !== 0 || !Number.isSafeInteger(size) || size > MAX_PACKAGE_JSON_BYTES) {
    throw new FetchError("SOURCE_BUNDLE_PACKAGE_MISMATCH", `source bundle has no readable package.json (at most ${MAX_PACKAGE_JSON_BYTES} bytes) at ${expect.sourceSha}${RELEASE_FILES_DISAGREE_FIX}`);
  }
  const text = await repo.step("cat-file", [repo.gitDir, "cat-file", "blob", "--end-of-options", object]);
  let pkg;
  try {
    pkg = parseStrictJson(text, { rejectIntegralFloats: false });
  } catch (error) {
    throw new FetchError("SOURCE_BUNDLE_PACKAGE_MISMATCH", `source bundle package.json at ${expect.sourceSha} is not valid JSON: ${(error as Error).message}${RELEASE_FILES_DISAGREE_FIX}`);
  }
  if (pkg["name"] !== expect.packageName || pkg["version"] !== expect.version) {
    throw new FetchError(
      "SOURCE_BUNDLE_PACKAGE_MISMATCH",
      `source bundle package.json at ${expect.sourceSha} names ${describeValue(pkg["name"])}@${describeValue(pkg["version"])}, the tested manifest ${describeValue(expect.packageName)}@${describeValue(expect.version)}${RELEASE_FILES_DISAGREE_FIX}`,
    );
  }
}
