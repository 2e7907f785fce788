/**
 * The git release tag `v<version>`: an annotated tag object whose tagger is
 * the release identity and whose date is the release commit's committer
 * date, so a rerun from the same trigger writes the same tag object byte for
 * byte, and `git describe` at the release commit names the release (it
 * ignores lightweight tags). Tags are compared after peeling everywhere
 * (docs/release-build.md, "Identity facts (materialize and restore)"); this
 * module adds the exact tag object a release must carry (docs/architecture.md,
 * "Release: steps and data flow", materialize).
 */
import { git, gitText } from "./git.js";

/** The fixed identity of release commits and tags (GitHub Actions' bot account). */
export const RELEASE_BOT_IDENTITY = Object.freeze({ name: "github-actions[bot]", email: "41898282+github-actions[bot]@users.noreply.github.com" });

/** Message of the release tag `v<version>` (git stores it with one trailing newline). */
export function releaseTagMessage(version: string): string {
  return `v${version}`;
}

/** `<seconds> <+hhmm>` of a commit's committer line. @throws ReleaseStepError `GIT_FAILED`. */
async function committerDate(cwd: string, commit: string): Promise<string | undefined> {
  const raw = await gitText(["cat-file", "commit", commit], { cwd });
  const headerEnd = raw.indexOf("\n\n");
  return /^committer .* ([0-9]+ [+-][0-9]{4})$/m.exec(headerEnd < 0 ? raw : raw.slice(0, headerEnd))?.[1];
}

/**
 * The exact text `git cat-file tag` prints for the release tag of `version`
 * on `commit`: object, type, tag name, tagger = {@link RELEASE_BOT_IDENTITY}
 * at the commit's committer date, and the message {@link releaseTagMessage}.
 * @throws ReleaseStepError `GIT_FAILED`.
 */
export async function expectedReleaseTagText(cwd: string, version: string, commit: string): Promise<string> {
  const date = await committerDate(cwd, commit);
  return `object ${commit}\ntype commit\ntag v${version}\ntagger ${RELEASE_BOT_IDENTITY.name} <${RELEASE_BOT_IDENTITY.email}> ${date ?? "?"}\n\n${releaseTagMessage(version)}\n`;
}

/**
 * Create the annotated release tag `v<version>` on `commit` (never signed,
 * whatever the repository's configuration says).
 * @returns the tag object's SHA.
 * @throws ReleaseStepError `GIT_FAILED` (for example when the tag exists).
 */
export async function createReleaseTag(cwd: string, version: string, commit: string): Promise<string> {
  const date = (await committerDate(cwd, commit)) ?? "";
  await git(["-c", "tag.gpgSign=false", "-c", "tag.forceSignAnnotated=false", "tag", "--annotate", "--cleanup=verbatim", "-m", `${releaseTagMessage(version)}\n`, `v${version}`, commit], {
    cwd,
    env: { GIT_COMMITTER_NAME: RELEASE_BOT_IDENTITY.name, GIT_COMMITTER_EMAIL: RELEASE_BOT_IDENTITY.email, GIT_COMMITTER_DATE: date },
  });
  return gitText(["rev-parse", "--verify", `refs/tags/v${version}`], { cwd });
}

/**
 * What is wrong with `refs/tags/v<version>` in `cwd` as the release tag of
 * `commit`, or `undefined` when it is exactly the tag {@link createReleaseTag}
 * writes: absent, lightweight, pointing elsewhere (or through another tag),
 * another tagger or date, another message or a signature.
 * @throws ReleaseStepError `GIT_FAILED`.
 */
export async function releaseTagProblem(cwd: string, version: string, commit: string): Promise<string | undefined> {
  const ref = `refs/tags/v${version}`;
  const type = await git(["cat-file", "-t", ref], { cwd, allowFailure: true });
  if (type.code !== 0) return `tag v${version} does not exist`;
  if (type.stdout.trim() !== "tag") return `tag v${version} is a lightweight tag (a ${type.stdout.trim()}); release tags are annotated`;
  const actual = (await git(["cat-file", "tag", ref], { cwd })).stdout;
  const expected = await expectedReleaseTagText(cwd, version, commit);
  if (actual === expected) return undefined;
  const header = (text: string, key: string) => new RegExp(`^${key} (.*)$`, "m").exec(text.slice(0, Math.max(0, text.indexOf("\n\n"))))?.[1] ?? "none";
  for (const key of ["object", "type", "tag", "tagger"]) {
    if (header(actual, key) !== header(expected, key)) return `tag v${version} has ${key} ${JSON.stringify(header(actual, key))}, expected ${JSON.stringify(header(expected, key))}`;
  }
  return `tag v${version} has message ${JSON.stringify(actual.slice(actual.indexOf("\n\n") + 2).slice(0, 80))}, expected ${JSON.stringify(releaseTagMessage(version) + "\n")} (unsigned)`;
}
