/**
 * The `hermes-plugin-kit` commander program. Wiring only: every command's
 * logic lives in `src/fetch`, `src/kit`, `src/contract`, `src/oci` or `release/`.
 *
 * Actions set `process.exitCode` through `runAction` (see `output.ts` for the
 * exit-code table).
 *
 * Start-up rule: every command and flag is declared here at start-up, so
 * `--help` is complete, but a command module imports only commander types and
 * `../output.js` at its top; everything its action uses (area modules and heavy
 * libraries: Octokit, semantic-release, esbuild, the MCP SDK, Sigstore, tar,
 * zod) is loaded inside the action with `await import(...)`.
 * test/cli/module-graph.test.ts enforces it; `npm run bench:cli` times it.
 */
import { Command, CommanderError } from "commander";
import { registerContractCommands } from "./commands/contract.js";
import { registerFetchCommands } from "./commands/fetch.js";
import { registerFleetCommands } from "./commands/fleet.js";
import { registerKitCommands } from "./commands/kit.js";
import { registerProvenanceCommands } from "./commands/provenance.js";
import { registerReleaseCommands } from "./commands/release.js";
import { EXIT_FAILURE, EXIT_USAGE, UsageError, boundedLine, helpPointer, printJson, setCommandPath, setJsonRequested, setVerbosity, stdoutIsTerminal, stdoutWriteFailed, terminalSafe, writeStdout } from "./output.js";
import { setRunAnswer, settleRun, watchRunInterrupts } from "./interrupt.js";
import { commandOf, commandPath, commandSuggestionFor, firstUnknownOption, helpAnswer, helpTarget, shortHelp, suggestionFor, usageLine, type GroupRegistration } from "./usage.js";
import { packageVersion } from "./version.js";

/**
 * The top-level commands each module registers. A run whose first argument
 * names one of them registers only that module (every other invocation, help
 * included, registers all). test/cli/module-graph.test.ts checks the table
 * against what the modules register.
 */
export const COMMAND_GROUPS: readonly { names: readonly string[]; register: (program: Command, options?: GroupRegistration) => void }[] = [
  { names: ["verify-manifest", "verify-final-receipt"], register: registerContractCommands },
  { names: ["fetch", "resolve"], register: registerFetchCommands },
  { names: ["fleet"], register: registerFleetCommands },
  { names: ["verify-provenance"], register: registerProvenanceCommands },
  { names: ["release"], register: registerReleaseCommands },
  { names: ["init", "plugin"], register: registerKitCommands },
];

/**
 * Build the program. With `command` (the first argument of a run) naming a
 * command of {@link COMMAND_GROUPS}, only its module registers; otherwise every subcommand.
 * `options.groupSubcommands: false` declares the command groups without their
 * subcommands: enough for the program's help and short help, which show only top-level commands.
 */
export function buildProgram(command?: string, options: { groupSubcommands?: boolean } = {}): Command {
  const program = new Command();
  // Help goes out through writeStdout (no stream set up for it); the width and colours of a terminal
  // are commander's own, and elsewhere commander's defaults for a pipe or file (80 columns, no colour).
  const defaults = { ...program.configureOutput() };
  program.configureOutput({
    writeOut: writeStdout,
    getOutHelpWidth: () => (stdoutIsTerminal() ? defaults.getOutHelpWidth?.() : undefined) ?? 80,
    getOutHasColors: () => (stdoutIsTerminal() ? defaults.getOutHasColors?.() === true : false),
  });
  program
    .name("hermes-plugin-kit")
    .description("Verified fetch, gated private releases and TypeScript plugin authoring for Hermes plugins.\n\nEvery command also takes --quiet (only the result, warnings and errors) and --verbose (more detail on stderr), before or after its name; --json (one JSON object on stdout, with \"ok\": true or false) where a command lists it, also before its name; --help --json describes a command as JSON.")
    .version(packageVersion(), "-V, --version")
    .enablePositionalOptions()
    .exitOverride();
  // Fail fast on empty option values (`--output-dir ""` would otherwise mean the current directory).
  program.hook("preAction", (_program, action) => {
    usageFailure = action;
    setCommandPath(commandPath(action));
    const opts = action.opts();
    for (const [name, value] of Object.entries(opts)) {
      if (value === "") throw new UsageError(`--${name.replace(/[A-Z]/g, (c) => "-" + c.toLowerCase())} must not be empty`);
    }
    if (opts["quiet"] === true && opts["verbose"] === true) throw new UsageError("--quiet and --verbose exclude each other");
    setVerbosity(opts["quiet"] === true ? "quiet" : opts["verbose"] === true ? "verbose" : "normal");
    setJsonRequested(opts["json"] === true);
    // From here on a signal no command handles interrupts this command (src/cli/interrupt.ts).
    setRunAnswer({ what: commandPath(action).replace(/^hermes-plugin-kit ?/, ""), ...jsonAnswer(action), started: true });
  });
  const group = COMMAND_GROUPS.find((g) => command !== undefined && g.names.includes(command));
  for (const g of group === undefined ? COMMAND_GROUPS : [group]) g.register(program, { subcommands: options.groupSubcommands !== false });
  // Every leaf gets --quiet/--verbose; a group declared without subcommands is no leaf (and no leaf
  // runs in a help-only run, where the top-level leaves show `[options]` for their own options).
  if (options.groupSubcommands !== false) addVerbosityOptions(program);
  refuseRepeatedValues(program);
  refuseOptionsAsValues(program);
  answerUsageErrorsInJson(program);
  oneLineUsageErrors(program);
  return program;
}

