/**
 * `release intent`: decide whether the commits since the last release make a
 * release, and which version.
 *
 * Three checks, in this order, each failing closed before anything is written
 * (reference `original-release-contract.md` sections 3.19 and 6.0-6.1 job 2,
 * DESIGN.md section 4):
 * 1. the disarm switch: unless `SEMANTIC_RELEASE_ENABLED` is exactly `true`,
 *    nothing runs and the result is `{released: false, disarmed: true}`;
 * 2. the baseline: clean tree (untracked files count), package.json `name`
 *    and stable `version`, tag `v<version>` present and an ancestor of HEAD;
 * 3. the history: every non-merge commit since the baseline is an allowed
 *    conventional commit, classified by a strict pass of our own
 *    ({@link classifyCommitMessage}) AND by the semantic-release JS API in
 *    dry-run (commit-analyzer, conventionalcommits preset). The stronger bump
 *    wins and a disagreement is reported in `analysis`.
 * Finally `v<next>` must not exist, locally or on the remote (`git ls-remote`).
 *
 * semantic-release runs with `repositoryUrl` = `file://<the checkout>` so its
 * `git ls-remote`, `git fetch --tags` and `git push --dry-run` never leave the
 * machine and need no token; the remote tag check is ours.
 */
import { Writable } from "node:stream";
import { readFile } from "node:fs/promises";
import { pathToFileURL } from "node:url";
import { join, resolve as resolvePath } from "node:path";
import { CommitParser, type ParserOptions } from "conventional-commits-parser";
import { bumpVersion, type ReleaseClass } from "../src/contract/grammar.js";
import { readReleaseConfig } from "./config.js";
import { ReleaseStepError } from "./errors.js";
import { currentBranch, git, gitEnvironment, gitText, headCommit, isAncestor, remoteTagCommit, remotes, resolveCommit, statusPorcelain } from "./git.js";

/** Commit types allowed in release history (python-semantic-release's default conventional parser, plus `revert`). */
export const ALLOWED_COMMIT_TYPES = Object.freeze(["build", "chore", "ci", "docs", "feat", "fix", "perf", "refactor", "style", "test", "revert"]);

