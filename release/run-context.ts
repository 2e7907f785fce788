/**
 * What every step of `release run` gets (docs/release-run.md; docs/architecture.md,
 * "Release: steps and data flow"): the options of the run, the fixed paths of
 * its workspace, the typed run state (`run-state.json`), the earlier steps'
 * validated records, and the registry access read once from the restored
 * release commit's policy. Each step module reads what it needs from here and
 * from the records of the steps before it; nothing else passes between steps.
 */
import { join } from "node:path";
import { z } from "zod";
import { PAYLOAD_CHECKSUMS_FILE, RELEASE_MANIFEST_FILE, SOURCE_BUNDLE_CHECKSUM_FILE, SOURCE_BUNDLE_FILE } from "../src/contract/constants.js";
import { isGitSha } from "../src/contract/grammar.js";
import type { PackagePolicy } from "../src/contract/policy.js";
import { parseRepository } from "../src/contract/reference.js";
import { credentialsFromEnvOrConfig, type RegistryCredentials } from "../src/fetch/fetch.js";
import type { PipelineHooks } from "./checkpoint.js";
import { readReleaseConfig } from "./config.js";
import { PipelineError } from "./errors.js";
import type { RecordedStep, StepRecord } from "./pipeline.js";
import { resolveAccess, type RegistryAccess, type RegistryAccessOptions } from "./registry-access.js";
import { RunFlagsSchema } from "./run-flags.js";

/** The environment a run reads (`SEMANTIC_RELEASE_ENABLED`, tokens, the crash point). */
export type RunEnv = Readonly<Record<string, string | undefined>>;

/** Inputs of `runRelease` (the `release run` flags). */
export interface RunOptions {
  /** The package's git checkout: HEAD is the trigger commit, `origin` the remote to promote. */
  source: string;
  /** The workspace directory (created; reused by reruns). */
  workspace: string;
  /** Workflow run id recorded in evidence (`[1-9][0-9]*`; default: chosen once and kept in the workspace). */
  runId?: string;
  /** Workflow run attempt (default 1). */
  runAttempt?: number;
  /** Plain HTTP to a loopback registry. */
  plainHttp?: boolean;
  /** Registry credentials (default: the environment's, else the Docker client config's for the registry host). */
  credentials?: RegistryCredentials;
  /** Largest upload request body in bytes (registries with a request-size cap; default 64 MiB). */
  chunkSize?: number;
  /** Docker client config to read credentials from (default `$DOCKER_CONFIG/config.json`, else `~/.docker/config.json`). */
  registryConfig?: string;
  /** Where gate and install command output goes: our stderr (default) or `<workspace>/evidence/<gate>.log`. */
  gateOutput?: "stderr" | "log";
  /** Variables the install and gate commands get besides their allow-list (`--pass-env`), never a pipeline credential. */
  gatePassEnv?: readonly string[];
  /** MCP SDK version for the manifest when host_contract evidence does not record one. */
  mcpSdkVersion?: string;
  /**
   * Sign the staged bundle's provenance with this P-256 private key (PEM file, mode 0600) and store it as
   * an OCI referrer (`release attest`); without it the attest step is reported as skipped.
   */
  attestKey?: string;
  /** Create the GitHub Release at the end (needs `GH_TOKEN`, `GITHUB_API_URL`, `GITHUB_REPOSITORY`). */
  githubRelease?: boolean;
  /** Environment (default `process.env`): `SEMANTIC_RELEASE_ENABLED`, tokens, `HERMES_PLUGIN_KIT_CRASH_AT`. */
  env?: RunEnv;
  /**
   * Progress lines (default stderr): each step as it starts and ends with its elapsed time, and
   * "still running" every 10 s while a step (or one gate) runs (`./progress.ts`). `null` silences.
   */
  progress?: NodeJS.WritableStream | null;
  /** Test hooks (in addition to the crash point from the environment). */
  hooks?: PipelineHooks;
  /**
   * Aborting (the CLI aborts on SIGINT/SIGTERM) stops the install or gate command under way with its
   * whole process group, starts no further step, releases the workspace lock and rejects with
   * `InterruptedError` (`INTERRUPTED`); a rerun with the same workspace redoes the interrupted step.
   */
  signal?: AbortSignal;
}

