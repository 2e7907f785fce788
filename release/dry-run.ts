/**
 * `release run --dry-run`: every check `release run` makes before its first
 * write, and the read-only checks of the later steps, with nothing committed,
 * tagged, pushed, uploaded or recorded (docs/release-run.md, "`release run`";
 * the steps of `./run.ts`).
 *
 * It describes exactly what a real run with the same flags would do: for a
 * workspace that resumes, the trigger and the release intent it recorded when it
 * started (not the source's HEAD now). Checks, in order: the disarm switch; the
 * workspace (a fresh run or which steps a rerun would resume, read from
 * `run-state.json` without taking the lock); uncommitted changes in the source
 * checkout (a notice: they are not released); the trigger (HEAD, or the recorded
 * one); the signing key when the release policy names one (`./attest-key.ts`);
 * origin's `main` is the trigger; the release intent (recorded, or a semantic-release
 * dry run and strict history, in a scratch clone at the trigger, removed
 * afterwards); the release config (`package.json` `hermesPluginKit`);
 * immutable GitHub releases (with `githubRelease`); registry credentials (their
 * source, never their value); the privacy gate without bootstrap (an absent
 * repository is reported as "would bootstrap"); and that neither the release
 * tag nor its receipt tag exists in the store yet.
 */
import { rm } from "node:fs/promises";
import { join, resolve } from "node:path";
import { checkDirectoryWritable, makeTempDirectory } from "../src/contract/directory.js";
import { hasCode } from "../src/contract/errors.js";
import { parseRepository } from "../src/contract/reference.js";
import { credentialsFromEnv, credentialsFromEnvOrConfig, registryConfigNote } from "../src/fetch/fetch.js";
import { requirePrivateForRead } from "../src/fetch/privacy.js";
import { resolveRunSigningKey } from "./attest-key.js";
import { checkImmutableReleases } from "./check-immutable.js";
import { readReleaseConfig } from "./config.js";
import { cloneAtTrigger, headCommit, remoteBranchCommit, remoteMainAdvice, statusPorcelain } from "./git.js";
import { IntentRecordSchema, type IntentRecord } from "./steps/intent.js";
import { disarmedReason, releaseIntent } from "./intent.js";
import type { RunOptions, RunState } from "./run-context.js";
import { readRunState, requireWorkspaceOutsideSource, resumeOptions } from "./run.js";
import { requirePassableNames } from "./command-env.js";
import { PipelineError } from "./errors.js";
import { openWriteTarget, resolveAccess, resolveTag } from "./registry-access.js";

/** One check of a dry run. */
export interface DryRunCheck {
  check: string;
  /** `ok` passed, `would` names a write the real run would make, `skipped` did not apply. */
  status: "ok" | "would" | "skipped";
  detail: string;
}

/** What {@link dryRunRelease} returns (and `release run --dry-run` prints). */
export interface DryRunResult {
  dry_run: true;
  /** The real run would release (every check passed and there is something to release). */
  would_release: boolean;
  reason?: string;
  workspace: string;
  trigger_sha?: string;
  /**
   * Where `trigger_sha` comes from, as a real run with the same flags takes it: `head` (a fresh run: the source's
   * HEAD) or `recorded` (a resumed run: the trigger its `run-state.json` recorded when it started, whatever HEAD is now).
   */
  trigger_from?: "head" | "recorded";
  /**
   * The source checkout's uncommitted changes, counted (`git status --porcelain --untracked-files=all`): the run clones
   * the trigger commit, so none of them is released. Absent when the checkout is clean.
   */
  uncommitted?: { files: number; tracked: number; untracked: number };
  /** Things to know that stop nothing (the CLI prints each on stderr as `note: ...`), e.g. uncommitted changes. */
  notices: string[];
  version?: string;
  previous_version?: string;
  tag?: string;
  release_class?: string;
  repository?: string;
  checks: DryRunCheck[];
}

function workspaceState(state: RunState | undefined): string {
  if (state === undefined) return "fresh: no run state, a real run starts from the first step";
  const steps = Object.keys(state.steps);
  const flags = state.flags === undefined ? "; no flags recorded (an older state): the flags as given" : "; flags left out take the recorded values";
  return `resumes run ${state.run_id} of ${state.source} (recorded: ${steps.join(", ") || "none"}${flags})`;
}

/**
 * Run the checks of {@link DryRunResult} for `options` (the `release run` options).
 * @returns the checks; `would_release: false` with a reason when disarmed or nothing to release.
 * @throws the first failing check's error, unchanged (the code a real run would stop with).
 */
