/**
 * Where a scaffold's kit dependency comes from (docs/kit.md, "The kit dependency"): init pins the kit
 * it ran from (by name only when a registry install says so, a tarball vendored with its integrity),
 * and refuses, writing nothing, when it cannot tell. A tarball is vendored only when it is, file for
 * file, the kit running init: here a small kit (a package.json and one module) stands for it, packed
 * by npm; the real kit's `npm pack`, `--kit`, `npx --package <tgz>` and by-name installs run in
 * test/journey.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PluginKitError } from "../../src/kit/errors.js";
import { initPluginProject } from "../../src/kit/init.js";
import { kitDependency } from "../../src/kit/init-kit-source.js";
import { runCli } from "../support/cli.js";

const REPO_ROOT = new URL("../..", import.meta.url).pathname.replace(/\/$/, "");
const kitVersion = (JSON.parse(await readFile(join(REPO_ROOT, "package.json"), "utf8")) as { version: string }).version;

let root: string;
/** A small kit: hermes-plugin-kit at this kit's version, one module. */
let miniKit: string;
/** npm pack of {@link miniKit}. */
let kitTgz: string;
let kitBytes: Buffer;

function integrity(bytes: Buffer): string {
  return `sha512-${createHash("sha512").update(bytes).digest("base64")}`;
}

/** `npm pack` of a directory holding a package.json and index.js: a real npm tarball. */
async function packedStub(name: string, version: string, module = "export {};\n", dir?: string): Promise<string> {
  dir ??= await mkdtemp(join(root, "stub-"));
  await writeFile(join(dir, "package.json"), JSON.stringify({ name, version, files: ["index.js"] }));
  await writeFile(join(dir, "index.js"), module);
  const file = execFileSync("npm", ["pack", "--ignore-scripts", "--silent", "--pack-destination", dir], { cwd: dir, encoding: "utf8", env: { ...process.env, npm_config_update_notifier: "false" } }).trim().split("\n").pop() as string;
  return join(dir, file);
}

