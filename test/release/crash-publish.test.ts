/**
 * Crash injection, part 2 (issue 6 acceptance): the built `hermes-plugin-kit
 * release run` is killed with SIGKILL (HERMES_PLUGIN_KIT_CRASH_AT) after
 * staging, around the atomic push, around the v<V> bind, inside the receipt
 * upload, before the references and after the GitHub Release; each kill hits
 * a run that resumed from the previous one. The final run converges (see
 * `expectCrashChainConverged`); the GitHub Release is created once.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { startGitHubEmulator, type GitHubEmulator } from "../support/github-emulator.js";
import { createRunFixture, expectCrashChainConverged, runCrashChain, type RunFixture } from "../support/release-run-fixture.js";

const POINTS = [
  "stage:done",
  "promote:before-push",
  "promote:pushed",
  "promote:done",
  "publish:before-bind",
  "publish:bound",
  "publish:receipt-upload:pushed:1",
  "publish:receipt-upload:before-tag",
  "publish:before-references",
  "publish:done",
  "github-release:done",
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

it(`release run converges after SIGKILL at ${POINTS.length} points of the promotion and publication half`, async () => {
  expect(POINTS.length).toBeGreaterThanOrEqual(10);
  const runs = await runCrashChain(rf, POINTS, github.env({ GITHUB_REPOSITORY: "acme/fixture-plugin" }));
  await expectCrashChainConverged(rf, runs, github, github.token);
}, 600_000); // a dozen real release runs on a shared 2-core machine
