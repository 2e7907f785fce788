/**
 * A package ready for `release run`: a real git repository (fixed identity
 * and dates) of a small npm package with a baseline tag `v0.7.0`, one
 * `feat:` commit on top, a local bare `origin` holding both, and a private
 * `oci-layout:` store named by its package.json. The install command links
 * this repository's node_modules so the host_contract gate finds the real MCP SDK.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createFixtureRepo, type FixtureRepo } from "./git-fixture.js";

/** What a run test needs. */
export interface RunFixture {
  repo: FixtureRepo;
  /** `oci-layout:<dir>`. */
  repository: string;
  storeDir: string;
  /** A fresh workspace path (not created). */
  workspace: string;
  /** The trigger commit (HEAD of the checkout, pushed to origin main). */
  triggerSha: string;
  /** `release run` install command for the restored checkout. */
  installCommand: string;
  cleanup(): Promise<void>;
}

/** The repository root (for its node_modules). */
export const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** Create the fixture package, its origin and an empty store location. */
export async function createRunFixture(name = "fixture-plugin"): Promise<RunFixture> {
  const scratch = await mkdtemp(join(tmpdir(), "hpk-run-"));
  const storeDir = join(scratch, "store");
  const repository = `oci-layout:${storeDir}`;
  const repo = await createFixtureRepo({
    name,
    packageJson: {
      hermesPluginKit: {
        repository,
        gates: { unit: "test -f index.js", public_contract: "test -f package.json", host_contract: "test -d node_modules/@modelcontextprotocol/sdk", build_metadata: "test -d lib" },
      },
    },
  });
  const triggerSha = await repo.commit("feat: add a farewell\n", { "lib/farewell.js": "export function farewell(name) {\n  return `bye ${name}`;\n}\n" });
  await repo.git(["push", "--quiet", "origin", "main"]);
  return {
    repo,
    repository,
    storeDir,
    workspace: join(scratch, "workspace"),
    triggerSha,
    installCommand: `ln -s ${JSON.stringify(join(REPO_ROOT, "node_modules"))} node_modules`,
    cleanup: async () => {
      await repo.cleanup();
      await rm(scratch, { recursive: true, force: true });
    },
  };
}
