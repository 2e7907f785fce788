/**
 * Where the kit that a scaffold depends on comes from (docs/kit.md, "`hermes-plugin-kit init`", "The kit
 * dependency"). `init` pins the kit it ran from, never a name it merely hopes a registry serves:
 *
 * - `registry`: the kit was installed by name from an npm registry (its lock entry says `resolved`
 *   `https://...` with an `integrity`), or the caller said so (`--kit registry`): the scaffold depends
 *   on `hermes-plugin-kit` by exact version, and its `npm install` resolves that name on the user's
 *   registry, as any npm dependency.
 * - `tarball`: the kit ran from a `.tgz` (`npx --package ./hermes-plugin-kit-X.tgz`, found through the
 *   install's lock, whose `integrity` the file must still match), or the caller passed one
 *   (`--kit <path>`): the tarball is verified (an npm tarball whose `package/package.json` is
 *   `hermes-plugin-kit` at this kit's version, and whose every member is byte for byte the running
 *   kit's file at the same path: the kit that wrote the templates is the kit installed) and copied into the project as
 *   `vendor/hermes-plugin-kit-X.tgz`; the dependency is `file:vendor/hermes-plugin-kit-X.tgz`.
 * - otherwise (a clone of the kit, a global install, a link) the source is unknown and `init`
 *   refuses (`INIT_KIT_SOURCE_UNKNOWN`): pinning by name there would install whatever a registry
 *   serves under a name nobody checked.
 */
import { createHash } from "node:crypto";
import { existsSync, lstatSync, readFileSync, realpathSync, statSync } from "node:fs";
import path from "node:path";
import { readNpmTarballFile } from "../contract/npm-tarball.js";
import { describeUnreadFile, readRegularFile } from "../contract/fs-async.js";
import { HermesPluginKitError } from "../contract/errors.js";
import { PluginKitError } from "./errors.js";

/** Most bytes of a kit tarball `init` reads (the kit packs to about 1 MiB). */
export const MAX_KIT_TARBALL_BYTES = 64 * 1024 * 1024;
/** Most bytes a kit tarball may unpack to (all of it is compared with the running kit; the kit unpacks to about 6 MiB). */
export const MAX_KIT_UNPACKED_BYTES = 256 * 1024 * 1024;
/** Most bytes of an install's lock file read to find where the kit came from. */
const MAX_LOCK_BYTES = 32 * 1024 * 1024;

/** What the caller asked for: the registry by name, or a kit tarball's path; undefined = find out. */
export type KitSourceRequest = "registry" | { tarball: string } | undefined;

/** The kit dependency a scaffold gets. */
export type KitDependency =
  | {
      /** By exact version from the user's npm registry. */
      source: "registry";
      /** The `devDependencies` value: the exact version. */
      spec: string;
      /** How it was decided: `--kit registry`, or the lock of the install this kit runs from. */
      decidedBy: string;
    }
  | {
      /** Vendored into the project. */
      source: "tarball";
      /** The `devDependencies` value: `file:vendor/hermes-plugin-kit-<version>.tgz`. */
      spec: string;
      /** Project-relative path of the copy (`vendor/hermes-plugin-kit-<version>.tgz`). */
      file: string;
      /** The tarball read (absolute, links resolved). */
      from: string;
      /** npm's `sha512-<base64>` integrity of its bytes (what the project's package-lock.json will record). */
      integrity: string;
      /** Its bytes, verified; written by init only after every other check. */
      bytes: Buffer;
      /** How it was chosen: `--kit <path>`, or the lock of the install this kit runs from. */
      decidedBy: string;
    };

/** The first member of the tarball whose bytes are not the running kit's file at the same path, if any. */
function firstDifference(members: Map<string, Buffer>, kitRoot: string): { path: string; how: string } | undefined {
  for (const [member, bytes] of [...members].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const file = path.join(kitRoot, member);
    let mine: Buffer;
    try {
      const st = lstatSync(file);
      if (!st.isFile()) return { path: member, how: "is a file, and is not one in" };
      if (st.size !== bytes.length) return { path: member, how: `has ${bytes.length} bytes, ${st.size} in` };
      mine = readFileSync(file);
    } catch {
      return { path: member, how: "has no counterpart in" };
    }
    if (!mine.equals(bytes)) return { path: member, how: "has other bytes than" };
  }
  return undefined;
}

function integrityOf(bytes: Buffer): string {
  return `sha512-${createHash("sha512").update(bytes).digest("base64")}`;
}

