/** The commander tree of the CLI, walked for tests that check every command. */
import type { Command } from "commander";
import { buildProgram } from "../../src/cli/program.js";

/** Every command with an action, as its path of names (e.g. ["release", "run"]). */
export function leafCommands(): { path: string[]; command: Command }[] {
  const leaves: { path: string[]; command: Command }[] = [];
  const walk = (cmd: Command, path: string[]) => {
    for (const sub of cmd.commands) {
      if (sub.commands.length > 0) walk(sub, [...path, sub.name()]);
      else leaves.push({ path: [...path, sub.name()], command: sub });
    }
  };
  walk(buildProgram(), []);
  return leaves;
}
