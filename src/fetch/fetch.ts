/**
 * `fetch`: download a digest-pinned release bundle or receipt, verify every
 * byte, and only then install it (docs/fetch.md "hermes-plugin-kit fetch").
 *
 * Order (checks G1-G11):
 * reference pinned to the repository -> privacy on read (no bootstrap, no
 * write) -> manifest descriptor and bytes (<= 1 MiB, digest of the reference)
 * -> manifest structure (exact keys, artifactType, empty config, layer
 * descriptors, title allow-list, inventory) -> config blob and each layer
 * streamed through SHA-256 into a fresh private temp directory (mode 0700)
 * -> payload checks (checksum file, tested manifest vs. tarball, source
 * bundle in an isolated git; or `verifyFinalReceipt` for a receipt) ->
 * safe install into the output directory. The temp directory is always
 * removed; on any failure the output directory is not created or unchanged.
 * An aborted `signal` (the CLI's SIGINT/SIGTERM) stops every step at once:
 * transfers stop (a request that cannot is abandoned, holding only the handle of
 * its removed `.partial` file), the source bundle's git is stopped with the
 * helpers it started and waited for, an install under way is rolled back and
 * its lock released; then the temp directory (the `.partial` files and the
 * scratch repository live inside it) is removed, and only then is
 * `InterruptedError` thrown: nothing the fetch made is left, nor made later.
 * The options are checked before any network or disk work (`entry-options.ts`).
 */
import { chmod, lstat, mkdir, readFile, rm, stat } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import type { JsonObject } from "../contract/canonical-json.js";
import { OCI_MANIFEST_MEDIA_TYPE, PAYLOAD_CHECKSUMS_FILE, RECEIPT_FILE, RELEASE_MANIFEST_FILE, SOURCE_BUNDLE_FILE } from "../contract/constants.js";
import { ReleaseContractError, hasCode, interruption, throwIfInterrupted } from "../contract/errors.js";
import { describeValue, isNpmPackageName } from "../contract/grammar.js";
import { readReleaseJsonFile, verifyManifestDist } from "../contract/manifest.js";
import { bundleChecksumPaths, bundleLayerTitles, parsePayloadChecksums } from "../contract/payload.js";
import { checkDeclaredGates, gatesDeclaredBy, policyForDocument, type GateCommands, type PolicySources, type ReleasePolicy } from "../contract/policy.js";
import { isGhcrOrigin, parseReference, type PinnedReference, type Repository } from "../contract/reference.js";
import { requirePlainHttpAllowed } from "../oci/origin.js";
import { verifyFinalReceipt } from "../contract/release-document.js";
import type { PublishedReceipt, TestedManifest } from "../contract/schemas.js";
import { openTarget } from "../oci/open.js";
import { credentialsFromDockerConfig } from "../oci/credential-store.js";
import { incompleteCredentialsMessage, registryCredentialsFromEnv, type RegistryCredentials } from "../oci/registry-auth.js";
import { fetchBlobToFile, fetchManifest, forEachBounded } from "../oci/transfer.js";
import type { Descriptor, ReadOnlyTarget } from "../oci/target.js";
import { FetchError, RELEASE_FILES_DISAGREE_FIX } from "./errors.js";
import { OciError } from "../oci/errors.js";
import { checkInstallTarget, checkReplaceTarget, installPayload, replaceInstall } from "./install.js";
import { TransferProgress } from "./progress.js";
import { packageCredentialLogin, requirePrivateForRead } from "./privacy.js";
import { checkManifestDescriptor, checkReleaseManifest, type ArtifactKind, type CheckedReleaseManifest } from "./manifest-checks.js";
import type { ProvenanceCheckOptions, ProvenanceSummary } from "./provenance.js";
import { verifySourceBundleFile } from "./source-bundle.js";
import { DOWNLOAD_OPTION_KEYS, DOWNLOAD_OPTION_KINDS, FETCH_OPTION_KEYS, pickOptions, requireArtifactKind, requireDownloadPolicy, requireCredentialSourceOptions, requireEnvironmentArgument, requireKnownOptions, requireOptionKinds, requireOptionsObject, requireProvenanceCheck, requireRepositoryArgument, requireStringArgument, requireStringOption, snapshotEntryOptions } from "./entry-options.js";
import { exceedsPathLimits, makeDirectorySync, makeTempDirectory, pathTooLong } from "../contract/directory.js";

/** Registry credentials (from the environment only, never argv); the OCI layer's type. */
export type { RegistryCredentials };

/** Opens a read target for a repository (the OCI layer's `openTarget`). */
export type OpenReadTarget = (repository: Repository, options: { plainHttp: boolean; credentials?: RegistryCredentials }) => Promise<ReadOnlyTarget>;
/** The privacy gate on read (`requirePrivateForRead` of `privacy.ts`). */
export type RequirePrivateForRead = (repository: Repository, options: { plainHttp: boolean; env: Readonly<Record<string, string | undefined>> }) => Promise<unknown>;

