/**
 * The consumer flags every verifying command shares (`--repository`,
 * `--package`, `--expect-gate`, `--policy`) and their translation into the
 * contract's consumer expectations (`src/contract/policy.ts`, the one home of
 * policy resolution; docs/architecture.md, "Policy: where expectations come from"). The current
 * directory's package.json is never read unless `--policy` names it.
 *
 * Start-up rule: only commander types and `output.js` at the top; the
 * contract loads inside {@link consumerExpectations} and {@link gatePins}.
 */
import type { Command } from "commander";
import type { ConsumerExpectations, GateCommands } from "../contract/policy.js";
import { UsageError } from "./output.js";

/** The shared consumer flags as commander parses them. */
export interface ConsumerPolicyFlags {
  repository?: string;
  package?: string;
  /** Raw `--expect-gate` values (`<gate>=<command>`), parsed by {@link gatePins}. */
  expectGate?: string[];
  policy?: string;
}

/** Commander collector of a repeatable option. */
export function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/** Add `--expect-gate` (repeatable) and `--policy` to a command. */
export function addGatePolicyOptions(command: Command): Command {
  return command
    .option("--expect-gate <gate=command>", 'pin a gate command the release must have run, e.g. unit="npm test"; spaces around = are ignored (repeatable)', collect)
    .option("--policy <file>", "read expectations from this package.json (hermesPluginKit.repository, name, gates); never read implicitly");
}

/**
 * Parse raw `--expect-gate` values.
 * @throws UsageError (exit 2) naming the malformed value, or a gate pinned to two different commands.
 */
export async function gatePins(values: string[] | undefined): Promise<Partial<GateCommands> | undefined> {
  if (values === undefined || values.length === 0) return undefined;
  const { parseGatePin } = await import("../contract/policy.js");
  const pins: Partial<GateCommands> = {};
  for (const value of values) {
    let parsed: [keyof GateCommands, string];
    try {
      parsed = parseGatePin(value) as [keyof GateCommands, string];
    } catch (error) {
      throw new UsageError((error as Error).message);
    }
    const [gate, command] = parsed;
    // One gate pinned to two commands can never both hold: a usage error, not a mismatch with the release.
    const previous = pins[gate];
    if (previous !== undefined && previous !== command) {
      throw new UsageError(`--expect-gate pins ${gate} twice (${JSON.stringify(previous)}, then ${JSON.stringify(command)}); a gate ran one command: pin it once`);
    }
    pins[gate] = command;
  }
  return pins;
}

/**
 * Resolve the consumer's expectations from its flags (and `reference`, whose
 * repository is the default pin).
 * @throws UsageError for a malformed `--expect-gate`; ReleaseContractError `POLICY_INVALID`,
 *   `REPOSITORY_INVALID`, `REFERENCE_*`.
 */
export async function consumerExpectations(flags: ConsumerPolicyFlags, reference?: string): Promise<ConsumerExpectations> {
  const { readPolicyFile, resolveConsumerExpectations } = await import("../contract/policy.js");
  const gates = await gatePins(flags.expectGate);
  const policyFile = flags.policy === undefined ? undefined : { path: flags.policy, json: await readPolicyFile(flags.policy) };
  return resolveConsumerExpectations({
    ...(flags.repository === undefined ? {} : { repository: flags.repository }),
    ...(flags.package === undefined ? {} : { package: flags.package }),
    ...(gates === undefined ? {} : { gates }),
    ...(reference === undefined ? {} : { reference }),
    ...(policyFile === undefined ? {} : { policyFile }),
  });
}
