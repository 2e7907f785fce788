/**
 * CLI wiring of the publishing half of `hermes-plugin-kit release <step>`
 * (logic lives in `release/`), in pipeline order: `check-private
 * [--bootstrap]`, `check-immutable`, `stage`, `promote`, `publish`,
 * `github-release`, and `run` (every step of both halves over a resumable
 * workspace). Every step prints one JSON object on stdout and can be rerun;
 * failures exit 1 with a coded message on stderr and the JSON error object
 * on stdout, exit 2 for usage errors. Tokens come from the
 * environment only (`GH_TOKEN`, `SOURCE_PROMOTION_TOKEN`,
 * `REGISTRY_USERNAME`/`REGISTRY_PASSWORD`), never from flags.
 *
 * One `register*` function per step; `registerReleasePublishSteps` lists them
 * in pipeline order. The step modules (Octokit, the registry client, git)
 * load inside each action.
 */
import type { Command } from "commander";
import { addRegistryOptions } from "../registry-options.js";
import type { InterruptSignal } from "../../contract/errors.js";
import type { InterruptCut } from "../interrupt.js";
import type { ReleasePolicy } from "../../contract/policy.js";
import type { RegistryCredentials } from "../../oci/registry-auth.js";
import { positiveIntegerFlag, runIdFlag } from "../flag-values.js";
import { CHUNK_SIZE_HELP, currentVerbosity, parseChunkSizeFlag, printJson, printNextSteps, printNote, progressStream, runAction, transferProgress, UsageError } from "../output.js";

/** The package.json of the current directory, or undefined when absent or unreadable (read with a 1 MiB bound: a FIFO is not waited on). */
async function cwdPackageJson(): Promise<Record<string, unknown> | undefined> {
  const { readPolicyFile } = await import("../../contract/policy.js");
  try {
    return await readPolicyFile("package.json", true);
  } catch {
    return undefined;
  }
}

/** The flags every publishing step takes to find its policy. */
export interface PolicyFlags {
  repository?: string;
  dir?: string;
  package?: string;
}

/**
 * Credentials for the policy's repository: the environment's (`REGISTRY_*`, `GH_TOKEN` for
 * ghcr.io), else the Docker client config's (`--registry-config`, `$DOCKER_CONFIG`, `~/.docker/config.json`).
 */
export async function registryCredentials(policy: ReleasePolicy, registryConfig: string | undefined): Promise<{ credentials?: RegistryCredentials }> {
  const { parseRepository } = await import("../../contract/reference.js");
  const { credentialsFromEnvOrConfig } = await import("../../fetch/fetch.js");
  // A --registry-config that the environment's credentials override is said on stderr (src/fetch/fetch.ts registryConfigNote).
  const credentials = await credentialsFromEnvOrConfig(parseRepository(policy.registryRepository), process.env, { ...(registryConfig === undefined ? {} : { registryConfig }), onNote: (line) => printNote(`hermes-plugin-kit: ${line}`) });
  return credentials === undefined ? {} : { credentials };
}

/**
 * The release policy of a publishing step (producers read their own
 * checkout): `<--dir>/package.json`, else `./package.json` when it is the
 * package being released, else a policy from `--package` + `--repository`
 * alone (no gate pins: the tested manifest's own evidence is verified).
 * `--repository` always names the repository. `needsPackage: false`
 * (check-private) accepts `--repository` alone.
 */
