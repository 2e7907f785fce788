#!/usr/bin/env node
/**
 * `verify-provenance` benchmark: wall time and peak RSS of offline Sigstore
 * verification through the CLI, each paired with a bare `node -e ''` started
 * right before it (the peer: same machine, same moment).
 *
 * Commands timed:
 * - keyless: the conformance case `happy-path-intoto-in-dsse-v3` (a Fulcio
 *   certificate, a Rekor entry, the public-good root embedded in @sigstore/tuf);
 * - key: a provenance statement signed here with a throwaway P-256 key
 *   (DSSE, no log), verified for its subject digest with `--key`.
 *
 * Each process is started and reaped by a small Python helper through
 * `os.wait4`, so the peak RSS is the command's own. Needs `npm run build` and python3.
 *
 * Flags / environment: `--rounds N` or BENCH_PROVENANCE_ROUNDS (pairs per
 * command, default 11, at least 5).
 *
 * Last line: `verify_provenance_vs_node=<median ratio, keyless> key=<median ratio, key> peak_rss_mib=<largest>`.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { benchEnvironment } from "./bench-env.mjs";

const environmentLine = benchEnvironment();
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const cli = path.join(root, "dist", "src", "cli", "main.js");
if (!existsSync(cli)) {
  process.stderr.write("bench-provenance: dist/src/cli/main.js is missing; run `npm run build` first\n");
  process.exit(2);
}
const at = process.argv.indexOf("--rounds");
const ROUNDS = Number(at === -1 ? (process.env.BENCH_PROVENANCE_ROUNDS ?? 11) : process.argv[at + 1]);
if (!Number.isInteger(ROUNDS) || ROUNDS < 5) {
  process.stderr.write("bench-provenance: --rounds must be an integer >= 5\n");
  process.exit(2);
}

// Runs each [label, argv] `rounds` times after one warm-up, reaping each child with
// os.wait4 for its own rusage; prints JSON {label: [[wall_ms, maxrss_kib, status], ...]}.
const PY_RUNNER = String.raw`
import json, os, subprocess, sys, time
spec = json.load(sys.stdin)
out = {}
def once(argv):
    start = time.perf_counter()
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    return [(time.perf_counter() - start) * 1000, ru.ru_maxrss, os.waitstatus_to_exitcode(status)]
for label, argv in spec["commands"]:
    once(argv)
for _ in range(spec["rounds"]):
    for label, argv in spec["commands"]:
        out.setdefault(label, []).append(once(argv))
print(json.dumps(out))
`;

const stats = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return { min: sorted[0], median: sorted[Math.floor(sorted.length / 2)], max: sorted[sorted.length - 1] };
};

const work = mkdtempSync(path.join(os.tmpdir(), "hpk-bench-provenance-"));
try {
  // A key-signed statement for a subject digest, made with the kit's own signer.
  const { generateKeyPairSync } = await import("node:crypto");
  const { canonicalJsonBytes } = await import(path.join(root, "dist", "src", "contract", "canonical-json.js"));
  const { provenanceStatement } = await import(path.join(root, "dist", "src", "contract", "provenance.js"));
  const { publicKeyPem, signStatement } = await import(path.join(root, "dist", "release", "provenance-sign.js"));
  const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const subject = "sha256:" + "b".repeat(64);
  const statement = provenanceStatement({
    registryRepository: "ghcr.io/acme/bench-plugin",
    bundleDigest: subject,
    sourceRepository: "https://github.com/acme/bench-plugin",
    sourceSha: "a".repeat(40),
    tag: "v1.2.0",
    workflow: { path: ".github/workflows/release.yml", ref: "refs/heads/main" },
    runId: "123456",
    runAttempt: 1,
    testedManifestDigest: "sha256:" + "1".repeat(64),
  });
  const bundle = path.join(work, "key.sigstore.json");
  writeFileSync(bundle, await signStatement(canonicalJsonBytes(statement), { kind: "key", privateKey }));
  const pub = path.join(work, "key.pub");
  writeFileSync(pub, publicKeyPem(privateKey));

  const cases = path.join(root, "test", "fixtures", "sigstore-conformance");
  const keyless = [
    process.execPath, cli, "verify-provenance",
    "--bundle", path.join(cases, "cases", "happy-path-intoto-in-dsse-v3", "bundle.sigstore.json"),
    "--certificate-identity", "https://github.com/sigstore-conformance/extremely-dangerous-public-oidc-beacon/.github/workflows/extremely-dangerous-oidc-beacon.yml@refs/heads/main",
    "--certificate-oidc-issuer", "https://token.actions.githubusercontent.com",
    path.join(cases, "a.txt"),
  ];
  const key = [process.execPath, cli, "verify-provenance", "--bundle", bundle, "--key", pub, subject];
  const node = [process.execPath, "-e", ""];
  const commands = [["node (keyless pair)", node], ["verify-provenance keyless", keyless], ["node (key pair)", node], ["verify-provenance key", key]];
  const raw = execFileSync("python3", ["-c", PY_RUNNER], { input: JSON.stringify({ rounds: ROUNDS, commands }), maxBuffer: 16 * 1024 * 1024 });
  const results = JSON.parse(raw.toString("utf8"));

  for (const [label, runs] of Object.entries(results)) {
    const failed = runs.filter((r) => r[2] !== 0).length;
    if (failed > 0) throw new Error(`${label}: ${failed} of ${runs.length} runs exited non-zero`);
  }
  const row = (label) => {
    const wall = stats(results[label].map((r) => r[0]));
    const rss = stats(results[label].map((r) => r[1] / 1024));
    return { wall, rss };
  };
  process.stdout.write(`${environmentLine}\n`);
  process.stdout.write(`verify-provenance wall time (${ROUNDS} pairs each, ms; peak RSS MiB)\n`);
  process.stdout.write("command                      min      median   max      peak RSS (median)\n");
  for (const label of Object.keys(results)) {
    const { wall, rss } = row(label);
    process.stdout.write(`${label.padEnd(28)} ${wall.min.toFixed(1).padStart(7)}  ${wall.median.toFixed(1).padStart(7)}  ${wall.max.toFixed(1).padStart(7)}  ${rss.median.toFixed(1)}\n`);
  }
  // Ratios per pair (each verify run over the node run just before it), then their min/median/max.
  const ratios = (nodeLabel, verifyLabel) => stats(results[verifyLabel].map((r, i) => r[0] / results[nodeLabel][i][0]));
  const rk = ratios("node (keyless pair)", "verify-provenance keyless");
  const rkey = ratios("node (key pair)", "verify-provenance key");
  process.stdout.write(`ratio keyless/node: min ${rk.min.toFixed(2)} median ${rk.median.toFixed(2)} max ${rk.max.toFixed(2)}\n`);
  process.stdout.write(`ratio key/node:     min ${rkey.min.toFixed(2)} median ${rkey.median.toFixed(2)} max ${rkey.max.toFixed(2)}\n`);
  const peak = Math.max(...["verify-provenance keyless", "verify-provenance key"].flatMap((l) => results[l].map((r) => r[1] / 1024)));
  process.stdout.write(`verify_provenance_vs_node=${rk.median.toFixed(2)} key=${rkey.median.toFixed(2)} peak_rss_mib=${peak.toFixed(0)}\n`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
