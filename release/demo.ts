/**
 * `release demo`: one command that releases a real package end to end and then
 * installs it as a consumer (README, "Quick start"), with no network beyond loopback.
 *
 * Maintainer half: the package (default `examples/calculator`) is copied into
 * a scratch git repository with a local bare `origin`, a baseline tag and one
 * conventional commit; then the real pipeline runs through `release run`
 * (intent armed, materialize, restore, the package's own gate commands, build,
 * manifest, check-private, stage, promote, publish; the GitHub Release step is
 * skipped with its reason). Consumer half, through the real CLI as a
 * subprocess: `fetch` the bundle and the receipt by digest, `verify-final-receipt`
 * with the pinned bundle reference, `fleet add` + `fleet verify`, `npm install`
 * of the fetched tarball into a scratch project, and `plugin doctor` on the
 * installed plugin.
 *
 * The store is `oci-layout:<workspace>/registry` (created 0700) unless a
 * registry is given (`--registry host:port/ns/name --plain-http`) or started
 * (`--start-registry`: Debian's docker-registry with Basic auth on a loopback
 * port kept in the workspace, so reruns reach the same repository).
 * Rerunning with the same workspace resumes and converges to the same
 * references and receipt bytes.
 */
import { spawn } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { existsSync } from "node:fs";
import { cp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { basename, dirname, join, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { HermesPluginKitError } from "../src/contract/errors.js";
import { parseStrictJson } from "../src/contract/canonical-json.js";
import { hashFile } from "../src/contract/file-hash.js";
import { isLoopbackHost, parseRepository } from "../src/contract/reference.js";
import { git } from "./git.js";
import { consumerCliCommand } from "./cli-command.js";
import { consumerNextSteps, shellWord } from "./next-steps.js";
import { createProgress, type Progress } from "./progress.js";
import { runRelease, type RunResult } from "./run.js";
import { DemoError, keptRegistryLines, startDemoRegistry, type DemoRegistry } from "./demo-registry.js";
import { installTarballOffline } from "./demo-consumer.js";
import { makeDirectory, makeTempDirectory } from "../src/contract/directory.js";

export { DemoError } from "./demo-registry.js";

/** Options of {@link runDemo}. */
export interface DemoOptions {
  /** Directory of the package to release (default `examples/calculator` of this repository; `.` releases hermes-plugin-kit). */
  packageDir?: string;
  /** Registry repository `host:port/path` to use instead of the embedded `oci-layout:` store. */
  registry?: string;
  /** Plain HTTP to a loopback registry. */
  plainHttp?: boolean;
  /** Start Debian's docker-registry (Basic auth) on a loopback port. */
  startRegistry?: boolean;
  /**
   * With `startRegistry`: leave the registry running after a successful demo (address, credential variables and how
   * to stop it are printed). A failed or interrupted demo stops it, as it stops a registry it started without this flag.
   */
  keepRegistry?: boolean;
  /** Workspace directory (default: a new temp directory); reuse it to resume. */
  workspace?: string;
  /** Where step lines go (default stderr; `null` silences them). */
  out?: NodeJS.WritableStream | null;
  /** Where the pipeline's gate and install output goes: `<workspace>/release/evidence/<gate>.log` (default) or stderr. */
  gateOutput?: "log" | "stderr";
  /**
   * Aborting stops the release run's install, gate or `npm pack` command with its process group; the demo then fails
   * with `INTERRUPTED`. With or without it those commands run in process groups of their own, killed (SIGKILL) if our
   * process exits while they run, as a started registry is.
   */
  signal?: AbortSignal;
}

/** One line of the demo's report. */
export interface DemoStep {
  step: string;
  ok: boolean;
  /** True for a step that did not apply (reported with `-`). */
  skipped?: boolean;
  ms: number;
  detail?: string;
}

/** What {@link runDemo} returns (and `--json` prints). */
export interface DemoResult {
  ok: boolean;
  workspace: string;
  package: string;
  version?: string;
  bundle_reference?: string;
  receipt_reference?: string;
  /** The release's attestation (signed with the demo's throwaway key), `<repository>@sha256:<hex>`. */
  attestation_reference?: string;
  tarball_sha256?: string;
  tarball?: string;
  receipt_file?: string;
  registry: string;
  steps: DemoStep[];
  github_release: string;
  /** After success: what a consumer runs next, one shell line each, with this release's references. */
  next_steps?: string[];
  /** Set with `keepRegistry`: the registry left running. */
  kept_registry?: { host: string; pid: number; credentials_file: string; stop: string; instructions: string[] };
  /** After a failure: the error's code (the step's own, whatever area raised it), as every command's JSON failure has it. */
  code?: string;
  /** After a failure: what was expected, what was found, and the fix. */
  message?: string;
}

/** Root of this package (the directory holding package.json). */
export const KIT_ROOT = resolve(fileURLToPath(new URL("../../", import.meta.url)));
const CLI = join(KIT_ROOT, "dist", "src", "cli", "main.js");
const DEMO_DATE = "2026-01-15T12:00:00Z";
const DEMO_IDENTITY = { GIT_AUTHOR_NAME: "Hermes Demo", GIT_AUTHOR_EMAIL: "demo@hermes-plugin-kit.invalid", GIT_COMMITTER_NAME: "Hermes Demo", GIT_COMMITTER_EMAIL: "demo@hermes-plugin-kit.invalid" };

interface DemoState {
  schema: 1;
  package_dir: string;
  registry: string;
  plain_http: boolean;
  registry_port?: number;
}

function run(cmd: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number; input?: string } = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(cmd, args, { cwd: options.cwd, env: options.env ?? process.env, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout = (stdout + d).slice(-1_000_000)));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr = (stderr + d).slice(-1_000_000)));
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 600_000);
    // An exit of ours while it runs (an interruption) takes it along.
    const killOnExit = () => child.kill("SIGKILL");
    process.on("exit", killOnExit);
    child.on("error", (error) => {
      process.off("exit", killOnExit);
      reject(error);
    });
    child.on("close", (code) => {
      process.off("exit", killOnExit);
      clearTimeout(timer);
      resolvePromise({ code: code ?? -1, stdout, stderr });
    });
    child.stdin.end(options.input ?? "");
  });
}