const HEADER_RE = /^([a-z]+)(?:\(([^()\r\n]+)\))?!?: (\S.*)$/;
const BREAKING_HEADER_RE = /^([a-z]+)(?:\(([^()\r\n]+)\))?!: (\S.*)$/;
const GITHUB_REVERT_RE = /^Revert "(.+)"(?: \(#[0-9]+\))?$/;
const NEVER = /[^\s\S]/;

/**
 * Parser options shared by the strict pass and by semantic-release's
 * commit-analyzer and release-notes-generator (they override the preset's):
 * a footer counts as breaking only when a line starts with exactly
 * `BREAKING CHANGE:` or `BREAKING-CHANGE:` (case-sensitive; the parser's
 * default is case-insensitive and also accepts a space instead of the colon),
 * and no `-field-` sections (the default field pattern swallows everything
 * after a squash separator `---------`, hiding a `BREAKING CHANGE:` footer).
 */
export const COMMIT_PARSER_OPTIONS: ParserOptions = Object.freeze({
  headerPattern: HEADER_RE,
  breakingHeaderPattern: BREAKING_HEADER_RE,
  headerCorrespondence: ["type", "scope", "subject"],
  noteKeywords: ["BREAKING CHANGE", "BREAKING-CHANGE"],
  notesPattern: (keywords: string) => new RegExp(`^(${keywords}):(?: (.*))?$`),
  fieldPattern: NEVER,
  revertPattern: /^(?:Revert|revert:)\s"?([\s\S]+?)"?\s*This reverts commit (\w*)\./,
  revertCorrespondence: ["header", "hash"],
});

/** Result of classifying one commit message. */
export interface CommitClassification {
  /** Conventional type (`revert` for both revert forms). */
  type: string;
  /** True for `!` in the header or a `BREAKING CHANGE:`/`BREAKING-CHANGE:` footer. */
  breaking: boolean;
  /** Bump this commit asks for, `null` for non-releasing types. */
  release: ReleaseClass | null;
}

const RANK: Record<ReleaseClass, number> = { patch: 1, minor: 2, major: 3 };

/** The stronger of two bumps (`null` = no release). */
export function strongerBump(a: ReleaseClass | null, b: ReleaseClass | null): ReleaseClass | null {
  if (a === null) return b;
  if (b === null) return a;
  return RANK[a] >= RANK[b] ? a : b;
}

function firstLine(message: string): string {
  const line = message.split("\n", 1)[0]?.trim() ?? "";
  return line.length === 0 ? "<empty>" : line.length > 120 ? line.slice(0, 117) + "..." : line;
}

/**
 * Classify one commit message with `conventional-commits-parser` 6 and the
 * strict rules of reference section 3.19 H2: types {@link ALLOWED_COMMIT_TYPES};
 * `feat` -> minor; `fix`, `perf`, `revert` -> patch; `!` or a breaking footer
 * -> major; other types -> no release. GitHub's revert title
 * `Revert "<header>"` (optionally ` (#N)`, body optional) is a revert: at
 * least a patch, never ignored.
 *
 * @throws ReleaseStepError `RELEASE_HISTORY_INVALID` naming the first line.
 */
export function classifyCommitMessage(message: string): CommitClassification {
  const text = message.replace(/\r\n/g, "\n");
  const header = text.split("\n", 1)[0] ?? "";
  const invalid = () => new ReleaseStepError("RELEASE_HISTORY_INVALID", `invalid conventional commit in release history: ${firstLine(text)}`);
  if (text.trim().length === 0) throw invalid();
  let parsed: ReturnType<CommitParser["parse"]>;
  try {
    parsed = new CommitParser(COMMIT_PARSER_OPTIONS).parse(text);
  } catch {
    throw invalid();
  }
  const breakingFooter = parsed.notes.some((n) => n.title === "BREAKING CHANGE" || n.title === "BREAKING-CHANGE");
  if (GITHUB_REVERT_RE.test(header)) {
    return { type: "revert", breaking: breakingFooter, release: breakingFooter ? "major" : "patch" };
  }
  const type = typeof parsed.type === "string" ? parsed.type : undefined;
  if (type === undefined || !ALLOWED_COMMIT_TYPES.includes(type) || !HEADER_RE.test(header)) throw invalid();
  const breaking = breakingFooter || BREAKING_HEADER_RE.test(header);
  let release: ReleaseClass | null = null;
  if (breaking) release = "major";
  else if (type === "feat") release = "minor";
  else if (type === "fix" || type === "perf" || type === "revert") release = "patch";
  return { type, breaking, release };
}

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
 * Check the baseline (reference section 3.19 H1, adapted to package.json).
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
    throw new ReleaseStepError("RELEASE_TREE_DIRTY", `working tree is dirty: expected no changes and no untracked files, found ${dirty.length} (first: ${dirty[0]})`);
  }
  const config = await readReleaseConfig(dir);
  if (expectedPackage !== undefined && config.name !== expectedPackage) {
    throw new ReleaseStepError("RELEASE_PACKAGE_MISMATCH", `expected package name ${JSON.stringify(expectedPackage)}, package.json has ${JSON.stringify(config.name)}`);
  }
  const tag = `v${config.version}`;
  const tagSha = await resolveCommit(dir, `refs/tags/${tag}`);
  if (tagSha === undefined) {
    throw new ReleaseStepError("RELEASE_BASELINE_MISSING", `baseline tag ${tag} is missing; seed and review it before enabling releases`);
  }
  const head = await headCommit(dir);
  if (!(await isAncestor(dir, tagSha, head))) {
    throw new ReleaseStepError("RELEASE_BASELINE_NOT_ANCESTOR", `baseline tag ${tag} (${tagSha}) is not an ancestor of HEAD (${head})`);
  }
  return { package: config.name, version: config.version, tag, tag_sha: tagSha, source_sha: head };
}

/** One commit of the release history, classified. */
export interface HistoryCommit extends CommitClassification {
  /** Commit SHA. */
  sha: string;
  /** First line of the message. */
  subject: string;
  /** Full raw message. */
  message: string;
  /** Committer date, ISO 8601. */
  committer_date: string;
}

/**
 * Read every non-merge commit in `<baselineTag>..HEAD`, oldest first, and
 * classify each ({@link classifyCommitMessage}).
 *
 * @throws ReleaseStepError `RELEASE_HISTORY_INVALID` at the first invalid message, `GIT_FAILED`.
 */
