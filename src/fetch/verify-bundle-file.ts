/**
 * `verify-provenance --bundle FILE ... FILE_OR_DIGEST`: verify one Sigstore
 * bundle file offline for one artifact, with the argument shapes of the
 * Sigstore conformance protocol's `verify-bundle` (sigstore-conformance
 * `docs/cli_protocol.md`): a certificate identity and OIDC issuer, or a PEM
 * public key; an optional trusted root file (default: the public-good root
 * embedded in `@sigstore/tuf`). Nothing is downloaded.
 */
import { describeValue, nearestName } from "../contract/grammar.js";
import { describeUnreadFile, readRegularFile } from "../contract/fs-async.js";
import { createHash } from "node:crypto";
import { lstat, readFile } from "node:fs/promises";
import { readP256PublicKeyFile } from "../contract/key-pem.js";
import { hashFile } from "../contract/manifest.js";
import { ProvenanceError } from "../contract/provenance-error.js";
import { embeddedTrustedRoot, readTrustedRootFile } from "./sigstore-trust.js";
import { exactIdentity, MAX_SIGSTORE_BUNDLE_BYTES, parseSigstoreBundle, publicKeyHint, verifySigstoreBundle, type BundleArtifact, type ExpectedSigner } from "./sigstore-verify.js";

/** Options of {@link verifyBundleFile}. */
export interface VerifyBundleFileOptions {
  /** The Sigstore bundle file (at most 1 MiB). */
  bundle: string;
  /** The artifact: a file path, or `sha256:<64 hex>` of it (DSSE bundles only). */
  artifact: string;
  /** Expected signer: a PEM public key file, or a certificate identity and issuer. */
  signer: { keyFile: string } | { identity: string; issuer: string };
  /** A trusted root file (default: the embedded public-good root). */
  trustedRoot?: string;
}

/** What {@link verifyBundleFile} proved. */
export interface VerifyBundleFileResult {
  ok: true;
  bundle: string;
  artifact: string;
  /** `sha256:<hex>` of the artifact (given or computed). */
  artifactDigest: string;
  /** `dsse` (the artifact is a subject of the signed in-toto statement) or `message` (a message signature). */
  content: "dsse" | "message";
  /** `certificate <SAN> (<issuer>)` or `key <hint>`. */
  signer: string;
}

/** The options of {@link verifyBundleFile}, checked before anything is read (see its `@throws`). */
function checkVerifyBundleFileOptions(options: unknown): asserts options is VerifyBundleFileOptions {
  const refuse = (message: string): never => {
    throw new ProvenanceError("PROVENANCE_POLICY_INVALID", `verifyBundleFile ${message}`);
  };
  const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === "object" && !Array.isArray(value);
  const isText = (value: unknown): value is string => typeof value === "string" && value !== "";
  if (!isObject(options)) return refuse(`needs its options as an object { bundle, artifact, signer, trustedRoot? }, found ${describeValue(options)}`);
  const known = ["bundle", "artifact", "signer", "trustedRoot"];
  const unknown = Object.keys(options).filter((key) => !known.includes(key));
  if (unknown.length > 0) {
    const near = nearestName(unknown[0] as string, known);
    refuse(`option ${JSON.stringify(unknown[0])} is not one it reads (it reads ${known.join(", ")})${near === undefined ? "" : `; did you mean ${JSON.stringify(near)}?`}; an ignored option would check less than you asked`);
  }
  for (const name of ["bundle", "artifact"]) if (!isText(options[name])) refuse(`option ${name} must be a non-empty string, found ${describeValue(options[name])}`);
  if (options["trustedRoot"] !== undefined && !isText(options["trustedRoot"])) refuse(`option trustedRoot must be a trusted root file path, found ${describeValue(options["trustedRoot"])}`);
  const signer = options["signer"];
  const keys = isObject(signer) ? Object.keys(signer).sort().join(",") : "";
  const shaped = isObject(signer) && (keys === "keyFile" ? isText(signer["keyFile"]) : keys === "identity,issuer" && isText(signer["identity"]) && isText(signer["issuer"]));
  if (!shaped) {
    const stray = isObject(signer) ? Object.keys(signer).find((key) => !["keyFile", "identity", "issuer"].includes(key)) : undefined;
    const near = stray === undefined ? undefined : nearestName(stray, ["keyFile", "identity", "issuer"]);
    refuse(`option signer must be { keyFile } (a PEM public key file) or { identity, issuer } (strings), found ${isObject(signer) ? `{ ${Object.keys(signer).join(", ")} }` : describeValue(signer)}${near === undefined ? "" : `; did you mean ${JSON.stringify(near)} for ${JSON.stringify(stray)}?`}`);
  }
}