/** Options of {@link downloadRelease} and {@link fetchRelease}. */
export interface DownloadOptions {
  /**
   * Called with the checked manifest (G3-G8) before any blob is downloaded; a throw stops the download
   * with nothing written (`fetch` checks there that every file's install path is one the system accepts).
   */
  onManifest?: (manifest: CheckedReleaseManifest) => void;
  /** `R`: `<repository>@sha256:<64 hex>`. */
  reference: string;
  /**
   * `P`: the pinned repository `R` must name (default: the repository `R` names, as `fetch` without
   * `--repository`; messages then say the pin came from the pinned reference).
   */
  repository?: string;
  /** Plain HTTP (loopback registries only). */
  plainHttp?: boolean;
  /** Registry credentials (see {@link credentialsFromEnv}). */
  credentials?: RegistryCredentials;
  /** Refuse the other artifact kind (`FETCH_ARTIFACT_TYPE_MISMATCH`); anything but `"bundle"` or `"receipt"` is `POLICY_INVALID`. */
  expect?: ArtifactKind;
  /**
   * What the release documents must match besides the repository (which is
   * always `repository`): `package` (default: the package the tested manifest
   * or receipt names, which must be an npm package name) and pinned gate
   * commands (`gates`; a gate not pinned may have run any command, and a
   * bundle's evidence must always name the gates its own tarball's
   * package.json declares). `sources` names where each expectation came
   * from, for error messages (see `src/contract/policy.ts`).
   */
  policy?: { package?: string; gates?: Partial<GateCommands>; sources?: PolicySources };
  /**
   * Where the progress bar of the layer downloads goes (default stderr); it is
   * drawn only on a TTY and only once the transfer has run `progressDelayMs`
   * (default 1000 ms). `null` silences.
   */
  progress?: NodeJS.WritableStream | null;
  progressDelayMs?: number;
  /** On a `progress` stream that is not a TTY, write plain progress lines instead of nothing (the CLI's `--verbose`). */
  progressLines?: boolean;
  /** Parent of the private temp directory (default the OS temp directory). */
  tmpDir?: string;
  /**
   * Stop the fetch (the CLI aborts it on SIGINT/SIGTERM): every step stops at
   * once (a git under way is stopped and waited for, an install under way is
   * rolled back), the private temp directory is removed, and only then does
   * the call reject with InterruptedError `INTERRUPTED` (the abort's reason,
   * when it is one). A request that cannot stop at once is abandoned holding
   * only the open handle of its removed `.partial` file: it creates nothing.
   */
  signal?: AbortSignal;
  /** Environment for the privacy gate (default `process.env`). */
  env?: Readonly<Record<string, string | undefined>>;
  /** Injected dependencies (tests; defaults are the real OCI layer and privacy gate). */
  openTarget?: OpenReadTarget;
  requirePrivate?: RequirePrivateForRead;
}

/** One installed (or verified) payload file. */
export interface FetchedFile {
  /** Payload path, e.g. `dist/demo-plugin-1.0.0.tgz`. */
  path: string;
  /** SHA-256, 64 lowercase hex. */
  sha256: string;
  /** Size in bytes. */
  size: number;
}

/** The `--json` result of `fetch`: `{reference, artifactType, version, files, install_time}`. */
export interface FetchResult {
  reference: string;
  artifactType: string;
  version: string;
  files: FetchedFile[];
  /**
   * What installing the tarball makes npm run or link outside the package
   * (the verified `install_time` record, equal to what the tarball holds;
   * `[]` for none): install with `npm install --ignore-scripts` unless you
   * reviewed it.
   */
  install_time: string[];
}

/** A verified download still in its private temp directory. */
export interface VerifiedDownload extends FetchResult {
  kind: ArtifactKind;
  /** The payload directory (`payload`, mode 0700) inside the private temp directory `hpk-fetch-*` the download made under `tmpDir` (default `TMPDIR`); gone after {@link cleanup}. */
  dir: string;
  /** Payload path -> local file inside {@link dir}. */
  localFiles: Map<string, string>;
  /** The verified tested manifest (bundle) or published receipt (receipt). */
  document: TestedManifest | PublishedReceipt;
  /** The policy the document was verified against. */
  policy: ReleasePolicy;
  /** The release's manifest descriptor (the subject its attestations refer to). */
  subject: Descriptor;
  /** The (privacy-checked) target it was read from, for the provenance lookup. */
  target: ReadOnlyTarget;
  /**
   * Remove the private temp directory the download made (`dir`'s parent `hpk-fetch-*`: every file of
   * {@link localFiles} and, for a bundle, the source bundle's scratch git repository). Call it once you are done
   * with the files (after `installPayload`, which links or copies them into the output directory), in a
   * `finally`: nothing removes the directory after `downloadRelease` resolved (on a rejection, an abort included,
   * it is already removed and there is nothing to call). Idempotent: a second call, or one after the directory
   * went by other means, resolves and does nothing (`rm -rf`).
   * @throws the file system's error (e.g. `EACCES`) when the directory cannot be removed (its permissions changed by the caller).
   */
  cleanup(): Promise<void>;
}

/**
 * Registry credentials from the environment: `REGISTRY_USERNAME` +
 * `REGISTRY_PASSWORD` or `REGISTRY_TOKEN` (the OCI layer's `registryCredentialsFromEnv`), else for `ghcr.io` `GH_TOKEN` (user name `oauth2`, as
 * GHCR accepts any user name with a token). Returns undefined when none apply.
 * @throws FetchError `FETCH_CREDENTIALS_INCOMPLETE` when only one of the pair is set, `FETCH_CREDENTIALS_INVALID`
 *   when a value holds a line break or another control character (the message names the variable, never the value).
 */
export function credentialsFromEnv(given: Repository, env: Readonly<Record<string, string | undefined>> = process.env): RegistryCredentials | undefined {
  const repository = requireRepositoryArgument(given, "credentialsFromEnv");
  requireEnvironmentArgument(env, "credentialsFromEnv");
  if (repository.kind !== "registry") return undefined;
  let base: RegistryCredentials | undefined;
  try {
    base = registryCredentialsFromEnv(env as NodeJS.ProcessEnv);
  } catch {
    throw new FetchError("FETCH_CREDENTIALS_INCOMPLETE", incompleteCredentialsMessage(env as NodeJS.ProcessEnv));
  }
  if (base !== undefined) {
    for (const name of ["REGISTRY_USERNAME", "REGISTRY_PASSWORD", "REGISTRY_TOKEN"]) refuseControlCharacters(name, env[name]);
    return base;
  }
  const token = env["GH_TOKEN"];
  if (isGhcrOrigin(repository) && token !== undefined && token !== "") {
    refuseControlCharacters("GH_TOKEN", token);
    return { username: "oauth2", password: token };
  }
  return undefined;
}

