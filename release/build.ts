/**
 * `release build` and `release check-dist`: pack the releasing package
 * exactly once and check the one tarball that will be tested, staged and
 * published (docs/release-build.md, "Steps"; docs/architecture.md, "Release:
 * steps and data flow").
 *
 * `release build` runs `npm pack --pack-destination <artifact dir> --json`
 * once, into an artifact directory that must be empty (or absent) before,
 * then runs `check-dist`. `check-dist` requires exactly one regular file
 * `<name>-<version>.tgz` in the artifact directory (no symlinks, nothing
 * else; `inspectDistDir` of `src/contract/manifest.ts`), whose
 * `package/package.json` has the release name and version, whose members are
 * all regular files under `package/` allowed by package.json `files` (plus
 * what npm always packs), and which publint (strict) accepts.
 *
 * npm writes tarballs reproducibly (fixed mtimes, normalised modes, sorted
 * entries), so the same commit packs to the same bytes; the tests check it.
 */
import { lstat, readdir } from "node:fs/promises";
import { join, resolve as resolvePath } from "node:path";
import { publint, type Message } from "publint";
import { formatMessage } from "publint/utils";
import { inspectDistTarball } from "../src/contract/manifest.js";
import { installTimeBehaviour, requireInstallTimeAllowed } from "../src/contract/install-time.js";
import { tarballFileName } from "../src/contract/grammar.js";
import type { TestedArtifact } from "../src/contract/schemas.js";
import { readReleaseConfig, type ReleaseConfig } from "./config.js";
import { ReleaseStepError } from "./errors.js";
import { resolveCommit, runProcess, statusPorcelain } from "./git.js";
import { proveReleaseIdentity } from "./materialize.js";
import { gateHome, npmPackEnvironment, requirePassableNames } from "./command-env.js";
import { makeDirectory } from "../src/contract/directory.js";

/** Timeout of `npm pack` (it runs the package's `prepare` script), in milliseconds. */
export const NPM_PACK_TIMEOUT_MS = 15 * 60_000;
/** Ceiling of the unpacked tarball content held for publint (code and JSON members only), in bytes. */
export const MAX_UNPACKED_BYTES = 256 * 1024 * 1024;
/** Members whose bytes publint may read (formats, entry points); others are passed as empty files. */
const LINTED_MEMBER_RE = /\.(?:[cm]?[jt]sx?|d\.[cm]?ts|json)$/;

/** Result of {@link checkDist}. */
export interface CheckDistResult {
  /** The one artifact record `{filename, sha256, size}` (size in bytes). */
  artifact: TestedArtifact;
  /** Number of files in the tarball. */
  files: number;
  /** The tarball's install-time behaviours (each declared by package.json `hermesPluginKit.installTime`), sorted. */
  install_time: string[];
  /** publint messages below the failing level (suggestions), formatted. */
  suggestions: string[];
}

/** Result of {@link buildRelease}. */
export interface BuildResult extends CheckDistResult {
  /** Absolute artifact directory. */
  artifact_dir: string;
  /** Package name and version packed. */
  package: string;
  version: string;
}

/** Options of {@link buildRelease} and {@link checkDist}. */
export interface BuildOptions {
  /** Package checkout (default `process.cwd()`). */
  dir?: string;
  /** Artifact directory receiving the tarball (default `<cwd>/dist`). */
  artifactDir?: string;
  /** Version expected in the tarball (default: package.json `version` of `dir`). */
  version?: string;
  /** The trigger commit: when given, the release identity facts are proved before and after packing. */
  expectedSha?: string;
  /**
   * Variables `npm pack` (the package's `prepack`/`prepare`/`postpack` scripts) gets besides its allow-list
   * (`release build --pass-env`, `release run --pass-env`: as the gates get them); never a pipeline credential
   * (`RELEASE_CONFIG_INVALID`). `HOME` keeps the maintainer's HOME: by default the scripts run with a private, empty
   * HOME of their own, removed afterwards, and the maintainer's npm cache (`gateHome` of `./command-env.ts`).
   */
  passEnv?: readonly string[];
  /** Same as `HOME` in {@link BuildOptions.passEnv}: `npm pack` keeps the maintainer's HOME. */
  keepHome?: boolean;
  /** The environment `npm pack`'s allow-list, its HOME and npm cache are taken from (default `process.env`). */
  env?: Readonly<Record<string, string | undefined>>;
  /**
   * Aborting stops `npm pack` and everything it started (with a signal it runs in a process group of its own, as
   * a gate does) and rejects with `InterruptedError` (`INTERRUPTED`); nothing is checked or reported.
   */
  signal?: AbortSignal;
}