/**
 * A single-value option given twice with different values (`--repository a --repository b`) is a usage
 * error (exit 2) instead of commander's silent "the last one wins": a pin must not be dropped without a
 * word. Options that are meant to repeat (variadic `<x...>`, or with a collector such as `--expect-gate`)
 * are left alone; the same value twice is no conflict.
 */
function refuseRepeatedValues(command: Command): void {
  for (const sub of command.commands) refuseRepeatedValues(sub);
  for (const option of command.options) {
    if (!(option.required || option.optional) || option.variadic || option.parseArg !== undefined) continue;
    const attribute = option.attributeName();
    // Before commander's own listener sets the value: a source of "cli" means an earlier occurrence in this parse.
    (command as unknown as NodeJS.EventEmitter).prependListener(`option:${option.name()}`, (value: unknown) => {
      if (command.getOptionValueSource(attribute) !== "cli") return;
      const previous: unknown = command.getOptionValue(attribute);
      if (previous === value) return;
      usageFailure = command;
      setCommandPath(commandPath(command));
      throw new UsageError(`${option.long ?? option.flags} was given twice (${JSON.stringify(previous)}, then ${JSON.stringify(value)}); it takes one value: pass it once`);
    });
  }
}

/**
 * A value that is one of the command's own options (`fleet add --lock --json`, `fetch --reference
 * --output-dir x`) is a usage error (exit 2): commander hands the next word to an option that takes a
 * value, so a forgotten value silently became a file named `--json`, or the next flag went missing.
 * A path that really starts with `--` can be written `./--json`.
 */
function refuseOptionsAsValues(command: Command): void {
  for (const sub of command.commands) refuseOptionsAsValues(sub);
  const flags = new Set<string>(["-h", "--help"]);
  for (let at: Command | null = command; at !== null; at = at.parent) {
    for (const option of at.options) for (const flag of [option.long, option.short]) if (flag !== undefined) flags.add(flag);
  }
  for (const option of command.options) {
    if (!(option.required || option.optional)) continue;
    (command as unknown as NodeJS.EventEmitter).prependListener(`option:${option.name()}`, (value: unknown) => {
      if (typeof value !== "string" || !flags.has(value.split("=")[0] ?? "")) return;
      usageFailure = command;
      setCommandPath(commandPath(command));
      throw new UsageError(`${option.long ?? option.flags} needs a value, found the option ${JSON.stringify(value)} in its place; give ${option.long ?? option.flags} its value (a path that starts with "--" can be written ./${value})`);
    });
  }
}

/** The command whose arguments a usage error is about (set by the leaf that failed to parse, or by the pre-action checks). */
let usageFailure: Command | undefined;

/**
 * How `command` answers (src/cli/output.ts): every `release` step but `demo`
 * always prints one JSON object on stdout, failures included; any command
 * given `--json` does, and then that object is its whole answer (`only`).
 */
