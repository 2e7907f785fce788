/**
 * `release gate <name>`: run one test gate's declared command on the
 * restored release source and record its evidence file, which
 * `release create-manifest` reads (docs/release-build.md, "Gate commands";
 * docs/architecture.md, "Release: steps and data flow").
 *
 * The command is the exact string the releasing package declares in
 * package.json `hermesPluginKit.gates.<name>` (defaults: `just test`,
 * `just test-release`, `just test-contract`, `just build && just check-dist`).
 * It is run as `bash -c <declared command>` in the checkout: this is the only
 * place the release steps use a shell, and only for that declared string,
 * because gate commands are shell command lines (`a && b`). Its stdout and
 * stderr go to our stderr. It runs hermetically (`commandEnvironment`): the
 * checkout's own `node_modules/.bin` first on `PATH`, no `node_modules/.bin`
 * of the caller, no credential variables, and a private empty HOME made for
 * it and removed afterwards (`gateHome`: the maintainer's `~/.docker/config.json`,
 * `~/.npmrc` and the like are not where its tools look; npm keeps the
 * maintainer's cache; `--pass-env HOME` keeps the real HOME); a tool it needs that is not on that
 * `PATH` fails before it runs, naming the tool (`gate-tools.ts`). The checkout must be clean before, and HEAD and the tracked
 * tree must be unchanged after; the evidence records HEAD as `source_sha`.
 */
import { lstat, readFile, realpath, rename, writeFile } from "node:fs/promises";
import { dirname, join, resolve as resolvePath } from "node:path";
import { canonicalJsonPretty, parseStrictJson } from "../src/contract/canonical-json.js";
import { isStableSemver } from "../src/contract/grammar.js";
import { TEST_GATES, type TestGate } from "../src/contract/policy.js";
import { readReleaseConfig } from "./config.js";
import { ReleaseStepError } from "./errors.js";
import { headCommit, runProcess, statusPorcelain } from "./git.js";
import { requireGateTools } from "./gate-tools.js";
import { proveReleaseIdentity } from "./materialize.js";
import { commandEnvironment, gateHome, RELEASE_CREDENTIAL_VARIABLES, requirePassableNames } from "./command-env.js";
import { makeDirectory } from "../src/contract/directory.js";
import { parseJsonFileBytes } from "../src/contract/json-file.js";

/** Default timeout of one gate command, in milliseconds (60 minutes). */
export const GATE_TIMEOUT_MS = 60 * 60_000;
/** Credential variables never passed to a gate command (the command's environment is an allow-list: `command-env.ts`). */
export const GATE_SECRET_VARIABLES = RELEASE_CREDENTIAL_VARIABLES;

/** Evidence of one test gate as written by `release gate`. */
export interface GateEvidence {
  /** `passed` or `failed`. */
  status: "passed" | "failed";
  /** Same as `status` (the contract carries both). */
  result: "passed" | "failed";
  /** HEAD of the checkout the command ran on. */
  source_sha: string;
  /** The declared command, exactly. */
  command: string;
  /** `host_contract` only: stable SemVer of `@modelcontextprotocol/sdk` installed in the checkout. */
  mcp_sdk_version?: string;
}

/** Options of {@link runGate}. */
export interface GateOptions {
  /** Gate name: one of `unit`, `public_contract`, `host_contract`, `build_metadata`. */
  gate: string;
  /** The checkout (default `process.cwd()`). */
  dir?: string;
  /** Directory of evidence files (default `./evidence`); the file is `<gate>.json`. */
  evidenceDir?: string;
  /** Timeout in milliseconds (default {@link GATE_TIMEOUT_MS}). */
  timeoutMs?: number;
  /**
   * The trigger commit: when given, the release identity facts
   * (`proveReleaseIdentity`) are proved before and after the command, as the
   * workflow's test jobs do (docs/release-build.md, "Identity facts (materialize and restore)").
   */
  expectedSha?: string;
  /**
   * Where the command's output goes: `"stderr"` (default) or `"log"`, which
   * appends it to `<evidenceDir>/<gate>.log` (named in the error when the gate fails).
   */
  output?: "stderr" | "log";
  /**
   * Variables passed to the command besides its allow-list (`commandEnvironment`:
   * PATH with the checkout's `node_modules/.bin` first, a private HOME, temp, locale,
   * proxies, CI and terminal settings), e.g. `REQUIRE_REGISTRY`; never a
   * pipeline credential (`RELEASE_CONFIG_INVALID`). `HOME` here keeps the
   * maintainer's HOME instead of the private one (`gateHome`).
   */
  passEnv?: readonly string[];
  /**
   * The environment the command's allow-list and `passEnv` are taken from, and whose HOME names npm's
   * cache (default `process.env`): `release run` passes its run's environment, as for the install command.
   */
  env?: Readonly<Record<string, string | undefined>>;
  /**
   * Aborting stops the command and everything it started (it runs in a
   * process group of its own) and rejects with `InterruptedError`; no evidence is written.
   */
  signal?: AbortSignal;
}

