/**
 * A loopback registry that speaks plain HTTP, reached without `--plain-http`: the TLS client gets an HTTP
 * answer (OpenSSL "wrong version number"). Wherever the transport connects first (the privacy gate's
 * anonymous probe in `fetch`, the registry session for a library caller), the error is `OCI_TLS_FAILED`
 * naming the host and the fix (`--plain-http`), never `PRIVACY_NO_STATUS` with OpenSSL's raw text.
 */
import http from "node:http";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { fetchRelease } from "../../src/fetch/fetch.js";
import { openTarget } from "../../src/oci/open.js";
import { isPlainHttpAnswer } from "../../src/oci/registry-http.js";
import { runCli } from "../support/cli.js";

let server: http.Server;
let host: string;
let work: string;
const digest = `sha256:${"a".repeat(64)}`;
const fix = /the registry at 127\.0\.0\.1:\d+ answered plain HTTP to a TLS connection.*fix: for a loopback registry add --plain-http/;

beforeAll(async () => {
  server = http.createServer((_req, res) => res.writeHead(401, { "www-authenticate": 'Basic realm="r"' }).end());
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const address = server.address();
  host = `127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}`;
  work = await mkdtemp(join(tmpdir(), "hpk-plain-http-"));
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await rm(work, { recursive: true, force: true });
});

it("CLI fetch: exit 1, OCI_TLS_FAILED naming the host and --plain-http, no OpenSSL text, nothing written", async () => {
  const out = join(work, "cli");
  const result = await runCli(["fetch", "--reference", `${host}/acme/demo@${digest}`, "--output-dir", out], { env: { GH_TOKEN: "", REGISTRY_USERNAME: "", REGISTRY_PASSWORD: "", REGISTRY_TOKEN: "" } });
  expect(result.code).toBe(1);
  expect(result.stderr).toMatch(fix);
  expect(result.stderr).toMatch(/\[OCI_TLS_FAILED\]\n$/);
  expect(result.stderr).not.toMatch(/PRIVACY_NO_STATUS|ssl3_get_record/);
  await expect(readdir(out)).rejects.toMatchObject({ code: "ENOENT" });
});

it("library fetchRelease (privacy probe first) and a registry target (the session) say the same", async () => {
  const fetching = fetchRelease({ reference: `${host}/acme/demo@${digest}`, repository: `${host}/acme/demo`, outputDir: join(work, "lib"), progress: null, env: {} });
  await expect(fetching).rejects.toMatchObject({ code: "OCI_TLS_FAILED" });
  await expect(fetching).rejects.toThrow(fix);
  const target = await openTarget(`${host}/acme/demo`);
  const resolving = target.resolve(digest);
  await expect(resolving).rejects.toMatchObject({ code: "OCI_TLS_FAILED" });
  await expect(resolving).rejects.toThrow(fix);
});

it("isPlainHttpAnswer: OpenSSL's two symptoms (code or text, also as a cause), not other TLS failures", () => {
  expect(isPlainHttpAnswer(Object.assign(new Error("x"), { code: "ERR_SSL_WRONG_VERSION_NUMBER" }))).toBe(true);
  expect(isPlainHttpAnswer(Object.assign(new Error("C0:error:0A0000C6:SSL routines:tls_get_more_records:packet length too long"), { code: "EPROTO" }))).toBe(true);
  expect(isPlainHttpAnswer(new Error("fetch failed", { cause: Object.assign(new Error("ssl3_get_record:wrong version number"), { code: "EPROTO" }) }))).toBe(true);
  expect(isPlainHttpAnswer(Object.assign(new Error("self-signed certificate"), { code: "DEPTH_ZERO_SELF_SIGNED_CERT" }))).toBe(false);
  expect(isPlainHttpAnswer(Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }))).toBe(false);
});
