#!/usr/bin/env node
// Racing publishers under load (not a timed test): runs one test file (default
// test/release/publish-race.test.ts: two `release publish` processes on a layout
// store and on a Bearer-auth docker-registry) N times in a row while `--load`
// CPU-bound processes run alongside, and reports how many runs passed, the
// failures' first lines, and the load average seen (1-minute, sampled every 5 s).
//
// Usage: node scripts/race-loop.mjs [--runs 50] [--load 4] [--test <file>]
// Last line: race_runs=<N> passed=<n> failed=<n> load_min=<x> load_median=<x> load_max=<x>
import { spawn } from "node:child_process";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const value = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const runs = Number(value("--runs", "50"));
const load = Number(value("--load", "4"));
const testFile = value("--test", "test/release/publish-race.test.ts");
if (!Number.isInteger(runs) || runs < 1 || !Number.isInteger(load) || load < 0) {
  process.stderr.write("race-loop: --runs must be a positive integer and --load a non-negative integer\n");
  process.exit(2);
}

const burners = Array.from({ length: load }, () => spawn(process.execPath, ["-e", "for (;;) { Math.sqrt(Math.random()); }"], { stdio: "ignore" }));
const samples = [];
const sampler = setInterval(() => samples.push(os.loadavg()[0]), 5000);

function runOnce() {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(process.execPath, [path.join(root, "node_modules", "vitest", "vitest.mjs"), "run", testFile], { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d) => (out = (out + d).slice(-20000)));
    child.stderr.on("data", (d) => (out = (out + d).slice(-20000)));
    child.on("close", (code) => resolve({ code, ms: Date.now() - started, out }));
  });
}

let passed = 0;
const failures = [];
try {
  for (let i = 1; i <= runs; i += 1) {
    const result = await runOnce();
    if (result.code === 0) passed += 1;
    else failures.push({ run: i, line: (result.out.match(/(?:Error|expected)[^\n]*/) ?? ["(no error line)"])[0].replace(/\x1b\[[0-9;]*m/g, "").slice(0, 240) });
    process.stdout.write(`run ${i}/${runs}: ${result.code === 0 ? "pass" : "FAIL"} (${(result.ms / 1000).toFixed(1)} s, load ${os.loadavg()[0].toFixed(2)})\n`);
  }
} finally {
  clearInterval(sampler);
  for (const b of burners) b.kill("SIGKILL");
}
for (const f of failures) process.stdout.write(`failure in run ${f.run}: ${f.line}\n`);
const sorted = [...samples].sort((a, b) => a - b);
const pick = (q) => (sorted.length === 0 ? os.loadavg()[0] : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]).toFixed(2);
process.stdout.write(`race_runs=${runs} passed=${passed} failed=${runs - passed} load_min=${pick(0)} load_median=${pick(0.5)} load_max=${pick(0.999)} cores=${os.cpus().length} burners=${load}\n`);
process.exitCode = passed === runs ? 0 : 1;
