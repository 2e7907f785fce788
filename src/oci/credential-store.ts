/**
 * Registry credentials from a Docker client configuration, found the way
 * ORAS, skopeo and the Docker CLI find them: the file named by
 * `--registry-config`, else `$DOCKER_CONFIG/config.json`, else
 * `~/.docker/config.json`. For a registry host the lookup order is the Docker
 * CLI's: `credHelpers[host]`, else `credsStore`, else the `auths` entry whose
 * key names the host (`host`, `https://host`, `https://host/v1/`, ...).
 * Ambiguity is refused, never resolved by picking one: duplicate JSON keys,
 * or two keys naming one host with different values (`127.0.0.1:5000` and
 * `https://127.0.0.1:5000`), are `OCI_CREDENTIAL_CONFIG_INVALID`.
 * A credential helper is the executable `docker-credential-<name>` on PATH,
 * run as `docker-credential-<name> get` with the server address on stdin; it
 * answers `{"ServerURL","Username","Secret"}` on stdout (docker-credential-helpers protocol).
 *
 * Credentials are looked up for one exact `host[:port]` and returned to the
 * caller for that registry only; they are never logged or put in error text
 * (errors name the file, the host and the helper, never a value). The helper
 * runs through the bounded runner (`subprocess.ts`): an argument array, a
 * timeout, bounded output, and an allow-listed environment
 * ({@link HELPER_ENV_NAMES}), so none of our tokens reach it.
 */
import { readRegularFile } from "../contract/fs-async.js";
import { homedir } from "node:os";
import { join } from "node:path";
import { parseStrictJson } from "../contract/canonical-json.js";
import { OciError } from "./errors.js";
import type { RegistryCredentials } from "./registry-auth.js";
import { BASE_ENV_NAMES, childEnvironment, runBounded } from "./subprocess.js";

/** Largest config file read (bytes). */
const MAX_CONFIG_BYTES = 1024 * 1024;
/** Largest helper answer read (bytes). */
const MAX_HELPER_OUTPUT = 64 * 1024;
/** Default helper timeout (ms). */
const HELPER_TIMEOUT_MS = 30_000;

/** Options of {@link credentialsFromDockerConfig}. */
export interface DockerConfigOptions {
  /** An explicit config file (`--registry-config`); a missing explicit file is an error. */
  configFile?: string;
  /** Environment (default `process.env`): `DOCKER_CONFIG`, `HOME`, `PATH` for helpers. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Helper timeout in ms (default 30 000). */
  helperTimeoutMs?: number;
}

/**
 * The config file to read: `configFile`, else `$DOCKER_CONFIG/config.json`,
 * else `~/.docker/config.json`.
 */
export function dockerConfigPath(options: Pick<DockerConfigOptions, "configFile" | "env"> = {}): string {
  if (options.configFile !== undefined) return options.configFile;
  const env = options.env ?? process.env;
  const dir = env["DOCKER_CONFIG"];
  if (dir !== undefined && dir !== "") return join(dir, "config.json");
  return join(env["HOME"] !== undefined && env["HOME"] !== "" ? env["HOME"] : homedir(), ".docker", "config.json");
}

