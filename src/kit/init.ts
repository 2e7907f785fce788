/**
 * `hermes-plugin-kit init <dir>`: scaffold a plugin project outside this
 * repository (docs/kit.md, "`hermes-plugin-kit init`"). The dev dependencies are pinned to the
 * exact versions this kit was released with (the kit itself as it ran: by name
 * when it was installed from a registry, or its tarball vendored into
 * `vendor/`, `init-kit-source.ts`; the MCP SDK the kit bundles, the vitest the
 * kit tests with); files come from
 * `init-templates.ts`. Nothing is written unless every check passed, and
 * never into a non-empty directory.
 */
import { existsSync, readdirSync, readFileSync, realpathSync, writeFileSync, lstatSync, type Stats } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseRepository } from "../contract/reference.js";
import { isNpmPackageName } from "../contract/grammar.js";
import { PluginKitError } from "./errors.js";
import { validateServerName } from "./naming.js";
import { PLUGIN_NAME_PATTERN, PLUGIN_NAME_RULE } from "./portable.js";
import { scaffoldFiles } from "./init-templates.js";
import { IoError, kindOfEntry, makeDirectorySync, pathTooLong } from "../contract/directory.js";
import { kitDependency, type KitDependency, type KitSourceRequest } from "./init-kit-source.js";

function realpathOrUndefined(file: string): string | undefined {
  try {
    return realpathSync(file);
  } catch {
    return undefined;
  }
}

/** `lstat`, or undefined when the path or one of its parents does not exist as a directory (ENOENT, ENOTDIR). */
function lstatOrUndefined(file: string): Stats | undefined {
  try {
    return lstatSync(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return undefined;
    if (code === "ENAMETOOLONG") throw pathTooLong(file, file, "project directory", error);
    throw error;
  }
}

/** Options of {@link initPluginProject}. */
export interface InitOptions {
  /** Project directory (created; must be absent or empty). */
  dir: string;
  /** npm package and plugin name (default: the directory's base name). */
  name?: string;
  /** `hermesPluginKit.repository` (default `ghcr.io/your-github-owner/<name>`, to be edited). */
  repository?: string;
  /**
   * The kit dependency (docs/kit.md, "The kit dependency"): `"registry"` pins `hermes-plugin-kit` by
   * exact version from the user's npm registry; `{ tarball }` vendors that kit tarball into
   * `vendor/`; absent, init pins what it ran from (a registry install by name, an npx tarball
   * vendored) and refuses when it cannot tell (`INIT_KIT_SOURCE_UNKNOWN`).
   */
  kit?: KitSourceRequest;
}

/** What {@link initPluginProject} wrote. */
export interface InitResult {
  dir: string;
  name: string;
  server: string;
  repository: string;
  /** Whether the repository is the placeholder default. */
  repositoryIsPlaceholder: boolean;
  /** Project-relative paths written, sorted. */
  files: string[];
  /** Exact dev dependency versions (the kit's: its version, or `file:vendor/hermes-plugin-kit-<version>.tgz`). */
  devDependencies: Record<string, string>;
  /** Where the kit dependency comes from (the vendored tarball's bytes left out). */
  kit: { source: "registry"; spec: string; decidedBy: string } | { source: "tarball"; spec: string; file: string; from: string; integrity: string; decidedBy: string };
}

/** The kit's own package.json (the nearest one above this module named hermes-plugin-kit) and its directory. */
function kitPackageJson(): { pkg: Record<string, unknown>; root: string } {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let depth = 0; depth < 6; depth += 1) {
    const file = path.join(dir, "package.json");
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
      if (pkg["name"] === "hermes-plugin-kit") return { pkg, root: dir };
    }
    dir = path.dirname(dir);
  }
  throw new PluginKitError("INIT_FAILED", "cannot find hermes-plugin-kit's own package.json to pin the dev dependencies");
}

function exactVersion(pkg: Record<string, unknown>, field: string, name: string): string {
  const deps = pkg[field] as Record<string, unknown> | undefined;
  const version = deps?.[name];
  if (typeof version !== "string" || !/^\d+\.\d+\.\d+$/.test(version)) {
    throw new PluginKitError("INIT_FAILED", `hermes-plugin-kit's package.json ${field}.${name} must be an exact version, found ${JSON.stringify(version)}`);
  }
  return version;
}

/** A valid name close to `name` for the fix line: lowercased, runs of other characters as one '-'. */
function suggestedName(name: string): string {
  const near = name.toLowerCase().replace(/[^a-z0-9.]+/g, "-").replace(/\.{2,}/g, ".").replace(/^[-.]+|[-.]+$/g, "").slice(0, 64).replace(/[-.]+$/, "");
  return near.length > 0 && PLUGIN_NAME_PATTERN.test(near) ? near : "my-plugin";
}

/** The server name derived from a plugin name (`[a-z0-9_-]`, no trailing `-`). */
function serverNameFor(name: string): string {
  return name.replace(/[^a-z0-9_-]+/g, "-").replace(/[-_]+$/, "");
}

/**
 * Write the scaffold into `dir`.
 * @throws IoError `IO_NOT_A_DIRECTORY` (dir is a file, a device, or a symlink,
 *   even to an empty directory: init does not write through symlinks);
 *   PluginKitError `INIT_TARGET_NOT_EMPTY` (dir is a directory with entries), `INIT_NAME_INVALID` (not an npm package name and a
 *   plugin name), `INIT_REPOSITORY_INVALID`, `SERVER_NAME_SHADOWS_TOOLSET`,
 *   `INIT_FAILED`, `INPUT_TYPE_INVALID` (`kit` neither `"registry"` nor `{ tarball: string }`); the kit
 *   dependency's `INIT_KIT_SOURCE_UNKNOWN`, `INIT_KIT_TARBALL_INVALID`, `INIT_KIT_TARBALL_MISMATCH`
 *   (`init-kit-source.ts`), all before anything is written.
 */
