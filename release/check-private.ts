/**
 * `release check-private [--bootstrap]` (docs/release-publish.md, "The privacy
 * gate"; docs/architecture.md, "Release: steps and data flow").
 *
 * Owns: the maintainer's stand-alone run of the privacy gate
 * (`src/fetch/privacy.ts`). Without `--bootstrap` it is the read-only gate
 * (`requirePrivateForRead`). With `--bootstrap` an absent package gets the
 * zero-layer bootstrap artifact at tag `private-bootstrap` — pushed by the
 * same callback `release stage` uses (`bootstrapPusher` in `release/registry-access.ts`)
 * — and must then be positively private; an absent `oci-layout:` store is
 * created 0700. Registry access (repository = the policy's repository,
 * credentials from the environment) is resolved exactly as `stage` does.
 */
import { rm } from "node:fs/promises";
import type { ReleasePolicy } from "../src/contract/policy.js";
import { requirePrivateForRead, type PrivacyEvidence } from "../src/fetch/privacy.js";
import { privateTempDir } from "./output.js";
import { requirePrivateWithBootstrap, resolveAccess, type RegistryAccessOptions } from "./registry-access.js";

/** Options of {@link checkPrivate}. */
export interface CheckPrivateOptions extends RegistryAccessOptions {
  /** The release policy; `repository` must equal its `registryRepository`. */
  policy: ReleasePolicy;
  /** Allow the bootstrap push (registry) or the 0700 creation (layout store). */
  bootstrap?: boolean;
}

/**
 * Run the privacy gate for `options.repository`.
 * @returns the positive evidence (see `PrivacyEvidence`); `bootstrapped` says whether the bootstrap ran.
 * @throws PrivacyError `PRIVACY_*` (see `src/fetch/privacy.ts`); PipelineError
 *   `RELEASE_REPOSITORY_MISMATCH`; ReleaseContractError `REPOSITORY_INVALID`;
 *   FetchError `FETCH_CREDENTIALS_INCOMPLETE`; OciError from the bootstrap push
 *   (e.g. `OCI_TAG_CONFLICT`).
 */
export async function checkPrivate(options: CheckPrivateOptions): Promise<PrivacyEvidence> {
  const access = resolveAccess(options, options.policy);
  if (options.bootstrap !== true) {
    return requirePrivateForRead(access.repository, { env: access.env, plainHttp: access.plainHttp });
  }
  const work = await privateTempDir(options.tmpDir, "hpk-check-private-");
  try {
    return await requirePrivateWithBootstrap(access, work);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
