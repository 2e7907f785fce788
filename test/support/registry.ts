/**
 * Test registry harness: Debian's `docker-registry` (distribution 2.8) on
 * 127.0.0.1, a free port and temporary storage, in three variants:
 *
 * - `auth: "none"`: anonymous pull and push;
 * - `auth: "basic"`: htpasswd (bcrypt via `htpasswd -iBn`, password on stdin);
 * - `auth: "bearer"`: distribution's `auth.token` with a self-generated
 *   certificate and a small loopback token endpoint, so the GHCR flow
 *   (`WWW-Authenticate: Bearer realm=..,service=..,scope=..` -> token endpoint
 *   with Basic credentials -> token) is real. As on GHCR the realm is on the
 *   registry's own origin: a loopback front serves `/token` and passes every
 *   other request through to docker-registry. Anonymous token requests get a
 *   token with no access (the registry refuses it, like a private GHCR package)
 *   unless `anonymousPull` is set (a "public" package).
 *
 * Without the binary, suites declared with {@link describeRegistry} skip with a
 * loud notice; with `REQUIRE_REGISTRY=1` they fail instead.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { createSign, randomBytes, randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import http from "node:http";
import https from "node:https";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { describe, it } from "vitest";
import YAML from "yaml";
import { stopChild } from "./stop-child.js";

/** Path of the registry binary (override with `DOCKER_REGISTRY_BIN`). */
export const REGISTRY_BINARY = process.env["DOCKER_REGISTRY_BIN"] ?? "/usr/bin/docker-registry";

/** Options of {@link startRegistry}. */
export interface RegistryOptions {
  auth?: "none" | "basic" | "bearer";
  /** Enable the DELETE API. Default false. */
  deleteEnabled?: boolean;
  /** Bearer variant only: anonymous tokens may pull (a public package). Default false. */
  anonymousPull?: boolean;
  /** Serve HTTPS with a fresh self-signed certificate for 127.0.0.1 (auth "none" or "basic"). Default false. */
  tls?: boolean;
}

/** One request the bearer token server answered. */
export interface TokenRequest {
  scopes: string[];
  service: string | null;
  /** `anonymous`, `authenticated` or `refused` (wrong credentials). */
  kind: "anonymous" | "authenticated" | "refused";
}

/** A running test registry. */
export interface RunningRegistry {
  /** `127.0.0.1:PORT`. */
  host: string;
  /** `http://127.0.0.1:PORT` (`https://` with `tls`). */
  url: string;
  auth: "none" | "basic" | "bearer";
  /** Set for `basic` and `bearer`. */
  username?: string;
  /** Set for `basic` and `bearer` (random per registry). */
  password?: string;
  /** The registry's storage root (temporary). */
  storageDir: string;
  /** TLS variant: the PEM certificate to trust. */
  caCert?: string;
  /** Bearer variant: the token endpoint URL. */
  tokenRealm?: string;
  /** Bearer variant: every token request, in order. */
  tokenRequests: TokenRequest[];
  /** Stop the registry (and token server) and remove its temporary files. */
  stop(): Promise<void>;
}

/** True when the `docker-registry` binary is installed. */
export function registryAvailable(): boolean {
  return existsSync(REGISTRY_BINARY);
}

/** True when `skopeo` is installed. */
export function skopeoAvailable(): boolean {
  return spawnSync("skopeo", ["--version"], { stdio: "ignore" }).status === 0;
}

/**
 * What a registry suite does: `run` with the binary, otherwise `fail` when
 * `REQUIRE_REGISTRY=1`, else `skip` (with a loud notice).
 */
export function registrySuiteMode(available: boolean, env: NodeJS.ProcessEnv): "run" | "skip" | "fail" {
  if (available) return "run";
  return env["REQUIRE_REGISTRY"] === "1" ? "fail" : "skip";
}

