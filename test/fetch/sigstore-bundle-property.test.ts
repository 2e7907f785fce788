/**
 * Property: a Sigstore bundle is adversarial input. Any JSON value, and each
 * good conformance bundle (Rekor v1 DSSE, Rekor v2 DSSE, message signature,
 * managed key) with any one value replaced by any JSON value, is either
 * verified or refused with a `PROVENANCE_*` code: the parser and the verifier
 * never fail with an uncoded error.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ProvenanceError } from "../../src/contract/provenance-error.js";
import { parseTrustedRoot } from "../../src/contract/trusted-root.js";
import { embeddedTrustedRoot } from "../../src/fetch/sigstore-trust.js";
import { exactIdentity, parsePublicKeyPem, parseSigstoreBundle, verifySigstoreBundle, type ExpectedSigner } from "../../src/fetch/sigstore-verify.js";

const ROOT = fileURLToPath(new URL("../fixtures/sigstore-conformance", import.meta.url));
const ARTIFACT = { bytes: readFileSync(join(ROOT, "a.txt")) };
const IDENTITY = exactIdentity({
  identity: "https://github.com/sigstore-conformance/extremely-dangerous-public-oidc-beacon/.github/workflows/extremely-dangerous-oidc-beacon.yml@refs/heads/main",
  issuer: "https://token.actions.githubusercontent.com",
});

interface Base {
  name: string;
  bundle: Record<string, unknown>;
  trust: ReturnType<typeof embeddedTrustedRoot>;
  signer: ExpectedSigner;
}

function base(name: string): Base {
  const file = (f: string) => join(ROOT, "cases", name, f);
  const bundle = JSON.parse(readFileSync(file("bundle.sigstore.json"), "utf8")) as Record<string, unknown>;
  let trust = embeddedTrustedRoot();
  try {
    trust = parseTrustedRoot(readFileSync(file("trusted_root.json")));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  let signer: ExpectedSigner = { kind: "certificate", check: IDENTITY };
  try {
    signer = { kind: "key", key: parsePublicKeyPem(readFileSync(file("key.pub"))) };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  return { name, bundle, trust, signer };
}

const BASES = ["happy-path-intoto-in-dsse-v3", "rekor2-dsse-happy-path", "happy-path-v0.3", "managed-key-happy-path"].map(base);

/** Every path to a value inside `value`, root excluded. */
function paths(value: unknown, prefix: Array<string | number> = []): Array<Array<string | number>> {
  if (value === null || typeof value !== "object") return [];
  const entries: Array<[string | number, unknown]> = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
  return entries.flatMap(([k, v]) => [[...prefix, k], ...paths(v, [...prefix, k])]);
}

/** Parse and verify; "verified", or the code of the refusal (anything else fails the property). */
function decide(doc: unknown, b: Base): string {
  try {
    const bundle = parseSigstoreBundle(Buffer.from(JSON.stringify(doc)));
    verifySigstoreBundle(bundle, { trust: b.trust, signer: b.signer, artifact: ARTIFACT });
    return "verified";
  } catch (error) {
    if (!(error instanceof ProvenanceError)) throw error;
    return error.code;
  }
}

describe("Sigstore bundles, property", () => {
  it("each base verifies as given", () => {
    for (const b of BASES) expect(decide(b.bundle, b), b.name).toBe("verified");
  });

  it("any JSON value is refused with a PROVENANCE_* code", () => {
    const b = BASES[0] as Base;
    fc.assert(fc.property(fc.jsonValue(), (doc) => void expect(decide(doc, b)).toMatch(/^PROVENANCE_[A-Z_]+$/)), { numRuns: 200 });
  });

  it.each(BASES.map((b) => [b.name, b] as const))("%s with any one value replaced: verified or a PROVENANCE_* code", (_name, b) => {
    const all = paths(b.bundle);
    fc.assert(
      fc.property(fc.constantFrom(...all), fc.jsonValue({ maxDepth: 2 }), (path, value) => {
        const doc = structuredClone(b.bundle);
        let node: any = doc;
        for (const key of path.slice(0, -1)) node = node[key];
        node[path[path.length - 1] as string] = value;
        expect(decide(doc, b)).toMatch(/^(verified|PROVENANCE_[A-Z_]+)$/);
      }),
      { numRuns: 150 },
    );
  });
});

describe("Rekor v2 log entry bodies are adversarial input too", () => {
  const b = BASES[1] as Base;
  const withBody = (body: string) => {
    const doc = structuredClone(b.bundle) as any;
    doc.verificationMaterial.tlogEntries[0].canonicalizedBody = Buffer.from(body).toString("base64");
    return doc;
  };

  it.each(["null", "[]", "1", '"x"', "not json", '{"spec":null}', '{"spec":{"hashedRekordV002":{"signature":{"verifier":null}}}}'])("body %s: PROVENANCE_TLOG_INVALID", (body) => {
    expect(decide(withBody(body), b)).toBe("PROVENANCE_TLOG_INVALID");
  });

  it("property: the body with any one value replaced is refused with a PROVENANCE_* code", () => {
    const body = JSON.parse(Buffer.from((b.bundle as any).verificationMaterial.tlogEntries[0].canonicalizedBody, "base64").toString("utf8"));
    const all = paths(body);
    fc.assert(
      fc.property(fc.constantFrom(...all), fc.jsonValue({ maxDepth: 2 }), (path, value) => {
        const doc = structuredClone(body);
        let node: any = doc;
        for (const key of path.slice(0, -1)) node = node[key];
        node[path[path.length - 1] as string] = value;
        expect(decide(withBody(JSON.stringify(doc)), b)).toMatch(/^(verified|PROVENANCE_[A-Z_]+)$/);
      }),
      { numRuns: 150 },
    );
  });
});
