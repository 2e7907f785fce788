/**
 * `plugin build`: the written package, self-containment, the committed
 * example, and fail-closed refusals that write nothing.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildPluginPackage, doctorPluginPackage, PluginKitError, type BuildResult } from "../../src/kit/index.js";
import { EXAMPLE_ENTRY, REPO_ROOT, runCompiledCli, tempDir } from "./fixtures.js";

const dirs: string[] = [];
let out: string;
let result: BuildResult;

beforeAll(async () => {
  out = tempDir("build");
  dirs.push(out);
  result = await buildPluginPackage({ entry: EXAMPLE_ENTRY, outDir: out });
});
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const read = (dir: string, file: string) => readFileSync(path.join(dir, file), "utf8");

describe("plugin build of the example", () => {
  it("writes plugin.json, mcp.json, one bundle and the skill", () => {
    expect(result.files).toEqual(["dist/server.js", "host/hermes-calculator-host/__init__.py", "host/hermes-calculator-host/plugin.yaml", "mcp.json", "plugin.json", "skills/calculator/SKILL.md"]);
    expect(result.plugin).toEqual({
      name: "hermes-calculator",
      version: "0.1.0",
      server: "calculator",
      tools: ["calculate", "unit_convert"],
      hermesNames: { calculate: "mcp__calculator__calculate", unit_convert: "mcp__calculator__unit_convert" },
      skills: ["calculator"],
      hooks: ["pre_tool_call"],
      commands: ["calc"],
      middleware: [],
      companion: "host/hermes-calculator-host",
    });
    expect(JSON.parse(read(out, "plugin.json"))).toEqual({
      $schema: "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json",
      name: "hermes-calculator",
      version: "0.1.0",
      description: "A calculator and unit converter for Hermes, served over MCP.",
      license: "MIT",
      keywords: ["calculator", "units"],
    });
    expect(JSON.parse(read(out, "mcp.json"))).toEqual({
      $schema: "https://agent-plugins.org/schemas/1.0.0/mcp.schema.json",
      mcpServers: { calculator: { type: "stdio", command: "node", args: ["${PLUGIN_ROOT}/dist/server.js"], env: { CALCULATOR_LOG_LEVEL: "info" } } },
    });
    expect(read(out, "skills/calculator/SKILL.md")).toBe(read(path.join(REPO_ROOT, "examples", "calculator"), "skills/calculator/SKILL.md"));
    expect(result.bundleBytes).toBeGreaterThan(0);
    expect(result.findings.filter((f) => f.severity !== "info")).toEqual([]);
  });

  it("bundles everything: only node builtins are imported, esbuild is not inside", () => {
    const bundle = read(out, "dist/server.js");
    const specifiers = [...bundle.matchAll(/(?:^|\n)\s*import\s[^;]*?from\s+["']([^"']+)["']/g)].map((m) => m[1]);
    const dynamic = [...bundle.matchAll(/\bimport\(\s*["']([^"']+)["']\s*\)/g)].map((m) => m[1]);
    for (const specifier of [...specifiers, ...dynamic]) expect(specifier).toMatch(/^node:/);
    expect(bundle).not.toMatch(/require\(["']esbuild["']\)/);
    expect(bundle).not.toContain("process.env[");
    // The companion's Python sources stay out of server bundles.
    expect(bundle).not.toContain("def register(ctx)");
  });

  it("the example's package.json ships the built files and has no runtime dependencies", () => {
    const pkg = JSON.parse(read(path.join(REPO_ROOT, "examples", "calculator"), "package.json"));
    expect(pkg).toMatchObject({ name: "hermes-calculator", version: "0.1.0", files: ["plugin.json", "mcp.json", "dist/", "skills/", "host/"] });
    expect(pkg.dependencies ?? {}).toEqual({});
  });

  /** A copy of the example's source built in place, as its gates (`just build`) do. */
  async function builtCopy(): Promise<string> {
    const { cpSync } = await import("node:fs");
    const work = tempDir("example-copy");
    dirs.push(work);
    const source = path.join(work, "hermes-calculator");
    const skip = new Set(["node_modules", "dist", "host", "plugin.json", "mcp.json"]);
    cpSync(path.join(REPO_ROOT, "examples", "calculator"), source, { recursive: true, filter: (src) => !skip.has(path.basename(src)) });
    await buildPluginPackage({ entry: path.join(source, "src", "server.ts"), outDir: source });
    for (const file of ["plugin.json", "mcp.json", "skills/calculator/SKILL.md", "host/hermes-calculator-host/plugin.yaml", "host/hermes-calculator-host/__init__.py"]) {
      expect(read(source, file)).toBe(read(out, file));
    }
    return source;
  }

  it("a copy built in place passes the doctor", async () => {
    const report = await doctorPluginPackage(await builtCopy(), { callTools: false });
    expect(report.findings.filter((f) => f.severity === "error")).toEqual([]);
    expect(report.servers[0]?.tools.map((t) => t.name)).toEqual(["calculate", "unit_convert"]);
  });

  it("a copy built in place passes its own dependency-free smoke test (npm test)", async () => {
    const source = await builtCopy();
    const { execFile } = await import("node:child_process");
    const outcome = await new Promise<{ code: number; stdout: string }>((resolve) => {
      execFile(process.execPath, [path.join(source, "test", "smoke.mjs")], { timeout: 30_000 }, (error, stdout) => {
        resolve({ code: error ? 1 : 0, stdout });
      });
    });
    expect(outcome.stdout).toContain("smoke: all checks passed");
    expect(outcome.code).toBe(0);
  });

  it("packs with npm, installs offline elsewhere, and the installed package passes the doctor", async () => {
    const { execFile } = await import("node:child_process");
    const npm = (args: string[], cwd: string) =>
      new Promise<string>((resolve, reject) => {
        execFile("npm", args, { cwd, timeout: 60_000, env: { ...process.env, npm_config_update_notifier: "false" } }, (error, stdout, stderr) => (error ? reject(new Error(`npm ${args.join(" ")}: ${stderr}`)) : resolve(stdout)));
      });
    const source = await builtCopy();
    const work = path.dirname(source);
    const tarball = (await npm(["pack", "--offline", "--silent", "--pack-destination", work], source)).trim().split("\n").pop() ?? "";
    expect(tarball).toBe("hermes-calculator-0.1.0.tgz");
    const consumer = path.join(work, "consumer");
    mkdirSync(consumer);
    writeFileSync(path.join(consumer, "package.json"), '{"name":"consumer","version":"1.0.0","private":true}');
    await npm(["install", "--offline", "--no-audit", "--no-fund", "--silent", path.join(work, tarball)], consumer);
    const installed = path.join(consumer, "node_modules", "hermes-calculator");
    expect(existsSync(path.join(installed, "dist", "server.js"))).toBe(true);
    const report = await doctorPluginPackage(installed);
    expect(report.findings.filter((f) => f.severity === "error")).toEqual([]);
    expect(report.servers[0]?.tools[0]?.calls[1]?.modelSees).toBe(JSON.stringify({ result: '{"success":true,"data":{"expression":"2**10","result":1024}}' }));
    // The companion ships in the tarball and reaches the installed package's server.
    expect(report.companions).toMatchObject([{ dir: "host/hermes-calculator-host", checked: true, registered: { commands: ["calc"], hooks: ["pre_tool_call"] } }]);
    expect(report.companions[0]?.calls.map((c) => [c.name, c.ok, c.value])).toEqual([
      ["calc", true, '"Usage: /calc <expression>, e.g. /calc 2**10"'],
      ["pre_tool_call", true, "null"],
    ]);
  });

  it("runs through the compiled CLI with --json", async () => {
    const target = tempDir("build-cli");
    dirs.push(target);
    const { code, stdout } = await runCompiledCli(["plugin", "build", EXAMPLE_ENTRY, "--out", target, "--json", "--no-minify"]);
    expect(code).toBe(0);
    const parsed = JSON.parse(stdout);
    expect(parsed).toMatchObject({ ok: true, plugin: { name: "hermes-calculator" } });
    expect(parsed.bundleBytes).toBeGreaterThan(result.bundleBytes);
  });
});