/** An install tree like npx's: `<inst>/node_modules/hermes-plugin-kit` and npm's hidden lock with `entry`. */
async function installTree(entry: Record<string, unknown> | undefined): Promise<{ inst: string; kitRoot: string }> {
  const inst = await mkdtemp(join(root, "inst-"));
  const kitRoot = join(inst, "node_modules", "hermes-plugin-kit");
  await mkdir(kitRoot, { recursive: true });
  // What npm installs from the small kit's tarball: its files, byte for byte.
  for (const file of ["package.json", "index.js"]) await copyFile(join(miniKit, file), join(kitRoot, file));
  if (entry !== undefined) {
    await writeFile(join(inst, "node_modules", ".package-lock.json"), JSON.stringify({ lockfileVersion: 3, packages: { "node_modules/hermes-plugin-kit": entry } }));
  }
  return { inst, kitRoot };
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "hpk-init-kit-"));
  miniKit = await mkdtemp(join(root, "mini-kit-"));
  kitTgz = await packedStub("hermes-plugin-kit", kitVersion, "export {};\n", miniKit);
  kitBytes = await readFile(kitTgz);
}, 120_000);

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe("init --kit <tarball>", () => {
  it("vendors a tarball that is, file for file, the running kit: its bytes, file:vendor/..., npm's integrity", async () => {
    const dependency = await kitDependency({ tarball: kitTgz }, miniKit, kitVersion);
    const file = `vendor/hermes-plugin-kit-${kitVersion}.tgz`;
    expect(dependency).toMatchObject({ source: "tarball", spec: `file:${file}`, file, from: kitTgz, integrity: integrity(kitBytes), decidedBy: "--kit" });
    expect(dependency.source === "tarball" && dependency.bytes.equals(kitBytes)).toBe(true);
  });

  it("refuses another build of the same version (a stale pack, an edited or repacked kit) with INIT_KIT_TARBALL_MISMATCH, naming the first file that differs", async () => {
    const edited = await packedStub("hermes-plugin-kit", kitVersion, "export const evil = 1;\n");
    await expect(() => kitDependency({ tarball: edited }, miniKit, kitVersion)).toThrowWithCode(PluginKitError, "INIT_KIT_TARBALL_MISMATCH");
    await expect(kitDependency({ tarball: edited }, miniKit, kitVersion)).rejects.toThrow(`its package/index.js has 23 bytes, 11 in the running kit's ${join(miniKit, "index.js")}, so it is another build of hermes-plugin-kit ${kitVersion} than the one running init; fix: pack the kit you run again (npm pack in ${miniKit})`);
    const sameSize = await packedStub("hermes-plugin-kit", kitVersion, "export{ };\n");
    await expect(kitDependency({ tarball: sameSize }, miniKit, kitVersion)).rejects.toThrow(/its package\/index\.js has other bytes than the running kit's/);
    // From this checkout (the running kit), the small kit's tarball is another build too: nothing is written.
    const dir = join(root, "stale-pack");
    await expect(() => initPluginProject({ dir, kit: { tarball: kitTgz } })).toThrowWithCode(PluginKitError, "INIT_KIT_TARBALL_MISMATCH");
    await expect(readdir(dir)).rejects.toThrow(/ENOENT/);
    const cli = await runCli(["init", dir, "--kit", kitTgz, "--json"]);
    expect(cli.code).toBe(1);
    expect(JSON.parse(cli.stdout)).toMatchObject({ ok: false, code: "INIT_KIT_TARBALL_MISMATCH" });
    await expect(readdir(dir)).rejects.toThrow(/ENOENT/);
  });

  it.each([
    ["another version of the kit", async () => packedStub("hermes-plugin-kit", "9.9.9"), "INIT_KIT_TARBALL_MISMATCH", /it packs hermes-plugin-kit "9\.9\.9", and this init is hermes-plugin-kit .*; fix: run init from that tarball/],
    ["another package at the kit's version", async () => packedStub("not-the-kit", kitVersion), "INIT_KIT_TARBALL_MISMATCH", /it packs the package "not-the-kit" ".*", not hermes-plugin-kit \(whatever its file is named\); fix: pass the tarball that npm pack wrote in a clone of hermes-plugin-kit/],
    ["a text file", async () => { const f = join(root, "notes.tgz"); await writeFile(f, "not gzip"); return f; }, "INIT_KIT_TARBALL_INVALID", /expected an npm tarball \(npm pack output\), found: .*\[TARBALL_GZIP_INVALID\]/],
    ["a missing file", async () => join(root, "absent.tgz"), "INIT_KIT_TARBALL_INVALID", /found no such file \(ENOENT\)/],
    ["a device", async () => "/dev/zero", "INIT_KIT_TARBALL_INVALID", /found a FIFO, socket or device, not a regular file/],
    ["a directory", async () => root, "INIT_KIT_TARBALL_INVALID", /found a directory, not a regular file/],
    ["a URL", async () => "https://example.com/hermes-plugin-kit-0.1.0.tgz", "INIT_KIT_TARBALL_INVALID", /--kit takes the path of a kit tarball on this machine or the word registry, found "https:.*", a URL: init reads no network/],
    ["a file: spec", async () => "file:/tmp/hermes-plugin-kit-0.1.0.tgz", "INIT_KIT_TARBALL_INVALID", /a package spec: fix: pass the tarball's path itself \(without file:\)/],
    ["a name with a version", async () => "hermes-plugin-kit@0.1.0", "INIT_KIT_TARBALL_INVALID", /a package name with a version: fix: to pin the kit by name pass --kit registry/],
    ["an unexpanded ~", async () => "~/hermes-plugin-kit-0.1.0.tgz", "INIT_KIT_TARBALL_INVALID", /whose ~ no shell expanded/],
    ["Registry", async () => "Registry", "INIT_KIT_TARBALL_INVALID", /which is not the word registry \(lowercase\); fix: pass --kit registry/],
  ])("refuses %s with %s and writes nothing", async (_label, make, code, message) => {
    const tarball = await make();
    const dir = join(root, `refused-${code.toLowerCase().replace(/_/g, "-")}-${Math.random().toString(36).slice(2, 8)}`);
    await expect(() => initPluginProject({ dir, kit: { tarball } })).toThrowWithCode(PluginKitError, code);
    await expect(initPluginProject({ dir, kit: { tarball } })).rejects.toThrow(message);
    await expect(readdir(dir)).rejects.toThrow(/ENOENT/);
  });

  it("follows a link to the tarball (the path the user typed) and records where it led", async () => {
    const link = join(root, "kit-link.tgz");
    await symlink(kitTgz, link);
    expect(await kitDependency({ tarball: link }, miniKit, kitVersion)).toMatchObject({ source: "tarball", from: kitTgz });
  });

  it("refuses a kit option of the wrong shape with INPUT_TYPE_INVALID, before anything is written", async () => {
    for (const kit of ["npm", { tarball: "" }, { path: kitTgz }, null, 5]) {
      const dir = join(root, "bad-option");
      await expect(() => initPluginProject({ dir, kit: kit as never })).toThrowWithCode(PluginKitError, "INPUT_TYPE_INVALID");
      await expect(readdir(dir)).rejects.toThrow(/ENOENT/);
    }
  });

  it("CLI: an empty --kit is a usage error (exit 2)", async () => {
    const r = await runCli(["init", join(root, "empty-kit"), "--kit", ""]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe("hermes-plugin-kit: --kit must not be empty (see 'hermes-plugin-kit init --help')\n");
  });
});

describe("init without --kit: the kit it ran from", () => {
  it("from a clone of the kit (this checkout) it refuses with INIT_KIT_SOURCE_UNKNOWN, names npm pack in the clone, and writes nothing", async () => {
    const dir = join(root, "from-clone");
    const r = await runCli(["init", dir]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`init cannot tell where this kit (hermes-plugin-kit ${kitVersion} at ${REPO_ROOT}) came from: it runs from a directory that no npm install made`);
    expect(r.stderr).toContain(`fix: (cd ${REPO_ROOT} && npm pack), then pass --kit ${join(REPO_ROOT, `hermes-plugin-kit-${kitVersion}.tgz`)} to vendor it into the project, or pass --kit registry`);
    expect(r.stderr).toMatch(/\[INIT_KIT_SOURCE_UNKNOWN\]\n$/);
    await expect(readdir(dir)).rejects.toThrow(/ENOENT/);
    await expect(() => initPluginProject({ dir })).toThrowWithCode(PluginKitError, "INIT_KIT_SOURCE_UNKNOWN");
  });

  it("an npx install of a tarball (lock: file:..., integrity) vendors that tarball", async () => {
    const { inst, kitRoot } = await installTree({ version: kitVersion, resolved: "file:../kit.tgz", integrity: integrity(kitBytes) });
    await writeFile(join(inst, "..", "kit.tgz"), kitBytes);
    const dependency = await kitDependency(undefined, kitRoot, kitVersion);
    expect(dependency).toMatchObject({ source: "tarball", spec: `file:vendor/hermes-plugin-kit-${kitVersion}.tgz`, from: join(inst, "..", "kit.tgz"), integrity: integrity(kitBytes), decidedBy: join(inst, "node_modules", ".package-lock.json") });
  });

  it("a tarball that changed since the install (integrity differs) is INIT_KIT_TARBALL_MISMATCH", async () => {
    const { inst, kitRoot } = await installTree({ version: kitVersion, resolved: "file:kit.tgz", integrity: integrity(Buffer.from("other bytes")) });
    await writeFile(join(inst, "kit.tgz"), kitBytes);
    await expect(() => kitDependency(undefined, kitRoot, kitVersion)).toThrowWithCode(PluginKitError, "INIT_KIT_TARBALL_MISMATCH");
    await expect(kitDependency(undefined, kitRoot, kitVersion)).rejects.toThrow(/so the file changed after the install/);
  });

  it("a registry install (lock: https resolved, integrity, this version) pins by name and says which registry", async () => {
    const { kitRoot, inst } = await installTree({ version: kitVersion, resolved: `http://127.0.0.1:4873/hermes-plugin-kit/-/hermes-plugin-kit-${kitVersion}.tgz`, integrity: integrity(kitBytes) });
    expect(await kitDependency(undefined, kitRoot, kitVersion)).toEqual({ source: "registry", spec: kitVersion, decidedBy: `${join(inst, "node_modules", ".package-lock.json")}: installed by name from http://127.0.0.1:4873` });
  });

  it.each([
    ["no lock (a global install)", undefined, /no npm lock of .* records how it was installed/],
    ["a linked kit", { resolved: "../hermes-plugin-kit", link: true }, /is neither a registry download nor a tarball with an integrity/],
    ["a registry entry of another version", { version: "9.9.9", resolved: "https://registry.npmjs.org/hermes-plugin-kit/-/hermes-plugin-kit-9.9.9.tgz", integrity: "sha512-x" }, /is neither a registry download/],
    ["a registry entry without integrity", { version: kitVersion, resolved: `https://registry.npmjs.org/hermes-plugin-kit/-/hermes-plugin-kit-${kitVersion}.tgz` }, /is neither a registry download/],
    ["a git dependency", { version: kitVersion, resolved: "git+ssh://git@github.com/acme/hermes-plugin-kit.git#abc", integrity: "sha512-x" }, /is neither a registry download/],
  ])("%s is INIT_KIT_SOURCE_UNKNOWN", async (_label, entry, message) => {
    const { kitRoot } = await installTree(entry);
    await expect(() => kitDependency(undefined, kitRoot, kitVersion)).toThrowWithCode(PluginKitError, "INIT_KIT_SOURCE_UNKNOWN");
    await expect(kitDependency(undefined, kitRoot, kitVersion)).rejects.toThrow(message);
  });

  it("CLI: --kit registry says what pinning by name trusts; an oci-layout store says the CI workflow cannot reach it", async () => {
    const r = await runCli(["init", join(root, "named"), "--kit", "registry", "--repository", `oci-layout:${join(root, "store")}`]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`the kit: hermes-plugin-kit@${kitVersion} by name from your npm registry (--kit registry); npm install takes whatever that registry serves under the name`);
    expect(r.stderr).toContain(`the store oci-layout:${join(root, "store")} is a directory on this machine: release run uses it here, but the CI workflow's PRIVATE_REPOSITORY (.github/workflows/release.yml) cannot reach it on a runner`);
    const registry = await runCli(["init", join(root, "named-registry"), "--kit", "registry", "--repository", "ghcr.io/acme/named-registry"]);
    expect(registry.code, registry.stderr).toBe(0);
    expect(registry.stderr).not.toContain("cannot reach it on a runner");
  });

  it("--kit registry pins by name whatever the install says", async () => {
    const { kitRoot } = await installTree(undefined);
    expect(await kitDependency("registry", kitRoot, kitVersion)).toEqual({ source: "registry", spec: kitVersion, decidedBy: "--kit registry" });
  });
});