function globToRegExp(glob: string): string {
  let re = "";
  for (let i = 0; i < glob.length; i += 1) {
    const c = glob[i] as string;
    if (c === "*") {
      if (glob[i + 1] === "*") {
        re += ".*";
        i += 1;
        if (glob[i + 1] === "/") i += 1;
      } else re += "[^/]*";
    } else if (c === "?") re += "[^/]";
    else if (c === "{") {
      const end = glob.indexOf("}", i);
      if (end < 0) re += "\\{";
      else {
        re += "(?:" + glob.slice(i + 1, end).split(",").map((p) => p.replace(/[.+^$()|[\]\\]/g, "\\$&").replace(/\*/g, "[^/]*")).join("|") + ")";
        i = end;
      }
    } else re += c.replace(/[.+^$()|[\]\\]/g, "\\$&");
  }
  return re;
}

/**
 * A predicate telling whether a packed path (relative to `package/`) is
 * allowed by package.json: `files` entries (a file, a directory and
 * everything below it, or a glob with `*`, `**`, `?`, `{a,b}`; a pattern
 * without `/` matches at any depth, as in npm-packlist), plus what npm always
 * packs: `package.json`, `README*`, `LICENSE*`/`LICENCE*`, `COPYING*`, and the
 * `main`, `browser` and `bin` files. Negated entries only remove files, so
 * they are ignored here.
 */
