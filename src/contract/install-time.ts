/**
 * Install-time behaviour of an npm tarball: the package metadata that makes
 * npm run code or place files outside the package when it is installed
 * (npm docs "Scripts" > "Life Cycle Operations", "package.json" > `bin`,
 * `man`, `directories`, `gypfile`, `bundleDependencies`; @npmcli/arborist
 * `rebuild.js`, @npmcli/package-json `normalize.js`, npm 11).
 *
 * Behaviours a release may declare (`hermesPluginKit.installTime` in the
 * releasing package's package.json) and the tested manifest then records
 * (`install_time`, docs/contract.md "Install-time behaviour"):
 * - `preinstall`, `install`, `postinstall`: run for every install of the package;
 * - `prepare`, `preprepare`, `postprepare`: run when it is installed from git
 *   or from a directory (`npm install ./dir`, `file:` links);
 * - `preuninstall`, `uninstall`, `postuninstall`: run by npm 6 and older;
 * - `node-gyp`: a `*.gyp` file at the package root without `gypfile: false`
 *   and without an `install`/`preinstall` script: npm runs `node-gyp rebuild`;
 * - `man`: man pages linked into the system's man directories on a global install.
 * A bundled dependency (`node_modules/<name>/` inside the tarball) is
 * installed with the package and runs its own scripts: its behaviours are
 * recorded as `node_modules/<name>:<behaviour>`.
 *
 * Refused whatever the policy says (`INSTALL_TIME_UNSAFE`): a `bin` name that
 * npm would rename (a path, `..`, a `:` or `\`), a `bin` or `man` target that
 * is not a regular member of the tarball under its own spelling (escaping,
 * absolute, `..`, backslashes: npm would silently rewrite it),
 * `directories.bin` and `directories.man` (implicit links of every file in a
 * directory: list them in `bin`/`man` instead), and a `dependencies`,
 * `optionalDependencies` or `peerDependencies` entry that is not a registry
 * version, range, tag or `npm:` alias of one (npm-package-arg's `git`,
 * `remote`, `file` and `directory` specifiers: npm fetches bytes no digest
 * pins, runs a git dependency's `prepare` and links a directory from outside
 * the package).
 */
import { ReleaseContractError, type ReleaseContractErrorCode } from "./errors.js";
import { describeValue } from "./grammar.js";
import type { JsonObject, JsonValue } from "./canonical-json.js";
import type { TarballMember } from "./tar-ustar.js";

/** The lifecycle scripts npm runs at install or uninstall time. */
export const INSTALL_SCRIPTS = Object.freeze(["preinstall", "install", "postinstall", "prepare", "preprepare", "postprepare", "preuninstall", "uninstall", "postuninstall"]);
/** Every behaviour a package may declare in `hermesPluginKit.installTime`. */
export const INSTALL_TIME_BEHAVIOURS = Object.freeze([...INSTALL_SCRIPTS, "node-gyp", "man"]);

/** One recorded behaviour: `<behaviour>` or `node_modules/<name>:<behaviour>` for a bundled dependency. */
export const INSTALL_TIME_ENTRY_RE = new RegExp(`^(?:(?:node_modules/(?:@[a-z0-9][a-z0-9._~-]*/)?[a-z0-9][a-z0-9._~-]*/)*node_modules/(?:@[a-z0-9][a-z0-9._~-]*/)?[a-z0-9][a-z0-9._~-]*:)?(?:${INSTALL_TIME_BEHAVIOURS.join("|")})$`);

/** What the install-time check needs from a verified tarball listing (see `readNpmTarballFile`). */
export interface InstallTimeInput {
  members: readonly TarballMember[];
  packageJson: JsonObject;
  /** Bytes of bundled `node_modules/<name>/package.json` members (the reader keeps them). */
  kept: ReadonlyMap<string, Buffer>;
}

function fail(code: ReleaseContractErrorCode, message: string): never {
  throw new ReleaseContractError(code, message);
}

function isRecord(value: unknown): value is Record<string, JsonValue> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** A member path as the package's metadata names it: `./` dropped, nothing else rewritten. */
function memberPath(value: string): string {
  return value.startsWith("./") ? value.slice(2) : value;
}

function requireMember(where: string, field: string, value: unknown, files: Set<string>): void {
  const path = typeof value === "string" ? memberPath(value) : undefined;
  if (path === undefined || path.length === 0 || !files.has(path)) {
    fail("INSTALL_TIME_UNSAFE", `${where}package.json ${field} is ${describeValue(value)}: expected the path of a regular file in the package (no "..", no absolute path, no backslash), which npm would otherwise rewrite or follow outside the package`);
  }
}