describe("plugin build warnings", () => {
  it("warns about a skill directory in the output that the plugin does not declare", async () => {
    const target = tempDir("build-stale");
    dirs.push(target);
    mkdirSync(path.join(target, "skills", "old-skill"), { recursive: true });
    writeFileSync(path.join(target, "skills", "old-skill", "SKILL.md"), "---\nname: old-skill\ndescription: d\n---\nb\n");
    const built = await buildPluginPackage({ entry: EXAMPLE_ENTRY, outDir: target });
    expect(built.findings.filter((f) => f.rule === "BUILD_UNDECLARED_SKILL").map((f) => f.file)).toEqual(["skills/old-skill/SKILL.md"]);
  });
});

describe("plugin build fails closed", () => {
  function project(files: Record<string, string>): string {
    const dir = tempDir("build-bad");
    dirs.push(dir);
    writeFileSync(path.join(dir, "package.json"), '{"name":"bad","version":"1.0.0","type":"module"}');
    for (const [relative, text] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(dir, relative)), { recursive: true });
      writeFileSync(path.join(dir, relative), text);
    }
    return dir;
  }
  const plugin = (extra = "") => `import { definePlugin, strArg, tool, pluginSkill } from "hermes-plugin-kit";
const t = tool({ name: "lookup", description: "Look up.", params: { q: strArg("q", { required: true }) }, handler: ({ q }) => q });
export default definePlugin({ name: "bad", version: "1.0.0", description: "d", server: "badsrv", tools: [t]${extra} });
`;

  it.each([
    ["a missing entry", {}, "src/missing.ts", "BUILD_ENTRY_INVALID"],
    ["a default export that is not a plugin", { "src/entry.ts": "export default { name: 'x' };\n" }, "src/entry.ts", "BUILD_ENTRY_INVALID"],
    ["an unresolvable import", { "src/entry.ts": 'import "definitely-not-installed-pkg";\nexport default 1;\n' }, "src/entry.ts", "BUILD_BUNDLE_FAILED"],
    ["a definition error", { "src/entry.ts": plugin().replace('name: "lookup"', 'name: "memory"') }, "src/entry.ts", "TOOL_NAME_RESERVED"],
    ["a skill whose name differs from its directory", { "src/entry.ts": plugin(', skills: [pluginSkill("skills/one")]'), "skills/one/SKILL.md": "---\nname: two\ndescription: d\n---\nb\n" }, "src/entry.ts", "SKILL_NAME_MISMATCH"],
    ["a skill outside skills/", { "src/entry.ts": plugin(', skills: [pluginSkill("docs/one")]'), "docs/one/SKILL.md": "---\nname: one\ndescription: d\n---\nb\n" }, "src/entry.ts", "BUILD_OUTPUT_INVALID"],
  ])("on %s, writing nothing", async (_label, files, entry, code) => {
    const dir = project(files as Record<string, string>);
    const target = path.join(dir, "out");
    await expect(buildPluginPackage({ entry: path.join(dir, entry), outDir: target })).rejects.toThrowWithCode(PluginKitError, code);
    expect(existsSync(target)).toBe(false);
  });

  it("on a symlinked skill file", async () => {
    const dir = project({ "src/entry.ts": plugin(', skills: [pluginSkill("skills/one")]'), "skills/one/SKILL.md": "---\nname: one\ndescription: d\n---\nb\n", "elsewhere.md": "x" });
    symlinkSync(path.join(dir, "elsewhere.md"), path.join(dir, "skills", "one", "notes.md"));
    await expect(buildPluginPackage({ entry: path.join(dir, "src/entry.ts"), outDir: path.join(dir, "out") })).rejects.toThrowWithCode(PluginKitError, "BUILD_OUTPUT_INVALID");
    expect(existsSync(path.join(dir, "out"))).toBe(false);
  });

  it.each([
    // Only the entry that never settles waits for the load timeout; the others get a long one, so that a slow
    // load on a busy machine is not taken for a hang.
    ["throws while it loads", "throw new Error(\"boom at import\");\n", "loading src/entry.ts to read its definition threw: boom at import; fix: make the module load without throwing", 60_000],
    ["throws null while it loads", "throw null;\n", "loading src/entry.ts to read its definition threw: null; fix:", 60_000],
    ["calls process.exit(0) at top level", "process.exit(0);\n", "src/entry.ts called process.exit(0) while the build loaded it to read its definition; fix: do not exit at module top level", 60_000],
    ["awaits forever at top level", "await new Promise(() => {});\n", "src/entry.ts did not finish loading within 1500 ms (a top-level await that never settles?)", 1500],
  ])("an entry that %s: BUILD_ENTRY_FAILED saying so, nothing written, no temp file left", async (_label, top, message, entryTimeoutMs) => {
    const dir = project({ "src/entry.ts": top + plugin() });
    const target = path.join(dir, "out");
    // A private TMPDIR: other test files (and other processes) build in the shared one at the same time.
    const privateTmp = path.join(dir, "tmp");
    mkdirSync(privateTmp);
    const savedTmp = process.env["TMPDIR"];
    process.env["TMPDIR"] = privateTmp;
    try {
      const build = buildPluginPackage({ entry: path.join(dir, "src/entry.ts"), outDir: target, entryTimeoutMs });
      await expect(build).rejects.toThrowWithCode(PluginKitError, "BUILD_ENTRY_FAILED");
      await expect(build).rejects.toThrow(message);
    } finally {
      if (savedTmp === undefined) delete process.env["TMPDIR"];
      else process.env["TMPDIR"] = savedTmp;
    }
    expect(existsSync(target)).toBe(false);
    expect(readdirSync(privateTmp)).toEqual([]);
  });

  it("CLI: an entry that exits at top level exits 1 with [BUILD_ENTRY_FAILED] (it exited 0, writing nothing); one that leaves a timer running still ends after building", async () => {
    const exiting = project({ "src/entry.ts": "process.exit(0);\n" + plugin() });
    const failed = await runCompiledCli(["plugin", "build", path.join(exiting, "src/entry.ts"), "--out", path.join(exiting, "out")]);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(/called process\.exit\(0\) while the build loaded it .* \[BUILD_ENTRY_FAILED\]\n$/);
    expect(existsSync(path.join(exiting, "out"))).toBe(false);
    const ticking = project({ "src/entry.ts": "setInterval(() => {}, 1000);\n" + plugin() });
    const built = await runCompiledCli(["plugin", "build", path.join(ticking, "src/entry.ts"), "--out", path.join(ticking, "out"), "--json"]);
    expect(built.code, built.stderr).toBe(0);
    expect(JSON.parse(built.stdout)).toMatchObject({ ok: true, plugin: { name: "bad" } });
    expect(existsSync(path.join(ticking, "out", "dist", "server.js"))).toBe(true);
  });

  it("CLI: a definition with several problems keeps them apart on its one error line ('; '); --json keeps one per line", async () => {
    const dir = project({ "src/entry.ts": plugin().replace('version: "1.0.0"', 'version: "one"').replace('description: "d"', 'description: 5 as unknown as string') });
    const failed = await runCompiledCli(["plugin", "build", path.join(dir, "src/entry.ts"), "--out", path.join(dir, "out")]);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toBe('hermes-plugin-kit: version: must be a SemVer string, found "one"; description: must be a non-empty string [PLUGIN_DEFINITION_INVALID]\n');
    const json = await runCompiledCli(["plugin", "build", path.join(dir, "src/entry.ts"), "--out", path.join(dir, "out"), "--json"]);
    expect(JSON.parse(json.stdout)).toEqual({ ok: false, code: "PLUGIN_DEFINITION_INVALID", message: 'version: must be a SemVer string, found "one"\ndescription: must be a non-empty string' });
    expect(existsSync(path.join(dir, "out"))).toBe(false);
  });

  it("exits 1 through the CLI with a coded message, and 2 on a usage error", async () => {
    const dir = project({ "src/entry.ts": "export default 1;\n" });
    const failed = await runCompiledCli(["plugin", "build", path.join(dir, "src/entry.ts"), "--out", path.join(dir, "out")]);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain("[BUILD_ENTRY_INVALID]");
    expect((await runCompiledCli(["plugin", "build", path.join(dir, "src/entry.ts")])).code).toBe(2);
    // A missing entry says so (not "is not a file"); a directory says what it is, and a fix.
    const missing = await runCompiledCli(["plugin", "build", path.join(dir, "src/nonexist.ts"), "--out", path.join(dir, "out")]);
    expect([missing.code, missing.stderr]).toEqual([1, `hermes-plugin-kit: entry ${path.join(dir, "src/nonexist.ts")} does not exist (resolved to ${path.join(dir, "src/nonexist.ts")}); fix: pass the plugin's entry module, e.g. src/index.ts [BUILD_ENTRY_INVALID]\n`]);
    const directory = await runCompiledCli(["plugin", "build", path.join(dir, "src"), "--out", path.join(dir, "out")]);
    expect(directory.stderr).toBe(`hermes-plugin-kit: entry ${path.join(dir, "src")} is not a file (a directory); fix: pass the plugin's entry module, e.g. ${path.join(dir, "src", "index.ts")} [BUILD_ENTRY_INVALID]\n`);
    expect((await runCompiledCli(["plugin", "build", path.join(dir, "src/entry.ts"), "--out", path.join(dir, "out"), "--alias", "nope"])).code).toBe(2);
    expect((await runCompiledCli(["plugin", "doctor", dir, "--timeout", "soon"])).code).toBe(2);
    expect(existsSync(path.join(dir, "out"))).toBe(false);
  });
});