/**
 * A credential variable holding a line break or another control character (a pasted token with its
 * newline) cannot go into an HTTP header: refused by name, never echoed.
 * @throws FetchError `FETCH_CREDENTIALS_INVALID`.
 */
function refuseControlCharacters(name: string, value: string | undefined): void {
  if (value === undefined || !/[\u0000-\u001f\u007f]/.test(value)) return;
  throw new FetchError("FETCH_CREDENTIALS_INVALID", `${name} holds a line break or another control character, which no HTTP header may carry; fix: set it without them (e.g. a token read from a file: "$(tr -d '\\r\\n' < token-file)")`);
}

/** Where registry credentials are looked up besides the environment, and who hears which source was used. */
export interface CredentialSourceOptions {
  /** Docker client config file (`--registry-config`); default `$DOCKER_CONFIG/config.json`, else `~/.docker/config.json`. */
  registryConfig?: string;
  /**
   * Told, in one line without any secret, when `registryConfig` was given and is not read: environment
   * credentials come first ({@link registryConfigNote}). The CLI prints it on stderr (not under `--quiet`).
   */
  onNote?: (line: string) => void;
}

/**
 * The environment variables {@link credentialsFromEnv} takes credentials from for `repository`, by name
 * (`REGISTRY_USERNAME/REGISTRY_PASSWORD`, `REGISTRY_TOKEN`, `GH_TOKEN`); undefined when none applies.
 */
export function environmentCredentialSource(given: Repository, env: Readonly<Record<string, string | undefined>> = process.env): string | undefined {
  const repository = requireRepositoryArgument(given, "environmentCredentialSource");
  requireEnvironmentArgument(env, "environmentCredentialSource");
  if (repository.kind !== "registry") return undefined;
  const set = (name: string): boolean => (env[name] ?? "") !== "";
  if (set("REGISTRY_USERNAME") || set("REGISTRY_PASSWORD")) return "REGISTRY_USERNAME/REGISTRY_PASSWORD";
  if (set("REGISTRY_TOKEN")) return "REGISTRY_TOKEN";
  if (isGhcrOrigin(repository) && set("GH_TOKEN")) return "GH_TOKEN";
  return undefined;
}

/**
 * The one line that says a given `--registry-config` is not read, or undefined when it is (or none was
 * given). Environment credentials come first, as explicit credentials beat the auth file in ORAS
 * (`--username`/`--password` over `--registry-config`) and skopeo (`--creds` over `--authfile`); an
 * `oci-layout:` store needs none. Names variables and the file, never a value.
 */
export function registryConfigNote(given: Repository, env: Readonly<Record<string, string | undefined>>, registryConfig: string | undefined): string | undefined {
  const repository = requireRepositoryArgument(given, "registryConfigNote");
  requireEnvironmentArgument(env, "registryConfigNote");
  if (registryConfig !== undefined) requireStringArgument(registryConfig, "registryConfigNote", "registryConfig", "the Docker client config file given");
  if (registryConfig === undefined) return undefined;
  if (repository.kind !== "registry") return `note: --registry-config ${registryConfig} is not read: ${repository.repository} is a local oci-layout store (no credentials)`;
  const source = environmentCredentialSource(repository, env);
  if (source === undefined) return undefined;
  return `note: using ${source} from the environment for ${repository.registry}; --registry-config ${registryConfig} is not read (environment credentials come first, like ORAS --username/--password and skopeo --creds); unset ${source.replace("/", " and ")} to use the file`;
}

/**
 * Registry credentials as the release steps log in (docs/release-publish.md): `REGISTRY_USERNAME` +
 * `REGISTRY_PASSWORD` when set; else for `ghcr.io` the login of `GH_TOKEN`'s
 * user (`GET /user` through the GitHub API at `GITHUB_API_URL`) with the token
 * as password; else the Docker client configuration (`registryConfig`, else
 * `$DOCKER_CONFIG` or `~/.docker/config.json`: auths and credential helpers,
 * see `src/oci/credential-store.ts`). A `registryConfig` that is not read because the
 * environment's credentials come first is reported through `onNote` ({@link registryConfigNote}).
 * Prefer this over the synchronous
 * {@link credentialsFromEnv}, whose ghcr.io fallback uses a placeholder user name.
 * @throws FetchError `FETCH_CREDENTIALS_INCOMPLETE`; PrivacyError codes of
 *   `packageCredentialLogin` (`PRIVACY_API_FAILED`, `PRIVACY_CREDENTIAL_UNKNOWN`, ...);
 *   OciError `OCI_CREDENTIAL_CONFIG_INVALID`, `OCI_CREDENTIAL_HELPER_FAILED`, `OCI_CREDENTIAL_UNSUPPORTED`.
 */
export async function resolveRegistryCredentials(
  repository: Repository,
  env: Readonly<Record<string, string | undefined>> = process.env,
  options: CredentialSourceOptions = {},
): Promise<RegistryCredentials | undefined> {
  requireCredentialSourceOptions(options, "resolveRegistryCredentials");
  const basic = credentialsFromEnv(repository, env);
  if (basic === undefined) return credentialsFromConfig(repository, env, options);
  reportUnreadConfig(repository, env, options);
  // Only the ghcr.io fallback (GH_TOKEN, no REGISTRY_* credentials) needs the
  // token's login from the GitHub API; REGISTRY_* credentials are used as given.
  const fromGitHubToken = (env["REGISTRY_USERNAME"] ?? "") === "" && (env["REGISTRY_TOKEN"] ?? "") === "";
  if (!fromGitHubToken || !("password" in basic)) return basic;
  const login = await packageCredentialLogin({ env });
  return { username: login, password: basic.password };
}

