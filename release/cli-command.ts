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
 *
 * The consumer's commands ({@link consumerCliCommand}) run on the consumer's machine, not in the author's
 * project: from an installed kit (its CLI inside a `node_modules`) they use `hermes-plugin-kit`, the CLI a
 * consumer installs with `npm install --global` (README, step 4), never a path into the author's project.
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
 * The command that runs this kit's CLI from any directory on this machine (the resume line of `release run`).
 * @param env its `PATH` is searched for a `hermes-plugin-kit` that is this installation.
 * @param entry this installation's CLI entry (default {@link kitCliEntry}).
 */
export function kitCliCommand(env: Readonly<Record<string, string | undefined>> = process.env, entry: string | undefined = kitCliEntry()): string {
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

/**
 * The command the printed consumer steps (`release run` and `release demo`, release/next-steps.ts) use:
 * `hermes-plugin-kit` when the kit runs from an installed package (its CLI entry lies inside a
 * `node_modules`: the author's project, or a global install), the CLI a consumer installs with
 * `npm install --global` (README, step 4), since a path into the author's project means nothing on a
 * consumer's machine; from a clone, {@link kitCliCommand} (`node <clone>/dist/src/cli/main.cjs`, or
 * `hermes-plugin-kit` when that name on `PATH` is the clone's), as README's demo section says.
 * @param env its `PATH` is searched as {@link kitCliCommand} does.
 * @param entry this installation's CLI entry (default {@link kitCliEntry}).
 */
export function consumerCliCommand(env: Readonly<Record<string, string | undefined>> = process.env, entry: string | undefined = kitCliEntry()): string {
  if (entry !== undefined && entry.split(/[\\/]/).includes("node_modules")) return "hermes-plugin-kit";
  return kitCliCommand(env, entry);
}
