/**
 * CLI wiring of the kit commands `init`, `plugin build`, `plugin call` and `plugin doctor` (logic lives in src/kit).
 * esbuild and the MCP SDK load inside the actions only.
 */
import { InvalidArgumentError, type Command } from "commander";
import type { GroupRegistration } from "../usage.js";
import { integerInRangeFlag } from "../flag-values.js";
import { printJson, printLine, printNote, printText, runAction, stdoutIsTerminal, UsageError, writeStdout } from "../output.js";

function collectAlias(value: string, previous: Record<string, string> | undefined): Record<string, string> {
  const at = value.indexOf("=");
  if (at <= 0 || at === value.length - 1) throw new InvalidArgumentError(`expected <specifier>=<path>, got ${value}`);
  return { ...previous, [value.slice(0, at)]: value.slice(at + 1) };
}

/** `init <dir> [--name N] [--repository R] [--kit registry|<tgz>]`: scaffold a plugin project. */
function registerInit(program: Command): void {
  program
    .command("init")
    .description("Scaffold a Hermes plugin project in <dir> (new or empty): package.json with the kit as an exact dev dependency (the kit init runs from: by name, or its tarball vendored into vendor/) and npm-script gates, src/index.ts with one tool, a skill, an MCP SDK client test, .gitignore, pinned GitHub workflows.")
    .argument("<dir>", "project directory (created; must be absent or empty)")
    .option("--name <name>", "npm package and plugin name (default: the directory's name)")
    .option("--repository <repository>", "private OCI repository of its releases, e.g. ghcr.io/acme/my-plugin (default: a placeholder to edit)")
    .option(
      "--kit <registry|path>",
      "the kit dependency: a path to the kit's .tgz (copied into vendor/ and depended on as file:vendor/...), or 'registry' (by exact version from your npm registry); default: the kit init runs from (by name when it was installed from a registry, its tarball when run with npx --package <tgz>), refused when init cannot tell",
    )
    .option("--json", "print the result as JSON")
    .action(async (dir: string, options: { name?: string; repository?: string; kit?: string; json?: boolean }) => {
      process.exitCode = await runAction(options.json === true, async () => {
        // An empty argument (an unset shell variable) is no directory: the current one takes `init .`.
        if (dir.trim() === "") throw new UsageError(`init needs a project directory, found an empty argument; pass the directory to create (init . for the current one)`);
        const { initPluginProject } = await import("../../kit/init.js");
        const kit = options.kit === undefined ? undefined : options.kit === "registry" ? ("registry" as const) : { tarball: options.kit };
        const result = await initPluginProject({
          dir,
          ...(options.name === undefined ? {} : { name: options.name }),
          ...(options.repository === undefined ? {} : { repository: options.repository }),
          ...(kit === undefined ? {} : { kit }),
        });
        if (options.json === true) {
          printJson({ ok: true, ...result });
          return 0;
        }
        if (options.repository !== undefined && options.repository !== result.repository) printNote(`--repository ${options.repository} written as ${result.repository} (a relative store path is resolved against this directory, so later commands find it from anywhere)`);
        printLine(`created plugin project ${result.name} in ${result.dir}`);
        for (const file of result.files) printLine(`  ${file}`);
        printNote(
          result.kit.source === "tarball"
            ? `the kit: ${result.kit.file} (copied from ${result.kit.from}, ${result.kit.integrity}; chosen by ${result.kit.decidedBy}); commit vendor/ with the project, the release's npm ci installs the kit from it`
            : `the kit: hermes-plugin-kit@${result.kit.spec} by name from your npm registry (${result.kit.decidedBy}); npm install takes whatever that registry serves under the name, and the kit's authors publish none on the public npm registry: use this only with a registry that serves the kit's own release, else init again with --kit <path of the kit's .tgz>`,
        );
        if (result.repository.startsWith("oci-layout:")) {
          printNote(`the store ${result.repository} is a directory on this machine: release run uses it here, but the CI workflow's PRIVATE_REPOSITORY (.github/workflows/release.yml) cannot reach it on a runner; set a registry repository there (e.g. ghcr.io/<owner>/${result.name}) before you push to GitHub`);
        }
        // The next steps go to stderr like every command's (README "Output"); stdout is the result.
        printNote("next:");
        // No `cd` when the project is the current directory (`init .`); otherwise a path the shell reads as typed.
        // node:fs/promises loads here, not with --help (it brings readline and the fs watchers).
        const { realpath } = await import("node:fs/promises");
        const { shellWord } = await import("../../contract/grammar.js");
        const here = result.dir === process.cwd() || (await realpath(result.dir).catch(() => result.dir)) === (await realpath(process.cwd()).catch(() => process.cwd()));
        printNote(`  ${here ? "" : `cd ${shellWord(dir)} && `}npm install && npm test && npm run doctor`);
        if (result.repositoryIsPlaceholder) printNote(`  set hermesPluginKit.repository in package.json (now the placeholder ${result.repository})`);
        printNote("  git init -b main, commit, add an origin, tag the baseline (git tag v0.1.0), push main and the tag");
        printNote("  then: SEMANTIC_RELEASE_ENABLED=true npx hermes-plugin-kit release run --workspace ../release-work");
        return 0;
      });
    });
}