/** The part of `plugin doctor --json` the demo reads. */
/** The parts of `plugin doctor --json` (src/kit/doctor.ts `DoctorReport`) the demo reads ({@link doctorToolCall}). */
export interface DemoDoctorReport {
  ok?: boolean;
  findings?: { rule?: string; severity?: string; message?: string }[];
  servers?: { tools?: { name: string; readOnly?: boolean; calls?: { arguments: unknown; isError: boolean; modelSees: string }[] }[] }[];
}

const COPY_SKIP = new Set(["node_modules", ".git", "coverage", "dist"]);

/**
 * Copy the package's source: inside a git work tree, exactly the files git
 * tracks or would track (`git ls-files -co --exclude-standard`, so build
 * output and ignored files stay behind); elsewhere everything but
 * `node_modules`, `.git`, `coverage` and `dist`.
 */
async function copyPackage(packageDir: string, target: string): Promise<void> {
  const listed = await git(["ls-files", "-z", "-co", "--exclude-standard", "--", "."], { cwd: packageDir, allowFailure: true });
  if (listed.code !== 0) {
    await cp(packageDir, target, { recursive: true, filter: (src) => !COPY_SKIP.has(basename(src)) });
    return;
  }
  const files = listed.stdout.split("\0").filter((f) => f.length > 0);
  if (files.length === 0) throw new DemoError("DEMO_PACKAGE_EMPTY", `${packageDir} has no files to release (git ls-files of the package found none, or the directory is empty); fix: pass --package <the directory holding the package's package.json and sources>`);
  for (const file of files) {
    const from = join(packageDir, file);
    if (!existsSync(from)) continue;
    await makeDirectory(dirname(join(target, file)), { purpose: "demo package copy" });
    await cp(from, join(target, file), { verbatimSymlinks: true });
  }
}

/**
 * Create the scratch source repository once: copy the package, point its
 * `hermesPluginKit.repository` at the demo store, commit a baseline with tag
 * `v<version>` and push it to a local bare origin, then add one conventional
 * `feat:` commit (pushed, so remote main is the trigger).
 */