export async function publishPolicy(flags: PolicyFlags, needsPackage = true): Promise<ReleasePolicy> {
  const { policyFromPackageJson, readPolicyFile } = await import("../../contract/policy.js");
  const { isNpmPackageName } = await import("../../contract/grammar.js");
  if (flags.dir !== undefined) {
    const { join } = await import("node:path");
    const path = join(flags.dir, "package.json");
    return policyFromPackageJson(await readPolicyFile(path), flags.repository, path);
  }
  const pkg = await cwdPackageJson();
  if (pkg !== undefined && (flags.package === undefined || pkg["name"] === flags.package)) {
    return policyFromPackageJson(pkg, flags.repository, "./package.json");
  }
  if (!needsPackage && flags.package === undefined && flags.repository !== undefined) {
    // check-private proves a property of the repository alone.
    return { package: "(any package)", registryRepository: flags.repository, gates: {}, sources: { repository: "--repository" } };
  }
  if (flags.package === undefined || flags.repository === undefined) {
    throw new UsageError(
      pkg === undefined
        ? "no package.json here: pass --dir <checkout>, or --package <name> with --repository <repository>"
        : "pass --repository with --package when releasing a package other than ./package.json's",
    );
  }
  if (!isNpmPackageName(flags.package)) throw new UsageError(`--package must be an npm package name, found ${JSON.stringify(flags.package)}`);
  return { package: flags.package, registryRepository: flags.repository, gates: {}, sources: { package: "--package", repository: "--repository" } };
}

interface CheckPrivateFlags extends PolicyFlags {
  registryConfig?: string;
  json?: boolean;
  repository?: string;
  bootstrap?: boolean;
  plainHttp?: boolean;
  chunkSize?: string;
}

/** `release check-private [--repository R] [--bootstrap] [--plain-http]` (docs/release-publish.md, "The privacy gate"). */
function registerCheckPrivate(release: Command): void {
  addRegistryOptions(release.command("check-private"))
    .description("Require positive evidence that the private repository is private (GitHub Packages API + refused anonymous read; layout: 0700, own uid).")
    .option("--repository <repository>", "host[:port]/path or oci-layout:<dir> (default: hermesPluginKit.repository of the checkout's package.json)")
    .option("--bootstrap", "when the package is absent, push the zero-layer bootstrap artifact to private-bootstrap (layout: create 0700), then re-check")
    .option("--chunk-size <size>", CHUNK_SIZE_HELP)
    .option("--json", "a release step always prints one JSON object on stdout, failures included; --json also keeps the error line off stderr")
    .option("--dir <checkout>", "the releasing package's checkout whose package.json gives the policy (default: the current directory)")
    .option("--package <name>", "the package being released, outside a checkout (with --repository); another package's ./package.json is ignored")
    .action(async (flags: CheckPrivateFlags) => {
      process.exitCode = await runAction(true, async () => {
        const policy = await publishPolicy(flags, false);
        const chunkSize = parseChunkSizeFlag(flags.chunkSize);
        const { checkPrivate } = await import("../../../release/check-private.js");
        const evidence = await checkPrivate({
          ...(await registryCredentials(policy, flags.registryConfig)),
          repository: policy.registryRepository,
          policy,
          bootstrap: flags.bootstrap === true,
          plainHttp: flags.plainHttp === true,
          ...(chunkSize === undefined ? {} : { chunkSize }),
        });
        printJson(evidence);
      });
    });
}

/** `release check-immutable` (docs/release-publish.md, "Workflows"). */
function registerCheckImmutable(release: Command): void {
  release
    .command("check-immutable")
    .description("Require immutable releases enabled for GITHUB_REPOSITORY (GH_TOKEN with Administration read; fails closed).")
    .option("--json", "a release step always prints one JSON object on stdout, failures included; --json also keeps the error line off stderr")
    .action(async (flags: { json?: boolean }) => {
      process.exitCode = await runAction(true, async () => {
        const { checkImmutableReleases } = await import("../../../release/check-immutable.js");
        printJson(await checkImmutableReleases());
      });
    });
}

interface GitHubReleaseFlags {
  json?: boolean;
  releaseVersion: string;
  releaseSha: string;
  bundleReference?: string;
  receiptReference?: string;
  references?: string;
  packageName?: string;
  gitRemote?: string;
}

