/**
 * CLI wiring of the release steps up to the tested bytes (logic lives in
 * `release/`): `attach-trigger`, `intent`, `materialize`, `restore`, `build`, `check-dist`,
 * `gate`, `create-manifest`, `verify-manifest`, `checksums`.
 *
 * Each step prints exactly one JSON object on stdout: its result on success
 * (exit 0), or `{"ok":false,"code":"<CODE>","message":"..."}` on failure
 * (exit 1, with the error line on stderr; usage errors exit 2). Gate command
 * output and semantic-release logs (`--verbose`) go to stderr.
 *
 * The step modules (semantic-release, publint, git) load inside each action.
 */
import type { Command } from "commander";
import { positiveIntegerFlag, runIdFlag } from "../flag-values.js";
import { printJson, printNote, runAction, UsageError } from "../output.js";

interface IntentFlags {
  dir?: string;
  package?: string;
  remote: string;
  remoteCheck: boolean;
  verbose?: boolean;
}

function remoteOf(flags: { remote: string; remoteCheck: boolean }): string | false {
  return flags.remoteCheck ? flags.remote : false;
}

function positiveSeconds(value: string | undefined): number | undefined {
  const seconds = positiveIntegerFlag("--timeout-seconds", value);
  return seconds === undefined ? undefined : seconds * 1000;
}

/**
 * `--expected-sha`: checked before anything else, armed or not: a Git commit
 * id, 40 lowercase hex (SHA-1) or 64 (SHA-256 repositories).
 * @throws UsageError (exit 2) for anything else.
 */
function expectedShaOf(value: string): string {
  if (/^(?:[0-9a-f]{40}|[0-9a-f]{64})$/.test(value)) return value;
  throw new UsageError(`--expected-sha must be a Git commit id (40 lowercase hex characters, or 64 in a SHA-256 repository), found ${JSON.stringify(value)}; pass the trigger commit, e.g. --expected-sha "$(git rev-parse HEAD)"`);
}

function step(action: () => Promise<object>): () => Promise<void> {
  return async () => {
    process.exitCode = await runAction(true, async () => {
      printJson(await action());
    });
  };
}

/** The flags `intent` and `materialize` share. */
function withIntentFlags(cmd: Command): Command {
  return (
    cmd
      .option("--dir <dir>", "the release checkout (default: current directory)")
      .option("--package <name>", "configured package name package.json must carry")
      .option("--remote <name>", "remote checked for an existing v<next> tag", "origin")
      .option("--no-remote-check", "skip the remote tag check (local tags are still checked)")
      .option("--verbose", "copy semantic-release's log to stderr")
  );
}

/** Register the build-half steps on the `release` command. */
export function registerReleaseBuildSteps(release: Command): void {
  registerSourceSteps(release);
  registerBuildSteps(release);
  registerManifestSteps(release);
}

/** `attach-trigger`, `intent`, `materialize`, `restore`: from the trigger commit to the restored release checkout. */
function registerSourceSteps(release: Command): void {
  release
    .command("attach-trigger")
    .description("Check GITHUB_REF and HEAD, then force-create the local release branch at the trigger commit (CI checkouts are detached).")
    .requiredOption("--expected-sha <sha>", "the trigger commit HEAD must equal")
    .option("--branch <name>", "release branch", "main")
    .option("--dir <dir>", "the checkout (default: current directory)")
    .action((flags: { expectedSha: string; branch: string; dir?: string }) =>
      step(async () => (await import("../../../release/materialize.js")).attachTrigger({ expectedSha: expectedShaOf(flags.expectedSha), branch: flags.branch, ...(flags.dir !== undefined ? { dir: flags.dir } : {}) }))(),
    );

  withIntentFlags(release.command("intent"))
    .description("Decide the next version: baseline, strict conventional history, semantic-release dry-run. Disarmed unless SEMANTIC_RELEASE_ENABLED=true.")
    .action((flags: IntentFlags) =>
      step(async () => {
        const { disarmedReason, releaseIntent } = await import("../../../release/intent.js");
        const result = await releaseIntent({
          ...(flags.dir !== undefined ? { dir: flags.dir } : {}),
          ...(flags.package !== undefined ? { expectedPackage: flags.package } : {}),
          remote: remoteOf(flags),
          ...(flags.verbose === true ? { log: process.stderr } : {}),
        });
        // stdout stays the documented JSON; the reason goes to stderr.
        if ("disarmed" in result) printNote(`hermes-plugin-kit: release intent ${disarmedReason(process.env["SEMANTIC_RELEASE_ENABLED"])}`);
        return result;
      })(),
    );

  withIntentFlags(release.command("materialize"))
    .description("Commit chore(release): v<version> locally, tag it, write release-source.bundle and release-source.sha256. Nothing is pushed.")
    .requiredOption("--expected-sha <sha>", "the trigger commit HEAD must equal")
    .option("--output-dir <dir>", "directory for release-source.bundle and release-source.sha256 (default: current directory)")
    .action((flags: IntentFlags & { expectedSha: string; outputDir?: string }) =>
      step(async () =>
        (await import("../../../release/materialize.js")).materializeRelease({
          expectedSha: expectedShaOf(flags.expectedSha),
          ...(flags.dir !== undefined ? { dir: flags.dir } : {}),
          ...(flags.outputDir !== undefined ? { outputDir: flags.outputDir } : {}),
          ...(flags.package !== undefined ? { expectedPackage: flags.package } : {}),
          remote: remoteOf(flags),
          ...(flags.verbose === true ? { log: process.stderr } : {}),
        }),
      )(),
    );

  release
    .command("restore")
    .description("Check release-source.sha256, unbundle the release source into a fresh checkout and re-prove its identity.")
    .requiredOption("--bundle <file>", "release-source.bundle")
    .requiredOption("--expected-sha <sha>", "the trigger commit (parent of the release commit)")
    .option("--checksum-file <file>", "checksum file (default: release-source.sha256 next to the bundle)")
    .option("--dir <dir>", "checkout to create, absent or empty", "release-source")
    .action((flags: { bundle: string; expectedSha: string; checksumFile?: string; dir: string }) =>
      step(async () => (await import("../../../release/restore.js")).restoreSource({ bundle: flags.bundle, expectedSha: expectedShaOf(flags.expectedSha), dir: flags.dir, ...(flags.checksumFile !== undefined ? { checksumFile: flags.checksumFile } : {}) }))(),
    );
}

