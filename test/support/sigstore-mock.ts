/**
 * Sigstore's services as a boundary we emulate: `@sigstore/mock`'s Fulcio
 * and Rekor handlers served on a loopback HTTP server, GitHub
 * Actions-shaped OIDC identity tokens, and the trusted root that trusts
 * exactly this mock (its CA and transparency log keys).
 */
import { createHash, generateKeyPairSync } from "node:crypto";
import http from "node:http";
import { fulcioHandler, initializeCA, initializeTLog, initializeTSA, rekorHandler, tsaHandler } from "@sigstore/mock";

/** A GitHub Actions identity: what the OIDC token claims (and Fulcio puts in the certificate). */
export interface GitHubIdentity {
  repository: string;
  workflowPath?: string;
  ref?: string;
  sha?: string;
  runId: string;
  runAttempt: string;
  issuer?: string;
}

/** A running mock Sigstore. */
export interface MockSigstore {
  /** Base URL of both Fulcio and Rekor (`http://127.0.0.1:PORT`). */
  url: string;
  /** The trusted root JSON for this mock (its CA and its Rekor). */
  trustedRoot: Record<string, unknown>;
  /**
   * The trusted root of the same CA with no transparency log and the mock's timestamp
   * authority instead: the shape of GitHub's Sigstore instance for private repositories.
   */
  trustedRootWithoutLog: Record<string, unknown>;
  /** An unsigned OIDC token with GitHub Actions claims (the mock Fulcio decodes, not verifies, it). */
  token(identity: GitHubIdentity): string;
  /** Paths of the requests served. */
  requests: string[];
  close(): Promise<void>;
}

const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
const b64 = (bytes: Buffer) => bytes.toString("base64");

/** Start the mock on 127.0.0.1 (Fulcio `POST /api/v2/signingCert`, Rekor `POST /api/v1/log/entries`, TSA `POST /api/v1/timestamp`). */
export async function startMockSigstore(): Promise<MockSigstore> {
  // One fixed clock, in whole seconds, for the CA, the log and the TSA. asn1js writes a GeneralizedTime's
  // fraction without trailing zeros (".12" for 120 ms), while @sigstore/core reads only three digits
  // (RFC 3161 2.4.2 allows any number), so a wall-clock TSA made about one run in ten fail with
  // "invalid time"; without milliseconds there is no fraction. A fixed instant also keeps the
  // certificate (valid for 10 minutes from it), the log entry and the timestamp consistent however
  // long a test file runs. The mock reads the clock only when it signs, and its root and TSA
  // certificates are valid from the wall-clock second they were made in, so the instant is set once
  // they exist (below): taken before, a start-up that crossed a second boundary (under load) put
  // every signature before its certificate ("timestamp could not be verified").
  const clock = new Date(0);
  const requests: string[] = [];
  const handlers = new Map<string, (body: string) => Promise<{ statusCode: number; response: string | Buffer; contentType?: string }>>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      requests.push(`${req.method} ${req.url}`);
      const handler = req.method === "POST" ? handlers.get(req.url ?? "") : undefined;
      if (handler === undefined) {
        res.writeHead(404).end();
        return;
      }
      handler(Buffer.concat(chunks).toString("utf8")).then(
        (r) => res.writeHead(r.statusCode, { "content-type": r.contentType ?? "text/plain" }).end(r.response),
        () => res.writeHead(500).end(),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const url = `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}`;

  const p256 = () => generateKeyPairSync("ec", { namedCurve: "P-256" });
  // No CT log: @sigstore/mock 0.11.0 writes SCTs without their signature (its ECDSA signature is raw r||s,
  // which it then tries to read as DER), so no verifier can check them. The trusted root below lists no
  // CT log, and a root without CT logs requires no SCT (src/fetch/sigstore-verify.ts).
  const ca = await initializeCA(p256(), undefined, clock);
  const tlog = await initializeTLog(url, p256(), clock);
  const fulcio = fulcioHandler(ca, { subjectClaim: "job_workflow_url" });
  const rekor = rekorHandler(tlog);
  const tsa = await initializeTSA(p256(), clock);
  const timestamps = tsaHandler(tsa);
  handlers.set(fulcio.path, fulcio.fn);
  handlers.set(rekor.path, rekor.fn);
  handlers.set(timestamps.path, timestamps.fn);
  // The next whole second at or after now: not before any certificate made above (X.509 times are whole seconds).
  clock.setTime(Math.ceil(Date.now() / 1000) * 1000);

  const start = new Date(clock.getTime() - 3_600_000).toISOString();
  const log = (publicKey: Buffer, logId: Buffer) => ({
    baseUrl: url,
    hashAlgorithm: "SHA2_256",
    publicKey: { rawBytes: b64(publicKey), keyDetails: "PKIX_ECDSA_P256_SHA_256", validFor: { start } },
    logId: { keyId: b64(logId) },
  });
  const trustedRoot = {
    mediaType: "application/vnd.dev.sigstore.trustedroot+json;version=0.1",
    certificateAuthorities: [{ subject: { organization: "sigstore.mock", commonName: "sigstore" }, uri: url, certChain: { certificates: [{ rawBytes: b64(ca.rootCertificate) }] }, validFor: { start } }],
    tlogs: [log(tlog.publicKey, createHash("sha256").update(tlog.publicKey).digest())],
    ctlogs: [],
    timestampAuthorities: [],
  };
  const trustedRootWithoutLog = {
    ...trustedRoot,
    tlogs: [],
    timestampAuthorities: [{ subject: { organization: "sigstore.mock", commonName: "tsa" }, uri: url, certChain: { certificates: [{ rawBytes: b64(tsa.intCertificate) }, { rawBytes: b64(tsa.rootCertificate) }] }, validFor: { start } }],
  };

  return {
    url,
    trustedRoot,
    trustedRootWithoutLog,
    requests,
    token(identity) {
      const workflow = `${identity.repository}/${identity.workflowPath ?? ".github/workflows/release.yml"}@${identity.ref ?? "refs/heads/main"}`;
      const owner = identity.repository.split("/")[0];
      const claims = {
        iss: identity.issuer ?? "https://token.actions.githubusercontent.com",
        sub: `repo:${identity.repository}:ref:${identity.ref ?? "refs/heads/main"}`,
        aud: "sigstore",
        job_workflow_url: `https://github.com/${workflow}`,
        job_workflow_ref: workflow,
        repository: identity.repository,
        repository_owner: owner,
        ref: identity.ref ?? "refs/heads/main",
        sha: identity.sha ?? "0".repeat(40),
        event_name: "push",
        workflow_ref: workflow,
        run_id: identity.runId,
        run_attempt: identity.runAttempt,
        runner_environment: "github-hosted",
      };
      return `${b64url({ alg: "none", typ: "JWT" })}.${b64url(claims)}.`;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
