/**
 * The flags of `release run` that change what a resumed run does, kept in its
 * run state (`run-state.json` field `flags`) when the run starts, so a resume
 * does what the run began with whether or not the user repeats them
 * (docs/release-run.md, "Resuming").
 *
 * Recorded: `--plain-http`, `--registry-config` (its absolute path only: never
 * the file's contents, never a credential), `--pass-env` (the names only),
 * `--attest-key` (the absolute path of the key file the run attests with,
 * never the key), `--chunk-size`, `--mcp-sdk-version`, `--github-release`; and,
 * as before, the run id and attempt (`run_id`, `run_attempt`). The registry
 * repository needs no record: it is the release commit's policy
 * (`hermesPluginKit.repository`), which the recorded steps re-verify.
 *
 * On resume a flag left out takes its recorded value; a flag given with the
 * recorded value is fine; a flag given with another value is refused
 * (`RUN_FLAG_MISMATCH`, every disagreement in one message). Except the
 * attestation key file: a given one (`--attest-key`, or the file
 * `HERMES_PLUGIN_KIT_ATTEST_KEY_FILE` names, for a run that attested) replaces
 * the recorded path, because the key is what counts and its own checks refuse
 * another (the policy's key: `RUN_ATTEST_KEY_MISMATCH`; a recorded attestation
 * verifies only with its key). A switch
 * (`--plain-http`, `--github-release`) is "given" only when on: the command
 * line has no way to say "off", so `false` means "left out". A run state
 * written before flags were recorded (no `flags` field) still resumes, with
 * the flags as given (the user repeats them, as the resume hint says) and is
 * not rewritten: the flags of its first run are unknown.
 */
import { resolve } from "node:path";
import { z } from "zod";
import { shellWord } from "../src/contract/grammar.js";
import { ATTEST_KEY_FILE_ENV } from "./attest-key.js";
import { PipelineError } from "./errors.js";
import type { RunEnv, RunOptions } from "./run-context.js";

/** Schema of the `flags` field of a run state: every key present, `null` or `false` or `[]` when the flag was not given. */
export const RunFlagsSchema = z
  .object({
    plain_http: z.boolean(),
    /** Absolute path of the Docker client config `--registry-config` named (never its contents). */
    registry_config: z.string().min(1).nullable(),
    /** `--pass-env` names, sorted, without duplicates. */
    pass_env: z.array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "an environment variable name")),
    /** Absolute path of the private key file the run attests with (never the key). */
    attest_key: z.string().min(1).nullable(),
    /** `--chunk-size` in bytes. */
    chunk_size: z.number().int().positive().nullable(),
    mcp_sdk_version: z.string().min(1).nullable(),
    github_release: z.boolean(),
  })
  .strict();

/** The `flags` of a run state. */
export type RunFlags = z.infer<typeof RunFlagsSchema>;

/** What a resume compares: the recorded flags (absent in a state written before they were recorded) and run attempt. */
export interface RecordedRun {
  flags?: RunFlags | undefined;
  run_attempt: number;
}

function sortedNames(names: readonly string[] | undefined): string[] {
  return [...new Set(names ?? [])].sort();
}

/**
 * The flags to record for a run started with `options` (paths made absolute, `--pass-env` names sorted).
 * `options.attestKey` is the key file the run attests with (`--attest-key`, or the file
 * `HERMES_PLUGIN_KIT_ATTEST_KEY_FILE` names when the release policy requires a key).
 */
export function recordRunFlags(options: RunOptions): RunFlags {
  return {
    plain_http: options.plainHttp === true,
    registry_config: options.registryConfig === undefined ? null : resolve(options.registryConfig),
    pass_env: sortedNames(options.gatePassEnv),
    attest_key: options.attestKey === undefined ? null : resolve(options.attestKey),
    chunk_size: options.chunkSize ?? null,
    mcp_sdk_version: options.mcpSdkVersion ?? null,
    github_release: options.githubRelease === true,
  };
}

/** One flag: how a value is given, how it is shown, how to repeat it, and the options field it fills. */
interface FlagRule {
  flag: string;
  /** The given value in recorded form (and how it was given), or `undefined` when the flag was left out. */
  given(options: RunOptions, env: RunEnv, recorded: RunFlags): { value: unknown; as: string } | undefined;
  recorded(flags: RunFlags): unknown;
  /** The value in words (for the message). */
  show(value: unknown): string;
  /** How to give the recorded `value` again (the fix). */
  fix(value: unknown): string;
  /** The options of a resume that left the flag out. */
  apply(flags: RunFlags): Partial<RunOptions>;
  /** A given value replaces the recorded one instead of being refused (checks of its own govern it). */
  replaces?: true;
}

/** A path or word flag: `--flag <value>`, or "leave out --flag" when none was recorded. */
function valueFlag(flag: string, none: string): Pick<FlagRule, "show" | "fix"> {
  return {
    show: (v) => (v === null ? `no ${flag} (${none})` : String(v)),
    fix: (v) => (v === null ? `leave out ${flag}` : `${flag} ${typeof v === "string" ? shellWord(v) : String(v)}`),
  };
}

/** A switch: on when recorded `true`. */
function switchFlag(flag: string, off: string): Pick<FlagRule, "show" | "fix"> {
  return { show: (v) => (v === true ? flag : `without ${flag} (${off})`), fix: (v) => (v === true ? flag : `leave out ${flag}`) };
}