async function prepareSource(workspace: string, packageDir: string, repository: string): Promise<{ source: string; name: string; version: string }> {
  const source = join(workspace, "source");
  const origin = join(workspace, "origin.git");
  const env = { ...process.env, ...DEMO_IDENTITY, GIT_AUTHOR_DATE: DEMO_DATE, GIT_COMMITTER_DATE: DEMO_DATE };
  const pkgPath = join(source, "package.json");
  if (existsSync(join(source, ".git"))) {
    const pkg = parseStrictJson(await readFile(pkgPath), { rejectIntegralFloats: false });
    return { source, name: String(pkg["name"]), version: String(pkg["version"]) };
  }
  await rm(source, { recursive: true, force: true });
  await rm(origin, { recursive: true, force: true });
  await copyPackage(packageDir, source);
  const pkg = parseStrictJson(await readFile(pkgPath), { rejectIntegralFloats: false }) as Record<string, unknown>;
  const kit = (typeof pkg["hermesPluginKit"] === "object" && pkg["hermesPluginKit"] !== null ? pkg["hermesPluginKit"] : {}) as Record<string, unknown>;
  // The demo's store, and (for a package without its own) the offline install command: both are
  // visible in the released package.json, so the gates' environment is exactly what the policy says.
  pkg["hermesPluginKit"] = { ...kit, repository, ...(kit["install"] === undefined && pkg["name"] !== "hermes-plugin-kit" ? { install: kitLinkInstallCommand() } : {}) };
  await writeFile(pkgPath, JSON.stringify(pkg, null, 2) + "\n");
  const lockPath = join(source, "package-lock.json");
  if (!existsSync(lockPath)) {
    await writeFile(lockPath, JSON.stringify({ name: pkg["name"], version: pkg["version"], lockfileVersion: 3, requires: true, packages: { "": { name: pkg["name"], version: pkg["version"] } } }, null, 2) + "\n");
  }
  if (!existsSync(join(source, "CHANGELOG.md"))) await writeFile(join(source, "CHANGELOG.md"), "# Changelog\n");
  const g = async (args: string[], cwd = source) => {
    const r = await git(args, { cwd, env });
    return r.stdout.trim();
  };
  await g(["init", "-q", "-b", "main", source], workspace);
  await g(["add", "-A"]);
  await g(["commit", "-q", "-m", `chore: baseline ${String(pkg["version"])}`]);
  await g(["tag", `v${String(pkg["version"])}`]);
  await g(["init", "-q", "--bare", "-b", "main", origin], workspace);
  await g(["remote", "add", "origin", origin]);
  await g(["push", "-q", "origin", "main", `refs/tags/v${String(pkg["version"])}`]);
  await writeFile(join(source, "DEMO.md"), `This copy of ${String(pkg["name"])} was released by \`hermes-plugin-kit release demo\`.\n`);
  await g(["add", "DEMO.md"]);
  await g(["commit", "-q", "-m", "feat: describe the demo release"]);
  await g(["push", "-q", "origin", "main"]);
  return { source, name: String(pkg["name"]), version: String(pkg["version"]) };
}

/**
 * The install command the demo declares (`hermesPluginKit.install`) for a
 * package that declares none and is not the kit itself, such as the
 * example: no network, so npm links this checkout of the kit into the
 * restored copy's `node_modules` (its bin, `hermes-plugin-kit`, lands in
 * `node_modules/.bin`, the gates' own PATH entry; the kit's `node_modules`
 * resolves what it bundles). Nothing is saved to package.json or a lock.
 */
export function kitLinkInstallCommand(kitRoot = KIT_ROOT): string {
  return `npm install --offline --no-save --no-package-lock --ignore-scripts --no-audit --no-fund ${JSON.stringify(kitRoot)}`;
}

/**
 * The demo's throwaway P-256 attestation key in the workspace (`attest-key.pem`,
 * mode 0600, and `attest-key.pub`), made once so a rerun converges.
 */
