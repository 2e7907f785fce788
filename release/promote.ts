/**
 * `release promote`: move the source remote's `main` to the release commit
 * and create the release tag there, atomically and resumably, from the
 * staged bytes only.
 *
 * Order (docs/release-run.md, "`release promote`"; docs/architecture.md,
 * "Release: steps and data flow"):
 * 1. The remote URL is read from the checkout (`remote.<name>.url`). A URL
 *    carrying credentials is refused; a non-local remote (anything but a path
 *    or `file://`) without `SOURCE_PROMOTION_TOKEN` aborts here, before any
 *    download or git work.
 * 2. The bundle is fetched by digest through the consumer's verifying path
 *    (privacy on read, every manifest, payload and source-bundle check).
 * 3. Its source bundle is unbundled into a fresh scratch bare repository
 *    (isolated git); `release-candidate` and the peeled tag must equal the
 *    release SHA, the release commit has exactly one parent (the trigger
 *    SHA), the diff trigger..release touches only CHANGELOG.md,
 *    package.json, package-lock.json, and the tag is the exact annotated
 *    release tag (`release-tag.ts`).
 * 4. Remote state (`git ls-remote`, tags peeled): `main` = release and tag =
 *    release through the bundle's own tag object -> already promoted (resume); `main` = trigger and no tag ->
 *    `git push --atomic origin <sha>:refs/heads/main refs/tags/v<V>:refs/tags/v<V>`
 *    (a push error is only reported); anything else fails closed.
 * 5. Both remote refs are read again and must equal the release SHA (this
 *    turns an ambiguous push result into a definite one).
 *
 * The token reaches git only through a credential helper script that prints
 * it from the environment when git asks on stdin; it is never in argv, in the
 * remote URL, in the scratch repository's config values, or in any message.
 */
import { chmod, rm, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { describeValue, isGitSha } from "../src/contract/grammar.js";
import type { ReleasePolicy } from "../src/contract/policy.js";
import { RELEASE_CANDIDATE_REF, SOURCE_BUNDLE_FILE } from "../src/contract/constants.js";
import { parseReference } from "../src/contract/reference.js";
import type { TestedManifest } from "../src/contract/schemas.js";
import { git, listedTag, lsRemote, type ProcessResult } from "./git.js";
import { releaseTagProblem } from "./release-tag.js";
import { checkpoint } from "./checkpoint.js";
import { PipelineError } from "./errors.js";
import { privateTempDir } from "./output.js";
import { resolveAccess, verifiedDownload, type RegistryAccessOptions } from "./registry-access.js";

/** Files a release commit may touch (docs/release-build.md, "Identity facts (materialize and restore)"). */
export const PROMOTABLE_FILES = Object.freeze(["CHANGELOG.md", "package-lock.json", "package.json"]);

/** Environment variable holding the promotion credential. */
export const SOURCE_PROMOTION_TOKEN_ENV = "SOURCE_PROMOTION_TOKEN";
/** Optional user name sent with the token (default `x-access-token`, as GitHub expects for tokens). */
export const SOURCE_PROMOTION_USERNAME_ENV = "SOURCE_PROMOTION_USERNAME";

/** Inputs of {@link promoteRelease} (the `release promote` flags). */
export interface PromoteOptions extends RegistryAccessOptions {
  /** What the bundle must match. */
  policy: ReleasePolicy;
  /** The staged bundle reference `<repository>@sha256:<64 hex>`. */
  reference: string;
  /** A git checkout whose remote is promoted (default: the current directory). */
  repoDir?: string;
  /** The remote's name in that checkout (default `origin`). */
  remote?: string;
  /** Branch to promote (default `main`). */
  branch?: string;
  /** Timeout of each git network call in ms (default 120 000). */
  gitTimeoutMs?: number;
}

/** What {@link promoteRelease} returns (and `release promote` prints). */
export interface PromoteResult {
  bundle_reference: string;
  version: string;
  tag: string;
  release_sha: string;
  trigger_sha: string;
  /** `"pushed"` when this run pushed, `"already-promoted"` on a resume. */
  outcome: "pushed" | "already-promoted";
  /** The remote refs read at the end: `main` and `tag` (peeled) equal `release_sha`; `tag_object` is the bundle's annotated tag. */
  remote: { branch: string; main: string; tag: string; tag_object: string };
}

/** Remote refs as read by `git ls-remote`: branch head, tag peeled to its commit, and the tag's own object. */
export interface RemoteRefs {
  main: string | undefined;
  /** The commit the tag names (the peeled `^{}` line for an annotated tag). */
  tag: string | undefined;
  /** The object `refs/tags/<tag>` itself names (the tag object of an annotated tag). */
  tagObject: string | undefined;
}

/** True when a remote URL names a local repository (a path or `file://`). */
export function isLocalRemote(url: string): boolean {
  if (url.startsWith("file://")) return true;
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(url)) return false;
  // scp-like `host:path` (no slash before the colon) is a network remote.
  const colon = url.indexOf(":");
  const slash = url.indexOf("/");
  if (colon > 0 && (slash < 0 || colon < slash)) return false;
  return true;
}

