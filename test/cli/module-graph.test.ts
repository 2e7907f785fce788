/**
 * Start-up rule of the CLI (PROTOCOL "CLI start-up must stay fast"): importing
 * the CLI entry and rendering any `--help` loads commander and `src/cli` only;
 * heavy libraries (Octokit, semantic-release, esbuild, the MCP SDK, Sigstore,
 * Verdaccio, publint, tar libraries, zod, undici) and the area modules load
 * inside the action that uses them. Checked on the module graph of the real
 * compiled CLI, not by timing (timings live in `npm run bench:cli`).
 */
import { beforeAll, describe, expect, it } from "vitest";
import { Command } from "commander";
import { COMMAND_GROUPS, buildProgram } from "../../src/cli/program.js";
import { shortHelp } from "../../src/cli/usage.js";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { createHash } from "node:crypto";
import { readdir, readFile, writeFile } from "node:fs/promises";
import { readdirSync } from "node:fs";
import { canonicalJson, testedManifestBytes } from "../../src/contract/index.js";
import { BUNDLE_REFERENCE, POLICY, packTinyPackage, receiptFor, tempDir, testedManifestFor } from "../support/contract-fixture.js";
import { HEAVY_PACKAGES, ROOT, graphViolations, importChain, recordModuleGraph, type GraphEdge } from "../support/module-graph.js";

const CLI = join(ROOT, "dist", "src", "cli", "main.js");
/** What package.json `bin` names: the CommonJS entry that loads the bundle. */
const BIN = join(ROOT, "dist", "src", "cli", "main.cjs");
const PROGRAM = join(ROOT, "dist", "src", "cli", "program.js");

/** What may load before an action runs: commander, our CLI wiring and the error base class. */
const STARTUP = {
  packages: new Set(["commander"]),
  distModule: (path: string) => path.startsWith("dist/src/cli/") || /^dist\/src\/(contract|oci)\/errors\.c?js$/.test(path) || path === "dist/src/contract/constants.js" || path === "dist/src/contract/near-name.js",
};
const FIX = "import heavy modules inside the action handler: `const { x } = await import(\"../../area/x.js\")`";

describe("CLI start-up module graph", () => {
  it.each([[["--version"]], [["--help"]], [["release", "run", "--help"]], [["plugin", "build", "--help"]], [[]]])("`hermes-plugin-kit %j` loads commander and src/cli only", async (args) => {
    const run = await recordModuleGraph([CLI, ...args]);
    expect(run.code, run.stderr).toBe(args.length === 0 ? 2 : 0);
    expect(run.edges.some((e) => e.url.endsWith("/dist/src/cli/main.js"))).toBe(true);
    expect(graphViolations(run.edges, STARTUP), FIX).toEqual([]);
  });

  it("every command's help is complete (each option listed) with no action module loaded", async () => {
    // One process renders the help of every command, the way `<command> --help` does.
    const script = `
      const { buildProgram } = await import(${JSON.stringify(PROGRAM)});
      const program = buildProgram();
      const missing = [];
      let commands = 0;
      const walk = (cmd, path) => {
        const help = cmd.helpInformation();
        for (const option of cmd.options) if (!help.includes(option.flags)) missing.push(path + " " + option.flags);
        for (const sub of cmd.commands) {
          if (!help.includes(sub.name())) missing.push(path + " lists no " + sub.name());
          commands += 1;
          walk(sub, path + " " + sub.name());
        }
      };
      walk(program, "hermes-plugin-kit");
      process.stdout.write(JSON.stringify({ commands, missing }));`;
    const run = await recordModuleGraph(["--input-type=module", "-e", script]);
    expect(run.code, run.stderr).toBe(0);
    const { commands, missing } = JSON.parse(run.stdout) as { commands: number; missing: string[] };
    expect(commands).toBeGreaterThan(20);
    expect(missing).toEqual([]);
    expect(graphViolations(run.edges, STARTUP), FIX).toEqual([]);
  });
});

