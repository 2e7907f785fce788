/**
 * The files `hermes-plugin-kit init` writes (DESIGN.md section 6): a plugin
 * project outside this repository with the kit as an exact dev dependency by
 * name, npm-script gates (the policy's defaults), one tool with a required
 * argument, one skill, a vitest test that talks to the built server through
 * the official MCP SDK client, and GitHub workflows whose actions are pinned
 * by commit SHA.
 */

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

/** Pinned actions (the same commits this repository's workflows use). */
const CHECKOUT = "actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683 # v4.2.2";
const SETUP_NODE = "actions/setup-node@49933ea5288caeca8642d1e84afbd3f7d6820020 # v4.4.0";
const NODE_VERSION = "20.20.2";

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

function testWorkflow(): string {
  return `# Tests of the plugin. Read-only: no secrets, no write permission.
name: test

on:
  push:
  pull_request:

permissions:
  contents: read

jobs:
  test:
    runs-on: ubuntu-24.04
    timeout-minutes: 15
    steps:
      - uses: ${CHECKOUT}
        with:
          persist-credentials: false
      - uses: ${SETUP_NODE}
        with:
          node-version: "${NODE_VERSION}"
      - run: npm ci --no-audit --no-fund
      - run: npm test
      - run: npm run doctor
`;
}

function releaseWorkflow(v: ScaffoldValues): string {
  return `# Gated private release with hermes-plugin-kit: intent, release commit + tag + source bundle, the
# gates of package.json (hermesPluginKit.gates, default npm scripts) on the restored source after the
# policy's install command (default npm ci), one npm pack, tested manifest, privacy check, staging to
# ${v.repository}, atomic promotion of main + tag, receipt, immutable GitHub Release.
# Disarmed unless the repository variable SEMANTIC_RELEASE_ENABLED is exactly "true". Gate and install
# commands run without any credential variable in their environment.
name: release

on:
  push:
    branches: [main]
  workflow_dispatch:

permissions:
  contents: read

concurrency:
  group: release-main
  cancel-in-progress: false

jobs:
  release:
    if: vars.SEMANTIC_RELEASE_ENABLED == 'true'
    runs-on: ubuntu-24.04
    timeout-minutes: 60
    environment: private-artifacts
    permissions:
      contents: read
    steps:
      - uses: ${CHECKOUT}
        with:
          ref: \${{ github.sha }}
          fetch-depth: 0
          persist-credentials: false
      - uses: ${SETUP_NODE}
        with:
          node-version: "${NODE_VERSION}"
      - run: npm ci --no-audit --no-fund
      - name: Release (resumable; rerun the job to resume)
        env:
          SEMANTIC_RELEASE_ENABLED: \${{ vars.SEMANTIC_RELEASE_ENABLED }}
          GH_TOKEN: \${{ secrets.PRIVATE_ARTIFACTS_TOKEN }}
          SOURCE_PROMOTION_TOKEN: \${{ secrets.SOURCE_PROMOTION_TOKEN }}
        run: |
          git switch --force-create main "$GITHUB_SHA"
          npx hermes-plugin-kit release run --workspace "$RUNNER_TEMP/release" --run-id "$GITHUB_RUN_ID" --run-attempt "$GITHUB_RUN_ATTEMPT" --github-release
`;
}

/** Every scaffold file: project-relative path -> content. */
export function scaffoldFiles(v: ScaffoldValues): Map<string, string> {
  return new Map([
    ["package.json", packageJson(v)],
    ["src/index.ts", indexTs(v)],
    [`skills/${v.server}/SKILL.md`, skillMd(v)],
    ["test/plugin.test.ts", pluginTest(v)],
    [".gitignore", GITIGNORE],
    [".github/workflows/test.yml", testWorkflow()],
    [".github/workflows/release.yml", releaseWorkflow(v)],
  ]);
}
