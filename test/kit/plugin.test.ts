/**
 * definePlugin: whole-plugin checks, the served MCP surface (through the
 * SDK's in-memory transport), capability selection from PLUGIN_DATA, and
 * redaction of a nested secret on stderr at every level (real stdio server).
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { afterAll, describe, expect, it } from "vitest";
import {
  buildPluginPackage,
  definePlugin,
  objectArg,
  PluginKitError,
  registrationReceipt,
  setLogSink,
  strArg,
  tool,
  type ParamsToolOptions,
  type PluginDefinition,
} from "../../src/kit/index.js";
import { tempDir } from "./fixtures.js";

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const t = (name: string, extra: Partial<ParamsToolOptions> = {}) =>
  tool({ name, description: `${name} tool.`, params: { q: strArg("q", { required: true, example: "x" }) }, readOnly: true, handler: ({ q }) => ({ name, q }), ...extra } as ParamsToolOptions);
const base = { name: "test-plugin", version: "1.0.0", description: "Test plugin.", server: "testsrv" };


describe("definePlugin checks before serving", () => {
  it("accepts a plugin and derives manifests and Hermes names", () => {
    const plugin = definePlugin({ ...base, tools: [t("alpha"), t("beta")], logging: { envVar: "TEST_LOG", default: "info" }, env: { MODE: "x" }, license: "MIT", author: { name: "A" } });
    expect(plugin.hermesNames).toEqual({ alpha: "mcp__testsrv__alpha", beta: "mcp__testsrv__beta" });
    expect(plugin.manifest()).toEqual({
      $schema: "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json",
      name: "test-plugin",
      version: "1.0.0",
      description: "Test plugin.",
      author: { name: "A" },
      license: "MIT",
    });
    expect(plugin.mcpConfig()).toEqual({
      $schema: "https://agent-plugins.org/schemas/1.0.0/mcp.schema.json",
      mcpServers: { testsrv: { type: "stdio", command: "node", args: ["${PLUGIN_ROOT}/dist/server.js"], env: { TEST_LOG: "info", MODE: "x" } } },
    });
    expect(definePlugin({ ...base, server: undefined, tools: [t("alpha")] }).server).toBe("test-plugin");
  });
  it.each([
    ["a duplicate tool name", { tools: [t("alpha"), t("alpha")] }, "TOOL_NAME_DUPLICATE"],
    ["a Hermes name over 64 characters", { tools: [t("x".repeat(60))] }, "HERMES_NAME_TOO_LONG"],
    ["a server shadowing a toolset", { server: "terminal", tools: [t("alpha")] }, "SERVER_NAME_SHADOWS_TOOLSET"],
    ["an invalid server name", { server: "Bad Name", tools: [t("alpha")] }, "SERVER_NAME_INVALID"],
    ["an invalid plugin name", { name: "Bad--name", tools: [t("alpha")] }, "PLUGIN_NAME_INVALID"],
    ["a bad version", { version: "v1", tools: [t("alpha")] }, "PLUGIN_DEFINITION_INVALID"],
    ["no tools", { tools: [] }, "PLUGIN_DEFINITION_INVALID"],
    ["a tool not built with tool()", { tools: [{ name: "alpha" }] }, "PLUGIN_DEFINITION_INVALID"],
    ["an env key PLUGIN_ROOT", { tools: [t("alpha")], env: { PLUGIN_ROOT: "/x" } }, "PLUGIN_DEFINITION_INVALID"],
    ["an unknown capability member", { tools: [t("alpha")], capabilities: { groups: { g: ["nope"] } } }, "CAPABILITY_NAME_UNKNOWN"],
    ["an unknown default capability", { tools: [t("alpha")], capabilities: { groups: { g: ["alpha"] }, enabled: ["h"] } }, "CAPABILITY_UNKNOWN"],
    ["a bad logging env var", { tools: [t("alpha")], logging: { envVar: "1BAD" } }, "LOGGING_INVALID"],
    ["duplicate skills", { tools: [t("alpha")], skills: [{ name: "s", dir: "/a" }, { name: "s", dir: "/b" }] }, "SKILL_DUPLICATE"],
  ])("refuses %s", (_label, options, code) => {
    expect(() => definePlugin({ ...base, ...(options as object) } as never)).toThrowWithCode(PluginKitError, code);
  });
  it("formats the registration receipt like the Python kit", () => {
    expect(registrationReceipt("p", ["a", "b"], [], ["math"])).toBe(
      "hermes_plugin_kit: registered plugin lifecycle; plugin=p; commands=<none>; cli_commands=<none>; tools=a,b; middlewares=<none>; hooks=<none>; skills=<none>; skipped_optional_skills=<none>; memory_providers=<none>; image_gen_providers=<none>; video_gen_providers=<none>; capabilities=math; context_engine=<none>; context_engine_registration=<none>",
    );
  });
});

async function connect(plugin: PluginDefinition, selection = plugin.selectTools()): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await plugin.createServer(selection).connect(serverSide);
  const client = new Client({ name: "in-memory", version: "1" });
  await client.connect(clientSide);
  return client;
}

describe("served surface and capability selection", () => {
  const plugin = definePlugin({ ...base, tools: [t("alpha"), t("beta"), t("gamma", { readOnly: false })], capabilities: { groups: { first: ["alpha"], second: ["beta", "gamma"] } } });

  it("lists annotations and examples, and calls through the kit", async () => {
    const client = await connect(plugin);
    const { tools } = await client.listTools();
    expect(tools.map((x) => [x.name, x.annotations?.readOnlyHint])).toEqual([["alpha", true], ["beta", true], ["gamma", false]]);
    expect(tools[0]?._meta).toEqual({ "hermes-plugin-kit/examples": { q: "x" }, "hermes-plugin-kit/validator": "kit" });
    expect(await client.callTool({ name: "alpha", arguments: { q: "hi" } })).toMatchObject({ structuredContent: { success: true, data: { name: "alpha", q: "hi" } } });
    expect(await client.callTool({ name: "alpha", arguments: {} })).toMatchObject({ isError: true, content: [{ text: "q is required (e.g. 'x')" }] });
    await client.close();
  });
  it("lists only the selected capability's tools and refuses the others", async () => {
    expect(plugin.selectTools({ capabilities: ["second"] })).toEqual({ capabilities: ["second"], names: ["beta", "gamma"] });
    expect(plugin.selectTools({ tools: ["alpha"] })).toEqual({ capabilities: [], names: ["alpha"] });
    expect(() => plugin.selectTools({ capabilities: ["third"] })).toThrowWithCode(PluginKitError, "CAPABILITY_UNKNOWN");
    expect(() => plugin.selectTools({ tools: ["delta"] })).toThrowWithCode(PluginKitError, "CAPABILITY_NAME_UNKNOWN");
    const client = await connect(plugin, plugin.selectTools({ capabilities: ["first"] }));
    expect((await client.listTools()).tools.map((x) => x.name)).toEqual(["alpha"]);
    const refused = await client.callTool({ name: "beta", arguments: { q: "x" } });
    expect(refused).toMatchObject({ isError: true, content: [{ text: "Unknown tool: beta. Available tools: alpha" }] });
    await client.close();
  });
});

describe("a built plugin over stdio", () => {
  const SECRET = "s3cr3t";
  let out: string;
  let lastStderr = "";

  async function run(level: string, dataConfig?: unknown): Promise<{ stderr: string; listed: string[]; results: unknown[] }> {
    const data = tempDir("plugin-data");
    dirs.push(data);
    if (dataConfig !== undefined) writeFileSync(path.join(data, "config.json"), JSON.stringify(dataConfig));
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [path.join(out, "dist", "server.js")],
      env: { PATH: process.env["PATH"] ?? "", PLUGIN_ROOT: out, PLUGIN_DATA: data, VAULT_LOG_LEVEL: level },
      stderr: "pipe",
    });
    let stderr = "";
    transport.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8");
      lastStderr = stderr;
    });
    const client = new Client({ name: "redaction", version: "1" });
    await client.connect(transport);
    const listed = (await client.listTools()).tools.map((x) => x.name);
    const results: unknown[] = [];
    if (listed.includes("vault_store")) {
      for (const args of [
        { label: "ok", auth: { api_key: SECRET } },
        { label: "boom", auth: { api_key: SECRET } },
        { label: "", auth: { api_key: SECRET } },
        { label: "ok", auth: { api_key: SECRET, extra: 1 } },
        { label: "ok", auth: { api_key: 5 } },
      ]) {
        results.push(await client.callTool({ name: "vault_store", arguments: args }));
      }
    }
    await client.close();
    return { stderr, listed, results };
  }

  it("builds", async () => {
    const dir = tempDir("plugin-vault");
    dirs.push(dir);
    mkdirSync(path.join(dir, "src"));
    writeFileSync(path.join(dir, "package.json"), '{"name":"vault","version":"1.0.0","type":"module"}');
    writeFileSync(
      path.join(dir, "src", "entry.ts"),
      `import { definePlugin, objectArg, strArg, tool } from "hermes-plugin-kit";
const store = tool({
  name: "vault_store",
  description: "Store a label.",
  params: {
    label: strArg("Label", { required: true, example: "x" }),
    auth: objectArg("Credentials", { properties: { api_key: strArg("API key", { required: true }) } }),
  },
  handler: ({ label }) => {
    if (label === "boom") throw new Error("backend refused the request");
    return { stored: label };
  },
});
const peek = tool({ name: "vault_peek", description: "Peek.", params: {}, readOnly: true, handler: () => "{}" });
export default definePlugin({
  name: "vault", version: "1.0.0", description: "Vault.", server: "vault",
  tools: [store, peek],
  capabilities: { groups: { write: ["vault_store"], read: ["vault_peek"] } },
  logging: { envVar: "VAULT_LOG_LEVEL" },
});
`,
    );
    out = path.join(dir, "out");
    const result = await buildPluginPackage({ entry: path.join(dir, "src", "entry.ts"), outDir: out });
    expect(result.plugin.tools).toEqual(["vault_store", "vault_peek"]);
    void objectArg;
  });

  it.each([["debug"], ["info"], ["warning"], ["error"]])("never writes the nested secret to stderr at level %s", async (level) => {
    const { stderr, results } = await run(level);
    expect(results).toHaveLength(5);
    expect(stderr).toContain("hermes_plugin_kit: registered plugin lifecycle; plugin=vault;");
    expect(stderr).not.toContain(SECRET);
    if (level === "debug") {
      expect(stderr).toContain('vault_store: invoked; args={"label":"ok","auth":"***"}');
      expect(stderr).toMatch(/vault_store: rejected call, missing label/);
      expect(stderr).toMatch(/vault_store: rejected call, invalid auth/);
      expect(stderr).toMatch(/ERROR vault vault_store: handler raised; .*error=backend refused the request; stack=/);
    }
    if (level === "error") expect(stderr.split("\n").filter((line) => / (DEBUG|INFO|WARNING) vault /.test(line) && !line.includes("registered plugin lifecycle"))).toEqual([]);
    expect(results[3]).toMatchObject({ isError: true, content: [{ text: "auth.extra is not an accepted argument (accepted: api_key)" }] });
    expect(results[4]).toMatchObject({ isError: true, content: [{ text: "auth.api_key must be string" }] });
    expect(JSON.stringify(results)).not.toContain(SECRET);
  });

  it("lists the tools of the capability the operator enabled in PLUGIN_DATA/config.json", async () => {
    expect((await run("warning", { capabilities: ["read"] })).listed).toEqual(["vault_peek"]);
    expect((await run("warning", { tools: ["vault_store"] })).listed).toEqual(["vault_store"]);
  });

  it("refuses to serve on an unknown capability, before answering anything", async () => {
    lastStderr = "";
    await expect(run("warning", { capabilities: ["admin"] })).rejects.toThrow();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(lastStderr).toContain("hermes_plugin_kit: refused to serve; code=CAPABILITY_UNKNOWN; message=unknown capabilities: admin");
    expect(lastStderr).not.toContain("registered plugin lifecycle");
  });
});

describe("setLogSink", () => {
  it("returns the previous sink", () => {
    const mine = () => undefined;
    const previous = setLogSink(mine);
    expect(setLogSink(previous)).toBe(mine);
  });
});
