/**
 * The Sigstore conformance bundle-verification cases (test/fixtures/sigstore-conformance,
 * 48 cases of the public suite), each decided through the real CLI exactly as the
 * conformance protocol's `verify-bundle` calls a client:
 * `verify-provenance --bundle FILE (--certificate-identity ID --certificate-oidc-issuer URL | --key PEM)
 * [--trusted-root FILE] FILE`. A `_fail` case must exit 1 with the code that names why; every other case must exit 0.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { runCli } from "../support/cli.js";

const ROOT = fileURLToPath(new URL("../fixtures/sigstore-conformance", import.meta.url));
const CASES = join(ROOT, "cases");
const DEFAULT_IDENTITY = "https://github.com/sigstore-conformance/extremely-dangerous-public-oidc-beacon/.github/workflows/extremely-dangerous-oidc-beacon.yml@refs/heads/main";
const DEFAULT_ISSUER = "https://token.actions.githubusercontent.com";
const names = readdirSync(CASES).sort();

/**
 * Why each `_fail` case must be refused, as the code that names the cause: a
 * refusal for another reason (a harness mistake, an unreadable file) would
 * decide the case right by accident.
 */
const REFUSALS: Record<string, string> = {
  "bundle-empty-certificate-chain_fail": "PROVENANCE_BUNDLE_INVALID",
  "bundle-invalid-base64-signature_fail": "PROVENANCE_SIGNATURE_INVALID",
  "bundle-malformed-json_fail": "PROVENANCE_BUNDLE_INVALID",
  "bundle-unknown-version_fail": "PROVENANCE_BUNDLE_INVALID",
  "bundle-with-root-cert_fail": "PROVENANCE_BUNDLE_INVALID",
  "checkpoint-bad-keyhint_fail": "PROVENANCE_TLOG_INVALID",
  "dsse-invalid-sig_fail": "PROVENANCE_SIGNATURE_INVALID",
  "dsse-mismatch-envelope_fail": "PROVENANCE_TLOG_INVALID",
  "incorrect-public-key_fail": "PROVENANCE_TLOG_INVALID",
  "intoto-expired-certificate_fail": "PROVENANCE_CERTIFICATE_INVALID",
  "intoto-log-entry-mismatch_fail": "PROVENANCE_TLOG_INVALID",
  "intoto-missing-inclusion-proof_fail": "PROVENANCE_BUNDLE_INVALID",
  "intoto-tsa-timestamp-outside-cert-validity_fail": "PROVENANCE_CERTIFICATE_INVALID",
  "invalid-checkpoint-signature_fail": "PROVENANCE_TLOG_INVALID",
  "invalid-inclusion-proof_fail": "PROVENANCE_BUNDLE_INVALID",
  "managed-key-no-key_fail": "PROVENANCE_CERTIFICATE_REQUIRED",
  // The suite's key.pub here is not a valid P-256 point (its tail reads "wrongkey").
  "managed-key-wrong-key_fail": "PROVENANCE_KEY_INVALID",
  "rekor2-checkpoint-missing-log-signature_fail": "PROVENANCE_TLOG_INVALID",
  "rekor2-checkpoint-missing-root-hash_fail": "PROVENANCE_TLOG_INVALID",
  "rekor2-checkpoint-missing-size_fail": "PROVENANCE_TLOG_INVALID",
  "rekor2-checkpoint-no-matching-signature_fail": "PROVENANCE_TLOG_INVALID",
  "rekor2-dsse-invalid-sig_fail": "PROVENANCE_SIGNATURE_INVALID",
  "rekor2-dsse-mismatch-envelope_fail": "PROVENANCE_TLOG_INVALID",
  "rekor2-dsse-mismatch-sig_fail": "PROVENANCE_TLOG_INVALID",
  "rekor2-no-inclusion-proof_fail": "PROVENANCE_BUNDLE_INVALID",
  "rekor2-no-timestamp_fail": "PROVENANCE_TIMESTAMP_INVALID",
  "rekor2-timestamp-outside-trust-root-tsa-validity_fail": "PROVENANCE_TIMESTAMP_INVALID",
  "rekor2-timestamp-payload-mismatch_fail": "PROVENANCE_TIMESTAMP_INVALID",
  "rekor2-timestamp-untrusted-tsa-with-embedded-cert_fail": "PROVENANCE_TIMESTAMP_INVALID",
  "rekor2-timestamp-with-incorrect-time_fail": "PROVENANCE_CERTIFICATE_INVALID",
  "signature-mismatch_fail": "PROVENANCE_SIGNATURE_INVALID",
  "wrong-hashedrekord-artifact_fail": "PROVENANCE_TLOG_INVALID",
  "wrong-hashedrekord-entry_fail": "PROVENANCE_TLOG_INVALID",
};

function argsFor(name: string): string[] {
  const file = (f: string) => join(CASES, name, f);
  const text = (f: string, fallback: string) => (existsSync(file(f)) ? readFileSync(file(f), "utf8").trim() : fallback);
  const args = ["verify-provenance", "--bundle", file("bundle.sigstore.json")];
  if (existsSync(file("key.pub"))) args.push("--key", file("key.pub"));
  else args.push("--certificate-identity", text("identity", DEFAULT_IDENTITY), "--certificate-oidc-issuer", text("issuer", DEFAULT_ISSUER));
  if (existsSync(file("trusted_root.json"))) args.push("--trusted-root", file("trusted_root.json"));
  args.push(existsSync(file("artifact")) ? file("artifact") : join(ROOT, "a.txt"));
  return args;
}

describe("Sigstore conformance: verify-bundle through the CLI", () => {
  it("holds the 48 cases of the suite, 33 of them to refuse", () => {
    expect(names).toHaveLength(48);
    expect(names.filter((n) => n.endsWith("_fail")).sort()).toEqual(Object.keys(REFUSALS).sort());
  });

  it.concurrent.each(names)("%s", async (name) => {
    const result = await runCli(argsFor(name), { env: { HERMES_PLUGIN_KIT_DEBUG: undefined } });
    if (name.endsWith("_fail")) {
      expect(result.code, result.stdout).toBe(1);
      expect(result.stderr).toMatch(/^hermes-plugin-kit: .+ \[PROVENANCE_[A-Z_]+\]\n$/);
      expect(result.stderr.slice(result.stderr.lastIndexOf("[") + 1, -2)).toBe(REFUSALS[name]);
    } else {
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/^verified .* signed by (certificate|key) /);
    }
  });
});
