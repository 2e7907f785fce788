#!/usr/bin/env node
/**
 * Tarball reading benchmark: the one strict reader (`readNpmTarballFile`,
 * which also hashes the file and checks every header) against the parser npm
 * installs with (node-tar 7.5.22 listing, `tar.t`) and GNU tar (`tar -tzf`),
 * run in alternation on the same `npm pack` output, same machine, same moment.
 *
 * Fixtures: a synthetic package of `--files N` members (default 2000, 1-32 KiB
 * each, about 32 MiB unpacked, one long pax path and one non-ASCII name),
 * packed by the real `npm pack --ignore-scripts`.
 *
 * Flags: `--rounds N` (default 9, at least 3), `--files N`. Needs `npm run build`.
 * Last line: `tarball_strict_vs_node_tar=<median ratio> strict_ms=<median> files=<N>`.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const reader = path.join(root, "dist", "src", "contract", "npm-tarball.js");
if (!existsSync(reader)) {
  process.stderr.write("bench-tarball: dist/src/contract/npm-tarball.js is missing; run `npm run build` first\n");
  process.exit(2);
}
const flag = (name, fallback) => {
  const at = process.argv.indexOf(name);
  return at === -1 ? fallback : Number(process.argv[at + 1]);
};
const rounds = Math.max(3, flag("--rounds", 9));
const files = Math.max(10, flag("--files", 2000));

const { readNpmTarballFile } = await import(pathToFileURL(reader).href);
const { t: nodeTarList } = await import("tar");

const work = mkdtempSync(path.join(os.tmpdir(), "hpk-bench-tarball-"));
try {
  const pkg = path.join(work, "pkg");
  mkdirSync(path.join(pkg, "lib"), { recursive: true });
  let seed = 1;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  for (let i = 0; i < files; i += 1) {
    const size = 1024 + Math.floor(random() * 31 * 1024);
    writeFileSync(path.join(pkg, "lib", `m${i}.js`), `// ${i}\n` + "x".repeat(size));
  }
  const deep = path.join(pkg, "lib", "a".repeat(60), "b".repeat(60));
  mkdirSync(deep, { recursive: true });
  writeFileSync(path.join(deep, `${"c".repeat(120)}.js`), "deep\n");
  writeFileSync(path.join(pkg, "lib", "caf\u00e9.js"), "x\n");
  writeFileSync(path.join(pkg, "package.json"), JSON.stringify({ name: "bench-pack", version: "1.0.0", main: "lib/m0.js", files: ["lib"] }));
  execFileSync("npm", ["pack", "--ignore-scripts", "--silent", "--pack-destination", work], { cwd: pkg, stdio: ["ignore", "ignore", "inherit"] });
  const tgz = path.join(work, "bench-pack-1.0.0.tgz");

  const time = async (fn) => {
    const started = process.hrtime.bigint();
    await fn();
    return Number(process.hrtime.bigint() - started) / 1e6;
  };
  const samples = { strict: [], nodeTar: [], gnuTar: [] };
  let members = 0;
  for (let round = 0; round < rounds; round += 1) {
    samples.strict.push(await time(async () => (members = (await readNpmTarballFile(tgz)).members.length)));
    samples.nodeTar.push(await time(() => nodeTarList({ file: tgz, onReadEntry: () => undefined })));
    samples.gnuTar.push(await time(async () => spawnSync("tar", ["-tzf", tgz], { stdio: ["ignore", "ignore", "ignore"] })));
  }
  const stats = (values) => {
    const sorted = [...values].sort((a, b) => a - b);
    return { min: sorted[0], median: sorted[Math.floor(sorted.length / 2)], max: sorted[sorted.length - 1] };
  };
  const fmt = (s) => `min ${s.min.toFixed(1)} / median ${s.median.toFixed(1)} / max ${s.max.toFixed(1)} ms`;
  const strict = stats(samples.strict);
  const nodeTar = stats(samples.nodeTar);
  const gnuTar = stats(samples.gnuTar);
  const ratios = stats(samples.strict.map((s, i) => s / samples.nodeTar[i]));
  process.stdout.write(`tarball: ${members} members, ${rounds} rounds\n`);
  process.stdout.write(`strict reader (lists, checks every header, hashes the file): ${fmt(strict)}\n`);
  process.stdout.write(`node-tar 7.5.22 listing (npm's parser):                     ${fmt(nodeTar)}\n`);
  process.stdout.write(`GNU tar -tzf (separate process):                            ${fmt(gnuTar)}\n`);
  process.stdout.write(`strict / node-tar per round: min ${ratios.min.toFixed(2)} / median ${ratios.median.toFixed(2)} / max ${ratios.max.toFixed(2)}\n`);
  process.stdout.write(`tarball_strict_vs_node_tar=${ratios.median.toFixed(2)} strict_ms=${strict.median.toFixed(1)} files=${members}\n`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
