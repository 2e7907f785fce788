#!/usr/bin/env node
// OCI transport benchmark (issue 3 "Performance"; not a timed test).
//
// Builds a deterministic layout of --size-mib MiB in 4 layers, starts Debian's
// docker-registry on 127.0.0.1 (temp storage), then measures in one run:
//   push          copy(layout -> registry) with our RegistryTarget
//   fetch-verify  resolve + fetchManifest + fetchBlobToFile per layer (SHA-256 verified while streaming)
//   skopeo        skopeo copy docker://... oci:DIR of the same artifact
// (fetch-verify and skopeo alternate, best of 2 each, `sync` before every timed phase)
//   sha256sum     sha256sum over the same layer files
// and prints MB/s for each, the ratio ours/skopeo and this process's peak RSS.
// Last line: fetch_verify_vs_skopeo=<ratio> peak_rss_mib=<n> size_mib=<n>
//
// Usage: npm run bench:oci -- [--size-mib N] [--keep]
// Needs: dist/ (built automatically when missing), /usr/bin/docker-registry, skopeo, sha256sum.
import { spawn, spawnSync } from "node:child_process";
import { randomBytes, randomFillSync } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, open, readFile, rm, writeFile } from "node:fs/promises";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const sizeArg = args.indexOf("--size-mib");
const sizeMib = sizeArg >= 0 ? Number(args[sizeArg + 1]) : 512;
if (!Number.isInteger(sizeMib) || sizeMib < 4 || sizeMib % 4 !== 0) {
  process.stderr.write("bench-oci: --size-mib must be a multiple of 4, at least 4\n");
  process.exit(2);
}
const keep = args.includes("--keep");
const registryBin = process.env.DOCKER_REGISTRY_BIN ?? "/usr/bin/docker-registry";

const entry = path.join(root, "dist", "src", "oci", "index.js");
if (!existsSync(entry)) {
  process.stderr.write("bench-oci: building dist/ (tsc -p tsconfig.build.json)\n");
  spawnSync(process.execPath, [path.join(root, "node_modules", "typescript", "bin", "tsc"), "-p", path.join(root, "tsconfig.build.json")], { stdio: "inherit" });
}
const oci = await import(pathToFileURL(entry).href);

function run(cmd, argv) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, argv, { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err = (err + d).slice(-2000)));
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve(out) : reject(new Error(`${cmd} ${argv[0]} failed (exit ${code}): ${err}`))));
  });
}

async function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

function probe(url) {
  return new Promise((resolve) => {
    const req = http.get(url, (res) => {
      res.resume();
      resolve(res.statusCode);
    });
    req.on("error", () => resolve(null));
  });
}

async function startRegistry(dir) {
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
    if ((await probe(`http://127.0.0.1:${port}/v2/`)) === 200) return { host: `127.0.0.1:${port}`, child };
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill("SIGKILL");
  throw new Error("docker-registry did not start");
}

async function writeRandomFile(file, bytes) {
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

const mbps = (bytes, ms) => bytes / 1e6 / (ms / 1000);
const fmt = (n) => n.toFixed(1);
const time = async (fn) => {
  const t0 = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - t0) / 1e6;
};

/** Child mode: run one measured phase in a fresh process and print {ms, maxRssMib} as JSON. */
async function runPhase(phase) {
  const value = (name) => args[args.indexOf(name) + 1];
  const target = await oci.openTarget(value("--repository"), { plainHttp: true });
  let ms;
  if (phase === "push") {
    const src = await oci.LayoutTarget.open(value("--layout"));
    ms = await time(() => oci.copy(src, target, "payload", { tag: "bench", concurrency: 4 }));
  } else {
    const outDir = value("--out");
    ms = await time(async () => {
      const desc = await target.resolve("bench");
      const bytes = await oci.fetchManifest(target, desc);
      const layers = JSON.parse(bytes.toString()).layers;
      await Promise.all(layers.map((layer, i) => oci.fetchBlobToFile(target, layer, path.join(outDir, `layer-${i}.bin`))));
    });
  }
  await target.close();
  process.stdout.write(JSON.stringify({ ms, maxRssMib: Math.round(process.resourceUsage().maxRSS / 1024) }) + "\n");
}

async function phase(name, extra) {
  const out = await run(process.execPath, [fileURLToPath(import.meta.url), "--phase", name, ...extra]);
  return JSON.parse(out.trim().split("\n").pop());
}