function jsonAnswer(command: Command): { json: boolean; only: boolean } {
  const only = command.opts()["json"] === true;
  return { json: only || (command.parent?.name() === "release" && command.name() !== "demo"), only };
}

/**
 * Usage errors commander detects itself (a missing required option, an unknown
 * flag, a bad argument) follow the same convention as the actions' errors:
 * with `--json` given, commander's message and help stay off stderr, and
 * {@link runCli} prints the JSON object.
 */
function answerUsageErrorsInJson(command: Command): void {
  for (const sub of command.commands) {
    if (sub.commands.length > 0) {
      answerUsageErrorsInJson(sub);
      continue;
    }
    sub.configureOutput({
      writeErr: (text) => {
        if (!jsonAnswer(sub).only) process.stderr.write(text);
      },
    });
    sub.exitOverride((error) => {
      usageFailure = sub;
      throw error;
    });
  }
}

/** Every command reports a usage error in one line plus where its help is (src/cli/usage.ts), never the whole help. */
function oneLineUsageErrors(command: Command): void {
  command.configureOutput({ outputError: (text, write) => write(usageLine(command, text)) });
  for (const sub of command.commands) oneLineUsageErrors(sub);
}

/** Give every command that runs an action `--quiet` and `--verbose` (a command may declare its own `--verbose` first). */
function addVerbosityOptions(command: Command): void {
  for (const sub of command.commands) {
    if (sub.commands.length > 0) {
      addVerbosityOptions(sub);
      continue;
    }
    const has = (flag: string) => sub.options.some((o) => o.long === flag);
    if (!has("--quiet")) sub.option("--quiet", "print only the result, warnings and errors (no progress or notes on stderr)");
    if (!has("--verbose")) sub.option("--verbose", "print more detail on stderr (progress when not a terminal, stack traces of internal errors)");
  }
}

/**
 * Look ahead for an option the command `probe` does not declare; when there
 * is one, answer it as a usage error (one line, and the JSON object when the
 * command answers in JSON) and return true.
 */
function reportUnknownOption(probe: Command, rest: readonly string[]): boolean {
  const unknown = firstUnknownOption(probe, rest);
  if (unknown === undefined) return false;
  // `--json=yes`: a declared flag that takes no value, given one (not an unknown option "did you mean" itself).
  const declared = probe.options.find((o) => o.long === unknown);
  const given = rest.find((a) => a.startsWith(`${unknown}=`));
  const message = declared !== undefined && given !== undefined ? `option '${unknown}' takes no value, found '${given}'` : `unknown option '${unknown}'${suggestionFor(probe, unknown)}`;
  const answer = jsonAnswer(probe);
  if (rest.includes("--json")) answer.only = answer.json = true;
  if (!answer.only) process.stderr.write(usageLine(probe, message));
  if (answer.json) printJson({ ok: false, code: "USAGE", message });
  return true;
}

/**
 * Run the CLI with `argv` (without node and script); resolves to the exit code: the command's, or 1
 * when its answer could not be written to stdout (src/cli/output.ts `writeStdout`).
 */
export async function runCli(argv: string[]): Promise<number> {
  // First, before any command is set up: a signal from now on gets an answer (src/cli/interrupt.ts).
  watchRunInterrupts(runAnswerOf(argv));
  const code = await answeredCode(argv);
  settleRun(code);
  return code;
}

/**
 * How an interruption before the program knows its command is answered, from the command line alone:
 * JSON with `--json` anywhere, or for a release step other than `demo` (as {@link jsonAnswer} decides
 * once the command is parsed).
 */
function runAnswerOf(argv: readonly string[]): { what: string; json: boolean; only: boolean; started: false } {
  const words = argv.filter((a) => !LEADING_FLAGS.has(a));
  const only = argv.includes("--json");
  const step = words[0] === "release" ? words[1] : undefined;
  const releaseStep = step !== undefined && !step.startsWith("-") && step !== "demo" && step !== "help";
  const what = words[0] !== undefined && !words[0].startsWith("-") ? words.slice(0, words[0] === "release" || words[0] === "fleet" || words[0] === "plugin" ? 2 : 1).filter((w) => !w.startsWith("-")).join(" ") : "";
  return { what, json: only || releaseStep, only, started: false };
}

