/**
 * `openTarget`: a {@link Target} from a repository string (docs/architecture.md, "OCI transport"):
 * `host[:port]/path` -> {@link RegistryTarget} (or {@link OrasTarget} with `transport: "oras"`),
 * `oci-layout:<dir>` -> {@link LayoutTarget}.
 * Plain HTTP only for loopback hosts and only with `plainHttp: true`.
 */
import { HermesPluginKitError } from "../contract/errors.js";
import { parseRepository } from "../contract/reference.js";
import { describeValue } from "../contract/grammar.js";
import { requireOptionalBoolean, requireOptionalString, requireOptions, requireStringArgument, requireStringArray } from "./arguments.js";
import { OciError } from "./errors.js";
import { LayoutTarget } from "./layout-target.js";
import { OrasTarget, type OrasTargetOptions } from "./oras-target.js";
import { requirePlainHttpAllowed } from "./origin.js";
import { requireOptionalCredentials, type RegistryCredentials } from "./registry-auth.js";
import { REGISTRY_TUNING_KEYS, RegistryTarget, requireRegistryTuning, type RegistryTargetOptions } from "./registry-target.js";
import type { Target } from "./target.js";

/** Options of {@link openTarget}. */
export interface OpenTargetOptions {
  /** Use `http://` instead of `https://` (loopback hosts only). Default false. */
  plainHttp?: boolean;
  /** Registry credentials (from the environment or stdin, never argv). */
  credentials?: RegistryCredentials;
  /** Layout stores only: create the layout when absent. */
  create?: boolean;
  /** Registry tuning (timeouts in ms, retry budget, extra CA). */
  registry?: Omit<RegistryTargetOptions, "registry" | "repository" | "plainHttp" | "credentials">;
  /**
   * Registry transport: `"http"` (default, {@link RegistryTarget}) or `"oras"`
   * ({@link OrasTarget} over an installed `oras` >= 1.3; username/password credentials only).
   */
  transport?: "http" | "oras";
  /** `oras` executable for `transport: "oras"` (default `oras` from PATH). */
  orasPath?: string;
  /** `transport: "oras"`: names of further environment variables the tool needs (its environment is an allow-list). */
  orasPassEnv?: readonly string[];
}

/**
 * Open the target named by `repository` (`host[:port]/path` or `oci-layout:<dir>`).
 * @throws OciError `OCI_REPOSITORY_INVALID` (a string that is no repository), `OCI_PLAIN_HTTP_REFUSED` (plain HTTP to a
 *   non-loopback host), `OCI_NOT_FOUND` / `OCI_LAYOUT_INVALID` (layout stores), and
 *   `OrasTarget.open`'s errors with `transport: "oras"`; `OCI_ARGUMENT_INVALID` (`repository` not a non-empty
 *   string, e.g. a number; `options` not an object of
 *   {@link OpenTargetOptions}: a key it does not read, `plainHttp`/`create` not booleans, `transport` neither
 *   `"http"` nor `"oras"`, `credentials` not exactly `{username, password}` or `{token}` of strings without
 *   control characters, `registry` holding a key or a value a registry target does not take).
 */
export async function openTarget(repository: string, options: OpenTargetOptions = {}): Promise<Target> {
  const call = "openTarget(repository, options)";
  requireStringArgument(repository, call, "repository", "the repository to open, host[:port]/path or oci-layout:<dir>");
  requireOptions(options, call, ["plainHttp", "credentials", "create", "registry", "transport", "orasPath", "orasPassEnv"]);
  requireOptionalBoolean(options.plainHttp, call, "options.plainHttp");
  requireOptionalBoolean(options.create, call, "options.create");
  if (options.transport !== undefined && options.transport !== "http" && options.transport !== "oras") {
    throw new OciError("OCI_ARGUMENT_INVALID", `${call}: options.transport must be "http" or "oras" (or absent), found ${describeValue(options.transport)}`);
  }
  requireOptionalCredentials(options.credentials, call, "options.credentials");
  requireOptions(options.registry, call, REGISTRY_TUNING_KEYS, "options.registry");
  if (options.registry !== undefined) requireRegistryTuning(options.registry, call, "options.registry");
  requireOptionalString(options.orasPath, call, "options.orasPath", "the oras executable");
  if (options.orasPassEnv !== undefined) requireStringArray(options.orasPassEnv, call, "options.orasPassEnv", "environment variable names");
  let parsed;
  try {
    parsed = parseRepository(repository);
  } catch (error) {
    throw new OciError("OCI_REPOSITORY_INVALID", error instanceof HermesPluginKitError ? error.message : `invalid repository`);
  }
  if (parsed.kind === "layout") {
    return LayoutTarget.open(parsed.dir, { create: options.create === true });
  }
  requirePlainHttpAllowed(parsed.host, options.plainHttp === true);
  if (options.transport === "oras") {
    const orasOptions: OrasTargetOptions = { repository, plainHttp: options.plainHttp === true };
    if (options.credentials !== undefined) orasOptions.credentials = options.credentials;
    if (options.orasPath !== undefined) orasOptions.orasPath = options.orasPath;
    if (options.orasPassEnv !== undefined) orasOptions.passEnv = options.orasPassEnv;
    return OrasTarget.open(orasOptions);
  }
  const registryOptions: RegistryTargetOptions = {
    ...(options.registry ?? {}),
    registry: parsed.registry,
    repository: parsed.path,
    plainHttp: options.plainHttp === true,
  };
  if (options.credentials !== undefined) registryOptions.credentials = options.credentials;
  return new RegistryTarget(registryOptions);
}