async function throwawayAttestKey(workspace: string): Promise<{ keyFile: string; pubFile: string }> {
  const keyFile = join(workspace, "attest-key.pem");
  const pubFile = join(workspace, "attest-key.pub");
  if (!existsSync(keyFile) || !existsSync(pubFile)) {
    const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    await writeFile(keyFile, privateKey.export({ format: "pem", type: "pkcs8" }), { mode: 0o600 });
    await writeFile(pubFile, publicKey.export({ format: "pem", type: "spki" }));
  }
  return { keyFile, pubFile };
}

function credentialsEnv(registry: DemoRegistry | undefined): Record<string, string> {
  return registry === undefined ? {} : { REGISTRY_USERNAME: registry.username, REGISTRY_PASSWORD: registry.password };
}

const NO_GITHUB_HERE = "no GitHub here (the GitHub Release step needs GH_TOKEN, GITHUB_API_URL and GITHUB_REPOSITORY)";

/** One run of the demo: where it works, what it reports, and the store it releases into. */
interface DemoRun {
  options: DemoOptions;
  out: NodeJS.WritableStream | null;
  workspace: string;
  packageDir: string;
  result: DemoResult;
  /** Run one reported step: its start and end lines (a heartbeat every 10 s), and its entry in `result.steps`. */
  timed<T>(step: string, fn: () => Promise<T>, detail?: (v: T) => string | undefined): Promise<T>;
  progress: Progress;
  /** Set once the store is known. */
  repository: string;
  plainHttp: boolean;
  registry?: DemoRegistry;
  childEnv: NodeJS.ProcessEnv;
}

/** What the maintainer half hands the consumer half. */
interface Released {
  source: { name: string; version: string };
  release: Extract<RunResult, { released: true }>;
  /** The throwaway key's public half (`attest-key.pub`): what the consumer pins with `--key`. */
  attestPub: string;
}

/**
 * The package directory must exist and hold a package.json, checked before
 * the workspace is made.
 * @throws DemoError `DEMO_PACKAGE_MISSING` naming the path and what was expected.
 */
async function requirePackageDir(packageDir: string, given: boolean): Promise<void> {
  const st = await stat(packageDir).catch(() => undefined);
  const from = given ? "--package" : "the default package (examples/calculator of this checkout)";
  if (!given && st === undefined && packageDir.split(sep).includes("node_modules")) {
    // An installed kit: the npm package carries no examples (the demo is a checkout's tool).
    throw new DemoError(
      "DEMO_PACKAGE_MISSING",
      `the default package (examples/calculator) is not in an installed hermes-plugin-kit (${packageDir} does not exist): the npm package carries no examples; fix: run the demo from a clone of hermes-plugin-kit (npm ci, npm run build, npm run demo), or release your own plugin with --package <its directory>`,
    );
  }
  if (st === undefined || !st.isDirectory()) {
    throw new DemoError("DEMO_PACKAGE_MISSING", `${from} ${packageDir} is not a directory: expected the directory of an npm package (holding package.json), e.g. --package examples/calculator, or --package . for hermes-plugin-kit itself; fix: pass the directory that holds your package.json`);
  }
  if (!existsSync(join(packageDir, "package.json"))) {
    throw new DemoError("DEMO_PACKAGE_MISSING", `${from} ${packageDir} has no package.json: expected the directory of an npm package, e.g. --package examples/calculator; fix: pass the directory that holds your package.json`);
  }
}

/**
 * Run the demo: the package check, the store, the maintainer half (`release
 * run`), the consumer half, then the next steps. Never throws for a failed
 * step: the result says which step failed, with what it expected and found
 * (`code` and `message`, once each, as every command's JSON failure), and `ok: false`.
 */
