/**
 * `release intent`: decide whether the commits since the last release make a
 * release, and which version.
 *
 * Three checks, in this order, each failing closed before anything is written
 * (docs/release-build.md, "Intent rules"; docs/architecture.md, "Release:
 * steps and data flow"):
 * 1. the disarm switch: unless `SEMANTIC_RELEASE_ENABLED` is exactly `true`,
 *    nothing runs and the result is `{released: false, disarmed: true}`;
 * 2. the baseline: clean tree (untracked files count), package.json `name`
 *    and stable `version`, tag `v<version>` present and an ancestor of HEAD;
 * 3. the history (`history.ts`): every non-merge commit since the baseline is
 *    an allowed conventional commit without an ambiguous breaking marker,
 *    every revert names the commit it reverts and pairs inside the range
 *    cancel; the remaining commits are classified by a strict pass of our own
 *    AND by the semantic-release JS API in dry-run (commit-analyzer,
 *    conventionalcommits preset). The stronger bump wins and a disagreement
 *    is reported in `analysis`.
 * Finally `v<next>` must not exist, locally or on the remote (`git ls-remote`).
 *
 * semantic-release runs with `repositoryUrl` = `file://<the checkout>` so its
 * `git ls-remote`, `git fetch --tags` and `git push --dry-run` never leave the
 * machine and need no token; the remote tag check is ours.
 */
import { Writable } from "node:stream";
import { readFile } from "node:fs/promises";
import { join, resolve as resolvePath } from "node:path";
import { bumpVersion, type ReleaseClass } from "../src/contract/grammar.js";
import { readReleaseConfig } from "./config.js";
import { ReleaseStepError } from "./errors.js";
import { currentBranch, git, headCommit, isAncestor, remoteTagCommit, remotes, resolveCommit, statusPorcelain } from "./git.js";
import { isRevertTitle, readHistory, strongerBump, type HistoryCommit } from "./history.js";
import { pluginConfigs, semanticReleaseDryRun, semanticReleaseEnvironment } from "./semantic-release-run.js";

/** The baseline of a release: the last released version and its tag. */
export interface Baseline {
  /** package.json `name`. */
  package: string;
  /** package.json `version`: the last released version. */
  version: string;
  /** `v<version>`. */
  tag: string;
  /** Commit the baseline tag points at (peeled). */
  tag_sha: string;
  /** HEAD (the trigger commit). */
  source_sha: string;
}

/**
 * Check the baseline (docs/release-build.md, "Intent rules").
 *
 * @param dir the checkout.
 * @param expectedPackage the configured package name; when given, package.json `name` must equal it.
 * @throws ReleaseStepError `RELEASE_TREE_DIRTY` (untracked files count),
 *   `RELEASE_CONFIG_INVALID`, `RELEASE_PACKAGE_MISMATCH`,
 *   `RELEASE_BASELINE_MISSING`, `RELEASE_BASELINE_NOT_ANCESTOR`, `GIT_FAILED`.
 */
export async function checkBaseline(dir: string, expectedPackage?: string): Promise<Baseline> {
  const dirty = await statusPorcelain(dir, true);
  if (dirty.length > 0) {
    throw new ReleaseStepError(
      "RELEASE_TREE_DIRTY",
      `working tree ${dir} is dirty: expected no changes and no untracked files, found ${dirty.length} (first: ${dirty[0]}); fix: commit or stash the changes (and remove or git-ignore untracked files), then rerun`,
    );
  }
  const config = await readReleaseConfig(dir);
  if (expectedPackage !== undefined && config.name !== expectedPackage) {
    throw new ReleaseStepError(
      "RELEASE_PACKAGE_MISMATCH",
      `expected package name ${JSON.stringify(expectedPackage)} (--package), package.json has ${JSON.stringify(config.name)}; fix: run it in the checkout of ${JSON.stringify(expectedPackage)}, or pass --package ${JSON.stringify(config.name)}`,
    );
  }
  const tag = `v${config.version}`;
  const tagSha = await resolveCommit(dir, `refs/tags/${tag}`);
  if (tagSha === undefined) {
    // Whether origin has it decides the fix: fetch it (a `git pull` of main alone leaves tags behind), or make it.
    const onOrigin = (await remotes(dir).catch(() => [] as string[])).includes("origin")
      ? await remoteTagCommit(dir, "origin", tag, 15_000).catch(() => undefined)
      : undefined;
    throw new ReleaseStepError(
      "RELEASE_BASELINE_MISSING",
      onOrigin !== undefined
        ? `baseline tag ${tag} (the version in package.json) is missing in ${dir}, but origin has it (${onOrigin}): fetch it into the checkout you release from (git fetch --tags origin there; release run clones that checkout), then rerun`
        : `baseline tag ${tag} (the version in package.json) is missing in ${dir}, and origin does not list it either (or could not be asked): for a first release, tag the commit that released ${config.version} (git tag ${tag} <commit>), push it (git push origin ${tag}) and review it before enabling releases; if origin should have it, run git fetch --tags origin`,
    );
  }
  const head = await headCommit(dir);
  if (!(await isAncestor(dir, tagSha, head))) {
    throw new ReleaseStepError(
      "RELEASE_BASELINE_NOT_ANCESTOR",
      `baseline tag ${tag} (${tagSha}, named by package.json version ${config.version}) is not an ancestor of HEAD (${head}); fix: release from a branch that contains ${tag} (git merge or rebase onto it), or, if the tag is wrong, point it at the commit that released ${config.version}`,
    );
  }
  return { package: config.name, version: config.version, tag, tag_sha: tagSha, source_sha: head };
}

