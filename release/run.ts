/**
 * `release run`: every release step, part 1 and part 2, in order, over one
 * workspace directory, resumable after a crash at any point (local and demo
 * use; CI runs the steps as separate jobs). DESIGN.md section 4; issue 6
 * item 6; reference `original-release-contract.md` 6.1 and 6.3.
 *
 * Steps: `intent` -> `materialize` -> `restore` -> `gates` (unit,
 * public_contract, host_contract) -> `build` (npm pack once, check-dist,
 * build_metadata gate) -> `manifest` (create-manifest, verify-manifest,
 * checksums) -> `check-immutable` (GitHub immutable releases on; only with
 * `githubRelease`) -> `check-private` (with bootstrap) -> `stage` -> `attest`
 * (signed provenance; only with `attestKey`) -> `promote` ->
 * `publish` -> `github-release` (only with `githubRelease`). Without
 * `githubRelease` the two GitHub steps are reported as skipped with the reason.
 *
 * Resumability: after each step its result is recorded in
 * `<workspace>/run-state.json` (written atomically). A rerun skips a recorded
 * step only after re-verifying its outputs (bundle checksum and identity
 * proofs, evidence files, tarball and manifest hashes, the staged tag and a
 * verified download, the remote refs, the receipt bytes and both tags); an
 * unrecorded step is redone from a clean directory. Part-1 steps are made
 * deterministic for the same trigger (the release commit takes the trigger
 * commit's date), and part-2 steps are idempotent, so any interrupted run
 * converges to the same digests and receipt bytes and never moves a tag.
 *
 * Before the gates, the install command the released package.json declares
 * (`hermesPluginKit.install`, default `npm ci`) runs in the restored checkout
 * like a gate: hermetic `PATH` (the checkout's `node_modules/.bin` only), no
 * credential variable in its environment (an allow-list plus `gatePassEnv`, `command-env.ts`).
 *
 * Test hook: `HERMES_PLUGIN_KIT_CRASH_AT=<point>` kills the process with
 * SIGKILL when the run reaches `<point>` (see {@link CRASH_POINTS}).
 */
