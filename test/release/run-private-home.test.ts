/**
 * `release run` runs the package's install command and `npm pack` (its `prepack` script here) with the same
 * private HOME arrangement as the gates (release/command-env.ts `gateHome`): a fresh, empty directory (0700,
 * under TMPDIR, removed afterwards) instead of the maintainer's HOME, with the maintainer's npm cache; with
 * `--pass-env HOME` (`gatePassEnv`) both keep the real HOME. Before, both ran with the maintainer's HOME (its
 * `~/.npmrc`, `~/.docker/config.json`, `~/.ssh` where a package script looks). Library API; each run stops
 * after the build step (a checkpoint throws), so nothing is staged or pushed.
 */
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runRelease } from "../../release/run.js";
import { fixturePackageJson } from "../support/git-fixture.js";
import { createRunFixture, REPO_ROOT, type RunFixture } from "../support/release-run-fixture.js";

let rf: RunFixture;
let marks: string;
let home: string;

/** What a package script records of its HOME: the path, npm's cache, the mode, the entries; then it writes there. */
const record = (file: string) => `{ printf '%s\\n' "$HOME" "\${npm_config_cache-unset}" "$(stat -c %a "$HOME")"; ls -A "$HOME"; } > "${file}"; : > "$HOME/written-by-${file.endsWith("install-home") ? "install" : "pack"}"`;

beforeAll(async () => {
  marks = await mkdtemp(join(tmpdir(), "hpk-run-home-"));
  // The maintainer's home: a registry credential and an npm token where tools look.
  home = join(marks, "maintainer-home");
  await mkdir(join(home, ".docker"), { recursive: true });
  await writeFile(join(home, ".docker", "config.json"), JSON.stringify({ auths: { "ghcr.io": { auth: Buffer.from("u:secret-docker-auth").toString("base64") } } }));
  await writeFile(join(home, ".npmrc"), "//registry.npmjs.org/:_authToken=secret-npmrc-token\n");
  const scratch = await mkdtemp(join(tmpdir(), "hpk-run-home-store-"));
  const repository = `oci-layout:${join(scratch, "store")}`;
  const install = `${record(join(marks, "install-home"))}; ln -s ${JSON.stringify(join(REPO_ROOT, "node_modules"))} node_modules`;
  const gates = { unit: "test -f index.js", public_contract: "test -f package.json", host_contract: "test -d node_modules/@modelcontextprotocol/sdk", build_metadata: "test -d lib" };
  const packageJson = fixturePackageJson({ name: "home-plugin", packageJson: { hermesPluginKit: { repository, install, gates }, scripts: { prepack: record(join(marks, "pack-home")) } } });
  rf = await createRunFixture("home-plugin", { message: "feat: scripts that look at their HOME\n", files: { "package.json": packageJson, "lib/farewell.js": "export const bye = () => 'bye';\n" } }, repository);
  await rm(scratch, { recursive: true, force: true });
});

afterAll(async () => {
  await rf?.cleanup();
  if (marks !== undefined) await rm(marks, { recursive: true, force: true });
});

/** A run over a fresh workspace with the maintainer's HOME `home`, stopped once the build step is recorded. */
async function runToBuild(name: string, passEnv: string[]): Promise<void> {
  await rm(join(marks, "install-home"), { force: true });
  await rm(join(marks, "pack-home"), { force: true });
  const error = await runRelease({
    source: rf.repo.dir,
    workspace: join(marks, name),
    runId: "7",
    progress: null,
    gateOutput: "log",
    gatePassEnv: passEnv,
    env: { ...process.env, SEMANTIC_RELEASE_ENABLED: "true", HOME: home, npm_config_cache: undefined, NPM_CONFIG_CACHE: undefined },
    hooks: {
      checkpoint: (point) => {
        if (point === "build:recorded") throw new Error("stopped after build");
      },
    },
  }).catch((e: unknown) => e);
  expect((error as Error).message).toBe("stopped after build");
}

async function seen(file: string): Promise<{ home: string; cache: string; mode: string; entries: string[] }> {
  const [h, cache, mode, ...entries] = (await readFile(join(marks, file), "utf8")).split("\n").filter((l) => l !== "");
  return { home: h as string, cache: cache as string, mode: mode as string, entries };
}

describe("release run: the install command and npm pack run with a private HOME, as the gates do", () => {
  it("each sees a fresh, empty HOME of its own (0700, under TMPDIR, removed afterwards), not the maintainer's; npm keeps the maintainer's cache", async () => {
    await runToBuild("ws-private", []);
    for (const file of ["install-home", "pack-home"]) {
      const got = await seen(file);
      expect(got.home, file).not.toBe(home);
      expect(got.home.startsWith(join(tmpdir(), "hpk-gate-home-")), `${file}: ${got.home}`).toBe(true);
      expect(got.mode, file).toBe("700");
      expect(got.entries, file).toEqual([]);
      expect(got.cache, file).toBe(join(home, ".npm"));
      expect(existsSync(got.home), `${file}: ${got.home} left behind`).toBe(false);
    }
    expect((await seen("install-home")).home).not.toBe((await seen("pack-home")).home);
    // Nothing written into the maintainer's home.
    expect(existsSync(join(home, "written-by-install"))).toBe(false);
    expect(existsSync(join(home, "written-by-pack"))).toBe(false);
  }, 300_000);

  it("--pass-env HOME keeps the maintainer's HOME for both, as for the gates", async () => {
    await runToBuild("ws-real-home", ["HOME"]);
    expect((await seen("install-home")).home).toBe(home);
    expect((await seen("pack-home")).home).toBe(home);
    expect(existsSync(join(home, "written-by-install"))).toBe(true);
    expect(existsSync(join(home, "written-by-pack"))).toBe(true);
  }, 300_000);
});
