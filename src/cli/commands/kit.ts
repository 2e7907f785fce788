/** CLI wiring of the kit commands (logic lives outside src/cli). */
import type { Command } from "commander";

/** Register the kit subcommands on `program`. */
export function registerKitCommands(program: Command): void {
  void program;
}
