/**
 * release/check-immutable.ts against the GitHub API emulator (reference
 * scenarios 9, 22-24): enabled -> evidence; disabled, API failure, missing
 * token -> fail closed (missing token: no call at all).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { checkImmutableReleases } from "../../release/check-immutable.js";
import { GitHubReleaseError } from "../../release/github-release.js";
import { startGitHubEmulator, type GitHubEmulator } from "../support/github-emulator.js";

let api: GitHubEmulator;
beforeAll(async () => {
  api = await startGitHubEmulator();
});
afterAll(async () => api.close());
beforeEach(() => {
  api.requests.length = 0;
  api.clearFailures();
  api.setImmutableReleases("acme", "widget", true);
});

async function failure(promise: Promise<unknown>): Promise<GitHubReleaseError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof GitHubReleaseError)) throw new Error(`expected GitHubReleaseError, got ${String(error)}`);
  expect(error.message).not.toContain(api.token);
  return error;
}

describe("checkImmutableReleases", () => {
  it("enabled: returns the evidence after exactly one authorized call", async () => {
    api.setImmutableReleases("acme", "widget", true, true);
    expect(await checkImmutableReleases({ env: api.env({ GITHUB_REPOSITORY: "acme/widget" }) })).toEqual({ repository: "acme/widget", enabled: true, enforced_by_owner: true });
    expect(api.requests.map((r) => `${r.method} ${r.path} ${r.authorized}`)).toEqual(["GET /repos/acme/widget/immutable-releases true"]);
  });

  it("disabled (GitHub answers 404) fails closed", async () => {
    api.setImmutableReleases("acme", "widget", false);
    const error = await failure(checkImmutableReleases({ env: api.env({ GITHUB_REPOSITORY: "acme/widget" }) }));
    expect(error.code).toBe("IMMUTABLE_RELEASES_DISABLED");
    expect(error.httpStatus).toBe(404);
  });

  it.each([
    ['{"enabled":false,"enforced_by_owner":false}', "IMMUTABLE_RELEASES_DISABLED"],
    ['{"enabled":"true"}', "IMMUTABLE_RELEASES_DISABLED"],
    ["{}", "IMMUTABLE_RELEASES_DISABLED"],
    ['{"enabled":false,"enabled":true}', "GITHUB_API_MALFORMED"],
    ["[true]", "GITHUB_API_MALFORMED"],
  ])("a 200 body %s fails closed with %s", async (body, code) => {
    api.fail("/repos/acme/widget/immutable-releases", { status: 200, body });
    const error = await failure(checkImmutableReleases({ env: api.env({ GITHUB_REPOSITORY: "acme/widget" }) }));
    expect(error.code).toBe(code);
  });

  it.each([401, 403, 429, 500] as const)("HTTP %i fails closed with GITHUB_API_FAILED (429: GITHUB_RATE_LIMITED)", async (status) => {
    api.fail("/repos/acme/widget/immutable-releases", status);
    const error = await failure(checkImmutableReleases({ env: api.env({ GITHUB_REPOSITORY: "acme/widget" }) }));
    expect(error.code).toBe(status === 429 ? "GITHUB_RATE_LIMITED" : "GITHUB_API_FAILED");
    expect(error.httpStatus).toBe(status);
    expect(api.requests).toHaveLength(1);
  });

  it("a dropped connection fails closed with GITHUB_NO_STATUS", async () => {
    api.fail("/repos/acme/widget/immutable-releases", "drop");
    expect((await failure(checkImmutableReleases({ env: api.env({ GITHUB_REPOSITORY: "acme/widget" }) }))).code).toBe("GITHUB_NO_STATUS");
  });

  it("an empty or missing token aborts before any API call", async () => {
    for (const token of ["", undefined]) {
      const error = await failure(checkImmutableReleases({ env: { GITHUB_API_URL: api.url, GITHUB_REPOSITORY: "acme/widget", GH_TOKEN: token } }));
      expect(error.code).toBe("GITHUB_TOKEN_MISSING");
    }
    expect(api.requests).toHaveLength(0);
  });

  it("a malformed GITHUB_REPOSITORY fails before any call", async () => {
    for (const slug of [undefined, "", "acme", "acme/widget/extra", "acme/..", "-x/y z"]) {
      expect((await failure(checkImmutableReleases({ env: api.env({ GITHUB_REPOSITORY: slug as string }) }))).code).toBe("GITHUB_REPOSITORY_INVALID");
    }
    expect(api.requests).toHaveLength(0);
  });
});
