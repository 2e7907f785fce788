import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { registryCredentialsFromEnv, parseChallenges, parseNextLink, parseRetryAfter, readSecretFromStream } from "../../src/oci/index.js";

describe("parseChallenges", () => {
  it("parses GHCR's Bearer challenge", () => {
    expect(parseChallenges('Bearer realm="https://ghcr.io/token",service="ghcr.io",scope="repository:o/n:pull"')).toEqual([
      { scheme: "bearer", params: { realm: "https://ghcr.io/token", service: "ghcr.io", scope: "repository:o/n:pull" } },
    ]);
  });

  it("parses Basic, several challenges, tokens and escapes", () => {
    expect(parseChallenges('Basic realm="r"')).toEqual([{ scheme: "basic", params: { realm: "r" } }]);
    expect(parseChallenges('Basic realm="a\\"b", Bearer realm=https://x/t, service=s')).toEqual([
      { scheme: "basic", params: { realm: 'a"b' } },
      { scheme: "bearer", params: { realm: "https://x/t", service: "s" } },
    ]);
    expect(parseChallenges(undefined)).toEqual([]);
    expect(parseChallenges("")).toEqual([]);
  });
});

describe("parseNextLink", () => {
  it("returns the rel=next target as given", () => {
    expect(parseNextLink('</v2/o/n/tags/list?last=b&n=2>; rel="next"')).toBe("/v2/o/n/tags/list?last=b&n=2");
    expect(parseNextLink('<opaque?c=1>; rel=next')).toBe("opaque?c=1");
    expect(parseNextLink('<a>; rel="prev", <b>; rel="next"')).toBe("b");
    expect(parseNextLink(undefined)).toBeUndefined();
    expect(parseNextLink('<a>; rel="prev"')).toBeUndefined();
  });

  it("refuses a Link without angle brackets", async () => {
    await expect(() => parseNextLink('/v2/o/n/tags/list?last=b; rel="next"')).toThrowWithCode("OCI_LINK_INVALID");
  });
});

describe("parseRetryAfter", () => {
  it("reads seconds and HTTP dates, ignores garbage", () => {
    expect(parseRetryAfter("3")).toBe(3000);
    const now = Date.parse("Mon, 30 Nov 2026 04:00:00 GMT");
    expect(parseRetryAfter("Mon, 30 Nov 2026 04:00:05 GMT", now)).toBe(5000);
    expect(parseRetryAfter("Mon, 30 Nov 2026 03:00:00 GMT", now)).toBe(0);
    expect(parseRetryAfter("soon")).toBeUndefined();
    expect(parseRetryAfter(undefined)).toBeUndefined();
  });
});

describe("credentials", () => {
  it("come from REGISTRY_USERNAME/REGISTRY_PASSWORD or REGISTRY_TOKEN", async () => {
    expect(registryCredentialsFromEnv({ REGISTRY_USERNAME: "u", REGISTRY_PASSWORD: "p" })).toEqual({ username: "u", password: "p" });
    expect(registryCredentialsFromEnv({ REGISTRY_TOKEN: "t" })).toEqual({ token: "t" });
    expect(registryCredentialsFromEnv({})).toBeUndefined();
    await expect(() => registryCredentialsFromEnv({ REGISTRY_USERNAME: "u" })).toThrowWithCode("OCI_AUTH_FAILED");
    // Which variable is missing, by name; never a value.
    expect(() => registryCredentialsFromEnv({ REGISTRY_USERNAME: "alice-secret-name" })).toThrow(
      "registry credentials are incomplete: expected REGISTRY_USERNAME and REGISTRY_PASSWORD together (or REGISTRY_TOKEN alone), found REGISTRY_USERNAME set but REGISTRY_PASSWORD is not set; fix: set REGISTRY_PASSWORD too, or unset REGISTRY_USERNAME",
    );
    expect(() => registryCredentialsFromEnv({ REGISTRY_PASSWORD: "S3cr3t", REGISTRY_USERNAME: "" })).toThrow("found REGISTRY_PASSWORD set but REGISTRY_USERNAME is empty; fix: set REGISTRY_USERNAME too");
    expect(() => registryCredentialsFromEnv({ REGISTRY_PASSWORD: "S3cr3t" })).not.toThrow(/S3cr3t/);
    expect(() => registryCredentialsFromEnv({ REGISTRY_USERNAME: "alice-secret-name" })).not.toThrow(/alice-secret-name/);
  });

  it("or from stdin, one trailing newline removed, bounded", async () => {
    expect(await readSecretFromStream(Readable.from([Buffer.from("pa"), Buffer.from("ss\n")]))).toBe("pass");
    expect(await readSecretFromStream(Readable.from([Buffer.from("pass\r\n")]))).toBe("pass");
    await expect(() => readSecretFromStream(Readable.from([Buffer.from("\n")]))).toThrowWithCode("OCI_AUTH_FAILED");
    await expect(() => readSecretFromStream(Readable.from([Buffer.alloc(70 * 1024, 0x61)]))).toThrowWithCode("OCI_BODY_TOO_LARGE");
  });
});

describe("registry suite mode (test harness)", () => {
  it("runs with the binary, fails without it under REQUIRE_REGISTRY=1, skips otherwise", async () => {
    const { registrySuiteMode } = await import("../support/registry.js");
    expect(registrySuiteMode(true, { REQUIRE_REGISTRY: "1" })).toBe("run");
    expect(registrySuiteMode(false, { REQUIRE_REGISTRY: "1" })).toBe("fail");
    expect(registrySuiteMode(false, {})).toBe("skip");
    expect(registrySuiteMode(false, { REQUIRE_REGISTRY: "0" })).toBe("skip");
  });
});