/** Fixed paths inside a run workspace (all absolute). */
export interface WorkspacePaths {
  /** `run-state.json`: the run state, rewritten atomically after each step. */
  state: string;
  /** The clone of the source checkout where the release commit and tag are made. */
  source: string;
  bundleDir: string;
  /** `source-bundle/release-source.bundle` and its checksum file. */
  bundle: string;
  bundleChecksum: string;
  /** The release commit restored from the bundle: where the gates, the build and the policy are read. */
  restore: string;
  evidence: string;
  /** The npm tarball (`npm pack` output). */
  dist: string;
  payload: string;
  /** `payload/release-manifest.json` (tested manifest) and `payload/release-payload.sha256`. */
  manifest: string;
  checksums: string;
  /** `staged-release.json`, `release-receipt.json`, `publication.json`, `github-release.json`. */
  staged: string;
  receipt: string;
  references: string;
  githubRelease: string;
}

/** The fixed paths of the workspace `ws` (absolute). */
export function workspacePaths(ws: string): WorkspacePaths {
  return {
    state: join(ws, "run-state.json"),
    source: join(ws, "source"),
    bundleDir: join(ws, "source-bundle"),
    bundle: join(ws, "source-bundle", SOURCE_BUNDLE_FILE),
    bundleChecksum: join(ws, "source-bundle", SOURCE_BUNDLE_CHECKSUM_FILE),
    restore: join(ws, "restore"),
    evidence: join(ws, "evidence"),
    dist: join(ws, "dist"),
    payload: join(ws, "payload"),
    manifest: join(ws, "payload", RELEASE_MANIFEST_FILE),
    checksums: join(ws, "payload", PAYLOAD_CHECKSUMS_FILE),
    staged: join(ws, "staged-release.json"),
    receipt: join(ws, "release-receipt.json"),
    references: join(ws, "publication.json"),
    githubRelease: join(ws, "github-release.json"),
  };
}

/** Schema of `<workspace>/run-state.json` (schema 1); each step's record is parsed by its own step schema when read. */
export const RunStateSchema = z
  .object({
    schema: z.literal(1),
    /** The source checkout the run belongs to (absolute). */
    source: z.string().min(1),
    trigger_sha: z.string().refine(isGitSha, "not a git commit SHA"),
    /** Commit date of the trigger (seconds), used as the release commit date. */
    trigger_date: z.number().int().nonnegative(),
    run_id: z.string().regex(/^[1-9][0-9]*$/, "decimal digits without a leading zero"),
    run_attempt: z.number().int().positive(),
    /**
     * The flags the run started with (`./run-flags.ts`): a resume that leaves one out uses it. Absent in a
     * state written before flags were recorded (that run resumes with the flags as given).
     */
    flags: RunFlagsSchema.optional(),
    steps: z.record(z.string(), z.record(z.string(), z.unknown())),
  })
  .strict();

/** `<workspace>/run-state.json`. */
export type RunState = z.infer<typeof RunStateSchema>;

/** A part of a step that runs a package command the run's signal stops mid-way: the policy's install command, one gate's command, or `npm pack` (the package's pack scripts). */
export type RunPart = { kind: "install"; command: string } | { kind: "gate"; gate: string } | { kind: "pack" };

/** The registry side of a run: the release commit's policy and how to reach its repository. */
export interface RunRegistry {
  /** The policy of the restored release commit's package.json. */
  policy: PackagePolicy;
  /** Options every registry step passes on (repository, credentials, progress, hooks, env). */
  accessOptions: RegistryAccessOptions & { repository: string; env: RunEnv };
  access: RegistryAccess;
}

