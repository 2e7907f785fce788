/**
 * A plugin with every kind of host callback, built once per test file: the
 * generated companion is then driven under Python 3 (python-host.ts).
 *
 * `pre_tool_call` answers by `args.mode`: block (text over 5 characters for
 * its own tool), approve, modify, throw, malformed, hang, die (SIGKILLs its
 * own server), slow (answers after 800 ms); `pre_gateway_dispatch` reports
 * the server's environment names, working directory and PLUGIN_DATA.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { buildPluginPackage, type BuildResult } from "../../src/kit/index.js";
import { tempDir } from "./fixtures.js";

const ENTRY = `import { definePlugin, strArg, tool } from "hermes-plugin-kit";
const echo = tool({ name: "echo", description: "Echo.", readOnly: true, params: { text: strArg("Text.", { required: true, example: "hi" }) }, handler: ({ text }) => ({ text }) });
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
export default definePlugin({
  name: "hooky", version: "1.2.3", description: "Every host callback.", server: "hooky", tools: [echo],
  bridge: { timeoutMs: 1500 },
  hooks: {
    async pre_tool_call(event, ctx) {
      const mode = event.args?.mode;
      if (mode === "approve") return { action: "approve", message: "needs a human", rule_key: "echo-approve" };
      if (mode === "modify") return { action: "modify", args: { ...event.args, mode: "modified", text: "short" } };
      if (mode === "throw") throw new TypeError("secret detail sk-abcdefghijklmnop1234");
      if (mode === "malformed") return { action: "maybe" };
      if (mode === "hang") return new Promise(() => {});
      if (mode === "die") process.kill(process.pid, "SIGKILL");
      if (mode === "slow") await sleep(800);
      if (ctx.ownTool(event.tool_name) === "echo" && String(event.args?.text ?? "").length > 5) return { action: "block", message: "text over 5 characters" };
      return undefined;
    },
    pre_llm_call: (event) => (event.mode === "throw" ? Promise.reject(new Error("boom")) : "context for " + String(event.session_id)),
    transform_llm_output: (event) => String(event.response_text ?? "").toUpperCase(),
    on_session_start: () => undefined,
    post_tool_call: (event) => event,
    pre_gateway_dispatch: () => ({ env: Object.keys(process.env).sort(), cwd: process.cwd(), data: process.env.PLUGIN_DATA, root: process.env.PLUGIN_ROOT, mode: process.env.HOOKY_MODE }),
  },
  commands: [
    { name: "/shout", description: "Shout the text.", argsHint: "<text>", handler: (raw) => raw.toUpperCase() + "!" },
    { name: "fail", description: "Always fails.", handler: () => { throw new RangeError("nope"); } },
    { name: "quiet", description: "Answers nothing.", handler: () => undefined },
  ],
  middleware: {
    tool_request: (payload) => ({ args: { ...payload.args, injected: 1 }, source: "hooky", reason: "test" }),
    llm_request: (payload) => (payload.keep ? undefined : { request: { ...payload.request, model: "small" } }),
  },
  env: { HOOKY_MODE: "\${PLUGIN_DATA}/mode" },
});
`;

/** Build the fixture into `<dir>/pkg`; returns the package directory and the build result. */
export async function buildHookyPackage(): Promise<{ source: string; pkg: string; result: BuildResult }> {
  const source = tempDir("hooky-src");
  mkdirSync(path.join(source, "src"), { recursive: true });
  writeFileSync(path.join(source, "package.json"), '{"name":"hooky","version":"1.2.3","type":"module"}');
  writeFileSync(path.join(source, "src", "entry.js"), ENTRY);
  const pkg = path.join(source, "pkg");
  const result = await buildPluginPackage({ entry: path.join(source, "src", "entry.js"), outDir: pkg });
  return { source, pkg, result };
}
