/**
 * A real npm registry for tests that install packages by name: Verdaccio
 * 6.8.0 on 127.0.0.1 with no uplink (nothing leaves the machine), seeded
 * from npm's own cache: the tarballs a clean `npm ci` of this repository
 * fetched are found in `<npm cache>/_cacache/content-v2` by the integrity
 * recorded in package-lock.json and published to Verdaccio through its npm
 * publish API (`PUT /<name>`), like `npm publish` does. Only the closure of
 * the requested packages is published, so a scaffolded project's `npm
 * install` resolves exactly versions this repository locked. Optional
 * platform packages of other platforms (never in this machine's cache) are
 * published as metadata-only placeholders with their `os`/`cpu`/`libc`, so
 * the lock an install writes is complete (npm records every platform's
 * optional entry) and `npm ci` accepts it; npm never installs them here.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import net from "node:net";
import { join } from "node:path";
import { pipeline } from "node:stream/promises";
import { Readable } from "node:stream";
import { createGunzip } from "node:zlib";
import { fileURLToPath } from "node:url";
import { createGzip } from "node:zlib";
import { extract, pack } from "tar-stream";
import YAML from "yaml";
import { stopChild } from "./stop-child.js";

/** This repository's root. */
export const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** A running Verdaccio. */
export interface RunningVerdaccio {
  /** `http://127.0.0.1:<port>/`. */
  url: string;
  stop(): Promise<void>;
}

interface LockEntry {
  version?: string;
  resolved?: string;
  integrity?: string;
  dev?: boolean;
  optional?: boolean;
  os?: string[];
  cpu?: string[];
  libc?: string[];
  link?: boolean;
  /** Shipped inside its parent's tarball (bundleDependencies). */
  inBundle?: boolean;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address !== null ? address.port : 0));
    });
  });
}

