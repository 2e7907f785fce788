#!/usr/bin/env node
/**
 * `npm run bench`: every benchmark in turn, each printing its own figures as it
 * runs, then a summary of every benchmark's last line (its headline figures):
 *
 * - `bench-oci.mjs` once per size, 64, 256 and 512 MiB (fetch-verify and push
 *   vs skopeo in the same run); `--size-mib N` runs that size only, and every
 *   other flag (`--pairs N`, `--keep`) is passed to it;
 * - `bench-oci-copy.mjs` at 64 and 256 MiB (registry-to-registry copy: the relay, the stream path and
 *   `skopeo copy docker:// docker://` in the same run; `--size-mib N` runs that size only, `--pairs N` is passed);
 * - `bench-kit.mjs` (a tool call through the kit vs a bare SDK server, and the native bridge);
 * - `bench-cli.mjs` (CLI start-up vs `node -e ''`);
 * - `bench-provenance.mjs` (verify-provenance vs `node -e ''`);
 * - `bench-tarball.mjs` (the strict tarball reader vs node-tar).
 *
 * A benchmark that fails is named in the summary and makes the exit code 1;
 * the others still run. Needs `npm run build` (and what each benchmark needs:
 * docker-registry and skopeo for bench-oci, python3 for the CLI and kit figures).
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const args = process.argv.slice(2);
const sizeAt = args.indexOf("--size-mib");
const sizes = sizeAt === -1 ? ["64", "256", "512"] : [args[sizeAt + 1]];
// `--inherit-env` (scripts/bench-env.mjs) goes to every benchmark that times Node processes.
const inherit = args.includes("--inherit-env") ? ["--inherit-env"] : [];
const ociArgs = sizeAt === -1 ? args : args.filter((_, i) => i !== sizeAt && i !== sizeAt + 1);

const runs = [
  ...sizes.map((size) => ["bench-oci.mjs", ["--size-mib", size, ...ociArgs]]),
  ...(sizeAt === -1 ? ["64", "256"] : sizes).map((size) => ["bench-oci-copy.mjs", ["--size-mib", size, ...ociArgs.filter((a) => a !== "--load" && !["bundle", "barrel"].includes(a))]]),
  ["bench-kit.mjs", []],
  ["bench-cli.mjs", inherit],
  ["bench-provenance.mjs", inherit],
  ["bench-tarball.mjs", []],
];

/** Run one benchmark with its stdout passed through live; resolves to its exit code and last non-empty stdout line. */
function runBenchmark(script, scriptArgs) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [fileURLToPath(new URL(script, import.meta.url)), ...scriptArgs], { stdio: ["ignore", "pipe", "inherit"] });
    let tail = "";
    child.stdout.on("data", (chunk) => {
      process.stdout.write(chunk);
      tail = (tail + chunk.toString("utf8")).slice(-4096);
    });
    child.on("close", (code, signal) => {
      const lines = tail.split("\n").filter((l) => l.trim() !== "");
      resolve({ code: code ?? (signal === null ? 1 : 128), last: lines.at(-1) ?? "" });
    });
  });
}

const summary = [];
for (const [script, scriptArgs] of runs) {
  const label = [script.replace(/\.mjs$/, ""), ...scriptArgs].join(" ");
  process.stdout.write(`\n== ${label}\n`);
  const { code, last } = await runBenchmark(script, scriptArgs);
  summary.push(code === 0 ? `${label}: ${last}` : `${label}: FAILED (exit ${code})`);
  if (code !== 0) process.exitCode = 1;
}
process.stdout.write(`\n== summary (each benchmark's last line; full figures above)\n${summary.join("\n")}\n`);
