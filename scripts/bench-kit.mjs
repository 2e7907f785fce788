#!/usr/bin/env node
/**
 * Kit benchmark (issue 7): tool-call round trip over stdio through the real
 * MCP SDK client, kit server vs the same handler on a bare SDK `McpServer`
 * (both bundled the same way by esbuild), and the bundled example server's
 * start to first `tools/list` answer (spawn + initialize + tools/list).
 *
 * Needs the compiled kit (`npx tsc -p tsconfig.build.json`, done by
 * `npm run build`). Environment knobs: BENCH_KIT_CALLS (measured calls per
 * server per round, default 200), BENCH_KIT_ROUNDS (default 20),
 * BENCH_KIT_STARTS (default 15).
 *
 * Last line: `kit_p50_ratio=<kit p50 / bare p50> start_ms=<median start>`.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const kitIndex = path.join(root, "dist", "src", "kit", "index.js");
if (!existsSync(kitIndex)) {
  process.stderr.write("bench-kit: dist/src/kit/index.js is missing; run `npm run build` first\n");
  process.exit(2);
}
const { buildPluginPackage } = await import(kitIndex);
const { build } = await import("esbuild");
const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js");

const CALLS = Number(process.env.BENCH_KIT_CALLS ?? 200);
const ROUNDS = Number(process.env.BENCH_KIT_ROUNDS ?? 20);
const STARTS = Number(process.env.BENCH_KIT_STARTS ?? 15);
const WARMUP = 200;

const work = mkdtempSync(path.join(os.tmpdir(), "hpk-bench-kit-"));
const handlerSource = "function add({ a, b }) { return { sum: a + b }; }";

try {
  // Kit server: built by `plugin build` from a small entry.
  const kitSrc = path.join(work, "kit");
  mkdirSync(path.join(kitSrc, "src"), { recursive: true });
  writeFileSync(path.join(kitSrc, "package.json"), '{"name":"bench-kit","version":"1.0.0","type":"module"}');
  writeFileSync(
    path.join(kitSrc, "src", "entry.js"),
    `import { definePlugin, numberArg, tool } from "hermes-plugin-kit";
${handlerSource}
export default definePlugin({
  name: "bench-kit", version: "1.0.0", description: "Bench.", server: "benchkit",
  tools: [tool({ name: "add", description: "Add two numbers.", readOnly: true,
    params: { a: numberArg("a", { required: true, example: 1 }), b: numberArg("b", { required: true, example: 2 }) },
    handler: add })],
});
`,
  );
  await buildPluginPackage({ entry: path.join(kitSrc, "src", "entry.js"), outDir: path.join(work, "kit-out") });

  // Bare server: the same handler on the SDK's McpServer (zod validation, hand-made envelope), same bundler settings.
  const bareFile = path.join(work, "bare", "server.js");
  await build({
    stdin: {
      contents: `import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";
${handlerSource}
const server = new McpServer({ name: "benchbare", version: "1.0.0" });
server.registerTool("add", { description: "Add two numbers.", inputSchema: { a: z.number(), b: z.number() }, annotations: { readOnlyHint: true } },
  async (args) => { const envelope = { success: true, data: add(args) }; return { content: [{ type: "text", text: JSON.stringify(envelope) }], structuredContent: envelope }; });
await server.connect(new StdioServerTransport());
`,
      resolveDir: root,
      loader: "js",
    },
    bundle: true, platform: "node", format: "esm", target: "node20", outfile: bareFile, logLevel: "silent",
    banner: { js: 'import { createRequire as __r } from "node:module";\nconst require = __r(import.meta.url);' },
  });

  // The example, freshly built.
  const exampleOut = path.join(work, "example");
  await buildPluginPackage({ entry: path.join(root, "examples", "calculator", "src", "server.ts"), outDir: exampleOut });

  const baseEnv = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "" };
  async function connect(script, env = {}) {
    const transport = new StdioClientTransport({ command: process.execPath, args: [script], env: { ...baseEnv, PLUGIN_ROOT: path.dirname(path.dirname(script)), ...env }, stderr: "ignore" });
    const client = new Client({ name: "bench", version: "1.0.0" });
    await client.connect(transport);
    return client;
  }
  async function roundTrip(client, i) {
    const started = performance.now();
    const result = await client.callTool({ name: "add", arguments: { a: i, b: 1 } });
    const elapsed = performance.now() - started;
    if (result.isError || result.structuredContent?.data?.sum !== i + 1) throw new Error(`unexpected result ${JSON.stringify(result)}`);
    return elapsed;
  }
  const quantile = (values, q) => {
    const sorted = [...values].sort((x, y) => x - y);
    return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  };

  const kit = await connect(path.join(work, "kit-out", "dist", "server.js"));
  const bare = await connect(bareFile);
  for (let i = 0; i < WARMUP; i += 1) {
    await roundTrip(kit, i);
    await roundTrip(bare, i);
  }
  // Calls alternate kit/bare one by one (the order flips every round), so both
  // see the same machine load; this box is shared.
  const kitTimes = [];
  const bareTimes = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    for (let i = 0; i < CALLS; i += 1) {
      if (round % 2 === 0) {
        kitTimes.push(await roundTrip(kit, i));
        bareTimes.push(await roundTrip(bare, i));
      } else {
        bareTimes.push(await roundTrip(bare, i));
        kitTimes.push(await roundTrip(kit, i));
      }
    }
  }
  await kit.close();
  await bare.close();

  const starts = [];
  for (let i = 0; i < STARTS; i += 1) {
    const started = performance.now();
    const client = await connect(path.join(exampleOut, "dist", "server.js"));
    const { tools } = await client.listTools();
    starts.push(performance.now() - started);
    if (tools.length !== 2) throw new Error(`expected 2 tools, got ${tools.length}`);
    await client.close();
  }

  const fmt = (ms) => ms.toFixed(3);
  const kitP50 = quantile(kitTimes, 0.5);
  const bareP50 = quantile(bareTimes, 0.5);
  const startMedian = quantile(starts, 0.5);
  console.log(`machine: ${os.cpus().length} cpu, node ${process.version}, load ${os.loadavg().map((l) => l.toFixed(2)).join(" ")}`);
  console.log(`round trip over stdio (${kitTimes.length} calls each, alternating call by call, after ${WARMUP} warm-up calls):`);
  console.log(`  kit  p50=${fmt(kitP50)} ms p99=${fmt(quantile(kitTimes, 0.99))} ms`);
  console.log(`  bare p50=${fmt(bareP50)} ms p99=${fmt(quantile(bareTimes, 0.99))} ms (SDK McpServer + zod, same handler)`);
  console.log(`example bundle start -> first tools/list answer (${STARTS} starts): median=${startMedian.toFixed(0)} ms min=${Math.min(...starts).toFixed(0)} ms max=${Math.max(...starts).toFixed(0)} ms`);
  console.log(`kit_p50_ratio=${(kitP50 / bareP50).toFixed(3)} start_ms=${Math.round(startMedian)}`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