describe("COMMAND_GROUPS", () => {
  it("names exactly the top-level commands each module registers, and together all of them", () => {
    for (const group of COMMAND_GROUPS) {
      const program = new Command();
      group.register(program);
      expect(program.commands.map((c) => c.name()).sort()).toEqual([...group.names].sort());
    }
    expect(buildProgram().commands.map((c) => c.name()).sort()).toEqual(COMMAND_GROUPS.flatMap((g) => g.names).sort());
  });

  it("a run of one command registers only its module; anything else registers all", () => {
    expect(buildProgram("verify-final-receipt").commands.map((c) => c.name())).toEqual(["verify-manifest", "verify-final-receipt"]);
    expect(buildProgram("--help").commands.length).toBe(COMMAND_GROUPS.flatMap((g) => g.names).length);
    expect(buildProgram("no-such-command").commands.length).toBe(COMMAND_GROUPS.flatMap((g) => g.names).length);
  });
});

describe("CLI bundle (scripts/bundle-cli.mjs)", () => {
  interface BundleMeta {
    staticExternal: number;
    dynamicExternal: number;
    outputs: Record<string, { inputs: string[]; imports: { path: string; kind: string; external: boolean }[] }>;
  }
  const readMeta = async () => JSON.parse(await readFile(join(ROOT, "dist", "src", "cli", "bundle-meta.json"), "utf8")) as BundleMeta;

  it("holds src/cli, the offline verify path, commander and zod only; requires nothing at load but built-ins and the error modules", async () => {
    const meta = await readMeta();
    expect(Object.keys(meta.outputs).sort()).toEqual(["dist/src/cli/cli-bundle.cjs", "dist/src/cli/fetch-bundle.cjs"]);
    const bundle = meta.outputs["dist/src/cli/cli-bundle.cjs"]!;
    const allowed = (input: string) =>
      input.startsWith("dist/src/cli/") ||
      (input.startsWith("dist/src/contract/") && !/errors?\.js$/.test(input)) ||
      input.startsWith("node_modules/commander/") ||
      input.startsWith("node_modules/zod/");
    expect(bundle.inputs.filter((input) => !allowed(input)), FIX).toEqual([]);
    expect(bundle.inputs).toContain("dist/src/contract/release-document-schemas.js");
    // The fleet lock's schemas are not built by a verify command.
    expect(bundle.inputs).not.toContain("dist/src/contract/schemas.js");
    // Synchronous requires: Node built-ins and the error modules (one class per process); every area and package is an import() in an action.
    const required = bundle.imports.filter((i) => i.kind !== "dynamic-import").map((i) => i.path);
    expect(required.filter((p) => !p.startsWith("node:") && !/^\.\.?\/.*errors?\.cjs$/.test(p)), FIX).toEqual([]);
    // Required in their CommonJS form, which the areas' ES modules re-export: one class per process, no ES module loader.
    expect(required.filter((p) => p.endsWith(".cjs")).length).toBeGreaterThan(0);
    expect(bundle.imports.filter((i) => i.kind === "dynamic-import").map((i) => i.path)).toContain("../fetch/fetch.js");
    expect(meta.dynamicExternal).toBeGreaterThan(10);
    // No import() is left for vm.Script to evaluate: each became __hpkImport(...) (src/cli/main.cts).
    const code = await readFile(join(ROOT, "dist", "src", "cli", "cli-bundle.cjs"), "utf8");
    expect(code).not.toMatch(/\bimport\(/);
    expect(code.split("__hpkImport(").length - 1).toBeGreaterThanOrEqual(meta.dynamicExternal);
  });

  /** The Sigstore half of src/fetch: it imports the @sigstore packages as it loads, so it stays in dist/ (scripts/bundle-cli.mjs AREA_EXCLUDED). */
  const SIGSTORE_HALF = ["dist/src/fetch/sigstore-trust.js", "dist/src/fetch/sigstore-verify.js", "dist/src/fetch/provenance.js", "dist/src/fetch/verify-bundle-file.js", "dist/src/fetch/verify-reference.js"];

  it("the fetch bundle holds src/fetch, src/oci and the src/contract modules they use with zod; the Sigstore half and Octokit load from dist/ through import() when used", async () => {
    const meta = await readMeta();
    const fetchBundle = meta.outputs["dist/src/cli/fetch-bundle.cjs"]!;
    const allowed = (input: string) =>
      (/^dist\/src\/(contract|fetch|oci)\//.test(input) && !/errors?\.js$/.test(input) && !SIGSTORE_HALF.includes(input)) ||
      input === "dist/src/github/network-reason.js" ||
      input === "dist/src/cli/fetch-bundle-entry.js" ||
      input.startsWith("node_modules/zod/");
    expect(fetchBundle.inputs.filter((input) => !allowed(input))).toEqual([]);
    expect(fetchBundle.inputs).toEqual(expect.arrayContaining(["dist/src/fetch/fetch.js", "dist/src/fetch/fleet.js", "dist/src/oci/registry-target.js", "dist/src/oci/blob-download.js"]));
    // zod's 60-odd locales are not in it (a namespace import lets esbuild drop them).
    expect(fetchBundle.inputs.filter((input) => /\/locales\/(?!en\.js$|index\.js$)/.test(input))).toEqual([]);
    const required = fetchBundle.imports.filter((i) => i.kind !== "dynamic-import").map((i) => i.path);
    expect(required.filter((p) => !p.startsWith("node:") && !/^\.\.?\/.*(errors?|-error)\.cjs$/.test(p))).toEqual([]);
    const dynamic = fetchBundle.imports.filter((i) => i.kind === "dynamic-import").map((i) => i.path);
    expect(dynamic).toEqual(expect.arrayContaining(["../fetch/provenance.js", "../github/api.js"]));
    // What the CLI bundle imports from src/fetch and src/oci, and the src/oci barrel (for importArea), is exactly
    // what cli-bundle.json says the fetch bundle answers.
    const cliDynamic = meta.outputs["dist/src/cli/cli-bundle.cjs"]!.imports.filter((i) => i.kind === "dynamic-import").map((i) => i.path);
    const recorded = JSON.parse(await readFile(join(ROOT, "dist", "src", "cli", "cli-bundle.json"), "utf8")) as { areas: Record<string, { modules: string[] }> };
    const answered = recorded.areas["fetch-bundle.cjs"]!.modules;
    expect([...new Set([...cliDynamic.filter((p) => /^\.\.\/(fetch|oci)\//.test(p) && !SIGSTORE_HALF.includes(`dist/src/${p.slice(3)}`)), "../oci/index.js"])].sort()).toEqual(answered);
    expect(answered).toEqual(expect.arrayContaining(["../fetch/fetch.js", "../fetch/resolve.js", "../fetch/fleet.js"]));
  });

  it("`fetch` runs from the bundles up to its first request: no ES module of dist/ but the error modules, no package (no zod, Octokit or Sigstore from node_modules)", async () => {
    const dir = await tempDir();
    // Port 9 (discard) on the loopback: nothing listens, so the privacy gate's first request is refused and the run ends there.
    const reference = `127.0.0.1:9/acme/plugin@sha256:${"c".repeat(64)}`;
    const run = await recordModuleGraph([BIN, "fetch", "--plain-http", "--reference", reference, "--output-dir", join(dir, "out")], { env: { XDG_CACHE_HOME: dir } });
    expect(run.code, run.stderr).toBe(1);
    expect(run.stderr).toContain("127.0.0.1:9");
    expect(run.stderr).toContain("check that the registry at 127.0.0.1:9 is running and reachable");
    const onlyErrors = { packages: new Set<string>(), distModule: (p: string) => /^dist\/src\/cli\/main\.c?js$/.test(p) || /^dist\/src\/[a-z]+\/(errors|[a-z]+-error)\.c?js$/.test(p) };
    expect(graphViolations(run.edges, onlyErrors), "the fetch path must stay in the fetch bundle (scripts/bundle-cli.mjs)").toEqual([]);
    // The recorder saw the run (the check above can fail): the fetch area's error module was loaded.
    expect(run.edges.some((e) => e.url.endsWith("/dist/src/fetch/errors.cjs") || e.url.endsWith("/dist/src/fetch/errors.js"))).toBe(true);
  });

  it.each([["--help"], ["--version"]])("%s initialises no zod and loads no hashing, compression or stream built-in, with the code cache read or not", async (flag) => {
    const dir = await tempDir();
    // A CommonJS preload (no ES module loader) that reports, at exit, the built-ins and whether zod set itself up.
    const preload = join(dir, "report.cjs");
    await writeFile(preload, "process.on('exit',()=>require('node:fs').writeSync(2,'\\nSTATE '+JSON.stringify({zod:globalThis.__zod_globalConfig!==undefined,builtins:process.moduleLoadList})+'\\n'));\n");
    // The first run writes the command's cache, the second reads it; the third has the cache off.
    for (const cache of ["", "", "0"]) {
      const run = spawnSync(process.execPath, ["-r", preload, BIN, flag], { encoding: "utf8", timeout: 60_000, env: { ...process.env, XDG_CACHE_HOME: dir, HERMES_PLUGIN_KIT_CODE_CACHE: cache } });
      expect(run.status, run.stderr).toBe(0);
      const line = run.stderr.split("\n").find((l) => l.startsWith("STATE "));
      const state = JSON.parse((line as string).slice("STATE ".length)) as { zod: boolean; builtins: string[] };
      expect(state.zod).toBe(false);
      expect(state.builtins.filter((m) => /^NativeModule (crypto|zlib|stream|net|tty|internal\/fs\/sync_write_stream)$/.test(m)), `cache ${cache || "on"}`).toEqual([]);
    }
    if (flag === "--help") expect(readdirSync(join(dir, "hermes-plugin-kit", "v8"))).toHaveLength(1);
  });

  it("a verify command initialises zod (the check above can fail)", async () => {
    const dir = await tempDir();
    await writeFile(join(dir, "doc.json"), "{}");
    const report = "data:text/javascript,process.on('exit',()=>process.stderr.write('\\nZOD '+String(globalThis.__zod_globalConfig!==undefined)+'\\n'))";
    const run = spawnSync(process.execPath, ["--import", report, BIN, "verify-final-receipt", "--receipt", join(dir, "doc.json"), "--repository", "ghcr.io/acme/p"], { encoding: "utf8", timeout: 60_000 });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain("\nZOD true\n");
  });

  it("ships no bytecode: the build writes the bundle's SHA-256, not a code cache (each user's is made from the installed bundle)", async () => {
    const code = await readFile(join(ROOT, "dist", "src", "cli", "cli-bundle.cjs"));
    const recorded = JSON.parse(await readFile(join(ROOT, "dist", "src", "cli", "cli-bundle.json"), "utf8")) as { sha256: string; size: number; commands: string[]; areas: unknown };
    const fetchCode = await readFile(join(ROOT, "dist", "src", "cli", "fetch-bundle.cjs"));
    expect(recorded).toEqual({
      sha256: createHash("sha256").update(code).digest("hex"),
      size: code.length,
      commands: COMMAND_GROUPS.flatMap((g) => g.names).sort(),
      areas: { "fetch-bundle.cjs": { sha256: createHash("sha256").update(fetchCode).digest("hex"), size: fetchCode.length, modules: expect.any(Array) } },
    });
    const cliFiles = await readdir(join(ROOT, "dist", "src", "cli"));
    expect(cliFiles.filter((name) => /\.cache$|\.bin$|\.blob$/.test(name))).toEqual([]);
  });

  it("each error module is one instance per process: its ES module form re-exports the CommonJS form the bundle requires", () => {
    const probe = `
      const { createRequire } = await import("node:module");
      const require = createRequire(${JSON.stringify(join(ROOT, "dist", "src", "cli", "main.cjs"))});
      const esm = await import(${JSON.stringify(join(ROOT, "dist", "src", "oci", "errors.js"))});
      const base = await import(${JSON.stringify(join(ROOT, "dist", "src", "contract", "errors.js"))});
      const cjs = require("../oci/errors.cjs");
      const e = new esm.OciError("OCI_TIMEOUT", "x");
      process.stdout.write(JSON.stringify([esm.OciError === cjs.OciError, e instanceof require("../contract/errors.cjs").HermesPluginKitError, base.HermesPluginKitError === require("../contract/errors.cjs").HermesPluginKitError]));`;
    const run = spawnSync(process.execPath, ["--input-type=module", "-e", probe], { encoding: "utf8", timeout: 60_000 });
    expect(run.status, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual([true, true, true]);
  });

  it("main.js (the ES module entry) and main.cjs (package.json bin) answer alike", () => {
    for (const args of [["--version"], ["help", "fetch"], ["no-such-command"]]) {
      const esm = spawnSync(process.execPath, [CLI, ...args], { encoding: "utf8", timeout: 60_000 });
      const cjs = spawnSync(process.execPath, [BIN, ...args], { encoding: "utf8", timeout: 60_000 });
      expect([esm.status, esm.stdout, esm.stderr]).toEqual([cjs.status, cjs.stdout, cjs.stderr]);
    }
  });

  it.each([[["--help"]], [["fetch", "--help"]], [["--version"]]])("`hermes-plugin-kit %j` loads no node:child_process (the bundled commander requires it on first spawn)", (args) => {
    // Node's own list of the built-in modules this process loaded, printed as it exits.
    const report = "data:text/javascript,process.on('exit',()=>process.stderr.write('\\nBUILTINS '+JSON.stringify(process.moduleLoadList)+'\\n'))";
    const run = spawnSync(process.execPath, ["--import", report, CLI, ...args], { encoding: "utf8", timeout: 60_000 });
    expect(run.status, run.stderr).toBe(0);
    const line = run.stderr.split("\n").find((l) => l.startsWith("BUILTINS "));
    const builtins = JSON.parse((line as string).slice("BUILTINS ".length)) as string[];
    expect(builtins).toContain("NativeModule fs");
    expect(builtins.filter((m) => /^NativeModule (child_process|internal\/child_process|dgram)$/.test(m))).toEqual([]);
  });
});

describe("offline verify commands load only what they use", () => {
  let dir: string;
  let receiptFile: string;
  let manifestFile: string;
  let dist: string;

  beforeAll(async () => {
    dir = await tempDir();
    dist = await packTinyPackage(dir, POLICY.package, "0.8.0");
    const manifest = await testedManifestFor(dist);
    receiptFile = join(dir, "release-receipt.json");
    manifestFile = join(dir, "release-manifest.json");
    await writeFile(receiptFile, canonicalJson(receiptFor(manifest)));
    await writeFile(manifestFile, testedManifestBytes(manifest));
  });

  it("verify-final-receipt: commander and zod, no registry, GitHub, tar, bundler or MCP code", async () => {
    const run = await recordModuleGraph([CLI, "verify-final-receipt", "--receipt", receiptFile, "--repository", POLICY.registryRepository, "--package", POLICY.package, "--expect-bundle-reference", BUNDLE_REFERENCE]);
    expect(run.code, run.stderr).toBe(0);
    expect(graphViolations(run.edges, { packages: new Set(["commander", "zod"]), forbidden: HEAVY_PACKAGES.filter(([, name]) => name !== "zod"), distModule: (p) => !/^dist\/(release|src\/kit|src\/fetch\/(fetch|privacy|fleet)\.js|src\/oci\/(registry|layout|oras|open))/.test(p) })).toEqual([]);
  });

  it("verify-manifest: the contract's own tar reader, nothing heavy", async () => {
    const run = await recordModuleGraph([CLI, "verify-manifest", "--manifest", manifestFile, "--artifact-dir", dist, "--repository", POLICY.registryRepository]);
    expect(run.code, run.stderr).toBe(0);
    expect(graphViolations(run.edges, { forbidden: HEAVY_PACKAGES.filter(([, name]) => name !== "zod"), distModule: (p) => !/^dist\/(release|src\/kit|src\/fetch\/(fetch|privacy|fleet)\.js|src\/oci\/(registry|layout|oras|open|transfer))/.test(p) })).toEqual([]);
  });
});

describe("graphViolations", () => {
  const url = (path: string) => `file://${ROOT}${path}`;
  const edges: GraphEdge[] = [
    { parent: null, specifier: CLI, url: url("dist/src/cli/main.js") },
    { parent: url("dist/src/cli/main.js"), specifier: "./program.js", url: url("dist/src/cli/program.js") },
    { parent: url("dist/src/cli/program.js"), specifier: "commander", url: url("node_modules/commander/esm.mjs") },
    { parent: url("dist/src/cli/program.js"), specifier: "./commands/release.js", url: url("dist/src/cli/commands/release.js") },
  ];
  const octokit: GraphEdge[] = [
    { parent: url("dist/src/cli/commands/release.js"), specifier: "../../../release/github-release.js", url: url("dist/release/github-release.js") },
    { parent: url("dist/release/github-release.js"), specifier: "@octokit/rest", url: url("node_modules/@octokit/rest/dist-src/index.js") },
    { parent: url("node_modules/@octokit/rest/dist-src/index.js"), specifier: "@octokit/core", url: url("node_modules/@octokit/core/dist-src/index.js") },
  ];

  it("passes a graph of commander and src/cli", () => {
    expect(graphViolations(edges, STARTUP)).toEqual([]);
  });

  it("names a heavy library and the import chain that loaded it", () => {
    const problems = graphViolations([...edges, ...octokit], STARTUP);
    expect(problems).toContain("Octokit (@octokit/rest) loaded via dist/src/cli/main.js -> dist/src/cli/program.js -> dist/src/cli/commands/release.js -> dist/release/github-release.js -> @octokit/rest");
    expect(problems.some((p) => p.startsWith("dist/release/github-release.js loaded via"))).toBe(true);
  });

  it("refuses a package outside the allow-list even when it is not on the heavy list", () => {
    const extra = { parent: url("dist/src/cli/program.js"), specifier: "left-pad", url: url("node_modules/left-pad/index.js") };
    expect(graphViolations([...edges, extra], STARTUP)).toEqual([`package left-pad loaded via ${importChain([...edges, extra], extra.url)}`]);
  });
});

describe("a help-only run builds the command groups without their subcommands", () => {
  it("the program's help and short help are the same either way; the groups have no subcommands", () => {
    const full = buildProgram("--help");
    const stubbed = buildProgram("--help", { groupSubcommands: false });
    expect(stubbed.helpInformation()).toBe(full.helpInformation());
    expect(shortHelp(stubbed)).toBe(shortHelp(full));
    const groups = full.commands.filter((c) => c.commands.length > 0).map((c) => c.name());
    expect(groups.sort()).toEqual(["fleet", "plugin", "release"]);
    for (const name of groups) expect(stubbed.commands.find((c) => c.name() === name)?.commands).toEqual([]);
  });

  it.each([[[]], [["--help"]], [["-h"]], [["help"]], [["release", "--help"]], [["help", "fleet"]]])("the CLI answers %j as before (built CLI)", (args) => {
    const run = spawnSync(process.execPath, [BIN, ...args], { encoding: "utf8", timeout: 60_000 });
    const program = buildProgram(args[0]);
    if (args.length === 0) expect([run.status, run.stderr]).toEqual([2, shortHelp(program)]);
    else if (args[0] === "release") expect(run.stdout).toBe(program.commands.find((c) => c.name() === "release")?.helpInformation());
    else if (args[0] === "help" && args[1] === "fleet") expect(run.stdout).toBe(program.commands.find((c) => c.name() === "fleet")?.helpInformation());
    else expect([run.status, run.stdout]).toEqual([0, program.helpInformation()]);
  });
});