/** Register the kit subcommands on `program`. */
export function registerKitCommands(program: Command, options: GroupRegistration = {}): void {
  registerInit(program);
  const plugin = program.command("plugin").description("Build and check Hermes plugins written with the kit (Agent Plugins v1 packages over MCP).");
  if (options.subcommands === false) return;
  registerPluginBuild(plugin);
  registerPluginCall(plugin);
  registerPluginDoctor(plugin);
}

/** `plugin build <entry> --out DIR`: bundle a plugin into a portable package. */
function registerPluginBuild(plugin: Command): void {
  plugin
    .command("build")
    .description("Bundle <entry> (default export: definePlugin(...)) into a portable package: plugin.json, mcp.json, dist/server.js, skills/, and host/<name>-host/ (the native companion) when the plugin has hooks, slash commands or middleware.")
    .argument("<entry>", "entry module (.ts or .js)")
    .requiredOption("--out <dir>", "output package directory (may be the source package root)")
    .option("--root <dir>", "source package root (default: nearest package.json above the entry)")
    .option("--alias <specifier=path>", "extra esbuild alias (repeatable)", collectAlias)
    .option("--no-kit-alias", "resolve hermes-plugin-kit from the entry's own dependencies instead of this kit")
    .option("--no-minify", "write a readable (unminified) bundle")
    .option("--force", "overwrite plugin.json, mcp.json and dist/server.js in --out even when plugin build did not generate them for this plugin (BUILD_OUTPUT_FOREIGN otherwise)")
    .option("--json", "print the result as JSON")
    .action(async (entry: string, options: { out: string; root?: string; alias?: Record<string, string>; kitAlias: boolean; minify: boolean; force?: boolean; json?: boolean }) => {
      // The build ran the entry's module code in this process: a timer or socket it left open must not
      // keep the command from ending once its result is out (the immediate runs only if something does).
      const endOnceDone = () => setImmediate(() => process.exit()).unref();
      process.exitCode = await runAction(options.json === true, async () => {
        const { buildPluginPackage } = await import("../../kit/build.js");
        const result = await buildPluginPackage({
          entry,
          outDir: options.out,
          ...(options.root !== undefined ? { root: options.root } : {}),
          alias: options.alias ?? {},
          kitAlias: options.kitAlias,
          minify: options.minify,
          force: options.force === true,
        });
        if (options.json) {
          printJson({ ok: true, ...result });
          return 0;
        }
        printLine(`built ${result.plugin.name} ${result.plugin.version} into ${result.outDir}`);
        printLine(`  server ${result.plugin.server}: dist/server.js (${result.bundleBytes} bytes)`);
        for (const name of result.plugin.tools) printLine(`  tool ${name} -> ${result.plugin.hermesNames[name]}`);
        for (const name of result.plugin.skills) printLine(`  skill ${name}`);
        if (result.plugin.companion) {
          const served = [...result.plugin.hooks.map((h) => `hook ${h}`), ...result.plugin.commands.map((c) => `/${c}`), ...result.plugin.middleware.map((m) => `${m} middleware`)];
          printLine(`  native companion ${result.plugin.companion}/ (install it next to the package): ${served.join(", ")}`);
        }
        for (const finding of result.findings) printLine(`  ${finding.severity.toUpperCase()} [${finding.rule}] ${finding.message}`);
        return 0;
      });
      endOnceDone();
    });
}

