/** CLI wiring of release steps (logic lives in release/). */
import type { Command } from "commander";

/** Register steps on the `release` command. */
export function registerReleaseBuildSteps(release: Command): void {
  void release;
}
