/**
 * Environments of the commands the release steps run on a package's behalf:
 * gate commands, the install command, and `npm pack` (which runs the
 * package's own `prepack`/`prepare`/`postpack` scripts). Each is an explicit
 * allow-list (`src/oci/subprocess.ts`), so the package's code never sees the
 * pipeline's credentials (docs/release-build.md, "Gate commands": secrets
 * only on the steps that use them). Each also gets a private, empty HOME of
 * its own ({@link gateHome}), so what the maintainer's home holds
 * (`~/.docker/config.json`, `~/.npmrc` with its auth token, `~/.gitconfig`,
 * `~/.ssh`, ...) is not where its tools and the package's scripts look.
 */
import { rm, writeFile } from "node:fs/promises";
import { delimiter, isAbsolute, join } from "node:path";
import { shellWord } from "../src/contract/grammar.js";
import { makeTempDirectory } from "../src/contract/directory.js";
import { BASE_ENV_NAMES, childEnvironment, NETWORK_ENV_NAMES, type ChildEnvironment } from "../src/oci/subprocess.js";
import { ReleaseStepError } from "./errors.js";
import { firstOnPath } from "./gate-tools.js";
import { runProcess } from "./git.js";

/**
 * Every variable the release pipeline reads as a credential or as where a
 * credential lives: tokens and passwords (GitHub, source promotion, registry,
 * npm, the Actions runtime and OIDC request, Sigstore), the Docker client
 * config directory (`DOCKER_CONFIG`: registry auths and credential helpers)
 * and the signing key file (`HERMES_PLUGIN_KIT_ATTEST_KEY_FILE`). No package
 * command ever gets one, not even when asked by `--pass-env`
 * (test/release/child-env.test.ts scans the sources for reads it does not list).
 */
export const RELEASE_CREDENTIAL_VARIABLES = Object.freeze([
  "GH_TOKEN",
  "GITHUB_TOKEN",
  "SOURCE_PROMOTION_TOKEN",
  "SOURCE_PROMOTION_USERNAME",
  "PRIVATE_ARTIFACTS_TOKEN",
  "REGISTRY_USERNAME",
  "REGISTRY_PASSWORD",
  "REGISTRY_TOKEN",
  "DOCKER_CONFIG",
  "HERMES_PLUGIN_KIT_ATTEST_KEY_FILE",
  "NPM_TOKEN",
  "NODE_AUTH_TOKEN",
  "ACTIONS_RUNTIME_TOKEN",
  "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
  "ACTIONS_ID_TOKEN_REQUEST_URL",
  "SIGSTORE_ID_TOKEN",
]);

/** What a gate or install command gets besides {@link BASE_ENV_NAMES} and {@link NETWORK_ENV_NAMES}: CI detection and terminal settings. */
export const COMMAND_ENV_NAMES: readonly string[] = Object.freeze(["CI", "TERM", "NO_COLOR", "FORCE_COLOR", "COLUMNS", "SOURCE_DATE_EPOCH"]);

/** What `npm pack` gets besides {@link BASE_ENV_NAMES} (no network: packing reads the checkout only). */
export const NPM_PACK_ENV_NAMES: readonly string[] = Object.freeze(["CI", "SOURCE_DATE_EPOCH"]);

/** True for a PATH entry inside a `node_modules` directory: a `node_modules/.bin` (npm run and npx put every ancestor's on PATH), npm's `node-gyp-bin`. */
function isInsideNodeModules(entry: string): boolean {
  return /(^|[\\/])node_modules([\\/]|$)/.test(entry);
}

/**
 * The system's `PATH` entries of `source`: its `PATH` without empty or relative entries and without any entry
 * inside a `node_modules` directory (the caller's `node_modules/.bin` and its ancestors', which `npm run` and `npx`
 * prepend; npm's `node-gyp-bin`), in order.
 */
export function systemPathEntries(source: Readonly<Record<string, string | undefined>> = process.env): string[] {
  return (source["PATH"] ?? "").split(delimiter).filter((p) => p !== "" && isAbsolute(p) && !isInsideNodeModules(p));
}

/**
 * The npm the user runs: the first executable `npm` (and `npx`) on {@link systemPathEntries} of `source`, the one
 * typing `npm` runs outside any npm script. Undefined when the system `PATH` has none.
 */
export function userNpm(source: Readonly<Record<string, string | undefined>> = process.env): { npm: string | undefined; npx: string | undefined } {
  const entries = systemPathEntries(source);
  return { npm: firstOnPath("npm", entries), npx: firstOnPath("npx", entries) };
}

/**
 * Check `--pass-env` names: environment variable names, none of
 * {@link RELEASE_CREDENTIAL_VARIABLES} in any letter case (Windows reads
 * `registry_token` as `REGISTRY_TOKEN`).
 * @throws ReleaseStepError `RELEASE_CONFIG_INVALID` naming the refused name and listing every refused one.
 */
