/**
 * The signing key a release policy names (docs/provenance.md, "release run and
 * the policy's key"; docs/architecture.md, "Policy: where expectations come
 * from"): `hermesPluginKit.provenance.key` in the package.json of the release
 * commit is the repository path of the PEM public key every release must be
 * attested with. Both are read from git objects of that commit, never from
 * the working tree or the current directory.
 *
 * When the policy names a key, `release run` needs the private half, from
 * `--attest-key FILE` or the file named by {@link ATTEST_KEY_FILE_ENV} (never
 * the key material itself in argv or the environment), and refuses before its
 * first write when it is missing or is another key; its attest step then
 * always runs and is re-verified on resume with the policy's public key.
 */
import { createHash, createPublicKey, type KeyObject } from "node:crypto";
import { readFile } from "node:fs/promises";
import { parseStrictJson } from "../src/contract/canonical-json.js";
import { isGitSha } from "../src/contract/grammar.js";
import { policyFromPackageJson } from "../src/contract/policy.js";
import { keyFileKind, parseP256PublicKeyPem } from "../src/contract/key-pem.js";
import { ProvenanceError } from "../src/contract/provenance-error.js";
import { PipelineError, ReleaseStepError } from "./errors.js";
import { git, headCommit } from "./git.js";

/** Environment variable naming the FILE of the attestation private key (PEM, mode 0600) for `release run`. */
export const ATTEST_KEY_FILE_ENV = "HERMES_PLUGIN_KIT_ATTEST_KEY_FILE";

/** The key a release policy names, as read from one commit. */
export interface PolicySigningKey {
  /** `hermesPluginKit.provenance.key`: the public key's path inside the repository. */
  path: string;
  /** The commit both package.json and the key were read from. */
  commit: string;
  /** The PEM public key (SPKI), as committed. */
  publicKeyPem: string;
  /** `sha256:<hex>` of the key's DER SPKI, for messages. */
  fingerprint: string;
}

/** `sha256:<hex>` of a key's DER SubjectPublicKeyInfo. */
export function keyFingerprint(key: KeyObject): string {
  const publicKey = key.type === "public" ? key : createPublicKey(key);
  return `sha256:${createHash("sha256").update(publicKey.export({ format: "der", type: "spki" })).digest("hex")}`;
}

async function showBlob(repoDir: string, commit: string, path: string): Promise<Buffer | undefined> {
  const shown = await git(["show", `${commit}:${path}`], { cwd: repoDir, allowFailure: true });
  return shown.code === 0 ? shown.stdoutBytes : undefined;
}

/**
 * The signing key the release policy of `commit` names, or `undefined` when it names none.
 * @throws ReleaseStepError `RELEASE_CONFIG_INVALID` (no package.json in the commit, not strict JSON, the named key
 *   missing from the commit); ProvenanceError `PROVENANCE_KEY_NOT_PUBLIC` (a private key or certificate: a committed
 *   private key is called leaked), `PROVENANCE_KEY_INVALID`, `PROVENANCE_KEY_UNSUPPORTED` (src/contract/key-pem.ts);
 *   ReleaseContractError `POLICY_INVALID` (a malformed field).
 */
export async function policySigningKey(repoDir: string, commit: string): Promise<PolicySigningKey | undefined> {
  const origin = `package.json of commit ${commit}`;
  const pkg = await showBlob(repoDir, commit, "package.json");
  if (pkg === undefined) throw new ReleaseStepError("RELEASE_CONFIG_INVALID", `${origin} cannot be read`);
  let doc: unknown;
  try {
    doc = parseStrictJson(pkg, { rejectIntegralFloats: false });
  } catch (error) {
    throw new ReleaseStepError("RELEASE_CONFIG_INVALID", `${origin} is not strict JSON: ${(error as Error).message}`);
  }
  const path = policyFromPackageJson(doc, undefined, origin).provenanceKey;
  if (path === undefined) return undefined;
  const pem = await showBlob(repoDir, commit, path);
  const named = `the public key ${path} named by hermesPluginKit.provenance.key of ${origin}`;
  if (pem === undefined) throw new ReleaseStepError("RELEASE_CONFIG_INVALID", `${named} is not in that commit: commit the PEM public key there, or fix the path`);
  // A private key committed as the policy's key is refused by kind (never derived from), and nothing of it is shown.
  let key: KeyObject;
  try {
    key = parseP256PublicKeyPem(pem, named);
  } catch (error) {
    const kind = keyFileKind(pem).kind;
    if (error instanceof ProvenanceError && (kind === "private-key" || kind === "encrypted-private-key")) {
      throw new ProvenanceError(error.code, `${error.message}; it is in the history of commit ${commit}, so treat that private key as leaked: make a new key pair and commit only its public half`);
    }
    throw error;
  }
  return { path, commit, publicKeyPem: pem.toString("utf8"), fingerprint: keyFingerprint(key) };
}

