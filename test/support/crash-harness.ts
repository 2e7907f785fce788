/**
 * The one harness of the crash-injection tests (docs/release-run.md, `release run`,
 * crash injection): the built `hermes-plugin-kit release run` is killed with SIGKILL
 * (`HERMES_PLUGIN_KIT_CRASH_AT`) at each point in turn, each kill hitting a
 * run that resumed from the previous one; the final run must converge (see
 * `expectCrashChainConverged`). One fixture and one GitHub emulator (immutable
 * releases on) per file.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { startGitHubEmulator, type GitHubEmulator } from "./github-emulator.js";
import { createRunFixture, expectCrashChainConverged, runCrashChain, type RunFixture } from "./release-run-fixture.js";

/** At least this many points per chain, so a file cannot quietly shrink to a trivial chain. */
const MIN_POINTS = 10;

/** A dozen real release runs on a shared 2-core machine. */
const CHAIN_TIMEOUT_MS = 600_000;

/**
 * Register the hooks and the one test of a crash chain over `points`
 * (checkpoint names, in pipeline order), titled by `half` of the pipeline.
 */
export function crashChainTest(half: string, points: readonly string[]): void {
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

  it(`release run converges after SIGKILL at ${points.length} points of the ${half}`, async () => {
    expect(points.length).toBeGreaterThanOrEqual(MIN_POINTS);
    const runs = await runCrashChain(rf, [...points], github.env({ GITHUB_REPOSITORY: "acme/fixture-plugin" }));
    await expectCrashChainConverged(rf, runs, github, github.token);
  }, CHAIN_TIMEOUT_MS);
}