/**
 * The environment's credentials ({@link credentialsFromEnv}: `REGISTRY_*`, `GH_TOKEN` for ghcr.io),
 * else those the Docker client configuration holds for the repository's registry host; a given
 * `registryConfig` that is not read, or that has nothing for the host, is reported through `onNote`.
 * @throws the codes of {@link credentialsFromEnv} and of `credentialsFromDockerConfig`.
 */
export async function credentialsFromEnvOrConfig(
  repository: Repository,
  env: Readonly<Record<string, string | undefined>> = process.env,
  options: CredentialSourceOptions = {},
): Promise<RegistryCredentials | undefined> {
  requireCredentialSourceOptions(options, "credentialsFromEnvOrConfig");
  const fromEnv = credentialsFromEnv(repository, env);
  if (fromEnv === undefined) return credentialsFromConfig(repository, env, options);
  reportUnreadConfig(repository, env, options);
  return fromEnv;
}

function reportUnreadConfig(repository: Repository, env: Readonly<Record<string, string | undefined>>, options: CredentialSourceOptions): void {
  const note = registryConfigNote(repository, env, options.registryConfig);
  if (note !== undefined) options.onNote?.(note);
}

async function credentialsFromConfig(repository: Repository, env: Readonly<Record<string, string | undefined>>, options: CredentialSourceOptions): Promise<RegistryCredentials | undefined> {
  if (repository.kind !== "registry") {
    reportUnreadConfig(repository, env, options);
    return undefined;
  }
  const found = await credentialsFromDockerConfig(repository.registry, { env, ...(options.registryConfig === undefined ? {} : { configFile: options.registryConfig }) });
  // A config the user named that has nothing for this host: say so now, before a registry's 401 does.
  if (found === undefined && options.registryConfig !== undefined) {
    options.onNote?.(`note: --registry-config ${options.registryConfig} has no auths entry or credential helper for ${repository.registry}; continuing without credentials`);
  }
  return found;
}

async function defaultOpenTarget(repository: Repository, options: { plainHttp: boolean; credentials?: RegistryCredentials }): Promise<ReadOnlyTarget> {
  return openTarget(repository.repository, options);
}

async function defaultRequirePrivate(repository: Repository, options: { plainHttp: boolean; env: Readonly<Record<string, string | undefined>> }): Promise<unknown> {
  return requirePrivateForRead(repository, { plainHttp: options.plainHttp, env: options.env });
}

/** Layers downloaded at once. */
const LAYER_CONCURRENCY = 4;

function policyFor(doc: JsonObject, repository: string, overrides: DownloadOptions["policy"]): ReleasePolicy {
  const pkg = overrides?.package ?? doc["package"];
  if (!isNpmPackageName(pkg)) {
    throw new FetchError("FETCH_PACKAGE_INVALID", `the release names package ${describeValue(doc["package"])}, which is not an npm package name, so no file of it can be checked; fix: do not install this release, and tell its publisher (a release's package is its package.json name)`);
  }
  return policyForDocument(
    { repository, package: pkg, gates: overrides?.gates ?? {}, sources: { repository: "--repository", ...overrides?.sources, ...(overrides?.package === undefined ? { package: "the release's own package name" } : {}) } },
    doc,
  );
}

async function requireRegularFile(path: string, label: string): Promise<void> {
  const st = await lstat(path).catch(() => null);
  if (st === null || !st.isFile()) throw new FetchError("FETCH_BLOB_MISSING", `missing or unsafe OCI blob: ${label} is no longer a regular file in the fetch's private temp directory (something removed or replaced it during the fetch); fix: check what else writes under TMPDIR, then fetch again`);
}

/** The options of a download entry point with the pinned repository filled in ({@link checkDownloadOptions}). */
type CheckedDownloadOptions<T extends DownloadOptions> = T & { repository: string };

const DOWNLOAD_OPTIONS_SHAPE = "{ reference, repository?, expect?, policy?, plainHttp?, credentials?, tmpDir?, signal?, ... }";

/**
 * The options of {@link inspectRelease}, {@link downloadRelease} and {@link fetchRelease}, checked before any
 * network or disk work, with the pinned repository filled in as `fetch` does: `repository`, else the
 * repository of the digest-pinned reference (`policy.sources.repository` then says "the pinned reference").
 * Idempotent (a checked value passes again unchanged).
 * @throws ReleaseContractError `POLICY_INVALID` (options not an object, `repository` not a string, `expect` not
 *   `"bundle"` or `"receipt"`, a malformed `policy`), the codes of G1 (`REFERENCE_NOT_PINNED`,
 *   `REFERENCE_REPOSITORY_MISMATCH`, `REPOSITORY_INVALID`, ...).
 */
function checkDownloadOptions<T extends DownloadOptions>(given: T, call: string, shape = DOWNLOAD_OPTIONS_SHAPE, known: readonly string[] = DOWNLOAD_OPTION_KEYS): CheckedDownloadOptions<T> {
  requireOptionsObject(given, call, shape);
  const options = snapshotEntryOptions(given, call);
  requireKnownOptions(options, known, call);
  requireStringOption(options, "repository", call, "the registry repository you trust, e.g. ghcr.io/acme/plugin", true);
  requireOptionKinds(options, DOWNLOAD_OPTION_KINDS, call);
  requireArtifactKind(options.expect, call);
  requireDownloadPolicy(options.policy, call);
  if (options.repository !== undefined) {
    pinnedReference(options);
    return options as CheckedDownloadOptions<T>;
  }
  const repository = parseReference(options.reference).repository.repository;
  const sources = { repository: "the pinned reference", ...options.policy?.sources };
  return { ...options, repository, policy: { ...options.policy, sources } };
}

