/**
 * The demo consumer's install of the fetched npm tarball into a scratch
 * project, offline and with `--ignore-scripts` (as the README's consumer
 * install). A tarball without dependencies installs directly. A tarball with
 * dependencies (the kit itself, `--package .`) cannot be resolved offline by
 * version range (npm's cache holds tarballs, not registry metadata), so the
 * scratch project gets a lock derived from the released source's own
 * `package-lock.json` (the production entries, at the same places) and runs
 * `npm ci --offline`: every dependency comes from the cache by integrity.
 */
import { createHash } from "node:crypto";
import { createReadStream, existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { readTarballPackageJsonFile } from "../src/contract/manifest.js";
import { DemoError } from "./demo-registry.js";
import { BASE_ENV_NAMES, NETWORK_ENV_NAMES, childEnvironment } from "../src/oci/subprocess.js";
import { runProcess } from "./git.js";
import { makeDirectory } from "../src/contract/directory.js";

const APP = { name: "demo-consumer-app", version: "1.0.0", private: true };

async function sha512Integrity(path: string): Promise<string> {
  const hash = createHash("sha512");
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return `sha512-${hash.digest("base64")}`;
}

async function npm(args: string[], cwd: string): Promise<void> {
  const env = childEnvironment([...BASE_ENV_NAMES, ...NETWORK_ENV_NAMES], { npm_config_update_notifier: "false" });
  const r = await runProcess("npm", args, { cwd, env, timeoutMs: 10 * 60_000, allowFailure: true });
  if (r.code !== 0) throw new DemoError("DEMO_NPM_INSTALL", `npm ${args[0]} exited ${r.code}: ${r.stderr.trim().split("\n").slice(-3).join(" | ")}`);
}

/**
 * Install `tarball` into the scratch project `app` offline.
 * @param releasedSource the restored release source (holds its package-lock.json).
 * @returns a one-line description of how it was installed.
 * @throws DemoError `DEMO_NPM_INSTALL` (npm failed, or no lock to derive from).
 */
export async function installTarballOffline(app: string, tarball: string, releasedSource: string): Promise<string> {
  await makeDirectory(app, { purpose: "demo consumer directory" });
  const pkg = await readTarballPackageJsonFile(tarball);
  const name = String(pkg["name"]);
  const deps = (pkg["dependencies"] ?? {}) as Record<string, string>;
  if (Object.keys(deps).length === 0) {
    if (!existsSync(join(app, "package.json"))) await writeFile(join(app, "package.json"), JSON.stringify(APP, null, 2) + "\n");
    await npm(["install", "--offline", "--ignore-scripts", "--no-audit", "--no-fund", "--save-exact", tarball], app);
    return `npm install --offline --ignore-scripts ${tarball}`;
  }
  const sourceLockPath = join(releasedSource, "package-lock.json");
  if (!existsSync(sourceLockPath)) throw new DemoError("DEMO_NPM_INSTALL", `${name} has dependencies and its release source has no package-lock.json to install them offline from`);
  const sourceLock = JSON.parse(await readFile(sourceLockPath, "utf8")) as { packages: Record<string, Record<string, unknown>> };
  const spec = `file:${tarball}`;
  const packages: Record<string, unknown> = {
    "": { ...APP, dependencies: { [name]: spec } },
    [`node_modules/${name}`]: {
      version: pkg["version"],
      resolved: spec,
      integrity: await sha512Integrity(tarball),
      dependencies: deps,
      ...(pkg["bin"] !== undefined ? { bin: pkg["bin"] } : {}),
      ...(pkg["engines"] !== undefined ? { engines: pkg["engines"] } : {}),
    },
  };
  for (const [key, entry] of Object.entries(sourceLock.packages)) {
    if (key.startsWith("node_modules/") && entry["dev"] !== true && entry["link"] !== true) packages[key] = entry;
  }
  await writeFile(join(app, "package.json"), JSON.stringify({ ...APP, dependencies: { [name]: spec } }, null, 2) + "\n");
  await writeFile(join(app, "package-lock.json"), JSON.stringify({ name: APP.name, version: APP.version, lockfileVersion: 3, requires: true, packages }, null, 2) + "\n");
  await npm(["ci", "--offline", "--ignore-scripts", "--no-audit", "--no-fund"], app);
  return `npm ci --offline --ignore-scripts (lock from the release's own package-lock.json)`;
}
