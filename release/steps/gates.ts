/**
 * Step `gates` of `release run` (docs/release-run.md): on the restored release
 * commit, the policy's install command (`hermesPluginKit.install`, default
 * `npm ci`) runs like a gate, hermetically (the checkout's
 * `node_modules/.bin` only on PATH, no credential variable, a private HOME of
 * its own with the maintainer's npm cache: `../command-env.ts` `gateHome`),
 * then the test gates unit, public_contract and host_contract (`../gate.ts`),
 * each on its own progress line. Resume re-reads each gate's evidence and
 * checks it names the release commit.
 */
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { commandEnvironment, gateHome } from "../command-env.js";
import { readReleaseConfig } from "../config.js";
import { PipelineError } from "../errors.js";
import { evidenceFile, runGate } from "../gate.js";
import { git, runProcess } from "../git.js";
import { readGateEvidence } from "../manifest-steps.js";
import { proveReleaseIdentity } from "../materialize.js";
import { stepDiverged, type PipelineStep } from "../pipeline.js";
import type { RunContext } from "../run-context.js";
import { releasedIntent } from "./intent.js";
import { releaseSha } from "./materialize.js";
import { makeDirectory } from "../../src/contract/directory.js";

const TEST_GATES_BEFORE_BUILD = ["unit", "public_contract", "host_contract"] as const;

/** Record of the gates step: the gates that passed, in order. */
export const GatesRecordSchema = z.object({ gates: z.array(z.enum(TEST_GATES_BEFORE_BUILD)) }).strict();

/** See {@link GatesRecordSchema}. */
export type GatesRecord = z.infer<typeof GatesRecordSchema>;

/** The progress label of one gate (with its log file when gate output goes to logs). */
export function gateLabel(ctx: RunContext, gate: string): string {
  return `gate ${gate}${ctx.options.gateOutput === "log" ? ` (log: ${join(ctx.paths.evidence, `${gate}.log`)})` : ""}`;
}

/** Run one gate on the restored release commit, as a part of the running step. @throws ReleaseStepError `RELEASE_GATE_*`. */
export async function runRunGate(ctx: RunContext, gate: "unit" | "public_contract" | "host_contract" | "build_metadata"): Promise<void> {
  await ctx.part(gateLabel(ctx, gate), () =>
    runGate({ gate, dir: ctx.paths.restore, evidenceDir: ctx.paths.evidence, output: ctx.options.gateOutput ?? "stderr", passEnv: ctx.options.gatePassEnv ?? [], env: commandSource(ctx), ...(ctx.options.signal !== undefined ? { signal: ctx.options.signal } : {}) }),
    { kind: "gate", gate },
  );
}

/** @throws PipelineError `RUN_INSTALL_FAILED`, `RUN_STEP_DIVERGED`; ReleaseStepError `RELEASE_GATE_*`. */
export const gatesStep: PipelineStep<RunContext, GatesRecord, "gates"> = Object.freeze({
  name: "gates" as const,
  record: GatesRecordSchema,
  async run(ctx: RunContext): Promise<GatesRecord> {
    const { paths } = ctx;
    await rm(paths.evidence, { recursive: true, force: true });
    // A redo after a crash or an interruption starts from the restored tree: drop whatever an earlier
    // install or gate left (an interrupted install is redone, never reported as failed).
    await git(["clean", "-ffdxq"], { cwd: paths.restore });
    const install = (await readReleaseConfig(paths.restore)).policy.install;
    await ctx.part(`install: ${install}`, () => runInstallCommand(ctx, install), { kind: "install", command: install });
    for (const gate of TEST_GATES_BEFORE_BUILD) await runRunGate(ctx, gate);
    await proveReleaseIdentity(paths.restore, { triggerSha: ctx.state.trigger_sha, version: releasedIntent(ctx).version, releaseSha: releaseSha(ctx) });
    return { gates: [...TEST_GATES_BEFORE_BUILD] };
  },
  async verify(ctx: RunContext): Promise<void> {
    const released = releaseSha(ctx);
    for (const gate of TEST_GATES_BEFORE_BUILD) {
      const evidence = await readGateEvidence(evidenceFile(ctx.paths.evidence, gate), gate);
      if (evidence.source_sha !== released) stepDiverged("gates", `evidence of ${gate} names ${evidence.source_sha}`);
    }
  },
});

/**
 * Where the install, gate and `npm pack` commands' environments come from: the run's `env` option over
 * `process.env` (a library caller's environment reaches each; each then takes only its allow-list and, but
 * `npm pack`, `--pass-env`).
 */
export function commandSource(ctx: RunContext): Readonly<Record<string, string | undefined>> {
  return { ...process.env, ...ctx.env };
}

/**
 * The policy's install command in the restored checkout: what makes it
 * runnable, hermetically (no caller's `node_modules/.bin` on its PATH, no
 * credential variable; `../command-env.ts`), with a private HOME of its own as
 * a gate has (`gateHome`: the maintainer's `~/.npmrc`, `~/.docker`, `~/.ssh`
 * are not where its scripts look; npm keeps the maintainer's cache), removed
 * afterwards; `--pass-env HOME` keeps the real HOME.
 * @throws PipelineError `RUN_INSTALL_FAILED` naming the command, where it came from, and its log;
 *   InterruptedError `INTERRUPTED` when the run's signal aborted it (the command's process group is stopped);
 *   IoError `IO_*` when no private HOME can be made in the temporary directory.
 */
async function runInstallCommand(ctx: RunContext, install: string): Promise<void> {
  const { paths, options } = ctx;
  await makeDirectory(paths.evidence, { purpose: "release workspace (--workspace)" });
  const logFile = options.gateOutput === "log" ? join(paths.evidence, "install.log") : undefined;
  const passEnv = options.gatePassEnv ?? [];
  const source = commandSource(ctx);
  const home = await gateHome(passEnv, source);
  let installed: Awaited<ReturnType<typeof runProcess>>;
  try {
    installed = await runProcess("bash", ["--norc", "--noprofile", "-c", install], {
      cwd: paths.restore,
      env: commandEnvironment(paths.restore, passEnv, source, home.set, home.npmBin),
      timeoutMs: 15 * 60_000,
      allowFailure: true,
      output: logFile === undefined ? "stderr" : { file: logFile },
      label: "install command",
      // With the run's signal, its own process group: an interrupted run stops npm and whatever it started
      // (no orphan in restore/). Without one it stays in ours, so a terminal's Ctrl-C still reaches it.
      ...(options.signal !== undefined ? { signal: options.signal, processGroup: true } : {}),
    });
  } finally {
    await home.remove();
  }
  if (installed.code !== 0) {
    throw new PipelineError(
      "RUN_INSTALL_FAILED",
      `the install command ${JSON.stringify(install)} (hermesPluginKit.install of the released package.json) exited ${installed.code ?? "by signal"} in ${paths.restore}${logFile === undefined ? "" : `; output in ${logFile}`}; ` +
        `run it in your checkout to see why, or declare another command in package.json hermesPluginKit.install (e.g. "npm install --no-save" when npm ci refuses a lock your registry cannot complete)` +
        (home.dir === undefined ? "; " : `; it ran with a private, empty HOME (an install that needs your ~/.npmrc, e.g. the token of a private npm registry, gets the real HOME with --pass-env HOME); `) +
        `after a fix you commit and push, rerun with a new --workspace (this one resumes the release it began, from the commit it recorded)`,
    );
  }
}
