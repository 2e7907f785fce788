// The environment every benchmark measures in (README "Development", "Measured"):
//
// Node 20 reads NODE_EXTRA_CA_CERTS when it starts, whether or not the process ever uses TLS: it
// builds its root certificate store (about 140 bundled roots) and adds every certificate of the
// named file. On this kind of machine, where the variable names the system bundle, that costs a
// bare `node -e ''` 50-100 ms, two to four times its start-up without it. The figures of the
// issue that set the goals had `node -e ''` at 61 ms, i.e. no such variable, and a ratio against a
// taxed `node -e ''` (CLI start-up) or against skopeo (which reads certificates only for TLS)
// measures the variable, not the code. So the benchmarks remove NODE_EXTRA_CA_CERTS (and
// NODE_OPTIONS, which could preload anything) from their own environment before they start any
// measured process, ours or the peer's, and say so with the tax measured on this machine.
// `--inherit-env` measures in the environment as given.
import { spawnSync } from "node:child_process";

/** Variables removed from the measured processes' environment. */
export const REMOVED_NAMES = ["NODE_EXTRA_CA_CERTS", "NODE_OPTIONS"];

/**
 * Remove {@link REMOVED_NAMES} from `process.env` (children inherit it) unless argv holds
 * `--inherit-env`. Returns one line describing the environment, for the benchmark's output.
 */
export function benchEnvironment(argv = process.argv) {
  const present = REMOVED_NAMES.filter((name) => process.env[name] !== undefined && process.env[name] !== "");
  if (argv.includes("--inherit-env")) {
    return `environment: as given (--inherit-env)${present.length > 0 ? `; set: ${present.join(", ")}` : ""}`;
  }
  if (present.length === 0) return "environment: no NODE_EXTRA_CA_CERTS or NODE_OPTIONS set";
  const taxed = { ...process.env };
  for (const name of REMOVED_NAMES) delete process.env[name];
  const line = `environment: ${present.join(", ")} removed from every measured process (--inherit-env keeps them)`;
  if (!present.includes("NODE_EXTRA_CA_CERTS")) return line;
  const tax = startupTax(taxed, { ...process.env });
  return `${line}; bare \`node -e ''\` median ${tax.withMs.toFixed(1)} ms with NODE_EXTRA_CA_CERTS, ${tax.withoutMs.toFixed(1)} ms without (${tax.runs} runs each)`;
}

/** Median wall time (ms) of `node -e ''` in each environment, alternating, `runs` times each. */
function startupTax(withEnv, withoutEnv, runs = 7) {
  const once = (env) => {
    const t0 = process.hrtime.bigint();
    spawnSync(process.execPath, ["-e", ""], { env, stdio: "ignore" });
    return Number(process.hrtime.bigint() - t0) / 1e6;
  };
  const a = [];
  const b = [];
  for (let i = 0; i < runs; i += 1) {
    a.push(once(withEnv));
    b.push(once(withoutEnv));
  }
  const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
  return { withMs: median(a), withoutMs: median(b), runs };
}
