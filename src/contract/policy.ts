/**
 * Release policy: what a tested manifest or receipt must match, passed in as
 * data (as sigstore-js passes a verification policy) instead of flags.
 *
 * The policy of a releasing package comes from its package.json: `name`,
 * `hermesPluginKit.repository` and `hermesPluginKit.gates` (docs/release-build.md,
 * evidence gates).
 */
import { ReleaseContractError } from "./errors.js";
import { describe, isNpmPackageName } from "./grammar.js";
import { parseRepository } from "./reference.js";
import { parseStrictJson } from "./canonical-json.js";
import { installTimeDeclaredBy } from "./install-time.js";

/** The four test gates whose command is recorded in evidence. */
export const TEST_GATES = ["unit", "public_contract", "host_contract", "build_metadata"] as const;
/** A test gate name. */
export type TestGate = (typeof TEST_GATES)[number];
/** All five evidence keys (the four test gates plus `workflow`). */
export const EVIDENCE_KEYS = [...TEST_GATES, "workflow"] as const;

/** The command each test gate must have run, exactly. */
export type GateCommands = Record<TestGate, string>;

/** Default gate commands (the `justfile` recipes of a releasing package). */
export const DEFAULT_GATE_COMMANDS: Readonly<GateCommands> = Object.freeze({
  unit: "just test",
  public_contract: "just test-release",
  host_contract: "just test-contract",
  build_metadata: "just build && just check-dist",
});

/** What release documents are checked against. */
export interface ReleasePolicy {
  /** npm package name, e.g. `hermes-plugin-kit`. */
  package: string;
  /** The one registry repository allowed, e.g. `ghcr.io/owner/name` or `oci-layout:/srv/store`. */
  registryRepository: string;
  /** Declared gate commands. */
  gates: GateCommands;
  /**
   * Install-time behaviours the releasing package declares
   * (`hermesPluginKit.installTime`, see `install-time.ts`); absent = none.
   * Only the producer's release steps read it.
   */
  installTime?: readonly string[];
}

/**
 * Derive the policy from a parsed package.json object: `name`,
 * `hermesPluginKit.repository` (or `repositoryOverride`), `hermesPluginKit.gates`
 * merged over {@link DEFAULT_GATE_COMMANDS}, `hermesPluginKit.installTime`.
 * @throws ReleaseContractError `POLICY_INVALID` naming the field.
 */
export function policyFromPackageJson(pkg: unknown, repositoryOverride?: string): ReleasePolicy {
  if (pkg === null || typeof pkg !== "object" || Array.isArray(pkg)) {
    throw new ReleaseContractError("POLICY_INVALID", "package.json must be an object");
  }
  const record = pkg as Record<string, unknown>;
  const name = record["name"];
  if (!isNpmPackageName(name)) throw new ReleaseContractError("POLICY_INVALID", `package.json name must be an npm package name, found ${describe(name)}`);
  const section = record["hermesPluginKit"];
  const kit = section !== null && typeof section === "object" && !Array.isArray(section) ? (section as Record<string, unknown>) : {};
  const repository = repositoryOverride ?? kit["repository"];
  if (typeof repository !== "string") {
    throw new ReleaseContractError("POLICY_INVALID", `package.json hermesPluginKit.repository must name the registry repository, found ${describe(repository)}`);
  }
  parseRepository(repository);
  const gates: GateCommands = { ...DEFAULT_GATE_COMMANDS };
  const declared = kit["gates"];
  if (declared !== undefined) {
    if (declared === null || typeof declared !== "object" || Array.isArray(declared)) {
      throw new ReleaseContractError("POLICY_INVALID", "package.json hermesPluginKit.gates must be an object");
    }
    for (const [key, value] of Object.entries(declared as Record<string, unknown>)) {
      if (!(TEST_GATES as readonly string[]).includes(key)) {
        throw new ReleaseContractError("POLICY_INVALID", `package.json hermesPluginKit.gates has unknown gate ${describe(key)} (expected one of ${TEST_GATES.join(", ")})`);
      }
      if (typeof value !== "string" || value.trim().length === 0) {
        throw new ReleaseContractError("POLICY_INVALID", `package.json hermesPluginKit.gates.${key} must be a non-empty command string`);
      }
      gates[key as TestGate] = value;
    }
  }
  const installTime = installTimeDeclaredBy(pkg);
  return { package: name, registryRepository: repository, gates, ...(installTime.length > 0 ? { installTime } : {}) };
}

/**
 * Read `<dir>/package.json` (strict JSON). Returns `undefined` when the file
 * does not exist.
 * @throws ReleaseContractError `POLICY_INVALID` when it exists but is not valid JSON.
 */
export async function readPackageJsonFile(dir: string): Promise<Record<string, unknown> | undefined> {
  const { readFile } = await import("node:fs/promises");
  const { join } = await import("node:path");
  let bytes: Buffer;
  try {
    bytes = await readFile(join(dir, "package.json"));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new ReleaseContractError("POLICY_INVALID", `cannot read ${join(dir, "package.json")}: ${(error as NodeJS.ErrnoException).code ?? "error"}`);
  }
  try {
    return parseStrictJson(bytes, { rejectIntegralFloats: false });
  } catch (error) {
    throw new ReleaseContractError("POLICY_INVALID", `${join(dir, "package.json")} is not valid JSON: ${(error as Error).message}`);
  }
}

/** Inputs of {@link resolveVerificationPolicy}. */
export interface PolicyOverrides {
  /** Expected package name; default: the package.json `name` when it declares `hermesPluginKit`, else `fallbackPackage`. */
  package?: string;
  /** Expected repository; default: package.json `hermesPluginKit.repository`, else `fallbackRepository`. */
  repository?: string;
  /** Used when neither the flag nor package.json gives a package. */
  fallbackPackage?: string;
  /** Used when neither the flag nor package.json gives a repository. */
  fallbackRepository?: string;
}

/**
 * Resolve the policy a consumer command verifies against: explicit overrides
 * first, then the `hermesPluginKit` section of the package.json in `dir`,
 * then the fallbacks. Gate commands come from that package.json's
 * `hermesPluginKit.gates` when it is the releasing package, else the defaults.
 * @throws ReleaseContractError `POLICY_INVALID` when no repository can be determined.
 */
export async function resolveVerificationPolicy(dir: string, overrides: PolicyOverrides): Promise<ReleasePolicy> {
  const pkg = await readPackageJsonFile(dir);
  const kit = pkg?.["hermesPluginKit"];
  const declared = kit !== null && typeof kit === "object" && !Array.isArray(kit) ? (kit as Record<string, unknown>) : undefined;
  const repository = overrides.repository ?? (typeof declared?.["repository"] === "string" ? (declared["repository"] as string) : undefined) ?? overrides.fallbackRepository;
  if (repository === undefined) {
    throw new ReleaseContractError("POLICY_INVALID", "no registry repository to verify against: pass --repository or set hermesPluginKit.repository in package.json");
  }
  const pkgName = overrides.package ?? (declared !== undefined && typeof pkg?.["name"] === "string" ? (pkg["name"] as string) : undefined) ?? overrides.fallbackPackage;
  const sameReleasingPackage = declared !== undefined && pkg?.["name"] === pkgName;
  const base = sameReleasingPackage ? policyFromPackageJson(pkg, repository) : policyFromPackageJson({ name: pkgName, hermesPluginKit: { repository } });
  return base;
}