import { createHash } from "node:crypto";
import { link, lstat, mkdir, readFile, rm, stat, unlink, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { parseStrictJson } from "../src/contract/canonical-json.js";
import { PAYLOAD_CHECKSUMS_FILE, RELEASE_MANIFEST_FILE, SOURCE_BUNDLE_FILE } from "../src/contract/constants.js";
import { describe, isGitSha } from "../src/contract/grammar.js";
import { hashFile } from "../src/contract/manifest.js";
import type { ReleasePolicy } from "../src/contract/policy.js";
import { parseRepository } from "../src/contract/reference.js";
import { credentialsFromEnvOrConfig, type RegistryCredentials } from "../src/fetch/fetch.js";
import { buildRelease, checkDist } from "./build.js";
import { checkImmutableReleases } from "./check-immutable.js";
import { checkPrivate } from "./check-private.js";
import { readReleaseConfig } from "./config.js";
import { evidenceFile, runGate } from "./gate.js";
import { commandEnvironment } from "./command-env.js";
import { createGitHubRelease } from "./github-release.js";
import { git, gitText, headCommit, remoteBranchCommit, remoteMainAdvice, remoteTagCommit, runProcess } from "./git.js";
import { disarmedReason, releaseIntent } from "./intent.js";
import { checksumsStep, createManifestStep, readGateEvidence, verifyManifestStep } from "./manifest-steps.js";
import { materializeRelease, proveReleaseIdentity, SOURCE_BUNDLE_CHECKSUM_FILE } from "./materialize.js";
import { promoteRelease } from "./promote.js";
import { publishRelease } from "./publish.js";
import { checkBundleChecksum, restoreSource } from "./restore.js";
import type { PipelineHooks } from "./checkpoint.js";
import { PipelineError } from "./errors.js";
import { outputJsonBytes, writeOutputFile } from "./output.js";
import { PipelineRunner, type StepReport } from "./pipeline.js";
import { openWriteTarget, resolveAccess, resolveTag, verifiedDownload } from "./registry-access.js";
import { stageRelease } from "./stage.js";
import { isProcessAlive } from "../src/oci/lock-owner.js";
import { consumerNextSteps } from "./next-steps.js";
import { createProgress, type Progress } from "./progress.js";

/** Environment variable naming the crash point (test hook). */
export const CRASH_AT_ENV = "HERMES_PLUGIN_KIT_CRASH_AT";

/** The steps of `release run`, in order. */
export const RUN_STEPS = Object.freeze([
  "intent",
  "materialize",
  "restore",
  "gates",
  "build",
  "manifest",
  "check-immutable",
  "check-private",
  "stage",
  "attest",
  "promote",
  "publish",
  "github-release",
] as const);

/** One of {@link RUN_STEPS}. */
export type RunStep = (typeof RUN_STEPS)[number];

/**
 * Named crash points: `<step>:done` (the step finished, its result is not
 * recorded yet) and `<step>:recorded` for every step, plus the points inside
 * the registry and git writes: `stage:verified`, `stage:private`,
 * `stage:upload:pushed:<n>` (after the n-th blob/manifest of the bundle
 * upload), `stage:upload:before-tag`, `stage:uploaded`, `stage:before-output`,
 * `attest:pushed` (the attestation is in the store, not yet re-verified or recorded),
 * `promote:before-push`, `promote:pushed`, `publish:before-bind`,
 * `publish:bound`, `publish:receipt-upload:pushed:<n>`,
 * `publish:receipt-upload:before-tag`, `publish:receipt-uploaded`,
 * `publish:before-output`, `publish:before-references`.
 */
export const CRASH_POINTS = Object.freeze([
  ...RUN_STEPS.flatMap((s) => [`${s}:done`, `${s}:recorded`]),
  "stage:verified",
  "stage:private",
  "stage:upload:pushed:1",
  "stage:upload:pushed:2",
  "stage:upload:pushed:3",
  "stage:upload:before-tag",
  "stage:uploaded",
  "stage:before-output",
  "attest:pushed",
  "promote:before-push",
  "promote:pushed",
  "publish:before-bind",
  "publish:bound",
  "publish:receipt-upload:pushed:1",
  "publish:receipt-upload:before-tag",
  "publish:receipt-uploaded",
  "publish:before-output",
  "publish:before-references",
]);

/** Inputs of {@link runRelease} (the `release run` flags). */
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
  env?: Readonly<Record<string, string | undefined>>;
  /**
   * Progress lines (default stderr): each step as it starts and ends with its elapsed time, and
   * "still running" every 10 s while a step (or one gate) runs (`./progress.ts`). `null` silences.
   */
  progress?: NodeJS.WritableStream | null;
  /** Test hooks (in addition to the crash point from the environment). */
  hooks?: PipelineHooks;
}

/** One step as reported by {@link runRelease} (`ran`, `verified` or `skipped`; `./pipeline.ts`). */
export type RunStepReport = StepReport<RunStep>;

/** What {@link runRelease} returns (and `release run` prints). */
export type RunResult =
  | { released: false; reason: string; workspace: string; steps: RunStepReport[] }
  | {
      released: true;
      workspace: string;
      version: string;
      tag: string;
      release_sha: string;
      trigger_sha: string;
      bundle_reference: string;
      receipt_reference: string;
      /** The npm tarball: file name, SHA-256 (hex), size in bytes. */
      tarball: { filename: string; sha256: string; size: number };
      /** `<workspace>/release-receipt.json`. */
      receipt_file: string;
      receipt_sha256: string;
      /** The attestation (`<repository>@sha256:<hex>` of its referrer manifest), when the run attested. */
      attestation_reference?: string;
      github_release: string;
      /** What a consumer runs next, one shell line each, with these references filled in (`./next-steps.ts`). */
      next_steps: string[];
      steps: RunStepReport[];
    };

/** `<workspace>/run-state.json`. */
interface RunState {
  schema: 1;
  source: string;
  trigger_sha: string;
  /** Commit date of the trigger (seconds), used as the release commit date. */
  trigger_date: number;
  run_id: string;
  run_attempt: number;
  steps: Partial<Record<RunStep, Record<string, unknown>>>;
}