/** Result of {@link runGate}. */
export interface GateRunResult {
  gate: TestGate;
  passed: boolean;
  exit_code: number | null;
  /** Wall time of the command, in milliseconds. */
  duration_ms: number;
  evidence_file: string;
  evidence: GateEvidence;
}

/** Path of the evidence file of `gate` in `evidenceDir`. */
export function evidenceFile(evidenceDir: string, gate: TestGate): string {
  return join(evidenceDir, `${gate}.json`);
}

/** Require `name` to be a test gate. @throws ReleaseStepError `RELEASE_GATE_UNKNOWN`. */
export function requireTestGate(name: string): TestGate {
  if (!(TEST_GATES as readonly string[]).includes(name)) {
    throw new ReleaseStepError("RELEASE_GATE_UNKNOWN", `unknown gate ${JSON.stringify(name)}; expected one of ${TEST_GATES.join(", ")}; fix: name one of them (e.g. release gate unit)`);
  }
  return name as TestGate;
}

/** The `version` of `<packageDir>/package.json`, if it is a stable SemVer. */
async function packageVersionIn(packageDir: string): Promise<string | undefined> {
  try {
    const version = parseStrictJson(await readFile(join(packageDir, "package.json")), { rejectIntegralFloats: false })["version"];
    return isStableSemver(version) ? version : undefined;
  } catch {
    return undefined;
  }
}