function invalid(file: string, what: string): never {
  throw new OciError("OCI_CREDENTIAL_CONFIG_INVALID", `registry config ${file}: ${what}; fix the file or pass another with --registry-config`);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** The `host[:port]` an `auths` key names: scheme and path dropped, lowercased (`https://index.docker.io/v1/` -> `index.docker.io`). */
export function authKeyHost(key: string): string {
  return key
    .replace(/^[a-z][a-z0-9+.-]*:\/\//i, "")
    .replace(/\/.*$/, "")
    .toLowerCase();
}

/**
 * The one key of `entries` naming `host` (after {@link authKeyHost}); several keys
 * naming it with equal values count as one.
 * @throws OciError `OCI_CREDENTIAL_CONFIG_INVALID` when keys naming the host disagree.
 */
function keyForHost(file: string, entries: Record<string, unknown>, host: string, where: string): string | undefined {
  const keys = Object.keys(entries).filter((key) => authKeyHost(key) === host);
  const values = new Set(keys.map((key) => JSON.stringify(entries[key])));
  if (values.size > 1) invalid(file, `${where} names ${host} ${keys.length} times with different values (${keys.map((k) => JSON.stringify(k)).join(", ")}); keep one`);
  return keys[0];
}

/** A helper name must be a plain word: it becomes part of an executable name looked up on PATH. */
function helperName(file: string, value: unknown, where: string): string {
  if (typeof value !== "string" || !/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(value)) invalid(file, `${where} must name a credential helper (letters, digits, . _ -)`);
  return value;
}

/** Credentials of one `auths` entry (`auth` = base64 `user:password`, or `username` + `password`, or `registrytoken`). */
function entryCredentials(file: string, host: string, entry: unknown): RegistryCredentials | undefined {
  if (!isObject(entry)) invalid(file, `auths entry for ${host} is not an object`);
  if (typeof entry["registrytoken"] === "string" && entry["registrytoken"] !== "") return { token: entry["registrytoken"] };
  if (typeof entry["identitytoken"] === "string" && entry["identitytoken"] !== "") {
    throw new OciError("OCI_CREDENTIAL_UNSUPPORTED", `registry config ${file}: the entry for ${host} holds an identity (refresh) token, which this client cannot exchange; set REGISTRY_USERNAME and REGISTRY_PASSWORD (or REGISTRY_TOKEN) instead`);
  }
  if (typeof entry["auth"] === "string" && entry["auth"] !== "") {
    const decoded = Buffer.from(entry["auth"], "base64").toString("utf8");
    const colon = decoded.indexOf(":");
    if (colon <= 0 || colon === decoded.length - 1) invalid(file, `auths entry for ${host}: "auth" is not base64 of <user>:<password>`);
    return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
  }
  if (typeof entry["username"] === "string" && entry["username"] !== "" && typeof entry["password"] === "string" && entry["password"] !== "") {
    return { username: entry["username"], password: entry["password"] };
  }
  return undefined;
}

/**
 * What a credential helper may see of our environment: the base names plus what the
 * common helpers need to reach their store (D-Bus secret service, pass/GnuPG, the Docker config dir).
 */
export const HELPER_ENV_NAMES: readonly string[] = Object.freeze([
  ...BASE_ENV_NAMES,
  "USER",
  "LOGNAME",
  "DOCKER_CONFIG",
  "XDG_RUNTIME_DIR",
  "DBUS_SESSION_BUS_ADDRESS",
  "DISPLAY",
  "PASSWORD_STORE_DIR",
  "GNUPGHOME",
  "GPG_TTY",
]);

/**
 * Run `docker-credential-<name> get` for `host`.
 * @returns the credentials, or undefined when the helper has none for the host.
 * @throws OciError `OCI_CREDENTIAL_HELPER_FAILED` (missing executable, timeout, exit status, bad answer).
 */
export async function credentialsFromHelper(name: string, host: string, options: Pick<DockerConfigOptions, "env" | "helperTimeoutMs"> = {}): Promise<RegistryCredentials | undefined> {
  const program = `docker-credential-${name}`;
  const fail = (what: string): never => {
    throw new OciError("OCI_CREDENTIAL_HELPER_FAILED", `credential helper ${program} ${what} for ${host}; check \`${program} list\` or log in again (docker login ${host})`);
  };
  const run = await runBounded(program, ["get"], {
    env: childEnvironment(HELPER_ENV_NAMES, {}, options.env ?? process.env),
    timeoutMs: options.helperTimeoutMs ?? HELPER_TIMEOUT_MS,
    maxOutputBytes: MAX_HELPER_OUTPUT,
    input: host,
    // The helper's stderr may carry secrets: it is discarded.
    output: "stdout",
  });
  const { outcome } = run;
  const stdout = run.stdout.toString("utf8");
  if (outcome.kind === "start-failed") fail(outcome.errno === "ENOENT" ? "is not on PATH" : `could not start (${outcome.errno})`);
  if (outcome.kind === "timeout") fail("did not answer in time");
  if (outcome.kind === "output-limit") fail(`answered more than ${MAX_HELPER_OUTPUT} bytes`);
  const code = outcome.kind === "exited" ? outcome.code : null;
  // The protocol's "not found" answer: no credentials for this host (anonymous access follows).
  if (code !== 0) {
    if (/credentials not found/i.test(stdout)) return undefined;
    fail(`exited ${code ?? "by signal"}`);
  }
  let answer: unknown;
  try {
    // Strict: an answer naming `Secret` twice is ambiguous, not "the last one".
    answer = parseStrictJson(stdout, { rejectIntegralFloats: false });
  } catch {
    fail("did not answer JSON (one object, no duplicate keys)");
  }
  if (!isObject(answer) || typeof answer["Username"] !== "string" || typeof answer["Secret"] !== "string") fail('did not answer {"Username", "Secret"}');
  const { Username: username, Secret: secret } = answer as { Username: string; Secret: string };
  if (secret === "") return undefined;
  if (username === "<token>") {
    throw new OciError("OCI_CREDENTIAL_UNSUPPORTED", `credential helper ${program} holds an identity (refresh) token for ${host}, which this client cannot exchange; set REGISTRY_USERNAME and REGISTRY_PASSWORD (or REGISTRY_TOKEN) instead`);
  }
  if (username === "") return { token: secret };
  return { username, password: secret };
}

/**
 * Credentials for registry `host` (`host[:port]`, as in the repository) from
 * the Docker client configuration (see the module comment).
 * @returns the credentials, or undefined when the file (when not explicit) or an entry for the host is absent.
 * @throws OciError `OCI_CREDENTIAL_CONFIG_INVALID` (unreadable explicit file, not JSON, wrong shape),
 *   `OCI_CREDENTIAL_HELPER_FAILED`, `OCI_CREDENTIAL_UNSUPPORTED` (an identity token).
 */
export async function credentialsFromDockerConfig(host: string, options: DockerConfigOptions = {}): Promise<RegistryCredentials | undefined> {
  const file = dockerConfigPath(options);
  // A regular file of at most 1 MiB (a device or FIFO is refused before any read); a link is followed, as the Docker client does.
  const found = await readRegularFile(file, { maxBytes: MAX_CONFIG_BYTES, followLinks: true });
  if (found.kind === "failed") {
    if (found.code === "ENOENT" && options.configFile === undefined) return undefined;
    invalid(file, `cannot be read (${found.code})`);
  }
  if (found.kind === "not-regular") invalid(file, `is not a regular file (${found.what}); pass the path of the Docker client config.json`);
  if (found.kind === "too-large") invalid(file, `larger than ${MAX_CONFIG_BYTES} bytes`);
  const bytes = found.bytes;
  let config: unknown;
  try {
    config = parseStrictJson(bytes, { rejectIntegralFloats: false });
  } catch {
    invalid(file, "is not a JSON object without duplicate keys");
  }
  if (!isObject(config)) invalid(file, "is not a JSON object");
  const wanted = host.toLowerCase();
  const helpers = config["credHelpers"];
  if (helpers !== undefined && !isObject(helpers)) invalid(file, '"credHelpers" must be an object');
  const helperKey = helpers === undefined ? undefined : keyForHost(file, helpers, wanted, '"credHelpers"');
  if (helpers !== undefined && helperKey !== undefined) return credentialsFromHelper(helperName(file, helpers[helperKey], `credHelpers["${helperKey}"]`), host, options);
  if (config["credsStore"] !== undefined && config["credsStore"] !== "") return credentialsFromHelper(helperName(file, config["credsStore"], '"credsStore"'), host, options);
  const auths = config["auths"];
  if (auths === undefined) return undefined;
  if (!isObject(auths)) invalid(file, '"auths" must be an object');
  const key = keyForHost(file, auths, wanted, '"auths"');
  return key === undefined ? undefined : entryCredentials(file, host, auths[key]);
}