/**
 * `describe` for suites that need the registry: skips with a loud notice when
 * the binary is missing, or fails when `REQUIRE_REGISTRY=1`.
 */
export function describeRegistry(name: string, fn: () => void): void {
  const mode = registrySuiteMode(registryAvailable(), process.env);
  if (mode === "run") {
    describe(name, fn);
    return;
  }
  if (mode === "fail") {
    describe(name, () => {
      it("requires docker-registry", () => {
        throw new Error(`REQUIRE_REGISTRY=1 but ${REGISTRY_BINARY} is missing (apt-get install docker-registry)`);
      });
    });
    return;
  }
  process.stderr.write(
    `\n!!!!!!!! SKIPPING "${name}": ${REGISTRY_BINARY} not found. Install Debian's docker-registry ` +
      `(set REQUIRE_REGISTRY=1 to make this a failure). !!!!!!!!\n\n`,
  );
  describe.skip(name, fn);
}

/** A free TCP port on 127.0.0.1. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function run(cmd: string, args: string[], input?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(input ?? "");
  });
}

async function htpasswdLine(username: string, password: string): Promise<string> {
  const result = await run("htpasswd", ["-iBn", username], password);
  if (result.code !== 0) throw new Error(`htpasswd failed (exit ${result.code})`);
  return result.stdout.trim() + "\n";
}

function base64url(input: Buffer | string): string {
  return Buffer.from(input).toString("base64url");
}

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

async function tokenHandler(opts: {
  dir: string;
  service: string;
  issuer: string;
  username: string;
  password: string;
  anonymousPull: boolean;
  requests: TokenRequest[];
}): Promise<{ handler: Handler; certPath: string }> {
  const keyPath = path.join(opts.dir, "token-key.pem");
  const certPath = path.join(opts.dir, "token-cert.pem");
  const gen = await run("openssl", [
    "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-sha256", "-days", "2",
    "-subj", "/CN=hermes-plugin-kit test token issuer", "-keyout", keyPath, "-out", certPath,
  ]);
  if (gen.code !== 0) throw new Error(`openssl req failed (exit ${gen.code})`);
  const keyPem = await readFile(keyPath, "utf8");
  const certPem = await readFile(certPath, "utf8");
  const certDer = certPem.replace(/-----(BEGIN|END) CERTIFICATE-----/g, "").replace(/\s+/g, "");
  const expected = "Basic " + Buffer.from(`${opts.username}:${opts.password}`).toString("base64");

  const handler: Handler = (req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const authorization = req.headers.authorization;
    const scopes = url.searchParams.getAll("scope").flatMap((s) => s.split(" ")).filter((s) => s.length > 0);
    let kind: TokenRequest["kind"] = "anonymous";
    if (authorization !== undefined) kind = authorization === expected ? "authenticated" : "refused";
    opts.requests.push({ scopes, service: url.searchParams.get("service"), kind });
    if (kind === "refused") {
      res.writeHead(401, { "content-type": "application/json" });
      res.end(JSON.stringify({ errors: [{ code: "UNAUTHORIZED", message: "bad credentials" }] }));
      return;
    }
    const access = scopes.flatMap((scope) => {
      const first = scope.indexOf(":");
      const last = scope.lastIndexOf(":");
      if (first < 0 || last <= first) return [];
      const type = scope.slice(0, first);
      const name = scope.slice(first + 1, last);
      const wanted = scope.slice(last + 1).split(",");
      const allowed = kind === "authenticated" ? wanted : opts.anonymousPull ? wanted.filter((a) => a === "pull") : [];
      return allowed.length > 0 ? [{ type, name, actions: allowed }] : [];
    });
    const now = Math.floor(Date.now() / 1000);
    const header = { typ: "JWT", alg: "RS256", x5c: [certDer] };
    const claims = {
      iss: opts.issuer,
      sub: kind === "authenticated" ? opts.username : "",
      aud: opts.service,
      exp: now + 300,
      nbf: now - 10,
      iat: now,
      jti: randomUUID(),
      access,
    };
    const signingInput = `${base64url(JSON.stringify(header))}.${base64url(JSON.stringify(claims))}`;
    const signature = createSign("RSA-SHA256").update(signingInput).sign(keyPem);
    const token = `${signingInput}.${base64url(signature)}`;
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ token, access_token: token, expires_in: 300, issued_at: new Date().toISOString() }));
  };
  return { handler, certPath };
}

/**
 * The bearer variant's front door: one loopback origin serving `/token`
 * itself and passing every other request through to docker-registry
 * unchanged (raw headers, streamed bodies, `Expect: 100-continue` forwarded),
 * so the token realm is on the registry's own origin, as on GHCR.
 */