const phaseArg = args.indexOf("--phase");
if (phaseArg >= 0) {
  await runPhase(args[phaseArg + 1]);
  process.exit(0);
}

const work = await mkdtemp(path.join(os.tmpdir(), "hpk-bench-oci-"));
let registry;
try {
  const totalBytes = sizeMib * 1024 * 1024;
  const layerBytes = totalBytes / 4;
  const inputs = new Map();
  await mkdir(path.join(work, "in"));
  for (let i = 0; i < 4; i += 1) {
    const file = path.join(work, "in", `layer-${i}.bin`);
    await writeRandomFile(file, layerBytes);
    inputs.set(`dist/layer-${i}.bin`, file);
  }
  const layoutDir = path.join(work, "layout");
  const { manifest } = await oci.writeLayout(layoutDir, "application/vnd.hermes-plugin-kit.release.v2", inputs);
  registry = await startRegistry(work);
  const repository = `${registry.host}/bench/artifact`;

  // Our push and our fetch-verify each run in a fresh Node process, so each peak RSS is that transfer's own.
  // Dirty pages are flushed (`sync`) before every timed phase; fetch-verify and skopeo alternate and the
  // best of `rounds` runs of each is kept, so neither pays for the other's writeback.
  await run("sync", []);
  const push = await phase("push", ["--repository", repository, "--layout", layoutDir]);
  const rounds = 2;
  let fetched;
  let skopeoMs = Infinity;
  for (let round = 0; round < rounds; round += 1) {
    const outDir = path.join(work, `fetched-${round}`);
    await mkdir(outDir);
    await run("sync", []);
    const result = await phase("fetch", ["--repository", repository, "--out", outDir]);
    for (let i = 0; i < 4; i += 1) {
      const got = await oci.hashFile(path.join(outDir, `layer-${i}.bin`));
      const want = await oci.hashFile(inputs.get(`dist/layer-${i}.bin`));
      if (got.digest !== want.digest) throw new Error(`fetched layer ${i} differs`);
    }
    await rm(outDir, { recursive: true, force: true });
    if (fetched === undefined || result.ms < fetched.ms) fetched = { ms: result.ms, maxRssMib: Math.max(result.maxRssMib, fetched?.maxRssMib ?? 0) };
    else fetched.maxRssMib = Math.max(fetched.maxRssMib, result.maxRssMib);

    const skopeoDir = path.join(work, `skopeo-oci-${round}`);
    await run("sync", []);
    const ms = await time(() => run("skopeo", ["copy", "--quiet", "--src-tls-verify=false", `docker://${repository}:bench`, `oci:${skopeoDir}:bench`]));
    skopeoMs = Math.min(skopeoMs, ms);
    await rm(skopeoDir, { recursive: true, force: true });
  }
  const files = [...inputs.values()];
  await run("sync", []);
  const shaMs = await time(() => run("sha256sum", files));

  const peakRssMib = Math.max(push.maxRssMib, fetched.maxRssMib);
  const ours = mbps(totalBytes, fetched.ms);
  const theirs = mbps(totalBytes, skopeoMs);
  process.stdout.write(`artifact: ${sizeMib} MiB in 4 layers, manifest ${manifest.digest}\n`);
  process.stdout.write(`push (ours, copy layout -> registry):    ${fmt(mbps(totalBytes, push.ms))} MB/s (${fmt(push.ms)} ms), peak RSS ${push.maxRssMib} MiB\n`);
  process.stdout.write(`fetch-verify (ours, registry -> files):  ${fmt(ours)} MB/s (${fmt(fetched.ms)} ms), peak RSS ${fetched.maxRssMib} MiB\n`);
  process.stdout.write(`skopeo copy docker:// -> oci:           ${fmt(theirs)} MB/s (${fmt(skopeoMs)} ms)\n`);
  process.stdout.write(`sha256sum over the same bytes:           ${fmt(mbps(totalBytes, shaMs))} MB/s (${fmt(shaMs)} ms)\n`);
  process.stdout.write(`fetch_verify_vs_skopeo=${(ours / theirs).toFixed(2)} peak_rss_mib=${peakRssMib} size_mib=${sizeMib}\n`);
} finally {
  if (registry) {
    registry.child.kill("SIGTERM");
    await new Promise((r) => registry.child.once("exit", r));
  }
  if (!keep) await rm(work, { recursive: true, force: true });
}
