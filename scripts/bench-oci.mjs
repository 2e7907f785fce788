#!/usr/bin/env node
// OCI transport benchmark (docs/oci.md; not a timed test).
//
// Builds a deterministic layout of --size-mib MiB in 4 layers, then measures
// --pairs pairs (default 5), each pair our run and the peer's; the pairs alternate who goes first
// (ours on even pairs), after one untimed warm-up fetch by each side:
//   fetch-verify  ours: resolve + fetchManifest + fetchBlobToFile per layer (4 in parallel,
//                 SHA-256 verified before each rename), in a fresh Node process so its
//                 peak RSS is the fetch's own (scripts/bench-oci-phase.mjs, which loads only
//                 the src/oci transport, as `hermes-plugin-kit fetch` loads it: from the CLI's
//                 fetch bundle with its V8 code cache, which the untimed warm-up writes;
//                 `--load barrel` loads the library's ES modules instead); timed as the whole
//                 process, start-up included, like the skopeo process it is compared with. The process overhead (wall minus the
//                 fetch's in-process time) and the ratio without it are printed too.
//                 peer: skopeo copy docker://... oci:DIR of the same artifact
//   push          ours: copy(layout -> registry) in a fresh Node process
//                 peer: skopeo copy oci:LAYOUT docker://...
//                 each push into a fresh docker-registry (skopeo reuses blobs it has seen in a
//                 registry through cross-repository mounts, so a used registry would not measure it)
// `sync` runs before every timed phase. Figures: min/median/max MB/s of each side, and of the
// per-pair ratio ours/peer. Also sha256sum over the same bytes, and the 1-minute load average.
// CPU time (user + system) of each side's whole process, read from this process's reaped-children
// counters in /proc/self/stat (10 ms ticks; measuring it adds nothing to either side's wall time): a
// figure a loaded machine disturbs less than wall time. In each pair, after the fetches, one bare
// `node -e ''`: skopeo's time over (that start-up + our in-process fetch) is the best fetch ratio any
// Node process could reach in that pair, printed as a bound next to the measured ratio.
// Last line: fetch_verify_vs_skopeo=<median ratio> peak_rss_mib=<max fetch peak RSS> size_mib=<n> push_vs_skopeo=<median ratio>
//
// Usage: npm run bench:oci -- [--size-mib N] [--pairs N] [--load bundle|barrel] [--keep] [--inherit-env]
// Environment: NODE_EXTRA_CA_CERTS and NODE_OPTIONS are removed from the measured processes unless
// --inherit-env (scripts/bench-env.mjs says why).
// Needs: dist/ (built automatically when missing), /usr/bin/docker-registry, skopeo, sha256sum.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { benchEnvironment } from "./bench-env.mjs";
import { childCpu, mbps, run, startRegistry, writeRandomFile } from "./bench-oci-support.mjs";

const environmentLine = benchEnvironment();
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const value = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const sizeMib = Number(value("--size-mib", "512"));
const pairs = Number(value("--pairs", "5"));
if (!Number.isInteger(sizeMib) || sizeMib < 4 || sizeMib % 4 !== 0 || !Number.isInteger(pairs) || pairs < 1) {
  process.stderr.write("bench-oci: --size-mib must be a multiple of 4, at least 4; --pairs a positive integer\n");
  process.exit(2);
}
const keep = args.includes("--keep");
const load = value("--load", "bundle");
if (load !== "bundle" && load !== "barrel") {
  process.stderr.write(`bench-oci: --load is bundle (the CLI's fetch bundle, default) or barrel (dist/src/oci/index.js), not ${load}\n`);
  process.exit(2);
}

const entry = path.join(root, "dist", "src", "oci", "index.js");
if (!existsSync(entry) || !existsSync(path.join(root, "dist", "src", "cli", "fetch-bundle.cjs"))) {
  process.stderr.write("bench-oci: building dist/ (tsc -p tsconfig.build.json, then scripts/bundle-cli.mjs)\n");
  spawnSync(process.execPath, [path.join(root, "node_modules", "typescript", "bin", "tsc"), "-p", path.join(root, "tsconfig.build.json")], { stdio: "inherit" });
  spawnSync(process.execPath, [path.join(root, "scripts", "bundle-cli.mjs")], { stdio: "inherit" });
}
const oci = await import(pathToFileURL(entry).href);

const time = async (fn) => {
  const t0 = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - t0) / 1e6;
};

/**
 * Run one phase in a fresh Node process (`bench-oci-phase.mjs`); `ms` is the whole process's wall time
 * (start-up included, as skopeo's is), `inProcessMs` the phase's own time measured inside it.
 */
async function phase(name, extra) {
  let out;
  const ms = await time(async () => {
    out = await run(process.execPath, [fileURLToPath(new URL("bench-oci-phase.mjs", import.meta.url)), name, ...extra, "--load", load]);
  });
  const reported = JSON.parse(out.trim().split("\n").pop());
  return { maxRssMib: reported.maxRssMib, inProcessMs: reported.ms, ms };
}