/** Fixed paths inside the workspace. */
function layout(ws: string) {
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

async function readState(path: string): Promise<RunState | undefined> {
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new PipelineError("RUN_STATE_INVALID", `cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? "error"}`);
  }
  let doc: Record<string, unknown>;
  try {
    doc = parseStrictJson(bytes);
  } catch (error) {
    throw new PipelineError("RUN_STATE_INVALID", `${path} is not valid JSON: ${(error as Error).message}`);
  }
  const steps = doc["steps"];
  if (
    doc["schema"] !== 1 ||
    typeof doc["source"] !== "string" ||
    !isGitSha(doc["trigger_sha"]) ||
    typeof doc["trigger_date"] !== "number" ||
    typeof doc["run_id"] !== "string" ||
    typeof doc["run_attempt"] !== "number" ||
    steps === null ||
    typeof steps !== "object" ||
    Array.isArray(steps)
  ) {
    throw new PipelineError("RUN_STATE_INVALID", `${path} is not a release run state (schema 1)`);
  }
  return doc as unknown as RunState;
}

function sha256Hex(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

function diverged(step: RunStep, what: string): never {
  throw new PipelineError("RUN_STEP_DIVERGED", `recorded step ${step} no longer verifies: ${what}; remove the workspace to start over`);
}

function str(record: Record<string, unknown> | undefined, key: string): string {
  const value = record?.[key];
  if (typeof value !== "string") throw new PipelineError("RUN_STATE_INVALID", `run state lacks ${key}`);
  return value;
}

/**
 * `release run`: see the module comment.
 * @returns the references, version, tarball and per-step report; `released: false` when there is nothing to release.
 * @throws every code of the steps it composes (ReleaseStepError, ReleaseContractError, FetchError,
 *   PrivacyError, OciError, PipelineError, GitHubReleaseError), and PipelineError
 *   `RUN_WORKSPACE_INVALID` (the workspace belongs to another source), `RUN_WORKSPACE_LOCKED`
 *   (another live `release run` holds `<workspace>/run.lock`), `RUN_STATE_INVALID`,
 *   `RUN_STEP_DIVERGED` (a recorded step's outputs no longer verify).
 */
export async function runRelease(options: RunOptions): Promise<RunResult> {
  const env = options.env ?? process.env;
  const ws = resolve(options.workspace);
  const paths = layout(ws);
  const source = resolve(options.source);
  const progress = createProgress(options.progress === undefined ? process.stderr : options.progress);
  const crashAt = env[CRASH_AT_ENV];
  const hooks: PipelineHooks = {
    checkpoint: async (point) => {
      await options.hooks?.checkpoint?.(point);
      if (crashAt !== undefined && crashAt !== "" && point === crashAt) process.kill(process.pid, "SIGKILL");
    },
  };
  const mark = (point: string) => hooks.checkpoint!(point);

  // The disarm switch governs every run, fresh or resumed (reference 6.0).
  if (env["SEMANTIC_RELEASE_ENABLED"] !== "true") {
    const reason = disarmedReason(env["SEMANTIC_RELEASE_ENABLED"]);
    progress.skipped("release run", reason);
    return { released: false, reason, workspace: ws, steps: [] };
  }
  // A source that is not there fails before anything is written (no workspace is created for it).
  if (!(await stat(source).then((st) => st.isDirectory(), () => false))) {
    throw new PipelineError("RUN_SOURCE_INVALID", `the source checkout ${source} is not a directory: pass --source <the release checkout, a git clone whose origin is the release remote>`);
  }
  await mkdir(ws, { recursive: true, mode: 0o700 });
  const release = await lockWorkspace(ws);
  try {
    return await runLocked(options, env, ws, paths, source, progress, hooks, mark);
  } finally {
    await release();
  }
}

/**
 * Take `<workspace>/run.lock` (the pid, linked into place atomically so the
 * file is never empty). A lock whose process is gone (a crashed run) is broken.
 * @throws PipelineError `RUN_WORKSPACE_LOCKED` while another live run holds it.
 */
async function lockWorkspace(ws: string): Promise<() => Promise<void>> {
  const lock = join(ws, "run.lock");
  const temp = join(ws, `.run.lock.${process.pid}.${Date.now()}`);
  await writeFile(temp, String(process.pid), { mode: 0o600 });
  try {
    for (let attempt = 0; attempt < 3; attempt += 1) {
      try {
        await link(temp, lock);
        return async () => {
          await unlink(lock).catch(() => undefined);
        };
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
        const owner = Number((await readFile(lock, "utf8").catch(() => "")).trim());
        if (Number.isSafeInteger(owner) && owner > 0 && owner !== process.pid && isProcessAlive(owner)) {
          throw new PipelineError("RUN_WORKSPACE_LOCKED", `workspace ${ws} is in use by release run process ${owner}`);
        }
        await unlink(lock).catch(() => undefined);
      }
    }
    throw new PipelineError("RUN_WORKSPACE_LOCKED", `could not take ${lock}`);
  } finally {
    await unlink(temp).catch(() => undefined);
  }
}


async function runLocked(
  options: RunOptions,
  env: Readonly<Record<string, string | undefined>>,
  ws: string,
  paths: ReturnType<typeof layout>,
  source: string,
  progress: Progress,
  hooks: PipelineHooks,
  mark: (point: string) => void | Promise<void>,
): Promise<RunResult> {
  let state = await readState(paths.state);
  if (state === undefined) {
    const trigger = await headCommit(source);
    const date = Number(await gitText(["show", "-s", "--format=%ct", trigger], { cwd: source }));
    const runId = options.runId ?? String(Math.floor(Date.now() / 1000));
    if (!/^[1-9][0-9]*$/.test(runId)) throw new PipelineError("RUN_STATE_INVALID", `run id must be decimal digits without a leading zero, found ${describe(runId)}`);
    state = { schema: 1, source, trigger_sha: trigger, trigger_date: date, run_id: runId, run_attempt: options.runAttempt ?? 1, steps: {} };
    await writeOutputFile(paths.state, outputJsonBytes(state));
  } else if (state.source !== source) {
    throw new PipelineError("RUN_WORKSPACE_INVALID", `workspace ${ws} belongs to a run of ${state.source}, not ${source}`);
  } else if (options.runId !== undefined && options.runId !== state.run_id) {
    throw new PipelineError("RUN_WORKSPACE_INVALID", `workspace ${ws} was started with run id ${state.run_id}, not ${options.runId}`);
  }
  const current: RunState = state;
  const pipeline = new PipelineRunner<RunState, RunStep>({ state: current, statePath: paths.state, progress, mark });
  const reports = pipeline.reports;
  /** Run or verify one inline step (the `{ name, run, verify }` shape of `./pipeline.ts`). */
  const step = async (name: RunStep, run: () => Promise<Record<string, unknown>>, verify: (recorded: Record<string, unknown>) => Promise<void>): Promise<void> => {
    await pipeline.step({ name, run, verify: (_ctx: undefined, recorded) => verify(recorded) }, undefined);
  };
  const part = <T>(label: string, fn: () => Promise<T>): Promise<T> => pipeline.part(label, fn);

  const intentEnv = { ...process.env, ...env } as NodeJS.ProcessEnv;

  // 1. intent (in a fresh clone at the trigger).
  await step(
    "intent",
    async () => {
      await cloneAtTrigger(source, paths.source, current.trigger_sha);
      // Promotion will require origin's main at the trigger: say so now, before anything is built.
      const remoteMain = await remoteBranchCommit(paths.source, "origin", "main");
      if (remoteMain !== current.trigger_sha) {
        throw new PipelineError("PROMOTE_REMOTE_STATE", await remoteMainAdvice(source, remoteMain, current.trigger_sha));
      }
      const intent = await releaseIntent({ dir: paths.source, environment: intentEnv, remote: "origin" });
      if (!("previous_version" in intent)) return { released: false, reason: disarmedReason(intentEnv["SEMANTIC_RELEASE_ENABLED"]) };
      if (!intent.released || intent.version === null || intent.tag === null) return { released: false, reason: `nothing to release since v${intent.previous_version}` };
      return { released: true, version: intent.version, previous_version: intent.previous_version, tag: intent.tag, release_class: intent.release_class };
    },
    async () => undefined,
  );
  const intent = current.steps.intent as Record<string, unknown>;
  if (intent["released"] !== true) {
    return { released: false, reason: String(intent["reason"]), workspace: ws, steps: reports };
  }
  const version = str(intent, "version");
  const previousVersion = str(intent, "previous_version");
  const tag = str(intent, "tag");

  // 2. materialize (fresh clone; the release commit takes the trigger's date, so a redo gives the same SHA).
  await step(
    "materialize",
    async () => {
      await cloneAtTrigger(source, paths.source, current.trigger_sha);
      await rm(paths.bundleDir, { recursive: true, force: true });
      await mkdir(paths.bundleDir, { recursive: true, mode: 0o700 });
      const m = await materializeRelease({ dir: paths.source, outputDir: paths.bundleDir, expectedSha: current.trigger_sha, environment: intentEnv, remote: "origin", dateSeconds: current.trigger_date });
      if (!m.released) throw new PipelineError("RUN_STEP_DIVERGED", "materialize found nothing to release although intent did");
      if (m.version !== version) diverged("intent", `materialize computed v${m.version}, intent v${version}`);
      return { source_sha: m.source_sha, bundle_sha256: m.bundle_sha256 };
    },
    async (rec) => {
      const sha = await checkBundleChecksum(paths.bundle, paths.bundleChecksum);
      if (sha !== rec["bundle_sha256"]) diverged("materialize", `source bundle SHA-256 ${sha}, recorded ${String(rec["bundle_sha256"])}`);
      await proveReleaseIdentity(paths.source, { triggerSha: current.trigger_sha, version, releaseSha: str(rec, "source_sha") });
    },
  );
  const releaseSha = str(current.steps.materialize, "source_sha");

  // 3. restore.
  await step(
    "restore",
    async () => {
      await rm(paths.restore, { recursive: true, force: true });
      const r = await restoreSource({ bundle: paths.bundle, checksumFile: paths.bundleChecksum, expectedSha: current.trigger_sha, dir: paths.restore });
      if (r.source_sha !== releaseSha) diverged("materialize", `restored ${r.source_sha}, materialized ${releaseSha}`);
      return { source_sha: r.source_sha };
    },
    async () => {
      await proveReleaseIdentity(paths.restore, { triggerSha: current.trigger_sha, version, releaseSha });
    },
  );

  // 4. gates on the restored source.
  await step(
    "gates",
    async () => {
      await rm(paths.evidence, { recursive: true, force: true });
      // A redo after a crash starts from the restored tree: drop whatever an earlier install or gate left.
      await git(["clean", "-ffdxq"], { cwd: paths.restore });
      const install = (await readReleaseConfig(paths.restore)).policy.install;
      await part(`install: ${install}`, () => runInstallCommand(install, paths, options, env));
      for (const gate of ["unit", "public_contract", "host_contract"] as const) {
        await part(`gate ${gate}${options.gateOutput === "log" ? ` (log: ${join(paths.evidence, `${gate}.log`)})` : ""}`, () => runGate({ gate, dir: paths.restore, evidenceDir: paths.evidence, output: options.gateOutput ?? "stderr", passEnv: options.gatePassEnv ?? [] }));
      }
      await proveReleaseIdentity(paths.restore, { triggerSha: current.trigger_sha, version, releaseSha });
      return { gates: ["unit", "public_contract", "host_contract"] };
    },
    async () => {
      for (const gate of ["unit", "public_contract", "host_contract"] as const) {
        const evidence = await readGateEvidence(evidenceFile(paths.evidence, gate), gate);
        if (evidence.source_sha !== releaseSha) diverged("gates", `evidence of ${gate} names ${evidence.source_sha}`);
      }
    },
  );

  // 5. build once, check-dist, build_metadata gate.
  await step(
    "build",
    async () => {
      await rm(paths.dist, { recursive: true, force: true });
      const built = await buildRelease({ dir: paths.restore, artifactDir: paths.dist, version });
      await part(`gate build_metadata${options.gateOutput === "log" ? ` (log: ${join(paths.evidence, "build_metadata.log")})` : ""}`, () => runGate({ gate: "build_metadata", dir: paths.restore, evidenceDir: paths.evidence, output: options.gateOutput ?? "stderr", passEnv: options.gatePassEnv ?? [] }));
      return { filename: built.artifact.filename, sha256: built.artifact.sha256, size: built.artifact.size };
    },
    async (rec) => {
      const config = await readReleaseConfig(paths.restore);
      const checked = await checkDist(config, paths.dist, version);
      if (checked.artifact.sha256 !== rec["sha256"]) diverged("build", `tarball SHA-256 ${checked.artifact.sha256}, recorded ${String(rec["sha256"])}`);
      await readGateEvidence(evidenceFile(paths.evidence, "build_metadata"), "build_metadata");
    },
  );
  const tarball = current.steps.build as { filename: string; sha256: string; size: number };

  // 6. tested manifest and payload checksums.
  await step(
    "manifest",
    async () => {
      await rm(paths.payload, { recursive: true, force: true });
      await mkdir(paths.payload, { recursive: true, mode: 0o700 });
      await createManifestStep({
        dir: paths.restore,
        previousVersion,
        version,
        tag,
        sourceSha: releaseSha,
        runId: current.run_id,
        runAttempt: current.run_attempt,
        artifactDir: paths.dist,
        evidenceDir: paths.evidence,
        output: paths.manifest,
        ...(options.mcpSdkVersion === undefined ? {} : { mcpSdkVersion: options.mcpSdkVersion }),
      });
      await verifyManifestStep({ dir: paths.restore, manifest: paths.manifest, artifactDir: paths.dist });
      await checksumsStep({ dir: paths.restore, bundle: paths.bundle, manifest: paths.manifest, artifactDir: paths.dist, output: paths.checksums });
      return { manifest_sha256: (await hashFile(paths.manifest)).sha256, checksums_sha256: (await hashFile(paths.checksums)).sha256 };
    },
    async (rec) => {
      await verifyManifestStep({ dir: paths.restore, manifest: paths.manifest, artifactDir: paths.dist });
      if ((await hashFile(paths.manifest)).sha256 !== rec["manifest_sha256"]) diverged("manifest", "release-manifest.json changed");
      if ((await hashFile(paths.checksums)).sha256 !== rec["checksums_sha256"]) diverged("manifest", "release-payload.sha256 changed");
    },
  );

  // 7. immutable releases must be on before anything leaves the machine (reference 6.1 job 3).
  const noGitHub = "skipped: no GitHub repository configured (pass --github-release with GH_TOKEN, GITHUB_API_URL, GITHUB_REPOSITORY)";
  if (options.githubRelease === true) {
    await step(
      "check-immutable",
      async () => ({ ...(await checkImmutableReleases({ env })) }),
      async () => {
        await checkImmutableReleases({ env });
      },
    );
  } else {
    pipeline.skip("check-immutable", noGitHub);
  }

  const config = await readReleaseConfig(paths.restore);
  const policy: ReleasePolicy = config.policy;
  const credentials = options.credentials ?? (await credentialsFromEnvOrConfig(parseRepository(policy.registryRepository), env, options.registryConfig === undefined ? {} : { registryConfig: options.registryConfig }));
  const accessOptions = {
    repository: policy.registryRepository,
    plainHttp: options.plainHttp === true,
    ...(credentials === undefined ? {} : { credentials }),
    ...(options.chunkSize === undefined ? {} : { chunkSize: options.chunkSize }),
    // The upload bar follows the step lines: silenced with them (`--quiet`).
    progress: options.progress === undefined ? process.stderr : options.progress,
    env,
    hooks,
  };
  const access = resolveAccess(accessOptions, policy);

  // 8. privacy gate with bootstrap (proved again on every run: privacy is a fact of now).
  await step(
    "check-private",
    async () => {
      const evidence = await checkPrivate({ ...accessOptions, policy, bootstrap: true });
      return { kind: evidence.kind, bootstrapped: evidence.bootstrapped };
    },
    async () => {
      await checkPrivate({ ...accessOptions, policy, bootstrap: false });
    },
  );

  // 9. stage.
  const candidate = `candidate-${current.run_id}-${releaseSha}`;
  await step(
    "stage",
    async () => {
      const staged = await stageRelease({
        ...accessOptions,
        policy,
        tag: candidate,
        manifest: paths.manifest,
        artifactDir: paths.dist,
        sourceBundle: paths.bundle,
        payloadChecksums: paths.checksums,
        output: paths.staged,
      });
      return { bundle_reference: staged.bundle_reference };
    },
    async (rec) => {
      const reference = str(rec, "bundle_reference");
      const staged = parseStrictJson(await readFile(paths.staged));
      if (staged["bundle_reference"] !== reference) diverged("stage", `${paths.staged} names ${describe(staged["bundle_reference"])}`);
      const target = await openWriteTarget(access);
      if ((await resolveTag(target, candidate)) !== reference.split("@")[1]) diverged("stage", `tag ${candidate} does not name ${reference}`);
      const download = await verifiedDownload(access, reference, policy, { expect: "bundle" });
      await download.cleanup();
    },
  );
  const bundleReference = str(current.steps.stage, "bundle_reference");

  // 9b. attest: signed provenance as an OCI referrer of the staged bundle (only with a signing key).
  if (options.attestKey !== undefined) {
    const { attestStep, sourceRepositoryUri } = await import("./attest.js");
    const { readSigningKeyFile } = await import("./provenance-sign.js");
    const origin = (await gitText(["config", "--get", "remote.origin.url"], { cwd: paths.source })).trim();
    const ctx = {
      ...accessOptions,
      policy,
      reference: bundleReference,
      signer: { kind: "key" as const, privateKey: await readSigningKeyFile(options.attestKey) },
      sourceRepository: sourceRepositoryUri(origin, paths.source),
      workflowRef: "refs/heads/main",
      runAttempt: current.run_attempt,
    };
    await pipeline.step(attestStep, ctx);
  } else {
    pipeline.skip("attest", "skipped: no attestation key (pass --attest-key)");
  }

  // 10. promote (verification = the resumable promotion itself, which only reads when already promoted).
  await step(
    "promote",
    async () => {
      const promoted = await promoteRelease({ ...accessOptions, policy, reference: bundleReference, repoDir: paths.source });
      return { outcome: promoted.outcome, release_sha: promoted.release_sha };
    },
    async () => {
      const again = await promoteRelease({ ...accessOptions, policy, reference: bundleReference, repoDir: paths.source });
      if (again.outcome !== "already-promoted") diverged("promote", "the remote was not promoted any more");
    },
  );

  // 11. publish.
  await step(
    "publish",
    async () => {
      const published = await publishRelease({ ...accessOptions, policy, reference: bundleReference, output: paths.receipt, references: paths.references });
      return { receipt_reference: published.receipt_reference, receipt_sha256: published.receipt_sha256 };
    },
    async (rec) => {
      const receiptReference = str(rec, "receipt_reference");
      const bytes = await readFile(paths.receipt);
      if (sha256Hex(bytes) !== rec["receipt_sha256"]) diverged("publish", "release-receipt.json changed");
      const refs = await readFile(paths.references);
      if (!refs.equals(outputJsonBytes({ bundle_reference: bundleReference, receipt_reference: receiptReference }))) diverged("publish", "publication.json changed");
      const target = await openWriteTarget(access);
      if ((await resolveTag(target, tag)) !== bundleReference.split("@")[1]) diverged("publish", `tag ${tag} does not name the bundle`);
      if ((await resolveTag(target, `${tag}-receipt`)) !== receiptReference.split("@")[1]) diverged("publish", `tag ${tag}-receipt does not name the receipt`);
      const download = await verifiedDownload(access, receiptReference, policy, { expect: "receipt" });
      try {
        const echoed = await readFile(download.localFiles.get("release-receipt.json") as string);
        if (!echoed.equals(bytes)) diverged("publish", "the registry's receipt differs from release-receipt.json");
      } finally {
        await download.cleanup();
      }
    },
  );
  const receiptReference = str(current.steps.publish, "receipt_reference");
  const receiptSha = str(current.steps.publish, "receipt_sha256");

  // 12. GitHub Release (optional; resumable by verification inside createGitHubRelease).
  let githubRelease = noGitHub;
  if (options.githubRelease === true) {
    await step(
      "github-release",
      async () => {
        const result = await createGitHubRelease(
          { version, releaseSha, bundleReference, receiptReference, packageName: policy.package, remoteTagCommit: () => remoteTagCommit(paths.source, "origin", tag) },
          { env },
        );
        return { release_id: result.release_id, outcome: result.outcome };
      },
      async () => {
        const result = await createGitHubRelease(
          { version, releaseSha, bundleReference, receiptReference, packageName: policy.package, remoteTagCommit: () => remoteTagCommit(paths.source, "origin", tag) },
          { env },
        );
        if (result.outcome !== "verified") diverged("github-release", `the release was ${result.outcome} instead of verified`);
      },
    );
    githubRelease = `release ${String(current.steps["github-release"]?.["release_id"])}`;
  } else {
    pipeline.skip("github-release", githubRelease);
  }

  return {
    released: true,
    workspace: ws,
    version,
    tag,
    release_sha: releaseSha,
    trigger_sha: current.trigger_sha,
    bundle_reference: bundleReference,
    receipt_reference: receiptReference,
    tarball: { filename: tarball.filename, sha256: tarball.sha256, size: tarball.size },
    receipt_file: paths.receipt,
    receipt_sha256: receiptSha,
    ...(typeof current.steps.attest?.["attestation_reference"] === "string" ? { attestation_reference: current.steps.attest["attestation_reference"] } : {}),
    github_release: githubRelease,
    next_steps: consumerNextSteps({ repository: policy.registryRepository, bundleReference, receiptReference, packageName: policy.package, tarball: tarball.filename, plainHttp: options.plainHttp === true, gates: policy.gates }),
    steps: reports,
  };
}

/**
 * Replace `dir` with a fresh clone of `source` checked out on branch `main`
 * at `trigger`, whose `origin` is the source checkout's `origin` (resolved
 * to an absolute path when local).
 * @throws PipelineError `RUN_WORKSPACE_INVALID` when the source has no origin.
 */
export async function cloneAtTrigger(source: string, dir: string, trigger: string): Promise<void> {
  const originUrl = (await git(["config", "--get", "remote.origin.url"], { cwd: source, allowFailure: true })).stdout.trim();
  if (originUrl.length === 0) throw new PipelineError("RUN_WORKSPACE_INVALID", `the source checkout ${source} has no origin remote to promote to`);
  const isPath = !/^[a-z][a-z0-9+.-]*:\/\//i.test(originUrl) && !/^[^/]+:/.test(originUrl);
  const absoluteOrigin = isPath ? resolve(source, originUrl) : originUrl;
  if ((await lstat(dir).catch(() => null)) !== null) await rm(dir, { recursive: true, force: true });
  await git(["clone", "--quiet", "--no-checkout", source, dir], { cwd: resolve(dir, ".."), timeoutMs: 600_000 });
  await git(["checkout", "--quiet", "-B", "main", trigger], { cwd: dir });
  await git(["remote", "set-url", "origin", absoluteOrigin], { cwd: dir });
}

/**
 * The policy's install command (`hermesPluginKit.install`, default `npm ci`) in
 * the restored checkout: what makes it runnable, hermetically (no caller's
 * `node_modules/.bin` on its PATH, no credential variable; `command-env.ts`).
 * @throws PipelineError `RUN_INSTALL_FAILED` naming the command, where it came from, and its log.
 */
async function runInstallCommand(install: string, paths: ReturnType<typeof layout>, options: RunOptions, env: Readonly<Record<string, string | undefined>>): Promise<void> {
  await mkdir(paths.evidence, { recursive: true });
  const logFile = options.gateOutput === "log" ? join(paths.evidence, "install.log") : undefined;
  const installed = await runProcess("bash", ["--norc", "--noprofile", "-c", install], {
    cwd: paths.restore,
    env: commandEnvironment(paths.restore, options.gatePassEnv ?? [], { ...process.env, ...env }),
    timeoutMs: 15 * 60_000,
    allowFailure: true,
    output: logFile === undefined ? "stderr" : { file: logFile },
    label: "install command",
  });
  if (installed.code !== 0) {
    throw new PipelineError(
      "RUN_INSTALL_FAILED",
      `the install command ${JSON.stringify(install)} (hermesPluginKit.install of the released package.json) exited ${installed.code ?? "by signal"} in ${paths.restore}${logFile === undefined ? "" : `; output in ${logFile}`}; ` +
        `run it in your checkout to see why, or declare another command in package.json hermesPluginKit.install (e.g. "npm install --no-save" when npm ci refuses a lock your registry cannot complete)`,
    );
  }
}