/** `plugin call <dir> <tool> [--args JSON]`: call one tool of a built package through the MCP SDK client. */
function registerPluginCall(plugin: Command): void {
  plugin
    .command("call")
    .description("Start a built package's MCP server the way Hermes does, call one tool through the MCP SDK client, and print what the model would see (exit 1 when the tool answers an error).")
    .argument("<dir>", "package directory (plugin.json, mcp.json, dist/server.js)")
    .argument("<tool>", "tool name as the server lists it (e.g. calculate)")
    .option("--args <json>", 'tool arguments as a JSON object by name, e.g. \'{"name": "value"}\' (anything else is a usage error, exit 2)', "{}")
    .option("--server <name>", "mcp.json server to start (when the package declares more than one)")
    .option("--timeout <ms>", "start-up and call timeout in milliseconds", "15000")
    .option("--json", "print {ok, server, tool, hermesName, arguments, isError, modelSees, callMs} as JSON")
    .action(async (dir: string, tool: string, options: { args: string; server?: string; timeout: string; json?: boolean }) => {
      process.exitCode = await runAction(options.json === true, async () => {
        const timeoutMs = integerInRangeFlag("--timeout", options.timeout, 100, 600_000);
        // An empty or blank name is the caller's slip (a quoting mistake), like any other empty value: exit 2.
        if (tool.trim() === "" || dir.trim() === "") throw new UsageError(`${tool.trim() === "" ? "<tool>" : "<dir>"} must not be empty, found ${JSON.stringify(tool.trim() === "" ? tool : dir)}`);
        const { callPluginTool, parseCallArguments } = await import("../../kit/call.js");
        const { PluginKitError } = await import("../../kit/errors.js");
        let args: Record<string, unknown>;
        try {
          args = parseCallArguments(options.args);
        } catch (error) {
          // A malformed --args is the caller's usage, not the tool's failure: exit 2, one line.
          if (error instanceof PluginKitError && error.code === "CALL_ARGUMENTS_INVALID") throw new UsageError(error.message);
          throw error;
        }
        const called = await callPluginTool(dir, tool, args, { timeoutMs, ...(options.server === undefined ? {} : { server: options.server }) });
        if (options.json) {
          const { result: _raw, ...rest } = called;
          printJson({ ok: !called.isError, ...rest });
        } else {
          printNote(`${called.hermesName} (server ${called.server}) ${called.isError ? "answered a tool error" : "answered"} in ${called.callMs} ms; the model sees:`);
          // The model's text as is when piped (it is the data asked for); escaped on a terminal, which it could drive.
          if (stdoutIsTerminal()) printText(called.modelSees);
          else writeStdout(called.modelSees + "\n");
        }
        return called.isError ? 1 : 0;
      });
    });
}

/** `plugin doctor <dir>`: check a built package as Hermes would load it. */
function registerPluginDoctor(plugin: Command): void {
  plugin
    .command("doctor")
    .description(
      "Check a built package with Hermes' portable rules, start its MCP server as Hermes does (filtered environment, cwd only when mcp.json sets it) and call its tools; " +
        "run each native companion (host/<dir>/) under Python 3 with a stand-in host context and drive its hooks, commands and middleware once.",
    )
    .argument("<dir>", "package directory")
    .option("--json", "print the report as JSON")
    .option("--timeout <ms>", "per-step timeout in milliseconds", "15000")
    .option("--no-call", "list tools but do not call them")
    .option("--python <path>", "Python 3 interpreter for the companion check (default: python3 on PATH; without one a package with a companion fails COMPANION_PYTHON_MISSING)")
    .option("--skip-companion", "do not run native companions (each is the warning COMPANION_NOT_CHECKED): pass without Python 3 on purpose")
    .action(async (dir: string, options: { json?: boolean; timeout: string; call: boolean; python?: string; skipCompanion?: boolean }) => {
      process.exitCode = await runAction(options.json === true, async () => {
        const timeoutMs = integerInRangeFlag("--timeout", options.timeout, 100, 600_000);
        const { doctorPluginPackage, formatDoctorReport } = await import("../../kit/doctor.js");
        const report = await doctorPluginPackage(dir, { timeoutMs, callTools: options.call, ...(options.python !== undefined ? { python: options.python } : {}), ...(options.skipCompanion === true ? { skipCompanion: true } : {}) });
        if (options.json) printJson(report);
        else for (const line of formatDoctorReport(report)) printLine(line);
        return report.ok ? 0 : 1;
      });
    });
}