/** G1: the reference names the pinned repository; a mismatch names where the pin came from. */
function pinnedReference(options: DownloadOptions): PinnedReference {
  try {
    return parseReference(options.reference, options.repository);
  } catch (error) {
    const source = options.policy?.sources?.repository;
    if (hasCode(error, "REFERENCE_REPOSITORY_MISMATCH") && source !== undefined) {
      throw new ReleaseContractError(
        "REFERENCE_REPOSITORY_MISMATCH",
        `${(error as Error).message} (the pinned repository is from ${source}; pass the reference of that repository, or pin its repository with --repository)`,
      );
    }
    throw error;
  }
}

/** What {@link inspectRelease} found: the pinned reference, the open target and the checked manifest. */
export interface InspectedRelease {
  pinned: PinnedReference;
  target: ReadOnlyTarget;
  /** The manifest after checks G3-G8 (no blob was downloaded). */
  manifest: CheckedReleaseManifest;
}

/**
 * Steps G1-G8 of a fetch without downloading any blob: the reference is
 * pinned to `repository`, the privacy gate passes (read only), and the
 * manifest (at most 1 MiB, digest of the reference) passes every structural
 * check. `fleet verify` uses it to check a pinned bundle against its receipt.
 * @throws the G1-G8 codes listed on {@link downloadRelease}.
 */
export async function inspectRelease(given: DownloadOptions): Promise<InspectedRelease> {
  const options = checkDownloadOptions(given, "inspectRelease");
  const pinned = pinnedReference(options);
  const repository = pinned.repository;
  const plainHttp = options.plainHttp === true;
  requirePlainHttpAllowed(repository, plainHttp);
  const env = options.env ?? process.env;
  await (options.requirePrivate ?? defaultRequirePrivate)(repository, { plainHttp, env });
  const target = await (options.openTarget ?? defaultOpenTarget)(repository, {
    plainHttp,
    ...(options.credentials === undefined ? {} : { credentials: options.credentials }),
  });
  // G3: the descriptor names the pinned digest; fetchManifest checks the 1 MiB ceiling, the size and the digest of the bytes.
  let manifestBytes: Buffer;
  try {
    const resolved = await target.resolve(pinned.digest);
    checkManifestDescriptor({ mediaType: resolved.mediaType, digest: resolved.digest, size: resolved.size }, pinned.digest);
    manifestBytes = await fetchManifest(target, { mediaType: resolved.mediaType, digest: resolved.digest, size: resolved.size });
  } catch (error) {
    throw servedOtherBytes(error, pinned.reference, "manifest");
  }
  // G4-G8.
  const manifest = checkReleaseManifest(manifestBytes, {
    expectedDigest: pinned.digest,
    ...(options.expect === undefined ? {} : { expectedKind: options.expect }),
    ...(options.policy?.package === undefined ? {} : { packageName: options.policy.package }),
  });
  return { pinned, target, manifest };
}

/**
 * Download and verify a release bundle or receipt into a fresh private temp
 * directory (`hpk-fetch-*` under `tmpDir`, default `TMPDIR`); nothing is installed. On success the caller
 * owns the directory and must call the result's {@link VerifiedDownload.cleanup} when done with the files
 * (idempotent; docs/fetch.md "Downloading without installing"); on any failure the directory is removed
 * here before the promise rejects.
 *
 * @throws
 *   ReleaseContractError `REFERENCE_NOT_PINNED` (a tag, no digest),
 *   `REFERENCE_REPOSITORY_MISMATCH` (another repository), `REPOSITORY_INVALID` (G1);
 *   PrivacyError `PRIVACY_*` (G2, before any download);
 *   OciError `OCI_PLAIN_HTTP_REFUSED` (`--plain-http` off loopback);
 *   FetchError: the codes of `checkReleaseManifest`
 *   (`FETCH_MANIFEST_*`, `FETCH_ARTIFACT_TYPE_*`, `FETCH_CONFIG_UNEXPECTED`,
 *   `FETCH_LAYER_*`) (G3-G8);
 *   OciError `OCI_NOT_FOUND`, `OCI_DIGEST_MISMATCH`, `OCI_SIZE_MISMATCH`,
 *   `OCI_MANIFEST_TOO_LARGE`, ... from the transfer (G9, 3.14);
 *   ReleaseContractError codes of `verifyManifest` and `parsePayloadChecksums`,
 *   FetchError `PAYLOAD_SHA256_MISMATCH`, `SOURCE_BUNDLE_*`,
 *   `FETCH_PATHS_MANIFEST_MISMATCH` (G10, 3.9); codes of `verifyFinalReceipt` for a receipt;
 *   InterruptedError `INTERRUPTED` (`signal` aborted; everything the download made is already removed);
 *   `POLICY_INVALID` and the G1 codes for malformed options, before any network or disk work.
 */
export async function downloadRelease(given: DownloadOptions): Promise<VerifiedDownload> {
  const options = checkDownloadOptions(given, "downloadRelease");
  throwIfInterrupted(options.signal);
  // The privacy gate and the manifest read: a registry that accepts and never answers must not hold a
  // Ctrl-C for the requests' timeouts (nothing made yet; the abandoned requests write nothing and end with the process).
  const { pinned, target, manifest: checked } = await untilInterrupted(options.signal, () => inspectRelease(options));
  throwIfInterrupted(options.signal);
  options.onManifest?.(checked);

  // G9: a fresh private temp directory. Every step below stops on the signal (see downloadInto), and the
  // directory is removed once they stopped: an abort rejects only after that removal.
  const dir = await makeTempDirectory("hpk-fetch-", options.tmpDir);
  const cleanup = () => rm(dir, { recursive: true, force: true });
  return downloadInto(dir, cleanup, pinned, target, checked, options);
}