/** How the two analyses compared. */
export interface IntentAnalysis {
  /** Bump from semantic-release's commit-analyzer (dry-run), `null` = no release. */
  semantic_release: ReleaseClass | null;
  /** Bump from the strict pass. */
  strict: ReleaseClass | null;
  /** The bump used (the stronger of the two). */
  chosen: ReleaseClass | null;
  /** Set when the two disagree: which one was stronger and why it was taken. */
  disagreement?: string;
}

/** Output of `release intent`. */
export type IntentResult =
  | { released: false; disarmed: true }
  | {
      released: boolean;
      previous_version: string;
      version: string | null;
      tag: string | null;
      release_class: ReleaseClass | null;
      notes: string;
      source_sha: string;
      baseline_tag: string;
      /** Every commit since the baseline; `reverts` names what a revert reverts, `cancelled_by` pairs a revert with its target inside the range. */
      commits: { sha: string; subject: string; release: ReleaseClass | null; reverts?: string; cancelled_by?: string }[];
      analysis: IntentAnalysis;
    };

/** Options of {@link releaseIntent}. */
export interface IntentOptions {
  /** The checkout (default `process.cwd()`). */
  dir?: string;
  /** Environment read for `SEMANTIC_RELEASE_ENABLED` (default `process.env`). */
  environment?: NodeJS.ProcessEnv;
  /** Configured package name package.json must carry. */
  expectedPackage?: string;
  /** Remote to check for an existing `v<next>` (default `origin`); `false` skips the remote check. */
  remote?: string | false;
  /** Where semantic-release's log goes (default: discarded). */
  log?: Writable;
}

function sink(): Writable {
  return new Writable({ write: (_c, _e, cb) => cb() });
}

/** Host used for notes when no public GitHub URL is known; its links are unwrapped afterwards. */
const UNLINKED_HOST = "https://unlinked.invalid";

/**
 * The public GitHub URL `https://github.com/<owner>/<repo>` of the checkout,
 * from the `origin` remote or package.json `repository`, or `undefined`.
 * Only used to render issue and user links in release notes (no network).
 */
export async function publicRepositoryUrl(dir: string): Promise<string | undefined> {
  const candidates: string[] = [];
  const origin = await git(["remote", "get-url", "origin"], { cwd: dir, allowFailure: true });
  if (origin.code === 0) candidates.push(origin.stdout.trim());
  try {
    const pkg = JSON.parse(await readFile(join(dir, "package.json"), "utf8")) as { repository?: unknown };
    const repo = pkg.repository;
    if (typeof repo === "string") candidates.push(repo);
    else if (repo !== null && typeof repo === "object" && typeof (repo as { url?: unknown }).url === "string") candidates.push((repo as { url: string }).url);
  } catch {
    // package.json problems are reported by the baseline check.
  }
  for (const candidate of candidates) {
    const m = /^(?:git\+)?(?:https:\/\/(?:[^@/]+@)?github\.com\/|git@github\.com:|ssh:\/\/git@github\.com\/|github:)([A-Za-z0-9_.-]+)\/([A-Za-z0-9_.-]+?)(?:\.git)?\/?$/.exec(candidate);
    if (m !== null) return `https://github.com/${m[1]}/${m[2]}`;
  }
  return undefined;
}

/**
 * Render release notes for `commits` with `@semantic-release/release-notes-generator`
 * (conventionalcommits preset, compare and reference links off) for the chosen version.
 * Issue and user mentions link to the public GitHub repository when one is
 * known ({@link publicRepositoryUrl}) and stay plain text otherwise. GitHub
 * and git revert titles (`Revert "..."`, `Reapply "..."`), which the preset
 * cannot parse, are listed under `### Reverts`.
 */
