import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "examples/*/test/**/*.test.ts"],
    // Shared custom matchers (toThrowWithCode); types in test/support/matchers.d.ts.
    setupFiles: ["test/support/setup-matchers.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    reporters: ["default"],
  },
});
