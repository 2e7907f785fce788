/** CLI wiring of the release commands (logic lives outside src/cli). */
import type { Command } from "commander";

/** Register the release subcommands on `program`. */
export function registerReleaseCommands(program: Command): void {
  void program;
}
