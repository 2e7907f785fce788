/**
 * `hermes-plugin-kit init` and the plugin version taken from package.json at
 * build time (docs/kit.md, "`hermes-plugin-kit init`"). The scaffold's own npm install, tests and
 * release run against a real npm registry in test/journey.
 */
import { lstat, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import YAML from "yaml";
import { buildPluginPackage } from "../../src/kit/build.js";
import { PluginKitError } from "../../src/kit/errors.js";
import { IoError } from "../../src/contract/directory.js";
import { initPluginProject } from "../../src/kit/init.js";
import { runCli } from "../support/cli.js";

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "hpk-init-"));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const kitPackage = JSON.parse(await readFile(new URL("../../package.json", import.meta.url), "utf8")) as {
  version: string;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};

describe("init", () => {
  it("scaffolds the project: exact dev dependencies by name, npm-script gates, policy, one tool, a skill, an MCP client test, pinned workflows", async () => {
    const dir = join(root, "hello-plugin");
    const result = await initPluginProject({ dir, repository: "ghcr.io/acme/hello-plugin", kit: "registry" });
    expect(result.files).toEqual([
      ".github/workflows/release.yml",
      ".github/workflows/test.yml",
      ".gitignore",
      "package.json",
      "skills/hello-plugin/SKILL.md",
      "src/index.ts",
      "test/plugin.test.ts",
    ]);
    const pkg = JSON.parse(await readFile(join(dir, "package.json"), "utf8")) as Record<string, Record<string, string> | string>;
    expect(pkg["type"]).toBe("module");
    expect(pkg["devDependencies"]).toEqual({
      "@modelcontextprotocol/sdk": kitPackage.dependencies["@modelcontextprotocol/sdk"],
      "hermes-plugin-kit": kitPackage.version,
      vitest: kitPackage.devDependencies["vitest"],
    });
    expect(Object.keys(pkg["scripts"] as Record<string, string>)).toEqual(expect.arrayContaining(["build", "test", "doctor"]));
    expect(pkg["hermesPluginKit"]).toEqual({ repository: "ghcr.io/acme/hello-plugin" });
    expect(await readFile(join(dir, "src/index.ts"), "utf8")).not.toMatch(/version:/);
    for (const file of [".github/workflows/release.yml", ".github/workflows/test.yml"]) {
      const doc = YAML.parse(await readFile(join(dir, file), "utf8")) as { permissions: unknown; jobs: Record<string, { steps: { uses?: string; with?: Record<string, unknown> }[] }> };
      expect(doc.permissions).toEqual({ contents: "read" });
      const uses = Object.values(doc.jobs).flatMap((job) => job.steps.filter((s) => s.uses !== undefined));
      expect(uses.length).toBeGreaterThan(0);
      for (const step of uses) expect(step.uses).toMatch(/^[\w-]+\/[\w-]+@[0-9a-f]{40}$/);
      expect(uses.find((s) => s.uses!.startsWith("actions/checkout@"))!.with!["persist-credentials"]).toBe(false);
    }
  });

  it("release.yml attests the staged bundle keylessly exactly as this repository's release workflow does; only that job may mint an OIDC token or write attestations and packages", async () => {
    type Job = { needs?: string | string[]; if?: string; permissions?: Record<string, string>; outputs?: Record<string, string>; steps: { uses?: string; run?: string; env?: Record<string, string> }[] };
    type Workflow = { permissions: unknown; env: Record<string, string>; jobs: Record<string, Job> };
    const parse = async (file: string) => {
      const text = await readFile(file, "utf8");
      return { text, doc: YAML.parse(text, { uniqueKeys: true, strict: true }) as Workflow };
    };
    const dir = join(root, "attest-plugin");
    await initPluginProject({ dir, repository: "ghcr.io/acme/attest-plugin", kit: "registry" });
    const scaffold = await parse(join(dir, ".github/workflows/release.yml"));
    const ours = await parse(new URL("../../.github/workflows/release.yml", import.meta.url).pathname);
    // The attest job is this repository's, unchanged: the pinned attest action, its inputs, the predicate and verify steps.
    expect(scaffold.doc.jobs["attest"]).toEqual(ours.doc.jobs["attest"]);
    expect(scaffold.doc.jobs["attest"]!.permissions).toEqual({ contents: "read", "id-token": "write", attestations: "write", packages: "write" });
    expect(scaffold.doc.permissions).toEqual({ contents: "read" });
    expect(scaffold.doc.env).toEqual({ NODE_VERSION: ours.doc.env["NODE_VERSION"], PRIVATE_REPOSITORY: "ghcr.io/acme/attest-plugin" });
    const elevated = Object.entries(scaffold.doc.jobs).filter(([, job]) => ["id-token", "attestations", "packages"].some((p) => job.permissions?.[p] !== undefined && job.permissions[p] !== "none"));
    expect(elevated.map(([name]) => name)).toEqual(["attest"]);
    // Nothing is promoted or published before the staged bundle is attested.
    const needsOf = (job: Job) => (job.needs === undefined ? [] : Array.isArray(job.needs) ? job.needs : [job.needs]);
    expect(needsOf(scaffold.doc.jobs["promote"]!)).toContain("attest");
    expect(needsOf(scaffold.doc.jobs["publish"]!)).toContain("promote");
    // Every needs.<job>.outputs.<name> a job reads is a job it needs, and that job declares the output.
    for (const [name, job] of Object.entries(scaffold.doc.jobs)) {
      for (const [, from, output] of JSON.stringify(job).matchAll(/needs\.([\w-]+)\.outputs\.([\w-]+)/g)) {
        expect(needsOf(job), `${name} reads needs.${from}`).toContain(from);
        expect(Object.keys(scaffold.doc.jobs[from!]!.outputs ?? {}), `${from} declares ${output}`).toContain(output);
      }
    }
    // Each action is pinned to the commit this repository's workflows use.
    const pins = (text: string) => new Map([...text.matchAll(/uses:\s+([^@\s]+)@([0-9a-f]{40})/g)].map((m) => [m[1], m[2]]));
    const ourPins = pins(ours.text);
    for (const [action, sha] of pins(scaffold.text)) expect(ourPins.get(action), action).toBe(sha);
    expect(pins(scaffold.text).has("actions/attest")).toBe(true);
  });

  it("builds with the kit: plugin.json takes its version from package.json", async () => {
    const dir = join(root, "versioned");
    await initPluginProject({ dir, name: "versioned", repository: "oci-layout:/srv/store", kit: "registry" });
    const pkgPath = join(dir, "package.json");
    const pkg = JSON.parse(await readFile(pkgPath, "utf8")) as Record<string, unknown>;
    await writeFile(pkgPath, JSON.stringify({ ...pkg, version: "3.4.5" }, null, 2));
    const built = await buildPluginPackage({ entry: join(dir, "src/index.ts"), outDir: dir });
    expect(built.plugin.version).toBe("3.4.5");
    expect(JSON.parse(await readFile(join(dir, "plugin.json"), "utf8"))).toMatchObject({ name: "versioned", version: "3.4.5" });
    expect(built.plugin.tools).toEqual(["greet"]);
  });

  it.each([
    ["a name that is no plugin name", { name: "Hello_World" }, "INIT_NAME_INVALID"],
    ["a scoped name", { name: "@acme/hello" }, "INIT_NAME_INVALID"],
    ["a repository without a host", { name: "ok-name", repository: "acme/hello" }, "INIT_REPOSITORY_INVALID"],
    ["a server name that shadows a Hermes toolset", { name: "web" }, "SERVER_NAME_SHADOWS_TOOLSET"],
  ])("refuses %s (%j) with %s and writes nothing", async (_label, options, code) => {
    const dir = join(root, `refused-${code}-${String((options as { name?: string }).name).replace(/[^a-z]/gi, "")}`);
    await expect(() => initPluginProject({ dir, kit: "registry", ...options })).toThrowWithCode(PluginKitError, code);
    await expect(readdir(dir)).rejects.toThrow();
  });

  it("refuses a non-empty directory and leaves it as it was", async () => {
    const dir = join(root, "busy");
    await mkdir(dir);
    await writeFile(join(dir, "notes.txt"), "mine");
    await expect(() => initPluginProject({ dir, kit: "registry" })).toThrowWithCode(PluginKitError, "INIT_TARGET_NOT_EMPTY");
    expect(await readdir(dir)).toEqual(["notes.txt"]);
  });

  it("refuses a regular file, a device and a symlink (even to an empty directory) with IO_NOT_A_DIRECTORY, not INIT_TARGET_NOT_EMPTY", async () => {
    const file = join(root, "a-file");
    await writeFile(file, "mine");
    await expect(() => initPluginProject({ dir: file, name: "a-file" })).toThrowWithCode(IoError, "IO_NOT_A_DIRECTORY");
    await expect(initPluginProject({ dir: file, name: "a-file" })).rejects.toThrow(/found a regular file/);
    await expect(() => initPluginProject({ dir: "/dev/null", name: "null-plugin" })).toThrowWithCode(IoError, "IO_NOT_A_DIRECTORY");
    await expect(initPluginProject({ dir: "/dev/null", name: "null-plugin" })).rejects.toThrow(/found a character device/);
    const empty = join(root, "empty-target");
    await mkdir(empty);
    const link = join(root, "link-to-empty");
    await symlink(empty, link);
    await expect(() => initPluginProject({ dir: link })).toThrowWithCode(IoError, "IO_NOT_A_DIRECTORY");
    await expect(initPluginProject({ dir: link })).rejects.toThrow(`it is a symlink (to ${empty}), and init does not write through symlinks; fix: pass the directory itself (${empty})`);
    expect(await readdir(empty)).toEqual([]);
    expect((await lstat(link)).isSymbolicLink()).toBe(true);
    expect(await readFile(file, "utf8")).toBe("mine");
    const cli = await runCli(["init", "/dev/null", "--name", "null-plugin"]);
    expect(cli.code).toBe(1);
    expect(cli.stdout).toBe("");
    expect(cli.stderr).toMatch(/^hermes-plugin-kit: cannot use init target directory \/dev\/null: .*found a character device.* \[IO_NOT_A_DIRECTORY\]\n$/);
  });

  it("CLI: init . prints the next step without a cd; another directory gets one", async () => {
    const here = join(root, "here-plugin");
    await mkdir(here);
    const made = await runCli(["init", ".", "--kit", "registry"], { cwd: here });
    expect(made.code, made.stderr).toBe(0);
    // Next steps on stderr (stdout is the result: what was created).
    expect(made.stderr).toContain("\n  npm install && npm test && npm run doctor\n");
    expect(made.stdout).not.toContain("npm install");
    expect(made.stderr).not.toContain("cd .");
    const spaced = await runCli(["init", "sub dir", "--name", "sub-plugin", "--kit", "registry"], { cwd: here });
    expect(spaced.code, spaced.stderr).toBe(0);
    expect(spaced.stderr).toContain("\n  cd 'sub dir' && npm install && npm test && npm run doctor\n");
  });

  it("CLI: init prints the next steps and the placeholder repository; a mistyped flag names the closest known one (exit 2)", async () => {
    const dir = join(root, "cli-plugin");
    const made = await runCli(["init", dir, "--kit", "registry"]);
    expect(made.code).toBe(0);
    expect(made.stderr).toContain("npm install && npm test && npm run doctor");
    expect(made.stderr).toContain("ghcr.io/your-github-owner/cli-plugin");
    expect(made.stdout).toMatch(/^created plugin project cli-plugin in /);
    const typo = await runCli(["init", join(root, "other"), "--repositry", "ghcr.io/a/b"]);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(/unknown option '--repositry'/);
    expect(typo.stderr).toMatch(/Did you mean --repository\?/);
  });
});

