/** The version of this package, read from its package.json (no other module loaded). */
import { readFileSync } from "node:fs";

/**
 * `version` of hermes-plugin-kit's own package.json: the nearest one above this
 * module named `hermes-plugin-kit` (`dist/src/cli/` when built, `src/cli/` in tests).
 */
export function packageVersion(): string {
  for (let up = "../../"; up.length <= 12; up += "../") {
    let text: string;
    try {
      text = readFileSync(new URL(`${up}package.json`, import.meta.url), "utf8");
    } catch {
      continue;
    }
    const pkg = JSON.parse(text) as { name?: unknown; version?: unknown };
    if (pkg.name === "hermes-plugin-kit" && typeof pkg.version === "string") return pkg.version;
  }
  throw new Error("hermes-plugin-kit's package.json was not found above the CLI module");
}
