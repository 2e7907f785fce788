/**
 * The options of every command that talks to a registry, one flag name and
 * one help text each: `--plain-http` (the plain-HTTP rule: loopback
 * registries only; docs/architecture.md, "OCI transport") and
 * `--registry-config <file>` (where credentials come from besides the
 * environment; docs/oci.md "Environment variables").
 */
import type { Command } from "commander";
import type { CredentialSourceOptions } from "../fetch/fetch.js";
import { printNote } from "./output.js";

/** Help of `--plain-http`. */
export const PLAIN_HTTP_HELP = "use plain HTTP (loopback registries only)";
/** Help of `--registry-config <file>`. */
export const REGISTRY_CONFIG_HELP =
  "Docker client config with registry credentials (default: $DOCKER_CONFIG/config.json, else ~/.docker/config.json). REGISTRY_USERNAME/REGISTRY_PASSWORD, REGISTRY_TOKEN (or GH_TOKEN for ghcr.io) come first, as ORAS --username and skopeo --creds do; when they are set the file is not read, and a note on stderr says so (not under --quiet)";

/** The parsed registry options (commander's camel-cased names). */
export interface RegistryFlags {
  plainHttp?: boolean;
  registryConfig?: string;
}

/**
 * Add `--plain-http` and `--registry-config <file>` to `command`.
 * @param scope a prefix of both help texts when only one form of the command reads a registry (e.g. `--reference form`).
 * @returns `command`, for chaining.
 */
export function addRegistryOptions(command: Command, scope?: string): Command {
  const help = (text: string): string => (scope === undefined ? text : `${scope}: ${text}`);
  return command.option("--plain-http", help(PLAIN_HTTP_HELP)).option("--registry-config <file>", help(REGISTRY_CONFIG_HELP));
}

/**
 * Where a command's registry credentials come from besides the environment: `--registry-config`,
 * and a note on stderr (silent under `--quiet`) when the environment's credentials are used instead.
 */
export function credentialSourceOptions(flags: RegistryFlags): CredentialSourceOptions {
  return { ...(flags.registryConfig === undefined ? {} : { registryConfig: flags.registryConfig }), onNote: (line) => printNote(`hermes-plugin-kit: ${line}`) };
}