describe("plugin version from package.json", () => {
  async function project(name: string, packageVersion: string | undefined, declared: string | undefined): Promise<string> {
    const dir = join(root, name);
    await initPluginProject({ dir, name, repository: "oci-layout:/srv/store", kit: "registry" });
    const pkgPath = join(dir, "package.json");
    const pkg = JSON.parse(await readFile(pkgPath, "utf8")) as Record<string, unknown>;
    if (packageVersion === undefined) delete pkg["version"];
    else pkg["version"] = packageVersion;
    await writeFile(pkgPath, JSON.stringify(pkg, null, 2));
    if (declared !== undefined) {
      const entry = join(dir, "src/index.ts");
      await writeFile(entry, (await readFile(entry, "utf8")).replace(`name: ${JSON.stringify(name)},`, `name: ${JSON.stringify(name)},\n  version: ${JSON.stringify(declared)},`));
    }
    return dir;
  }

  it("a definePlugin version equal to package.json's builds", async () => {
    const dir = await project("same-version", "1.2.3", "1.2.3");
    expect((await buildPluginPackage({ entry: join(dir, "src/index.ts"), outDir: dir })).plugin.version).toBe("1.2.3");
  });

  it("a different definePlugin version is an error, not a warning (BUILD_VERSION_MISMATCH); nothing is written", async () => {
    const dir = await project("other-version", "1.2.3", "1.0.0");
    const build = buildPluginPackage({ entry: join(dir, "src/index.ts"), outDir: dir });
    await expect(build).rejects.toThrowWithCode(PluginKitError, "BUILD_VERSION_MISMATCH");
    await expect(build).rejects.toThrow(/declares version "1\.0\.0" but .*package\.json has "1\.2\.3"/);
    await expect(readFile(join(dir, "plugin.json"))).rejects.toThrow();
  });

  it("no version anywhere is BUILD_VERSION_MISSING", async () => {
    const dir = await project("no-version", undefined, undefined);
    await expect(() => buildPluginPackage({ entry: join(dir, "src/index.ts"), outDir: dir })).toThrowWithCode(PluginKitError, "BUILD_VERSION_MISSING");
  });
});