describe("plugin build never overwrites files it did not generate for this plugin", () => {
  const handWritten = "// my own server\nconsole.log('mine');\n";
  const otherManifest = JSON.stringify({ name: "other-plugin", version: "1.0.0" });
  const occupied = (files: Record<string, string>) => {
    const dir = tempDir("build-occupied");
    dirs.push(dir);
    for (const [relative, text] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(dir, relative)), { recursive: true });
      writeFileSync(path.join(dir, relative), text);
    }
    return dir;
  };

  it("the bundle's first line names the plugin it was built for; a rebuild of the same plugin overwrites its own output", async () => {
    expect(read(out, "dist/server.js").split("\n", 1)[0]).toBe(`// hermes-plugin-kit plugin build: ${JSON.stringify(result.plugin.name)}`);
    const again = await buildPluginPackage({ entry: EXAMPLE_ENTRY, outDir: out });
    expect(again.plugin.name).toBe(result.plugin.name);
  });

  it("another plugin's plugin.json and a hand-written dist/server.js: BUILD_OUTPUT_FOREIGN naming both, nothing written", async () => {
    const dir = occupied({ "plugin.json": otherManifest, "mcp.json": "{}", "dist/server.js": handWritten });
    const build = buildPluginPackage({ entry: EXAMPLE_ENTRY, outDir: dir });
    await expect(build).rejects.toThrowWithCode(PluginKitError, "BUILD_OUTPUT_FOREIGN");
    await expect(build).rejects.toThrow(/plugin\.json \(of plugin "other-plugin"\), mcp\.json \(not beside this plugin's plugin\.json\), dist\/server\.js \(not written by plugin build\); nothing was written; fix: .*--force/);
    expect(read(dir, "plugin.json")).toBe(otherManifest);
    expect(read(dir, "dist/server.js")).toBe(handWritten);
    expect(existsSync(path.join(dir, "skills"))).toBe(false);
  });

  it("a hand-written dist/server.js alone is refused too; --force overwrites (library and CLI)", async () => {
    const dir = occupied({ "dist/server.js": handWritten });
    await expect(buildPluginPackage({ entry: EXAMPLE_ENTRY, outDir: dir })).rejects.toThrowWithCode(PluginKitError, "BUILD_OUTPUT_FOREIGN");
    const refused = await runCompiledCli(["plugin", "build", EXAMPLE_ENTRY, "--out", dir]);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe("");
    expect(refused.stderr).toMatch(/would overwrite files in .* it did not generate for this plugin: dist\/server\.js \(not written by plugin build\).* \[BUILD_OUTPUT_FOREIGN\]\n$/);
    expect(read(dir, "dist/server.js")).toBe(handWritten);
    const forced = await runCompiledCli(["plugin", "build", EXAMPLE_ENTRY, "--out", dir, "--force"]);
    expect(forced.code, forced.stderr).toBe(0);
    expect(read(dir, "dist/server.js").startsWith("// hermes-plugin-kit plugin build: ")).toBe(true);
  });

  it("a bundle built for another plugin is refused even beside no plugin.json", async () => {
    const dir = occupied({ "dist/server.js": '// hermes-plugin-kit plugin build: "other-plugin"\nexport {};\n' });
    await expect(buildPluginPackage({ entry: EXAMPLE_ENTRY, outDir: dir })).rejects.toThrow(/dist\/server\.js \(built for "other-plugin"\)/);
  });
});