export async function dryRunRelease(options: RunOptions): Promise<DryRunResult> {
  const env = options.env ?? process.env;
  const ws = resolve(options.workspace);
  const source = resolve(options.source);
  const checks: DryRunCheck[] = [];
  const result: DryRunResult = { dry_run: true, would_release: false, workspace: ws, checks, notices: [] };
  requirePassableNames(options.gatePassEnv ?? []);
  if (env["SEMANTIC_RELEASE_ENABLED"] !== "true") {
    result.reason = disarmedReason(env["SEMANTIC_RELEASE_ENABLED"]);
    return result;
  }
  // The real run's workspace check, with the same codes (IO_NOT_A_DIRECTORY, IO_DIRECTORY_UNWRITABLE,
  // IO_PATH_TOO_LONG); what it creates to prove the path usable it removes again.
  requireWorkspaceOutsideSource(ws, source);
  checkDirectoryWritable(ws, { purpose: "release workspace (--workspace)" });
  // A resume's flags as the real run takes them: left out, the recorded ones; disagreeing, RUN_FLAG_MISMATCH.
  const statePath = join(ws, "run-state.json");
  const state = await readRunState(statePath);
  options = resumeOptions(options, state, ws, source, statePath, env);
  checks.push({ check: "workspace", status: "ok", detail: workspaceState(state) });
  await noteUncommitted(source, result);
  // The trigger a real run with these flags releases: a resumed run keeps the one it recorded (./run.ts openState).
  const head = await headCommit(source);
  const trigger = state?.trigger_sha ?? head;
  Object.assign(result, { trigger_sha: trigger, trigger_from: state === undefined ? "head" : "recorded" });
  checks.push({
    check: "trigger",
    status: "ok",
    detail:
      state === undefined
        ? `the source's HEAD ${head} (a fresh run releases it)`
        : `${trigger}, recorded in ${statePath} when this run started: a resumed run releases it` +
          (head === trigger ? "" : `, not the source's HEAD ${head} (to release HEAD, start a fresh --workspace)`),
  });
  const signing = await resolveRunSigningKey({ source, statePath, attestKey: options.attestKey, env });
  if (signing.policyKey !== undefined) {
    checks.push({ check: "attest key", status: "ok", detail: `the release policy names ${signing.policyKey.path} (${signing.policyKey.fingerprint}); ${signing.keyFile ?? ""} is its private half: the attest step will run` });
  }
  const scratch = await makeTempDirectory("hpk-dry-run-");
  try {
    const clone = join(scratch, "source");
    await cloneAtTrigger(source, clone, trigger);
    const recordedIntent = state?.steps["intent"] === undefined ? undefined : IntentRecordSchema.safeParse(state.steps["intent"]).data;
    const remoteMain = await remoteBranchCommit(clone, "origin", "main");
    // A promoted run has moved origin's main itself; before that, the real run needs it at the trigger (intent, promote).
    if (state?.steps["promote"] === undefined && remoteMain !== trigger) {
      if (recordedIntent === undefined) throw new PipelineError("PROMOTE_REMOTE_STATE", await remoteMainAdvice(source, remoteMain, trigger));
      throw new PipelineError(
        "PROMOTE_REMOTE_STATE",
        `origin's main is ${remoteMain ?? "absent"}, not the trigger ${trigger} that the workspace ${ws} recorded when its run started: resumed, the run would go on ` +
          `releasing ${trigger} and refuse at its promote step at the latest (PROMOTE_REMOTE_STATE); fix: release origin's main with a fresh --workspace (this workspace stays on ${trigger})`,
      );
    }
    checks.push({ check: "origin main", status: "ok", detail: state?.steps["promote"] !== undefined ? `promoted already (recorded): origin's main is ${remoteMain ?? "absent"}` : `origin's main is the trigger ${trigger}` });
    const intent = recordedIntent ?? (await decideIntent(clone, env));
    const decided = recordedIntent === undefined ? "" : " (recorded when the run started; a resumed run does not decide it again)";
    if (!intent.released) {
      result.reason = intent.reason;
      checks.push({ check: "intent", status: "ok", detail: `${result.reason}${decided}` });
      return result;
    }
    Object.assign(result, { version: intent.version, previous_version: intent.previous_version, tag: intent.tag, release_class: intent.release_class });
    checks.push({ check: "intent", status: "ok", detail: `${intent.release_class} release v${intent.previous_version} -> ${intent.tag}${recordedIntent === undefined ? `; no ${intent.tag} tag on origin` : decided}` });
    const recorded = (step: string) => state?.steps[step] !== undefined;
    checks.push(
      recorded("materialize")
        ? { check: "materialize", status: "ok", detail: `recorded: the release commit, tag ${intent.tag} and release-source.bundle are re-verified, not made again` }
        : { check: "materialize", status: "would", detail: `commit "chore(release): ${intent.tag}" and tag ${intent.tag} in the workspace clone, then write release-source.bundle` },
    );
    const config = await readReleaseConfig(clone);
    const policy = config.policy;
    result.repository = policy.registryRepository;
    checks.push({ check: "config", status: "ok", detail: `${policy.package} -> ${policy.registryRepository}; gates ${Object.entries(policy.gates).map(([g, c]) => `${g}: ${JSON.stringify(c)}`).join(", ")}` });
    checks.push(
      recorded("manifest")
        ? { check: "gates", status: "ok", detail: "recorded: the gates' evidence, the tarball and the tested manifest are re-verified, not made again" }
        : { check: "gates", status: "would", detail: `run the install command ${JSON.stringify(policy.install)} (hermesPluginKit.install), then the four gates hermetically on the restored source, npm pack once, write the tested manifest${recorded("gates") ? " (the steps not recorded yet)" : ""}` },
    );
    if (options.githubRelease === true) {
      await checkImmutableReleases({ env });
      checks.push({ check: "check-immutable", status: "ok", detail: "immutable releases are enabled" });
    } else {
      checks.push({ check: "check-immutable", status: "skipped", detail: "no GitHub release requested (--github-release)" });
    }
    if (state?.steps["publish"] !== undefined) {
      // Published by this run: a real run re-verifies the recorded steps and writes nothing new.
      checks.push({ check: "tags", status: "ok", detail: `${intent.tag} and ${intent.tag}-receipt were bound by this run (recorded): a real run re-verifies them` });
    } else await registryChecks(options, env, policy, intent.tag, checks);
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  result.would_release = true;
  return result;
}

/** The release intent at the clone's trigger, as the intent step records it. */
async function decideIntent(clone: string, env: Readonly<Record<string, string | undefined>>): Promise<IntentRecord> {
  const intent = await releaseIntent({ dir: clone, environment: { ...process.env, ...env } as NodeJS.ProcessEnv, remote: "origin" });
  if (!("previous_version" in intent)) return { released: false, reason: "disarmed" };
  if (!intent.released || intent.version === null || intent.tag === null || intent.release_class === null) return { released: false, reason: `nothing to release since v${intent.previous_version}` };
  return { released: true, version: intent.version, previous_version: intent.previous_version, tag: intent.tag, release_class: intent.release_class };
}

/** Count the source checkout's uncommitted changes into `result` (`uncommitted`, and a notice): none of them is released. */
async function noteUncommitted(source: string, result: DryRunResult): Promise<void> {
  const lines = await statusPorcelain(source, true);
  if (lines.length === 0) return;
  const untracked = lines.filter((l) => l.startsWith("??")).length;
  result.uncommitted = { files: lines.length, tracked: lines.length - untracked, untracked };
  result.notices.push(
    `${source} has uncommitted changes in ${lines.length} file${lines.length === 1 ? "" : "s"} (${lines.length - untracked} tracked, ${untracked} untracked): ` +
      `they are not released (the run clones the trigger commit from the checkout); commit and push them first to release them`,
  );
}

async function registryChecks(options: RunOptions, env: Readonly<Record<string, string | undefined>>, policy: Awaited<ReturnType<typeof readReleaseConfig>>["policy"], tag: string, checks: DryRunCheck[]): Promise<void> {
  const repository = parseRepository(policy.registryRepository);
  if (repository.kind === "registry") {
    const fromEnv = credentialsFromEnv(repository, env) !== undefined;
    const found = options.credentials ?? (await credentialsFromEnvOrConfig(repository, env, options.registryConfig === undefined ? {} : { registryConfig: options.registryConfig }));
    const unread = options.credentials === undefined ? registryConfigNote(repository, env, options.registryConfig) : undefined;
    const where = options.credentials !== undefined ? "given" : fromEnv ? `from the environment${unread === undefined ? "" : ` (${unread.replace(/^note: /, "")})`}` : found !== undefined ? "from the Docker client config" : "none (anonymous)";
    checks.push({ check: "credentials", status: "ok", detail: `registry credentials for ${repository.registry}: ${where}` });
    options = { ...options, ...(found === undefined ? {} : { credentials: found }) };
  } else if (options.registryConfig !== undefined) {
    // A local store reads no credentials: a --registry-config given for it is said to be unread, as fetch says.
    checks.push({ check: "credentials", status: "skipped", detail: (registryConfigNote(repository, env, options.registryConfig) ?? "").replace(/^note: /, "") });
  }
  try {
    const evidence = await requirePrivateForRead(repository, { env, plainHttp: options.plainHttp === true });
    checks.push({ check: "check-private", status: "ok", detail: `private: ${evidence.kind}` });
  } catch (error) {
    if (!hasCode(error, "PRIVACY_ABSENT")) throw error;
    checks.push({ check: "check-private", status: "would", detail: `${policy.registryRepository} is absent: the real run bootstraps it, then proves it private` });
    checks.push({ check: "tags", status: "ok", detail: `the store is empty: ${tag} and ${tag}-receipt are free` });
    return;
  }
  const access = resolveAccess({ repository: policy.registryRepository, plainHttp: options.plainHttp === true, env, ...(options.credentials === undefined ? {} : { credentials: options.credentials }) }, policy);
  const target = await openWriteTarget(access);
  for (const name of [tag, `${tag}-receipt`]) {
    const digest = await resolveTag(target, name);
    if (digest !== null) throw new PipelineError("RELEASE_TAG_CONFLICT", `tag ${name} already names ${digest} in ${policy.registryRepository}; a release never moves a tag (publish the next version instead)`);
  }
  checks.push({ check: "tags", status: "ok", detail: `${tag} and ${tag}-receipt are free in ${policy.registryRepository}` });
  checks.push({ check: "stage, promote, publish", status: "would", detail: `upload the bundle, push main + ${tag} to origin atomically, bind ${tag} and ${tag}-receipt` });
}