/**
 * Require that the private key in `keyFile` is the private half of the policy's key.
 * @throws PipelineError `RUN_ATTEST_KEY_MISMATCH`; ProvenanceError `PROVENANCE_KEY_INVALID` (unreadable, too open, not P-256).
 */
export async function requireMatchingKey(policyKey: PolicySigningKey, keyFile: string, from: string): Promise<void> {
  const { readSigningKeyFile } = await import("./provenance-sign.js");
  const found = keyFingerprint(await readSigningKeyFile(keyFile));
  if (found !== policyKey.fingerprint) {
    throw new PipelineError(
      "RUN_ATTEST_KEY_MISMATCH",
      `the signing key ${keyFile} (${from}) has public key ${found}, but the release policy (hermesPluginKit.provenance.key of package.json at ${policyKey.commit}) names ${policyKey.path}, ${policyKey.fingerprint}: ` +
        `pass the private key of ${policyKey.path}, or commit the public key of the one you hold and name it there`,
    );
  }
}

/** What {@link resolveRunSigningKey} decided. */
export interface RunSigningKey {
  /** The private key file to attest with (undefined: the run does not attest). */
  keyFile?: string;
  /** The key the policy names (set: attesting is required). */
  policyKey?: PolicySigningKey;
}

/**
 * The signing key of a `release run` (or its dry run), decided before anything is written: the
 * trigger is the workspace's recorded trigger, else the source checkout's HEAD; the release commit
 * changes only the version files, so its policy is the trigger's. Without a key in the policy:
 * `--attest-key` as given (today's behaviour).
 * @throws PipelineError `RUN_ATTEST_KEY_REQUIRED` (the policy names a key, no file given),
 *   `RUN_ATTEST_KEY_MISMATCH`; the codes of {@link policySigningKey} and of reading the key.
 */
export async function resolveRunSigningKey(input: { source: string; statePath: string; attestKey?: string | undefined; env: Readonly<Record<string, string | undefined>> }): Promise<RunSigningKey> {
  const recorded = await recordedTrigger(input.statePath);
  // A workspace of another source is refused by the run itself (RUN_WORKSPACE_INVALID) before it writes.
  if (recorded !== undefined && recorded.source !== input.source) return input.attestKey === undefined ? {} : { keyFile: input.attestKey };
  const trigger = recorded?.trigger ?? (await headCommit(input.source));
  const policyKey = await policySigningKey(input.source, trigger);
  if (policyKey === undefined) return input.attestKey === undefined ? {} : { keyFile: input.attestKey };
  const fromEnv = input.env[ATTEST_KEY_FILE_ENV];
  const keyFile = input.attestKey ?? (fromEnv === undefined || fromEnv === "" ? undefined : fromEnv);
  if (keyFile === undefined) {
    throw new PipelineError(
      "RUN_ATTEST_KEY_REQUIRED",
      `the release policy (hermesPluginKit.provenance.key of package.json at ${trigger}) requires every release to be attested with ${policyKey.path} (${policyKey.fingerprint}), and no private key was given: ` +
        `pass --attest-key FILE or set ${ATTEST_KEY_FILE_ENV} to the path of its private key (PEM, mode 0600); nothing was written`,
    );
  }
  await requireMatchingKey(policyKey, keyFile, input.attestKey !== undefined ? "--attest-key" : ATTEST_KEY_FILE_ENV);
  return { keyFile, policyKey };
}

/** The source and trigger recorded in an existing run state, read without the lock (a malformed state is left for the run to refuse). */
async function recordedTrigger(statePath: string): Promise<{ source: unknown; trigger: string } | undefined> {
  try {
    const state = parseStrictJson(await readFile(statePath));
    return isGitSha(state["trigger_sha"]) ? { source: state["source"], trigger: state["trigger_sha"] } : undefined;
  } catch {
    return undefined;
  }
}