async function referencesFromFlags(flags: GitHubReleaseFlags): Promise<{ bundle: string; receipt: string }> {
  if (flags.references !== undefined) {
    if (flags.bundleReference !== undefined || flags.receiptReference !== undefined) {
      throw new UsageError("give either --references or --bundle-reference with --receipt-reference, not both");
    }
    // A regular file of at most 1 MiB (RELEASE_JSON_UNREADABLE / RELEASE_JSON_TOO_LARGE): a FIFO or device is refused, not read.
    const { readReleaseJsonFile } = await import("../../contract/release-json-file.js");
    const document = await readReleaseJsonFile(flags.references);
    const bundle = document["bundle_reference"];
    const receipt = document["receipt_reference"];
    if (typeof bundle !== "string" || typeof receipt !== "string" || Object.keys(document).length !== 2) {
      throw new UsageError(`${flags.references} must hold exactly {"bundle_reference", "receipt_reference"}`);
    }
    return { bundle, receipt };
  }
  if (flags.bundleReference === undefined || flags.receiptReference === undefined) {
    throw new UsageError("--bundle-reference and --receipt-reference (or --references) are required");
  }
  return { bundle: flags.bundleReference, receipt: flags.receiptReference };
}

/** `release github-release --release-version V --release-sha S (--references F | --bundle-reference R --receipt-reference R)` (docs/release-publish.md, "Commands"). */
function registerGitHubRelease(release: Command): void {
  release
    .command("github-release")
    .description("Create (or on resume only verify) the immutable, metadata-only GitHub Release for tag v<V> at the release SHA.")
    .requiredOption("--release-version <version>", "the released version V (tag v<V>; not --version, which the program owns)")
    .requiredOption("--release-sha <sha>", "the release commit the remote tag must point at")
    .option("--bundle-reference <reference>", "digest-pinned bundle reference")
    .option("--receipt-reference <reference>", "digest-pinned receipt reference")
    .option("--references <file>", "the references JSON written by `release publish`")
    .option("--package-name <name>", "package name in the release title (default: ./package.json name; required outside a checkout)")
    .option("--git-remote <remote>", "read the remote tag with `git ls-remote <remote>` instead of the GitHub API")
    .option("--json", "a release step always prints one JSON object on stdout, failures included; --json also keeps the error line off stderr")
    .action(async (flags: GitHubReleaseFlags) => {
      process.exitCode = await runAction(true, async () => {
        const { bundle, receipt } = await referencesFromFlags(flags);
        const pkgName = (await cwdPackageJson())?.["name"];
        const { createGitHubRelease } = await import("../../../release/github-release.js");
        const { remoteTagCommit } = await import("../../../release/git.js");
        const packageName = flags.packageName ?? (typeof pkgName === "string" ? pkgName : undefined);
        if (packageName === undefined) throw new UsageError("no package.json here: pass --package-name <name> (the released package's name, used in the release title)");
        const remote = flags.gitRemote;
        const result = await createGitHubRelease({
          version: flags.releaseVersion,
          releaseSha: flags.releaseSha,
          bundleReference: bundle,
          receiptReference: receipt,
          packageName,
          ...(remote === undefined ? {} : { remoteTagCommit: () => remoteTagCommit(process.cwd(), remote, `v${flags.releaseVersion}`) }),
        });
        printJson(result);
      });
    });
}

interface StageFlags extends PolicyFlags {
  registryConfig?: string;
  json?: boolean;
  repository?: string;
  tag: string;
  manifest: string;
  artifactDir: string;
  sourceBundle: string;
  payloadChecksums: string;
  output?: string;
  plainHttp?: boolean;
  chunkSize?: string;
}