export async function runDemo(options: DemoOptions = {}): Promise<DemoResult> {
  const packageDir = resolve(options.packageDir ?? join(KIT_ROOT, "examples", "calculator"));
  const result: DemoResult = { ok: false, workspace: options.workspace === undefined ? "" : resolve(options.workspace), package: packageDir, registry: "", steps: [], github_release: NO_GITHUB_HERE };
  try {
    await requirePackageDir(packageDir, options.packageDir !== undefined);
    // A --registry that cannot be used fails before a workspace exists (nothing to resume, nothing left behind).
    checkRegistryOption(options);
  } catch (error) {
    return { ...result, ...errorOf(error) };
  }
  const demo = await openDemo(options, packageDir, result);
  try {
    await openStore(demo);
    const released = await maintainerHalf(demo);
    await consumerHalf(demo, released);
    result.next_steps = consumerNextSteps({
      repository: demo.repository,
      bundleReference: released.release.bundle_reference,
      receiptReference: released.release.receipt_reference,
      packageName: released.source.name,
      tarball: released.release.tarball.filename,
      plainHttp: demo.plainHttp,
      provenanceKey: released.attestPub,
      cli: consumerCliCommand(),
      ...(demo.registry === undefined ? {} : { credentialsHint: `set -a; . ${shellWord(join(demo.registry.dir, "credentials.env"))}; set +a   # REGISTRY_USERNAME and REGISTRY_PASSWORD of the demo registry` }),
    });
    result.ok = true;
  } catch (error) {
    Object.assign(result, errorOf(error));
  } finally {
    const registry = demo.registry;
    // --keep-registry keeps it after a success only: a failed demo stops what it started (as an interrupted one does: demo-registry.ts).
    if (registry !== undefined && options.keepRegistry === true && result.ok) {
      registry.keep();
      // The CLI prints the instructions (stdout in text mode, stderr with --json); the JSON result carries them.
      result.kept_registry = { host: registry.host, pid: registry.pid, credentials_file: join(registry.dir, "credentials.env"), stop: `kill ${registry.pid}`, instructions: keptRegistryLines(registry, result.registry) };
    } else await registry?.stop();
  }
  return result;
}

function errorOf(error: unknown): { code: string; message: string } {
  return { code: error instanceof HermesPluginKitError ? error.code : "INTERNAL", message: error instanceof Error ? error.message : String(error) };
}

/** The workspace (created 0700) and the step timer of this run. */
async function openDemo(options: DemoOptions, packageDir: string, result: DemoResult): Promise<DemoRun> {
  const out = options.out === undefined ? process.stderr : options.out;
  const progress = createProgress(out);
  const workspace = resolve(options.workspace ?? (await makeTempDirectory("hermes-plugin-kit-demo-")));
  await makeDirectory(workspace, { mode: 0o700, purpose: "demo workspace (--workspace)" });
  result.workspace = workspace;
  const timed = async <T>(step: string, fn: () => Promise<T>, detail?: (v: T) => string | undefined): Promise<T> => {
    const task = progress.start(step);
    try {
      const value = await fn();
      const d = detail?.(value);
      result.steps.push({ step, ok: true, ms: task.done(undefined, d), ...(d === undefined ? {} : { detail: d }) });
      return value;
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      result.steps.push({ step, ok: false, ms: task.failed(message), detail: message });
      throw error;
    }
  };
  return { options, out, workspace, packageDir, result, timed, progress, repository: "", plainHttp: false, childEnv: process.env };
}

/**
 * The store: the workspace's saved choice (a rerun must name the same one),
 * else `--registry`, `--start-registry` or the embedded `oci-layout:` store;
 * a started registry comes up on its saved port.
 * @throws DemoError `DEMO_PLAIN_HTTP_REFUSED`, `DEMO_WORKSPACE_MISMATCH`, `DEMO_REGISTRY_*`.
 */
/**
 * The `--registry` shape checks, before anything is created.
 * @throws ReleaseContractError `REPOSITORY_INVALID` (a URL, credentials, a malformed name); DemoError `DEMO_PLAIN_HTTP_REFUSED`.
 */
function checkRegistryOption(options: DemoOptions): void {
  if (options.registry === undefined) return;
  const repo = parseRepository(options.registry);
  if (repo.kind === "registry" && options.plainHttp === true && !isLoopbackHost(repo.host)) {
    throw new DemoError("DEMO_PLAIN_HTTP_REFUSED", `--plain-http is only for loopback registries (127.0.0.1, ::1, localhost); ${repo.host} is not one; fix: leave out --plain-http for a TLS registry, or use --start-registry for a local one`);
  }
}

