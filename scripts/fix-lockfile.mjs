// Adds lock entries for platform-specific optional packages that the npm
// registry mirror reachable here does not serve (rust-just's non-linux-x64
// binaries, vite's windows-only helper), so `npm ci` sees a lock in sync with
// package.json. Run after any `npm install` that rewrites package-lock.json.
import { readFileSync, writeFileSync } from "node:fs";

const lock = JSON.parse(readFileSync("package-lock.json", "utf8"));
const justVersion = lock.packages["node_modules/rust-just"]?.version;
const platforms = {
  "darwin-arm64": ["darwin", "arm64"], "darwin-x64": ["darwin", "x64"], "linux-arm": ["linux", "arm"],
  "linux-arm64": ["linux", "arm64"], "linux-armv7": ["linux", "arm"], "linux-loong64": ["linux", "loong64"],
  "linux-riscv64": ["linux", "riscv64"], "windows-arm64": ["win32", "arm64"], "windows-x64": ["win32", "x64"],
};
if (justVersion) {
  for (const [suffix, [os, cpu]] of Object.entries(platforms)) {
    const key = `node_modules/rust-just-${suffix}`;
    lock.packages[key] ??= { version: justVersion, dev: true, optional: true, os: [os], cpu: [cpu] };
  }
}
for (const [key, meta] of Object.entries(lock.packages)) {
  if (meta?.optionalDependencies?.["napi-windows-process-start-time"]) {
    lock.packages["node_modules/napi-windows-process-start-time"] ??= { version: "0.1.0", dev: true, optional: true, os: ["win32"] };
    void key;
  }
}
const sorted = {};
for (const key of Object.keys(lock.packages).sort((a, b) => (a === "" ? -1 : b === "" ? 1 : a < b ? -1 : a > b ? 1 : 0))) {
  sorted[key] = lock.packages[key];
}
lock.packages = sorted;
writeFileSync("package-lock.json", JSON.stringify(lock, null, 2) + "\n");