export async function initPluginProject(options: InitOptions): Promise<InitResult> {
  const request = options.kit;
  if (request !== undefined && request !== "registry" && !(typeof request === "object" && request !== null && typeof (request as { tarball?: unknown }).tarball === "string" && (request as { tarball: string }).tarball !== "")) {
    throw new PluginKitError("INPUT_TYPE_INVALID", `init's kit option must be "registry" or { tarball: "<path of the kit's .tgz>" }, found ${typeof request === "string" ? JSON.stringify(request) : request === null ? "null" : typeof request}; fix: pass one of those, or leave it out to pin the kit init runs from`);
  }
  const dir = path.resolve(options.dir);
  const name = options.name ?? path.basename(dir);
  if (!isNpmPackageName(name) || name.startsWith("@") || name.length > 64 || !PLUGIN_NAME_PATTERN.test(name)) {
    throw new PluginKitError(
      "INIT_NAME_INVALID",
      `plugin name ${JSON.stringify(name)}${options.name === undefined ? " (the directory's name)" : ""} is not a valid plugin name: a name may have ${PLUGIN_NAME_RULE}, and must be an npm package name without a scope; fix: pass a valid name with --name, e.g. --name ${suggestedName(name)}`,
    );
  }
  const server = validateServerName(serverNameFor(name));
  const repositoryIsPlaceholder = options.repository === undefined;
  let repository = options.repository ?? `ghcr.io/your-github-owner/${name.replace(/\./g, "-")}`;
  try {
    // A store path written into the plugin's config must not depend on where a later command runs:
    // a relative `oci-layout:` path is resolved here, against init's working directory (docs/kit.md "init").
    const parsed = parseRepository(repository);
    if (parsed.kind === "layout" && !path.isAbsolute(parsed.dir)) repository = `oci-layout:${path.resolve(parsed.dir)}`;
  } catch (error) {
    throw new PluginKitError("INIT_REPOSITORY_INVALID", `${(error as Error).message}; pass --repository host/owner/name or oci-layout:<dir>`);
  }
  // A parent that is no directory (`/dev/null/x`: ENOTDIR) is left to makeDirectorySync below, which names it.
  const st = lstatOrUndefined(dir);
  if (st !== undefined) {
    // Only a real directory is a target: a file or device is no directory at all, and init does not
    // write through a symlink (the project would land somewhere the path does not say).
    if (st.isSymbolicLink()) {
      const to = realpathOrUndefined(dir);
      throw new IoError(
        "IO_NOT_A_DIRECTORY",
        dir,
        `cannot use init target directory ${dir}: it is a symlink${to === undefined ? " whose target does not exist" : ` (to ${to})`}, and init does not write through symlinks; fix: pass ${to === undefined ? "a new or empty directory" : `the directory itself (${to})`}`,
      );
    }
    if (!st.isDirectory()) {
      throw new IoError("IO_NOT_A_DIRECTORY", dir, `cannot use init target directory ${dir}: expected a new or empty directory, found ${kindOfEntry(st)}; fix: choose another path`);
    }
    if (readdirSync(dir).length > 0) {
      throw new PluginKitError("INIT_TARGET_NOT_EMPTY", `${dir} is a directory that is not empty; init writes only into a new or empty directory; fix: choose a new path, or empty it`);
    }
  }
  const { pkg: kit, root: kitRoot } = kitPackageJson();
  const kitVersion = typeof kit["version"] === "string" ? kit["version"] : "0.0.0";
  const dependency: KitDependency = await kitDependency(request, kitRoot, kitVersion);
  const versions = {
    kit: dependency.spec,
    mcpSdk: exactVersion(kit, "dependencies", "@modelcontextprotocol/sdk"),
    vitest: exactVersion(kit, "devDependencies", "vitest"),
  };
  const files = scaffoldFiles({ name, server, repository, versions });
  // The target first (IO_NOT_A_DIRECTORY / IO_DIRECTORY_UNWRITABLE before any file is written).
  makeDirectorySync(dir, { purpose: "init target directory" });
  for (const [relative, content] of files) {
    const file = path.join(dir, relative);
    makeDirectorySync(path.dirname(file), { purpose: "init target directory" });
    writeFileSync(file, content, { flag: "wx" });
  }
  if (dependency.source === "tarball") {
    makeDirectorySync(path.join(dir, "vendor"), { purpose: "init target directory" });
    writeFileSync(path.join(dir, dependency.file), dependency.bytes, { flag: "wx" });
  }
  const kitRecord: InitResult["kit"] =
    dependency.source === "tarball"
      ? { source: "tarball", spec: dependency.spec, file: dependency.file, from: dependency.from, integrity: dependency.integrity, decidedBy: dependency.decidedBy }
      : dependency;
  return {
    dir,
    name,
    server,
    repository,
    repositoryIsPlaceholder,
    files: [...files.keys(), ...(dependency.source === "tarball" ? [dependency.file] : [])].sort(),
    devDependencies: { "@modelcontextprotocol/sdk": versions.mcpSdk, "hermes-plugin-kit": versions.kit, vitest: versions.vitest },
    kit: kitRecord,
  };
}