async function startFront(port: number, upstreamPort: number, token: Handler): Promise<http.Server> {
  const forward = (req: http.IncomingMessage, res: http.ServerResponse, expectContinue: boolean): void => {
    if ((req.url ?? "").split("?")[0] === "/token") {
      if (expectContinue) res.writeContinue();
      req.resume();
      token(req, res);
      return;
    }
    const up = http.request({ host: "127.0.0.1", port: upstreamPort, method: req.method, path: req.url, headers: req.rawHeaders as unknown as http.OutgoingHttpHeaders }, (upRes) => {
      res.writeHead(upRes.statusCode ?? 502, upRes.rawHeaders);
      upRes.pipe(res);
    });
    up.on("error", () => res.destroy());
    req.on("error", () => up.destroy());
    res.on("close", () => {
      if (!res.writableFinished) up.destroy();
    });
    if (expectContinue) {
      up.once("continue", () => {
        res.writeContinue();
        req.pipe(up);
      });
      up.flushHeaders();
    } else {
      req.pipe(up);
    }
  };
  const server = http.createServer((req, res) => forward(req, res, false));
  server.on("checkContinue", (req, res) => forward(req, res, true));
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", resolve);
  });
  return server;
}

function probe(url: string): Promise<number | null> {
  return new Promise((resolve) => {
    const get = url.startsWith("https:") ? https.get : http.get;
    const req = get(url, { timeout: 1000, rejectUnauthorized: false }, (res) => {
      res.resume();
      resolve(res.statusCode ?? null);
    });
    req.on("error", () => resolve(null));
    req.on("timeout", () => {
      req.destroy();
      resolve(null);
    });
  });
}

const running = new Set<ChildProcess>();
let exitHookInstalled = false;
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once("exit", () => {
    for (const child of running) child.kill("SIGKILL");
  });
}

/**
 * Start `docker-registry serve <config.yml>` on 127.0.0.1 (free port, temp
 * storage) and wait until `/v2/` answers.
 * @returns the running registry; call `stop()` in `afterAll`.
 */
