/**
 * Verification needs no network: the CLI runs with a preloaded module that
 * refuses every outbound connection (TCP, TLS, DNS, fetch) and logs each
 * attempt. Keyless verification against the embedded public-good root, a
 * key-signed bundle, and `verify-provenance --reference` / `fetch --provenance`
 * on an `oci-layout:` store all succeed with no attempt logged; a command that
 * does need the network is refused, proving the guard bites.
 */
import { chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LayoutTarget } from "../../src/oci/layout-target.js";
import { attestRelease } from "../../release/attest.js";
import { runCli } from "../support/cli.js";
import { makeTestKey, type TestKey } from "../support/provenance-fixture.js";
import { createReleaseFixture, stageFixture, type ReleaseFixture, type StagedRelease } from "../support/release-fixture.js";

const CASES = fileURLToPath(new URL("../fixtures/sigstore-conformance", import.meta.url));

/** CommonJS preload: every outbound connection attempt is logged and refused with ECONNREFUSED. */
const GUARD = String.raw`
const fs = require("node:fs");
const net = require("node:net");
const tls = require("node:tls");
const dns = require("node:dns");
const log = process.env.HPK_NET_LOG;
const refuse = (what) => {
  fs.appendFileSync(log, what + "\n");
  const error = new Error("outbound connection refused by the test (" + what + ")");
  error.code = "ECONNREFUSED";
  return error;
};
const connect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function (...args) {
  const first = Array.isArray(args[0]) ? args[0][0] : args[0];
  const target = typeof first === "object" && first !== null ? (first.path ?? first.host + ":" + first.port) : String(first);
  const error = refuse("tcp " + target);
  process.nextTick(() => this.destroy(error));
  return this;
};
void connect;
tls.connect = function () { throw refuse("tls"); };
dns.lookup = function (host, ...rest) { const cb = rest[rest.length - 1]; process.nextTick(() => cb(refuse("dns " + host))); };
dns.promises.lookup = async (host) => { throw refuse("dns " + host); };
globalThis.fetch = async (url) => { throw refuse("fetch " + String(url)); };
`;

let dir: string;
let guard: string;
let netLog: string;
let fixture: ReleaseFixture;
let staged: StagedRelease;
let repository: string;
let key: TestKey;

async function offline(args: string[]) {
  await writeFile(netLog, "");
  const result = await runCli(args, { cwd: dir, env: { NODE_OPTIONS: `--require ${guard}`, HPK_NET_LOG: netLog, HTTPS_PROXY: undefined, HTTP_PROXY: undefined } });
  return { ...result, attempts: (await readFile(netLog, "utf8")).split("\n").filter((l) => l.length > 0) };
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "hpk-provenance-offline-"));
  guard = join(dir, "refuse-network.cjs");
  await writeFile(guard, GUARD);
  netLog = join(dir, "network.log");
  const storeDir = join(dir, "store");
  repository = `oci-layout:${storeDir}`;
  fixture = await createReleaseFixture({ registryRepository: repository });
  staged = await stageFixture(fixture, await LayoutTarget.open(storeDir, { create: true }), repository);
  await chmod(storeDir, 0o700);
  key = await makeTestKey(dir, "offline");
  await attestRelease({ policy: fixture.policy, repository, reference: `${repository}@${staged.bundle.digest}`, signer: { kind: "key", privateKey: key.privateKey }, sourceRepository: "https://github.com/acme/demo-plugin", env: {} });
});

afterAll(async () => {
  await fixture?.cleanup();
  await rm(dir, { recursive: true, force: true });
});

describe("verification with every outbound connection refused", () => {
  it("the guard bites: a command that needs the network is refused and the attempt logged", async () => {
    const result = await offline(["fetch", "--reference", `127.0.0.1:9/acme/x@sha256:${"a".repeat(64)}`, "--repository", "127.0.0.1:9/acme/x", "--output-dir", join(dir, "never"), "--plain-http"]);
    expect(result.code).toBe(1);
    expect(result.attempts.length).toBeGreaterThan(0);
    expect(result.attempts[0]).toMatch(/^tcp 127\.0\.0\.1/);
  });

  it("keyless: the conformance happy path verifies against the embedded public-good root with no connection", async () => {
    const result = await offline([
      "verify-provenance",
      "--bundle", join(CASES, "cases", "happy-path-intoto-in-dsse-v3", "bundle.sigstore.json"),
      "--certificate-identity", "https://github.com/sigstore-conformance/extremely-dangerous-public-oidc-beacon/.github/workflows/extremely-dangerous-oidc-beacon.yml@refs/heads/main",
      "--certificate-oidc-issuer", "https://token.actions.githubusercontent.com",
      join(CASES, "a.txt"),
    ]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.attempts).toEqual([]);
  });

  it("a Rekor v2 DSSE bundle with its own trusted root: no connection", async () => {
    const rekor2 = join(CASES, "cases", "rekor2-dsse-happy-path");
    const result = await offline([
      "verify-provenance", "--bundle", join(rekor2, "bundle.sigstore.json"), "--trusted-root", join(rekor2, "trusted_root.json"),
      "--certificate-identity", "https://github.com/sigstore-conformance/extremely-dangerous-public-oidc-beacon/.github/workflows/extremely-dangerous-oidc-beacon.yml@refs/heads/main",
      "--certificate-oidc-issuer", "https://token.actions.githubusercontent.com", join(CASES, "a.txt"),
    ]);
    expect(result.code).toBe(0);
    expect(result.attempts).toEqual([]);
  });

  it("verify-provenance --reference and fetch --provenance on an oci-layout store: no connection", async () => {
    const reference = `${repository}@${staged.bundle.digest}`;
    const verified = await offline(["verify-provenance", "--reference", reference, "--key", key.pubFile, "--json"]);
    expect(verified.stderr).toBe("");
    expect(JSON.parse(verified.stdout)).toMatchObject({ ok: true, discovery: "tag-schema" });
    expect(verified.attempts).toEqual([]);
    const fetched = await offline(["fetch", "--reference", reference, "--repository", repository, "--output-dir", join(dir, "out"), "--provenance", "--key", key.pubFile]);
    expect(fetched.stderr).toBe("");
    expect(fetched.code).toBe(0);
    expect(fetched.attempts).toEqual([]);
  });
});
