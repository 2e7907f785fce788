/**
 * Strict trusted-root validation: the embedded public-good root and every
 * conformance root pass; each rule refuses its mutation with
 * `PROVENANCE_TRUSTED_ROOT_INVALID` and a message naming the field; a property
 * test replaces any one value of the public-good root with any JSON value.
 */
import { readFileSync, readdirSync, existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { generateKeyPairSync } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseTrustedRoot } from "../../src/contract/trusted-root.js";
import { embeddedTrustedRoot } from "../../src/fetch/sigstore-trust.js";
import { clone } from "../support/contract-fixture.js";

const CASES = fileURLToPath(new URL("../fixtures/sigstore-conformance/cases", import.meta.url));
const conformanceRoots = readdirSync(CASES).filter((name) => existsSync(join(CASES, name, "trusted_root.json")));

const bytes = (value: unknown) => Buffer.from(JSON.stringify(value));

function refusal(value: unknown | Buffer): string {
  try {
    parseTrustedRoot(Buffer.isBuffer(value) ? value : bytes(value));
  } catch (error) {
    return `${(error as { code?: string }).code}: ${(error as Error).message}`;
  }
  return "accepted";
}

describe("parseTrustedRoot", () => {
  const publicGood = embeddedTrustedRoot().json as Record<string, any>;

  it("accepts the embedded Sigstore public-good root and counts what it trusts", () => {
    const { counts } = embeddedTrustedRoot();
    expect(counts.certificateAuthorities).toBeGreaterThan(0);
    expect(counts.tlogs).toBeGreaterThan(0);
    expect(counts.ctlogs).toBeGreaterThan(0);
  });

  it.each(conformanceRoots)("accepts the conformance root of %s", (name) => {
    expect(refusal(readFileSync(join(CASES, name, "trusted_root.json")))).toBe("accepted");
  });

  const mutations: Array<[string, (root: Record<string, any>) => unknown, RegExp]> = [
    ["an unknown media type", (r) => ((r["mediaType"] = "application/json"), r), /mediaType/],
    ["an unknown top-level key", (r) => ((r["extra"] = []), r), /<root>|extra/],
    ["an unknown key in a log", (r) => ((r["tlogs"][0]["url"] = "x"), r), /tlogs\.0/],
    ["non-canonical base64 (whitespace)", (r) => ((r["tlogs"][0]["publicKey"]["rawBytes"] = " " + r["tlogs"][0]["publicKey"]["rawBytes"]), r), /rawBytes/],
    ["base64url instead of base64", (r) => ((r["tlogs"][0]["logId"]["keyId"] = "ab-_"), r), /keyId/],
    ["an unknown key type", (r) => ((r["tlogs"][0]["publicKey"]["keyDetails"] = "PKIX_DSA"), r), /keyDetails/],
    ["key bytes that are not a key", (r) => ((r["tlogs"][0]["publicKey"]["rawBytes"] = Buffer.from("not a key").toString("base64")), r), /tlogs\.0\.publicKey\.rawBytes/],
    [
      "keyDetails that disagree with the key",
      (r) => {
        const ed = generateKeyPairSync("ed25519").publicKey.export({ format: "der", type: "spki" });
        r["tlogs"][0]["publicKey"]["rawBytes"] = ed.toString("base64");
        r["tlogs"][0]["publicKey"]["keyDetails"] = "PKIX_ECDSA_P256_SHA_256";
        return r;
      },
      /keyDetails says PKIX_ECDSA_P256_SHA_256, the key is ed25519/,
    ],
    ["a validity that ends before it starts", (r) => ((r["tlogs"][0]["publicKey"]["validFor"] = { start: "2024-01-02T00:00:00Z", end: "2024-01-01T00:00:00Z" }), r), /end .* is before start/],
    ["a validity start that is not a timestamp", (r) => ((r["tlogs"][0]["publicKey"]["validFor"]["start"] = "yesterday"), r), /RFC 3339/],
    ["an unknown hash algorithm", (r) => ((r["tlogs"][0]["hashAlgorithm"] = "MD5"), r), /hashAlgorithm/],
    ["a non-URL base URL", (r) => ((r["tlogs"][0]["baseUrl"] = "rekor.example"), r), /baseUrl/],
    ["an empty certificate chain", (r) => ((r["certificateAuthorities"][0]["certChain"]["certificates"] = []), r), /certificates/],
    ["certificate bytes that are not a certificate", (r) => ((r["certificateAuthorities"][0]["certChain"]["certificates"] = [{ rawBytes: Buffer.from("x").toString("base64") }]), r), /not a DER X\.509 certificate/],
    [
      "a chain in the wrong order",
      (r) => {
        const ca = r["certificateAuthorities"].find((c: any) => c["certChain"]["certificates"].length > 1);
        ca["certChain"]["certificates"].reverse();
        return r;
      },
      /not issued and signed by the next certificate|not self-signed/,
    ],
    ["a root that trusts nothing", (r) => ({ mediaType: r["mediaType"], ctlogs: r["ctlogs"] }), /trusts nothing/],
  ];

  it.each(mutations)("refuses %s with PROVENANCE_TRUSTED_ROOT_INVALID", (_label, mutate, message) => {
    const result = refusal(mutate(clone(publicGood)));
    expect(result).toMatch(/^PROVENANCE_TRUSTED_ROOT_INVALID: /);
    expect(result).toMatch(message);
  });

  it("refuses duplicate keys, non-JSON, a JSON array and more than 1 MiB", () => {
    const text = JSON.stringify(publicGood);
    expect(refusal(Buffer.from(text.replace('"mediaType":', '"mediaType":"x","mediaType":')))).toMatch(/^PROVENANCE_TRUSTED_ROOT_INVALID: .*duplicate/i);
    expect(refusal(Buffer.from("{"))).toMatch(/^PROVENANCE_TRUSTED_ROOT_INVALID/);
    expect(refusal(Buffer.from("[]"))).toMatch(/^PROVENANCE_TRUSTED_ROOT_INVALID/);
    expect(refusal(Buffer.alloc(1024 * 1024 + 1, 0x20))).toMatch(/^PROVENANCE_TRUSTED_ROOT_INVALID: .*larger than/);
    // The document's label is said once ("trusted root F: ...", not "trusted root: trusted root F: ...").
    expect(() => parseTrustedRoot(Buffer.from("[]"), "trusted root /etc/hostname")).toThrow(/^trusted root \/etc\/hostname: not a JSON object/);
    expect(() => parseTrustedRoot(Buffer.from("{}"), "trusted root r.json")).toThrow(/^trusted root r\.json at /);
  });
});

