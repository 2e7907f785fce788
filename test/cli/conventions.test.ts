/**
 * One output convention on every command (src/cli/output.ts): each command
 * that runs an action takes `--json`, `--quiet` and `--verbose`, the two
 * verbosity flags exclude each other (exit 2), and the flag reaches the shared
 * verbosity every action reads before it runs. The commander tree is walked,
 * so a command added later is checked without editing this file.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Command } from "commander";
import { buildProgram } from "../../src/cli/program.js";
import { UsageError, currentVerbosity, foldLines, progressStream, setVerbosity, type Verbosity } from "../../src/cli/output.js";
import { runCli } from "../support/cli.js";
import { leafCommands } from "../support/cli-tree.js";


/** The arguments a command needs to reach its action: its required arguments and mandatory options with a placeholder value. */
function minimalArgs(command: Command): string[] {
  const args = command.registeredArguments.filter((a) => a.required).map(() => "x");
  const options = command.options.filter((o) => o.mandatory).flatMap((o) => [o.long as string, o.argChoices?.[0] ?? "1"]);
  return [...args, ...options];
}

/**
 * Parse `args` for the command at `path` with its action replaced by a probe:
 * resolves to the verbosity the action saw, or rejects with what the parse threw.
 * Nothing of the real action runs, so nothing is read, written or started.
 */
async function verbositySeenBy(path: string[], args: string[]): Promise<Verbosity> {
  const program = buildProgram(path[0]);
  let target: Command = program;
  for (const name of path) target = target.commands.find((c) => c.name() === name) as Command;
  let seen: Verbosity | undefined;
  target.action(() => {
    seen = currentVerbosity();
  });
  const silence = (c: Command) => {
    c.configureOutput({ writeErr: () => undefined, writeOut: () => undefined });
    c.commands.forEach(silence);
  };
  silence(program);
  await program.parseAsync([...path, ...args], { from: "user" });
  if (seen === undefined) throw new Error(`${path.join(" ")}: the action did not run`);
  return seen;
}

const leaves = leafCommands();

describe("every command", () => {
  afterEach(() => setVerbosity("normal"));

  it("the walk finds every command group, nested ones included", () => {
    const names = leaves.map((l) => l.path.join(" "));
    for (const expected of ["fetch", "verify-final-receipt", "verify-manifest", "verify-provenance", "release run", "release demo", "release stage", "plugin call", "plugin build"]) {
      expect(names).toContain(expected);
    }
    expect(leaves.length).toBeGreaterThan(20);
  });

  it.each(leaves.map((l) => [l.path.join(" "), l] as const))("%s lists --json, --quiet and --verbose in its help", (_name, { command }) => {
    const help = command.helpInformation();
    for (const flag of ["--json", "--quiet", "--verbose"]) {
      expect(command.options.some((o) => o.long === flag), `${flag} is not an option`).toBe(true);
      expect(help).toContain(flag);
    }
  });

  it.each(leaves.map((l) => [l.path.join(" "), l] as const))("%s: --quiet and --verbose reach the action; both together are a usage error", async (_name, { path, command }) => {
    const args = minimalArgs(command);
    expect(await verbositySeenBy(path, args)).toBe("normal");
    expect(await verbositySeenBy(path, [...args, "--quiet"])).toBe("quiet");
    expect(await verbositySeenBy(path, [...args, "--verbose"])).toBe("verbose");
    const both = verbositySeenBy(path, [...args, "--quiet", "--verbose"]);
    await expect(both).rejects.toBeInstanceOf(UsageError);
    await expect(both).rejects.toThrow("--quiet and --verbose exclude each other");
  });
});

describe("registry credentials", () => {
  // The demo talks only to the registry it starts or is given on loopback, with REGISTRY_* for the latter.
  const talksToRegistry = leaves.filter((l) => l.command.options.some((o) => o.long === "--plain-http") && l.path.join(" ") !== "release demo");

  it.each(talksToRegistry.map((l) => [l.path.join(" "), l] as const))("%s finds them like fetch: --registry-config", (_name, { command }) => {
    expect(command.options.map((o) => o.long)).toContain("--registry-config");
  });

  it("the walk finds the registry commands", () => {
    expect(talksToRegistry.map((l) => l.path.join(" "))).toEqual(expect.arrayContaining(["fetch", "verify-provenance", "release stage", "release publish", "release attest", "release run"]));
  });
});

