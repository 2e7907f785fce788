/**
 * Keyless signing against Sigstore services that fail the way networks do:
 * a connection reset on the first request to each service is retried (the
 * default), and with retries turned off the refusal names the reason
 * (`PROVENANCE_SIGNING_FAILED` ... "socket hang up"), not only the step.
 * The services are `@sigstore/mock` behind a loopback proxy that drops the
 * first connection per path.
 */
import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signStatement, type ProvenanceSigner } from "../../release/provenance-sign.js";
import { startMockSigstore, type MockSigstore } from "../support/sigstore-mock.js";

let sigstore: MockSigstore;
let proxy: http.Server;
let proxyUrl: string;
/** Paths whose next request the proxy answers by resetting the connection. */
const dropNext = new Set<string>();
const dropped: string[] = [];

beforeAll(async () => {
  sigstore = await startMockSigstore();
  proxy = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const path = req.url ?? "";
      if (dropNext.delete(path)) {
        dropped.push(path);
        req.socket.destroy();
        return;
      }
      fetch(`${sigstore.url}${path}`, { method: req.method, headers: { "content-type": req.headers["content-type"] ?? "application/json" }, body: Buffer.concat(chunks) }).then(
        async (answer) => res.writeHead(answer.status, { "content-type": answer.headers.get("content-type") ?? "text/plain" }).end(Buffer.from(await answer.arrayBuffer())),
        () => res.writeHead(502).end(),
      );
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  const address = proxy.address();
  proxyUrl = `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}`;
});

afterAll(async () => {
  proxy?.closeAllConnections();
  await new Promise<void>((resolve) => (proxy ? proxy.close(() => resolve()) : resolve()));
  await sigstore?.close();
});

const token = () => sigstore.token({ repository: "acme/demo-plugin", runId: "1", runAttempt: "1" });
const signer = (extra: Partial<Extract<ProvenanceSigner, { kind: "keyless" }>> = {}): ProvenanceSigner => {
  const secret = token();
  return { kind: "keyless", identityToken: async () => secret, fulcioUrl: proxyUrl, rekorUrl: proxyUrl, tsaUrl: proxyUrl, rekorEntryType: "intoto", ...extra };
};

describe("keyless signing over an unreliable network", () => {
  it("a reset connection to Fulcio, Rekor and the TSA is retried by default: the bundle has the certificate, the log entry and the timestamp", async () => {
    dropped.length = 0;
    for (const path of ["/api/v2/signingCert", "/api/v1/log/entries", "/api/v1/timestamp"]) dropNext.add(path);
    const bundle = JSON.parse((await signStatement(Buffer.from("{}"), signer())).toString("utf8"));
    expect(dropped.sort()).toEqual(["/api/v1/log/entries", "/api/v1/timestamp", "/api/v2/signingCert"]);
    expect(bundle.verificationMaterial.certificate.rawBytes).toMatch(/^[A-Za-z0-9+/]+=*$/);
    expect(bundle.verificationMaterial.tlogEntries).toHaveLength(1);
    expect(bundle.verificationMaterial.timestampVerificationData.rfc3161Timestamps).toHaveLength(1);
  });

  it("with retries: 0 the same reset is PROVENANCE_SIGNING_FAILED naming the step and the reason, never the token", async () => {
    dropped.length = 0;
    dropNext.add("/api/v2/signingCert");
    const secretSigner = signer({ retries: 0 });
    const secret = await (secretSigner as Extract<ProvenanceSigner, { kind: "keyless" }>).identityToken();
    const error = await signStatement(Buffer.from("{}"), secretSigner).then(() => null, (e: unknown) => e as Error & { code?: string });
    expect(error?.code).toBe("PROVENANCE_SIGNING_FAILED");
    expect(error?.message).toMatch(/^signing the provenance statement failed \(keyless\): error creating signing certificate: .*(socket hang up|ECONNRESET)/);
    expect(error?.message).not.toContain(secret);
    expect(dropped).toEqual(["/api/v2/signingCert"]);
  });

  it("a refused connection names the address that refused (after the retries)", async () => {
    const error = await signStatement(Buffer.from("{}"), { kind: "keyless", identityToken: async () => token(), fulcioUrl: "http://127.0.0.1:9", rekorUrl: "http://127.0.0.1:9" }).then(() => null, (e: unknown) => e as Error & { code?: string });
    expect(error?.code).toBe("PROVENANCE_SIGNING_FAILED");
    expect(error?.message).toMatch(/error creating signing certificate: .*ECONNREFUSED 127\.0\.0\.1:9/);
  });
});
