/**
 * Feedback of a long `release run` through the real CLI with stderr piped: a
 * gate that runs longer than 10 s says it is still running every 10 s between
 * its start and end lines; stderr carries plain lines only (no bar, no
 * cursor codes on a pipe); stdout is exactly one JSON object.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../support/cli.js";
import { fixturePackageJson } from "../support/git-fixture.js";
import { createRunFixture, REPO_ROOT, type RunFixture } from "../support/release-run-fixture.js";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

const NAME = "slow-gate-plugin";
let rf: RunFixture;
let storeParent: string;

beforeAll(async () => {
  storeParent = await mkdtemp(join(tmpdir(), "hpk-run-progress-"));
  const repository = `oci-layout:${join(storeParent, "store")}`;
  // The trigger commit makes the unit gate run for 11 s: one heartbeat at 10 s.
  const packageJson = fixturePackageJson({
    name: NAME,
    packageJson: {
      hermesPluginKit: {
        repository,
        // The policy's install command makes the restored checkout runnable (this repository's node_modules).
        install: `ln -s ${JSON.stringify(join(REPO_ROOT, "node_modules"))} node_modules`,
        gates: { unit: "sleep 11 && test -f index.js", public_contract: "test -f package.json", host_contract: "test -d node_modules/@modelcontextprotocol/sdk", build_metadata: "test -d lib" },
      },
    },
  });
  rf = await createRunFixture(NAME, { message: "feat: a slower unit gate\n", files: { "package.json": packageJson, "lib/farewell.js": "export const farewell = (n) => `bye ${n}`;\n" } }, repository);
});

afterAll(async () => {
  await rf?.cleanup();
  await rm(storeParent, { recursive: true, force: true });
});

describe("release run progress on a pipe", () => {
  it("a gate over 10 s reports it is still running; stderr has plain lines only; stdout one JSON object", async () => {
    const r = await runCli(["release", "run", "--workspace", rf.workspace, "--source", rf.repo.dir], { env: { SEMANTIC_RELEASE_ENABLED: "true" }, timeoutMs: 300_000 });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim().split("\n")).toHaveLength(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ released: true, version: "0.8.0" });
    const err = r.stderr.split("\n");
    const start = err.indexOf("▸ gate unit");
    const heartbeat = err.findIndex((l) => /^… gate unit still running \(1[0-9] s\)$/.test(l));
    const end = err.findIndex((l) => /^✓ gate unit \((1[1-9]|[2-9][0-9])\.[0-9] s\)$/.test(l));
    expect(start, r.stderr).toBeGreaterThanOrEqual(0);
    expect(heartbeat, r.stderr).toBeGreaterThan(start);
    expect(end, r.stderr).toBeGreaterThan(heartbeat);
    // The step holding the gate reports its heartbeat too; any other heartbeat belongs to a step that itself
    // took 10 s or more (a busy machine can slow intent or materialize that much), never to a short one.
    expect(err.some((l) => /^… gates still running \(1[0-9] s\)$/.test(l)), r.stderr).toBe(true);
    for (const line of err.filter((l) => l.includes("still running"))) {
      const name = /^… (.+) still running \([0-9]+ s\)$/.exec(line)?.[1];
      expect(name, line).toBeDefined();
      const ended = err.find((l) => l.startsWith(`✓ ${name} (`));
      const seconds = Number(/([0-9]+\.[0-9]) s\)$/.exec(ended ?? "")?.[1]);
      expect(seconds, `${line} / ${ended}`).toBeGreaterThanOrEqual(10);
    }
    // Piped: no progress bar redraws or terminal codes.
    expect(r.stderr).not.toMatch(/[\r\x1b]/);
  }, 300_000);
});
