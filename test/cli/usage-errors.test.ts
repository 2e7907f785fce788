/**
 * Usage errors through the built CLI (src/cli/usage.ts, README "Exit codes"):
 * exit 2, one line on stderr saying what is wrong plus where the help is, never
 * the whole help; an unknown option is reported before a missing required one;
 * no command (the program or a group without a subcommand) prints the short
 * help on stderr and exits 2, as git does; asking for help exits 0.
 */
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { Command, InvalidArgumentError } from "commander";
import { collect } from "../../src/cli/consumer-policy.js";
import { firstUnknownOption } from "../../src/cli/usage.js";
import { runCli } from "../support/cli.js";
import { leafCommands } from "../support/cli-tree.js";

/** One line: `hermes-plugin-kit: <what> (see '<command> --help')`. */
function expectOneLine(stderr: string, what: string, command: string): void {
  expect(stderr).toBe(`hermes-plugin-kit: ${what} (see '${command} --help')\n`);
}

describe("no command", () => {
  it("no arguments: the short help on stderr, nothing on stdout, exit 2", async () => {
    const r = await runCli([]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(/^Usage: hermes-plugin-kit <command> \[options\]\n\nCommands: verify-manifest, verify-final-receipt, fetch, resolve, fleet, verify-provenance, release, init, plugin\n/);
    expect(r.stderr).toContain("Run 'hermes-plugin-kit --help'");
    expect(r.stderr).not.toContain("Download a digest-pinned");
  });

  it.each([["fleet"], ["release"], ["plugin"]])("the group %s without a subcommand: short help, exit 2 (it exited 0)", async (group) => {
    const r = await runCli([group]);
    expect(r.code).toBe(2);
    // The release group answers in JSON whatever was asked, as its steps do (a workflow parses it).
    if (group === "release") {
      expect(r.stdout.split("\n")).toHaveLength(2);
      expect(JSON.parse(r.stdout)).toEqual({ ok: false, code: "USAGE", message: expect.stringMatching(/^no command given: expected one of attach-trigger, .* after 'hermes-plugin-kit release' \(see 'hermes-plugin-kit release --help'\)$/) });
    } else expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(new RegExp(`^Usage: hermes-plugin-kit ${group} <command> \\[options\\]\\n\\nCommands: `));
  });

  it("an unknown release step answers as every release step does: one JSON object on stdout and the usage line on stderr, exit 2; with --json only the object", async () => {
    for (const args of [["release", "bogus"], ["release", "--quiet", "bogus"], ["--verbose", "release", "stag"]]) {
      const r = await runCli(args);
      const message = args.includes("stag") ? "unknown command 'stag' (Did you mean stage?)" : "unknown command 'bogus'";
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.stdout.split("\n"), args.join(" ")).toHaveLength(2);
      expect(JSON.parse(r.stdout), args.join(" ")).toEqual({ ok: false, code: "USAGE", message });
      expectOneLine(r.stderr, message, "hermes-plugin-kit release");
    }
    const json = await runCli(["release", "bogus", "--json"]);
    expect([json.code, json.stderr]).toEqual([2, ""]);
    expect(JSON.parse(json.stdout)).toEqual({ ok: false, code: "USAGE", message: "unknown command 'bogus'" });
    // Other groups keep their text answer without --json.
    const fleet = await runCli(["fleet", "bogus"]);
    expect([fleet.code, fleet.stdout]).toEqual([2, ""]);
  });

  it("asking for help is not an error: --help, help, help <command> exit 0 with the full help on stdout", async () => {
    for (const args of [["--help"], ["help"], ["help", "fetch"], ["fleet", "--help"]]) {
      const r = await runCli(args);
      expect(r.code, args.join(" ")).toBe(0);
      expect(r.stdout).toContain("Usage: hermes-plugin-kit");
    }
  });
});