/** The `packages["node_modules/hermes-plugin-kit"]` entry of the lock of the install `kitRoot` is in, if any. */
function lockEntry(installRoot: string): { entry: Record<string, unknown>; lock: string } | undefined {
  for (const lock of [path.join(installRoot, "node_modules", ".package-lock.json"), path.join(installRoot, "package-lock.json")]) {
    let text: string;
    try {
      const st = statSync(lock);
      if (!st.isFile() || st.size > MAX_LOCK_BYTES) continue;
      text = readFileSync(lock, "utf8");
    } catch {
      continue;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      continue;
    }
    const packages = (parsed as { packages?: unknown }).packages;
    if (typeof packages !== "object" || packages === null) continue;
    const entry = (packages as Record<string, unknown>)["node_modules/hermes-plugin-kit"];
    if (typeof entry === "object" && entry !== null && !Array.isArray(entry)) return { entry: entry as Record<string, unknown>, lock };
  }
  return undefined;
}

/** The fix line of an unknown source, naming a tarball path the user can make. */
function unknownSource(kitRoot: string, version: string, why: string): PluginKitError {
  const clone = existsSync(path.join(kitRoot, ".git"));
  const pack = clone ? `(cd ${kitRoot} && npm pack), then pass --kit ${path.join(kitRoot, `hermes-plugin-kit-${version}.tgz`)}` : `pass --kit <path of hermes-plugin-kit-${version}.tgz> (npm pack in a clone of the kit)`;
  return new PluginKitError(
    "INIT_KIT_SOURCE_UNKNOWN",
    `init cannot tell where this kit (hermes-plugin-kit ${version} at ${kitRoot}) came from: ${why}. A scaffold that names hermes-plugin-kit@${version} would install whatever your npm registry serves under that name, which nobody here has checked; fix: ${pack} to vendor it into the project, or pass --kit registry if your npm registry serves the kit's own release under that name`,
  );
}

/**
 * Decide the kit dependency of a scaffold (module comment).
 *
 * @param request `"registry"`, `{ tarball }` (a path; a link is followed), or undefined to find out
 *   from the install this kit runs from.
 * @param kitRoot the running kit's package directory; `version` its package.json version.
 * @throws PluginKitError `INIT_KIT_SOURCE_UNKNOWN` (nothing says where the kit came from),
 *   `INIT_KIT_TARBALL_INVALID` (a URL, package spec, unexpanded `~` or `Registry` instead of a path;
 *   unreadable, not a regular file, over {@link MAX_KIT_TARBALL_BYTES} or unpacking to over
 *   {@link MAX_KIT_UNPACKED_BYTES}, not an npm tarball, or changed while read),
 *   `INIT_KIT_TARBALL_MISMATCH` (another package or version than the running kit, a member whose
 *   bytes are not the running kit's, or bytes other than the lock's `integrity`).
 */
export async function kitDependency(request: KitSourceRequest, kitRoot: string, version: string): Promise<KitDependency> {
  if (request === "registry") return { source: "registry", spec: version, decidedBy: "--kit registry" };
  if (request !== undefined) {
    const notAPath = notALocalPath(request.tarball);
    if (notAPath !== undefined) {
      throw new PluginKitError(
        "INIT_KIT_TARBALL_INVALID",
        `--kit takes the path of a kit tarball on this machine or the word registry, found ${JSON.stringify(request.tarball)}, ${notAPath}`,
      );
    }
    return vendoredTarball(path.resolve(request.tarball), version, "--kit", undefined, realpathOrSelf(kitRoot));
  }
  const root = realpathOrSelf(kitRoot);
  if (path.basename(root) !== "hermes-plugin-kit" || path.basename(path.dirname(root)) !== "node_modules") {
    throw unknownSource(root, version, "it runs from a directory that no npm install made (a clone of the kit, or a link to one)");
  }
  const installRoot = path.dirname(path.dirname(root));
  const found = lockEntry(installRoot);
  if (found === undefined) throw unknownSource(root, version, `no npm lock of ${installRoot} records how it was installed (a global install keeps none)`);
  const { entry, lock } = found;
  const resolved = entry["resolved"];
  const integrity = entry["integrity"];
  if (typeof resolved === "string" && /^https?:\/\//i.test(resolved) && typeof integrity === "string" && entry["version"] === version) {
    return { source: "registry", spec: version, decidedBy: `${lock}: installed by name from ${new URL(resolved).origin}` };
  }
  if (typeof resolved === "string" && resolved.startsWith("file:") && /\.t(?:ar\.)?gz$/i.test(resolved) && typeof integrity === "string") {
    return vendoredTarball(path.resolve(installRoot, resolved.slice("file:".length)), version, lock, integrity, root);
  }
  throw unknownSource(root, version, `its entry in ${lock} is neither a registry download nor a tarball with an integrity (resolved: ${JSON.stringify(resolved ?? null)})`);
}