/** `build`, `check-dist`, `gate`: the one npm pack and the test gates. */
function registerBuildSteps(release: Command): void {
  release
    .command("build")
    .description("npm pack exactly once into an empty artifact directory, then check-dist.")
    .option("--dir <dir>", "the package checkout (default: current directory)")
    .option("--artifact-dir <dir>", "empty or absent directory receiving the tarball", "dist")
    .option("--release-version <version>", "version the tarball must carry (default: package.json version)")
    .option("--expected-sha <sha>", "trigger commit: prove the release identity facts before and after packing")
    .option("--pass-env <name...>", "also pass these environment variables to npm pack and the package's pack scripts (otherwise an allow-list; HOME keeps your HOME instead of a private empty one); pipeline credentials are refused")
    .action((flags: { dir?: string; artifactDir: string; releaseVersion?: string; expectedSha?: string; passEnv?: string[] }) =>
      step(async () =>
        (await import("../../../release/build.js")).buildRelease({
          artifactDir: flags.artifactDir,
          ...(flags.passEnv !== undefined ? { passEnv: flags.passEnv } : {}),
          ...(flags.dir !== undefined ? { dir: flags.dir } : {}),
          ...(flags.releaseVersion !== undefined ? { version: flags.releaseVersion } : {}),
          ...(flags.expectedSha !== undefined ? { expectedSha: expectedShaOf(flags.expectedSha) } : {}),
        }),
      )(),
    );

  release
    .command("check-dist")
    .description("Check the artifact directory: exactly <name>-<version>.tgz, regular, allowed files only, publint clean.")
    .option("--dir <dir>", "the package checkout whose package.json names the package (default: current directory)")
    .option("--artifact-dir <dir>", "artifact directory", "dist")
    .option("--release-version <version>", "version the tarball must carry (default: package.json version)")
    .action((flags: { dir?: string; artifactDir: string; releaseVersion?: string }) =>
      step(async () => {
        const { readReleaseConfig } = await import("../../../release/config.js");
        const { checkDist } = await import("../../../release/build.js");
        const config = await readReleaseConfig(flags.dir ?? process.cwd());
        return checkDist(config, flags.artifactDir, flags.releaseVersion ?? config.version);
      })(),
    );

  release
    .command("gate")
    .description("Run a test gate's declared command (bash -c <package.json hermesPluginKit.gates.<gate>>) and write <evidence-dir>/<gate>.json.")
    .argument("<gate>", "unit | public_contract | host_contract | build_metadata")
    .option("--dir <dir>", "the release checkout (default: current directory)")
    .option("--evidence-dir <dir>", "directory of evidence files", "evidence")
    .option("--timeout-seconds <n>", "kill the command after this many seconds (default 3600)")
    .option("--expected-sha <sha>", "trigger commit: prove the release identity facts before and after the command")
    .option("--pass-env <name...>", "also pass these environment variables to the command (its environment is otherwise an allow-list: PATH, HOME, temp, locale, proxies, CI, terminal; HOME keeps your HOME instead of a private empty one); pipeline credentials are refused")
    .action((gate: string, flags: { dir?: string; evidenceDir: string; timeoutSeconds?: string; expectedSha?: string; passEnv?: string[] }) =>
      step(async () => {
        const timeoutMs = positiveSeconds(flags.timeoutSeconds);
        const { runGate } = await import("../../../release/gate.js");
        return runGate({
          gate,
          evidenceDir: flags.evidenceDir,
          ...(flags.dir !== undefined ? { dir: flags.dir } : {}),
          ...(timeoutMs !== undefined ? { timeoutMs } : {}),
          ...(flags.expectedSha !== undefined ? { expectedSha: expectedShaOf(flags.expectedSha) } : {}),
          ...(flags.passEnv !== undefined ? { passEnv: flags.passEnv } : {}),
        });
      })(),
    );
}