function stats(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const median = sorted.length % 2 === 1 ? sorted[(sorted.length - 1) / 2] : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
  return { min: sorted[0], median, max: sorted[sorted.length - 1] };
}
const fmt = (s, digits = 1) => `${s.min.toFixed(digits)} / ${s.median.toFixed(digits)} / ${s.max.toFixed(digits)}`;

const work = await mkdtemp(path.join(os.tmpdir(), "hpk-bench-oci-"));
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
  await phase("push", ["--repository", repository, "--layout", layoutDir]);
  const skopeoHome = path.join(work, "skopeo-home");
  await mkdir(skopeoHome);
  const skopeoEnv = { HOME: skopeoHome, XDG_DATA_HOME: skopeoHome, XDG_CONFIG_HOME: skopeoHome };

  const rows = { fetch: [], skopeoFetch: [], push: [], skopeoPush: [], fetchRss: [], pushRss: [], fetchOverhead: [], fetchInProcess: [], load: [], fetchCpu: [], skopeoFetchCpu: [], pushCpu: [], skopeoPushCpu: [], bareNode: [], bound: [] };
  /** Wall time (ms) of a bare `node -e ''` in the measured environment: the floor of any Node process. */
  const bareNode = () => time(() => run(process.execPath, ["-e", ""]));
  /** Our fetch into a fresh directory, checked byte for byte against the inputs, then removed. */
  const oursFetch = async (label) => {
    const outDir = path.join(work, `fetched-${label}`);
    await mkdir(outDir);
    await run("sync", []);
    const { result, cpuMs } = await childCpu(() => phase("fetch", ["--repository", repository, "--out", outDir]));
    for (let i = 0; i < 4; i += 1) {
      const got = await oci.digestFile(path.join(outDir, `layer-${i}.bin`));
      const want = await oci.digestFile(inputs.get(`dist/layer-${i}.bin`));
      if (got.digest !== want.digest) throw new Error(`fetched layer ${i} differs`);
    }
    await rm(outDir, { recursive: true, force: true });
    return { ...result, cpuMs };
  };
  const skopeoFetch = async (label) => {
    const skopeoDir = path.join(work, `skopeo-oci-${label}`);
    await run("sync", []);
    const { result: ms, cpuMs } = await childCpu(() =>
      time(() => run("skopeo", ["copy", "--quiet", "--src-tls-verify=false", `docker://${repository}:bench`, `oci:${skopeoDir}:bench`], skopeoEnv)),
    );
    await rm(skopeoDir, { recursive: true, force: true });
    return { ms, cpuMs };
  };
  const oursPush = async (label) => {
    const registry = await startRegistry(path.join(work, `registry-push-${label}`));
    await run("sync", []);
    const { result, cpuMs } = await childCpu(() => phase("push", ["--repository", `${registry.host}/bench/artifact`, "--layout", layoutDir]));
    await registry.stop();
    return { ...result, cpuMs };
  };
  const skopeoPush = async (label) => {
    const registry = await startRegistry(path.join(work, `registry-skopeo-${label}`));
    await run("sync", []);
    const { result: ms, cpuMs } = await childCpu(() =>
      time(() => run("skopeo", ["copy", "--quiet", "--dest-tls-verify=false", `oci:${layoutDir}:payload`, `docker://${registry.host}/bench/artifact:bench`], skopeoEnv)),
    );
    await registry.stop();
    return { ms, cpuMs };
  };
  /** Run `a` and `b` in the given order; return [ours, peer]. */
  const inOrder = async (oursFirst, ours, peer) => {
    if (oursFirst) {
      const o = await ours();
      return [o, await peer()];
    }
    const p = await peer();
    return [await ours(), p];
  };

  // Warm-up, not counted: one fetch by each side, so that neither side's first timed run is the
  // one that pulls the registry's freshly written blobs (and each binary) into the page cache.
  await oursFetch("warm-up");
  await skopeoFetch("warm-up");
  for (let pair = 0; pair < pairs; pair += 1) {
    rows.load.push(os.loadavg()[0]);
    // Each pair alternates who goes first (ours on even pairs), so an order effect falls on both sides.
    const oursFirst = pair % 2 === 0;
    const [fetched, skopeoFetched] = await inOrder(oursFirst, () => oursFetch(pair), () => skopeoFetch(pair));
    rows.fetchCpu.push(fetched.cpuMs);
    rows.fetch.push(mbps(totalBytes, fetched.ms));
    rows.fetchRss.push(fetched.maxRssMib);
    rows.fetchOverhead.push(fetched.ms - fetched.inProcessMs);
    rows.fetchInProcess.push(mbps(totalBytes, fetched.inProcessMs));
    rows.skopeoFetchCpu.push(skopeoFetched.cpuMs);
    rows.skopeoFetch.push(mbps(totalBytes, skopeoFetched.ms));
    // The best fetch ratio any Node process could reach in this pair: skopeo's whole copy against a bare
    // Node start-up plus our in-process fetch (no import, no exit).
    const bare = await bareNode();
    rows.bareNode.push(bare);
    rows.bound.push(skopeoFetched.ms / (bare + fetched.inProcessMs));
    // Push: ours and skopeo's, each into a fresh registry.
    const [pushed, skopeoPushed] = await inOrder(oursFirst, () => oursPush(pair), () => skopeoPush(pair));
    rows.pushCpu.push(pushed.cpuMs);
    rows.push.push(mbps(totalBytes, pushed.ms));
    rows.pushRss.push(pushed.maxRssMib);
    rows.skopeoPushCpu.push(skopeoPushed.cpuMs);
    rows.skopeoPush.push(mbps(totalBytes, skopeoPushed.ms));
    process.stderr.write(
      `pair ${pair + 1}/${pairs} (${oursFirst ? "ours" : "skopeo"} first): fetch ${rows.fetch.at(-1).toFixed(1)} vs ${rows.skopeoFetch.at(-1).toFixed(1)} MB/s, push ${rows.push.at(-1).toFixed(1)} vs ${rows.skopeoPush.at(-1).toFixed(1)} MB/s, fetch CPU ${fetched.cpuMs.toFixed(0)} vs ${skopeoFetched.cpuMs.toFixed(0)} ms, fetch RSS ${fetched.maxRssMib} MiB, load ${os.loadavg()[0].toFixed(2)}\n`,
    );
  }
  rows.load.push(os.loadavg()[0]);
  await run("sync", []);
  const shaMs = await time(() => run("sha256sum", [...inputs.values()]));

  const fetchRatio = stats(rows.fetch.map((v, i) => v / rows.skopeoFetch[i]));
  const pushRatio = stats(rows.push.map((v, i) => v / rows.skopeoPush[i]));
  process.stdout.write(`${environmentLine}\n`);
  process.stdout.write(`artifact: ${sizeMib} MiB in 4 layers, manifest ${manifest.digest}; ${pairs} pairs; our process loads the transport from ${load === "bundle" ? "the CLI's fetch bundle (code-cached)" : "dist/src/oci/index.js (ES modules)"}; min / median / max\n`);
  process.stdout.write(`fetch-verify (ours, registry -> files):  ${fmt(stats(rows.fetch))} MB/s, peak RSS ${fmt(stats(rows.fetchRss), 0)} MiB\n`);
  process.stdout.write(`skopeo copy docker:// -> oci:           ${fmt(stats(rows.skopeoFetch))} MB/s\n`);
  process.stdout.write(`fetch ratio ours/skopeo (per pair):      ${fmt(fetchRatio, 2)}\n`);
  process.stdout.write(`fetch process overhead (start-up, import, exit; wall minus the in-process fetch): ${fmt(stats(rows.fetchOverhead), 0)} ms\n`);
  process.stdout.write(`fetch ratio without that overhead (in-process fetch / skopeo whole process): ${fmt(stats(rows.fetchInProcess.map((v, i) => v / rows.skopeoFetch[i])), 2)}\n`);
  process.stdout.write(`bare \`node -e ''\` in the same pairs: ${fmt(stats(rows.bareNode), 0)} ms; best fetch ratio a Node process could reach (skopeo / (bare start-up + in-process fetch)): ${fmt(stats(rows.bound), 2)}\n`);
  process.stdout.write(`push (ours, copy layout -> registry):    ${fmt(stats(rows.push))} MB/s, peak RSS ${fmt(stats(rows.pushRss), 0)} MiB\n`);
  process.stdout.write(`skopeo copy oci: -> docker://           ${fmt(stats(rows.skopeoPush))} MB/s\n`);
  process.stdout.write(`push ratio ours/skopeo (per pair):       ${fmt(pushRatio, 2)}\n`);
  const cpuRatio = (ours, peer) => stats(ours.map((v, i) => peer[i] / Math.max(v, 1)));
  process.stdout.write(`fetch CPU user+sys ms (ours; skopeo):     ${fmt(stats(rows.fetchCpu), 0)}; ${fmt(stats(rows.skopeoFetchCpu), 0)}; skopeo/ours ${fmt(cpuRatio(rows.fetchCpu, rows.skopeoFetchCpu), 2)}\n`);
  process.stdout.write(`push CPU user+sys ms (ours; skopeo):      ${fmt(stats(rows.pushCpu), 0)}; ${fmt(stats(rows.skopeoPushCpu), 0)}; skopeo/ours ${fmt(cpuRatio(rows.pushCpu, rows.skopeoPushCpu), 2)}\n`);
  process.stdout.write(`sha256sum over the same bytes:           ${mbps(totalBytes, shaMs).toFixed(1)} MB/s\n`);
  process.stdout.write(`load average (1 min, ${os.cpus().length} cores):        ${fmt(stats(rows.load), 2)}\n`);
  process.stdout.write(
    `fetch_verify_vs_skopeo=${fetchRatio.median.toFixed(2)} peak_rss_mib=${Math.max(...rows.fetchRss)} size_mib=${sizeMib} push_vs_skopeo=${pushRatio.median.toFixed(2)}\n`,
  );
} finally {
  for (const registry of registries) await registry.stop().catch(() => undefined);
  if (!keep) await rm(work, { recursive: true, force: true });
}
