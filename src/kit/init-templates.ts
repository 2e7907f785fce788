/**
 * The files `hermes-plugin-kit init` writes (docs/kit.md, "`hermes-plugin-kit init`"): a plugin
 * project outside this repository with the kit as an exact dev dependency (by
 * name or a vendored tarball, `init-kit-source.ts`), npm-script gates (the policy's defaults), one tool with a required
 * argument, one skill, a vitest test that talks to the built server through
 * the official MCP SDK client, and GitHub workflows whose actions are pinned
 * by commit SHA.
 */
import { releaseWorkflow, testWorkflow } from "./init-workflows.js";

/** What the templates are filled with. */
export interface ScaffoldValues {
  /** npm package name = plugin.json name. */
  name: string;
  /** mcp.json server name. */
  server: string;
  /** `hermesPluginKit.repository`. */
  repository: string;
  /** Exact versions of the dev dependencies. */
  versions: { kit: string; mcpSdk: string; vitest: string };
}

function packageJson(v: ScaffoldValues): string {
  const pkg = {
    name: v.name,
    version: "0.1.0",
    description: `Hermes plugin ${v.name}, written with hermes-plugin-kit.`,
    license: "MIT",
    type: "module",
    engines: { node: ">=20.19" },
    files: ["plugin.json", "mcp.json", "dist/", "skills/"],
    scripts: {
      build: "hermes-plugin-kit plugin build src/index.ts --out .",
      pretest: "npm run build",
      test: "vitest run",
      predoctor: "npm run build",
      doctor: "hermes-plugin-kit plugin doctor .",
    },
    hermesPluginKit: { repository: v.repository },
    devDependencies: {
      "@modelcontextprotocol/sdk": v.versions.mcpSdk,
      "hermes-plugin-kit": v.versions.kit,
      vitest: v.versions.vitest,
    },
  };
  return JSON.stringify(pkg, null, 2) + "\n";
}

function indexTs(v: ScaffoldValues): string {
  return `/**
 * ${v.name}: a Hermes plugin. Each tool runs in one bundled MCP stdio server;
 * \`npm run build\` writes plugin.json, mcp.json and dist/server.js, and takes
 * the plugin's version from package.json.
 */
import { definePlugin, pluginSkill, strArg, tool } from "hermes-plugin-kit";

const greet = tool({
  name: "greet",
  description: "Greet someone by name.",
  params: { name: strArg("Who to greet.", { required: true, example: "Ada" }) },
  readOnly: true,
  handler: async ({ name }) => ({ greeting: \`Hello, \${String(name)}!\` }),
});

export default definePlugin({
  name: ${JSON.stringify(v.name)},
  description: "Greets people by name.",
  server: ${JSON.stringify(v.server)},
  tools: [greet],
  skills: [pluginSkill(${JSON.stringify(`skills/${v.server}`)})],
});
`;
}

function skillMd(v: ScaffoldValues): string {
  return `---
name: ${v.server}
description: "Use the ${v.name} plugin's greet tool to greet someone by name."
license: MIT
---

# ${v.name}

Call \`mcp__${v.server}__greet\` with \`{"name": "Ada"}\`; it answers \`{"success": true, "data": {"greeting": "Hello, Ada!"}}\`.
`;
}

function pluginTest(v: ScaffoldValues): string {
  return `/**
 * The built plugin (npm test builds it first) through the official MCP SDK
 * client over stdio, the way Hermes talks to it.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, expect, it } from "vitest";

const root = fileURLToPath(new URL("..", import.meta.url));
const data = mkdtempSync(join(tmpdir(), ${JSON.stringify(`${v.name}-test-`)}));
const client = new Client({ name: "plugin-test", version: "1.0.0" });

beforeAll(async () => {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [join(root, "dist", "server.js")],
    cwd: root,
    env: { PATH: process.env.PATH ?? "", PLUGIN_ROOT: root, PLUGIN_DATA: data },
    stderr: "pipe",
  });
  await client.connect(transport);
});

afterAll(async () => {
  await client.close();
  rmSync(data, { recursive: true, force: true });
});

const text = (result: { content?: unknown }) => (result.content as { type: string; text: string }[]).map((c) => c.text).join("");

it("lists greet with a closed schema and its required argument", async () => {
  const { tools } = await client.listTools();
  expect(tools.map((t) => t.name)).toEqual(["greet"]);
  expect(tools[0]!.inputSchema).toMatchObject({ type: "object", required: ["name"], additionalProperties: false });
});

it("answers in the kit's envelope", async () => {
  const result = await client.callTool({ name: "greet", arguments: { name: "Ada" } });
  expect(result.isError).toBeFalsy();
  expect(JSON.parse(text(result))).toEqual({ success: true, data: { greeting: "Hello, Ada!" } });
});

it("a missing required argument is a tool error naming it", async () => {
  const result = await client.callTool({ name: "greet", arguments: {} });
  expect(result.isError).toBe(true);
  expect(text(result)).toBe("name is required (e.g. 'Ada')");
});
`;
}

const GITIGNORE = `# Build output of \`npm run build\` (packed by \`npm pack\` through package.json "files").
/plugin.json
/mcp.json
/dist/
node_modules/
/*.tgz
`;

/** Every scaffold file: project-relative path -> content. */
export function scaffoldFiles(v: ScaffoldValues): Map<string, string> {
  return new Map([
    ["package.json", packageJson(v)],
    ["src/index.ts", indexTs(v)],
    [`skills/${v.server}/SKILL.md`, skillMd(v)],
    ["test/plugin.test.ts", pluginTest(v)],
    [".gitignore", GITIGNORE],
    [".github/workflows/test.yml", testWorkflow()],
    [".github/workflows/release.yml", releaseWorkflow(v.repository)],
  ]);
}
