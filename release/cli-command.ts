/**
 * How a consumer runs this kit's CLI, for the commands `release run` and
 * `release demo` print next (release/next-steps.ts). The kit is not on the
 * npm registry, so `npx hermes-plugin-kit` works only inside a project that
 * installed it (elsewhere npx asks the registry and gets a 404): the printed
 * form is `hermes-plugin-kit` when that name on PATH is this very
 * installation (`npm install --global <kit tarball>`; a `node_modules/.bin` on PATH, which npx and
 * `npm run` add for their child alone, does not count), else
 * `node <absolute path of this installation's CLI>`, which works from any
 * directory, a clone included.
 */
import { existsSync, realpathSync } from "node:fs";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";
import { shellWord } from "./next-steps.js";

/** The CLI entry of this installation (package.json `bin`): `dist/src/cli/main.cjs` beside the running code (built), or in the checkout's `dist/` (sources under test). */
export function kitCliEntry(): string | undefined {
  const candidates = [new URL("../src/cli/main.cjs", import.meta.url), new URL("../dist/src/cli/main.cjs", import.meta.url)].map((url) => fileURLToPath(url));
  return candidates.find((file) => existsSync(file));
}

function realpathOrUndefined(file: string): string | undefined {
  try {
    return realpathSync(file);
  } catch {
    return undefined;
  }
}

/**
 * The command a consumer types to run this kit's CLI from any directory.
 * @param env its `PATH` is searched for a `hermes-plugin-kit` that is this installation.
 */
export function kitCliCommand(env: Readonly<Record<string, string | undefined>> = process.env): string {
  const entry = kitCliEntry();
  if (entry === undefined) return "hermes-plugin-kit";
  const real = realpathOrUndefined(entry);
  for (const dir of (env["PATH"] ?? "").split(delimiter)) {
    // npx and `npm run` put a project's node_modules/.bin on the PATH of the process they start, not on
    // the user's shell's: a name found only there is not runnable as printed.
    if (dir === "" || /(^|[\\/])node_modules[\\/]\.bin[\\/]?$/.test(dir)) continue;
    const onPath = realpathOrUndefined(join(dir, "hermes-plugin-kit"));
    if (onPath !== undefined && onPath === real) return "hermes-plugin-kit";
  }
  return `node ${shellWord(entry)}`;
}
