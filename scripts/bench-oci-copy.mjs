#!/usr/bin/env node
// Registry-to-registry copy benchmark (docs/oci.md "Blob relays"; not a timed test).
//
// Builds a deterministic layout of --size-mib MiB in 4 layers, pushes it to a source docker-registry (tag
// `bench`), then measures --pairs rounds (default 5), each round three copies of that artifact into a fresh
// docker-registry each (a used one would let skopeo mount blobs it has seen):
//   relay   ours: copy(source -> destination) in a fresh Node process (bench-oci-phase.mjs copy), each blob
//           relayed through a few reused buffers (src/oci/blob-relay.ts)
//   stream  ours with the relay hidden (--path stream): each blob through the general client's verifying
//           stream, fresh socket buffers per read (the path before the relay)
//   skopeo  skopeo copy docker://SOURCE docker://DESTINATION
// The order rotates each round. `sync` before each copy. Figures: min / median / max of MB/s, of the
// per-round ratios relay/skopeo and stream/skopeo, of CPU time (user + system of the whole process, from
// this process's reaped-children counters) and of peak RSS (ours: the phase's own report; skopeo:
// /usr/bin/time's maximum resident set size).
// Last line: copy_vs_skopeo=<median relay ratio> stream_vs_skopeo=<median> peak_rss_mib=<max relay RSS> size_mib=<n>
//
// Usage: npm run bench:oci-copy -- [--size-mib N] [--pairs N] [--keep] [--inherit-env]
// Needs: dist/ (npm run build), /usr/bin/docker-registry, skopeo, /usr/bin/time.
import { mkdir, mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { benchEnvironment } from "./bench-env.mjs";
import { childrenCpuMs, mbps, run, startRegistry, writeRandomFile } from "./bench-oci-support.mjs";

const environmentLine = benchEnvironment();
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const value = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const sizeMib = Number(value("--size-mib", "256"));
const pairs = Number(value("--pairs", "5"));
if (!Number.isInteger(sizeMib) || sizeMib < 4 || sizeMib % 4 !== 0 || !Number.isInteger(pairs) || pairs < 1) {
  process.stderr.write("bench-oci-copy: --size-mib must be a multiple of 4, at least 4; --pairs a positive integer\n");
  process.exit(2);
}
const keep = args.includes("--keep");
const oci = await import(pathToFileURL(path.join(root, "dist", "src", "oci", "index.js")).href);

const time = async (fn) => {
  const t0 = process.hrtime.bigint();
  const result = await fn();
  return { ms: Number(process.hrtime.bigint() - t0) / 1e6, result };
};
function stats(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const median = sorted.length % 2 === 1 ? sorted[(sorted.length - 1) / 2] : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
  return { min: sorted[0], median, max: sorted[sorted.length - 1] };
}
const fmt = (s, digits = 1) => `${s.min.toFixed(digits)} / ${s.median.toFixed(digits)} / ${s.max.toFixed(digits)}`;

const work = await mkdtemp(path.join(os.tmpdir(), "hpk-bench-oci-copy-"));
const registries = [];
try {
  const totalBytes = sizeMib * 1024 * 1024;
  const inputs = new Map();
  await mkdir(path.join(work, "in"));
  for (let i = 0; i < 4; i += 1) {
    const file = path.join(work, "in", `layer-${i}.bin`);
    await writeRandomFile(file, totalBytes / 4);
    inputs.set(`dist/layer-${i}.bin`, file);
  }
  const layoutDir = path.join(work, "layout");
  const { manifest } = await oci.writeLayout(layoutDir, "application/vnd.hermes-plugin-kit.release.v2", inputs);
  const source = await startRegistry(path.join(work, "registry-source"));
  registries.push(source);
  const repository = `${source.host}/bench/artifact`;
  await oci.copy(await oci.LayoutTarget.open(layoutDir), await oci.openTarget(repository, { plainHttp: true }), "payload", { tag: "bench", concurrency: 4 });
  const skopeoHome = path.join(work, "skopeo-home");
  await mkdir(skopeoHome);
  const skopeoEnv = { HOME: skopeoHome, XDG_DATA_HOME: skopeoHome, XDG_CONFIG_HOME: skopeoHome };
  const phaseScript = fileURLToPath(new URL("bench-oci-phase.mjs", import.meta.url));

  /** One copy into a fresh registry: wall ms, CPU ms, peak RSS MiB; the destination's manifest is checked. */
  const side = async (name, label) => {
    const registry = await startRegistry(path.join(work, `registry-${name}-${label}`));
    const to = `${registry.host}/bench/artifact`;
    await run("sync", []);
    const before = await childrenCpuMs();
    let rssMib;
    let ms;
    if (name === "skopeo") {
      const rssFile = path.join(work, `rss-${label}`);
      ({ ms } = await time(() =>
        run("/usr/bin/time", ["-f", "%M", "-o", rssFile, "skopeo", "copy", "--quiet", "--src-tls-verify=false", "--dest-tls-verify=false", `docker://${repository}:bench`, `docker://${to}:bench`], skopeoEnv),
      ));
      rssMib = Math.round(Number((await readFile(rssFile, "utf8")).trim().split("\n").pop()) / 1024);
    } else {
      const timed = await time(() => run(process.execPath, [phaseScript, "copy", "--repository", repository, "--to", to, "--path", name, "--load", "bundle"]));
      ms = timed.ms;
      rssMib = JSON.parse(timed.result.trim().split("\n").pop()).maxRssMib;
    }
    const cpuMs = (await childrenCpuMs()) - before;
    const copied = await oci.openTarget(to, { plainHttp: true });
    const resolved = await copied.resolve("bench");
    await copied.close();
    if (resolved.digest !== manifest.digest) throw new Error(`${name}: the destination's bench names ${resolved.digest}, expected ${manifest.digest}`);
    await registry.stop();
    return { ms, cpuMs, rssMib };
  };

  const names = ["relay", "stream", "skopeo"];
  const rows = Object.fromEntries(names.map((n) => [n, { mbps: [], cpu: [], rss: [] }]));
  const ratios = { relay: [], stream: [] };
  const load = [];
  // Warm-up, not counted: the source's blobs and each program into the page cache.
  for (const name of names) await side(name, "warm-up");
  for (let pair = 0; pair < pairs; pair += 1) {
    load.push(os.loadavg()[0]);
    const order = [...names.slice(pair % 3), ...names.slice(0, pair % 3)];
    const got = {};
    for (const name of order) got[name] = await side(name, pair);
    for (const name of names) {
      rows[name].mbps.push(mbps(totalBytes, got[name].ms));
      rows[name].cpu.push(got[name].cpuMs);
      rows[name].rss.push(got[name].rssMib);
    }
    ratios.relay.push(got.skopeo.ms / got.relay.ms);
    ratios.stream.push(got.skopeo.ms / got.stream.ms);
    process.stderr.write(
      `round ${pair + 1}/${pairs} (${order.join(", ")}): relay ${rows.relay.mbps.at(-1).toFixed(1)}, stream ${rows.stream.mbps.at(-1).toFixed(1)}, skopeo ${rows.skopeo.mbps.at(-1).toFixed(1)} MB/s; RSS ${got.relay.rssMib} / ${got.stream.rssMib} / ${got.skopeo.rssMib} MiB; load ${os.loadavg()[0].toFixed(2)}\n`,
    );
  }
  load.push(os.loadavg()[0]);
  process.stdout.write(`${environmentLine}\n`);
  process.stdout.write(`artifact: ${sizeMib} MiB in 4 layers, manifest ${manifest.digest}; ${pairs} rounds, each copy into a fresh docker-registry; min / median / max\n`);
  for (const name of names) {
    const label = { relay: "ours, relay (reused buffers)", stream: "ours, stream (--path stream)", skopeo: "skopeo copy docker:// docker://" }[name];
    process.stdout.write(`${label.padEnd(34)} ${fmt(stats(rows[name].mbps))} MB/s, CPU ${fmt(stats(rows[name].cpu), 0)} ms, peak RSS ${fmt(stats(rows[name].rss), 0)} MiB\n`);
  }
  const relayRatio = stats(ratios.relay);
  const streamRatio = stats(ratios.stream);
  process.stdout.write(`ratio relay/skopeo (per round):    ${fmt(relayRatio, 2)}\n`);
  process.stdout.write(`ratio stream/skopeo (per round):   ${fmt(streamRatio, 2)}\n`);
  process.stdout.write(`load average (1 min, ${os.cpus().length} cores):   ${fmt(stats(load), 2)}\n`);
  process.stdout.write(`copy_vs_skopeo=${relayRatio.median.toFixed(2)} stream_vs_skopeo=${streamRatio.median.toFixed(2)} peak_rss_mib=${Math.max(...rows.relay.rss)} size_mib=${sizeMib}\n`);
} finally {
  for (const registry of registries) await registry.stop().catch(() => undefined);
  if (!keep) await rm(work, { recursive: true, force: true });
}