/** `release stage --tag candidate-<run_id>-<sha> --manifest M --artifact-dir D --source-bundle B --payload-checksums C [--output F]` (docs/release-run.md, "`release stage`"). */
function registerStage(release: Command): void {
  addRegistryOptions(release.command("stage"))
    .description("Stage the tested bytes at the candidate tag: verify inputs, deterministic layout, privacy gate with bootstrap, upload, re-download by digest, byte compare.")
    .requiredOption("--tag <tag>", "candidate-<run_id>-<source_sha> of the tested manifest")
    .requiredOption("--manifest <file>", "release-manifest.json")
    .requiredOption("--artifact-dir <dir>", "the dist directory (every entry is staged as dist/<entry>)")
    .requiredOption("--source-bundle <file>", "release-source.bundle")
    .requiredOption("--payload-checksums <file>", "release-payload.sha256")
    .option("--output <file>", 'write {"bundle_reference": ...} here, last')
    .option("--repository <repository>", "host[:port]/path or oci-layout:<dir> (default: hermesPluginKit.repository of the checkout's package.json)")
    .option("--chunk-size <size>", CHUNK_SIZE_HELP)
    .option("--json", "a release step always prints one JSON object on stdout, failures included; --json also keeps the error line off stderr")
    .option("--dir <checkout>", "the releasing package's checkout whose package.json gives the policy (default: the current directory)")
    .option("--package <name>", "the package being released, outside a checkout (with --repository); another package's ./package.json is ignored")
    .action(async (flags: StageFlags) => {
      process.exitCode = await runAction(true, async () => {
        const policy = await publishPolicy(flags);
        const chunkSize = parseChunkSizeFlag(flags.chunkSize);
        const { stageRelease } = await import("../../../release/stage.js");
        printJson(
          await stageRelease({
            ...(chunkSize === undefined ? {} : { chunkSize }),
            ...transferProgress(),
            ...(await registryCredentials(policy, flags.registryConfig)),
            policy,
            repository: policy.registryRepository,
            tag: flags.tag,
            manifest: flags.manifest,
            artifactDir: flags.artifactDir,
            sourceBundle: flags.sourceBundle,
            payloadChecksums: flags.payloadChecksums,
            plainHttp: flags.plainHttp === true,
            ...(flags.output === undefined ? {} : { output: flags.output }),
          }),
        );
      });
    });
}

interface PromoteFlags extends PolicyFlags {
  registryConfig?: string;
  json?: boolean;
  reference: string;
  repository?: string;
  remote?: string;
  branch?: string;
  plainHttp?: boolean;
}

/** `release promote --reference R [--remote origin] [--branch main]` (docs/release-run.md, "`release promote`"; token from SOURCE_PROMOTION_TOKEN). */
function registerPromote(release: Command): void {
  addRegistryOptions(release.command("promote"))
    .description("Fetch the staged bundle by digest, verify it, and push main + v<V> atomically to the remote (resumable; SOURCE_PROMOTION_TOKEN via a credential helper).")
    .requiredOption("--reference <reference>", "the staged bundle reference <repository>@sha256:<64 hex>")
    .option("--remote <name>", "remote of the current checkout to promote", "origin")
    .option("--branch <name>", "branch to promote", "main")
    .option("--repository <repository>", "host[:port]/path or oci-layout:<dir> (default: hermesPluginKit.repository of the checkout's package.json)")
    .option("--json", "a release step always prints one JSON object on stdout, failures included; --json also keeps the error line off stderr")
    .option("--dir <checkout>", "the releasing package's checkout whose package.json gives the policy (default: the current directory)")
    .option("--package <name>", "the package being released, outside a checkout (with --repository); another package's ./package.json is ignored")
    .action(async (flags: PromoteFlags) => {
      process.exitCode = await runAction(true, async () => {
        const policy = await publishPolicy(flags);
        const { promoteRelease } = await import("../../../release/promote.js");
        printJson(
          await promoteRelease({
            ...(await registryCredentials(policy, flags.registryConfig)),
            policy,
            repository: policy.registryRepository,
            reference: flags.reference,
            repoDir: flags.dir ?? process.cwd(),
            remote: flags.remote ?? "origin",
            branch: flags.branch ?? "main",
            plainHttp: flags.plainHttp === true,
            // Notes (a failed push being re-read) follow the step lines: silenced by --quiet.
            progress: progressStream(),
          }),
        );
      });
    });
}

interface PublishFlags extends PolicyFlags {
  registryConfig?: string;
  json?: boolean;
  reference: string;
  repository?: string;
  output?: string;
  references?: string;
  plainHttp?: boolean;
  chunkSize?: string;
}

