/**
 * Capability selection (Python kit resolve_capability_selection): named groups of tools an operator
 * enables, resolved to the set of tools the server lists. Portable packages
 * get no `tools.include` filter from Hermes, so this is the plugin's own.
 */
import { isRecord, PluginKitError, valueKind } from "./errors.js";
import { requireKnownOptions } from "./option-keys.js";

/** The resolved selection: enabled capabilities (sorted) and the tool names they enable (sorted). */
export interface CapabilitySelection {
  readonly capabilities: readonly string[];
  readonly names: readonly string[];
}

/** Inputs of {@link resolveCapabilitySelection}. */
export interface CapabilitySelectionOptions {
  /** Capability name -> member tool names. */
  capabilityGroups: Record<string, readonly string[]>;
  /** Capabilities to enable (exclusive with `enabledNames`). */
  enabledCapabilities?: readonly string[] | null;
  /** Tool names to enable (exclusive with `enabledCapabilities`). */
  enabledNames?: readonly string[] | null;
}

function clean(values: readonly unknown[], label: string): string[] {
  return values.map((value) => {
    if (typeof value !== "string" || value.trim() === "") throw new PluginKitError("CAPABILITY_INVALID", `${label} must be non-empty strings`);
    return value.trim();
  });
}

const sorted = (values: Iterable<string>) => [...new Set(values)].sort();

/**
 * Decide which of `availableNames` are enabled. Every group member must be
 * available. With capabilities: unknown ones fail, result = the sorted
 * capabilities + the sorted union of their members. With names: unknown ones
 * fail, result names sorted, no capabilities. Neither: every available name.
 *
 * @throws PluginKitError `CAPABILITY_INVALID` (blank names, non-list,
 *   `options` or `capabilityGroups` not an object, an option other than
 *   `capabilityGroups`, `enabledCapabilities`, `enabledNames`, named with the nearest),
 *   `CAPABILITY_NAME_UNKNOWN` (group member or enabled name not available),
 *   `CAPABILITY_UNKNOWN`, `CAPABILITY_CONFLICT` (both selections given).
 */
export function resolveCapabilitySelection(availableNames: readonly string[], options: CapabilitySelectionOptions): CapabilitySelection {
  if (!Array.isArray(availableNames)) throw new PluginKitError("CAPABILITY_INVALID", `available names must be a list, found ${valueKind(availableNames)}`);
  if (!isRecord(options)) throw new PluginKitError("CAPABILITY_INVALID", `capability selection options must be an object, found ${valueKind(options)}`);
  requireKnownOptions("resolveCapabilitySelection", options, ["capabilityGroups", "enabledCapabilities", "enabledNames"], "CAPABILITY_INVALID");
  if (options.capabilityGroups != null && !isRecord(options.capabilityGroups)) throw new PluginKitError("CAPABILITY_INVALID", `capability groups must be an object, found ${valueKind(options.capabilityGroups)}`);
  const available = new Set(clean(availableNames, "available names"));
  const groups = new Map<string, string[]>();
  for (const [capability, members] of Object.entries(options.capabilityGroups ?? {})) {
    const [name] = clean([capability], "capability names");
    if (!Array.isArray(members)) throw new PluginKitError("CAPABILITY_INVALID", `capability '${capability}' members must be a list`);
    const cleaned = clean(members, `capability '${capability}' members`);
    const unknown = cleaned.filter((member) => !available.has(member));
    if (unknown.length > 0) throw new PluginKitError("CAPABILITY_NAME_UNKNOWN", `capability '${name}' references unknown names: ${sorted(unknown).join(", ")}`);
    groups.set(name as string, cleaned);
  }
  const { enabledCapabilities, enabledNames } = options;
  if (enabledCapabilities != null && enabledNames != null) {
    throw new PluginKitError("CAPABILITY_CONFLICT", "enabled capabilities and enabled names are mutually exclusive");
  }
  if (enabledCapabilities != null) {
    if (!Array.isArray(enabledCapabilities)) throw new PluginKitError("CAPABILITY_INVALID", "enabled capabilities must be a list");
    const wanted = clean(enabledCapabilities, "enabled capabilities");
    const unknown = wanted.filter((capability) => !groups.has(capability));
    if (unknown.length > 0) throw new PluginKitError("CAPABILITY_UNKNOWN", `unknown capabilities: ${sorted(unknown).join(", ")}`);
    return Object.freeze({ capabilities: sorted(wanted), names: sorted(wanted.flatMap((capability) => groups.get(capability) ?? [])) });
  }
  if (enabledNames != null) {
    if (!Array.isArray(enabledNames)) throw new PluginKitError("CAPABILITY_INVALID", "enabled names must be a list");
    const wanted = clean(enabledNames, "enabled names");
    const unknown = wanted.filter((name) => !available.has(name));
    if (unknown.length > 0) throw new PluginKitError("CAPABILITY_NAME_UNKNOWN", `unknown names: ${sorted(unknown).join(", ")}`);
    return Object.freeze({ capabilities: [], names: sorted(wanted) });
  }
  return Object.freeze({ capabilities: [], names: sorted(available) });
}