const RULES: readonly FlagRule[] = [
  {
    flag: "--plain-http",
    given: (o) => (o.plainHttp === true ? { value: true, as: "--plain-http" } : undefined),
    recorded: (f) => f.plain_http,
    ...switchFlag("--plain-http", "HTTPS"),
    apply: (f) => (f.plain_http ? { plainHttp: true } : {}),
  },
  {
    flag: "--registry-config",
    given: (o) => (o.registryConfig === undefined ? undefined : { value: resolve(o.registryConfig), as: "--registry-config" }),
    recorded: (f) => f.registry_config,
    ...valueFlag("--registry-config", "credentials from the environment or the default Docker client config"),
    apply: (f) => (f.registry_config === null ? {} : { registryConfig: f.registry_config }),
  },
  {
    flag: "--pass-env",
    given: (o) => (o.gatePassEnv === undefined || o.gatePassEnv.length === 0 ? undefined : { value: sortedNames(o.gatePassEnv), as: "--pass-env" }),
    recorded: (f) => f.pass_env,
    show: (v) => ((v as string[]).length === 0 ? "no --pass-env (the allow-list only)" : `--pass-env ${(v as string[]).join(" ")}`),
    fix: (v) => ((v as string[]).length === 0 ? "leave out --pass-env" : `--pass-env ${(v as string[]).join(" ")}`),
    apply: (f) => (f.pass_env.length === 0 ? {} : { gatePassEnv: f.pass_env }),
  },
  {
    flag: "--attest-key",
    given: (o, env, recorded) => {
      if (o.attestKey !== undefined) return { value: resolve(o.attestKey), as: "--attest-key" };
      // The variable counts only for a run that attested with a key file: elsewhere a run never reads it.
      const fromEnv = env[ATTEST_KEY_FILE_ENV];
      return fromEnv === undefined || fromEnv === "" || recorded.attest_key === null ? undefined : { value: resolve(fromEnv), as: ATTEST_KEY_FILE_ENV };
    },
    recorded: (f) => f.attest_key,
    ...valueFlag("--attest-key", "the run did not attest"),
    apply: (f) => (f.attest_key === null ? {} : { attestKey: f.attest_key }),
    // The key, not its file's path, is what counts (a CI job mounts it elsewhere each time): the policy's key check
    // (RUN_ATTEST_KEY_MISMATCH) and the recorded attestation's verification refuse another key.
    replaces: true,
  },
  {
    flag: "--chunk-size",
    given: (o) => (o.chunkSize === undefined ? undefined : { value: o.chunkSize, as: "--chunk-size" }),
    recorded: (f) => f.chunk_size,
    ...valueFlag("--chunk-size", "64 MiB"),
    apply: (f) => (f.chunk_size === null ? {} : { chunkSize: f.chunk_size }),
  },
  {
    flag: "--mcp-sdk-version",
    given: (o) => (o.mcpSdkVersion === undefined ? undefined : { value: o.mcpSdkVersion, as: "--mcp-sdk-version" }),
    recorded: (f) => f.mcp_sdk_version,
    ...valueFlag("--mcp-sdk-version", "the host_contract evidence's"),
    apply: (f) => (f.mcp_sdk_version === null ? {} : { mcpSdkVersion: f.mcp_sdk_version }),
  },
  {
    flag: "--github-release",
    given: (o) => (o.githubRelease === true ? { value: true, as: "--github-release" } : undefined),
    recorded: (f) => f.github_release,
    ...switchFlag("--github-release", "no GitHub Release"),
    apply: (f) => (f.github_release ? { githubRelease: true } : {}),
  },
];

function sameValue(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * The options a resume of `recorded` runs with: each flag left out in `options` takes its recorded
 * value; a flag given with the recorded value is kept. `recorded` undefined (a fresh run) or without
 * `flags` (a state written before flags were recorded): `options` as given.
 * @param statePath the run state's path, named in the message.
 * @throws PipelineError `RUN_FLAG_MISMATCH` when a given flag (or `runAttempt`) disagrees with the recorded
 *   value: the message names every disagreeing flag, the recorded and the given value, the state file,
 *   and the fixes (repeat the original flag or leave it out; or start a fresh run with a new `--workspace`).
 */
export function resumeRunOptions(options: RunOptions, recorded: RecordedRun | undefined, statePath: string, env: RunEnv = options.env ?? process.env): RunOptions {
  if (recorded === undefined) return options;
  const problems: string[] = [];
  const repeat: string[] = [];
  if (options.runAttempt !== undefined && options.runAttempt !== recorded.run_attempt) {
    problems.push(`--run-attempt: recorded ${recorded.run_attempt}, given ${options.runAttempt}`);
    repeat.push(`--run-attempt ${recorded.run_attempt}`);
  }
  const flags = recorded.flags;
  let resumed: RunOptions = options;
  if (flags !== undefined) {
    for (const rule of RULES) {
      const given = rule.given(options, env, flags);
      const value = rule.recorded(flags);
      if (given !== undefined && rule.replaces === true) {
        resumed = { ...resumed, attestKey: String(given.value) };
      } else if (given !== undefined && !sameValue(given.value, value)) {
        problems.push(`${given.as}: recorded ${rule.show(value)}, given ${rule.show(given.value)}`);
        repeat.push(rule.fix(value));
      } else {
        // Left out, or given with the recorded value (also through the key file variable): the recorded value.
        resumed = { ...resumed, ...rule.apply(flags) };
      }
    }
  }
  if (problems.length > 0) {
    throw new PipelineError(
      "RUN_FLAG_MISMATCH",
      `release run flags disagree with the run this workspace resumes (recorded in ${statePath} when it started): ${problems.join("; ")}; ` +
        `a resume does what its run started with (a flag left out takes the recorded value); fix: repeat the original flags or leave them out (${repeat.join(", ")}), ` +
        `or start a fresh run with a new --workspace to use the new ones; nothing was changed`,
    );
  }
  return resumed;
}