export async function readHistory(dir: string, baselineTag: string): Promise<HistoryCommit[]> {
  const list = await gitText(["rev-list", "--no-merges", "--reverse", `refs/tags/${baselineTag}..HEAD`], { cwd: dir });
  const shas = list.split("\n").filter((s) => s.length > 0);
  const commits: HistoryCommit[] = [];
  for (const sha of shas) {
    const raw = (await git(["cat-file", "commit", sha], { cwd: dir })).stdout;
    const split = raw.indexOf("\n\n");
    const headers = split < 0 ? raw : raw.slice(0, split);
    const message = split < 0 ? "" : raw.slice(split + 2);
    const committer = /^committer .* ([0-9]+) [+-][0-9]{4}$/m.exec(headers);
    const seconds = committer?.[1] !== undefined ? Number(committer[1]) : 0;
    const classification = classifyCommitMessage(message);
    commits.push({ sha, subject: firstLine(message), message, committer_date: new Date(seconds * 1000).toISOString(), ...classification });
  }
  return commits;
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
      commits: { sha: string; subject: string; release: ReleaseClass | null }[];
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

/** Environment handed to semantic-release: no tokens, no CI detection variables, isolated git. */
function semanticReleaseEnvironment(): NodeJS.ProcessEnv {
  const base = gitEnvironment();
  const env: NodeJS.ProcessEnv = {};
  for (const name of ["PATH", "HOME", "TMPDIR", "LANG", "LC_ALL", "SystemRoot"]) if (base[name] !== undefined) env[name] = base[name];
  for (const [name, value] of Object.entries(base)) if (name.startsWith("GIT_CONFIG") || name === "GIT_TERMINAL_PROMPT") env[name] = value;
  return env;
}

/**
 * semantic-release merges the repository's own config (`.releaserc`,
 * `release.config.*`, package.json `release`) under the API options; these
 * keys, set to `undefined`, drop its `extends` and per-step plugin overrides.
 */
const OVERRIDDEN_CONFIG_KEYS = Object.freeze(
  Object.fromEntries(["extends", "verifyConditions", "analyzeCommits", "verifyRelease", "generateNotes", "prepare", "publish", "addChannel", "success", "fail"].map((k) => [k, undefined])),
);

const PLUGIN_ANALYZER = "@semantic-release/commit-analyzer";
const PLUGIN_NOTES = "@semantic-release/release-notes-generator";

function pluginConfigs(): { analyzer: Record<string, unknown>; notes: Record<string, unknown> } {
  return {
    analyzer: { preset: "conventionalcommits", parserOpts: { ...COMMIT_PARSER_OPTIONS } },
    notes: { preset: "conventionalcommits", linkCompare: false, linkReferences: false, parserOpts: { ...COMMIT_PARSER_OPTIONS } },
  };
}

/**
 * Run semantic-release's JS API in dry-run on `dir` (branch `branch`) and
 * return the bump its commit-analyzer computed and its last release version.
 *
 * @throws ReleaseStepError `RELEASE_ANALYZER_FAILED` when semantic-release throws.
 */
async function semanticReleaseDryRun(dir: string, branch: string, log: Writable): Promise<{ type: ReleaseClass | null; lastVersion: string | undefined }> {
  const { default: semanticRelease } = await import("semantic-release");
  const plugins = pluginConfigs();
  let result: Awaited<ReturnType<typeof semanticRelease>>;
  try {
    result = await semanticRelease(
      {
        dryRun: true,
        ci: false,
        noCi: true,
        branches: [branch],
        repositoryUrl: pathToFileURL(dir).href,
        tagFormat: "v${version}",
        // Neutralise a repository config's shareable configs and step overrides: only our two plugins run.
        ...OVERRIDDEN_CONFIG_KEYS,
        plugins: [
          [PLUGIN_ANALYZER, plugins.analyzer],
          [PLUGIN_NOTES, plugins.notes],
        ],
      } as unknown as Parameters<typeof semanticRelease>[0],
      { cwd: dir, env: semanticReleaseEnvironment(), stdout: log as NodeJS.WriteStream, stderr: log as NodeJS.WriteStream },
    );
  } catch (error) {
    const message = error instanceof Error ? error.message.split("\n", 1)[0] : String(error);
    throw new ReleaseStepError("RELEASE_ANALYZER_FAILED", `semantic-release dry-run failed: ${message}`, { cause: error });
  }
  if (result === false) return { type: null, lastVersion: undefined };
  const type = result.nextRelease.type;
  if (type !== "major" && type !== "minor" && type !== "patch") {
    throw new ReleaseStepError("RELEASE_ANALYZER_FAILED", `semantic-release computed an unsupported release type ${JSON.stringify(type)}`);
  }
  return { type, lastVersion: result.lastRelease.version };
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
 * revert titles, which the preset cannot parse, are listed under `### Reverts`.
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
  const missing = commits.filter((c) => GITHUB_REVERT_RE.test(c.subject) && !notes.includes(c.sha.slice(0, 7)));
  notes = notes.trim() + "\n";
  if (missing.length > 0) notes += `\n### Reverts\n\n${missing.map((c) => `* ${c.subject} ${c.sha.slice(0, 7)}`).join("\n")}\n`;
  return notes;
}

/**
 * `release intent` (reference sections 3.19, 6.0, 6.1 job 2).
 *
 * @returns `{released: false, disarmed: true}` unless `SEMANTIC_RELEASE_ENABLED`
 *   is exactly `true`; otherwise `released`, `previous_version`, `version`,
 *   `tag`, `release_class`, `notes` (Markdown), the trigger `source_sha`, the
 *   classified `commits` and the `analysis` of both passes.
 * @throws ReleaseStepError baseline codes (see {@link checkBaseline}),
 *   `RELEASE_HISTORY_INVALID`, `RELEASE_DETACHED_HEAD`,
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
  let strict: ReleaseClass | null = null;
  for (const c of history) strict = strongerBump(strict, c.release);
  const sr = await semanticReleaseDryRun(dir, branch, options.log ?? sink());
  if (sr.type !== null && sr.lastVersion !== baseline.version) {
    throw new ReleaseStepError("RELEASE_ANALYZER_FAILED", `semantic-release found last release ${sr.lastVersion ?? "none"}, expected the baseline ${baseline.version}`);
  }
  const chosen = strongerBump(strict, sr.type);
  const analysis: IntentAnalysis = { semantic_release: sr.type, strict, chosen };
  if (sr.type !== strict) {
    analysis.disagreement =
      chosen === strict
        ? `the strict pass found ${strict ?? "no release"} where semantic-release found ${sr.type ?? "no release"}; the stronger bump ${chosen ?? "none"} is used`
        : `semantic-release found ${sr.type ?? "no release"} where the strict pass found ${strict ?? "no release"}; the stronger bump ${chosen ?? "none"} is used`;
  }
  const commits = history.map((c) => ({ sha: c.sha, subject: c.subject, release: c.release }));
  if (chosen === null) {
    return { released: false, previous_version: baseline.version, version: null, tag: null, release_class: null, notes: "", source_sha: baseline.source_sha, baseline_tag: baseline.tag, commits, analysis };
  }
  const version = bumpVersion(baseline.version, chosen);
  const tag = `v${version}`;
  await refuseExistingTag(dir, tag, options.remote ?? "origin");
  const notes = await renderNotes(dir, history, { version: baseline.version, tag: baseline.tag, sha: baseline.tag_sha }, { version, tag, sha: baseline.source_sha });
  return { released: true, previous_version: baseline.version, version, tag, release_class: chosen, notes, source_sha: baseline.source_sha, baseline_tag: baseline.tag, commits, analysis };
}

/**
 * Fail when `tag` exists locally or on `remote` (reference section 6.1 job 2).
 * @throws ReleaseStepError `RELEASE_TAG_EXISTS` naming the commit; `RELEASE_CONFIG_INVALID` for an unknown remote.
 */
export async function refuseExistingTag(dir: string, tag: string, remote: string | false): Promise<void> {
  const local = await resolveCommit(dir, `refs/tags/${tag}`);
  if (local !== undefined) {
    throw new ReleaseStepError("RELEASE_TAG_EXISTS", `tag ${tag} already exists locally on commit ${local}; refusing to release it again`);
  }
  if (remote === false) return;
  if (!(await remotes(dir)).includes(remote)) {
    throw new ReleaseStepError("RELEASE_CONFIG_INVALID", `remote ${JSON.stringify(remote)} is not configured; cannot check whether ${tag} already exists there`);
  }
  const onRemote = await remoteTagCommit(dir, remote, tag);
  if (onRemote !== undefined) {
    throw new ReleaseStepError("RELEASE_TAG_EXISTS", `tag ${tag} already exists on ${remote} at commit ${onRemote}; refusing to release it again`);
  }
}
