#!/usr/bin/env node
/**
 * Kit benchmark: tool-call round trip over stdio through the real MCP SDK
 * client, kit server vs the same handler on a bare SDK `McpServer` (both
 * bundled the same way by esbuild); the native companion's bridge round trip
 * (a `pre_tool_call` hook fired by a Python 3 host stand-in through the
 * generated `__init__.py` to the kit server) against the same bare
 * `tools/call` round trip; and the bundled example server's start to first
 * `tools/list` answer (spawn + initialize + tools/list).
 *
 * Needs the compiled kit (`npx tsc -p tsconfig.build.json`, done by
 * `npm run build`). Environment knobs: BENCH_KIT_CALLS (measured calls per
 * server per round, default 200), BENCH_KIT_ROUNDS (default 20),
 * BENCH_KIT_STARTS (default 15).
 *
 * Last line: `kit_p50_ratio=<kit p50 / bare p50> bridge_p50_ratio=<bridge p50 /
 * bare p50> start_ms=<median start>`. Needs `python3` for the bridge figure.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createInterface } from "node:readline";
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

/** The Python side of the bridge measurement: loads the companion as Hermes would and times pre_tool_call. */
const BRIDGE_DRIVER = `import importlib.util, json, os, sys, time
sys.dont_write_bytecode = True
directory = sys.argv[1]
spec = importlib.util.spec_from_file_location("hermes_plugins.bench_kit_host", os.path.join(directory, "__init__.py"), submodule_search_locations=[directory])
module = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = module
spec.loader.exec_module(module)
class Host:
    def __init__(self):
        self.hooks = {}
    def register_hook(self, hook_name, callback):
        self.hooks[hook_name] = callback
    def register_command(self, name, handler, description="", args_hint="", argument_mode=None):
        pass
    def register_middleware(self, kind, callback):
        pass
host = Host()
module.register(host)
hook = host.hooks["pre_tool_call"]
for line in sys.stdin:
    times = []
    for i in range(int(line)):
        started = time.perf_counter()
        answer = hook(tool_name="mcp__benchkit__add", args={"a": i, "b": 1}, session_id="bench", task_id="t")
        times.append((time.perf_counter() - started) * 1000.0)
        if answer is not None:
            print(json.dumps({"error": "unexpected answer", "answer": answer}), flush=True)
            sys.exit(1)
    print(json.dumps(times), flush=True)
`;
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
  hooks: { pre_tool_call: (event) => (event.args?.a < 0 ? { action: "block", message: "negative" } : undefined) },
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

  // The bridge: a Python 3 host stand-in loads the generated companion and fires pre_tool_call; it
  // answers one JSON list of per-call milliseconds for each "<n>" line it reads.
  const driverFile = path.join(work, "bridge_driver.py");
  writeFileSync(driverFile, BRIDGE_DRIVER);
  const driver = spawn("python3", [driverFile, path.join(work, "kit-out", "host", "bench-kit-host")], {
    cwd: work,
    env: { PATH: `${path.dirname(process.execPath)}:${process.env.PATH ?? ""}`, HOME: work, HERMES_HOME: path.join(work, "hermes-home") },
    stdio: ["pipe", "pipe", "inherit"],
  });
  const driverLines = createInterface({ input: driver.stdout });
  const pendingRuns = [];
  driverLines.on("line", (line) => pendingRuns.shift()?.(line));
  const bridgeRun = (n) =>
    new Promise((resolve, reject) => {
      pendingRuns.push((line) => {
        const parsed = JSON.parse(line);
        if (!Array.isArray(parsed)) reject(new Error(`bridge driver failed: ${line}`));
        else resolve(parsed);
      });
      driver.stdin.write(`${n}\n`);
    });

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

  // Bridge vs bare tools/call: round by round (order flipping), so both see the same load.
  await bridgeRun(WARMUP);
  const bridgeTimes = [];
  const bareTimesForBridge = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    const runBare = async () => {
      for (let i = 0; i < CALLS; i += 1) bareTimesForBridge.push(await roundTrip(bare, i));
    };
    if (round % 2 === 0) {
      bridgeTimes.push(...(await bridgeRun(CALLS)));
      await runBare();
    } else {
      await runBare();
      bridgeTimes.push(...(await bridgeRun(CALLS)));
    }
  }
  driver.stdin.end();
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
  const bridgeP50 = quantile(bridgeTimes, 0.5);
  const bareBridgeP50 = quantile(bareTimesForBridge, 0.5);
  console.log(`bridge round trip (${bridgeTimes.length} pre_tool_call hooks from the Python host stand-in, alternating round by round with ${bareTimesForBridge.length} bare tools/call):`);
  console.log(`  bridge p50=${fmt(bridgeP50)} ms p99=${fmt(quantile(bridgeTimes, 0.99))} ms`);
  console.log(`  bare   p50=${fmt(bareBridgeP50)} ms p99=${fmt(quantile(bareTimesForBridge, 0.99))} ms`);
  console.log(`example bundle start -> first tools/list answer (${STARTS} starts): median=${startMedian.toFixed(0)} ms min=${Math.min(...starts).toFixed(0)} ms max=${Math.max(...starts).toFixed(0)} ms`);
  console.log(`kit_p50_ratio=${(kitP50 / bareP50).toFixed(3)} bridge_p50_ratio=${(bridgeP50 / bareBridgeP50).toFixed(3)} start_ms=${Math.round(startMedian)}`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