describe("usage errors follow the output convention (real CLI)", () => {
  const stageFlags = ["--tag", "t", "--manifest", "m", "--artifact-dir", "a", "--source-bundle", "b", "--payload-checksums", "p"];

  it("--quiet with --verbose: exit 2, one line on stderr, nothing on stdout of a text command", async () => {
    const r = await runCli(["verify-final-receipt", "--receipt", "release-receipt.json", "--quiet", "--verbose"]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toBe("hermes-plugin-kit: --quiet and --verbose exclude each other (see 'hermes-plugin-kit verify-final-receipt --help')\n");
  });

  it("--quiet/--verbose before the command's name are the command's; with no command they are dropped and the error is about the name", async () => {
    const both = await runCli(["--quiet", "--verbose", "verify-final-receipt", "--receipt", "release-receipt.json"]);
    expect([both.code, both.stdout, both.stderr]).toEqual([2, "", "hermes-plugin-kit: --quiet and --verbose exclude each other (see 'hermes-plugin-kit verify-final-receipt --help')\n"]);
    const mixed = await runCli(["--quiet", "fleet", "list", "--lock", "x.json", "--verbose"]);
    expect(mixed.stderr).toBe("hermes-plugin-kit: --quiet and --verbose exclude each other (see 'hermes-plugin-kit fleet list --help')\n");
    const unknown = await runCli(["--quiet", "bogus"]);
    expect([unknown.code, unknown.stderr]).toEqual([2, "hermes-plugin-kit: unknown command 'bogus' (see 'hermes-plugin-kit --help')\n"]);
    // Between a group and its subcommand too; alone, like no arguments at all: the short help, exit 2.
    const between = await runCli(["fleet", "--quiet", "list", "--lock", "x.json", "--verbose"]);
    expect(between.stderr).toBe("hermes-plugin-kit: --quiet and --verbose exclude each other (see 'hermes-plugin-kit fleet list --help')\n");
    const alone = await runCli(["--quiet"]);
    expect([alone.code, alone.stderr]).toEqual([2, (await runCli([])).stderr]);
    expect((await runCli(["--help"])).stdout.replace(/\s+/g, " ")).toContain("Every command also takes --quiet (only the result, warnings and errors) and --verbose (more detail on stderr), before or after its name");
    const group = await runCli(["--verbose", "fleet"]);
    expect(group.code).toBe(2);
    expect(group.stderr).toMatch(/^Usage: hermes-plugin-kit fleet <command> \[options\]\n/);
    // Only a leading run moves: after the name, an option's missing value is still named as such.
    const value = await runCli(["--quiet", "verify-final-receipt", "--receipt", "--quiet"]);
    expect(value.code).toBe(2);
    expect(value.stderr).toContain('--receipt needs a value, found the option "--quiet" in its place');
  });

  it("--json before the command's name (or between group and subcommand) is the command's; --version --json is one JSON object", async () => {
    const before = await runCli(["--json", "fleet", "list", "--lock", "no-such-lock.json"]);
    expect(before.code).toBe(1);
    expect(JSON.parse(before.stdout)).toMatchObject({ ok: false, code: "FLEET_LOCK_UNREADABLE" });
    const after = await runCli(["fleet", "list", "--lock", "no-such-lock.json", "--json"]);
    expect([before.code, before.stdout, before.stderr]).toEqual([after.code, after.stdout, after.stderr]);
    const between = await runCli(["fleet", "--json", "list", "--lock", "no-such-lock.json"]);
    expect([between.code, between.stdout]).toEqual([after.code, after.stdout]);
    for (const argv of [["--version", "--json"], ["--json", "--version"], ["-V", "--json"]]) {
      const version = await runCli(argv);
      expect([version.code, version.stderr]).toEqual([0, ""]);
      expect(JSON.parse(version.stdout)).toEqual({ ok: true, version: (await runCli(["--version"])).stdout.trim() });
    }
    // With no command to give it to, the error is about the name, answered as the one JSON object --json asks for;
    // alone, the JSON object says that no command was given (exit 2 both, nothing on stderr).
    const unknown = await runCli(["--json", "bogus"]);
    expect([unknown.code, unknown.stderr, JSON.parse(unknown.stdout)]).toEqual([2, "", { ok: false, code: "USAGE", message: "unknown command 'bogus'" }]);
    const alone = await runCli(["--json"]);
    expect([alone.code, alone.stderr]).toEqual([2, ""]);
    expect(JSON.parse(alone.stdout)).toMatchObject({ ok: false, code: "USAGE", message: expect.stringMatching(/^no command given: expected one of verify-manifest, /) });
  });

  it("a release step answers a usage error with its JSON object too; --json makes it the whole answer", async () => {
    const missing = await runCli(["release", "stage"]);
    expect(missing.code).toBe(2);
    expect(JSON.parse(missing.stdout)).toEqual({ ok: false, code: "USAGE", message: "required option '--tag <tag>' not specified" });
    expect(missing.stderr).toBe("hermes-plugin-kit: required option '--tag <tag>' not specified (see 'hermes-plugin-kit release stage --help')\n");
    const quiet = await runCli(["release", "stage", "--json"]);
    expect(quiet.code).toBe(2);
    expect(JSON.parse(quiet.stdout)).toMatchObject({ ok: false, code: "USAGE" });
    expect(quiet.stderr).toBe("");
    const both = await runCli(["release", "stage", ...stageFlags, "--quiet", "--verbose"]);
    expect(both.code).toBe(2);
    expect(JSON.parse(both.stdout)).toEqual({ ok: false, code: "USAGE", message: "--quiet and --verbose exclude each other" });
    expect(both.stderr).toBe("hermes-plugin-kit: --quiet and --verbose exclude each other (see 'hermes-plugin-kit release stage --help')\n");
    const bothJson = await runCli(["release", "stage", ...stageFlags, "--quiet", "--verbose", "--json"]);
    expect(bothJson.stdout.trim().split("\n")).toHaveLength(1);
    expect(bothJson.stderr).toBe("");
  });

  it("a text command: stdout stays empty without --json, and with --json holds only the JSON object", async () => {
    const text = await runCli(["fetch", "--reference", "r", "--output-dir", "o", "--bogus"]);
    expect(text.code).toBe(2);
    expect(text.stdout).toBe("");
    expect(text.stderr).toBe("hermes-plugin-kit: unknown option '--bogus' (see 'hermes-plugin-kit fetch --help')\n");
    const json = await runCli(["fetch", "--reference", "r", "--output-dir", "o", "--bogus", "--json"]);
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout)).toEqual({ ok: false, code: "USAGE", message: "unknown option '--bogus'" });
    expect(json.stderr).toBe("");
  });

  it("help asked for with --json is the one JSON object describing the command (ok: true, exit 0, nothing on stderr)", async () => {
    for (const argv of [["help", "--json"], ["--json", "--help"], ["--json", "help"], ["help", "help", "--json"]]) {
      const r = await runCli(argv);
      expect([r.code, r.stderr, r.stdout.split("\n").length], argv.join(" ")).toEqual([0, "", 2]);
      const help = JSON.parse(r.stdout) as { ok: boolean; command: string; commands: { name: string }[] };
      expect(help).toMatchObject({ ok: true, command: "hermes-plugin-kit", usage: "hermes-plugin-kit [options] [command]" });
      expect(help.commands.map((c) => c.name)).toEqual(["verify-manifest", "verify-final-receipt", "fetch", "resolve", "fleet", "verify-provenance", "release", "init", "plugin"]);
    }
    const fetch = await runCli(["fetch", "--help", "--json"]);
    expect([fetch.code, fetch.stderr]).toEqual([0, ""]);
    const described = JSON.parse(fetch.stdout) as { command: string; options: { flags: string; required: boolean; takes_value: boolean }[]; commands: unknown[] };
    expect(described).toMatchObject({ ok: true, command: "hermes-plugin-kit fetch", arguments: [], commands: [] });
    expect(described.options).toContainEqual({ flags: "--reference <ref>", description: expect.stringMatching(/^digest-pinned reference/), required: true, takes_value: true });
    expect(described.options).toContainEqual({ flags: "--json", description: expect.any(String), required: false, takes_value: false });
    // The same object from `help <command...> --json` and `-h`; a group lists its subcommands.
    const add = await runCli(["help", "fleet", "add", "--json"]);
    expect(add.stdout).toBe((await runCli(["fleet", "add", "-h", "--json"])).stdout);
    expect(JSON.parse(add.stdout)).toMatchObject({ ok: true, command: "hermes-plugin-kit fleet add" });
    const fleet = JSON.parse((await runCli(["fleet", "--json", "--help"])).stdout) as { commands: { name: string }[] };
    expect(fleet.commands.map((c) => c.name)).toEqual(["add", "verify", "list", "remove", "upgrade"]);
    // Help of a name that is no command stays a usage error, answered in JSON.
    for (const argv of [["help", "bogus", "--json"], ["fleet", "bogus", "--help", "--json"]]) {
      const bogus = await runCli(argv);
      expect([bogus.code, bogus.stderr, JSON.parse(bogus.stdout)]).toEqual([2, "", { ok: false, code: "USAGE", message: "unknown command 'bogus'" }]);
    }
  });

  it("every JSON answer carries ok: a release step's result (built in release/) gets ok: true as its first key", async () => {
    const r = await runCli(["release", "materialize", "--expected-sha", "a".repeat(40)], { env: { SEMANTIC_RELEASE_ENABLED: undefined } });
    expect([r.code, r.stdout]).toEqual([0, '{"ok":true,"released":false,"disarmed":true}\n']);
    const intent = await runCli(["release", "intent", "--dir", "/nonexistent", "--json"], { env: { SEMANTIC_RELEASE_ENABLED: undefined } });
    expect([intent.code, intent.stdout]).toEqual([0, '{"ok":true,"released":false,"disarmed":true}\n']);
  });

  it("help is not an error: exit 0, help on stdout, no JSON", async () => {
    const r = await runCli(["release", "stage", "--help"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Usage: hermes-plugin-kit release stage");
    expect(r.stdout).not.toContain('"ok"');
  });
});

describe("foldLines (an error line of a message with one problem per line)", () => {
  it("joins lines with '; ', or a space after ':' ';' ',' or an opening bracket; drops blank lines and the indentation", () => {
    expect(foldLines("a: one\nb: two\n  c: three")).toBe("a: one; b: two; c: three");
    expect(foldLines("problems:\n  first,\n  second (\n x)")).toBe("problems: first, second ( x)");
    expect(foldLines("\nonly\n\n")).toBe("only");
    expect(foldLines("one line")).toBe("one line");
    expect(foldLines("")).toBe("");
  });
});

describe("progressStream", () => {
  const tty = Object.getOwnPropertyDescriptor(process.stderr, "isTTY");
  const setTty = (value: boolean) => Object.defineProperty(process.stderr, "isTTY", { value, configurable: true, writable: true });
  afterEach(() => {
    setVerbosity("normal");
    if (tty === undefined) delete (process.stderr as { isTTY?: boolean }).isTTY;
    else Object.defineProperty(process.stderr, "isTTY", tty);
  });

  it("step lines: stderr unless --quiet, terminal or not", () => {
    for (const isTty of [true, false]) {
      setTty(isTty);
      setVerbosity("normal");
      expect(progressStream()).toBe(process.stderr);
      setVerbosity("verbose");
      expect(progressStream()).toBe(process.stderr);
      setVerbosity("quiet");
      expect(progressStream()).toBeNull();
    }
  });

  it("transfer bars: stderr on a terminal; on a pipe only with --verbose; never with --quiet", () => {
    setTty(true);
    expect(progressStream(true)).toBe(process.stderr);
    setVerbosity("quiet");
    expect(progressStream(true)).toBeNull();
    setTty(false);
    setVerbosity("normal");
    expect(progressStream(true)).toBeNull();
    setVerbosity("verbose");
    expect(progressStream(true)).toBe(process.stderr);
  });
});