/** Start Verdaccio (no uplink; anyone may read and publish) with storage under `dir`. */
export async function startVerdaccio(dir: string): Promise<RunningVerdaccio> {
  await mkdir(join(dir, "storage"), { recursive: true });
  const port = await freePort();
  const config = {
    storage: join(dir, "storage"),
    auth: { htpasswd: { file: join(dir, "htpasswd"), max_users: -1 } },
    uplinks: {},
    packages: { "@*/*": { access: "$all", publish: "$all" }, "**": { access: "$all", publish: "$all" } },
    max_body_size: "500mb",
    server: { keepAliveTimeout: 60 },
    web: { enable: false },
    middlewares: { audit: { enabled: false } },
    log: { type: "stdout", format: "pretty", level: "error" },
  };
  await writeFile(join(dir, "config.yaml"), YAML.stringify(config));
  const child: ChildProcess = spawn(process.execPath, [join(REPO_ROOT, "node_modules", "verdaccio", "bin", "verdaccio"), "--config", join(dir, "config.yaml"), "--listen", `127.0.0.1:${port}`], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, NODE_ENV: "production" },
  });
  let output = "";
  child.stdout?.on("data", (d: Buffer) => (output = (output + d.toString()).slice(-4000)));
  child.stderr?.on("data", (d: Buffer) => (output = (output + d.toString()).slice(-4000)));
  const url = `http://127.0.0.1:${port}/`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      const r = await fetch(`${url}-/ping`);
      if (r.ok) break;
    } catch {
      // not up yet
    }
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`verdaccio did not start on ${url}: ${output}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    stop: () => stopChild(child, 5000),
  };
}

/** `package/package.json` of an npm tarball's bytes. */
async function tarballPackageJson(bytes: Buffer): Promise<Record<string, unknown>> {
  let found: Buffer | undefined;
  const ex = extract();
  ex.on("entry", (header, stream, next) => {
    const chunks: Buffer[] = [];
    stream.on("data", (c: unknown) => {
      if (found === undefined && /^[^/]+\/package\.json$/.test(header.name)) chunks.push(c as Buffer);
    });
    stream.on("end", () => {
      if (found === undefined && /^[^/]+\/package\.json$/.test(header.name)) found = Buffer.concat(chunks);
      next();
    });
    stream.resume();
  });
  await pipeline(Readable.from([bytes]), createGunzip(), ex);
  if (found === undefined) throw new Error("tarball without package/package.json");
  return JSON.parse(found.toString("utf8")) as Record<string, unknown>;
}

/** Publish one tarball (its bytes) as `name@version` through the npm publish API. */
export async function publishTarball(registry: string, bytes: Buffer): Promise<{ name: string; version: string }> {
  const pkg = await tarballPackageJson(bytes);
  const name = String(pkg["name"]);
  const version = String(pkg["version"]);
  const file = `${name.replace(/^@[^/]+\//, "")}-${version}.tgz`;
  const integrity = `sha512-${createHash("sha512").update(bytes).digest("base64")}`;
  const shasum = createHash("sha1").update(bytes).digest("hex");
  const body = {
    _id: name,
    name,
    "dist-tags": { latest: version },
    versions: { [version]: { ...pkg, _id: `${name}@${version}`, dist: { integrity, shasum, tarball: `${registry}${name}/-/${file}` } } },
    _attachments: { [file]: { content_type: "application/octet-stream", data: bytes.toString("base64"), length: bytes.length } },
  };
  const response = await fetch(`${registry}${name.replace("/", "%2f")}`, {
    method: "PUT",
    headers: { "content-type": "application/json", authorization: "Bearer test-token" },
    body: JSON.stringify(body),
  });
  if (!response.ok && response.status !== 409) throw new Error(`publishing ${name}@${version} to ${registry}: HTTP ${response.status} ${await response.text()}`);
  return { name, version };
}

/** A tarball holding only `package/package.json` (a placeholder for another platform's optional binary). */
async function placeholderTarball(manifest: Record<string, unknown>): Promise<Buffer> {
  const p = pack();
  p.entry({ name: "package/package.json", mode: 0o644 }, JSON.stringify(manifest, null, 2));
  p.finalize();
  const chunks: Buffer[] = [];
  const gzip = createGzip();
  gzip.on("data", (c: Buffer) => chunks.push(c));
  await pipeline(p, gzip);
  return Buffer.concat(chunks);
}

/** The npm cache directory (`npm config get cache`). */
function npmCacheDir(): string {
  const r = spawnSync("npm", ["config", "get", "cache"], { encoding: "utf8" });
  return r.stdout.trim();
}

/** Path of a cached blob by its SRI integrity (cacache's content-addressed layout). */
function cachePath(cache: string, integrity: string): string {
  const [algo, b64] = integrity.split(" ")[0]!.split("-", 2) as [string, string];
  const hex = Buffer.from(b64, "base64").toString("hex");
  return join(cache, "_cacache", "content-v2", algo, hex.slice(0, 2), hex.slice(2, 4), hex.slice(4));
}

/** The lock key a dependency `name` of the package at `from` resolves to (Node's lookup over lock keys). */
function resolveKey(packages: Record<string, LockEntry>, from: string, name: string): string | undefined {
  let base = from;
  for (;;) {
    const key = `${base === "" ? "" : `${base}/`}node_modules/${name}`;
    if (packages[key] !== undefined) return key;
    if (base === "") return undefined;
    const at = base.lastIndexOf("/node_modules/");
    base = at < 0 ? "" : base.slice(0, at);
  }
}

/**
 * Publish, from npm's cache, the closure of `roots` (dependency names of
 * this repository's root package, resolved in its package-lock.json):
 * dependencies, optional dependencies (when cached) and non-optional peers.
 * @returns the number of versions published.
 * @throws when a needed non-optional package is not in the cache (run `npm ci` first).
 */
export async function publishClosureFromNpmCache(registry: string, roots: string[]): Promise<number> {
  const lock = JSON.parse(await readFile(join(REPO_ROOT, "package-lock.json"), "utf8")) as { packages: Record<string, LockEntry> };
  const packages = lock.packages;
  const cache = npmCacheDir();
  const seen = new Set<string>();
  const queue: { key: string; optional: boolean }[] = [];
  const visit = (from: string, name: string, optional: boolean) => {
    const key = resolveKey(packages, from, name);
    if (key === undefined) {
      if (!optional) throw new Error(`package-lock.json resolves no ${name} from ${from || "the root"}`);
      return;
    }
    if (!seen.has(key)) {
      seen.add(key);
      queue.push({ key, optional: optional || packages[key]!.optional === true });
    }
  };
  for (const name of roots) visit("", name, false);
  const byName = new Map<string, { version: string; path: string | Record<string, unknown> }[]>();
  while (queue.length > 0) {
    const { key, optional } = queue.shift()!;
    const entry = packages[key]!;
    if (entry.link === true || entry.inBundle === true || entry.version === undefined) continue;
    const name = key.slice(key.lastIndexOf("node_modules/") + "node_modules/".length);
    let path: string | Record<string, unknown> = entry.integrity === undefined ? "" : cachePath(cache, entry.integrity);
    if (path === "" || !existsSync(path)) {
      if (!optional) throw new Error(`npm's cache (${cache}) lacks ${key}@${entry.version}: run \`npm ci\` in ${REPO_ROOT} first`);
      // Another platform's optional package: metadata only.
      path = { name, version: entry.version, ...(entry.os ? { os: entry.os } : {}), ...(entry.cpu ? { cpu: entry.cpu } : {}), ...(entry.libc ? { libc: entry.libc } : {}) };
    }
    const list = byName.get(name) ?? [];
    if (!list.some((v) => v.version === entry.version)) list.push({ version: entry.version, path });
    byName.set(name, list);
    for (const dep of Object.keys(entry.dependencies ?? {})) visit(key, dep, optional);
    for (const dep of Object.keys(entry.optionalDependencies ?? {})) visit(key, dep, true);
    for (const dep of Object.keys(entry.peerDependencies ?? {})) visit(key, dep, optional || entry.peerDependenciesMeta?.[dep]?.optional === true);
  }
  const semverKey = (v: string) => v.split(/[.+-]/).slice(0, 3).map((n) => n.padStart(8, "0")).join(".");
  const names = [...byName.keys()];
  let count = 0;
  // Versions of one package in ascending order (so `latest` ends highest); packages four at a time.
  const worker = async () => {
    for (let name = names.shift(); name !== undefined; name = names.shift()) {
      for (const { path } of byName.get(name)!.sort((a, b) => (semverKey(a.version) < semverKey(b.version) ? -1 : 1))) {
        await publishTarball(registry, typeof path === "string" ? await readFile(path) : await placeholderTarball(path));
        count += 1;
      }
    }
  };
  await Promise.all([worker(), worker(), worker(), worker()]);
  return count;
}
