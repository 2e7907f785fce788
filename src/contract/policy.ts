/**
 * Release policy: what a tested manifest or receipt must match, passed in as
 * data (as sigstore-js passes a verification policy) instead of flags.
 *
 * The policy of a releasing package comes from its package.json: `name`,
 * `hermesPluginKit.repository` and `hermesPluginKit.gates` (DESIGN.md section 3,
 * "Evidence gates"; issue 2 item 4).
 */
import { ReleaseContractError } from "./errors.js";
import { describe, isNpmPackageName } from "./grammar.js";
import { parseRepository } from "./reference.js";

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
}

/**
 * Derive the policy from a parsed package.json object: `name`,
 * `hermesPluginKit.repository` (or `repositoryOverride`), `hermesPluginKit.gates`
 * merged over {@link DEFAULT_GATE_COMMANDS}.
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
  return { package: name, registryRepository: repository, gates };
}
