/**
 * Usage errors of the `hermes-plugin-kit` program (exit 2, src/cli/output.ts):
 * one line on stderr saying what is wrong plus where the help is, the way git
 * and gh answer (`hermes-plugin-kit: unknown option '--foo' (see 'hermes-plugin-kit fetch --help')`),
 * never the whole help text. An unknown option is reported before a missing
 * required one (commander checks required options first, so {@link firstUnknownOption}
 * looks ahead, then restores the command's state). A command group run without
 * a subcommand (the program itself with no arguments included) prints the
 * short help — its usage line and subcommand names — and exits 2.
 */
import type { Command } from "commander";
import { nearestName } from "../contract/near-name.js";
import { terminalSafe } from "./output.js";

/** `hermes-plugin-kit fleet add`: the command's full name as typed. */
export function commandPath(command: Command): string {
  const names: string[] = [];
  for (let c: Command | null = command; c !== null; c = c.parent) names.unshift(c.name());
  return names.join(" ");
}

/** Commander's error text (`error: ...`, possibly with a second `(Did you mean ...)` line) as one line plus the help pointer. */
export function usageLine(command: Command, text: string): string {
  const what = terminalSafe(text.replace(/^error: /, "").replace(/\s*\n\s*/g, " ").trim());
  return `hermes-plugin-kit: ${what} (see '${commandPath(command)} --help')\n`;
}

/**
 * The command `argv` names (subcommands followed by name or alias) and the
 * arguments left for it. Bounded by `argv.length`.
 */
export function commandOf(program: Command, argv: readonly string[]): { command: Command; rest: string[] } {
  let command = program;
  let i = 0;
  for (; i < argv.length && command.commands.length > 0; i += 1) {
    const arg = argv[i] as string;
    const next = command.commands.find((c) => c.name() === arg || c.aliases().includes(arg));
    if (next === undefined) break;
    command = next;
  }
  return { command, rest: argv.slice(i) };
}

/**
 * How a module registers a command group (`fleet`, `release`, `plugin`). With `subcommands: false`
 * only the group itself (name and description) is declared: the program's help and short help show
 * nothing more of it, so a run that prints only those builds none of the groups' subcommands
 * (src/cli/program.ts; the two helps are tested equal).
 */
export interface GroupRegistration {
  subcommands?: boolean;
}

/** The short help of a command group: its usage line, its subcommands' names and where the full help is. */
export function shortHelp(group: Command): string {
  const path = commandPath(group);
  const names = group.commands.map((c) => c.name()).filter((n) => n !== "help");
  return `Usage: ${path} <command> [options]\n\nCommands: ${names.join(", ")}\n\nRun '${path} --help' for what each does, '${path} <command> --help' for its options.\n`;
}

/**
 * The first option in `rest` that `leaf` does not declare; undefined when there is none or help
 * was asked for. Found by parsing `rest`'s options on `leaf` itself between commander's
 * `saveStateBeforeParse` and `restoreStateBeforeParse`, with its error output silenced, so the
 * real parse that follows starts from the state the program was built with.
 */
export function firstUnknownOption(leaf: Command, rest: readonly string[]): string | undefined {
  if (rest.includes("--help") || rest.includes("-h")) return undefined;
  const output = { ...leaf.configureOutput() };
  // The probe runs the options' argument parsers too: a value one refuses is left to the real parse
  // (which reports it once, as a usage error), so the probe says nothing and reports no unknown option.
  leaf.configureOutput({ outputError: () => undefined, writeErr: () => undefined });
  leaf.saveStateBeforeParse();
  let unknown: string[];
  try {
    ({ unknown } = leaf.parseOptions([...rest]));
  } catch {
    return undefined;
  } finally {
    leaf.restoreStateBeforeParse();
    leaf.configureOutput(output);
  }
  const first = unknown[0];
  return first !== undefined && first.startsWith("-") && first !== "-" && first !== "--" ? first.replace(/=.*$/, "") : undefined;
}

/** ` (did you mean --x?)` for the declared long flag closest to `flag` (edit distance <= 2), else "". */
export function suggestionFor(command: Command, flag: string): string {
  const near = nearestName(flag, command.options.flatMap((option) => (option.long === undefined ? [] : [option.long])));
  return near === undefined ? "" : ` (Did you mean ${near}?)`;
}

/** ` (Did you mean x?)` for the subcommand of `group` closest to `name` (edit distance <= 2), else "". */
export function commandSuggestionFor(group: Command, name: string): string {
  const near = nearestName(name, group.commands.flatMap((sub) => (sub.name() === "help" ? [] : [sub.name()])));
  return near === undefined ? "" : ` (Did you mean ${near}?)`;
}

/**
 * `help <command...>`: the command the names lead to, or the usage error line
 * for the first name that is no subcommand (`unknown command 'x' (see '<group> --help')`).
 */
export function helpTarget(program: Command, names: readonly string[]): { command: Command } | { error: string } {
  let command = program;
  for (const name of names) {
    const next = command.commands.find((c) => c.name() === name || c.aliases().includes(name));
    if (next === undefined) return { error: usageLine(command, `unknown command '${name}'${commandSuggestionFor(command, name)}`) };
    command = next;
  }
  return { command };
}

/** One option in {@link helpAnswer}: its flags as the help shows them, what it does, whether it must be given and whether it takes a value. */
export interface HelpOption {
  flags: string;
  description: string;
  required: boolean;
  takes_value: boolean;
}

/**
 * The `--json` answer of help you ask for (`--help --json`, `help [command...] --json`): the one JSON
 * object `{ok: true, command, usage, description, arguments, options, commands}` describing what the
 * text help describes — the command's full name, its usage line, its description, its positional
 * arguments (`{name, required, description}`), its options ({@link HelpOption}, `-h, --help` included)
 * and its subcommands (`{name, description}`; empty for a command that runs).
 */
export function helpAnswer(command: Command): {
  ok: true;
  command: string;
  usage: string;
  description: string;
  arguments: { name: string; required: boolean; description: string }[];
  options: HelpOption[];
  commands: { name: string; description: string }[];
} {
  const help = command.createHelp();
  return {
    ok: true,
    command: commandPath(command),
    usage: help.commandUsage(command),
    description: command.description(),
    arguments: help.visibleArguments(command).map((a) => ({ name: a.name(), required: a.required, description: a.description })),
    options: help.visibleOptions(command).map((o) => ({ flags: o.flags, description: help.optionDescription(o), required: o.mandatory, takes_value: o.required || o.optional })),
    commands: help
      .visibleCommands(command)
      .filter((c) => c.name() !== "help")
      .map((c) => ({ name: c.name(), description: c.description() })),
  };
}
