// `npm run demo [-- flags]`: the end-to-end demo (`hermes-plugin-kit release demo`), flags forwarded.
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const cli = fileURLToPath(new URL("../dist/src/cli/main.js", import.meta.url));
const result = spawnSync(process.execPath, [cli, "release", "demo", ...process.argv.slice(2)], { stdio: "inherit" });
process.exitCode = result.status ?? 1;