/** `create-manifest`, `verify-manifest`, `checksums`: the tested manifest and the payload checksums. */
function registerManifestSteps(release: Command): void {
  release
    .command("create-manifest")
    .description("Assemble release-manifest.json from the gate evidence and the tarball; validated before it is written.")
    .requiredOption("--previous-version <version>", "last released version")
    .option("--version <version>", "version being released")
    .option("--release-version <version>", "version being released (same as --version)")
    .requiredOption("--tag <tag>", "v<version>")
    .requiredOption("--source-sha <sha>", "the release commit")
    .requiredOption("--run-id <id>", "workflow run id")
    .requiredOption("--run-attempt <n>", "workflow run attempt (>= 1)")
    .option("--artifact-dir <dir>", "directory holding exactly the tarball", "dist")
    .option("--evidence-dir <dir>", "directory of gate evidence files", "evidence")
    .option("--mcp-sdk-version <version>", "MCP SDK version exercised by host_contract (must agree with its evidence)")
    .option("--dir <dir>", "the release checkout (package.json gives the policy; default: current directory)")
    .option("--output <file>", "manifest path", "release-manifest.json")
    .action(
      (flags: {
        previousVersion: string;
        version?: string;
        releaseVersion?: string;
        tag: string;
        sourceSha: string;
        runId: string;
        runAttempt: string;
        artifactDir: string;
        evidenceDir: string;
        mcpSdkVersion?: string;
        dir?: string;
        output: string;
      }) =>
        step(async () => {
          const { createManifestStep } = await import("../../../release/manifest-steps.js");
          const version = flags.version ?? flags.releaseVersion;
          if (version === undefined) throw new UsageError("create-manifest needs --version <version> (or --release-version)");
          if (flags.version !== undefined && flags.releaseVersion !== undefined && flags.version !== flags.releaseVersion) {
            throw new UsageError("--version and --release-version disagree");
          }
          // Structured values are usage errors (exit 2) before the checkout is read.
          const runId = runIdFlag(flags.runId) as string;
          const runAttempt = positiveIntegerFlag("--run-attempt", flags.runAttempt) as number;
          return createManifestStep({
            previousVersion: flags.previousVersion,
            version,
            tag: flags.tag,
            sourceSha: flags.sourceSha,
            runId,
            runAttempt,
            artifactDir: flags.artifactDir,
            evidenceDir: flags.evidenceDir,
            output: flags.output,
            ...(flags.mcpSdkVersion !== undefined ? { mcpSdkVersion: flags.mcpSdkVersion } : {}),
            ...(flags.dir !== undefined ? { dir: flags.dir } : {}),
          });
        })(),
    );

  release
    .command("verify-manifest")
    .description("Re-read release-manifest.json strictly and check it against the tarball bytes.")
    .option("--manifest <file>", "manifest path", "release-manifest.json")
    .option("--artifact-dir <dir>", "artifact directory", "dist")
    .option("--dir <dir>", "the release checkout (package.json gives the policy; default: current directory)")
    .action((flags: { manifest: string; artifactDir: string; dir?: string }) =>
      step(async () => (await import("../../../release/manifest-steps.js")).verifyManifestStep({ manifest: flags.manifest, artifactDir: flags.artifactDir, ...(flags.dir !== undefined ? { dir: flags.dir } : {}) }))(),
    );

  release
    .command("checksums")
    .description("Verify the manifest against the tarball, then write release-payload.sha256 over bundle, manifest and tarball.")
    .option("--bundle <file>", "source bundle", "release-source.bundle")
    .option("--manifest <file>", "manifest path", "release-manifest.json")
    .option("--artifact-dir <dir>", "artifact directory", "dist")
    .option("--output <file>", "checksum file", "release-payload.sha256")
    .option("--dir <dir>", "the release checkout (package.json gives the policy; default: current directory)")
    .action((flags: { bundle: string; manifest: string; artifactDir: string; output: string; dir?: string }) =>
      step(async () =>
        (await import("../../../release/manifest-steps.js")).checksumsStep({ bundle: flags.bundle, manifest: flags.manifest, artifactDir: flags.artifactDir, output: flags.output, ...(flags.dir !== undefined ? { dir: flags.dir } : {}) }),
      )(),
    );
}