async function readBoundedFile(path: string, max: number, what: string): Promise<Buffer> {
  const found = await readRegularFile(path, { maxBytes: max });
  if (found.kind === "too-large") throw new ProvenanceError("PROVENANCE_ATTESTATION_TOO_LARGE", `${what} ${path} is ${found.size} bytes; at most ${max} bytes are accepted`);
  if (found.kind !== "read") throw new ProvenanceError("PROVENANCE_BUNDLE_INVALID", `${what} ${path}: expected a regular file, found ${describeUnreadFile(found, max)}`);
  return found.bytes;
}

async function artifactOf(argument: string, needBytes: boolean): Promise<{ artifact: BundleArtifact; digest: string }> {
  const digest = /^sha256:([0-9a-f]{64})$/.exec(argument);
  if (digest !== null) return { artifact: { sha256: digest[1] as string }, digest: argument };
  const st = await lstat(argument).catch(() => null);
  if (st === null || !st.isFile()) {
    throw new ProvenanceError("PROVENANCE_ARTIFACT_INVALID", `artifact ${argument} is neither a regular file nor sha256:<64 lowercase hex>`);
  }
  if (needBytes) {
    const bytes = await readFile(argument);
    return { artifact: { bytes }, digest: `sha256:${createHash("sha256").update(bytes).digest("hex")}` };
  }
  const { sha256 } = await hashFile(argument);
  return { artifact: { sha256 }, digest: `sha256:${sha256}` };
}

/**
 * Verify `options.bundle` for `options.artifact` (see the module comment).
 * @throws ProvenanceError: every code of `verifySigstoreBundle`, `PROVENANCE_TRUSTED_ROOT_INVALID`,
 *   `PROVENANCE_KEY_INVALID`, `PROVENANCE_KEY_NOT_PUBLIC`, `PROVENANCE_KEY_UNSUPPORTED` (src/contract/key-pem.ts), `PROVENANCE_ARTIFACT_INVALID`, `PROVENANCE_ATTESTATION_TOO_LARGE`;
 *   `PROVENANCE_POLICY_INVALID` before anything is read, for options that are not `{ bundle, artifact, signer, trustedRoot? }`
 *   (an unknown key: a misspelt `trustedRoot` would verify against the public-good root instead of yours) or a
 *   `signer` that is not exactly `{ keyFile }` or `{ identity, issuer }`.
 */
export async function verifyBundleFile(options: VerifyBundleFileOptions): Promise<VerifyBundleFileResult> {
  checkVerifyBundleFileOptions(options);
  const trust = options.trustedRoot === undefined ? embeddedTrustedRoot() : await readTrustedRootFile(options.trustedRoot);
  let signer: ExpectedSigner;
  let signerLabel = "";
  if ("keyFile" in options.signer) {
    const key = await readP256PublicKeyFile(options.signer.keyFile);
    signer = { kind: "key", key };
    signerLabel = `key ${publicKeyHint(key)}`;
  } else {
    const expected = options.signer;
    signer = { kind: "certificate", check: exactIdentity(expected) };
    signerLabel = `certificate ${expected.identity} (${expected.issuer})`;
  }
  const bundle = parseSigstoreBundle(await readBoundedFile(options.bundle, MAX_SIGSTORE_BUNDLE_BYTES, "bundle"), `Sigstore bundle ${options.bundle}`);
  const { artifact, digest } = await artifactOf(options.artifact, bundle.content.$case === "messageSignature");
  const verified = verifySigstoreBundle(bundle, { trust, signer, artifact });
  return { ok: true, bundle: options.bundle, artifact: options.artifact, artifactDigest: digest, content: verified.content, signer: signerLabel };
}
