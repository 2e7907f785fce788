/**
 * Hosts do not start servers in the package root (Agent Plugins v1 loader; Hermes MCP client): the
 * doctor starts a server in a directory of its own unless mcp.json sets
 * `cwd`, and reports tools (and servers) that only work from the package
 * root; `pluginPath()` resolves package files without the working directory.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { buildPluginPackage, doctorPluginPackage, formatDoctorReport, pluginDataPath, pluginPath, PluginKitError, resolvePluginRoot, type DoctorReport } from "../../src/kit/index.js";
import { tempDir } from "./fixtures.js";

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** Build a plugin whose `rate` tool reads data/rates.json in the way `read` describes; `atLoad` reads it at module load too. */
async function ratesPlugin(read: string, options: { atLoad?: boolean; mcpCwd?: string } = {}): Promise<string> {
  const src = tempDir("cwd-src");
  dirs.push(src);
  mkdirSync(path.join(src, "data"), { recursive: true });
  writeFileSync(path.join(src, "package.json"), '{"name":"rates","version":"1.0.0","type":"module"}');
  writeFileSync(path.join(src, "data", "rates.json"), '{"EUR": 1.1}');
  writeFileSync(
    path.join(src, "entry.js"),
    `import { readFileSync } from "node:fs";
import { definePlugin, pluginPath, strArg, tool } from "hermes-plugin-kit";
const load = () => JSON.parse(readFileSync(${read}, "utf8"));
${options.atLoad ? "// Read at module load only in the built server (the build imports the entry too).\nconst atLoad = process.argv[1]?.endsWith(\"server.js\") ? load() : null;" : ""}
const rate = tool({
  name: "rate", description: "Exchange rate.", readOnly: true,
  params: { currency: strArg("Currency.", { required: true, example: "EUR" }) },
  handler: ({ currency }) => ({ currency, rate: load()[currency] }),
});
export default definePlugin({ name: "rates", version: "1.0.0", description: "Rates.", server: "rates", tools: [rate] });
`,
  );
  await buildPluginPackage({ entry: path.join(src, "entry.js"), outDir: src });
  if (options.mcpCwd !== undefined) {
    const mcp = JSON.parse(readFileSync(path.join(src, "mcp.json"), "utf8"));
    mcp.mcpServers.rates.cwd = options.mcpCwd;
    writeFileSync(path.join(src, "mcp.json"), JSON.stringify(mcp));
  }
  return src;
}

const rules = (report: DoctorReport, severity: "error" | "warning") => report.findings.filter((f) => f.severity === severity).map((f) => f.rule);

describe("plugin doctor starts servers as Hermes does", () => {
  it("reports a tool reading data/rates.json relative to the working directory (SERVER_CWD_DEPENDENT)", async () => {
    const dir = await ratesPlugin('"data/rates.json"');
    const report = await doctorPluginPackage(dir, { timeoutMs: 20_000 });
    expect(report.ok).toBe(false);
    expect(rules(report, "error")).toEqual(["SERVER_CWD_DEPENDENT"]);
    const finding = report.findings.find((f) => f.rule === "SERVER_CWD_DEPENDENT");
    expect(finding?.message).toContain("tool 'rate'");
    expect(finding?.message).toContain("pluginPath(");
    expect(report.servers[0]).toMatchObject({ started: true, cwdSource: "host" });
    expect(report.servers[0]?.cwd).not.toBe(dir);
    expect(formatDoctorReport(report).join("\n")).toContain("outside the package root, as Hermes starts it");
  });

  it("passes the same tool written with pluginPath()", async () => {
    const dir = await ratesPlugin('pluginPath("data", "rates.json")');
    const report = await doctorPluginPackage(dir, { timeoutMs: 20_000 });
    expect(rules(report, "error")).toEqual([]);
    expect(report.servers[0]?.tools[0]?.calls[1]?.modelSees).toBe(JSON.stringify({ result: '{"success":true,"data":{"currency":"EUR","rate":1.1}}' }));
  });

  it("reports a server that reads a package file relative to the working directory at start", async () => {
    const dir = await ratesPlugin('"data/rates.json"', { atLoad: true });
    const report = await doctorPluginPackage(dir, { timeoutMs: 20_000 });
    expect(rules(report, "error")).toEqual(expect.arrayContaining(["SERVER_START_FAILED", "SERVER_CWD_DEPENDENT"]));
    expect(report.servers[0]?.started).toBe(false);
  });

  it("honours cwd when mcp.json sets it", async () => {
    const dir = await ratesPlugin('"data/rates.json"', { mcpCwd: "${PLUGIN_ROOT}" });
    const report = await doctorPluginPackage(dir, { timeoutMs: 20_000 });
    expect(rules(report, "error")).toEqual([]);
    expect(report.servers[0]).toMatchObject({ started: true, cwdSource: "mcp.json", cwd: dir });
  });

  it("warns when a tool fails its own examples wherever it runs (TOOL_EXAMPLE_FAILED)", async () => {
    const dir = await ratesPlugin('"data/absent.json"');
    const report = await doctorPluginPackage(dir, { timeoutMs: 20_000 });
    expect(rules(report, "error")).toEqual([]);
    expect(rules(report, "warning")).toContain("TOOL_EXAMPLE_FAILED");
  });
});

describe("pluginPath and pluginDataPath", () => {
  const saved = { root: process.env["PLUGIN_ROOT"], data: process.env["PLUGIN_DATA"] };
  afterEach(() => {
    for (const [key, value] of [["PLUGIN_ROOT", saved.root], ["PLUGIN_DATA", saved.data]] as const) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  });
  beforeAll(() => undefined);

  it("resolves package files against PLUGIN_ROOT, never the working directory", () => {
    process.env["PLUGIN_ROOT"] = "/opt/plugins/rates";
    expect(pluginPath("data", "rates.json")).toBe("/opt/plugins/rates/data/rates.json");
    expect(pluginPath("data/./rates.json")).toBe("/opt/plugins/rates/data/rates.json");
    expect(pluginPath("a/../b")).toBe("/opt/plugins/rates/b");
  });

  it("refuses escapes, absolute and empty segments (PLUGIN_PATH_INVALID)", () => {
    process.env["PLUGIN_ROOT"] = "/opt/plugins/rates";
    for (const segments of [["..", "etc", "passwd"], ["data/../../x"], ["/etc/passwd"], [""], ["a\0b"]]) {
      expect(() => pluginPath(...segments)).toThrowWithCode(PluginKitError, "PLUGIN_PATH_INVALID");
    }
  });

  it("resolves data files against PLUGIN_DATA and refuses when it is unset", () => {
    process.env["PLUGIN_DATA"] = "/var/lib/hermes/data";
    expect(pluginDataPath("cache.json")).toBe("/var/lib/hermes/data/cache.json");
    expect(() => pluginDataPath("..", "x")).toThrowWithCode(PluginKitError, "PLUGIN_PATH_INVALID");
    delete process.env["PLUGIN_DATA"];
    expect(() => pluginDataPath("cache.json")).toThrowWithCode(PluginKitError, "PLUGIN_DATA_MISSING");
  });

  it("without PLUGIN_ROOT, the root comes from the running script, not the working directory", () => {
    delete process.env["PLUGIN_ROOT"];
    const root = resolvePluginRoot();
    // Under vitest the script is vitest's own entry: its package, wherever the test was started.
    expect(root).not.toBe(process.cwd());
    expect(path.isAbsolute(root)).toBe(true);
  });
});
