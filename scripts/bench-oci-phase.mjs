#!/usr/bin/env node
// One measured phase of `bench-oci.mjs`, run as its own process so that the process
// timed against skopeo loads only what the phase needs: Node, `node:path`/`node:module` and the
// src/oci transport (nothing of the benchmark harness: no http/net/os, no getconf).
//
//   node bench-oci-phase.mjs fetch --repository HOST/REPO --out DIR [--load bundle|barrel]
//   node bench-oci-phase.mjs push  --repository HOST/REPO --layout DIR [--load bundle|barrel]
//   node bench-oci-phase.mjs copy  --repository HOST/REPO --to HOST/REPO [--path relay|stream] [--load bundle|barrel]
//
// --load bundle (default): the transport as `hermes-plugin-kit fetch` loads it, from the CLI's fetch
// bundle (dist/src/cli/fetch-bundle.cjs) through main.cjs's importArea, compiled with the per-user V8
// code cache (written after the first successful run: bench-oci's untimed warm-up). --load barrel: the
// library's ES modules (dist/src/oci/index.js, ~35 modules; Node 20 caches no ES module compilation).
//
// fetch: resolve the tag `bench`, fetchManifest, then fetchBlobToFile of every layer in
// parallel (SHA-256 verified before each rename). push: copy(layout `payload` -> registry,
// tag `bench`, 4 blobs at once). copy: copy(registry `bench` -> another registry, tag `bench`, 4 blobs at once),
// through the relay (blob-relay.ts, default) or, with --path stream, through the verifying stream of the
// general client (the path before the relay; bench-oci-copy.mjs measures both). Prints one JSON line: {"ms": <in-process ms of the phase>,
// "maxRssMib": <peak RSS of this process>}, then exits through process.exit as the CLI does.
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const [phase, ...args] = process.argv.slice(2);
const value = (name, fallback) => {
  const at = args.indexOf(name);
  if (at < 0 || args[at + 1] === undefined) {
    if (fallback !== undefined) return fallback;
    throw new Error(`bench-oci-phase: ${name} is required`);
  }
  return args[at + 1];
};
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const load = value("--load", "bundle");
let main;
let oci;
if (load === "bundle") {
  main = createRequire(import.meta.url)(path.join(root, "dist", "src", "cli", "main.cjs"));
  oci = await main.importArea("../oci/index.js", `tool-bench-oci-${phase}`);
} else if (load === "barrel") {
  oci = await import(pathToFileURL(path.join(root, "dist", "src", "oci", "index.js")).href);
} else {
  throw new Error(`bench-oci-phase: --load is bundle or barrel, not ${load}`);
}

const target = await oci.openTarget(value("--repository"), { plainHttp: true });
const t0 = process.hrtime.bigint();
if (phase === "push") {
  const src = await oci.LayoutTarget.open(value("--layout"));
  await oci.copy(src, target, "payload", { tag: "bench", concurrency: 4 });
} else if (phase === "copy") {
  const dst = await oci.openTarget(value("--to"), { plainHttp: true });
  // --path stream hides the relay: copy then streams each blob (fresh socket buffers per read) as before it.
  if (value("--path", "relay") === "stream") target.openBlobRelay = undefined;
  await oci.copy(target, dst, "bench", { tag: "bench", concurrency: 4 });
  await dst.close();
} else if (phase === "fetch") {
  const outDir = value("--out");
  const desc = await target.resolve("bench");
  const layers = JSON.parse((await oci.fetchManifest(target, desc)).toString()).layers;
  await Promise.all(layers.map((layer, i) => oci.fetchBlobToFile(target, layer, path.join(outDir, `layer-${i}.bin`))));
} else {
  throw new Error(`bench-oci-phase: unknown phase ${phase}`);
}
const ms = Number(process.hrtime.bigint() - t0) / 1e6;
await target.close();
main?.saveAreaCaches();
process.stdout.write(JSON.stringify({ ms, maxRssMib: Math.round(process.resourceUsage().maxRSS / 1024) }) + "\n");
// The CLI ends through process.exit once its work is done (src/cli/interrupt.ts, at `beforeExit`), which skips
// the heap teardown of a natural exit (~6 ms here); the measured process ends the same way.
process.exit(0);
