// `npm run bench`: every benchmark in turn (OCI transport, the kit, CLI start-up, verify-provenance); flags go to bench-oci.
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

for (const [script, args] of [["bench-oci.mjs", process.argv.slice(2)], ["bench-kit.mjs", []], ["bench-cli.mjs", []], ["bench-provenance.mjs", []], ["bench-tarball.mjs", []]]) {
  const result = spawnSync(process.execPath, [fileURLToPath(new URL(script, import.meta.url)), ...args], { stdio: "inherit" });
  if (result.status !== 0) {
    process.exitCode = result.status ?? 1;
    break;
  }
}
