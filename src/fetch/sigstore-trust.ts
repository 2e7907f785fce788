/**
 * Trust material for Sigstore verification, offline: the Sigstore public-good
 * trusted root embedded in `@sigstore/tuf`'s `seeds.json` (no TUF refresh, no
 * network), or a trusted root file given by the user. Either is validated
 * strictly (`src/contract/trusted-root.ts`) before `@sigstore/verify` sees it.
 */
import { readRegularFile } from "../contract/fs-async.js";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { KeyObject } from "node:crypto";
import { TrustedRoot } from "@sigstore/protobuf-specs";
import { toTrustMaterial, type TrustMaterial } from "@sigstore/verify";
import { ProvenanceError } from "../contract/provenance-error.js";
import { MAX_TRUSTED_ROOT_BYTES, parseTrustedRoot, type CheckedTrustedRoot } from "../contract/trusted-root.js";

/** The TUF repository whose seed `@sigstore/tuf` embeds. */
const PUBLIC_GOOD_TUF_URL = "https://tuf-repo-cdn.sigstore.dev";

let embedded: CheckedTrustedRoot | undefined;

/**
 * The Sigstore public-good trusted root embedded in `@sigstore/tuf`'s
 * `seeds.json` (target `trusted_root.json`), validated; read once per process.
 * @throws ProvenanceError `PROVENANCE_TRUSTED_ROOT_INVALID` when the seed is missing or invalid.
 */
export function embeddedTrustedRoot(): CheckedTrustedRoot {
  if (embedded !== undefined) return embedded;
  let seed: unknown;
  try {
    const path = createRequire(import.meta.url).resolve("@sigstore/tuf/seeds.json");
    seed = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    throw new ProvenanceError("PROVENANCE_TRUSTED_ROOT_INVALID", `the embedded public-good trusted root (@sigstore/tuf seeds.json) cannot be read: ${(error as Error).message}`);
  }
  const target = (seed as Record<string, { targets?: Record<string, unknown> } | undefined>)?.[PUBLIC_GOOD_TUF_URL]?.targets?.["trusted_root.json"];
  if (typeof target !== "string") throw new ProvenanceError("PROVENANCE_TRUSTED_ROOT_INVALID", "the @sigstore/tuf seeds.json holds no trusted_root.json target");
  embedded = parseTrustedRoot(Buffer.from(target, "base64"), "the embedded public-good trusted root");
  return embedded;
}

/**
 * Read and validate a trusted root file (a regular file of at most 1 MiB).
 * @throws ProvenanceError `PROVENANCE_TRUSTED_ROOT_INVALID` (unreadable, too large, invalid).
 */
export async function readTrustedRootFile(path: string): Promise<CheckedTrustedRoot> {
  const found = await readRegularFile(path, { maxBytes: MAX_TRUSTED_ROOT_BYTES });
  if (found.kind === "too-large") throw new ProvenanceError("PROVENANCE_TRUSTED_ROOT_INVALID", `trusted root ${path} is larger than ${MAX_TRUSTED_ROOT_BYTES} bytes`);
  if (found.kind !== "read") throw new ProvenanceError("PROVENANCE_TRUSTED_ROOT_INVALID", `trusted root ${path} is missing or not a regular file`);
  return parseTrustedRoot(found.bytes, `trusted root ${path}`);
}

/**
 * `@sigstore/verify` trust material for a validated root. With `key`, every
 * public-key hint resolves to that key (valid at any time: the key the
 * consumer pins is the trust anchor); without it, bare-key bundles fail.
 */
export function trustMaterialFor(root: CheckedTrustedRoot, key?: KeyObject): TrustMaterial {
  const parsed = TrustedRoot.fromJSON(root.json);
  if (key === undefined) return toTrustMaterial(parsed);
  return toTrustMaterial(parsed, () => ({ publicKey: key, validFor: () => true }));
}