/** Fields whose entries npm installs with the package (npm 7+ installs peers too). */
const DEPENDENCY_FIELDS = Object.freeze(["dependencies", "optionalDependencies", "peerDependencies"]);
/** A package name as an `npm:` alias names it. */
const ALIAS_NAME_RE = /^(?:@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*$/i;

/**
 * True for a registry specifier as npm-package-arg reads it: a version, a
 * range, a dist-tag (empty = `latest`), or `npm:<name>@<one of those>`.
 * Anything with `:`, `/` or `\\`, a leading `.` or `~/`, or a tarball file
 * name is a git, URL, file or directory specifier.
 */
export function isRegistrySpecifier(spec: string): boolean {
  if (spec.startsWith("npm:")) {
    const rest = spec.slice(4);
    const at = rest.indexOf("@", 1);
    const name = at < 0 ? rest : rest.slice(0, at);
    return ALIAS_NAME_RE.test(name) && (at < 0 || (!rest.slice(at + 1).startsWith("npm:") && isRegistrySpecifier(rest.slice(at + 1))));
  }
  if (/[:/\\]/.test(spec) || spec.startsWith(".") || /\.(?:tgz|tar\.gz|tar)$/i.test(spec.trim())) return false;
  return /^[A-Za-z0-9.*^~<>=|+ \t_!'()-]*$/.test(spec);
}

/** Refuse dependencies npm would fetch from git, a URL or a path (see the module comment). */
function checkDependencies(pkg: JsonObject, where: string): void {
  for (const field of DEPENDENCY_FIELDS) {
    const deps = pkg[field];
    if (deps === undefined) continue;
    if (!isRecord(deps)) fail("INSTALL_TIME_UNSAFE", `${where}package.json ${field} must be an object of registry specifiers, found ${describeValue(deps)}`);
    for (const [name, spec] of Object.entries(deps)) {
      if (typeof spec !== "string" || !isRegistrySpecifier(spec)) {
        fail(
          "INSTALL_TIME_UNSAFE",
          `${where}package.json ${field}.${name} is ${describeValue(spec)}: expected a registry version, range, tag or npm: alias; npm would fetch a git, URL, file or directory dependency at install time (unpinned bytes, a git dependency's prepare script). Publish it to a registry and depend on its version`,
        );
      }
    }
  }
}

/** The `bin` and `man` checks (always refused when unsafe) for one package inside the tarball. */
function checkLinks(pkg: JsonObject, where: string, files: Set<string>): void {
  const directories = pkg["directories"];
  for (const key of ["bin", "man"]) {
    if (isRecord(directories) && directories[key] !== undefined) {
      fail("INSTALL_TIME_UNSAFE", `${where}package.json directories.${key} links every file of ${describeValue(directories[key])} at install time; list them in "${key}" instead`);
    }
  }
  const bin = pkg["bin"];
  if (typeof bin === "string") requireMember(where, "bin", bin, files);
  else if (isRecord(bin)) {
    for (const [name, target] of Object.entries(bin)) {
      if (!/^[^/\\:\0]+$/.test(name) || name === "." || name === "..") {
        fail("INSTALL_TIME_UNSAFE", `${where}package.json bin name ${describeValue(name)} is not a plain command name; npm would link it under another name`);
      }
      requireMember(where, `bin.${name}`, target, files);
    }
  } else if (bin !== undefined) fail("INSTALL_TIME_UNSAFE", `${where}package.json bin must be a string or an object, found ${describeValue(bin)}`);
  const man = pkg["man"];
  for (const [i, entry] of (Array.isArray(man) ? man : man === undefined ? [] : [man]).entries()) requireMember(where, `man[${i}]`, entry, files);
}

/** The behaviours one package inside the tarball asks for (its root is `root`, `""` for the package itself). */
function behavioursOf(pkg: JsonObject, root: string, members: readonly TarballMember[]): string[] {
  const where = root === "" ? "" : `${root}/`;
  const files = new Set(members.filter((m) => m.path.startsWith(where)).map((m) => m.path.slice(where.length)));
  checkLinks(pkg, where, files);
  checkDependencies(pkg, where);
  const found: string[] = [];
  const scripts = isRecord(pkg["scripts"]) ? pkg["scripts"] : {};
  for (const name of INSTALL_SCRIPTS) if (typeof scripts[name] === "string" && (scripts[name] as string).length > 0) found.push(name);
  const gypAtRoot = [...files].some((p) => !p.includes("/") && p.toLowerCase().endsWith(".gyp"));
  if (gypAtRoot && pkg["gypfile"] !== false && !found.includes("install") && !found.includes("preinstall")) found.push("node-gyp");
  if (pkg["man"] !== undefined && !(Array.isArray(pkg["man"]) && pkg["man"].length === 0)) found.push("man");
  return found.map((b) => (root === "" ? b : `${root}:${b}`));
}

/** `node_modules/<name>` roots of the bundled packages (members `.../node_modules/<name>/package.json`). */
export function bundledPackageRoots(members: readonly TarballMember[]): string[] {
  const re = /^((?:node_modules\/(?:@[^/]+\/)?[^/]+\/)*node_modules\/(?:@[^/]+\/)?[^/]+)\/package\.json$/;
  return members.map((m) => re.exec(m.path)?.[1]).filter((r): r is string => r !== undefined);
}

/**
 * The install-time behaviours of a verified tarball, sorted: the package's
 * own and every bundled dependency's (`node_modules/<name>:<behaviour>`).
 * @throws ReleaseContractError `INSTALL_TIME_UNSAFE` (see the module comment;
 *   also a bundled package.json that is not strict JSON).
 */
export function installTimeBehaviour(tarball: InstallTimeInput): string[] {
  const found = behavioursOf(tarball.packageJson, "", tarball.members);
  for (const root of bundledPackageRoots(tarball.members)) {
    const bytes = tarball.kept.get(`${root}/package.json`);
    let pkg: unknown;
    try {
      pkg = bytes === undefined ? undefined : JSON.parse(bytes.toString("utf8"));
    } catch {
      pkg = undefined;
    }
    if (!isRecord(pkg)) fail("INSTALL_TIME_UNSAFE", `bundled ${root}/package.json cannot be read, so what it runs at install time cannot be checked`);
    found.push(...behavioursOf(pkg as JsonObject, root, tarball.members));
  }
  return [...new Set(found)].sort();
}

/**
 * The behaviours a releasing package declares: `hermesPluginKit.installTime`
 * of its package.json (default none).
 * @throws ReleaseContractError `POLICY_INVALID` for a value outside {@link INSTALL_TIME_BEHAVIOURS}.
 */
export function installTimeDeclaredBy(pkg: unknown, origin = "package.json"): string[] {
  const section = isRecord(pkg) ? pkg["hermesPluginKit"] : undefined;
  const declared = isRecord(section) ? section["installTime"] : undefined;
  if (declared === undefined) return [];
  if (!Array.isArray(declared) || !declared.every((d) => typeof d === "string" && (INSTALL_TIME_BEHAVIOURS as readonly string[]).includes(d))) {
    fail("POLICY_INVALID", `${origin} hermesPluginKit.installTime must list behaviours from ${INSTALL_TIME_BEHAVIOURS.join(", ")}, found ${describeValue(declared)}`);
  }
  return [...new Set(declared as string[])].sort();
}

/**
 * Require every behaviour found in the tarball to be declared: `allowed`
 * lists plain behaviours, and a bundled dependency's `node_modules/<name>:<b>`
 * is allowed by `<b>`.
 * @throws ReleaseContractError `INSTALL_TIME_NOT_ALLOWED` naming what is undeclared and how to opt in.
 */
export function requireInstallTimeAllowed(found: readonly string[], allowed: readonly string[] | undefined, label: string): void {
  const missing = found.filter((b) => !(allowed ?? []).includes(b.slice(b.lastIndexOf(":") + 1)));
  if (missing.length > 0) {
    fail(
      "INSTALL_TIME_NOT_ALLOWED",
      `${label} makes npm run code or link files outside the package at install time: ${missing.join(", ")}; ` +
        `the release policy declares ${allowed !== undefined && allowed.length > 0 ? allowed.join(", ") : "none"}. Remove them, or declare them in package.json hermesPluginKit.installTime so the tested manifest records them`,
    );
  }
}

/**
 * Check a recorded `install_time` value (tested manifest or receipt): a
 * non-empty, sorted array of distinct entries matching {@link INSTALL_TIME_ENTRY_RE}.
 * @throws ReleaseContractError `INSTALL_TIME_INVALID`.
 */
export function checkInstallTimeRecord(value: unknown): string[] {
  const ok = Array.isArray(value) && value.length > 0 && value.every((v, i) => typeof v === "string" && INSTALL_TIME_ENTRY_RE.test(v) && (i === 0 || (value[i - 1] as string) < v));
  if (!ok) fail("INSTALL_TIME_INVALID", `install_time must be a non-empty sorted list of distinct install-time behaviours (${INSTALL_TIME_BEHAVIOURS.join(", ")}, optionally node_modules/<name>:), found ${describeValue(value)}`);
  return value as string[];
}
