#!/usr/bin/env node
/**
 * CLI start-up benchmark: wall time and peak RSS of `hermes-plugin-kit --version`,
 * `--help`, `verify-final-receipt`, `verify-manifest`, `fleet list` of an empty lock (the fetch
 * bundle's start-up with its code cache) and `fetch` up to its first request (to a closed loopback
 * port, so the privacy gate's first request is refused at once: exit 1, after the fetch bundle has
 * loaded; a failed run writes no code cache, so this row is the uncached start-up), each paired
 * with a bare `node -e ''` run right before it (the peer, same machine, same moment).
 *
 * The receipt and manifest are real documents: a tiny package packed by `npm pack`,
 * a tested manifest and a published receipt built by the contract's own builders
 * (or `--receipt F` to time a given receipt, e.g. the demo's
 * `<workspace>/consumer/release-receipt.json`, checked against its own package
 * and registry_reference).
 *
 * Every process is started and reaped by a small Python helper through
 * `os.wait4`, which returns the child's own rusage: the peak RSS is the
 * command's, not this script's. Besides wall time (the goal's measure) it
 * prints the CPU time (user + system) ratio, which a loaded machine disturbs less. Needs the compiled CLI (`npm run build`) and python3.
 *
 * Flags / environment: `--rounds N` or BENCH_CLI_ROUNDS (pairs per command,
 * default 11, at least 5); `--keep` keeps the fixture directory; NODE_EXTRA_CA_CERTS
 * and NODE_OPTIONS are removed from every measured process unless `--inherit-env`
 * (scripts/bench-env.mjs: Node 20 parses that certificate file at every start-up).
 *
 * Last line: `cli_verify_receipt_vs_node=<median ratio> peak_rss_mib=<largest
 * peak RSS of the verify commands>`.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { benchEnvironment } from "./bench-env.mjs";

const environmentLine = benchEnvironment();
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
// What `hermes-plugin-kit` runs: package.json `bin` (dist/src/cli/main.cjs).
const cli = path.join(root, JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")).bin["hermes-plugin-kit"]);
if (!existsSync(cli)) {
  process.stderr.write(`bench-cli: ${cli} is missing; run \`npm run build\` first\n`);
  process.exit(2);
}

function flag(name) {
  const at = process.argv.indexOf(name);
  return at === -1 ? undefined : process.argv[at + 1];
}
const ROUNDS = Number(flag("--rounds") ?? process.env.BENCH_CLI_ROUNDS ?? 11);
if (!Number.isInteger(ROUNDS) || ROUNDS < 5) {
  process.stderr.write("bench-cli: --rounds must be an integer >= 5\n");
  process.exit(2);
}

// Runs each [label, argv] in turn `rounds` times (after one warm-up), reaping each
// child with os.wait4 for its own rusage; prints JSON {label: [[wall_ms, maxrss_kib, status, cpu_ms], ...]}.
const PY_RUNNER = String.raw`
import json, os, subprocess, sys, time
spec = json.load(sys.stdin)
out = {}
def once(argv, cwd):
    start = time.perf_counter()
    p = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    wall = (time.perf_counter() - start) * 1000
    p.returncode = os.waitstatus_to_exitcode(status)
    return [wall, ru.ru_maxrss, p.returncode, (ru.ru_utime + ru.ru_stime) * 1000]
for label, argv in spec["commands"]:
    once(argv, spec["cwd"])
for _ in range(spec["rounds"]):
    for label, argv in spec["commands"]:
        out.setdefault(label, []).append(once(argv, spec["cwd"]))
print(json.dumps(out))
`;

const work = mkdtempSync(path.join(os.tmpdir(), "hpk-bench-cli-"));
try {
  const contract = await import(path.join(root, "dist", "src", "contract", "index.js"));
  const { receiptReferenceOf } = await import(path.join(root, "dist", "src", "contract", "artifact-document.js"));

  // Fixture: npm pack of a tiny package, tested manifest, published receipt.
  const pkgDir = path.join(work, "pkg");
  const dist = path.join(work, "dist");
  mkdirSync(pkgDir);
  mkdirSync(dist);
  writeFileSync(path.join(pkgDir, "package.json"), JSON.stringify({ name: "bench-plugin", version: "1.1.0", files: ["index.js"] }));
  writeFileSync(path.join(pkgDir, "index.js"), "export const answer = 42;\n");
  execFileSync("npm", ["pack", "--silent", "--pack-destination", dist], { cwd: pkgDir, env: { ...process.env, npm_config_ignore_scripts: "true" }, stdio: ["ignore", "ignore", "inherit"] });
  const policy = { package: "bench-plugin", registryRepository: "ghcr.io/acme/bench-plugin", gates: { ...contract.DEFAULT_GATE_COMMANDS } };
  const sha = "a".repeat(40);
  const gate = (command) => ({ status: "passed", result: "passed", source_sha: sha, command });
  const manifest = contract.createTestedManifest({
    policy,
    previousVersion: "1.0.0",
    version: "1.1.0",
    tag: "v1.1.0",
    sourceSha: sha,
    runId: "1",
    runAttempt: 1,
    gates: { unit: gate(policy.gates.unit), public_contract: gate(policy.gates.public_contract), host_contract: { ...gate(policy.gates.host_contract), mcp_sdk_version: "1.32.2" }, build_metadata: gate(policy.gates.build_metadata) },
    artifacts: await contract.inspectDistDir(dist, policy, "1.1.0"),
  });
  const manifestFile = path.join(work, "release-manifest.json");
  writeFileSync(manifestFile, contract.testedManifestBytes(manifest));
  const artifact = manifest.artifacts[0];
  const bundleReference = `${policy.registryRepository}@sha256:${"b".repeat(64)}`;
  const layers = [
    { path: `dist/${artifact.filename}`, digest: `sha256:${artifact.sha256}`, size: artifact.size },
    { path: "release-manifest.json", digest: "sha256:" + "1".repeat(64), size: 1200 },
    { path: "release-payload.sha256", digest: "sha256:" + "2".repeat(64), size: 250 },
    { path: "release-source.bundle", digest: "sha256:" + "3".repeat(64), size: 4096 },
  ];
  let receiptFile = path.join(work, "release-receipt.json");
  writeFileSync(receiptFile, contract.canonicalJson(contract.buildPublishedReceipt(manifest, bundleReference, layers, policy)));
  let receiptArgs = ["--repository", policy.registryRepository, "--package", policy.package, "--expect-bundle-reference", bundleReference];
  const given = flag("--receipt");
  if (given !== undefined) {
    receiptFile = path.resolve(given);
    const doc = JSON.parse(readFileSync(receiptFile, "utf8"));
    const repository = doc.registry_reference.slice(0, doc.registry_reference.lastIndexOf("@"));
    receiptArgs = ["--repository", repository, "--package", doc.package, "--expect-bundle-reference", doc.registry_reference];
    receiptArgs.push("--expect-receipt-reference", receiptReferenceOf(repository, readFileSync(receiptFile)));
  }

  const lockFile = path.join(work, "fleet.lock.json");
  writeFileSync(lockFile, JSON.stringify({ schema_version: 1, plugins: [] }));
  const node = process.execPath;
  const commands = [
    ["--version", [node, cli, "--version"]],
    ["--help", [node, cli, "--help"]],
    ["verify-final-receipt", [node, cli, "verify-final-receipt", "--receipt", receiptFile, ...receiptArgs]],
    ["verify-manifest", [node, cli, "verify-manifest", "--manifest", manifestFile, "--artifact-dir", dist, "--repository", policy.registryRepository]],
    // The fetch bundle's start-up, warm: `fleet list` of an empty lock runs from it and succeeds (so its cache is written).
    ["fleet list (fetch bundle)", [node, cli, "fleet", "list", "--lock", lockFile]],
    // Port 9 on the loopback: nothing listens. Exit 1 (PRIVACY_NO_STATUS) is this row's expected answer; a failed
    // run writes no code cache (src/cli/main.cts), so this is fetch's uncached start-up up to its first request.
    ["fetch, uncached (to its 1st request)", [node, cli, "fetch", "--plain-http", "--reference", `127.0.0.1:9/acme/bench-plugin@sha256:${"c".repeat(64)}`, "--output-dir", path.join(work, "fetched")]],
  ];
  /** The exit status each row must end with (0 unless listed). */
  const expectedStatus = { "fetch, uncached (to its 1st request)": 1 };
  // Each command is paired with a bare node run immediately before it.
  const spec = { cwd: work, rounds: ROUNDS, commands: commands.flatMap(([label, argv]) => [[`node:${label}`, [node, "-e", ""]], [label, argv]]) };

  const loadBefore = os.loadavg();
  const py = spawnSync("python3", ["-c", PY_RUNNER], { input: JSON.stringify(spec), encoding: "utf8", maxBuffer: 16 * 1024 * 1024 });
  if (py.status !== 0) {
    process.stderr.write(`bench-cli: the python3 runner failed (exit ${py.status}): ${py.stderr || py.error?.message}\n`);
    process.exit(1);
  }
  const loadAfter = os.loadavg();
  const runs = JSON.parse(py.stdout);

  const median = (xs) => {
    const s = [...xs].sort((a, b) => a - b);
    const mid = s.length >> 1;
    return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
  };
  const mmm = (xs, digits) => `${Math.min(...xs).toFixed(digits)}/${median(xs).toFixed(digits)}/${Math.max(...xs).toFixed(digits)}`;
  const fmtLoad = (l) => l.map((x) => x.toFixed(2)).join(" ");
  console.log(`machine: ${os.cpus().length} cpu, node ${process.version}, load ${fmtLoad(loadBefore)} before, ${fmtLoad(loadAfter)} after`);
  console.log(environmentLine);
  console.log(`${ROUNDS} pairs per command (bare \`node -e ''\` then the command); figures min/median/max`);
  const results = {};
  for (const [label] of commands) {
    const cmd = runs[label];
    const base = runs[`node:${label}`];
    const failed = cmd.filter(([, , status]) => status !== (expectedStatus[label] ?? 0));
    if (failed.length > 0) {
      process.stderr.write(`bench-cli: ${label} exited ${failed[0][2]} (run it by hand to see why)\n`);
      process.exit(1);
    }
    const ratios = cmd.map(([ms], i) => ms / base[i][0]);
    const rss = cmd.map(([, kib]) => kib / 1024);
    const cpuRatios = cmd.map(([, , , cpu], i) => cpu / Math.max(base[i][3], 1));
    results[label] = { ratio: median(ratios), rssMax: Math.max(...rss) };
    console.log(
      `  ${label.padEnd(36)} wall ${mmm(cmd.map(([ms]) => ms), 1)} ms vs node ${mmm(base.map(([ms]) => ms), 1)} ms: ratio ${mmm(ratios, 2)}; cpu ratio ${mmm(cpuRatios, 2)}; peak RSS ${mmm(rss, 1)} MiB (node ${mmm(base.map(([, kib]) => kib / 1024), 1)})`,
    );
  }
  console.log("goals at the median: --version and --help <= 1.5x node; verify-final-receipt and verify-manifest <= 2x with peak RSS <= 60 MiB (fleet list and fetch: no goal; the fetch bundle's start-up, shown for comparison)");
  const peak = Math.max(results["verify-final-receipt"].rssMax, results["verify-manifest"].rssMax);
  console.log(`cli_verify_receipt_vs_node=${results["verify-final-receipt"].ratio.toFixed(2)} peak_rss_mib=${Math.ceil(peak)}`);
} finally {
  if (process.argv.includes("--keep")) process.stderr.write(`bench-cli: kept ${work} (--keep)\n`);
  else rmSync(work, { recursive: true, force: true });
}
