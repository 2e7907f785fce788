/**
 * The Sigstore conformance bundle-verification cases (test/fixtures/sigstore-conformance,
 * 48 cases of the public suite), each decided through the real CLI exactly as the
 * conformance protocol's `verify-bundle` calls a client:
 * `verify-provenance --bundle FILE (--certificate-identity ID --certificate-oidc-issuer URL | --key PEM)
 * [--trusted-root FILE] FILE`. A `_fail` case must exit 1 with a coded message; every other case must exit 0.
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
  it("holds the 48 cases of the suite", () => {
    expect(names).toHaveLength(48);
    expect(names.filter((n) => n.endsWith("_fail")).length).toBeGreaterThan(20);
  });

  it.concurrent.each(names)("%s", async (name) => {
    const result = await runCli(argsFor(name), { env: { HERMES_PLUGIN_KIT_DEBUG: undefined } });
    if (name.endsWith("_fail")) {
      expect(result.code, result.stdout).toBe(1);
      expect(result.stderr).toMatch(/^hermes-plugin-kit: .+ \[PROVENANCE_[A-Z_]+\]\n$/);
    } else {
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/^verified .* signed by (certificate|key) /);
    }
  });
});
