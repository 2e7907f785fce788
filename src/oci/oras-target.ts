/**
 * `OrasTarget`: the {@link Target} interface over an installed `oras` CLI
 * (>= 1.3, version checked), reference section 5.2.
 *
 * Credentials reach `oras` only on stdin (`oras login --password-stdin`) into a
 * temporary `--registry-config` file in a private directory that `close()`
 * (and process exit) removes; no secret is ever in argv. Tool output is never
 * echoed: a failure reports only `oras <subcommand> failed (exit N)`.
 * Everything `oras` downloads is verified again here (size and SHA-256) before
 * it is handed out; uploads are verified before `oras` sees them.
 */
import { randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import { lstat, mkdtemp, open, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { Readable } from "node:stream";
import { finished, pipeline } from "node:stream/promises";
import { InterruptedError, interruption } from "../contract/errors.js";
import { parseStrictJson } from "../contract/canonical-json.js";
import { LAYOUT_REF_NAME } from "../contract/constants.js";
import { describeValue, isDigest, isDiscoveryTag, tagShapeProblem } from "../contract/grammar.js";
import { parseRepository } from "../contract/reference.js";
import {
  DescriptorVerifier,
  STREAM_HIGH_WATER_MARK,
  checkDescriptor,
  isManifestMediaType,
  verifiesDescriptor,
} from "./descriptor.js";
import { requireOptionalBoolean, requireOptionalNumber, requireOptionalString, requireOptionsObject, requireStringArgument, requireStringArray, requireStringRecord } from "./arguments.js";
import { OciError } from "./errors.js";
import { BASE_ENV_NAMES, childEnvironment, NETWORK_ENV_NAMES, runBounded } from "./subprocess.js";
import { requirePlainHttpAllowed } from "./origin.js";
import { openBlobStream } from "./layout.js";
import { requireOptionalCredentials, type RegistryCredentials } from "./registry-auth.js";
import type { Descriptor, Target } from "./target.js";
import { makeDirectory } from "../contract/directory.js";

/**
 * An `oras ... fetch --descriptor` answer: exactly `{mediaType, digest, size}` (docs/oci.md, "`oras` transport").
 * @throws OciError `OCI_RESPONSE_INVALID`.
 */
function parseOrasDescriptor(out: Buffer, sub: string): Descriptor {
  let json;
  try {
    json = parseStrictJson(out, { rejectIntegralFloats: false });
  } catch {
    throw new OciError("OCI_RESPONSE_INVALID", `oras ${sub} fetch --descriptor did not print a JSON object`);
  }
  const keys = Object.keys(json).sort().join(",");
  const { mediaType, digest, size } = json;
  if (keys !== "digest,mediaType,size" || typeof mediaType !== "string" || !isDigest(digest) || typeof size !== "number" || !Number.isSafeInteger(size) || size < 1) {
    throw new OciError("OCI_RESPONSE_INVALID", `invalid OCI descriptor from oras (keys: ${keys})`);
  }
  return { mediaType, digest, size };
}

/** Options of {@link OrasTarget.open}. */
export interface OrasTargetOptions {
  /** `host[:port]/path`. */
  repository: string;
  /** The `oras` executable (default `oras` from PATH). */
  orasPath?: string;
  /** Pass `--plain-http` (loopback hosts only). Default false. */
  plainHttp?: boolean;
  /** Username and password (sent on stdin to `oras login`); `{token}` is refused. */
  credentials?: RegistryCredentials;
  /** Per-command timeout (ms). Default 600 000. */
  timeoutMs?: number;
  /** Environment the tool's allow-listed variables are read from (default `process.env`); nothing else is passed. */
  env?: NodeJS.ProcessEnv;
  /** Names of further variables of `env` the tool needs (its allow-list is PATH, HOME, temp, locale, proxies, CA settings). */
  passEnv?: readonly string[];
}

/** The keys of {@link OrasTargetOptions}. */
const ORAS_OPTION_KEYS: readonly string[] = ["repository", "orasPath", "plainHttp", "credentials", "timeoutMs", "env", "passEnv"];

/** Smallest supported `oras` version. */
export const MIN_ORAS_VERSION = [1, 3, 0] as const;
const MAX_STDOUT_BYTES = 4 * 1024 * 1024;

interface RunResult {
  code: number;
  stdout: Buffer;
}

/** Parse `oras version` output; undefined when no `Version:` line is found. */
export function parseOrasVersion(output: string): [number, number, number] | undefined {
  const m = /^\s*Version:\s*v?([0-9]+)\.([0-9]+)\.([0-9]+)/m.exec(output);
  if (m === null) return undefined;
  return [Number(m[1]), Number(m[2]), Number(m[3])];
}

const liveDirs = new Set<string>();
let exitHook = false;

/** A {@link Target} driving the `oras` CLI. */
export class OrasTarget implements Target {
  readonly repository: string;
  /** `host[:port]` of the registry. */
  readonly registry: string;
  private readonly orasPath: string;
  private readonly plainHttp: boolean;
  private readonly timeoutMs: number;
  private readonly env: NodeJS.ProcessEnv;
  private readonly passEnv: readonly string[];
  private readonly workDir: string;
  private readonly registryConfig: string;
  private closed = false;

  private constructor(options: OrasTargetOptions, registry: string, workDir: string) {
    this.repository = options.repository;
    this.registry = registry;
    this.orasPath = options.orasPath ?? "oras";
    this.plainHttp = options.plainHttp === true;
    this.timeoutMs = options.timeoutMs ?? 600_000;
    this.env = options.env ?? process.env;
    this.passEnv = options.passEnv ?? [];
    this.workDir = workDir;
    this.registryConfig = path.join(workDir, "registry-config.json");
  }

  /**
   * Check the `oras` version (>= 1.3), create the private work directory and,
   * with credentials, `oras login --password-stdin` into its registry config.
   * @throws OciError `OCI_ARGUMENT_INVALID` (before anything runs or is made: `options` not an object
   *   `{ repository, orasPath?, plainHttp?, credentials?, timeoutMs?, env?, passEnv? }`, e.g. a number or nothing;
   *   an unknown key; `repository` not a non-empty string; a value of the wrong kind), `OCI_REPOSITORY_INVALID`,
   *   `OCI_PLAIN_HTTP_REFUSED`, `OCI_TOOL_MISSING`, `OCI_TOOL_VERSION`, `OCI_AUTH_FAILED` (token credentials, or
   *   login refused), `OCI_TOOL_FAILED`, `OCI_TIMEOUT`.
   */
  static async open(options: OrasTargetOptions): Promise<OrasTarget> {
    const call = "OrasTarget.open(options)";
    requireOptionsObject(options, call, ORAS_OPTION_KEYS, ["repository"]);
    requireStringArgument(options.repository, call, "options.repository", "the registry repository host[:port]/path");
    requireOptionalString(options.orasPath, call, "options.orasPath", "the oras executable");
    requireOptionalBoolean(options.plainHttp, call, "options.plainHttp");
    requireOptionalCredentials(options.credentials, call, "options.credentials");
    requireOptionalNumber(options.timeoutMs, call, "options.timeoutMs", "milliseconds", 1);
    requireStringRecord(options.env, call, "options.env", "the environment the tool's variables are read from", true);
    if (options.passEnv !== undefined) requireStringArray(options.passEnv, call, "options.passEnv", "names of further environment variables the tool needs");
    let parsed;
    try {
      parsed = parseRepository(options.repository);
    } catch {
      throw new OciError("OCI_REPOSITORY_INVALID", `invalid registry repository for oras: ${describeValue(options.repository)}`);
    }
    if (parsed.kind !== "registry") throw new OciError("OCI_REPOSITORY_INVALID", `oras needs a registry repository, not ${describeValue(options.repository)}`);
    requirePlainHttpAllowed(parsed.host, options.plainHttp === true);
    if (options.credentials !== undefined && "token" in options.credentials) {
      throw new OciError("OCI_AUTH_FAILED", "the oras transport needs a username and password (REGISTRY_USERNAME/REGISTRY_PASSWORD)");
    }
    const workDir = await mkdtemp(path.join(os.tmpdir(), "hpk-oras-"));
    OrasTarget.track(workDir);
    const target = new OrasTarget(options, parsed.registry, workDir);
    try {
      await target.checkVersion();
      if (options.credentials !== undefined && "username" in options.credentials) {
        const { username, password } = options.credentials;
        const args = ["login", "--registry-config", target.registryConfig, "--username", username, "--password-stdin"];
        if (target.plainHttp) args.push("--plain-http");
        args.push(parsed.registry);
        const result = await target.run(args, `${password}\n`);
        if (result.code !== 0) throw new OciError("OCI_AUTH_FAILED", `oras login failed (exit ${result.code})`);
      }
      return target;
    } catch (error) {
      await target.close();
      throw error;
    }
  }

  private static track(dir: string): void {
    liveDirs.add(dir);
    if (!exitHook) {
      exitHook = true;
      process.once("exit", () => {
        for (const d of liveDirs) rmSync(d, { recursive: true, force: true });
      });
    }
  }

  /** Remove the temporary registry config and downloads. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await rm(this.workDir, { recursive: true, force: true });
    liveDirs.delete(this.workDir);
  }

  private async checkVersion(): Promise<void> {
    const result = await this.run(["version"]);
    const version = result.code === 0 ? parseOrasVersion(result.stdout.toString("utf8")) : undefined;
    if (version === undefined) throw new OciError("OCI_TOOL_VERSION", `oras version failed or printed no version (exit ${result.code})`);
    const [maj, min, pat] = version;
    const [wantMaj, wantMin, wantPat] = MIN_ORAS_VERSION;
    const ok = maj > wantMaj || (maj === wantMaj && (min > wantMin || (min === wantMin && pat >= wantPat)));
    if (!ok) throw new OciError("OCI_TOOL_VERSION", `oras ${version.join(".")} is older than ${MIN_ORAS_VERSION.join(".")}`);
  }

  /**
   * Run `oras` with an argument array through the bounded runner; stdout
   * bounded, stderr discarded (never echoed). Its environment is an
   * allow-list (program lookup, home, temp, locale, proxies, CA settings):
   * credentials reach it only on stdin (`login --password-stdin`).
   */
  private async run(args: string[], stdin?: string, signal?: AbortSignal): Promise<RunResult> {
    const run = await runBounded(this.orasPath, args, {
      ...(signal === undefined ? {} : { signal }),
      env: childEnvironment([...BASE_ENV_NAMES, ...NETWORK_ENV_NAMES, ...this.passEnv], { NO_COLOR: "1" }, this.env),
      timeoutMs: this.timeoutMs,
      maxOutputBytes: MAX_STDOUT_BYTES,
      input: stdin ?? "",
      output: "stdout",
    });
    const outcome = run.outcome;
    if (outcome.kind === "aborted") throw interruption(signal) ?? new InterruptedError(undefined, `oras ${args[0] ?? ""} was stopped`);
    if (outcome.kind === "start-failed") {
      if (outcome.errno === "ENOENT" || outcome.errno === "EACCES") throw new OciError("OCI_TOOL_MISSING", `oras executable not found or not runnable`);
      throw new OciError("OCI_TOOL_FAILED", `oras ${args[0] ?? ""} could not start`);
    }
    if (outcome.kind === "timeout") throw new OciError("OCI_TIMEOUT", `oras ${args[0] ?? ""} timed out after ${this.timeoutMs} ms`);
    if (outcome.kind === "output-limit") throw new OciError("OCI_BODY_TOO_LARGE", `oras ${args[0] ?? ""} printed more than ${MAX_STDOUT_BYTES} bytes`);
    return { code: outcome.kind === "exited" ? (outcome.code ?? -1) : -1, stdout: run.stdout };
  }


  private remoteFlags(prefix = ""): string[] {
    const flags = [`--${prefix}registry-config`, this.registryConfig];
    if (this.plainHttp) flags.push(`--${prefix}plain-http`);
    return flags;
  }

  /** Run a subcommand; non-zero exit -> `OCI_TOOL_FAILED` naming only the subcommand and exit code. */
  private async must(subcommand: string, args: string[], signal?: AbortSignal): Promise<Buffer> {
    const result = await this.run(args, undefined, signal);
    if (result.code !== 0) throw new OciError("OCI_TOOL_FAILED", `oras ${subcommand} failed (exit ${result.code})`);
    return result.stdout;
  }

  private ref(tagOrDigest: string): string {
    return isDigest(tagOrDigest) ? `${this.repository}@${tagOrDigest}` : `${this.repository}:${tagOrDigest}`;
  }

  /**
   * `oras manifest fetch --descriptor`: the output must be exactly
   * `{mediaType, digest, size}` (docs/oci.md, "`oras` transport").
   * @throws OciError `OCI_TAG_INVALID`, `OCI_TOOL_FAILED`, `OCI_RESPONSE_INVALID`, `OCI_DIGEST_MISMATCH`.
   */
  async resolve(tagOrDigest: string, signal?: AbortSignal): Promise<Descriptor> {
    if (!isDigest(tagOrDigest) && !isDiscoveryTag(tagOrDigest)) throw new OciError("OCI_TAG_INVALID", `invalid OCI tag or digest ${describeValue(tagOrDigest)}: expected sha256:<64 lowercase hex> or a tag (${tagShapeProblem(tagOrDigest)})`);
    const out = await this.must("manifest fetch", ["manifest", "fetch", "--descriptor", ...this.remoteFlags(), this.ref(tagOrDigest)], signal);
    const found = parseOrasDescriptor(out, "manifest");
    if (isDigest(tagOrDigest) && found.digest !== tagOrDigest) {
      throw new OciError("OCI_DIGEST_MISMATCH", `oras resolved ${tagOrDigest} to ${found.digest}`);
    }
    return found;
  }

  private tempPath(label: string): string {
    return path.join(this.workDir, `${label}-${randomBytes(6).toString("hex")}`);
  }

  /**
   * `oras blob fetch --output` (or `manifest fetch --output`) into the private
   * work directory, then a verifying stream of that file (removed when done).
   * @throws OciError `OCI_TOOL_FAILED`, `OCI_SIZE_MISMATCH` (file size differs), and stream errors
   *   `OCI_SIZE_MISMATCH` / `OCI_DIGEST_MISMATCH`.
   */
  async fetch(desc: Descriptor, signal?: AbortSignal): Promise<Readable> {
    checkDescriptor(desc);
    const file = this.tempPath("fetch");
    const manifest = isManifestMediaType(desc.mediaType);
    const args = manifest
      ? ["manifest", "fetch", "--output", file, ...this.remoteFlags(), this.ref(desc.digest)]
      : ["blob", "fetch", "--output", file, ...this.remoteFlags(), this.ref(desc.digest)];
    try {
      await this.must(manifest ? "manifest fetch" : "blob fetch", args, signal);
      const st = await lstat(file).catch(() => null);
      if (st === null || !st.isFile()) throw new OciError("OCI_TOOL_FAILED", `oras ${manifest ? "manifest" : "blob"} fetch wrote no file`);
      if (st.size !== desc.size) throw new OciError("OCI_SIZE_MISMATCH", `OCI blob ${desc.digest}: expected ${desc.size} bytes, oras wrote ${st.size}`);
    } catch (error) {
      await rm(file, { force: true });
      throw error;
    }
    const stream = openBlobStream(file, desc);
    stream.once("close", () => void rm(file, { force: true }));
    return stream;
  }

  /**
   * `oras blob fetch --descriptor` (or manifest): present when it exits 0 and
   * reports `desc`'s size; anything else absent.
   * @throws OciError `OCI_RESPONSE_INVALID` (not a descriptor), `OCI_DIGEST_MISMATCH` (another digest).
   */
  async exists(desc: Descriptor, signal?: AbortSignal): Promise<boolean> {
    checkDescriptor(desc);
    const sub = isManifestMediaType(desc.mediaType) ? "manifest" : "blob";
    const result = await this.run([sub, "fetch", "--descriptor", ...this.remoteFlags(), this.ref(desc.digest)], undefined, signal);
    if (result.code !== 0) return false;
    const found = parseOrasDescriptor(result.stdout, sub);
    if (found.digest !== desc.digest) throw new OciError("OCI_DIGEST_MISMATCH", `oras reports ${found.digest} for ${desc.digest}`);
    return found.size === desc.size;
  }

  /**
   * Verify `content` into the work directory, then `oras blob push` (or
   * `oras manifest push --media-type`) by digest.
   * @throws OciError `OCI_SIZE_MISMATCH`, `OCI_DIGEST_MISMATCH` (nothing handed to oras), `OCI_TOOL_FAILED`.
   */
  async push(desc: Descriptor, content: Readable, signal?: AbortSignal): Promise<void> {
    checkDescriptor(desc);
    await makeDirectory(this.workDir, { mode: 0o700, purpose: "ORAS work directory" });
    const file = this.tempPath("push");
    try {
      const handle = await open(file, "wx", 0o600);
      const out = handle.createWriteStream({ highWaterMark: STREAM_HIGH_WATER_MARK });
      try {
        const stop = signal === undefined ? [] : [{ signal }];
        if (verifiesDescriptor(content, desc)) await pipeline(content, out, ...stop);
        else await pipeline(content, new DescriptorVerifier(desc, `OCI content ${desc.digest}`), out, ...stop);
      } catch (error) {
        await finished(out).catch(() => undefined);
        throw error;
      }
      if (isManifestMediaType(desc.mediaType)) {
        await this.must("manifest push", ["manifest", "push", "--media-type", desc.mediaType, ...this.remoteFlags(), this.ref(desc.digest), file], signal);
      } else {
        await this.must("blob push", ["blob", "push", ...this.remoteFlags(), this.ref(desc.digest), file], signal);
      }
    } finally {
      await rm(file, { force: true });
    }
    // Like RegistryTarget: the push counts only when the registry now reports the content with its size.
    if (!(await this.exists(desc, signal))) {
      throw new OciError("OCI_SIZE_MISMATCH", `oras pushed ${desc.digest} (${desc.size} bytes) but the registry does not report it with that size`);
    }
  }

  /** `oras tag <repo>@<digest> <tag>`. @throws OciError `OCI_TAG_INVALID`, `OCI_TOOL_FAILED`. */
  async tag(desc: Descriptor, tag: string, signal?: AbortSignal): Promise<void> {
    if (!isDiscoveryTag(tag)) throw new OciError("OCI_TAG_INVALID", `invalid OCI tag ${describeValue(tag)}: ${tagShapeProblem(tag)}`);
    checkDescriptor(desc);
    await this.must("tag", ["tag", ...this.remoteFlags(), this.ref(desc.digest), tag], signal);
  }

  /** `oras repo tags`: one tag per line. @throws OciError `OCI_TOOL_FAILED`, `OCI_RESPONSE_INVALID`. */
  async tags(): Promise<string[]> {
    const out = await this.must("repo tags", ["repo", "tags", ...this.remoteFlags(), this.repository]);
    const lines = out.toString("utf8").split("\n").map((l) => l.trim()).filter((l) => l.length > 0);
    const seen = new Set<string>();
    for (const line of lines) {
      if (!isDiscoveryTag(line)) throw new OciError("OCI_RESPONSE_INVALID", `oras repo tags printed a line that is not a tag`);
      if (seen.has(line)) throw new OciError("OCI_RESPONSE_INVALID", `oras repo tags listed ${describeValue(line)} twice: ambiguous`);
      seen.add(line);
    }
    return lines;
  }

  /**
   * Push a local OCI layout's ref (default `payload`) to `<repo>:<tag>`:
   * `oras cp --from-oci-layout <layout>:<ref> <repo>:<tag> --no-tty` (docs/oci.md, "`oras` transport": push a layout).
   * @throws OciError `OCI_TAG_INVALID`, `OCI_TOOL_FAILED`.
   */
  async pushLayout(layoutDir: string, tag: string, refName: string = LAYOUT_REF_NAME): Promise<void> {
    if (!isDiscoveryTag(tag)) throw new OciError("OCI_TAG_INVALID", `invalid OCI tag ${describeValue(tag)}: ${tagShapeProblem(tag)}`);
    await this.must("cp", ["cp", "--from-oci-layout", ...this.remoteFlags("to-"), "--no-tty", `${layoutDir}:${refName}`, this.ref(tag)]);
  }

  /**
   * Registry-to-registry bind of `<repo>@<digest>` to `<repo>:<tag>` (docs/oci.md, "`oras` transport": bind).
   * @throws OciError `OCI_TAG_INVALID`, `OCI_DESCRIPTOR_INVALID`, `OCI_TOOL_FAILED`.
   */
  async copyDigestToTag(digest: string, tag: string): Promise<void> {
    if (!isDigest(digest)) throw new OciError("OCI_DESCRIPTOR_INVALID", `expected sha256 digest, found ${describeValue(digest)}`);
    if (!isDiscoveryTag(tag)) throw new OciError("OCI_TAG_INVALID", `invalid OCI tag ${describeValue(tag)}: ${tagShapeProblem(tag)}`);
    await this.must("cp", ["cp", ...this.remoteFlags("from-"), ...this.remoteFlags("to-"), "--no-tty", this.ref(digest), this.ref(tag)]);
  }
}
