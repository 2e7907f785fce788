/**
 * Nested options of `openTarget` / `new RegistryTarget` (`registry`, `registry.retry`, `credentials`) are checked
 * like the top-level ones (docs/oci.md "Arguments"): a misspelt key, a value of the wrong kind or a number that is
 * not finite is OCI_ARGUMENT_INVALID, never ignored; credentials are exactly `{username, password}` or `{token}`,
 * and a refusal never echoes a credential's value.
 */
import { describe, expect, it } from "vitest";
import { RegistryTarget, childEnvironment, descriptorOf, listReferrers, openTarget, readLayout, runBounded, type Target } from "../../src/oci/index.js";

const REPO = "127.0.0.1:5000/a/b";
const open = (options: object): Promise<Target> => openTarget(REPO, { plainHttp: true, ...options } as never);

/** [name, options of openTarget, message part]. */
const refused: [string, object, string][] = [
  ["registry: misspelt trustedTokenRealm", { registry: { trustedTokenRealm: ["https://auth.example"] } }, 'options.registry key "trustedTokenRealm" is not one it reads (it reads timeoutMs, bodyTimeoutMs, retry, chunkSize, ca, maxTagPages, tagPageSize, trustedTokenRealms); did you mean "trustedTokenRealms"?'],
  ["registry: 5", { registry: 5 }, "options.registry must be an object"],
  ["registry.ca: 5", { registry: { ca: 5 } }, "options.registry.ca must be PEM certificate text (a string or Buffer) or absent, found number 5"],
  ["registry.timeoutMs: NaN", { registry: { timeoutMs: NaN } }, "options.registry.timeoutMs must be a number of milliseconds of at least 1 (or absent), found number NaN"],
  ["registry.timeoutMs: Infinity", { registry: { timeoutMs: Infinity } }, "options.registry.timeoutMs must be a number of milliseconds of at least 1 (or absent), found number Infinity"],
  ["registry.bodyTimeoutMs: '5'", { registry: { bodyTimeoutMs: "5" } }, 'options.registry.bodyTimeoutMs must be a number of milliseconds of at least 1 (or absent), found "5"'],
  ["registry.retry: -1", { registry: { retry: -1 } }, "options.registry.retry must be an object { maxAttempts?, baseDelayMs?, maxDelayMs? } or absent, found number -1"],
  ["registry.retry: {atempts}", { registry: { retry: { atempts: 1 } } }, 'options.registry.retry key "atempts" is not one it reads (it reads maxAttempts, baseDelayMs, maxDelayMs)'],
  ["registry.retry.maxAttempts: 0", { registry: { retry: { maxAttempts: 0 } } }, "options.registry.retry.maxAttempts must be a number of attempts of at least 1 (or absent), found number 0"],
  ["registry.trustedTokenRealms: 'x'", { registry: { trustedTokenRealms: "https://a" } }, "options.registry.trustedTokenRealms must be token realm origins (an array of strings)"],
  ["registry.trustedTokenRealms: ['auth']", { registry: { trustedTokenRealms: ["auth"] } }, 'options.registry.trustedTokenRealms[0] must be an absolute URL such as "https://auth.docker.io", found "auth"'],
  ["registry.maxTagPages: -1", { registry: { maxTagPages: -1 } }, "options.registry.maxTagPages must be a number of pages of at least 1"],
  ["credentials: {user, pass}", { credentials: { user: "u", pass: "SECRET-P" } }, 'options.credentials must be exactly { username, password } or exactly { token } (strings without control characters), found an object with keys "user", "pass"'],
  ["credentials: {username} only", { credentials: { username: "u" } }, 'found an object with keys "username"'],
  ["credentials: {username, password, token}", { credentials: { username: "u", password: "SECRET-P", token: "SECRET-T" } }, 'found an object with keys "username", "password", "token"'],
  ["credentials: 'SECRET-S'", { credentials: "SECRET-S" }, "options.credentials must be exactly { username, password } or exactly { token } (strings without control characters), found a string"],
  ["credentials: {token: CRLF}", { credentials: { token: "t\r\nSECRET-T" } }, "found options.credentials.token holding a control character (its value is not shown)"],
  ["credentials: {username, password: 5}", { credentials: { username: "u", password: 5 } }, "found options.credentials.password of type number"],
  ["credentials: {username: NUL, password}", { credentials: { username: "u\u0000", password: "SECRET-P" } }, "found options.credentials.username holding a control character"],
  ["orasPath: 5", { orasPath: 5 }, "options.orasPath must be the oras executable (a string) or absent, found number 5"],
];