/** Resolve `node_modules/<name>` from `fromDir` the way Node does: the nearest ancestor holding it (following symlinks). */
async function resolvePackageDir(fromDir: string, name: string): Promise<string | undefined> {
  let dir = await realpath(fromDir).catch(() => resolvePath(fromDir));
  for (let depth = 0; depth < 64; depth += 1) {
    const candidate = join(dir, "node_modules", ...name.split("/"));
    const st = await lstat(join(candidate, "package.json")).catch(() => undefined);
    if (st !== undefined) return realpath(candidate);
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
  return undefined;
}

const MCP_SDK = "@modelcontextprotocol/sdk";

/**
 * Version of the MCP SDK a plugin built in `dir` bundles: the one
 * `hermes-plugin-kit` resolves from where the checkout installed it (the kit
 * imports the SDK, and `plugin build` bundles the kit), or, for the kit's
 * own checkout, the one the kit resolves from itself. A checkout without the
 * kit falls back to the SDK it installs itself.
 * @returns `{version, from}` where `from` is the SDK's directory.
 * @throws ReleaseStepError `RELEASE_MCP_SDK_VERSION` when no SDK resolves or its version is not stable SemVer.
 */
export async function bundledMcpSdkVersion(dir: string): Promise<{ version: string; from: string }> {
  const own = parseJsonFileBytes(join(dir, "package.json"), await readFile(join(dir, "package.json")), { rejectIntegralFloats: false })["name"];
  const kitDir = own === "hermes-plugin-kit" ? dir : await resolvePackageDir(dir, "hermes-plugin-kit");
  const sdkDir = (kitDir !== undefined ? await resolvePackageDir(kitDir, MCP_SDK) : undefined) ?? (await resolvePackageDir(dir, MCP_SDK));
  if (sdkDir === undefined) {
    throw new ReleaseStepError(
      "RELEASE_MCP_SDK_VERSION",
      `cannot find the MCP SDK the plugin bundles: neither hermes-plugin-kit nor ${dir} resolves ${MCP_SDK}; the install command (hermesPluginKit.install, default npm ci) must install the kit`,
    );
  }
  const version = await packageVersionIn(sdkDir);
  if (version === undefined) throw new ReleaseStepError("RELEASE_MCP_SDK_VERSION", `${join(sdkDir, "package.json")} must hold a stable SemVer version`);
  return { version, from: sdkDir };
}

/**
 * Run one gate and write its evidence (canonical pretty JSON) to
 * `<evidenceDir>/<gate>.json`, atomically (temp file + rename). A failing
 * command still writes evidence with `status`/`result` `failed`, then throws.
 *
 * @throws InterruptedError `INTERRUPTED` (`options.signal` aborted; the command's process group was stopped);
 *   ReleaseStepError `RELEASE_GATE_UNKNOWN`, `RELEASE_CONFIG_INVALID`,
 *   `RELEASE_TREE_DIRTY` (tracked changes before the run),
 *   `RELEASE_IDENTITY_MISMATCH` (with `expectedSha`),
 *   `RELEASE_MCP_SDK_VERSION` (host_contract), `RELEASE_GATE_TOOL_MISSING`
 *   (a command of the gate is not on its PATH), `SUBPROCESS_FAILED` (bash
 *   missing or timeout), `RELEASE_GATE_TREE_CHANGED` (HEAD or tracked files
 *   changed; no evidence written), `RELEASE_GATE_FAILED` (non-zero exit);
 *   IoError `IO_*` (no private HOME can be made in the temporary directory).
 */
export async function runGate(options: GateOptions): Promise<GateRunResult> {
  const gate = requireTestGate(options.gate);
  const dir = resolvePath(options.dir ?? process.cwd());
  const evidenceDir = resolvePath(options.evidenceDir ?? "evidence");
  const config = await readReleaseConfig(dir);
  const command = config.policy.gates[gate];
  const sourceSha = await headCommit(dir);
  const before = await statusPorcelain(dir, false);
  if (before.length > 0) throw new ReleaseStepError("RELEASE_TREE_DIRTY", `checkout ${dir} has tracked changes before gate ${gate}: ${before[0]}; fix: run gates on the committed source (commit or discard the changes, e.g. git stash), so the evidence names what it tested`);
  const prove = async () => {
    if (options.expectedSha !== undefined) await proveReleaseIdentity(dir, { triggerSha: options.expectedSha, version: config.version, releaseSha: sourceSha });
  };
  await prove();
  const mcpSdkVersion = gate === "host_contract" ? (await bundledMcpSdkVersion(dir)).version : undefined;
  const passEnv = requirePassableNames(options.passEnv ?? []);
  // A private HOME of its own (removed after the command), unless --pass-env HOME: command-env.ts gateHome.
  const source = options.env ?? process.env;
  const home = await gateHome(passEnv, source);
  let run: Awaited<ReturnType<typeof runProcess>>;
  let duration: number;
  const logFile = options.output === "log" ? join(evidenceDir, `${gate}.log`) : undefined;
  try {
    const env = commandEnvironment(dir, passEnv, source, home.set, home.npmBin);
    await requireGateTools(gate, command, dir, env);
    const started = performance.now();
    if (logFile !== undefined) await makeDirectory(evidenceDir, { purpose: "evidence directory (--evidence-dir)" });
    run = await runProcess("bash", ["--norc", "--noprofile", "-c", command], {
      cwd: dir,
      env,
      timeoutMs: options.timeoutMs ?? GATE_TIMEOUT_MS,
      allowFailure: true,
      output: logFile === undefined ? "stderr" : { file: logFile },
      label: `gate ${gate}`,
      // With a signal, its own process group, which the abort stops whole; without one it stays in ours,
      // so a terminal's Ctrl-C still reaches it (a detached group would outlive us).
      ...(options.signal !== undefined ? { signal: options.signal, processGroup: true } : {}),
    });
    duration = Math.round(performance.now() - started);
  } finally {
    await home.remove();
  }
  const after = await headCommit(dir);
  const changed = await statusPorcelain(dir, false);
  if (after !== sourceSha || changed.length > 0) {
    throw new ReleaseStepError("RELEASE_GATE_TREE_CHANGED", `gate ${gate} changed the checkout (HEAD ${sourceSha} -> ${after}${changed.length > 0 ? `, ${changed[0]}` : ""}); no evidence written; ` +
        `fix: make the gate's command leave tracked files and HEAD alone (write build output and reports to git-ignored paths), commit that, and release the new commit`);
  }
  await prove();
  const passed = run.code === 0;
  const state = passed ? "passed" : "failed";
  const evidence: GateEvidence = { status: state, result: state, source_sha: sourceSha, command, ...(mcpSdkVersion !== undefined ? { mcp_sdk_version: mcpSdkVersion } : {}) };
  const file = evidenceFile(evidenceDir, gate);
  await makeDirectory(dirname(file), { purpose: "evidence directory (--evidence-dir)" });
  const st = await lstat(file).catch(() => undefined);
  if (st?.isSymbolicLink() === true) throw new ReleaseStepError("RELEASE_OUTPUT_NOT_EMPTY", `evidence file ${file} is a symlink`);
  await writeFile(`${file}.partial`, canonicalJsonPretty(evidence));
  await rename(`${file}.partial`, file);
  if (!passed) {
    const notFound = run.code === 127 ? " (127: a command was not found; the output names it)" : "";
    throw new ReleaseStepError(
      "RELEASE_GATE_FAILED",
      `gate ${gate} failed: ${JSON.stringify(command)} exited ${run.code ?? "by signal"}${notFound}; evidence recorded as failed in ${file}${logFile !== undefined ? `; output in ${logFile}` : ""}; ` +
        `fix: make the gate pass in a new commit on origin's main, then release that commit (a \`release run\` workspace resumes the commit it recorded and would fail the same way: start the new run with a fresh --workspace)`,
    );
  }
  return { gate, passed, exit_code: run.code, duration_ms: duration, evidence_file: file, evidence };
}