export async function renderNotes(dir: string, commits: HistoryCommit[], previous: { version: string; tag: string; sha: string }, next: { version: string; tag: string; sha: string }): Promise<string> {
  const { generateNotes } = await import("@semantic-release/release-notes-generator");
  const log = { log: () => undefined, warn: () => undefined, error: () => undefined, success: () => undefined };
  const publicUrl = await publicRepositoryUrl(dir);
  let notes = await generateNotes(pluginConfigs().notes, {
    cwd: dir,
    env: semanticReleaseEnvironment(),
    logger: log,
    options: { repositoryUrl: publicUrl ?? `${UNLINKED_HOST}/local/repository` },
    commits: commits.map((c) => ({ hash: c.sha, message: c.message, committerDate: c.committer_date, commit: { long: c.sha, short: c.sha.slice(0, 7) } })),
    lastRelease: { version: previous.version, gitTag: previous.tag, gitHead: previous.sha },
    nextRelease: { version: next.version, gitTag: next.tag, gitHead: next.sha, type: "release" },
  });
  if (publicUrl === undefined) notes = notes.replace(/\[([^\]]*)\]\(https:\/\/unlinked\.invalid[^)]*\)/g, "$1");
  const missing = commits.filter((c) => isRevertTitle(c.subject) && !notes.includes(c.sha.slice(0, 7)));
  notes = notes.trim() + "\n";
  const reverted = (c: HistoryCommit) => (c.reverts !== undefined ? ` (reverts ${c.reverts.slice(0, 7)})` : "");
  if (missing.length > 0) notes += `\n### Reverts\n\n${missing.map((c) => `* ${c.subject} ${c.sha.slice(0, 7)}${reverted(c)}`).join("\n")}\n`;
  return notes;
}

/**
 * Both analyses of the history: the strict pass over the commits left after
 * revert pairs cancel, and semantic-release (its dry-run, or, when pairs
 * cancelled, its commit-analyzer over the same remaining commits, since it
 * cannot pair a GitHub revert title without a hash). The stronger bump wins.
 */
async function analyse(dir: string, branch: string, history: HistoryCommit[], baseline: Baseline, log: Writable): Promise<IntentAnalysis> {
  const remaining = history.filter((c) => c.cancelled_by === undefined);
  let strict: ReleaseClass | null = null;
  for (const c of remaining) strict = strongerBump(strict, c.release);
  const sr = await semanticReleaseDryRun(dir, branch, log);
  if (sr.type !== null && sr.lastVersion !== baseline.version) {
    throw new ReleaseStepError("RELEASE_ANALYZER_FAILED", `semantic-release found last release ${sr.lastVersion ?? "none"}, expected the baseline ${baseline.version}`);
  }
  const srType = remaining.length === history.length ? sr.type : await analyzeRemaining(dir, remaining);
  const chosen = strongerBump(strict, srType);
  const analysis: IntentAnalysis = { semantic_release: srType, strict, chosen };
  if (srType !== strict) {
    analysis.disagreement =
      chosen === strict
        ? `the strict pass found ${strict ?? "no release"} where semantic-release found ${srType ?? "no release"}; the stronger bump ${chosen ?? "none"} is used`
        : `semantic-release found ${srType ?? "no release"} where the strict pass found ${strict ?? "no release"}; the stronger bump ${chosen ?? "none"} is used`;
  }
  return analysis;
}

/** semantic-release's commit-analyzer (same plugin config as the dry-run) over `commits`, newest first as semantic-release reads them. */
async function analyzeRemaining(dir: string, commits: HistoryCommit[]): Promise<ReleaseClass | null> {
  const { analyzeCommits } = await import("@semantic-release/commit-analyzer");
  const logger = { log: () => undefined, warn: () => undefined, error: () => undefined, success: () => undefined };
  const input = [...commits].reverse().map((c) => ({ hash: c.sha, message: c.message }));
  let type: unknown;
  try {
    type = await analyzeCommits(pluginConfigs().analyzer, { commits: input, logger, cwd: dir });
  } catch (error) {
    throw new ReleaseStepError("RELEASE_ANALYZER_FAILED", `semantic-release commit-analyzer failed: ${error instanceof Error ? error.message.split("\n", 1)[0] : String(error)}`, { cause: error });
  }
  if (type === null || type === undefined) return null;
  if (type !== "major" && type !== "minor" && type !== "patch") {
    throw new ReleaseStepError("RELEASE_ANALYZER_FAILED", `semantic-release computed an unsupported release type ${JSON.stringify(type)}`);
  }
  return type;
}