async function openStore(demo: DemoRun): Promise<void> {
  const { options, workspace, packageDir } = demo;
  checkRegistryOption(options);
  const statePath = join(workspace, "demo-state.json");
  const state = existsSync(statePath) ? await savedDemoState(statePath, demo) : freshDemoState(demo);
  if (options.startRegistry === true || state.registry.startsWith("start")) {
    const registry = await demo.timed("start docker-registry (Basic auth, loopback)", async () => {
      const started = await startDemoRegistry(workspace, state.registry_port, options.keepRegistry === true);
      state.registry_port = Number(started.host.split(":")[1]);
      return started;
    }, (r) => r.host);
    demo.registry = registry;
    const name = basename(packageDir) === "." ? "plugin" : basename(packageDir).toLowerCase().replace(/[^a-z0-9]+/g, "-");
    state.registry = `start:${registry.host}/demo/${name}`;
  }
  demo.repository = state.registry.startsWith("start:") ? state.registry.slice("start:".length) : state.registry;
  demo.result.registry = demo.repository;
  demo.plainHttp = state.plain_http;
  demo.childEnv = { ...process.env, ...credentialsEnv(demo.registry) };
  await writeFile(statePath, JSON.stringify(state, null, 2) + "\n");
}

/** The workspace's saved demo state; it must be for the same package and store flags. @throws DemoError `DEMO_WORKSPACE_MISMATCH`. */
async function savedDemoState(statePath: string, { options, workspace, packageDir }: DemoRun): Promise<DemoState> {
  const state = parseStrictJson(await readFile(statePath)) as unknown as DemoState;
  if (state.package_dir !== packageDir) throw new DemoError("DEMO_WORKSPACE_MISMATCH", `workspace ${workspace} released ${state.package_dir}, not ${packageDir} (its demo-state.json says so); fix: use another --workspace for ${packageDir}`);
  const savedStart = state.registry.startsWith("start");
  if ((options.startRegistry === true && !savedStart) || (options.registry !== undefined && options.registry !== state.registry)) {
    throw new DemoError("DEMO_WORKSPACE_MISMATCH", `workspace ${workspace} released into ${savedStart ? "a started docker-registry" : state.registry} (its demo-state.json says so); fix: rerun it with the same store flags (or none), or use another --workspace`);
  }
  return state;
}

function freshDemoState({ options, workspace, packageDir }: DemoRun): DemoState {
  const wanted = options.startRegistry === true ? "start" : (options.registry ?? `oci-layout:${join(workspace, "registry")}`);
  return { schema: 1, package_dir: packageDir, registry: wanted, plain_http: options.plainHttp === true || options.startRegistry === true };
}

/** Maintainer half: the scratch source repository, the throwaway key, then `release run` (attesting with it). @throws DemoError `DEMO_NOTHING_RELEASED`; every code of `release run`. */
async function maintainerHalf(demo: DemoRun): Promise<Released> {
  const { workspace, out } = demo;
  const source = await demo.timed("maintainer: scratch git repo with origin, baseline tag and one conventional commit", () => prepareSource(workspace, demo.packageDir, demo.repository), (s) => `${s.name} ${s.version}`);
  const attestKey = await demo.timed("maintainer: throwaway P-256 attestation key", () => throwawayAttestKey(workspace), (k) => k.pubFile);
  const release = await demo.timed(
    "maintainer: release run (intent, materialize, restore, gates, build, manifest, check-private, stage, attest, promote, publish)",
    async () => {
      const r: RunResult = await runRelease({
        source: source.source,
        workspace: join(workspace, "release"),
        plainHttp: demo.plainHttp,
        gateOutput: demo.options.gateOutput ?? "log",
        attestKey: attestKey.keyFile,
        env: { ...demo.childEnv, SEMANTIC_RELEASE_ENABLED: "true" },
        // A signal puts the package's commands in process groups of their own, which an exit of ours kills whole.
        signal: demo.options.signal ?? new AbortController().signal,
        ...(demo.registry === undefined ? {} : { credentials: { username: demo.registry.username, password: demo.registry.password } }),
        progress: out === null ? null : ({ write: (chunk: string | Uint8Array) => out.write("    " + String(chunk)) } as unknown as NodeJS.WritableStream),
      });
      if (!r.released) throw new DemoError("DEMO_NOTHING_RELEASED", `release run released nothing: ${r.reason}; expected one release of the scratch repository's conventional commit; fix: rerun with a fresh --workspace (the scratch repository is made anew), and if it says nothing again, report it with this message`);
      return r;
    },
    (r) => `${r.version} ${r.tag}`,
  );
  Object.assign(demo.result, { version: release.version, bundle_reference: release.bundle_reference, receipt_reference: release.receipt_reference, attestation_reference: release.attestation_reference, tarball: release.tarball.filename });
  return { source, release, attestPub: attestKey.pubFile };
}

