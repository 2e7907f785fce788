/**
 * The example's build output is generated, not committed: `plugin build` writes
 * plugin.json, mcp.json, dist/ and host/ into examples/calculator, git ignores
 * them, no commit holds them, `npm pack` ships them through package.json
 * `files`, and docs/kit.md and the example's README say the same.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../support/release-run-fixture.js";

const EXAMPLE = "examples/calculator";
const OUTPUTS = ["plugin.json", "mcp.json", "dist/server.js", "host/hermes-calculator-host/plugin.yaml", "host/hermes-calculator-host/__init__.py"];

const git = (args: string[]) => execFileSync("git", args, { cwd: REPO_ROOT, encoding: "utf8" });

describe("examples/calculator build output", () => {
  it("is ignored by git and in no commit of the checkout", () => {
    const tracked = git(["ls-files", "--", EXAMPLE]).split("\n").filter((l) => l !== "");
    expect(tracked.length).toBeGreaterThan(3);
    for (const output of OUTPUTS) {
      expect(tracked, `${output} is committed`).not.toContain(`${EXAMPLE}/${output}`);
      // --no-index: decided by the ignore rules alone, whether or not the file exists or is tracked.
      expect(git(["check-ignore", "--no-index", "--", `${EXAMPLE}/${output}`]).trim()).toBe(`${EXAMPLE}/${output}`);
    }
    // Sources stay tracked and are not ignored.
    expect(tracked).toContain(`${EXAMPLE}/src/server.ts`);
    expect(() => git(["check-ignore", "--no-index", "--", `${EXAMPLE}/src/server.ts`])).toThrow();
  });

  it("is shipped by npm pack through package.json files", () => {
    const files = (JSON.parse(readFileSync(join(REPO_ROOT, EXAMPLE, "package.json"), "utf8")) as { files: string[] }).files;
    for (const entry of ["plugin.json", "mcp.json", "dist/", "host/"]) expect(files).toContain(entry);
  });

  it("docs/kit.md and the example's README both call it git-ignored build output shipped through files", () => {
    const normalize = (text: string) => text.replace(/\s+/g, " ");
    const readme = normalize(readFileSync(join(REPO_ROOT, EXAMPLE, "README.md"), "utf8"));
    const kit = normalize(readFileSync(join(REPO_ROOT, "docs", "kit.md"), "utf8"));
    for (const doc of [readme, kit]) {
      expect(doc).toMatch(/git-ignored/);
      expect(doc).toMatch(/`npm pack`[^.]*`files`/);
      for (const name of ["plugin.json", "mcp.json", "dist/server.js", "host/hermes-calculator-host/"]) expect(doc).toContain(`\`${name}\``);
    }
  });
});
