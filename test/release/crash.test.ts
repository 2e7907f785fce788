/**
 * Crash injection, part 1 (issue 6 acceptance): the built `hermes-plugin-kit
 * release run` is killed with SIGKILL (HERMES_PLUGIN_KIT_CRASH_AT) at the
 * step boundaries of intent .. check-private, inside the bundle upload and
 * around the attestation push;
 * each kill hits a run that resumed from the previous one. The final run
 * converges (see `expectCrashChainConverged`). Part 2 is crash-publish.test.ts.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { startGitHubEmulator, type GitHubEmulator } from "../support/github-emulator.js";
import { createRunFixture, expectCrashChainConverged, runCrashChain, type RunFixture } from "../support/release-run-fixture.js";

const POINTS = [
  "intent:done",
  "materialize:done",
  "restore:recorded",
  "gates:done",
  "build:done",
  "manifest:recorded",
  "check-immutable:done",
  "check-private:done",
  "stage:upload:pushed:2",
  "stage:upload:before-tag",
  "stage:before-output",
  "attest:pushed",
  "attest:done",
];

let rf: RunFixture;
let github: GitHubEmulator;

beforeAll(async () => {
  rf = await createRunFixture();
  github = await startGitHubEmulator();
  github.setImmutableReleases("acme", "fixture-plugin", true);
});

afterAll(async () => {
  await github?.close();
  await rf?.cleanup();
});

it(`release run converges after SIGKILL at ${POINTS.length} points of the build and staging half`, async () => {
  expect(POINTS.length).toBeGreaterThanOrEqual(10);
  const runs = await runCrashChain(rf, POINTS, github.env({ GITHUB_REPOSITORY: "acme/fixture-plugin" }));
  await expectCrashChainConverged(rf, runs, github, github.token);
}, 600_000); // a dozen real release runs on a shared 2-core machine