/** The built CLI as a consumer runs it. @throws DemoError `DEMO_STEP_FAILED` with the command's last lines. */
async function consumerCli(demo: DemoRun, args: string[]): Promise<string> {
  const r = await run(process.execPath, [CLI, ...args], { cwd: demo.workspace, env: demo.childEnv });
  if (r.code !== 0) throw new DemoError("DEMO_STEP_FAILED", `hermes-plugin-kit ${args[0]} ${args[1] ?? ""} exited ${r.code}: ${(r.stderr || r.stdout).trim().split("\n").slice(-3).join(" | ")}`);
  return r.stdout;
}

/**
 * Consumer half, through the real CLI: fetch the bundle with `--provenance`
 * and the receipt by digest, verify the receipt, compare the tarball's
 * SHA-256, pin and verify the fleet, install offline, and `plugin doctor`.
 * @throws DemoError `DEMO_STEP_FAILED`, `DEMO_TARBALL_MISMATCH`, `DEMO_DOCTOR`.
 */
async function consumerHalf(demo: DemoRun, { source, release, attestPub }: Released): Promise<void> {
  const { workspace, repository, plainHttp, timed } = demo;
  const cli = (args: string[]) => consumerCli(demo, args);
  const consumer = join(workspace, "consumer");
  const repoFlags = ["--repository", repository, ...(plainHttp ? ["--plain-http"] : [])];
  await timed(
    "consumer: fetch the bundle by digest with --provenance (attestation verified with the pinned key before install)",
    () => cli(["fetch", "--reference", release.bundle_reference, "--output-dir", consumer, ...repoFlags, "--expect", "bundle", "--provenance", "--key", attestPub, "--json"]),
    (stdout) => `attestation ${(parseStrictJson(stdout.trim(), { rejectIntegralFloats: false }) as { provenance?: { attestations?: string[] } }).provenance?.attestations?.join(", ") ?? "none"}`,
  );
  await timed("consumer: fetch the receipt by digest", () => cli(["fetch", "--reference", release.receipt_reference, "--output-dir", consumer, ...repoFlags, "--expect", "receipt", "--json"]));
  const receiptFile = join(consumer, "release-receipt.json");
  demo.result.receipt_file = receiptFile;
  await timed("consumer: verify-final-receipt --expect-bundle-reference", () => cli(["verify-final-receipt", "--receipt", receiptFile, "--repository", repository, "--package", source.name, "--expect-bundle-reference", release.bundle_reference]));
  const tarballPath = join(consumer, "dist", release.tarball.filename);
  demo.result.tarball_sha256 = await timed("consumer: tarball SHA-256 equals the receipt's artifact sha256", async () => {
    const actual = (await hashFile(tarballPath)).sha256;
    const expected = (parseStrictJson(await readFile(receiptFile))["artifacts"] as { sha256: string }[])[0]?.sha256;
    if (actual !== expected) throw new DemoError("DEMO_TARBALL_MISMATCH", `fetched tarball hashes to ${actual}, receipt says ${String(expected)}: the store served other bytes than were released; fix: do not use this release; rerun the demo with a fresh --workspace`);
    return actual;
  });
  const lock = join(workspace, "fleet.lock.json");
  await timed("consumer: fleet add (with the provenance key pinned)", () => cli(["fleet", "add", "--lock", lock, "--receipt", receiptFile, "--repository", repository, "--provenance", "--key", attestPub, ...(plainHttp ? ["--plain-http"] : [])]));
  await timed("consumer: fleet verify (pins, receipt by digest, provenance, installed tarball)", () => cli(["fleet", "verify", "--lock", lock, "--installed", consumer, ...(plainHttp ? ["--plain-http"] : [])]));
  const app = join(workspace, "app");
  await timed("consumer: npm install the fetched tarball into a scratch project (offline, --ignore-scripts)", () => installTarballOffline(app, tarballPath, join(workspace, "release", "restore")), (how) => how);
  await doctorInstalled(demo, join(app, "node_modules", source.name), source.name);
}

