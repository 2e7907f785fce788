/**
 * The demo's own registry (`release demo --start-registry`): Debian's
 * docker-registry with htpasswd Basic auth on a loopback port. Storage, port,
 * password and pid live in `<workspace>/docker-registry` (mode 0700), so a
 * rerun reaches the same repository. With `--keep-registry` the process is
 * detached and left running after the demo; `<dir>/credentials.env` (0600)
 * holds `REGISTRY_USERNAME` and `REGISTRY_PASSWORD`, never printed.
 * Until the demo keeps it ({@link DemoRegistry.keep}, `--keep-registry` after a
 * success), the registry is stopped with the demo: by {@link DemoRegistry.stop},
 * and on any exit of our process (an interruption, a failure, `process.exit`)
 * by an `exit` listener that kills it (SIGKILL) and removes its pid file.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { closeSync, existsSync, openSync, rmSync } from "node:fs";
import { readFile, rm, writeFile } from "node:fs/promises";
import net from "node:net";
import { join } from "node:path";
import { stringify as yamlStringify } from "yaml";
import { HermesPluginKitError } from "../src/contract/errors.js";
import { isProcessAlive } from "../src/oci/lock-owner.js";
import { BASE_ENV_NAMES, childEnvironment } from "../src/oci/subprocess.js";
import { runProcess } from "./git.js";
import { makeDirectory } from "../src/contract/directory.js";
import { kitCliCommand } from "./cli-command.js";

/** The codes of {@link DemoError} (docs/demo.md). */
export type DemoErrorCode =
  | "DEMO_DOCTOR"
  | "DEMO_NOTHING_RELEASED"
  | "DEMO_NPM_INSTALL"
  | "DEMO_PACKAGE_EMPTY"
  | "DEMO_PACKAGE_MISSING"
  | "DEMO_PLAIN_HTTP_REFUSED"
  | "DEMO_REGISTRY_START"
  | "DEMO_REGISTRY_UNAVAILABLE"
  | "DEMO_STEP_FAILED"
  | "DEMO_TARBALL_MISMATCH"
  | "DEMO_WORKSPACE_MISMATCH";

/** Error of the demo's own steps; `code` is one of {@link DemoErrorCode}. */
export class DemoError extends HermesPluginKitError<DemoErrorCode> {}

/** A docker-registry process the demo started (or found still running from `--keep-registry`). */
export interface DemoRegistry {
  /** `127.0.0.1:<port>`. */
  host: string;
  username: string;
  password: string;
  /** Process id of docker-registry. */
  pid: number;
  /** The directory holding its config, storage, password, pid and `credentials.env`. */
  dir: string;
  /** Stop the process (SIGTERM, then SIGKILL after 3 s) and remove the pid file. */
  stop(): Promise<void>;
  /** Leave the process running after our process exits (`--keep-registry`, after a success); until then an exit of ours kills it. */
  keep(): void;
}

async function freePort(): Promise<number> {
  return new Promise((resolvePromise, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolvePromise(port));
    });
  });
}

async function portFree(port: number): Promise<boolean> {
  return new Promise((resolvePromise) => {
    const server = net.createServer();
    server.once("error", () => resolvePromise(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolvePromise(true)));
  });
}

/** HTTP status of `GET /v2/` on the port, or null when nothing answers. */
function probe(port: number): Promise<number | null> {
  return new Promise((res) => {
    const req = net.connect(port, "127.0.0.1", () => req.end("GET /v2/ HTTP/1.0\r\n\r\n"));
    let data = "";
    req.setTimeout(2000, () => req.destroy());
    req.on("data", (d) => (data += d.toString()));
    req.on("end", () => res(Number(/^HTTP\/1\.[01] (\d{3})/.exec(data)?.[1] ?? 0) || null));
    req.on("error", () => res(null));
    req.on("close", () => res(Number(/^HTTP\/1\.[01] (\d{3})/.exec(data)?.[1] ?? 0) || null));
  });
}

/**
 * The demo's hold on a registry process: `stop` ends it; until `keep` is called, an exit of our process
 * (interrupted, failed, `process.exit` from a signal handler) kills it (SIGKILL; an `exit` listener is synchronous).
 */