/** What every step of `release run` is given. */
export interface RunContext {
  readonly options: RunOptions;
  /** The source checkout (absolute). */
  readonly source: string;
  readonly paths: WorkspacePaths;
  readonly state: RunState;
  readonly env: RunEnv;
  /** `process.env` under {@link RunEnv}: what semantic-release and git see in intent and materialize. */
  readonly intentEnv: NodeJS.ProcessEnv;
  /** Checkpoint hooks (crash points) the registry steps pass on. */
  readonly hooks: PipelineHooks;
  /**
   * One part of the running step (the install command, one gate) on its own progress line; `what` says which
   * command it runs, so that an interrupted run names it (`./run.ts` `runInterruptedMessage`).
   */
  part<T>(label: string, fn: () => Promise<T>, what?: RunPart): Promise<T>;
  /** The validated record of an earlier step. @throws PipelineError `RUN_STATE_INVALID` when it has none or it is malformed. */
  recorded<Rec extends StepRecord>(step: RecordedStep<Rec>): Rec;
  /** The registry side, read once (after the restore step) from the release commit's policy. */
  registry(): Promise<RunRegistry>;
}

/** What {@link createRunContext} builds a context from. */
export interface RunContextInputs {
  options: RunOptions;
  source: string;
  paths: WorkspacePaths;
  state: RunState;
  env: RunEnv;
  hooks: PipelineHooks;
  part<T>(label: string, fn: () => Promise<T>, what?: RunPart): Promise<T>;
  /** The runner's reader of a step's record (undefined when the step has not run). */
  recorded<Rec extends StepRecord>(step: RecordedStep<Rec>): Rec | undefined;
}

/** The context of one run (registry access built lazily, once). */
export function createRunContext(inputs: RunContextInputs): RunContext {
  let registry: Promise<RunRegistry> | undefined;
  const { options, env } = inputs;
  return {
    options,
    source: inputs.source,
    paths: inputs.paths,
    state: inputs.state,
    env,
    intentEnv: { ...process.env, ...env } as NodeJS.ProcessEnv,
    hooks: inputs.hooks,
    part: (label, fn, what) => inputs.part(label, fn, what),
    recorded: (step) => {
      const rec = inputs.recorded(step);
      if (rec === undefined) throw new PipelineError("RUN_STATE_INVALID", `the run state has no record of step ${step.name}, which a later step needs; fix: start over with a fresh --workspace (or remove this one)`);
      return rec;
    },
    registry: () => (registry ??= runRegistry(options, env, inputs.paths, inputs.hooks)),
  };
}

async function runRegistry(options: RunOptions, env: RunEnv, paths: WorkspacePaths, hooks: PipelineHooks): Promise<RunRegistry> {
  const policy = (await readReleaseConfig(paths.restore)).policy;
  const credentials =
    options.credentials ??
    (await credentialsFromEnvOrConfig(parseRepository(policy.registryRepository), env, {
      ...(options.registryConfig === undefined ? {} : { registryConfig: options.registryConfig }),
      // A --registry-config the environment's credentials override is said where the step lines go (silent with them).
      onNote: (line) => void (options.progress === undefined ? process.stderr : options.progress)?.write(`hermes-plugin-kit: ${line}\n`),
    }));
  const accessOptions = {
    repository: policy.registryRepository,
    plainHttp: options.plainHttp === true,
    ...(credentials === undefined ? {} : { credentials }),
    ...(options.chunkSize === undefined ? {} : { chunkSize: options.chunkSize }),
    // The upload bar follows the step lines: silenced with them (`--quiet`).
    progress: options.progress === undefined ? process.stderr : options.progress,
    env,
    hooks,
    // An interrupt stops an upload under way (stage, promote, publish), not only the commands.
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  };
  return { policy, accessOptions, access: resolveAccess(accessOptions, policy) };
}