/**
 * Run `work`, which makes nothing on disk, until it settles or `signal` aborts. On abort the promise
 * rejects with the interruption at once; the abandoned work's own outcome is ignored.
 */
function untilInterrupted<T>(signal: AbortSignal | undefined, work: () => Promise<T>): Promise<T> {
  if (signal === undefined) return work();
  return new Promise<T>((resolvePromise, rejectPromise) => {
    let settled = false;
    const stop = () => {
      if (settled) return;
      settled = true;
      rejectPromise(interruption(signal));
    };
    signal.addEventListener("abort", stop, { once: true });
    work().then(
      (value) => {
        signal.removeEventListener("abort", stop);
        if (settled) return;
        settled = true;
        resolvePromise(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", stop);
        if (settled) return;
        settled = true;
        rejectPromise(error);
      },
    );
    if (signal.aborted) stop();
  });
}

/**
 * G9-G10 of {@link downloadRelease} inside the private temp directory `dir`. Each step stops on `options.signal`
 * (transfers, the source bundle's git, checks between steps), so on any failure, an abort included, `cleanup`
 * runs once nothing of the download still writes, and the rejection follows it.
 */
async function downloadInto(
  dir: string,
  cleanup: () => Promise<void>,
  pinned: PinnedReference,
  target: ReadOnlyTarget,
  checked: CheckedReleaseManifest,
  options: CheckedDownloadOptions<DownloadOptions>,
): Promise<VerifiedDownload> {
  const signal = options.signal;
  try {
    throwIfInterrupted(signal);
    await chmod(dir, 0o700);
    const st = await stat(dir);
    if ((st.mode & 0o077) !== 0 || (typeof process.getuid === "function" && st.uid !== process.getuid())) {
      throw new FetchError("FETCH_TEMP_UNSAFE", `temp directory ${dir} is not private to the current user`);
    }
    const configPath = join(dir, ".config.blob");
    await fetchBlobToFile(target, checked.config, configPath, signal === undefined ? {} : { signal });
    await requireRegularFile(configPath, "config");
    await rm(configPath);
    throwIfInterrupted(signal);
    const payloadDir = join(dir, "payload");
    await mkdir(payloadDir, { mode: 0o700 });
    const localFiles = await downloadLayers(target, checked, payloadDir, options);
    throwIfInterrupted(signal);
    // The source bundle's scratch repository goes inside the private temp directory, so one removal takes everything.
    const verified = checked.kind === "bundle" ? await verifyBundlePayload(payloadDir, localFiles, checked, { ...options, tmpDir: dir }) : await verifyReceiptPayload(localFiles, options);
    const files: FetchedFile[] = [];
    for (const layer of [...checked.layers].sort((a, b) => (a.title < b.title ? -1 : a.title > b.title ? 1 : 0))) {
      files.push({ path: layer.title, sha256: layer.descriptor.digest.slice("sha256:".length), size: layer.descriptor.size });
    }
    throwIfInterrupted(signal);
    return {
      reference: pinned.reference,
      artifactType: checked.artifactType,
      version: verified.document.version,
      files,
      install_time: [...(verified.document.install_time ?? [])],
      kind: checked.kind,
      dir: payloadDir,
      localFiles,
      document: verified.document,
      policy: verified.policy,
      subject: { mediaType: OCI_MANIFEST_MEDIA_TYPE, digest: checked.digest, size: checked.size },
      target,
      cleanup,
    };
  } catch (error) {
    await cleanup();
    throw interruption(signal) ?? servedOtherBytes(error, pinned.reference, "blob");
  }
}

/** The `OCI_NOT_FOUND` errors of a blob missing under a manifest that is there ({@link isIncompleteRelease}). */
const incompleteReleases = new WeakSet<object>();

function markIncomplete(error: OciError): OciError {
  incompleteReleases.add(error);
  return error;
}

/**
 * Whether `error` is the `OCI_NOT_FOUND` of a download whose pinned manifest is in the registry but a blob it
 * names is not (the release is incomplete there), as opposed to a pinned manifest that is missing.
 */
export function isIncompleteRelease(error: unknown): boolean {
  return typeof error === "object" && error !== null && incompleteReleases.has(error);
}

/**
 * An `OCI_DIGEST_MISMATCH` / `OCI_SIZE_MISMATCH` of the verifying download, with what it means for the
 * consumer: the registry served other bytes than the pinned digest stands for (or the transfer was cut
 * short); an `OCI_NOT_FOUND` says whether the pinned manifest (`reading` "manifest") or a blob it names
 * ("blob": the release is incomplete there) is missing. Same code; other errors pass through.
 */
function servedOtherBytes(error: unknown, reference: string, reading: "manifest" | "blob"): unknown {
  // A blob the pinned manifest names is not there: the release in this repository is incomplete.
  if (error instanceof OciError && error.code === "OCI_NOT_FOUND" && reading === "blob" && !error.message.includes("fix:")) {
    return markIncomplete(new OciError(
      "OCI_NOT_FOUND",
      `${error.message}: the registry holds the pinned manifest ${reference} but not this blob it names, so the release is incomplete in this repository ` +
        "(the blob was deleted or garbage-collected, or its push was cut short); nothing was installed; " +
        "fix: report it to the release's publisher, who can push the same release again (its digests do not change), then fetch again",
      { cause: error },
    ));
  }
  // The pinned manifest is not there: a typo in the digest, another repository, or a release deleted since.
  if (error instanceof OciError && error.code === "OCI_NOT_FOUND" && !error.message.includes("fix:")) {
    return new OciError(
      "OCI_NOT_FOUND",
      `${error.message}: the registry holds no manifest with the pinned digest of ${reference}; nothing was installed; ` +
        "fix: check the reference you copied (the digest and the repository); for a release you know by tag, hermes-plugin-kit resolve --reference <repository>:<tag> prints its digest reference",
      { cause: error },
    );
  }
  if (!(error instanceof OciError) || (error.code !== "OCI_DIGEST_MISMATCH" && error.code !== "OCI_SIZE_MISMATCH")) return error;
  return new OciError(
    error.code,
    `${error.message}: the registry served other bytes than the pinned digest ${reference} stands for${error.code === "OCI_SIZE_MISMATCH" ? " (or the transfer was cut short)" : ""}; nothing was installed; ` +
      "fix: do not install these bytes (nor the release from another source); retry once, and if it fails again report it to the release's publisher: the registry or the release may have been tampered with",
    { cause: error },
  );
}

/** G9: every layer into `payloadDir/<title>`, up to 4 at once, under one progress bar; titles in manifest order. */
async function downloadLayers(target: ReadOnlyTarget, checked: CheckedReleaseManifest, payloadDir: string, options: DownloadOptions): Promise<Map<string, string>> {
  const total = checked.layers.reduce((n, layer) => n + layer.descriptor.size, 0);
  const bar = new TransferProgress(options.progress === undefined ? process.stderr : options.progress, "fetch", total, {
    ...(options.progressDelayMs === undefined ? {} : { delayMs: options.progressDelayMs }),
    plainLines: options.progressLines === true,
  });
  throwIfInterrupted(options.signal);
  for (const layer of checked.layers) makeDirectorySync(dirname(join(payloadDir, layer.title)), { mode: 0o700, purpose: "private temp directory" });
  try {
    // After a failure (an abort included) nothing new starts and the running transfers are awaited.
    await forEachBounded(checked.layers, LAYER_CONCURRENCY, async (layer) => {
      const part = bar.part();
      await fetchBlobToFile(target, layer.descriptor, join(payloadDir, layer.title), { onProgress: (bytes) => part(bytes), ...(options.signal === undefined ? {} : { signal: options.signal }) });
    });
  } catch (error) {
    bar.finish(false);
    throw error;
  }
  bar.finish();
  const localFiles = new Map<string, string>();
  for (const layer of checked.layers) {
    const local = join(payloadDir, layer.title);
    await requireRegularFile(local, layer.title);
    localFiles.set(layer.title, local);
  }
  return localFiles;
}

async function verifyBundlePayload(
  payloadDir: string,
  localFiles: Map<string, string>,
  checked: CheckedReleaseManifest,
  options: CheckedDownloadOptions<DownloadOptions>,
): Promise<{ document: TestedManifest; policy: ReleasePolicy }> {
  // P1: the tested manifest against dist/.
  const doc = await readReleaseJsonFile(localFiles.get(RELEASE_MANIFEST_FILE) as string);
  const policy = policyFor(doc, options.repository, options.policy);
  const { manifest, tarball } = await verifyManifestDist(doc, join(payloadDir, "dist"), policy);
  // The release's own verified bytes declare the gates that had to run: the
  // evidence must name exactly the commands its tarball's package.json declares.
  const tarballName = (manifest.artifacts[0] as TestedManifest["artifacts"][number]).filename;
  const origin = `package/package.json of ${tarballName}`;
  checkDeclaredGates(manifest.evidence, gatesDeclaredBy(tarball.packageJson, origin), origin);
  // G10: the layer titles are exactly this release's.
  const expectedTitles = bundleLayerTitles(policy.package, manifest.version);
  const titles = [...localFiles.keys()].sort();
  if (titles.length !== expectedTitles.length || titles.some((t, i) => t !== expectedTitles[i])) {
    throw new FetchError(
      "FETCH_PATHS_MANIFEST_MISMATCH",
      `OCI paths do not match the tested manifest: expected ${expectedTitles.join(", ")}, found ${titles.join(", ")} (OCI manifest ${checked.digest})${RELEASE_FILES_DISAGREE_FIX}`,
    );
  }
  // P2-P4: the checksum file.
  const checksums = parsePayloadChecksums(await readFile(localFiles.get(PAYLOAD_CHECKSUMS_FILE) as string), bundleChecksumPaths(policy.package, manifest.version));
  // P5: each listed file. Its SHA-256 was computed while it streamed in (the
  // layer digest, verified by fetchBlobToFile), so it is compared, not re-read.
  const layerSha = new Map(checked.layers.map((l) => [l.title, l.descriptor.digest.slice("sha256:".length)]));
  for (const [path, sha256] of checksums) {
    await requireRegularFile(localFiles.get(path) as string, path);
    const actual = layerSha.get(path);
    if (actual !== sha256) {
      throw new FetchError("PAYLOAD_SHA256_MISMATCH", `payload SHA-256 mismatch: ${path} hashes to ${actual ?? "nothing"}, the checksum file says ${sha256}${RELEASE_FILES_DISAGREE_FIX}`);
    }
  }
  // P6: the source bundle.
  await verifySourceBundleFile(localFiles.get(SOURCE_BUNDLE_FILE) as string, {
    sourceSha: manifest.source_sha,
    tag: manifest.tag,
    packageName: policy.package,
    version: manifest.version,
  }, { ...(options.tmpDir === undefined ? {} : { tmpDir: options.tmpDir }), ...(options.signal === undefined ? {} : { signal: options.signal }) });
  return { document: manifest, policy };
}

async function verifyReceiptPayload(localFiles: Map<string, string>, options: CheckedDownloadOptions<DownloadOptions>): Promise<{ document: PublishedReceipt; policy: ReleasePolicy }> {
  const doc = await readReleaseJsonFile(localFiles.get(RECEIPT_FILE) as string);
  const policy = policyFor(doc, options.repository, options.policy);
  return { document: verifyFinalReceipt(doc, policy), policy };
}

/** Options of {@link fetchRelease}: {@link DownloadOptions} plus the output directory `D`. */
export interface FetchReleaseOptions extends DownloadOptions {
  outputDir: string;
  /**
   * Verify the release's provenance before anything is installed (`fetch
   * --provenance`; `src/fetch/provenance.ts`, loaded only when asked).
   */
  provenance?: ProvenanceCheckOptions;
  /** Replace the whole output directory after verification (`--replace`, see `replaceInstall`). */
  replace?: boolean;
  /**
   * Called once the install has committed (files linked, or with `replace` the new directory renamed into
   * place). From then on the fetch resolves with its result even if `signal` aborts: an interruption after
   * the commit is too late to undo it, and the command reports success (the CLI exits 0, not 130/143).
   */
  onCommit?: () => void;
}

/**
 * Every file a release installs under `outputDir` (and the temporary names the install uses next to it:
 * `.<name>.hpk-<12 hex>.tmp`, with `replace` the sibling `.<dir>.hpk-new-<12 hex>`) must be a path the
 * system accepts, checked once the manifest names the files and before any blob is downloaded.
 * @throws IoError `IO_PATH_TOO_LONG` naming the longest name or the path length and the fix.
 */
function requireInstallablePaths(outputDir: string, titles: readonly string[], replace: boolean): void {
  const root = resolve(outputDir);
  const base = replace ? join(dirname(root), `.${basename(root)}.hpk-new-${"0".repeat(12)}`) : root;
  for (const title of titles) {
    const longest = join(base, dirname(title), `.${basename(title)}.hpk-${"0".repeat(12)}.tmp`);
    if (exceedsPathLimits(longest)) {
      throw pathTooLong(outputDir, join(root, title), "output directory (--output-dir)");
    }
  }
}

/**
 * `hermes-plugin-kit fetch`: {@link downloadRelease}, then install into
 * `outputDir` with `installPayload` (no symlinks, no overwrite of different
 * bytes, identical files untouched). The temp directory is always removed.
 * @returns `{reference, artifactType, version, files: [{path, sha256, size}], install_time}` (files sorted by path).
 * With `provenance`, the release's attestation is found and verified between
 * the download and the install (codes of `verifyDownloadProvenance`).
 * @throws IoError `IO_NOT_A_DIRECTORY`, `IO_DIRECTORY_UNWRITABLE` (the output directory cannot be created or
 *   written; checked before the download), `IO_PATH_TOO_LONG` (a file's install path is longer than the
 *   system accepts; checked once the manifest names the files, before any blob is downloaded), FetchError `INSTALL_OUTPUT_NOT_EMPTY` (`D` holds entries no
 *   release writes; checked before the download), the codes of {@link downloadRelease} and of `installPayload`
 *   (`INSTALL_OUTPUT_SYMLINK`, `INSTALL_UNSAFE_PATH`, `INSTALL_OVERWRITE_REFUSED`, `INSTALL_FAILED`);
 *   InterruptedError `INTERRUPTED` (`signal` aborted: everything the fetch made removed, nothing installed, before
 *   the call rejects). Malformed options are refused before any network or disk work: ReleaseContractError
 *   `POLICY_INVALID` (options not an object, `outputDir` not a non-empty string, `repository` not a string,
 *   `expect` not `"bundle"` or `"receipt"`, a malformed `policy`), ProvenanceError `PROVENANCE_POLICY_INVALID`
 *   (`provenance` not `{ policy, trustedRoot? }`, or its policy incomplete), the G1 codes.
 */
export async function fetchRelease(given: FetchReleaseOptions): Promise<FetchResult & { provenance?: ProvenanceSummary }> {
  const options = checkDownloadOptions(given, "fetchRelease", "{ reference, outputDir, repository?, expect?, policy?, provenance?, replace?, signal?, ... }", FETCH_OPTION_KEYS);
  requireStringOption(options, "outputDir", "fetchRelease", "the output directory to install into");
  requireOptionKinds(options, { replace: "boolean", onCommit: "function" }, "fetchRelease");
  requireProvenanceCheck(options.provenance, "fetchRelease");
  // Fail fast: an output directory that cannot be created or written is refused before the download.
  await (options.replace === true ? checkReplaceTarget : checkInstallTarget)(options.outputDir);
  const download = await downloadRelease({ ...pickOptions(options, DOWNLOAD_OPTION_KEYS), reference: options.reference, onManifest: (manifest) => {
    requireInstallablePaths(options.outputDir, manifest.layers.map((l) => l.title), options.replace === true);
    options.onManifest?.(manifest);
  } });
  try {
    let provenance: ProvenanceSummary | undefined;
    const check = options.provenance;
    if (check !== undefined) {
      // Network reads only (nothing on disk): an abort stops waiting at once; the download is removed below.
      provenance = await untilInterrupted(options.signal, async () => (await import("./provenance.js")).verifyDownloadProvenance(download, check));
    }
    throwIfInterrupted(options.signal);
    await (options.replace === true ? replaceInstall : installPayload)(
      options.outputDir,
      download.files.map((f) => ({ path: f.path, source: download.localFiles.get(f.path) as string, sha256: f.sha256 })),
      { ...(options.signal === undefined ? {} : { signal: options.signal }), ...(options.onCommit === undefined ? {} : { onCommit: options.onCommit }) },
    );
    // Committed: nothing below checks the signal.
    return { reference: download.reference, artifactType: download.artifactType, version: download.version, files: download.files, install_time: download.install_time, ...(provenance === undefined ? {} : { provenance }) };
  } finally {
    await download.cleanup();
  }
}

