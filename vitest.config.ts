import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

/**
 * Test files run at once. Vitest's default is one less than the cores (one
 * worker on a 2-core machine), but most files here wait on subprocesses (git,
 * npm, docker-registry, Verdaccio, skopeo, the built CLI), so at least 3 run
 * at once: the whole suite took 796 s with 3 workers against about 2,200 s
 * with 1 at the same load (2 cores, load ~9). `HPK_TEST_WORKERS=N` overrides.
 */
function testWorkers(): number {
  const fromEnv = Number(process.env["HPK_TEST_WORKERS"]);
  if (Number.isInteger(fromEnv) && fromEnv > 0) return fromEnv;
  return Math.max(3, availableParallelism() - 1);
}

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "examples/*/test/**/*.test.ts"],
    // Shared custom matchers (toThrowWithCode); types in test/support/matchers.d.ts.
    setupFiles: ["test/support/setup-matchers.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    maxWorkers: testWorkers(),
    reporters: ["default"],
  },
});