export function filesAllowList(pkg: Record<string, unknown>): (path: string) => boolean {
  const strip = (p: string) => p.replace(/^\.\//, "").replace(/^\/+/, "").replace(/\/+$/, "");
  const exact = new Set<string>(["package.json"]);
  for (const key of ["main", "browser"]) if (typeof pkg[key] === "string") exact.add(strip(pkg[key] as string));
  const bin = pkg["bin"];
  if (typeof bin === "string") exact.add(strip(bin));
  else if (bin !== null && typeof bin === "object") for (const v of Object.values(bin)) if (typeof v === "string") exact.add(strip(v));
  const patterns: RegExp[] = [];
  const files = Array.isArray(pkg["files"]) ? (pkg["files"] as unknown[]) : [];
  for (const entry of files) {
    if (typeof entry !== "string" || entry.startsWith("!")) continue;
    const e = strip(entry);
    if (e.length === 0) continue;
    const body = globToRegExp(e);
    const anchored = e.includes("/") ? `^${body}` : `^(?:.*/)?${body}`;
    patterns.push(new RegExp(`${anchored}(?:/.*)?$`));
  }
  const always = /^(?:readme|license|licence|copying)(?:\.[^/]*)?$/i;
  return (path) => exact.has(path) || always.test(path) || patterns.some((p) => p.test(path));
}

/**
 * `release check-dist`: check the artifact directory of `name@version`.
 *
 * The tarball is read once, by the strict reader every verifying path uses
 * (`src/contract/npm-tarball.ts`): members are regular files under
 * `package/` exactly as npm installs them.
 *
 * @throws ReleaseContractError from `inspectDistTarball` (`DIST_SYMLINK`,
 *   `DIST_INVENTORY`, `DIST_UNEXPECTED_FILE`, `DIST_FILENAME_MISMATCH`,
 *   `ARTIFACT_NOT_REGULAR`, `TARBALL_NAME_MISMATCH`, `TARBALL_VERSION_MISMATCH`,
 *   and every `TARBALL_*` code of the strict reader: links, devices,
 *   directories, global or overriding pax headers, GNU records, unsafe or
 *   duplicate paths, trailing data, absurd sizes);
 *   `INSTALL_TIME_UNSAFE` (an escaping `bin`/`man` link, `directories.bin`),
 *   `INSTALL_TIME_NOT_ALLOWED` (lifecycle scripts, an implicit node-gyp
 *   build or man pages, here or in a bundled dependency, that package.json
 *   `hermesPluginKit.installTime` does not declare);
 *   ReleaseStepError `RELEASE_DIST_INVALID` (an entry that is a symlink),
 *   `RELEASE_DIST_CONTENTS` (a member not allowed by `files`),
 *   `RELEASE_DIST_LINT` (publint error or warning, strict).
 */
export async function checkDist(config: Pick<ReleaseConfig, "policy">, artifactDir: string, version: string): Promise<CheckDistResult> {
  const dir = resolvePath(artifactDir);
  for (const entry of await readdir(dir).catch(() => [] as string[])) {
    if ((await lstat(join(dir, entry))).isSymbolicLink()) throw new ReleaseStepError("RELEASE_DIST_INVALID", `artifact directory ${dir} contains a symlink: ${entry}; fix: pass an artifact directory holding only the packed tarball (release build makes it from an empty or absent one)`);
  }
  const { artifact, tarball } = await inspectDistTarball(dir, config.policy, version, { keep: (path) => LINTED_MEMBER_RE.test(path), maxKeptBytes: MAX_UNPACKED_BYTES });
  const contents = {
    packageJson: tarball.packageJson,
    files: tarball.members.map((m) => ({ name: `package/${m.path}`, data: new Uint8Array(tarball.kept.get(m.path) ?? Buffer.alloc(0)) })),
  };
  const allowed = filesAllowList(contents.packageJson);
  if (!Array.isArray(contents.packageJson["files"])) {
    throw new ReleaseStepError("RELEASE_DIST_CONTENTS", `${artifact.filename}: package.json must declare "files" so the published file set is explicit; fix: add "files": [...] naming what the package ships (e.g. ["dist"]), then commit`);
  }
  const outside = tarball.members.map((m) => m.path).filter((p) => !allowed(p));
  if (outside.length > 0) {
    throw new ReleaseStepError("RELEASE_DIST_CONTENTS", `${artifact.filename} holds files not allowed by "files": ${outside.slice(0, 10).join(", ")}; fix: list them in package.json "files" if they are meant to ship, or stop the pack scripts from adding them`);
  }
  const installTime = installTimeBehaviour(tarball);
  requireInstallTimeAllowed(installTime, config.policy.installTime, artifact.filename);
  const lint = await publint({ pkgDir: "package", pack: { files: contents.files }, strict: true, level: "suggestion" });
  const format = (m: Message) => `${m.code}: ${formatMessage(m, lint.pkg, { color: false }) ?? m.path.join(".")}`;
  const failing = lint.messages.filter((m) => m.type !== "suggestion");
  if (failing.length > 0) {
    throw new ReleaseStepError("RELEASE_DIST_LINT", `publint rejected ${artifact.filename}: ${failing.map(format).join("; ")}; fix: correct package.json as each message says (publint runs strict: warnings fail too), then commit`);
  }
  return { artifact, files: contents.files.length, install_time: installTime, suggestions: lint.messages.map(format) };
}

async function requireEmptyArtifactDir(dir: string): Promise<void> {
  let st;
  try {
    st = await lstat(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") {
      await makeDirectory(dir, { purpose: "artifact directory (--artifact-dir)" });
      return;
    }
    throw error;
  }
  if (st.isSymbolicLink() || !st.isDirectory()) throw new ReleaseStepError("RELEASE_DIST_INVALID", `artifact directory ${dir} must be a directory, not a symlink or file; fix: pass --artifact-dir <an empty or absent directory>`);
  const entries = await readdir(dir);
  if (entries.length > 0) throw new ReleaseStepError("RELEASE_DIST_INVALID", `artifact directory ${dir} must be empty before packing, found ${entries.slice(0, 5).join(", ")}; fix: remove its contents or pass --artifact-dir <an empty or absent directory>`);
}

/**
 * `release build`: `npm pack --pack-destination <artifact dir> --json`
 * exactly once in `dir`, then {@link checkDist}. The package's pack scripts
 * run with a private HOME unless `passEnv` names `HOME` ({@link BuildOptions.passEnv}), with the user's npm
 * (no npm of a `node_modules/.bin`: `npmPackEnvironment`).
 *
 * When `dir` is a git checkout, its HEAD and tracked files must be the same
 * before and after packing (a `prepare` script must not rewrite the committed
 * source); with `expectedSha` the release identity facts are proved too.
 *
 * @throws ReleaseStepError `RELEASE_CONFIG_INVALID` (also a refused `passEnv` name), `RELEASE_DIST_INVALID`
 *   (artifact directory not empty before packing, or npm reported a
 *   different file name), `RELEASE_BUILD_TREE_CHANGED`,
 *   `RELEASE_IDENTITY_MISMATCH`, `SUBPROCESS_FAILED` (npm), and every code
 *   of {@link checkDist}; IoError `IO_*` (no private HOME can be made in the temporary directory);
 *   InterruptedError `INTERRUPTED` (`options.signal` aborted; npm pack's process group was stopped).
 */
export async function buildRelease(options: BuildOptions = {}): Promise<BuildResult> {
  // A pipeline credential asked for by --pass-env is refused before anything is read or written.
  const passEnv = requirePassableNames([...(options.passEnv ?? []), ...(options.keepHome === true && options.passEnv?.includes("HOME") !== true ? ["HOME"] : [])]);
  const dir = resolvePath(options.dir ?? process.cwd());
  const artifactDir = resolvePath(options.artifactDir ?? "dist");
  const config = await readReleaseConfig(dir);
  const version = options.version ?? config.version;
  if (version !== config.version) {
    throw new ReleaseStepError("RELEASE_CONFIG_INVALID", `package.json version is ${config.version}, expected ${version} (--release-version); fix: pass the version package.json has, or build the commit that carries ${version}`);
  }
  const head = await resolveCommit(dir, "HEAD");
  const prove = async () => {
    if (options.expectedSha !== undefined) await proveReleaseIdentity(dir, { triggerSha: options.expectedSha, version, ...(head !== undefined ? { releaseSha: head } : {}) });
    if (head !== undefined) {
      const changed = await statusPorcelain(dir, false);
      const now = await resolveCommit(dir, "HEAD");
      if (changed.length > 0 || now !== head) {
        throw new ReleaseStepError("RELEASE_BUILD_TREE_CHANGED", `checkout ${dir} is not the committed source (HEAD ${head} -> ${now ?? "none"}${changed.length > 0 ? `, ${changed[0]}` : ""}); fix: commit or discard the changes before packing, and make the pack scripts (prepack/prepare/postpack) leave tracked files alone`);
      }
    }
  };
  await prove();
  await requireEmptyArtifactDir(artifactDir);
  const expected = tarballFileName(config.name, version);
  // The package's scripts run with a private HOME (the maintainer's ~/.npmrc, ~/.docker, ~/.ssh are not
  // where they look) and the maintainer's npm cache, as the gates do; removed after packing.
  const source = options.env ?? process.env;
  const home = await gateHome(passEnv, source);
  let packed: Awaited<ReturnType<typeof runProcess>>;
  try {
    packed = await runProcess("npm", ["pack", "--pack-destination", artifactDir, "--json"], {
      cwd: dir,
      env: npmPackEnvironment(source, home.set, passEnv, home.npmBin),
      timeoutMs: NPM_PACK_TIMEOUT_MS,
      label: "npm pack",
      // With a signal, its own process group, which the abort stops whole (the package's pack scripts included);
      // without one it stays in ours, so a terminal's Ctrl-C still reaches it.
      ...(options.signal !== undefined ? { signal: options.signal, processGroup: true } : {}),
    });
  } finally {
    await home.remove();
  }
  const reported = /"filename"\s*:\s*"([^"]+)"/.exec(packed.stdout)?.[1];
  if (reported !== undefined && reported !== expected) {
    throw new ReleaseStepError("RELEASE_DIST_INVALID", `npm pack reported ${reported}, expected ${expected} (from package.json name and version); fix: check that package.json's name and version are what npm packs (no pack script rewriting them)`);
  }
  await prove();
  const checked = await checkDist(config, artifactDir, version);
  return { artifact_dir: artifactDir, package: config.name, version, ...checked };
}
