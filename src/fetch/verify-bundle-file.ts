/**
 * `verify-provenance --bundle FILE ... FILE_OR_DIGEST`: verify one Sigstore
 * bundle file offline for one artifact, with the argument shapes of the
 * Sigstore conformance protocol's `verify-bundle` (sigstore-conformance
 * `docs/cli_protocol.md`): a certificate identity and OIDC issuer, or a PEM
 * public key; an optional trusted root file (default: the public-good root
 * embedded in `@sigstore/tuf`). Nothing is downloaded.
 */
import { describeValue, nearestName } from "../contract/grammar.js";
import { closeAsync, describeUnreadFile, fstatAsync, openAsync, readAsync, readRegularFile, readWhole } from "../contract/fs-async.js";
import { createHash } from "node:crypto";
import { constants as fsConstants } from "node:fs";
import { readP256PublicKeyFile } from "../contract/key-pem.js";
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

/** Largest artifact of a message signature read into memory (bytes): the signature is verified over the whole bytes. */
const MAX_MESSAGE_ARTIFACT_BYTES = 256 * 1024 * 1024;

/**
 * The artifact argument: `sha256:<64 hex>`, or a regular file read through one descriptor. The file is opened
 * without following a final link and without waiting on a FIFO (`O_NOFOLLOW | O_NONBLOCK`), and its type and
 * size are the opened descriptor's (`fstat`), so a file swapped for a FIFO or a device after a check cannot
 * block or feed the read. A message signature needs the bytes (at most {@link MAX_MESSAGE_ARTIFACT_BYTES});
 * a DSSE bundle only their SHA-256, hashed in 1 MiB chunks.
 */
async function artifactOf(argument: string, needBytes: boolean): Promise<{ artifact: BundleArtifact; digest: string }> {
  const digest = /^sha256:([0-9a-f]{64})$/.exec(argument);
  if (digest !== null) return { artifact: { sha256: digest[1] as string }, digest: argument };
  const invalid = (found: string) =>
    new ProvenanceError("PROVENANCE_ARTIFACT_INVALID", `artifact ${argument} must be a regular file or sha256:<64 lowercase hex>, found ${found}; fix: pass the path of the artifact file itself (a link is not followed), or its sha256:<hex> (DSSE bundles)`);
  let fd: number;
  try {
    fd = await openAsync(argument, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK | fsConstants.O_NOFOLLOW);
  } catch (error) {
    throw invalid(describeUnreadFile({ kind: "failed", code: (error as NodeJS.ErrnoException).code ?? "EIO" }, MAX_MESSAGE_ARTIFACT_BYTES));
  }
  try {
    const st = await fstatAsync(fd);
    if (!st.isFile()) throw invalid(st.isDirectory() ? "a directory" : "a FIFO, socket or device");
    if (needBytes) {
      if (st.size > MAX_MESSAGE_ARTIFACT_BYTES) {
        throw new ProvenanceError("PROVENANCE_ARTIFACT_INVALID", `artifact ${argument} is ${st.size} bytes; a message signature is verified over the artifact's bytes in memory, at most ${MAX_MESSAGE_ARTIFACT_BYTES}; fix: sign a DSSE attestation of its digest instead, which verifies from sha256:<hex>`);
      }
      const bytes = await readWhole(fd, st.size);
      return { artifact: { bytes }, digest: `sha256:${createHash("sha256").update(bytes).digest("hex")}` };
    }
    const hash = createHash("sha256");
    const chunk = Buffer.allocUnsafe(1024 * 1024);
    for (let offset = 0; ; ) {
      const n = await readAsync(fd, chunk, 0, chunk.length, offset);
      if (n === 0) break;
      hash.update(chunk.subarray(0, n));
      offset += n;
    }
    const sha256 = hash.digest("hex");
    return { artifact: { sha256 }, digest: `sha256:${sha256}` };
  } finally {
    await closeAsync(fd).catch(() => undefined);
  }
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
