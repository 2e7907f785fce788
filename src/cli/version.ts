/** The version of this package, read from its package.json (no other module loaded). */
import { readFileSync } from "node:fs";

/** `version` of hermes-plugin-kit's own package.json. */
export function packageVersion(): string {
  const text = readFileSync(new URL("../../../package.json", import.meta.url), "utf8");
  return (JSON.parse(text) as { version: string }).version;
}