describe("a single-value option given twice", () => {
  it("with different values is a usage error naming both (exit 2), before anything runs; --json answers in JSON", async () => {
    const r = await runCli(["verify-final-receipt", "--receipt", "a.json", "--repository", "ghcr.io/acme/a", "--repository", "ghcr.io/acme/b"]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr.trim().split("\n")).toEqual([`hermes-plugin-kit: --repository was given twice ("ghcr.io/acme/a", then "ghcr.io/acme/b"); it takes one value: pass it once (see 'hermes-plugin-kit verify-final-receipt --help')`]);
    const json = await runCli(["fetch", "--json", "--reference", "r@sha256:" + "a".repeat(64), "--output-dir", "o1", "--output-dir", "o2"]);
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, code: "USAGE", message: expect.stringContaining("--output-dir was given twice") });
  });

  it("every leaf's single-value options refuse a second, different value; repeatable options and the same value twice are accepted", async () => {
    let checked = 0;
    for (const leaf of leafCommands()) {
      for (const option of leaf.command.options) {
        if (!(option.required || option.optional) || option.variadic || option.parseArg !== undefined) continue;
        leaf.command.saveStateBeforeParse();
        try {
          expect(() => leaf.command.parseOptions([option.long!, "x1", option.long!, "x2"]), `${leaf.path} ${option.long}`).toThrow(/was given twice/);
          leaf.command.restoreStateBeforeParse();
          expect(() => leaf.command.parseOptions([option.long!, "x1", option.long!, "x1"]), `${leaf.path} ${option.long}`).not.toThrow();
        } finally {
          leaf.command.restoreStateBeforeParse();
        }
        checked += 1;
      }
    }
    expect(checked).toBeGreaterThan(50);
    const gates = await runCli(["verify-final-receipt", "--receipt", "missing.json", "--repository", "ghcr.io/acme/a", "--expect-gate", "unit=npm test", "--expect-gate", "build_metadata=npm run check"]);
    expect(gates.code).toBe(1);
    expect(gates.stderr).not.toContain("given twice");
  });
});

describe("--json after the option a usage error is about", () => {
  it.each([
    [["verify-final-receipt", "--receipt", "r.json", "--repository", "a/b", "--repository", "c/d", "--json"], "--repository was given twice"],
    [["fetch", "--reference", "--output-dir", "x", "--json"], "--reference needs a value"],
    [["fleet", "add", "--lock", "l.json", "--lock", "m.json", "--receipt", "r", "--repository", "a/b", "--json"], "--lock was given twice"],
  ])("%j: the answer is the one JSON object on stdout, nothing on stderr (exit 2)", async (args, message) => {
    const r = await runCli(args);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe("");
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, code: "USAGE", message: expect.stringContaining(message) });
  });
});