/** {@link runCli} without the interrupt watch. */
async function answeredCode(argv: string[]): Promise<number> {
  const code = await runCommand(argv);
  if (code !== 0 || !stdoutWriteFailed()) return code;
  // Exit 1 all the same (the answer did not reach its reader), but what the command did is done: say so,
  // so that nobody takes an installed directory or an edited lock for untouched (help changes nothing).
  const help = argv[0] === "help" || argv.includes("--help") || argv.includes("-h");
  if (!help) process.stderr.write("hermes-plugin-kit: the command itself succeeded: anything it installed, wrote or changed is in place; only its answer on stdout was lost (rerun it with stdout going elsewhere to see it)\n");
  return EXIT_FAILURE;
}

/** The names of `group`'s subcommands, as its short help lists them. */
function subcommandNames(group: Command): string {
  return group.commands
    .map((c) => c.name())
    .filter((n) => n !== "help")
    .join(", ");
}

/** `unknown command 'x' (Did you mean y?)` for the first of `names` that is no command ({@link helpTarget}'s words, without its line). */
function unknownCommandMessage(program: Command, names: readonly string[]): string {
  let at = program;
  for (const name of names) {
    const next = at.commands.find((c) => c.name() === name || c.aliases().includes(name));
    if (next === undefined) return `unknown command '${name}'${commandSuggestionFor(at, name)}`;
    at = next;
  }
  return "unknown command";
}

/**
 * Help asked for with `--json` anywhere (`--help --json`, `-h --json`, `help [command...] --json`): print the
 * named command's help as one JSON object (src/cli/usage.ts `helpAnswer`) and return true. False when
 * `argv` asks for no help, or names no command (`help bogus`, `fleet bogus --help`): the usage error
 * that follows is answered in JSON as any other.
 */
function jsonHelp(program: Command, argv: readonly string[]): boolean {
  const words = argv.filter((a) => !a.startsWith("-"));
  if (argv[0] === "help") {
    const names = words.slice(1);
    const target = names.length === 1 && names[0] === "help" ? { command: program } : helpTarget(program, names);
    if ("error" in target) return false;
    printJson(helpAnswer(target.command));
    return true;
  }
  if (!argv.includes("--help") && !argv.includes("-h")) return false;
  const { command, rest } = commandOf(program, words);
  if (command.commands.length > 0 && rest.length > 0) return false;
  printJson(helpAnswer(command));
  return true;
}

/** The flags every command takes that may also come before the command's name (`--quiet fetch ...`). */
const LEADING_FLAGS: ReadonlySet<string> = new Set(["--quiet", "--verbose", "--json"]);

