/**
 * `release check-immutable`: the repository must have immutable releases
 * enabled before anything is promoted or published (docs/release-publish.md,
 * "Commands"; docs/architecture.md, "Release: steps and data flow").
 *
 * `GET /repos/{owner}/{repo}/immutable-releases` through `@octokit/rest`
 * (`GITHUB_API_URL`, `GH_TOKEN` — in the workflow the
 * `SOURCE_PROMOTION_TOKEN` with Administration read). A missing token aborts
 * before any call; anything but `200 {"enabled": true}` fails closed.
 */
import { callGitHubApi } from "../src/github/api.js";
import { GitHubReleaseError, githubApiFailure, githubClientFromEnv, githubRepositoryFromEnv, type GitHubStepOptions } from "./github-release.js";

/** Result of {@link checkImmutableReleases}. */
export interface ImmutableReleasesEvidence {
  /** `owner/repo`. */
  repository: string;
  enabled: true;
  enforced_by_owner: boolean;
}

/**
 * Require that immutable releases are enabled for `GITHUB_REPOSITORY`.
 * @throws GitHubReleaseError `GITHUB_TOKEN_MISSING` (no call made),
 *   `GITHUB_REPOSITORY_INVALID`, `GITHUB_API_URL_INVALID`,
 *   `IMMUTABLE_RELEASES_DISABLED` (`enabled` not exactly `true`, or HTTP 404 —
 *   GitHub's answer when the setting is off), `GITHUB_API_FAILED` (any other
 *   status, e.g. 401/403/429/500), `GITHUB_NO_STATUS`, `GITHUB_API_MALFORMED`.
 */
export async function checkImmutableReleases(options: GitHubStepOptions = {}): Promise<ImmutableReleasesEvidence> {
  const env = options.env ?? process.env;
  const client = githubClientFromEnv(options);
  const repository = githubRepositoryFromEnv(env);
  const slug = `${repository.owner}/${repository.repo}`;
  const answer = await callGitHubApi(client, "GET /repos/{owner}/{repo}/immutable-releases", { ...repository });
  if (answer.status === 404) {
    throw new GitHubReleaseError("IMMUTABLE_RELEASES_DISABLED", `immutable releases are not enabled for ${slug} (HTTP 404)`, { httpStatus: 404 });
  }
  if (answer.status !== 200) throw githubApiFailure(`immutable-releases of ${slug}`, answer);
  const data = answer.data;
  if (answer.malformed || data === null || typeof data !== "object" || Array.isArray(data)) {
    throw new GitHubReleaseError("GITHUB_API_MALFORMED", `GitHub API returned an unreadable immutable-releases document for ${slug}`);
  }
  if (data["enabled"] !== true) {
    throw new GitHubReleaseError("IMMUTABLE_RELEASES_DISABLED", `immutable releases must be enabled for ${slug}: found enabled ${JSON.stringify(data["enabled"] ?? null)}`);
  }
  return { repository: slug, enabled: true, enforced_by_owner: data["enforced_by_owner"] === true };
}
