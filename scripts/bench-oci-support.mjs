// Shared parts of the OCI benchmarks (bench-oci.mjs, bench-oci-copy.mjs): child processes, a fresh
// docker-registry per measurement, random payload files, and the CPU time of reaped children.
import { spawn, spawnSync } from "node:child_process";
import { randomBytes, randomFillSync } from "node:crypto";
import { mkdir, open, readFile, rm, writeFile } from "node:fs/promises";
import http from "node:http";
import net from "node:net";
import path from "node:path";

/** The docker-registry binary (DOCKER_REGISTRY_BIN overrides). */
export const registryBin = process.env.DOCKER_REGISTRY_BIN ?? "/usr/bin/docker-registry";

export function run(cmd, argv, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, argv, { stdio: ["ignore", "pipe", "pipe"], ...(env === undefined ? {} : { env: { ...process.env, ...env } }) });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err = (err + d).slice(-2000)));
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve(out) : reject(new Error(`${cmd} ${argv[0]} failed (exit ${code}): ${err}`))));
  });
}

export async function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

export function probe(url) {
  return new Promise((resolve) => {
    const req = http.get(url, (res) => {
      res.resume();
      resolve(res.statusCode);
    });
    req.on("error", () => resolve(null));
  });
}

/** A fresh docker-registry ({@link registryBin}) with its own storage under `dir`; `stop()` ends it and removes `dir`. */
export async function startRegistry(dir) {
  await mkdir(dir, { recursive: true });
  const port = await freePort();
  const config = [
    "version: 0.1",
    "log: {level: error, accesslog: {disabled: true}}",
    `storage: {filesystem: {rootdirectory: ${JSON.stringify(path.join(dir, "storage"))}}, maintenance: {uploadpurging: {enabled: false}}}`,
    `http: {addr: "127.0.0.1:${port}", secret: ${JSON.stringify(randomBytes(16).toString("hex"))}}`,
    "",
  ].join("\n");
  await writeFile(path.join(dir, "config.yml"), config);
  const child = spawn(registryBin, ["serve", path.join(dir, "config.yml")], { stdio: "ignore" });
  for (let i = 0; i < 300; i += 1) {
    if ((await probe(`http://127.0.0.1:${port}/v2/`)) === 200) {
      return {
        host: `127.0.0.1:${port}`,
        async stop() {
          child.kill("SIGTERM");
          await new Promise((r) => child.once("exit", r));
          await rm(dir, { recursive: true, force: true });
        },
      };
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill("SIGKILL");
  throw new Error("docker-registry did not start");
}

export async function writeRandomFile(file, bytes) {
  // One reused buffer, refilled per MiB: the generator itself stays small.
  const handle = await open(file, "w");
  const buf = Buffer.alloc(1 << 20);
  try {
    for (let left = bytes; left > 0; left -= buf.length) {
      randomFillSync(buf);
      await handle.write(buf, 0, Math.min(left, buf.length));
    }
  } finally {
    await handle.close();
  }
}

export const mbps = (bytes, ms) => bytes / 1e6 / (ms / 1000);

const CLOCK_TICKS = Number(spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).stdout.trim()) || 100;
/** CPU time (user + system, ms) of this process's reaped children so far (`cutime` + `cstime`, proc(5)). */
export async function childrenCpuMs() {
  const stat = await readFile("/proc/self/stat", "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // fields[0] is field 3 (state): cutime and cstime are fields 16 and 17.
  return ((Number(fields[13]) + Number(fields[14])) * 1000) / CLOCK_TICKS;
}
/** Run `fn` (which spawns and reaps one child) and return the child's CPU time in ms. */
export async function childCpu(fn) {
  const before = await childrenCpuMs();
  const result = await fn();
  return { result, cpuMs: (await childrenCpuMs()) - before };
}