/** True when a URL carries user info (`scheme://user[:secret]@host`). */
function urlHasCredentials(url: string): boolean {
  return /^[a-z][a-z0-9+.-]*:\/\/[^/]*@/i.test(url);
}

/** The remote's protocol and host the helper answers for (git's credential fields), from its URL. */
const HELPER_PROTOCOL_ENV = "HERMES_PLUGIN_KIT_PROMOTE_PROTOCOL";
const HELPER_HOST_ENV = "HERMES_PLUGIN_KIT_PROMOTE_HOST";

const HELPER_SCRIPT = `#!/bin/sh
# git credential helper of hermes-plugin-kit release promote: answers "get"
# from the environment; the token never appears in argv or in git config.
# It answers only for the remote's own protocol and host (origin rule): a
# redirect to another host or from https to http gets no credentials.
test "$1" = get || exit 0
protocol_ok=
host_ok=
while IFS= read -r line; do
  test -n "$line" || break
  case "$line" in
    "protocol=\$${HELPER_PROTOCOL_ENV}") protocol_ok=1 ;;
    "host=\$${HELPER_HOST_ENV}") host_ok=1 ;;
  esac
done
test -n "$protocol_ok" && test -n "$host_ok" || exit 0
printf 'username=%s\\n' "\${${SOURCE_PROMOTION_USERNAME_ENV}:-x-access-token}"
printf 'password=%s\\n' "\$${SOURCE_PROMOTION_TOKEN_ENV}"
`;

