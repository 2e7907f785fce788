/**
 * Environments of the commands the release steps run on a package's behalf:
 * gate commands, the install command, and `npm pack` (which runs the
 * package's own `prepack`/`prepare`/`postpack` scripts). Each is an explicit
 * allow-list (`src/oci/subprocess.ts`), so the package's code never sees the
 * pipeline's credentials (docs/release-build.md, "Gate commands": secrets
 * only on the steps that use them).
 */
import { delimiter, join } from "node:path";
import { BASE_ENV_NAMES, childEnvironment, NETWORK_ENV_NAMES, type ChildEnvironment } from "../src/oci/subprocess.js";
import { ReleaseStepError } from "./errors.js";

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

/** True for a `node_modules/.bin` directory (npm and npx put the caller's on PATH). */
function isNodeModulesBin(entry: string): boolean {
  return /(^|[\\/])node_modules[\\/]\.bin[\\/]?$/.test(entry);
}

/**
 * Check `--pass-env` names: environment variable names, none of
 * {@link RELEASE_CREDENTIAL_VARIABLES} in any letter case (Windows reads
 * `registry_token` as `REGISTRY_TOKEN`).
 * @throws ReleaseStepError `RELEASE_CONFIG_INVALID` naming the refused name and listing every refused one.
 */
export function requirePassableNames(names: readonly string[]): readonly string[] {
  for (const name of names) {
    if (typeof name !== "string" || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new ReleaseStepError("RELEASE_CONFIG_INVALID", `--pass-env ${JSON.stringify(name)} is not an environment variable name`);
    if (RELEASE_CREDENTIAL_VARIABLES.includes(name.toUpperCase())) {
      throw new ReleaseStepError(
        "RELEASE_CONFIG_INVALID",
        `--pass-env ${name}: the release pipeline's credentials and credential locations never reach package commands (refused: ${RELEASE_CREDENTIAL_VARIABLES.join(", ")})`,
      );
    }
  }
  return names;
}

/**
 * The environment of a gate or install command run in the checkout `dir`:
 * {@link BASE_ENV_NAMES}, {@link NETWORK_ENV_NAMES}, {@link COMMAND_ENV_NAMES}
 * and the names the maintainer passes on purpose (`passEnv`, e.g.
 * `REQUIRE_REGISTRY`), with `PATH` = the checkout's `node_modules/.bin` first,
 * then ours without any other `node_modules/.bin` (as `npm run` does, and a
 * gate never passes with a tool from outside the checkout).
 * @throws ReleaseStepError `RELEASE_CONFIG_INVALID` for a refused `passEnv` name.
 */
export function commandEnvironment(dir: string, passEnv: readonly string[] = [], source: Readonly<Record<string, string | undefined>> = process.env): ChildEnvironment {
  const rest = (source["PATH"] ?? "").split(delimiter).filter((p) => p !== "" && !isNodeModulesBin(p));
  return childEnvironment([...BASE_ENV_NAMES, ...NETWORK_ENV_NAMES, ...COMMAND_ENV_NAMES, ...requirePassableNames(passEnv)], { PATH: [join(dir, "node_modules", ".bin"), ...rest].join(delimiter) }, source);
}

/**
 * The environment of `npm pack` (it runs the package's `prepack`, `prepare`
 * and `postpack` scripts): {@link BASE_ENV_NAMES} and {@link NPM_PACK_ENV_NAMES}
 * only, plus npm settings that silence the update notifier, fund and audit
 * output. No `npm_config_*` of ours (a `_authToken` may hide there) and no credential.
 */
export function npmPackEnvironment(source: Readonly<Record<string, string | undefined>> = process.env): ChildEnvironment {
  return childEnvironment([...BASE_ENV_NAMES, ...NPM_PACK_ENV_NAMES], { npm_config_update_notifier: "false", npm_config_fund: "false", npm_config_audit: "false", npm_config_progress: "false" }, source);
}