/** `release publish --reference R [--output receipt.json] [--references publication.json]` (docs/release-run.md, "`release publish`"). */
function registerPublish(release: Command): void {
  addRegistryOptions(release.command("publish"))
    .description("Bind v<V> to the staged digest, write and push the published receipt at v<V>-receipt, re-download and byte compare; references last.")
    .requiredOption("--reference <reference>", "the staged bundle reference <repository>@sha256:<64 hex>")
    .option("--output <file>", "write the receipt bytes here")
    .option("--references <file>", 'write {"bundle_reference","receipt_reference"} here, last')
    .option("--repository <repository>", "host[:port]/path or oci-layout:<dir> (default: hermesPluginKit.repository of the checkout's package.json)")
    .option("--chunk-size <size>", CHUNK_SIZE_HELP)
    .option("--json", "a release step always prints one JSON object on stdout, failures included; --json also keeps the error line off stderr")
    .option("--dir <checkout>", "the releasing package's checkout whose package.json gives the policy (default: the current directory)")
    .option("--package <name>", "the package being released, outside a checkout (with --repository); another package's ./package.json is ignored")
    .action(async (flags: PublishFlags) => {
      process.exitCode = await runAction(true, async () => {
        const policy = await publishPolicy(flags);
        const chunkSize = parseChunkSizeFlag(flags.chunkSize);
        const { publishRelease } = await import("../../../release/publish.js");
        printJson(
          await publishRelease({
            ...(chunkSize === undefined ? {} : { chunkSize }),
            ...transferProgress(),
            ...(await registryCredentials(policy, flags.registryConfig)),
            policy,
            repository: policy.registryRepository,
            reference: flags.reference,
            plainHttp: flags.plainHttp === true,
            ...(flags.output === undefined ? {} : { output: flags.output }),
            ...(flags.references === undefined ? {} : { references: flags.references }),
          }),
        );
      });
    });
}

interface RunFlags {
  registryConfig?: string;
  dryRun?: boolean;
  json?: boolean;
  source?: string;
  workspace: string;
  runId?: string;
  runAttempt?: string;
  plainHttp?: boolean;
  mcpSdkVersion?: string;
  githubRelease?: boolean;
  chunkSize?: string;
  attestKey?: string;
  passEnv?: string[];
}