/** git's credential `protocol` and `host` (with a non-default port) of an http(s) remote URL; undefined otherwise. */
export function credentialOrigin(remoteUrl: string): { protocol: string; host: string } | undefined {
  let url: URL;
  try {
    url = new URL(remoteUrl);
  } catch {
    return undefined;
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return undefined;
  return { protocol: url.protocol.slice(0, -1), host: url.host };
}

interface GitContext {
  cwd: string;
  env: Record<string, string>;
  timeoutMs: number;
}

function runGit(ctx: GitContext, args: string[], allowFailure = false): Promise<ProcessResult> {
  return git(args, { cwd: ctx.cwd, env: ctx.env, timeoutMs: ctx.timeoutMs, allowFailure });
}

/**
 * Read the remote `refs/heads/<branch>` and `refs/tags/<tag>` (peeled `^{}`
 * wins for an annotated tag; the unpeeled object is kept as `tagObject`).
 * @throws ReleaseStepError `GIT_FAILED`.
 */
export async function readRemoteRefs(ctx: GitContext, remote: string, branch: string, tag: string): Promise<RemoteRefs> {
  const listed = await lsRemote(ctx.cwd, remote, [`refs/heads/${branch}`, `refs/tags/${tag}`, `refs/tags/${tag}^{}`], { env: ctx.env, timeoutMs: ctx.timeoutMs });
  const listedRelease = listedTag(listed, tag);
  return { main: listed.get(`refs/heads/${branch}`), tag: listedRelease.commit, tagObject: listedRelease.object };
}

async function revParse(ctx: GitContext, rev: string): Promise<string | undefined> {
  const r = await runGit(ctx, ["rev-parse", "--verify", "--quiet", rev], true);
  const sha = r.stdout.trim();
  return r.code === 0 && isGitSha(sha) ? sha : undefined;
}

/**
 * `release promote`: see the module comment.
 * @returns the release and trigger SHAs and whether this run pushed.
 * @throws PipelineError `PROMOTE_REMOTE_INVALID`, `PROMOTE_TOKEN_MISSING` (before any work),
 *   `PROMOTE_SOURCE_MISMATCH`, `PROMOTE_REMOTE_STATE`, `PROMOTE_NOT_CONFIRMED`,
 *   `RELEASE_REPOSITORY_MISMATCH`; the download codes of `downloadRelease`
 *   (`REFERENCE_*`, `PRIVACY_*`, `FETCH_*`, `SOURCE_BUNDLE_*`, ...); ReleaseStepError `GIT_FAILED`.
 */
export async function promoteRelease(options: PromoteOptions): Promise<PromoteResult> {
  const { policy } = options;
  const access = resolveAccess(options, policy);
  const repoDir = resolve(options.repoDir ?? process.cwd());
  const remoteName = options.remote ?? "origin";
  const branch = options.branch ?? "main";
  // 1. The remote, and the credential rule, before any work.
  const { absoluteUrl, token } = await promotionRemote(repoDir, remoteName, access.env);
  const pinned = parseReference(options.reference, policy.registryRepository);

  const work = await privateTempDir(options.tmpDir, "hpk-promote-");
  try {
    // 2. The staged bytes, verified.
    const download = await verifiedDownload(access, pinned.reference, policy, { expect: "bundle", tmpDir: work });
    const manifest = download.document as TestedManifest;
    const releaseSha = manifest.source_sha;
    const tag = manifest.tag;
    const ctx: GitContext = { cwd: work, env: { GIT_TERMINAL_PROMPT: "0" }, timeoutMs: options.gitTimeoutMs ?? 120_000 };
    // 3. Source identity in a scratch repository.
    let source: BundledSource;
    try {
      source = await proveBundledSource(ctx, join(work, "source.git"), download.localFiles.get(SOURCE_BUNDLE_FILE) as string, manifest);
    } finally {
      await download.cleanup();
    }
    const { triggerSha, tagObject } = source;
    await runGit(ctx, ["remote", "add", "origin", absoluteUrl]);

    // 4. Remote state decision. Only the git processes that reach the remote (ls-remote, push) get the credential helper and the token.
    const remoteCtx: GitContext = { ...ctx, env: await remoteGitEnvironment(work, token, absoluteUrl, access.env) };
    const before = await readRemoteRefs(remoteCtx, "origin", branch, tag);
    let outcome: PromoteResult["outcome"];
    if (before.main === releaseSha && before.tag === releaseSha && before.tagObject === tagObject) {
      outcome = "already-promoted";
    } else if (before.main === triggerSha && before.tag === undefined) {
      await checkpoint(access.hooks, "promote:before-push");
      const pushed = await runGit(remoteCtx, ["push", "--atomic", "--quiet", "origin", `${releaseSha}:refs/heads/${branch}`, `refs/tags/${tag}:refs/tags/${tag}`], true);
      if (pushed.code !== 0) {
        // A note on the progress stream (null under --quiet), never straight to stderr.
        access.progress?.write(`hermes-plugin-kit: git push --atomic exited ${pushed.code ?? "by signal"}; re-reading the remote refs to decide\n`);
      }
      await checkpoint(access.hooks, "promote:pushed");
      outcome = "pushed";
    } else {
      throw new PipelineError(
        "PROMOTE_REMOTE_STATE",
        `remote ${remoteName} is in an unexpected state: expected ${branch} at the trigger ${triggerSha} with no ${tag}, or both at the release ${releaseSha} with ${tag} the release's tag object ${tagObject}; ` +
          `found ${branch} ${before.main ?? "absent"}, ${tag} ${before.tag ?? "absent"} (tag object ${before.tagObject ?? "absent"})`,
      );
    }
    // 5. Confirm.
    const after = await readRemoteRefs(remoteCtx, "origin", branch, tag);
    if (after.main !== releaseSha || after.tag !== releaseSha || after.tagObject !== tagObject) {
      throw new PipelineError(
        "PROMOTE_NOT_CONFIRMED",
        `remote ${remoteName} was not promoted: expected ${branch} and ${tag} at ${releaseSha} (tag object ${tagObject}), found ${after.main ?? "absent"} and ${after.tag ?? "absent"} (tag object ${after.tagObject ?? "absent"})`,
      );
    }
    return {
      bundle_reference: pinned.reference,
      version: manifest.version,
      tag,
      release_sha: releaseSha,
      trigger_sha: triggerSha,
      outcome,
      remote: { branch, main: after.main, tag: after.tag, tag_object: tagObject },
    };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/**
 * The remote's URL (a local path made absolute) and the token, checked before any work.
 * @throws PipelineError `PROMOTE_REMOTE_INVALID` (no such remote, credentials in its URL),
 *   `PROMOTE_TOKEN_MISSING` (a network remote without {@link SOURCE_PROMOTION_TOKEN_ENV}).
 */
async function promotionRemote(repoDir: string, remoteName: string, env: Readonly<Record<string, string | undefined>>): Promise<{ absoluteUrl: string; token: string | undefined }> {
  const urlRead = await git(["config", "--get", `remote.${remoteName}.url`], { cwd: repoDir, allowFailure: true });
  const remoteUrl = urlRead.stdout.trim();
  if (urlRead.code !== 0 || remoteUrl.length === 0) {
    throw new PipelineError("PROMOTE_REMOTE_INVALID", `the checkout ${repoDir} has no remote ${describeValue(remoteName)}`);
  }
  if (urlHasCredentials(remoteUrl)) {
    throw new PipelineError("PROMOTE_REMOTE_INVALID", `the URL of remote ${remoteName} carries credentials; use ${SOURCE_PROMOTION_TOKEN_ENV} instead`);
  }
  const local = isLocalRemote(remoteUrl);
  const token = env[SOURCE_PROMOTION_TOKEN_ENV];
  if (!local && (token === undefined || token === "")) {
    throw new PipelineError("PROMOTE_TOKEN_MISSING", `${SOURCE_PROMOTION_TOKEN_ENV} must contain the source promotion credential for the remote ${remoteName}; nothing was done`);
  }
  return { absoluteUrl: local && !remoteUrl.startsWith("file://") ? resolve(repoDir, remoteUrl) : remoteUrl, token };
}

/**
 * The environment of the git processes that reach the remote: with a token,
 * our credential helper (written to `work`, mode 0700) replaces inherited
 * helpers through `GIT_CONFIG_*` (config from the environment, not argv),
 * answering only for the remote's protocol and host.
 */
async function remoteGitEnvironment(work: string, token: string | undefined, absoluteUrl: string, env: Readonly<Record<string, string | undefined>>): Promise<Record<string, string>> {
  const remoteEnv: Record<string, string> = { GIT_TERMINAL_PROMPT: "0" };
  if (token === undefined || token === "") return remoteEnv;
  const helper = join(work, "credential-helper");
  await writeFile(helper, HELPER_SCRIPT, { mode: 0o700 });
  await chmod(helper, 0o700);
  remoteEnv[SOURCE_PROMOTION_TOKEN_ENV] = token;
  const remote = credentialOrigin(absoluteUrl);
  if (remote !== undefined) {
    remoteEnv[HELPER_PROTOCOL_ENV] = remote.protocol;
    remoteEnv[HELPER_HOST_ENV] = remote.host;
  }
  const user = env[SOURCE_PROMOTION_USERNAME_ENV];
  if (user !== undefined && user !== "") remoteEnv[SOURCE_PROMOTION_USERNAME_ENV] = user;
  return { ...remoteEnv, GIT_CONFIG_COUNT: "3", GIT_CONFIG_KEY_1: "credential.helper", GIT_CONFIG_VALUE_1: "", GIT_CONFIG_KEY_2: "credential.helper", GIT_CONFIG_VALUE_2: helper };
}

/** What {@link proveBundledSource} proved about the release commit. */
interface BundledSource {
  /** The release commit's one parent. */
  triggerSha: string;
  /** The annotated release tag's object. */
  tagObject: string;
}

/**
 * Unbundle the source bundle into `scratch` (a bare repository; `ctx.cwd`
 * moves there) and prove the release identity: both refs at the release
 * commit, the exact release tag, one parent, only {@link PROMOTABLE_FILES} touched.
 * @throws PipelineError `PROMOTE_SOURCE_MISMATCH`; ReleaseStepError `GIT_FAILED`.
 */
async function proveBundledSource(ctx: GitContext, scratch: string, bundle: string, manifest: TestedManifest): Promise<BundledSource> {
  const releaseSha = manifest.source_sha;
  const tag = manifest.tag;
  await runGit(ctx, ["init", "--quiet", "--bare", scratch]);
  ctx.cwd = scratch;
  await runGit(ctx, ["fetch", "--quiet", "--no-tags", bundle, `${RELEASE_CANDIDATE_REF}:${RELEASE_CANDIDATE_REF}`, `refs/tags/${tag}:refs/tags/${tag}`]);
  const candidate = await revParse(ctx, `${RELEASE_CANDIDATE_REF}^{commit}`);
  const tagged = await revParse(ctx, `refs/tags/${tag}^{commit}`);
  if (candidate !== releaseSha || tagged !== releaseSha) {
    throw new PipelineError("PROMOTE_SOURCE_MISMATCH", `source bundle refs do not name the release commit ${releaseSha}: release-candidate ${candidate ?? "missing"}, ${tag} ${tagged ?? "missing"}`);
  }
  const tagProblem = await releaseTagProblem(scratch, manifest.version, releaseSha);
  if (tagProblem !== undefined) throw new PipelineError("PROMOTE_SOURCE_MISMATCH", `source bundle: ${tagProblem}`);
  const tagObject = (await revParse(ctx, `refs/tags/${tag}`)) as string;
  const parents = (await runGit(ctx, ["rev-list", "--parents", "-n", "1", releaseSha])).stdout.trim().split(" ").slice(1);
  if (parents.length !== 1 || !isGitSha(parents[0])) {
    throw new PipelineError("PROMOTE_SOURCE_MISMATCH", `release commit ${releaseSha} must have exactly one parent (the trigger commit), found ${parents.length}`);
  }
  const triggerSha = parents[0] as string;
  const touched = (await runGit(ctx, ["diff", "--name-only", "-z", "--no-renames", triggerSha, releaseSha])).stdout.split("\0").filter((p) => p.length > 0);
  const foreign = touched.filter((p) => !PROMOTABLE_FILES.includes(p));
  if (foreign.length > 0) {
    throw new PipelineError("PROMOTE_SOURCE_MISMATCH", `release commit touches files other than ${PROMOTABLE_FILES.join(", ")}: ${foreign.slice(0, 5).join(", ")}`);
  }
  return { triggerSha, tagObject };
}