describe("init with an empty directory argument", () => {
  it("is a usage error (exit 2) naming init . for the current directory; nothing is written", async () => {
    const dir = await mkdtemp(join(tmpdir(), "hpk-init-empty-"));
    try {
      const r = await runCli(["init", ""], { cwd: dir });
      expect(r.code).toBe(2);
      expect(r.stderr).toBe("hermes-plugin-kit: init needs a project directory, found an empty argument; pass the directory to create (init . for the current one) (see 'hermes-plugin-kit init --help')\n");
      expect(await readdir(dir)).toEqual([]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("--expect-gate pinning one gate twice", () => {
  it("to two commands is a usage error naming both (exit 2); the same command twice is accepted", async () => {
    const r = await runCli(["verify-final-receipt", "--receipt", "missing.json", "--repository", "ghcr.io/acme/a", "--expect-gate", "unit=npm test", "--expect-gate", "unit=true"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`hermes-plugin-kit: --expect-gate pins unit twice ("npm test", then "true"); a gate ran one command: pin it once (see 'hermes-plugin-kit verify-final-receipt --help')\n`);
    const same = await runCli(["verify-final-receipt", "--receipt", "missing.json", "--repository", "ghcr.io/acme/a", "--expect-gate", "unit=npm test", "--expect-gate", "unit=npm test"]);
    expect(same.code).toBe(1);
    expect(same.stderr).toContain("[RELEASE_JSON_UNREADABLE]");
  });
});

describe("an option given another option as its value", () => {
  it("fleet add --lock --json and fetch --reference --output-dir are usage errors (exit 2) naming both; nothing is written", async () => {
    const dir = await mkdtemp(join(tmpdir(), "hpk-option-value-"));
    try {
      const lock = await runCli(["fleet", "add", "--lock", "--json", "--receipt", "r.json", "--repository", "ghcr.io/acme/a"], { cwd: dir });
      expect(lock.code).toBe(2);
      // The --json on the command line (here taken as --lock's value) still asks for the JSON answer.
      expect(lock.stderr).toBe("");
      expect(JSON.parse(lock.stdout)).toEqual({ ok: false, code: "USAGE", message: `--lock needs a value, found the option "--json" in its place; give --lock its value (a path that starts with "--" can be written ./--json)` });
      const reference = await runCli(["fetch", "--reference", "--output-dir", "q3"], { cwd: dir });
      expect(reference.code).toBe(2);
      expect(reference.stderr).toContain(`--reference needs a value, found the option "--output-dir" in its place`);
      expect(await readdir(dir)).toEqual([]);
      // A value that is no option of the command is taken as given, ./--json included.
      const path = await runCli(["fetch", "--reference", "r", "--output-dir", "./--json"], { cwd: dir });
      expect(path.stderr).toContain("[REFERENCE_NOT_PINNED]");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("every leaf's value-taking options refuse each of the leaf's own flags as a value", () => {
    let checked = 0;
    for (const leaf of leafCommands()) {
      const own = leaf.command.options.map((o) => o.long).filter((f): f is string => f !== undefined);
      for (const option of leaf.command.options) {
        if (!(option.required || option.optional)) continue;
        for (const flag of [...own, "--help"]) {
          leaf.command.saveStateBeforeParse();
          try {
            expect(() => leaf.command.parseOptions([option.long!, flag]), `${leaf.path} ${option.long} ${flag}`).toThrow(/needs a value, found the option/);
          } finally {
            leaf.command.restoreStateBeforeParse();
          }
          checked += 1;
        }
      }
    }
    expect(checked).toBeGreaterThan(200);
  });
});

describe("one line per usage error", () => {
  it("an unknown option is reported first, before the missing required ones", async () => {
    const r = await runCli(["fetch", "--foo"]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expectOneLine(r.stderr, "unknown option '--foo'", "hermes-plugin-kit fetch");
  });

  it("a near miss gets a suggestion; --opt=value forms are named by the flag", async () => {
    const r = await runCli(["fetch", "--reference", "r", "--outptu-dir=o"]);
    expect(r.code).toBe(2);
    expectOneLine(r.stderr, "unknown option '--outptu-dir' (Did you mean --output-dir?)", "hermes-plugin-kit fetch");
  });

  it("a missing required option, an unknown command and too many arguments: one line each, no help text", async () => {
    const missing = await runCli(["fetch", "--reference", "r"]);
    expect(missing.code).toBe(2);
    expectOneLine(missing.stderr, "required option '--output-dir <dir>' not specified", "hermes-plugin-kit fetch");
    const command = await runCli(["fetc"]);
    expect(command.code).toBe(2);
    expectOneLine(command.stderr, "unknown command 'fetc' (Did you mean fetch?)", "hermes-plugin-kit");
    const extra = await runCli(["init", "a", "b"]);
    expect(extra.code).toBe(2);
    expect(extra.stderr.split("\n")).toHaveLength(2);
    expect(extra.stderr).toMatch(/^hermes-plugin-kit: too many arguments for 'init'.* \(see 'hermes-plugin-kit init --help'\)\n$/);
  });

  it("help <unknown command>: one line naming it, exit 2, never the whole help (it printed the program's help on stderr)", async () => {
    const top = await runCli(["help", "nonexist"]);
    expect(top.code).toBe(2);
    expect(top.stdout).toBe("");
    expectOneLine(top.stderr, "unknown command 'nonexist'", "hermes-plugin-kit");
    const near = await runCli(["help", "fetc"]);
    expect(near.code).toBe(2);
    expectOneLine(near.stderr, "unknown command 'fetc' (Did you mean fetch?)", "hermes-plugin-kit");
    const nested = await runCli(["help", "fleet", "nonexist"]);
    expect(nested.code).toBe(2);
    expectOneLine(nested.stderr, "unknown command 'nonexist'", "hermes-plugin-kit fleet");
  });

  it("with --json, an unknown command (before or after it, also in a group) answers only one JSON object on stdout, exit 2; without, one line on stderr", async () => {
    const cases: [string[], string][] = [
      [["--json", "bogus"], "unknown command 'bogus'"],
      [["bogus", "--json"], "unknown command 'bogus'"],
      [["--json", "fetc"], "unknown command 'fetc' (Did you mean fetch?)"],
      // A group's --json is no option of the group: the error is the unknown subcommand (it was "unknown option '--json'").
      [["--json", "fleet", "bogus"], "unknown command 'bogus'"],
      [["fleet", "--json", "bogus"], "unknown command 'bogus'"],
      [["fleet", "bogus", "--json"], "unknown command 'bogus'"],
      [["--json", "help", "bogus"], "unknown command 'bogus'"],
    ];
    for (const [args, message] of cases) {
      const r = await runCli(args);
      expect([r.code, r.stderr], args.join(" ")).toEqual([2, ""]);
      expect(r.stdout.split("\n"), args.join(" ")).toHaveLength(2);
      expect(JSON.parse(r.stdout), args.join(" ")).toEqual({ ok: false, code: "USAGE", message });
    }
    const text = await runCli(["fleet", "bogus"]);
    expect([text.code, text.stdout]).toEqual([2, ""]);
    expectOneLine(text.stderr, "unknown command 'bogus'", "hermes-plugin-kit fleet");
  });

  it("with --json, no command at all answers one JSON object naming the commands, exit 2 (the short help goes to stderr only without it)", async () => {
    const top = await runCli(["--json"]);
    expect([top.code, top.stderr]).toEqual([2, ""]);
    expect(JSON.parse(top.stdout)).toEqual({
      ok: false,
      code: "USAGE",
      message: "no command given: expected one of verify-manifest, verify-final-receipt, fetch, resolve, fleet, verify-provenance, release, init, plugin after 'hermes-plugin-kit' (see 'hermes-plugin-kit --help')",
    });
    const group = await runCli(["fleet", "--json"]);
    expect([group.code, group.stderr]).toEqual([2, ""]);
    expect(JSON.parse(group.stdout)).toEqual({ ok: false, code: "USAGE", message: "no command given: expected one of add, verify, list, remove, upgrade after 'hermes-plugin-kit fleet' (see 'hermes-plugin-kit fleet --help')" });
  });

  it("help help: the program's help (which lists `help [command]`) on stdout, exit 0", async () => {
    const r = await runCli(["help", "help"]);
    expect([r.code, r.stderr]).toEqual([0, ""]);
    expect(r.stdout).toMatch(/^Usage: hermes-plugin-kit \[options\] \[command\]/);
    expect(r.stdout).toContain("help [command]");
  });

  it("a flag that takes no value given one (--json=yes) says so, not 'unknown option --json (Did you mean --json?)'", async () => {
    const r = await runCli(["verify-final-receipt", "--receipt", "r.json", "--json=yes"]);
    expect(r.code).toBe(2);
    expect(r.stderr).not.toContain("Did you mean");
    expect(r.stderr).toContain("option '--json' takes no value, found '--json=yes'");
  });

  it("help <group> <command>: that command's own help on stdout, exit 0", async () => {
    const r = await runCli(["help", "fleet", "add"]);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe("");
    expect(r.stdout).toMatch(/^Usage: hermes-plugin-kit fleet add \[options\]/);
  });

  it("a release step answers an unknown option with its JSON object too; with --json only that", async () => {
    const r = await runCli(["release", "stage", "--bogus"]);
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout)).toEqual({ ok: false, code: "USAGE", message: "unknown option '--bogus'" });
    expectOneLine(r.stderr, "unknown option '--bogus'", "hermes-plugin-kit release stage");
    const json = await runCli(["fetch", "--bogus", "--json"]);
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout)).toEqual({ ok: false, code: "USAGE", message: "unknown option '--bogus'" });
    expect(json.stderr).toBe("");
  });

  it("every command reports an unknown option first, in one line, exit 2", async () => {
    for (const { path } of leafCommands()) {
      const r = await runCli([...path, "--no-such-flag-here"]);
      expect(r.code, path.join(" ")).toBe(2);
      expect(r.stderr, path.join(" ")).toBe(`hermes-plugin-kit: unknown option '--no-such-flag-here' (see 'hermes-plugin-kit ${path.join(" ")} --help')\n`);
    }
  }, 240_000);
});

describe("structured flag values are usage errors (src/cli/flag-values.ts): exit 2, one line saying what was expected and found", () => {
  const sha = "a".repeat(40);
  const manifest = ["release", "create-manifest", "--previous-version", "0.1.0", "--version", "0.2.0", "--tag", "v0.2.0", "--source-sha", sha, "--dir", "/nonexistent-checkout"];
  it.each([
    [[...manifest, "--run-id", "1", "--run-attempt", "y"], "release create-manifest", '--run-attempt: expected a positive integer (1, 2, ...), found "y"'],
    [[...manifest, "--run-id", "run 7", "--run-attempt", "1"], "release create-manifest", '--run-id: expected a workflow run id (decimal digits without a leading zero, e.g. 12345), found "run 7"'],
    [["release", "run", "--workspace", "/nonexistent-ws/w", "--source", "/nonexistent-src", "--run-id", "07"], "release run", '--run-id: expected a workflow run id (decimal digits without a leading zero, e.g. 12345), found "07"'],
    [["release", "run", "--workspace", "/nonexistent-ws/w", "--source", "/nonexistent-src", "--run-attempt", "0"], "release run", '--run-attempt: expected a positive integer (1, 2, ...), found "0"'],
    [["release", "attest", "--reference", "r", "--key", "k", "--run-attempt", "two"], "release attest", '--run-attempt: expected a positive integer (1, 2, ...), found "two"'],
    [["release", "gate", "unit", "--timeout-seconds", "1h"], "release gate", '--timeout-seconds: expected a positive integer (1, 2, ...), found "1h"'],
  ])("%j", async (args, command, what) => {
    const r = await runCli(args);
    expect(r.code).toBe(2);
    expectOneLine(r.stderr, what, `hermes-plugin-kit ${command}`);
    expect(JSON.parse(r.stdout)).toEqual({ ok: false, code: "USAGE", message: what });
  });
});

describe("the unknown-option look-ahead leaves the command as it found it (firstUnknownOption)", () => {
  const leaf = () => {
    const program = new Command().exitOverride();
    const sub = program.command("add").requiredOption("--name <n>", "a name").option("--expect-gate <gate=command>", "repeatable", collect).exitOverride();
    sub.action(() => undefined);
    return { program, sub };
  };

  it("finds the first undeclared option and restores values and error output: repeatable options are not collected twice", async () => {
    const { program, sub } = leaf();
    const before = { ...sub.configureOutput() };
    expect(firstUnknownOption(sub, ["--expect-gate", "unit=a", "--bogus", "--name", "x"])).toBe("--bogus");
    expect(firstUnknownOption(sub, ["--expect-gate", "unit=a", "--name", "x"])).toBeUndefined();
    expect(sub.opts()).toEqual({});
    expect(sub.configureOutput()).toEqual(before);
    await program.parseAsync(["add", "--expect-gate", "unit=a", "--expect-gate", "host_contract=b", "--name", "x"], { from: "user" });
    expect(sub.opts()).toEqual({ expectGate: ["unit=a", "host_contract=b"], name: "x" });
  });

  it("help asked for, or a value an option's parser refuses, is no unknown option", () => {
    const { sub } = leaf();
    expect(firstUnknownOption(sub, ["--bogus", "--help"])).toBeUndefined();
    sub.option("--count <n>", "a number", (v: string) => {
      if (!/^\d+$/.test(v)) throw new InvalidArgumentError("not a number");
      return Number(v);
    });
    expect(firstUnknownOption(sub, ["--count", "x", "--bogus"])).toBeUndefined();
    expect(sub.opts()).toEqual({});
  });
});