export function requirePassableNames(names: readonly string[]): readonly string[] {
  for (const name of names) {
    if (typeof name !== "string" || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new ReleaseStepError("RELEASE_CONFIG_INVALID", `--pass-env ${JSON.stringify(name)} is not an environment variable name (letters, digits and _, not starting with a digit); fix: pass names only, e.g. --pass-env REQUIRE_REGISTRY (the value comes from your environment)`);
    if (RELEASE_CREDENTIAL_VARIABLES.includes(name.toUpperCase())) {
      throw new ReleaseStepError(
        "RELEASE_CONFIG_INVALID",
        `--pass-env ${name}: the release pipeline's credentials and credential locations never reach package commands (refused: ${RELEASE_CREDENTIAL_VARIABLES.join(", ")}); fix: leave ${name} out of --pass-env; an install that needs an npm registry token finds it in your ~/.npmrc with --pass-env HOME`,
      );
    }
  }
  return names;
}

/**
 * The environment of a gate or install command run in the checkout `dir`:
 * {@link BASE_ENV_NAMES}, {@link NETWORK_ENV_NAMES}, {@link COMMAND_ENV_NAMES}
 * and the names the maintainer passes on purpose (`passEnv`, e.g.
 * `REQUIRE_REGISTRY`), with `PATH` = `npmBin` (the private directory of
 * {@link GateHome.npmBin}: only `npm` and `npx`, the user's own), the checkout's
 * `node_modules/.bin`, then {@link systemPathEntries} (no entry inside any
 * `node_modules`), so a gate never passes with a tool from outside the checkout,
 * and `npm` is the user's, not a dependency's (semantic-release bundles one).
 * @throws ReleaseStepError `RELEASE_CONFIG_INVALID` for a refused `passEnv` name.
 */
export function commandEnvironment(
  dir: string,
  passEnv: readonly string[] = [],
  source: Readonly<Record<string, string | undefined>> = process.env,
  set: Readonly<Record<string, string>> = {},
  npmBin?: string,
): ChildEnvironment {
  const path = [...(npmBin === undefined ? [] : [npmBin]), join(dir, "node_modules", ".bin"), ...systemPathEntries(source)];
  return childEnvironment([...BASE_ENV_NAMES, ...NETWORK_ENV_NAMES, ...COMMAND_ENV_NAMES, ...requirePassableNames(passEnv)], { ...set, PATH: path.join(delimiter) }, source);
}

/** The HOME a gate command, the install command or `npm pack` runs with (see {@link gateHome}), and its npm. */
export interface GateHome {
  /** What the command's environment sets on purpose: `HOME`, `npm_config_cache`, `npm_config_update_notifier` (empty with `--pass-env HOME`). */
  set: Readonly<Record<string, string>>;
  /** The private home directory (absolute), or `undefined` with `--pass-env HOME`. */
  dir: string | undefined;
  /**
   * A private directory (absolute, mode 0700, under the temporary directory) holding only `npm` and `npx`: scripts
   * that run the user's own ({@link userNpm}), first on the command's `PATH` (before the checkout's
   * `node_modules/.bin`, where a dependency's npm may be linked). `undefined` when the system `PATH` has no npm.
   * Made with `--pass-env HOME` too.
   */
  npmBin: string | undefined;
  /** Remove the private home, the npm directory and everything the command left in them (best effort; never throws). */
  remove(): Promise<void>;
}

/** A private directory with `npm`/`npx` scripts that exec the user's own (their paths as found, so a wrapper script's `$0` is unchanged). */
async function npmShimDir(source: Readonly<Record<string, string | undefined>>): Promise<string | undefined> {
  const found = userNpm(source);
  if (found.npm === undefined) return undefined;
  const dir = await makeTempDirectory("hpk-gate-npm-");
  for (const [name, target] of [["npm", found.npm], ["npx", found.npx]] as const) {
    if (target === undefined) continue;
    await writeFile(join(dir, name), `#!/bin/sh\nexec ${shellWord(target)} "$@"\n`, { mode: 0o755 });
  }
  return dir;
}

/** npm's cache directory per maintainer HOME, asked once per process (`npm config get cache`). */
const npmCacheByHome = new Map<string, Promise<string | undefined>>();

/**
 * The maintainer's npm cache directory: `npm_config_cache` of `source` when it is an absolute path, else what
 * `npm config get cache` answers with the maintainer's HOME (npm reads `~/.npmrc` there; only the cache path is
 * read back). `undefined` when npm cannot say (the gate's npm then caches in its private home).
 * The cache holds package tarballs and metadata, no credential.
 */
async function maintainerNpmCache(source: Readonly<Record<string, string | undefined>>): Promise<string | undefined> {
  const fromEnv = source["npm_config_cache"] ?? source["NPM_CONFIG_CACHE"];
  if (fromEnv !== undefined && isAbsolute(fromEnv)) return fromEnv;
  const home = source["HOME"] ?? "";
  let cached = npmCacheByHome.get(home);
  if (cached === undefined) {
    // The user's npm (no npm of a node_modules/.bin on PATH), as the commands get.
    const env = childEnvironment(BASE_ENV_NAMES, { npm_config_update_notifier: "false", PATH: systemPathEntries(source).join(delimiter) }, source);
    cached = runProcess("npm", ["config", "get", "cache"], { cwd: isAbsolute(home) ? home : "/", env, timeoutMs: 30_000, allowFailure: true, label: "npm config get cache" }).then(
      (r) => {
        const path = r.stdout.trim();
        return r.code === 0 && isAbsolute(path) && !path.includes("\n") ? path : undefined;
      },
      () => undefined,
    );
    npmCacheByHome.set(home, cached);
  }
  return cached;
}

/**
 * The HOME of one gate command (and of the install command and `npm pack`, which run the package's own
 * scripts): a fresh private directory (mode 0700, empty, under the temporary directory), so the maintainer's
 * home (`~/.docker/config.json`, `~/.npmrc` and its auth token, `~/.gitconfig`, `~/.ssh`, `~/.config/gh`, ...)
 * is not where the command's tools look; removed after the command with {@link GateHome.remove}. Also (with
 * `--pass-env HOME` too) the private npm directory {@link GateHome.npmBin}, so the command's `npm` is the user's.
 * npm keeps the maintainer's cache (`npm_config_cache`, {@link maintainerNpmCache}: offline installs, packs,
 * gates and tests need its tarballs) and skips its update check (`npm_config_update_notifier=false`: a fresh
 * home would make every command's first npm ask the registry). With `--pass-env HOME` (`passEnv` naming `HOME`)
 * the command keeps the maintainer's HOME and nothing is made.
 * This hides the home directory from tools that look there; it is not a sandbox: the gate runs as the same user
 * and can still read any file that user can, by its absolute path.
 * @throws IoError `IO_*` when the temporary directory cannot be written (`TMPDIR`).
 */
export async function gateHome(passEnv: readonly string[] = [], source: Readonly<Record<string, string | undefined>> = process.env): Promise<GateHome> {
  const removeDir = (dir: string | undefined) => (dir === undefined ? Promise.resolve() : rm(dir, { recursive: true, force: true, maxRetries: 2 }).catch(() => undefined));
  const npmBin = await npmShimDir(source);
  if (passEnv.includes("HOME")) return { set: {}, dir: undefined, npmBin, remove: () => removeDir(npmBin) };
  let dir: string;
  let cache: string | undefined;
  try {
    cache = await maintainerNpmCache(source);
    dir = await makeTempDirectory("hpk-gate-home-");
  } catch (error) {
    await removeDir(npmBin);
    throw error;
  }
  return {
    set: { HOME: dir, ...(cache === undefined ? {} : { npm_config_cache: cache }), npm_config_update_notifier: "false" },
    dir,
    npmBin,
    remove: async () => {
      await removeDir(dir);
      await removeDir(npmBin);
    },
  };
}

/**
 * The environment of `npm pack` (it runs the package's `prepack`, `prepare`
 * and `postpack` scripts): {@link BASE_ENV_NAMES} and {@link NPM_PACK_ENV_NAMES},
 * plus the names the maintainer passes on purpose (`passEnv`: `--pass-env`, as the
 * gates get them), npm settings that silence the update notifier, fund and audit
 * output, then `set` (the private HOME and npm cache of {@link gateHome}); `PATH` is
 * `npmBin` ({@link GateHome.npmBin}) then {@link systemPathEntries}, so the npm that packs is the user's.
 * No `npm_config_*` of ours (a `_authToken` may hide there) and no credential.
 * @throws ReleaseStepError `RELEASE_CONFIG_INVALID` for a refused `passEnv` name.
 */
export function npmPackEnvironment(
  source: Readonly<Record<string, string | undefined>> = process.env,
  set: Readonly<Record<string, string>> = {},
  passEnv: readonly string[] = [],
  npmBin?: string,
): ChildEnvironment {
  const path = [...(npmBin === undefined ? [] : [npmBin]), ...systemPathEntries(source)].join(delimiter);
  return childEnvironment(
    [...BASE_ENV_NAMES, ...NPM_PACK_ENV_NAMES, ...requirePassableNames(passEnv)],
    { npm_config_update_notifier: "false", npm_config_fund: "false", npm_config_audit: "false", npm_config_progress: "false", ...set, PATH: path },
    source,
  );
}