/** {@link runCli} without the stdout check. */
async function runCommand(given: string[]): Promise<number> {
  // `--quiet`/`--verbose`/`--json` before the command's name are taken as given after it (ORAS, skopeo and gh take
  // their global flags on either side); only a run of them at the very start, so no option's value moves.
  // `--version --json` (either order): the version as the one JSON object of every --json answer.
  if (given.length === 2 && given.includes("--json") && (given.includes("--version") || given.includes("-V"))) {
    printJson({ ok: true, version: packageVersion() });
    return 0;
  }
  let lead = 0;
  while (lead < given.length && LEADING_FLAGS.has(given[lead]!)) lead += 1;
  const leading = given.slice(0, lead);
  const argv = given.slice(lead);
  // Nothing, `--help` or `-h` alone prints the program's short or full help: top-level commands only.
  const programHelpOnly = argv.length === 0 || (argv.length === 1 && (argv[0] === "--help" || argv[0] === "-h"));
  const program = buildProgram(argv[0], { groupSubcommands: !programHelpOnly });
  usageFailure = undefined;
  process.exitCode = 0;
  // Help asked for with --json (`--help --json`, `help [command...] --json`): the help as the one JSON object.
  if (given.includes("--json") && jsonHelp(program, argv)) return 0;
  // `help <command...>`: the named command's full help on stdout (exit 0), or, for a name that is no
  // command, one usage line (exit 2), never the whole help (commander printed the program's help on stderr).
  if (argv[0] === "help" && argv.length > 1) {
    const names = argv.slice(1).filter((a) => !a.startsWith("-"));
    // `help help` is the program's help, which lists `help [command]`.
    if (names.length === 1 && names[0] === "help") {
      program.outputHelp();
      return 0;
    }
    const target = helpTarget(program, names);
    if ("error" in target) {
      if (given.includes("--json")) printJson({ ok: false, code: "USAGE", message: unknownCommandMessage(program, names) });
      else process.stderr.write(target.error);
      return EXIT_USAGE;
    }
    target.command.outputHelp();
    return 0;
  }
  // Between a group's name and its subcommand's (`fleet --quiet list`) they are taken the same way.
  let node = program.commands.find((c) => c.name() === argv[0] || c.aliases().includes(argv[0] ?? ""));
  for (let k = 1; node !== undefined && node.commands.length > 0 && k < argv.length; ) {
    if (LEADING_FLAGS.has(argv[k]!)) {
      leading.push(...argv.splice(k, 1));
      continue;
    }
    node = node.commands.find((c) => c.name() === argv[k] || c.aliases().includes(argv[k]!));
    k += 1;
  }
  const found = commandOf(program, argv);
  const { command } = found;
  // Without a command to give them to (an unknown name, `--help`), they are dropped: the error is about the name.
  const rest = command === program ? found.rest : [...leading, ...found.rest];
  if (command !== program) argv.splice(argv.length - found.rest.length, 0, ...leading);
  // `--json` anywhere on the command line asks for the JSON answer, also when no command takes it (README "Exit codes").
  const jsonAsked = leading.includes("--json") || found.rest.includes("--json");
  // The release group's answer is JSON whatever was asked, as each of its steps' (workflows parse it): a missing
  // or unknown step gets the JSON object on stdout besides the usual line or short help on stderr.
  const jsonAnswered = jsonAsked || command.name() === "release";
  // No command (a group, or the program itself, without a subcommand): the short help, exit 2.
  if (command.commands.length > 0 && found.rest.length === 0) {
    if (jsonAnswered) printJson({ ok: false, code: "USAGE", message: `no command given: expected one of ${subcommandNames(command)} after '${commandPath(command)}' (see '${commandPath(command)} --help')` });
    if (!jsonAsked) process.stderr.write(shortHelp(command));
    return EXIT_USAGE;
  }
  // A name that is no command of the program or group (`bogus`, `fleet bogus`): one usage line, or with --json only
  // the JSON object (commander would print the line whatever was asked, and read a group's --json as its own option).
  const name = found.rest[0];
  if (command.commands.length > 0 && name !== undefined && !name.startsWith("-") && name !== "help") {
    const message = `unknown command '${name}'${commandSuggestionFor(command, name)}`;
    if (jsonAnswered) printJson({ ok: false, code: "USAGE", message });
    if (!jsonAsked) process.stderr.write(usageLine(command, message));
    return EXIT_USAGE;
  }
  // An unknown option is reported before commander's check of required options.
  if (command.commands.length === 0 && reportUnknownOption(command, rest)) return EXIT_USAGE;
  try {
    await program.parseAsync(argv, { from: "user" });
  } catch (error) {
    const answer = usageFailure === undefined ? { json: false, only: false } : jsonAnswer(usageFailure);
    // A usage error raised while the options are read (a value given twice, an option as a value) comes
    // before a later --json is parsed: the command line's own --json asks for the JSON answer all the same.
    const failed = usageFailure as Command | undefined; // set by the parse's listeners, which TypeScript does not see
    if (failed !== undefined && rest.includes("--json") && failed.options.some((o) => o.long === "--json")) answer.only = answer.json = true;
    if (error instanceof UsageError) {
      if (!answer.only) process.stderr.write(`hermes-plugin-kit: ${terminalSafe(boundedLine(error.message))}${helpPointer()}\n`);
      if (answer.json) printJson({ ok: false, code: error.code, message: error.message });
      return EXIT_USAGE;
    }
    if (error instanceof CommanderError) {
      if (["commander.helpDisplayed", "commander.version"].includes(error.code)) return 0;
      // `help` asked for is 0; commander's own help-instead-of-a-command (exitCode 1) is a usage error.
      if (error.code === "commander.help") return error.exitCode === 0 ? 0 : EXIT_USAGE;
      if (answer.json) printJson({ ok: false, code: "USAGE", message: error.message.replace(/^error: /, "") });
      return EXIT_USAGE;
    }
    throw error;
  }
  return typeof process.exitCode === "number" ? process.exitCode : 0;
}
