/**
 * The release history: every non-merge commit since the baseline tag, each
 * classified by the strict conventional-commit pass, with ambiguous
 * breaking-change markers refused and every revert resolved to the commit it
 * reverts (docs/release-build.md, "Intent rules"; Conventional Commits 1.0.0,
 * specification items 8-16 and the `revert` recommendation).
 *
 * Rules owned here:
 * - the exact breaking tokens are `!` before the header colon and a line
 *   starting `BREAKING CHANGE: ` or `BREAKING-CHANGE: ` (upper case, as the
 *   specification requires); a line that looks like a breaking marker but is
 *   not the exact token (`BREAKING CHANGES:`, `BREAKING CHANGE y`,
 *   `Breaking Change: y`, `* BREAKING CHANGE: y`, `BREAKING:`, and lines that
 *   only read so: full-width letters, invisible characters, combining marks,
 *   Cyrillic or Greek look-alike capitals) is an error naming the commit,
 *   never a silent minor or patch;
 * - a revert names what it reverts: `This reverts commit <sha>.` or
 *   `Refs: <sha>` when that commit is an ancestor, else the quoted header of
 *   GitHub's `Revert "<header>" (#N)` title (or the subject of `revert:
 *   <header>`) matched against the subjects of its ancestors, newest first;
 *   git 2.43+'s `Reapply "<header>"` reverts the commit titled
 *   `Revert "<header>"`;
 * - a revert and the commit it reverts cancel when both are in the range
 *   (processed newest first, so a revert of a revert restores the original).
 */
import { CommitParser, type ParserOptions } from "conventional-commits-parser";
import type { ReleaseClass } from "../src/contract/grammar.js";
import { ReleaseStepError } from "./errors.js";
import { git, gitText, isAncestor, resolveCommit } from "./git.js";

/** Commit types allowed in release history (python-semantic-release's default conventional parser, plus `revert`). */
export const ALLOWED_COMMIT_TYPES = Object.freeze(["build", "chore", "ci", "docs", "feat", "fix", "perf", "refactor", "style", "test", "revert"]);