/** Every path to a value inside `value` (objects and arrays), root excluded. */
function paths(value: unknown, prefix: Array<string | number> = []): Array<Array<string | number>> {
  if (value === null || typeof value !== "object") return [];
  const entries: Array<[string | number, unknown]> = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
  return entries.flatMap(([k, v]) => [[...prefix, k], ...paths(v, [...prefix, k])]);
}

describe("parseTrustedRoot, property", () => {
  const publicGood = embeddedTrustedRoot().json as Record<string, any>;
  const all = paths(publicGood);

  it("any JSON value, or the public-good root with any one value replaced, is accepted as given or refused with PROVENANCE_TRUSTED_ROOT_INVALID", () => {
    const outcome = (doc: unknown) => {
      try {
        expect(parseTrustedRoot(bytes(doc)).json).toEqual(doc);
        return "accepted";
      } catch (error) {
        expect((error as { code?: string }).code, (error as Error).message).toBe("PROVENANCE_TRUSTED_ROOT_INVALID");
        return "refused";
      }
    };
    fc.assert(fc.property(fc.jsonValue(), (doc) => void outcome(doc)), { numRuns: 200 });
    fc.assert(
      fc.property(fc.constantFrom(...all), fc.jsonValue(), (path, value) => {
        const doc = clone(publicGood);
        let node: any = doc;
        for (const key of path.slice(0, -1)) node = node[key];
        node[path[path.length - 1] as string] = value;
        outcome(doc);
      }),
      { numRuns: 400 },
    );
  });
});

describe("parseTrustedRoot called without bytes (plain JavaScript)", () => {
  it.each([[null], ["{}"], [5]])("%j -> PROVENANCE_TRUSTED_ROOT_INVALID, never a TypeError", async (value) => {
    await expect(() => parseTrustedRoot(value as never)).toThrowWithCode("PROVENANCE_TRUSTED_ROOT_INVALID");
  });
});
