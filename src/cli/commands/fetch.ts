/** CLI wiring of the fetch commands (logic lives outside src/cli). */
import type { Command } from "commander";

/** Register the fetch subcommands on `program`. */
export function registerFetchCommands(program: Command): void {
  void program;
}