/** Why `value` is no local path init reads (a URL, a package spec, an unexpanded `~`, `Registry`), or undefined. */
function notALocalPath(value: string): string | undefined {
  if (/^registry$/i.test(value)) return `which is not the word registry (lowercase); fix: pass --kit registry`;
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) return "a URL: init reads no network; fix: download the tarball, check it, and pass its path";
  if (/^(?:file|git|git\+[a-z]+|npm|github):/i.test(value)) return "a package spec: fix: pass the tarball's path itself (without file:)";
  if (value === "~" || value.startsWith("~/")) return "whose ~ no shell expanded (it was quoted); fix: write $HOME/... or an unquoted ~/...";
  if (/^(?:@[^/\s]+\/)?[a-z0-9][\w.-]*@[^/\s]*$/i.test(value)) return "a package name with a version: fix: to pin the kit by name pass --kit registry, else pass the path of its tarball";
  return undefined;
}

function realpathOrSelf(file: string): string {
  try {
    return realpathSync(file);
  } catch {
    return file;
  }
}

async function vendoredTarball(given: string, version: string, decidedBy: string, lockIntegrity: string | undefined, kitRoot: string): Promise<KitDependency> {
  const from = realpathOrSelf(given);
  const where = decidedBy === "--kit" ? `--kit ${given}` : `the tarball ${given} that ${decidedBy} says this kit was installed from`;
  const read = await readRegularFile(from, { maxBytes: MAX_KIT_TARBALL_BYTES, followLinks: true });
  if (read.kind !== "read") {
    throw new PluginKitError(
      "INIT_KIT_TARBALL_INVALID",
      `cannot use ${where} as the kit: expected a readable hermes-plugin-kit-${version}.tgz of at most ${MAX_KIT_TARBALL_BYTES} bytes, found ${describeUnreadFile(read, MAX_KIT_TARBALL_BYTES)}; fix: pass the path of the kit's tarball (npm pack in a clone of the kit) with --kit`,
    );
  }
  const bytes = read.bytes;
  const sha256 = createHash("sha256").update(bytes).digest("hex");
  let packageJson: Record<string, unknown>;
  let members: Map<string, Buffer>;
  try {
    const tarball = await readNpmTarballFile(from, { keep: () => true, maxKeptBytes: MAX_KIT_UNPACKED_BYTES });
    if (tarball.sha256 !== sha256) throw new Error("the file changed while it was read");
    packageJson = tarball.packageJson as Record<string, unknown>;
    members = tarball.kept;
  } catch (error) {
    const detail = error instanceof HermesPluginKitError ? `${error.message} [${error.code}]` : (error as Error).message;
    throw new PluginKitError(
      "INIT_KIT_TARBALL_INVALID",
      `cannot use ${where} as the kit: expected an npm tarball (npm pack output), found: ${detail}; fix: pass the .tgz that npm pack wrote in a clone of the kit`,
      { cause: error },
    );
  }
  const name = packageJson["name"];
  const found = packageJson["version"];
  if (name !== "hermes-plugin-kit") {
    throw new PluginKitError(
      "INIT_KIT_TARBALL_MISMATCH",
      `cannot use ${where} as the kit: it packs the package ${JSON.stringify(name)} ${JSON.stringify(found)}, not hermes-plugin-kit (whatever its file is named); fix: pass the tarball that npm pack wrote in a clone of hermes-plugin-kit (hermes-plugin-kit-${version}.tgz)`,
    );
  }
  if (found !== version) {
    throw new PluginKitError(
      "INIT_KIT_TARBALL_MISMATCH",
      `cannot use ${where} as the kit: it packs hermes-plugin-kit ${JSON.stringify(found)}, and this init is hermes-plugin-kit ${version} (its templates fit that version only); fix: run init from that tarball (npx --yes --package <tgz> hermes-plugin-kit init ... --kit <tgz>), or pass the tarball of hermes-plugin-kit ${version}`,
    );
  }
  // The tarball is the kit that runs this init, file for file: another build of the same version
  // (a stale pack, a repacked or edited kit) would be installed under the name of this one.
  const differs = firstDifference(members, kitRoot);
  if (differs !== undefined) {
    throw new PluginKitError(
      "INIT_KIT_TARBALL_MISMATCH",
      `cannot use ${where} as the kit: its package/${differs.path} ${differs.how} the running kit's ${path.join(kitRoot, differs.path)}, so it is another build of hermes-plugin-kit ${version} than the one running init; fix: pack the kit you run again (npm pack in ${kitRoot}) and pass that tarball, or run init from the tarball itself (npx --yes --package <tgz> hermes-plugin-kit init ... --kit <tgz>)`,
    );
  }
  const integrity = integrityOf(bytes);
  if (lockIntegrity !== undefined && lockIntegrity !== integrity) {
    throw new PluginKitError(
      "INIT_KIT_TARBALL_MISMATCH",
      `cannot use ${where} as the kit: its bytes (${integrity}) are not the ones this kit was installed from (${lockIntegrity} in ${decidedBy}), so the file changed after the install; fix: pass the tarball you mean with --kit <path>`,
    );
  }
  const file = `vendor/hermes-plugin-kit-${version}.tgz`;
  return { source: "tarball", spec: `file:${file}`, file, from, integrity, bytes, decidedBy: decidedBy === "--kit" ? "--kit" : decidedBy };
}