const HEADER_RE = /^([a-z]+)(?:\(([^()\r\n]+)\))?!?: (\S.*)$/;
const BREAKING_HEADER_RE = /^([a-z]+)(?:\(([^()\r\n]+)\))?!: (\S.*)$/;
/** GitHub's revert title (also git's default revert subject): `Revert "<header>"`, optionally ` (#N)`. */
export const GITHUB_REVERT_RE = /^Revert "(.+)"(?: \(#[0-9]+\))?$/;
/** git 2.43+'s title for reverting a revert: `Reapply "<header>"`, the revert's own title with `Revert` replaced. */
const REAPPLY_RE = /^Reapply "(.+)"(?: \(#[0-9]+\))?$/;

/** True for a revert title that is not a conventional header: GitHub's and git's `Revert "<header>"`, git's `Reapply "<header>"`. */
export function isRevertTitle(subject: string): boolean {
  return GITHUB_REVERT_RE.test(subject) || REAPPLY_RE.test(subject);
}
const NEVER = /[^\s\S]/;
/**
 * A breaking footer: the keyword, a colon, then the text (if any) after one
 * space. The text group always takes part in the match (empty for a bare
 * `BREAKING CHANGE:`): conventional-commits-parser 6 crashes on an absent
 * group, and semantic-release's default parser reads a bare footer as a
 * breaking note with empty text (a major release), so this one does too.
 */
const NOTES_PATTERN = "^(KEYWORDS):(?: |$)(.*)$";
/** git's and GitHub's revert forms as conventional-commits-parser reads them. */
const REVERT_PATTERN = /^(?:Revert|revert:)\s"?([\s\S]+?)"?\s*This reverts commit (\w*)\./;
/** A footer line with the exact breaking token (Conventional Commits items 12-16). */
const EXACT_BREAKING_LINE = /^BREAKING[ -]CHANGE:(?: .*)?$/;
/** A line that reads like a breaking marker: any case, plural, no colon, bullets or indentation before it. */
const BREAKING_LOOKING_LINE = /^[\s>*+-]*breaking(?:[\s_-]*changes?\b|\s*:)/i;
/** A header subject that starts like a breaking marker (upper case: a deliberate token, not prose). */
const BREAKING_LOOKING_SUBJECT = /^BREAKING(?:[\s_-]*CHANGES?\b|\s*:)/;
/** Cyrillic and Greek capitals drawn like the Latin letters of "BREAKING CHANGE" (Unicode confusables). */
const CONFUSABLE_CAPITALS: Readonly<Record<string, string>> = Object.freeze({
  "\u0410": "A", "\u0391": "A", "\u0412": "B", "\u0392": "B", "\u0421": "C", "\u03f9": "C", "\u0415": "E", "\u0395": "E",
  "\u041d": "H", "\u0397": "H", "\u0406": "I", "\u0399": "I", "\u04c0": "I", "\u041a": "K", "\u039a": "K", "\u039d": "N",
});

/**
 * The form a reader sees: compatibility forms folded (full-width letters,
 * ligatures), combining marks and invisible format characters (zero-width
 * space, joiners, soft hyphen) dropped, confusable capitals mapped to Latin.
 */
function visibleSkeleton(line: string): string {
  return line
    .normalize("NFKD")
    .replace(/[\p{M}\p{Cf}]/gu, "")
    .replace(/[\u0391-\u03f9\u0400-\u04ff]/g, (c) => CONFUSABLE_CAPITALS[c] ?? c);
}

/** `This reverts commit <sha>.` (git's revert body) and `Refs: <sha>` (Conventional Commits' revert advice). */
const REVERT_HASH_RE = /^(?:This reverts commit ([0-9a-f]{7,40})\.?|Refs: ([0-9a-f]{7,40}))\s*$/m;
/** Most ancestors searched for a reverted header. */
const MAX_REVERT_SEARCH = 100_000;

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
  notesPattern: (keywords: string) => new RegExp(NOTES_PATTERN.replace("KEYWORDS", keywords)),
  fieldPattern: NEVER,
  revertPattern: REVERT_PATTERN,
  revertCorrespondence: ["header", "hash"],
});

/** A regular expression as data (`{source, flags}`). */
export interface RegExpSource {
  source: string;
  flags: string;
}

/**
 * {@link COMMIT_PARSER_OPTIONS} as plain data, for semantic-release's dry
 * run in a child process: patterns as `{source, flags}`, `notesPattern` as a
 * template whose `KEYWORDS` is replaced by the joined keywords.
 */
export const COMMIT_PARSER_SOURCE = Object.freeze({
  headerPattern: { source: HEADER_RE.source, flags: HEADER_RE.flags } as RegExpSource,
  breakingHeaderPattern: { source: BREAKING_HEADER_RE.source, flags: BREAKING_HEADER_RE.flags } as RegExpSource,
  headerCorrespondence: ["type", "scope", "subject"],
  noteKeywords: ["BREAKING CHANGE", "BREAKING-CHANGE"],
  notesPattern: NOTES_PATTERN,
  fieldPattern: { source: NEVER.source, flags: NEVER.flags } as RegExpSource,
  revertPattern: { source: REVERT_PATTERN.source, flags: REVERT_PATTERN.flags } as RegExpSource,
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

function clip(line: string): string {
  return line.length > 120 ? line.slice(0, 117) + "..." : line;
}

function firstLine(message: string): string {
  const line = message.split("\n", 1)[0]?.trim() ?? "";
  return line.length === 0 ? "<empty>" : clip(line);
}

function commitLabel(sha: string | undefined, text: string): string {
  return sha === undefined ? JSON.stringify(firstLine(text)) : `${sha} (${JSON.stringify(firstLine(text))})`;
}

/**
 * Refuse a message whose header subject or any later line looks like a
 * breaking-change marker without being the exact token.
 * @throws ReleaseStepError `RELEASE_BREAKING_AMBIGUOUS` naming the commit and the line.
 */
function refuseAmbiguousBreakingMarkers(text: string, sha: string | undefined): void {
  const lines = text.split("\n");
  const subject = HEADER_RE.exec(lines[0] ?? "")?.[3];
  const at = (index: number, line: string) =>
    new ReleaseStepError(
      "RELEASE_BREAKING_AMBIGUOUS",
      `commit ${commitLabel(sha, text)} has an ambiguous breaking-change marker on line ${index + 1}: ${JSON.stringify(clip(line))}; ` +
        'expected a footer line starting exactly "BREAKING CHANGE: " or "BREAKING-CHANGE: " (upper case, Conventional Commits 1.0.0 items 12-16) or "!" before the header colon, ' +
        "so the release class is not guessed; fix: reword the commit before it reaches the release branch; for history already there, review it and seed a new baseline tag after it",
    );
  if (subject !== undefined && BREAKING_LOOKING_SUBJECT.test(visibleSkeleton(subject))) throw at(0, lines[0] as string);
  for (let i = 1; i < lines.length; i += 1) {
    const line = lines[i] as string;
    if (BREAKING_LOOKING_LINE.test(visibleSkeleton(line)) && !EXACT_BREAKING_LINE.test(line)) throw at(i, line);
  }
}

/**
 * Classify one commit message with `conventional-commits-parser` 6 and the
 * strict rules (docs/release-build.md, "Intent rules"): types {@link ALLOWED_COMMIT_TYPES};
 * `feat` -> minor; `fix`, `perf`, `revert` -> patch; `!` or a breaking footer
 * -> major; other types -> no release. GitHub's revert title
 * `Revert "<header>"` (optionally ` (#N)`, body optional) is a revert: at
 * least a patch, never ignored.
 *
 * @param sha the commit, named in errors when given.
 * @throws ReleaseStepError `RELEASE_HISTORY_INVALID` naming the first line,
 *   `RELEASE_BREAKING_AMBIGUOUS` naming the line that looks like a breaking
 *   marker but is not the exact token.
 */
export function classifyCommitMessage(message: string, sha?: string): CommitClassification {
  const text = message.replace(/\r\n/g, "\n");
  const header = text.split("\n", 1)[0] ?? "";
  const invalid = () =>
    new ReleaseStepError(
      "RELEASE_HISTORY_INVALID",
      `invalid conventional commit in release history: ${sha === undefined ? JSON.stringify(firstLine(text)) : `${sha} ${JSON.stringify(firstLine(text))}`}; ` +
        `expected every commit since the baseline tag to have a Conventional Commits 1.0.0 header "<type>[(scope)][!]: <subject>" with type one of ${ALLOWED_COMMIT_TYPES.join(", ")} ` +
        `(release history rules: docs/release-build.md, "Intent rules"); fix: reword it before it reaches the release branch (git commit --amend, or git rebase -i <baseline tag>, then push); ` +
        `for a commit already on origin's main, review the history and tag a new baseline after it (git tag v<released version> <commit>; git push origin v<released version>)`,
    );
  if (text.trim().length === 0) throw invalid();
  let parsed: ReturnType<CommitParser["parse"]>;
  try {
    parsed = new CommitParser(COMMIT_PARSER_OPTIONS).parse(text);
  } catch {
    throw invalid();
  }
  const github = isRevertTitle(header);
  const type = github ? "revert" : typeof parsed.type === "string" ? parsed.type : undefined;
  if (type === undefined || !ALLOWED_COMMIT_TYPES.includes(type) || (!github && !HEADER_RE.test(header))) throw invalid();
  refuseAmbiguousBreakingMarkers(text, sha);
  const breakingFooter = parsed.notes.some((n) => n.title === "BREAKING CHANGE" || n.title === "BREAKING-CHANGE");
  const breaking = breakingFooter || BREAKING_HEADER_RE.test(header);
  let release: ReleaseClass | null = null;
  if (breaking) release = "major";
  else if (type === "feat") release = "minor";
  else if (type === "fix" || type === "perf" || type === "revert") release = "patch";
  return { type, breaking, release };
}

/** What a revert message says it reverts: a commit hash and/or the reverted header. */
export interface RevertTarget {
  /** Hash from `This reverts commit <sha>.` or `Refs: <sha>` (7-40 hex). */
  hash?: string;
  /** Header from `Revert "<header>"` or the subject of `revert: <header>`. */
  header?: string;
}

/** The revert target named by a message, or `undefined` when the message is not a revert. */
export function revertTargetOf(message: string): RevertTarget | undefined {
  const text = message.replace(/\r\n/g, "\n");
  const header = text.split("\n", 1)[0] ?? "";
  const github = GITHUB_REVERT_RE.exec(header);
  const reapply = REAPPLY_RE.test(header);
  const conventional = /^revert(?:\([^()\r\n]+\))?!?: (\S.*)$/.exec(header);
  if (github === null && !reapply && conventional === null) return undefined;
  const target: RevertTarget = {};
  const quoted = github?.[1] ?? conventional?.[1];
  if (reapply) target.header = `Revert "${header.slice('Reapply "'.length)}`;
  else if (quoted !== undefined) target.header = quoted.replace(/^"(.*)"$/, "$1");
  const hash = REVERT_HASH_RE.exec(text.slice(header.length));
  if (hash !== null) target.hash = (hash[1] ?? hash[2]) as string;
  return target;
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
  /** For a revert: the full SHA of the commit it reverts. */
  reverts?: string;
  /** Set on both commits of a revert pair inside the range: the other commit's SHA. */
  cancelled_by?: string;
}

/**
 * Read every non-merge commit in `<baselineTag>..HEAD`, oldest first, and
 * classify each ({@link classifyCommitMessage}); then resolve every revert
 * ({@link resolveReverts}).
 *
 * @throws ReleaseStepError `RELEASE_HISTORY_INVALID`,
 *   `RELEASE_BREAKING_AMBIGUOUS` at the first bad message (naming its SHA),
 *   `RELEASE_REVERT_UNRESOLVED`, `GIT_FAILED`.
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
    const classification = classifyCommitMessage(message, sha);
    commits.push({ sha, subject: firstLine(message), message, committer_date: new Date(seconds * 1000).toISOString(), ...classification });
  }
  await resolveReverts(dir, commits);
  return commits;
}

/** The ancestor of `revert` that `target` names, or `undefined`. */
async function findReverted(dir: string, revert: HistoryCommit, target: RevertTarget, range: HistoryCommit[]): Promise<string | undefined> {
  if (target.hash !== undefined) {
    const full = await resolveCommit(dir, target.hash);
    if (full !== undefined && full !== revert.sha && (await isAncestor(dir, full, revert.sha))) return full;
  }
  if (target.header === undefined) return undefined;
  const index = range.findIndex((c) => c.sha === revert.sha);
  for (let i = index - 1; i >= 0; i -= 1) if (range[i]?.subject === target.header) return range[i]?.sha;
  const parent = await resolveCommit(dir, `${revert.sha}^`);
  if (parent === undefined) return undefined;
  const log = await gitText(["log", `--max-count=${MAX_REVERT_SEARCH}`, "--format=%H%x09%s", parent], { cwd: dir });
  for (const line of log.split("\n")) {
    const tab = line.indexOf("\t");
    if (tab > 0 && line.slice(tab + 1) === target.header) return line.slice(0, tab);
  }
  return undefined;
}

/**
 * Name the commit each revert in `commits` reverts (`reverts`), then cancel
 * pairs inside the range, newest revert first (`cancelled_by` on both). A
 * revert carrying its own breaking marker is never cancelled.
 *
 * @throws ReleaseStepError `RELEASE_REVERT_UNRESOLVED` naming the revert when
 *   neither its hash nor its quoted header finds an ancestor.
 */
export async function resolveReverts(dir: string, commits: HistoryCommit[]): Promise<void> {
  for (const commit of commits) {
    const target = revertTargetOf(commit.message);
    if (target === undefined) continue;
    const reverted = await findReverted(dir, commit, target, commits);
    if (reverted === undefined) {
      const looked = [target.hash !== undefined ? `commit ${target.hash}` : undefined, target.header !== undefined ? `a commit titled ${JSON.stringify(target.header)}` : undefined].filter((x) => x !== undefined).join(" or ");
      throw new ReleaseStepError(
        "RELEASE_REVERT_UNRESOLVED",
        `revert ${commitLabel(commit.sha, commit.message)} names no commit in its history: looked for ${looked || "a reverted header or hash"}; ` +
          'expected "This reverts commit <sha>." or "Refs: <sha>" naming an ancestor, or a Revert "<header>" title quoting an ancestor\'s subject exactly; ' +
          "fix: reword the revert's message to name the reverted commit (git commit --amend before it is pushed); for history already on the release branch, review it and tag a new baseline after it",
      );
    }
    commit.reverts = reverted;
  }
  const bySha = new Map(commits.map((c) => [c.sha, c]));
  for (let i = commits.length - 1; i >= 0; i -= 1) {
    const revert = commits[i] as HistoryCommit;
    if (revert.reverts === undefined || revert.cancelled_by !== undefined || revert.breaking) continue;
    const target = bySha.get(revert.reverts);
    if (target === undefined || target.cancelled_by !== undefined) continue;
    target.cancelled_by = revert.sha;
    revert.cancelled_by = target.sha;
  }
}