/** `plugin doctor` on the installed plugin (a package without plugin.json is reported skipped). @throws DemoError `DEMO_DOCTOR`. */
async function doctorInstalled(demo: DemoRun, installed: string, name: string): Promise<void> {
  if (!existsSync(join(installed, "plugin.json"))) {
    const detail = `skipped: ${name} is not a Hermes plugin package (no plugin.json)`;
    demo.progress.skipped("consumer: plugin doctor", detail);
    demo.result.steps.push({ step: "consumer: plugin doctor", ok: true, skipped: true, ms: 0, detail });
    return;
  }
  await demo.timed("consumer: plugin doctor on the installed plugin (starts it, calls a tool)", async () => {
    const text = await consumerCli(demo, ["plugin", "doctor", installed, "--json"]);
    return doctorToolCall(parseStrictJson(text.trim().split("\n").pop() ?? "{}", { rejectIntegralFloats: false }) as DemoDoctorReport, name, installed);
  }, (detail) => detail);
}

/**
 * The demo's verdict on `plugin doctor --json` of the installed package `name` (at `installed`): the doctor
 * passed and made at least one successful call (`isError: false`) of a tool the plugin lists, whichever tool
 * (the doctor calls each read-only tool with its examples, as a consumer's Hermes could). Any plugin passes
 * this way, not only the example's `calculate`.
 * @returns the call, `<tool> <arguments JSON> -> <what the model sees>`.
 * @throws DemoError `DEMO_DOCTOR`: the doctor did not pass (its error findings named), or it made no
 *   successful tool call (the tools listed and the calls made named).
 */
export function doctorToolCall(report: DemoDoctorReport, name: string, installed: string): string {
  const rerun = `${consumerCliCommand()} plugin doctor ${shellWord(installed)}`;
  if (report.ok !== true) {
    const errors = (report.findings ?? []).filter((f) => f.severity === "error").map((f) => `${f.rule ?? "?"}: ${f.message ?? ""}`);
    throw new DemoError(
      "DEMO_DOCTOR",
      `plugin doctor on the installed ${name} did not pass: ${errors.length === 0 ? "it reported ok: false" : errors.join("; ").slice(0, 600)}; expected a package that loads as Hermes loads it; fix: run ${rerun} (or npm run doctor in your plugin) and fix what it reports, then rerun the demo with a fresh --workspace`,
    );
  }
  const tools = (report.servers ?? []).flatMap((s) => s.tools ?? []);
  const calls = tools.flatMap((t) => (t.calls ?? []).map((c) => ({ tool: t.name, ...c })));
  const answered = calls.find((c) => c.isError === false);
  if (answered === undefined) {
    const listed = tools.length === 0 ? "it lists no tool" : `it lists ${tools.map((t) => `${t.name}${t.readOnly === true ? " (read-only)" : ""}`).join(", ")}`;
    const made = calls.length === 0 ? "and called none (it calls only read-only tools, with their examples)" : `and every call answered isError (${calls.map((c) => `${c.tool} ${JSON.stringify(c.arguments)} -> ${c.modelSees}`).join("; ").slice(0, 400)})`;
    throw new DemoError(
      "DEMO_DOCTOR",
      `plugin doctor made no successful tool call of the installed ${name}: ${listed}, ${made}; expected at least one tool call that answers without isError, as a consumer's Hermes would make; ` +
        `fix: give a read-only tool (readOnly: true) examples that succeed, check with ${rerun}, then rerun the demo with a fresh --workspace`,
    );
  }
  return `${answered.tool} ${JSON.stringify(answered.arguments)} -> ${answered.modelSees}`;
}