/**
 * `release intent` (docs/release-build.md, "Intent rules").
 *
 * @returns `{released: false, disarmed: true}` unless `SEMANTIC_RELEASE_ENABLED`
 *   is exactly `true`; otherwise `released`, `previous_version`, `version`,
 *   `tag`, `release_class`, `notes` (Markdown), the trigger `source_sha`, the
 *   classified `commits` and the `analysis` of both passes.
 * @throws ReleaseStepError baseline codes (see {@link checkBaseline}),
 *   `RELEASE_HISTORY_INVALID`, `RELEASE_BREAKING_AMBIGUOUS`,
 *   `RELEASE_REVERT_UNRESOLVED`, `RELEASE_DETACHED_HEAD`,
 *   `RELEASE_ANALYZER_FAILED` (semantic-release failed, or its last release is
 *   not the baseline), `RELEASE_TAG_EXISTS` (naming the commit `v<next>`
 *   points at, locally or on the remote), `RELEASE_CONFIG_INVALID` (remote not configured).
 */
export async function releaseIntent(options: IntentOptions = {}): Promise<IntentResult> {
  const environment = options.environment ?? process.env;
  if (environment["SEMANTIC_RELEASE_ENABLED"] !== "true") return { released: false, disarmed: true };
  const dir = resolvePath(options.dir ?? process.cwd());
  const baseline = await checkBaseline(dir, options.expectedPackage);
  const branch = await currentBranch(dir);
  if (branch === undefined) {
    throw new ReleaseStepError("RELEASE_DETACHED_HEAD", "HEAD is detached: check out the release branch (e.g. force-create local main at the trigger commit)");
  }
  const history = await readHistory(dir, baseline.tag);
  const analysis = await analyse(dir, branch, history, baseline, options.log ?? sink());
  const chosen = analysis.chosen;
  const commits = history.map((c) => ({
    sha: c.sha,
    subject: c.subject,
    release: c.release,
    ...(c.reverts !== undefined ? { reverts: c.reverts } : {}),
    ...(c.cancelled_by !== undefined ? { cancelled_by: c.cancelled_by } : {}),
  }));
  if (chosen === null) {
    return { released: false, previous_version: baseline.version, version: null, tag: null, release_class: null, notes: "", source_sha: baseline.source_sha, baseline_tag: baseline.tag, commits, analysis };
  }
  const version = bumpVersion(baseline.version, chosen);
  const tag = `v${version}`;
  await refuseExistingTag(dir, tag, options.remote ?? "origin");
  const notes = await renderNotes(dir, history.filter((c) => c.cancelled_by === undefined), { version: baseline.version, tag: baseline.tag, sha: baseline.tag_sha }, { version, tag, sha: baseline.source_sha });
  return { released: true, previous_version: baseline.version, version, tag, release_class: chosen, notes, source_sha: baseline.source_sha, baseline_tag: baseline.tag, commits, analysis };
}

/**
 * Fail when `tag` exists locally or on `remote` (docs/release-build.md, "Intent rules").
 * @throws ReleaseStepError `RELEASE_TAG_EXISTS` naming the commit; `RELEASE_CONFIG_INVALID` for an unknown remote.
 */
export async function refuseExistingTag(dir: string, tag: string, remote: string | false): Promise<void> {
  const local = await resolveCommit(dir, `refs/tags/${tag}`);
  if (local !== undefined) {
    throw new ReleaseStepError(
      "RELEASE_TAG_EXISTS",
      `tag ${tag} already exists locally on commit ${local}; refusing to release it again; fix: if ${tag} was released, set package.json version to it (the baseline) so the next release is computed from there; if the tag is a leftover, delete it (git tag -d ${tag})`,
    );
  }
  if (remote === false) return;
  if (!(await remotes(dir)).includes(remote)) {
    throw new ReleaseStepError("RELEASE_CONFIG_INVALID", `remote ${JSON.stringify(remote)} is not configured; cannot check whether ${tag} already exists there; fix: add it (git remote add ${remote} <url>), pass --remote <name>, or --no-remote-check`);
  }
  const onRemote = await remoteTagCommit(dir, remote, tag);
  if (onRemote !== undefined) {
    throw new ReleaseStepError(
      "RELEASE_TAG_EXISTS",
      `tag ${tag} already exists on ${remote} at commit ${onRemote}; refusing to release it again; fix: fetch it (git fetch --tags ${remote}) and set package.json version to ${tag.slice(1)} (the baseline) so the next release is computed from there`,
    );
  }
}

/**
 * Why a run is disarmed, saying what was found: the switch must be exactly
 * `true` (docs/release-run.md, "`release run`"), so `1`, `TRUE` or `yes` disarm it too.
 */
export function disarmedReason(value: string | undefined): string {
  if (value === undefined || value === "") return "disarmed: SEMANTIC_RELEASE_ENABLED is not set (set it to exactly true to release)";
  return `disarmed: SEMANTIC_RELEASE_ENABLED is ${JSON.stringify(value)}, not exactly "true" (only the lowercase word true arms a release; 1, TRUE and yes do not)`;
}