describe("openTarget checks its nested options", () => {
  it.each(refused)("%s is OCI_ARGUMENT_INVALID", async (_name, options, message) => {
    await expect(open(options)).toThrowWithCode("OCI_ARGUMENT_INVALID");
    const error = await open(options).then(() => undefined, (e: unknown) => e as Error);
    expect(error?.message).toContain(message);
    expect(error?.message).not.toContain("SECRET");
  });

  it("accepts the documented shapes", async () => {
    for (const options of [
      { registry: { timeoutMs: 5000, bodyTimeoutMs: 5000, retry: { maxAttempts: 2, baseDelayMs: 0, maxDelayMs: 10 }, chunkSize: 65536, ca: Buffer.from("x"), maxTagPages: 2, tagPageSize: 10, trustedTokenRealms: ["https://auth.example"] } },
      { registry: { ca: "PEM" } },
      { credentials: { username: "u", password: "p" } },
      { credentials: { token: "t" } },
    ]) {
      const target = await open(options);
      await target.close?.();
    }
  });
});

describe("new RegistryTarget checks its options", () => {
  const base = { registry: "127.0.0.1:5000", repository: "a/b", plainHttp: true };
  it.each([
    ["misspelt key", { ...base, timeoutMS: 5 }, 'option "timeoutMS" is not one it reads'],
    ["timeoutMs NaN", { ...base, timeoutMs: NaN }, "new RegistryTarget(options): options.timeoutMs must be a number of milliseconds of at least 1 (or absent), found number NaN"],
    ["credentials {user, pass}", { ...base, credentials: { user: "u", pass: "SECRET-P" } }, "options.credentials must be exactly { username, password } or exactly { token }"],
    ["registry 5", { ...base, registry: 5 }, "options.registry must be the registry's host[:port] (a non-empty string), found number 5"],
  ])("%s is OCI_ARGUMENT_INVALID", (_name, options, message) => {
    expect(() => new RegistryTarget(options as never)).toThrowWithCode("OCI_ARGUMENT_INVALID");
    expect(() => new RegistryTarget(options as never)).toThrow(message);
    expect(() => new RegistryTarget(options as never)).not.toThrow("SECRET");
  });
  it("no options at all is OCI_ARGUMENT_INVALID", () => {
    expect(() => new RegistryTarget(undefined as never)).toThrowWithCode("OCI_ARGUMENT_INVALID");
  });
  it("accepts valid options", async () => {
    await new RegistryTarget({ ...base, timeoutMs: 100, credentials: { token: "t" }, retry: { maxAttempts: 1 } }).close();
  });
});

describe("listReferrers, readLayout and runBounded check their options", () => {
  const subject = descriptorOf("application/octet-stream", Buffer.from("s"));
  const emptyTarget = { resolve: async () => undefined, fetch: async () => undefined, exists: async () => false, referrers: async () => [] } as never;
  const runOptions = { timeoutMs: 10_000, maxOutputBytes: 1024 };
  it.each([
    ["listReferrers {artifactType: 5}", () => listReferrers(emptyTarget, subject, { artifactType: 5 } as never), "listReferrers(target, subject, options): options.artifactType must be a media type to keep (or absent for all) (a non-empty string), found number 5"],
    ["listReferrers {artifacttype}", () => listReferrers(emptyTarget, subject, { artifacttype: "x" } as never), 'option "artifacttype" is not one it reads (it reads artifactType); did you mean "artifactType"?'],
    ["readLayout {refname}", () => readLayout("/nonexistent-hpk", { refname: "payload" } as never), 'readLayout(dir, options): option "refname" is not one it reads (it reads refName); did you mean "refName"?'],
    ["readLayout {refName: 5}", () => readLayout("/nonexistent-hpk", { refName: 5 } as never), "options.refName must be the manifest's ref name (a non-empty string), found number 5"],
    ["readLayout(5)", () => readLayout(5 as never), "readLayout(dir, options): dir must be the layout directory's path"],
    ["runBounded {env: plain object}", () => runBounded("true", [], { env: { PATH: "/bin" } as never, ...runOptions }), "options.env must be a child environment made by childEnvironment(allow, set)"],
    ["runBounded {env: a copy}", () => runBounded("true", [], { env: { ...childEnvironment(["PATH"]) } as never, ...runOptions }), "found an object childEnvironment did not return"],
  ])("%s is OCI_ARGUMENT_INVALID", async (_name, failing, message) => {
    await expect(async () => failing()).toThrowWithCode("OCI_ARGUMENT_INVALID");
    await expect(async () => failing()).rejects.toThrow(message);
  });
  it("accepts the documented options", async () => {
    await expect(listReferrers(emptyTarget, subject, { artifactType: "application/x" })).resolves.toMatchObject({ descriptors: [] });
    await expect(readLayout("/nonexistent-hpk", { refName: "payload" })).rejects.toThrow(/./);
    await expect(readLayout("/nonexistent-hpk", { refName: "payload" }).catch((e: { code?: string }) => e.code)).resolves.not.toBe("OCI_ARGUMENT_INVALID");
    expect((await runBounded("true", [], { env: childEnvironment(["PATH"]), ...runOptions })).outcome).toMatchObject({ kind: "exited", code: 0 });
  });
});