function ownRegistry(pid: number, pidFile: string): Pick<DemoRegistry, "stop" | "keep"> {
  const killOnExit = () => {
    try {
      if (isProcessAlive(pid)) process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
    rmSync(pidFile, { force: true });
  };
  process.on("exit", killOnExit);
  return {
    async stop() {
      try {
        if (isProcessAlive(pid)) {
          process.kill(pid, "SIGTERM");
          for (let i = 0; i < 60 && isProcessAlive(pid); i += 1) await new Promise((r) => setTimeout(r, 50));
          if (isProcessAlive(pid)) process.kill(pid, "SIGKILL");
        }
        await rm(pidFile, { force: true });
      } finally {
        process.off("exit", killOnExit);
      }
    },
    keep() {
      process.off("exit", killOnExit);
    },
  };
}

/**
 * Start (or, after `--keep-registry`, find running) the demo registry.
 * @param port the workspace's port from an earlier run, if any.
 * @param keep detach the process so it can outlive the demo (it does once {@link DemoRegistry.keep} is called; until then an exit of ours stops it).
 * @throws DemoError `DEMO_REGISTRY_UNAVAILABLE` (no docker-registry binary), `DEMO_REGISTRY_START`.
 */
export async function startDemoRegistry(workspace: string, port: number | undefined, keep: boolean): Promise<DemoRegistry> {
  const binary = process.env["DOCKER_REGISTRY_BIN"] ?? "/usr/bin/docker-registry";
  if (!existsSync(binary)) throw new DemoError("DEMO_REGISTRY_UNAVAILABLE", `--start-registry needs ${binary} (Debian's docker-registry; DOCKER_REGISTRY_BIN names another path), which is not there; fix: apt-get install docker-registry apache2-utils, or leave out --start-registry (the embedded store needs nothing)`);
  const dir = join(workspace, "docker-registry");
  await makeDirectory(dir, { mode: 0o700, purpose: "demo registry directory" });
  const secretPath = join(dir, "password");
  let password: string;
  try {
    password = (await readFile(secretPath, "utf8")).trim();
  } catch {
    password = randomBytes(16).toString("hex");
    await writeFile(secretPath, password + "\n", { mode: 0o600 });
  }
  const username = "hermes-demo";
  await writeFile(join(dir, "credentials.env"), `REGISTRY_USERNAME=${username}\nREGISTRY_PASSWORD=${password}\n`, { mode: 0o600 });
  const pidFile = join(dir, "registry.pid");
  const previous = Number((await readFile(pidFile, "utf8").catch(() => "")).trim());
  if (port !== undefined && Number.isSafeInteger(previous) && previous > 0 && isProcessAlive(previous) && (await probe(port)) === 401) {
    // Left running by an earlier --keep-registry run of this workspace.
    return { host: `127.0.0.1:${port}`, username, password, pid: previous, dir, ...ownRegistry(previous, pidFile) };
  }
  const htpasswd = await runProcess("htpasswd", ["-iBn", username], { cwd: dir, env: childEnvironment(BASE_ENV_NAMES), timeoutMs: 30_000, input: password, allowFailure: true });
  if (htpasswd.code !== 0) throw new DemoError("DEMO_REGISTRY_START", `htpasswd failed (exit ${htpasswd.code}); fix: install apache2-utils (apt-get install apache2-utils), which holds htpasswd`);
  await writeFile(join(dir, "htpasswd"), htpasswd.stdout.trim() + "\n", { mode: 0o600 });
  if (port === undefined || !(await portFree(port))) {
    if (port !== undefined) throw new DemoError("DEMO_REGISTRY_START", `the workspace's registry port ${port} (saved in its demo-state.json) is busy; fix: stop what uses it, or use a new --workspace`);
    port = await freePort();
  }
  const config = {
    version: 0.1,
    log: { level: "error", accesslog: { disabled: true } },
    storage: { filesystem: { rootdirectory: join(dir, "storage") }, delete: { enabled: false } },
    http: { addr: `127.0.0.1:${port}`, secret: randomBytes(16).toString("hex") },
    auth: { htpasswd: { realm: "hermes-demo", path: join(dir, "htpasswd") } },
  };
  await writeFile(join(dir, "config.yml"), yamlStringify(config), { mode: 0o600 });
  const logFile = join(dir, "registry.log");
  const log = openSync(logFile, "a", 0o600);
  const child = spawn(binary, ["serve", join(dir, "config.yml")], { stdio: ["ignore", "ignore", log], detached: keep });
  closeSync(log);
  if (child.pid === undefined) throw new DemoError("DEMO_REGISTRY_START", `docker-registry could not start (${binary}); fix: check that it runs (${binary} --version)`);
  const pid = child.pid;
  // Owned from its first moment: an exit of ours from here on (a failed start included) stops it.
  const owned = ownRegistry(pid, pidFile);
  await writeFile(pidFile, `${pid}\n`, { mode: 0o600 });
  const deadline = Date.now() + 15_000;
  for (;;) {
    const status = await probe(port);
    if (status === 401 || status === 200) break;
    if (child.exitCode !== null || Date.now() > deadline) {
      await owned.stop();
      const tail = (await readFile(logFile, "utf8").catch(() => "")).trim().slice(-300);
      throw new DemoError("DEMO_REGISTRY_START", `docker-registry did not start on 127.0.0.1:${port}: ${tail}; fix: see ${logFile}, or leave out --start-registry`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  if (keep) child.unref();
  return { host: `127.0.0.1:${port}`, username, password, pid, dir, ...owned };
}

/** The lines `--keep-registry` prints: address, the credential variables and where their values are, how to stop it. */
export function keptRegistryLines(registry: DemoRegistry, repository: string): string[] {
  const env = join(registry.dir, "credentials.env");
  return [
    `registry left running: http://${registry.host} (docker-registry, Basic auth, pid ${registry.pid}); repository ${repository}`,
    `  credentials: set REGISTRY_USERNAME and REGISTRY_PASSWORD from ${env} (mode 0600): set -a; . ${env}; set +a`,
    `  then e.g.: ${kitCliCommand()} fetch --plain-http --reference <bundle reference> --output-dir ./vendor`,
    `  stop it: kill ${registry.pid}   (pid also in ${join(registry.dir, "registry.pid")}; rerun the demo with the same --workspace to reuse it)`,
  ];
}