export async function startRegistry(options: RegistryOptions = {}): Promise<RunningRegistry> {
  if (!registryAvailable()) throw new Error(`${REGISTRY_BINARY} is not installed`);
  installExitHook();
  const auth = options.auth ?? "none";
  const dir = await mkdtemp(path.join(os.tmpdir(), "hpk-registry-"));
  const storageDir = path.join(dir, "storage");
  const username = auth === "none" ? undefined : "hermes-tester";
  const password = auth === "none" ? undefined : randomBytes(12).toString("hex");
  const tokenRequests: TokenRequest[] = [];
  let token: Handler | undefined;
  let front: http.Server | undefined;
  const frontPort = auth === "bearer" ? await freePort() : 0;
  const tokenRealm = `http://127.0.0.1:${frontPort}/token`;
  const service = "hermes-test-registry";
  const issuer = "hermes-test-token-issuer";

  const config: Record<string, unknown> = {
    version: 0.1,
    log: { level: "error", accesslog: { disabled: true }, formatter: "text" },
    storage: {
      filesystem: { rootdirectory: storageDir },
      delete: { enabled: options.deleteEnabled === true },
      maintenance: { uploadpurging: { enabled: false } },
    },
    http: { secret: randomBytes(16).toString("hex"), headers: { "X-Content-Type-Options": ["nosniff"] } },
  };
  if (auth === "basic") {
    const htpasswdPath = path.join(dir, "htpasswd");
    await writeFile(htpasswdPath, await htpasswdLine(username as string, password as string), { mode: 0o600 });
    config["auth"] = { htpasswd: { realm: "hermes-test-basic", path: htpasswdPath } };
  } else if (auth === "bearer") {
    const started = await tokenHandler({
      dir, service, issuer, username: username as string, password: password as string,
      anonymousPull: options.anonymousPull === true, requests: tokenRequests,
    });
    token = started.handler;
    config["auth"] = { token: { realm: tokenRealm, service, issuer, rootcertbundle: started.certPath } };
  }

  let caCert: string | undefined;
  if (options.tls === true) {
    if (auth === "bearer") throw new Error("startRegistry: tls is supported with auth none or basic");
    const keyPath = path.join(dir, "tls-key.pem");
    const certPath = path.join(dir, "tls-cert.pem");
    const gen = await run("openssl", [
      "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-sha256", "-days", "2", "-subj", "/CN=127.0.0.1",
      "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", keyPath, "-out", certPath,
    ]);
    if (gen.code !== 0) throw new Error(`openssl req failed (exit ${gen.code})`);
    caCert = await readFile(certPath, "utf8");
    (config["http"] as Record<string, unknown>)["tls"] = { certificate: certPath, key: keyPath };
  }
  const scheme = caCert === undefined ? "http" : "https";

  let child: ChildProcess | undefined;
  let port = 0;
  let stderrTail = "";
  for (let attempt = 0; attempt < 4 && child === undefined; attempt += 1) {
    port = await freePort();
    (config["http"] as Record<string, unknown>)["addr"] = `127.0.0.1:${port}`;
    const configPath = path.join(dir, "config.yml");
    await writeFile(configPath, YAML.stringify(config), { mode: 0o600 });
    const proc = spawn(REGISTRY_BINARY, ["serve", configPath], { stdio: ["ignore", "ignore", "pipe"] });
    running.add(proc);
    let exited = false;
    proc.on("exit", () => {
      exited = true;
      running.delete(proc);
    });
    proc.stderr?.on("data", (d: Buffer) => (stderrTail = (stderrTail + d.toString()).slice(-4000)));
    const deadline = Date.now() + 15_000;
    while (!exited && Date.now() < deadline) {
      const status = await probe(`${scheme}://127.0.0.1:${port}/v2/`);
      if (status === 200 || status === 401) {
        child = proc;
        break;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    if (child === undefined) proc.kill("SIGKILL");
  }
  if (child === undefined) {
    await rm(dir, { recursive: true, force: true });
    throw new Error(`docker-registry did not start: ${stderrTail.slice(-1000)}`);
  }
  const proc = child;
  if (token !== undefined) {
    try {
      front = await startFront(frontPort, port, token);
    } catch (error) {
      proc.kill("SIGKILL");
      await rm(dir, { recursive: true, force: true });
      throw error;
    }
  }
  const host = `127.0.0.1:${front === undefined ? port : frontPort}`;
  const handle: RunningRegistry = {
    host,
    url: `${scheme}://${host}`,
    auth,
    storageDir,
    tokenRequests,
    async stop() {
      await stopChild(proc, 3000);
      if (front !== undefined) {
        front.closeAllConnections();
        await new Promise<void>((resolve) => front?.close(() => resolve()));
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
  if (username !== undefined) handle.username = username;
  if (password !== undefined) handle.password = password;
  if (front !== undefined) handle.tokenRealm = tokenRealm;
  if (caCert !== undefined) handle.caCert = caCert;
  return handle;
}
