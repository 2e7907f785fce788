/**
 * src/oci/errors.ts writes the manifest ceiling out (an error module requires no other module,
 * scripts/bundle-cli.mjs): its message must name the ceiling the transport enforces.
 */
import { describe, expect, it } from "vitest";
import { MAX_MANIFEST_BYTES } from "../../src/contract/constants.js";
import { manifestTooLarge } from "../../src/oci/errors.js";

describe("OCI_MANIFEST_TOO_LARGE text", () => {
  it("names MAX_MANIFEST_BYTES as the ceiling", () => {
    const error = manifestTooLarge("OCI manifest v1", "2097152 bytes");
    expect(error.code).toBe("OCI_MANIFEST_TOO_LARGE");
    expect(error.message).toContain(`expected at most ${MAX_MANIFEST_BYTES} bytes (${MAX_MANIFEST_BYTES / 1024 / 1024} MiB)`);
  });
});