/** `release run --workspace W [--source DIR]`: every step in order, resumable from W (release/run.ts). */
function registerRun(release: Command): void {
  addRegistryOptions(release.command("run"))
    .description("Run every release step in order (intent .. publish, github-release with --github-release) over a workspace; rerun with the same --workspace to resume.")
    .requiredOption("--workspace <dir>", "workspace directory (created; reruns resume from it)")
    .option("--source <dir>", "the package checkout: HEAD is the trigger, origin the remote to promote (default: current directory)")
    .option("--run-id <id>", "run id recorded in evidence and the candidate tag (default: chosen once per workspace)")
    .option("--run-attempt <n>", "run attempt (default 1)")
    .option("--pass-env <name...>", "also pass these environment variables to the install and gate commands and npm pack (otherwise an allow-list; HOME keeps your HOME instead of a private empty one); pipeline credentials are refused")
    .option("--mcp-sdk-version <version>", "MCP SDK version for the manifest when host_contract evidence has none")
    .option("--github-release", "also create the GitHub Release (GH_TOKEN, GITHUB_API_URL, GITHUB_REPOSITORY)")
    .option(
      "--attest-key <file>",
      "attest the staged bundle with the P-256 private key in this PEM file (mode 0600; or name the file in HERMES_PLUGIN_KIT_ATTEST_KEY_FILE): signed provenance stored as an OCI referrer. " +
        "Required when the release policy names a key (package.json hermesPluginKit.provenance.key of the release commit): then it must be that key's private half, the attest step always runs, and the run refuses before any write otherwise (RUN_ATTEST_KEY_REQUIRED, RUN_ATTEST_KEY_MISMATCH)",
    )
    .option("--dry-run", "run every check up to the first write (and the read-only checks of later steps); nothing is committed, tagged, pushed, uploaded or recorded")
    .option("--chunk-size <size>", CHUNK_SIZE_HELP)
    .option("--json", "a release step always prints one JSON object on stdout, failures included; --json also keeps the error line off stderr")
    .action(async (flags: RunFlags) => {
      // SIGINT/SIGTERM: the run stops its install or gate command (process group), releases its lock and
      // answers INTERRUPTED (exit 130/143) with how to resume (release/run.ts).
      const { cutInterruptMessage, withInterrupts } = await import("../interrupt.js");
      // How to go on after an interruption (release/run.ts builds it, as for the run's own answer): the
      // command line with every flag the run takes, the recorded ones of a resumed run included.
      let interruptedMessage: ((name: InterruptSignal, cut?: InterruptCut) => string) | undefined;
      process.exitCode = await withInterrupts("release run", (signal) => runAction(true, async () => {
        const runAttempt = positiveIntegerFlag("--run-attempt", flags.runAttempt, 6);
        const runId = runIdFlag(flags.runId);
        const chunkSize = parseChunkSizeFlag(flags.chunkSize);
        const runOptions = {
          ...(chunkSize === undefined ? {} : { chunkSize }),
          source: flags.source ?? process.cwd(),
          workspace: flags.workspace,
          plainHttp: flags.plainHttp === true,
          githubRelease: flags.githubRelease === true,
          ...(runId === undefined ? {} : { runId }),
          ...(runAttempt === undefined ? {} : { runAttempt }),
          ...(flags.mcpSdkVersion === undefined ? {} : { mcpSdkVersion: flags.mcpSdkVersion }),
          ...(flags.registryConfig === undefined ? {} : { registryConfig: flags.registryConfig }),
          ...(flags.attestKey === undefined ? {} : { attestKey: flags.attestKey }),
          ...(flags.passEnv === undefined ? {} : { gatePassEnv: flags.passEnv }),
          progress: progressStream(),
          // --quiet keeps gate output out of stderr too: it goes to <workspace>/evidence/<gate>.log.
          gateOutput: currentVerbosity() === "quiet" ? ("log" as const) : ("stderr" as const),
          signal,
        };
        // The line release/run.ts prints too: the flags given and, on resume, those the run recorded.
        const { resumeCommandLine, runInterruptedMessage } = await import("../../../release/run.js");
        const resume = await resumeCommandLine({ ...runOptions, dryRun: flags.dryRun === true });
        interruptedMessage = (name, cut) => runInterruptedMessage(name, resume, { dryRun: flags.dryRun === true, ...(cut === undefined ? {} : { cut }) });
        if (flags.dryRun === true) {
          const { dryRunRelease } = await import("../../../release/dry-run.js");
          const planned = await dryRunRelease(runOptions);
          printJson(planned);
          for (const c of planned.checks) printNote(`${c.status === "ok" ? "✓" : c.status === "would" ? "→ would" : "-"} ${c.check}: ${c.detail}`);
          for (const notice of planned.notices) printNote(`note: ${notice}`);
          printNote(planned.would_release ? `dry run: release run would release ${planned.tag ?? ""}; nothing was written` : `dry run: nothing to release (${planned.reason ?? ""})`);
          return;
        }
        const { runRelease } = await import("../../../release/run.js");
        const result = await runRelease(runOptions);
        printJson(result);
        if (result.released) printNextSteps(result.next_steps);
      }), (name) => (interruptedMessage === undefined ? `release run interrupted (${name}) before it started; run it again as you typed it` : interruptedMessage(name)),
      // Exited at once (a second signal, or stopping outlasted the grace period): the same answer, saying what may be left.
      (name, cut) => (interruptedMessage === undefined ? cutInterruptMessage("release run", name, cut) : interruptedMessage(name, cut)));
    });
}

/** Register the publishing steps on the `release` command, in pipeline order. */
export function registerReleasePublishSteps(release: Command): void {
  registerCheckPrivate(release);
  registerCheckImmutable(release);
  registerStage(release);
  registerPromote(release);
  registerPublish(release);
  registerGitHubRelease(release);
  registerRun(release);
}
