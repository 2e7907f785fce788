/**
 * Hooks, slash commands and request middleware in definePlugin (reference
 * A.6, B.1, B.2, B.4): each rule with a passing and a failing case and its
 * code, the exact result shapes, and the bridge methods over the SDK's
 * in-memory transport.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  BRIDGE_CAPABILITY,
  BRIDGE_METHODS,
  buildPluginPackage,
  checkHostSurface,
  companionFiles,
  definePlugin,
  normalizeCommandResult,
  normalizeHookResult,
  normalizeMiddlewareResult,
  PluginKitError,
  registrationReceipt,
  tool,
  VALID_HOOKS,
} from "../../src/kit/index.js";
import { captureKitLog, tempDir } from "./fixtures.js";

const ping = tool({ name: "ping", description: "Ping.", params: {}, handler: () => "pong" });
const fn = () => undefined;
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe("definePlugin checks the host surface", () => {
  it("accepts every VALID_HOOKS name, request middleware and commands", () => {
    expect(VALID_HOOKS).toHaveLength(39);
    const surface = checkHostSurface({
      hooks: Object.fromEntries(VALID_HOOKS.map((name) => [name, fn])),
      commands: [{ name: "/calc", description: " Calculate. ", argsHint: "<expr>", handler: fn }],
      middleware: { tool_request: fn, llm_request: fn },
      bridge: { timeoutMs: 25_000 },
    });
    expect(surface.hooks.size).toBe(39);
    expect(surface.commands).toEqual([{ name: "calc", description: "Calculate.", argsHint: "<expr>", handler: fn }]);
    expect([...surface.middleware.keys()]).toEqual(["tool_request", "llm_request"]);
    expect(surface.timeoutMs).toBe(25_000);
    expect(surface.empty).toBe(false);
    expect(checkHostSurface({})).toMatchObject({ empty: true, timeoutMs: 5000 });
  });

  it.each([
    ["an unknown hook", { hooks: { pre_tool_cal: fn } }, "HOOK_NAME_UNKNOWN"],
    ["a hook that is not a function", { hooks: { pre_tool_call: "block" } }, "HOOK_INVALID"],
    ["hooks that are not an object", { hooks: [fn] }, "HOOK_INVALID"],
    ["an uppercase command", { commands: [{ name: "Calc", description: "d", handler: fn }] }, "COMMAND_NAME_INVALID"],
    ["a command with a space", { commands: [{ name: "my calc", description: "d", handler: fn }] }, "COMMAND_NAME_INVALID"],
    ["a command with an underscore", { commands: [{ name: "my_calc", description: "d", handler: fn }] }, "COMMAND_NAME_INVALID"],
    ["a built-in command", { commands: [{ name: "/help", description: "d", handler: fn }] }, "COMMAND_NAME_BUILTIN"],
    ["a built-in alias", { commands: [{ name: "reload-mcp", description: "d", handler: fn }] }, "COMMAND_NAME_BUILTIN"],
    ["a duplicate command", { commands: [{ name: "calc", description: "d", handler: fn }, { name: "/calc", description: "d", handler: fn }] }, "COMMAND_DUPLICATE"],
    ["a command without description", { commands: [{ name: "calc", description: " ", handler: fn }] }, "COMMAND_INVALID"],
    ["a command with an unknown key", { commands: [{ name: "calc", description: "d", handler: fn, help: "x" }] }, "COMMAND_INVALID"],
    ["an execution middleware kind", { middleware: { tool_execution: fn } }, "MIDDLEWARE_KIND_UNSUPPORTED"],
    ["llm_execution", { middleware: { llm_execution: fn } }, "MIDDLEWARE_KIND_UNSUPPORTED"],
    ["an unknown middleware kind", { middleware: { api_request: fn } }, "MIDDLEWARE_KIND_UNKNOWN"],
    ["a middleware that is not a function", { middleware: { tool_request: {} } }, "MIDDLEWARE_INVALID"],
    ["a timeout at the host's 30 s", { bridge: { timeoutMs: 30_000 } }, "BRIDGE_OPTION_INVALID"],
    ["a timeout below 100 ms", { bridge: { timeoutMs: 50 } }, "BRIDGE_OPTION_INVALID"],
    ["an unknown bridge option", { bridge: { retries: 3 } }, "BRIDGE_OPTION_INVALID"],
  ])("refuses %s", (_label, options, code) => {
    expect(() => checkHostSurface(options)).toThrowWithCode(PluginKitError, code);
    expect(() => definePlugin({ name: "p", version: "1.0.0", description: "d", tools: [ping], ...(options as object) })).toThrowWithCode(PluginKitError, code);
  });
});

describe("exact result shapes", () => {
  it("pre_tool_call: the three decisions with exactly their keys, or nothing", () => {
    expect(normalizeHookResult("pre_tool_call", undefined)).toBeNull();
    expect(normalizeHookResult("pre_tool_call", { action: "block", message: "no" })).toEqual({ action: "block", message: "no" });
    expect(normalizeHookResult("pre_tool_call", { action: "approve", message: "ask" })).toEqual({ action: "approve", message: "ask" });
    expect(normalizeHookResult("pre_tool_call", { action: "approve", message: "ask", rule_key: "k" })).toEqual({ action: "approve", message: "ask", rule_key: "k" });
    expect(normalizeHookResult("pre_tool_call", { action: "modify", args: { a: 1 } })).toEqual({ action: "modify", args: { a: 1 } });
    for (const bad of [{ action: "maybe" }, { action: "block" }, { action: "block", message: " " }, { action: "block", message: "x", extra: 1 }, { action: "modify", args: [1] }, "block", true]) {
      expect(() => normalizeHookResult("pre_tool_call", bad)).toThrowWithCode(PluginKitError, "HOOK_RESULT_INVALID");
    }
  });
  it("pre_llm_call: {context}; transform hooks: a string; others: JSON", () => {
    expect(normalizeHookResult("pre_llm_call", "ctx")).toEqual({ context: "ctx" });
    expect(normalizeHookResult("pre_llm_call", { context: "ctx" })).toEqual({ context: "ctx" });
    expect(() => normalizeHookResult("pre_llm_call", { context: 1 })).toThrowWithCode(PluginKitError, "HOOK_RESULT_INVALID");
    expect(normalizeHookResult("transform_llm_output", "NEW")).toBe("NEW");
    expect(() => normalizeHookResult("transform_tool_result", { text: "x" })).toThrowWithCode(PluginKitError, "HOOK_RESULT_INVALID");
    expect(normalizeHookResult("post_tool_call", { seen: true, at: new Date(0) })).toEqual({ seen: true, at: "1970-01-01T00:00:00.000Z" });
    const cyclic: Record<string, unknown> = {};
    cyclic["self"] = cyclic;
    expect(() => normalizeHookResult("on_session_end", cyclic)).toThrowWithCode(PluginKitError, "HOOK_RESULT_INVALID");
  });
  it("commands: text or nothing; middleware: {args}/{request} with trace fields", () => {
    expect(normalizeCommandResult("calc", "4")).toBe("4");
    expect(normalizeCommandResult("calc", undefined)).toBeNull();
    expect(() => normalizeCommandResult("calc", 4)).toThrowWithCode(PluginKitError, "COMMAND_RESULT_INVALID");
    expect(normalizeMiddlewareResult("tool_request", { args: { a: 1 }, source: "s", reason: "r", name: "n" })).toEqual({ args: { a: 1 }, source: "s", reason: "r", name: "n" });
    expect(normalizeMiddlewareResult("llm_request", { request: { model: "m" } })).toEqual({ request: { model: "m" } });
    expect(normalizeMiddlewareResult("llm_request", null)).toBeNull();
    for (const [kind, bad] of [["tool_request", { request: {} }], ["llm_request", { args: {} }], ["tool_request", { args: {}, extra: 1 }], ["tool_request", { args: {}, source: 1 }], ["tool_request", "x"]] as const) {
      expect(() => normalizeMiddlewareResult(kind, bad)).toThrowWithCode(PluginKitError, "MIDDLEWARE_RESULT_INVALID");
    }
  });
});

describe("the registration receipt lists the real host surface", () => {
  it("names commands, middlewares and hooks, sorted", () => {
    expect(registrationReceipt("p", ["a"], [], [], { commands: ["zeta", "calc"], middlewares: ["tool_request"], hooks: ["pre_tool_call", "on_session_start"] })).toBe(
      "hermes_plugin_kit: registered plugin lifecycle; plugin=p; commands=calc,zeta; cli_commands=<none>; tools=a; middlewares=tool_request; " +
        "hooks=on_session_start,pre_tool_call; skills=<none>; skipped_optional_skills=<none>; memory_providers=<none>; image_gen_providers=<none>; " +
        "video_gen_providers=<none>; capabilities=<none>; context_engine=<none>; context_engine_registration=<none>",
    );
  });
});

describe("bridge methods on the server", () => {
  const lines = captureKitLog();

  const plugin = definePlugin({
    name: "bridged",
    version: "1.0.0",
    description: "d",
    server: "bridged",
    tools: [ping],
    hooks: {
      pre_tool_call: (event, ctx) => (ctx.ownTool(event.tool_name) === "ping" ? { action: "block", message: "no pings" } : undefined),
      pre_llm_call: () => {
        throw new SyntaxError("secret sk-abcdefghijklmnopqrstu");
      },
      transform_llm_output: () => 42 as unknown as string,
    },
    commands: [{ name: "hello", description: "Say hello.", handler: (raw, ctx) => `hello ${raw} from ${ctx.plugin}` }],
    middleware: { tool_request: (payload) => ({ args: { ...(payload["args"] as object), n: 1 } }) },
  });

  async function connect(served = plugin) {
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const server = served.createServer();
    await server.connect(serverSide);
    const client = new Client({ name: "t", version: "1" });
    await client.connect(clientSide);
    return { client, server };
  }
  const anyResult = z.object({ value: z.unknown() }).loose();

  it("advertises the bridge capability and answers through methods tools/list does not show", async () => {
    const { client, server } = await connect();
    expect(client.getServerCapabilities()?.experimental?.[BRIDGE_CAPABILITY]).toEqual({ version: 1, hooks: ["pre_llm_call", "pre_tool_call", "transform_llm_output"], commands: ["hello"], middleware: ["tool_request"] });
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(["ping"]);
    const block = await client.request({ method: BRIDGE_METHODS.hook, params: { name: "pre_tool_call", kwargs: { tool_name: "mcp__bridged__ping", args: {}, session_id: "s", api_key: "sk-abcdefghijklmnopqrstu" } } }, anyResult);
    expect(block).toEqual({ value: { action: "block", message: "no pings" } });
    expect(lines.some((l) => / DEBUG bridged pre_tool_call: invoked; context=\{"session_id":"s"\}$/.test(l.trim()))).toBe(true);
    expect(lines.some((l) => / INFO bridged pre_tool_call: ok; elapsed_ms=\d+\.\d{2}; result=object; context=\{"session_id":"s"\}$/.test(l.trim()))).toBe(true);
    expect(await client.request({ method: BRIDGE_METHODS.command, params: { name: "hello", rawArgs: "you" } }, anyResult)).toEqual({ value: "hello you from bridged" });
    expect(await client.request({ method: BRIDGE_METHODS.middleware, params: { kind: "tool_request", kwargs: { args: { a: 0 } } } }, anyResult)).toEqual({ value: { args: { a: 0, n: 1 } } });
    expect(lines.join("")).not.toContain("sk-abcdefghijklmnopqrstu");
    await client.close();
    await server.close();
  });

  it("answers coded JSON-RPC errors: callback raised (type only), invalid result, unknown name, bad params", async () => {
    const { client, server } = await connect();
    const failure = (params: unknown, method: string = BRIDGE_METHODS.hook) => client.request({ method, params: params as Record<string, unknown> }, anyResult).then(() => null, (error: { code: number; data: unknown }) => ({ code: error.code, data: error.data }));
    expect(await failure({ name: "pre_llm_call", kwargs: {} })).toEqual({ code: -32010, data: { code: "CALLBACK_RAISED", errorType: "SyntaxError" } });
    expect(lines.some((l) => /WARNING bridged pre_llm_call: callback raised; elapsed_ms=\S+; error_type=SyntaxError; context=\{\}$/.test(l.trim()))).toBe(true);
    expect(lines.filter((l) => !l.includes(" DEBUG ")).join("")).not.toContain("sk-abcdefghijklmnopqrstu");
    expect(await failure({ name: "transform_llm_output", kwargs: {} })).toEqual({ code: -32011, data: { code: "RESULT_INVALID" } });
    expect(await failure({ name: "on_session_start", kwargs: {} })).toEqual({ code: -32601, data: { code: "UNKNOWN_NAME" } });
    expect(await failure({ name: 5 })).toEqual({ code: -32602, data: { code: "PARAMS_INVALID" } });
    expect(await failure({ name: "pre_tool_call", kwargs: [] })).toEqual({ code: -32602, data: { code: "PARAMS_INVALID" } });
    expect(await failure({ kind: "llm_request", kwargs: {} }, BRIDGE_METHODS.middleware)).toEqual({ code: -32601, data: { code: "UNKNOWN_NAME" } });
    await client.close();
    await server.close();
  });

  it("sends no secret a callback's answer threw: RESULT_INVALID's message redacted, a throwing getter answered as the callback raising", async () => {
    // An answer whose toJSON throws a secret (RESULT_INVALID, message redacted) and one whose getter throws (the callback raising).
    const leaky = definePlugin({
      name: "leaky",
      version: "1.0.0",
      description: "d",
      tools: [ping],
      hooks: {
        post_tool_call: () => ({ toJSON: () => { throw new Error("password=sk-abcdefghijklmnopqrstu"); } }) as never,
        pre_llm_call: () => ({ get context(): string { throw new TypeError("token: sk-abcdefghijklmnopqrstu"); } }),
      },
    });
    const { client, server } = await connect(leaky);
    const failure = (params: unknown) => client.request({ method: BRIDGE_METHODS.hook, params: params as Record<string, unknown> }, anyResult).then(() => null, (error: { code: number; message: string; data: unknown }) => ({ code: error.code, message: error.message, data: error.data }));
    const invalid = await failure({ name: "post_tool_call", kwargs: {} });
    expect(invalid).toEqual({ code: -32011, message: expect.stringMatching(/ post_tool_call result must be JSON-serialisable: password=\*\*\*$/), data: { code: "RESULT_INVALID" } });
    const getter = await failure({ name: "pre_llm_call", kwargs: {} });
    expect(getter).toEqual({ code: -32010, message: expect.stringMatching(/ callback raised$/), data: { code: "CALLBACK_RAISED", errorType: "TypeError" } });
    expect(lines.filter((l) => !l.includes(" DEBUG ")).join("")).not.toContain("sk-abcdefghijklmnopqrstu");
    await client.close();
    await server.close();
  });

  it("a plugin without host surface advertises no bridge and answers no bridge method", async () => {
    const plain = definePlugin({ name: "plain", version: "1.0.0", description: "d", tools: [ping] });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const server = plain.createServer();
    await server.connect(serverSide);
    const client = new Client({ name: "t", version: "1" });
    await client.connect(clientSide);
    expect(client.getServerCapabilities()?.experimental).toBeUndefined();
    await expect(client.request({ method: BRIDGE_METHODS.hook, params: { name: "pre_tool_call", kwargs: {} } }, anyResult)).rejects.toMatchObject({ code: -32601 });
    expect(companionFiles(plain)).toBeNull();
    await client.close();
    await server.close();
  });
});

describe("plugin build and the companion directory", () => {
  function project(body: string): string {
    const dir = tempDir("hooks-build");
    dirs.push(dir);
    writeFileSync(path.join(dir, "package.json"), '{"name":"hb","version":"1.0.0","type":"module"}');
    writeFileSync(path.join(dir, "entry.js"), `import { definePlugin, tool } from "hermes-plugin-kit";\nconst ping = tool({ name: "ping", description: "Ping.", params: {}, handler: () => "pong" });\nexport default definePlugin({ name: "hb", version: "1.0.0", description: "d", tools: [ping]${body} });\n`);
    return dir;
  }

  it("removes its own stale companion when the hooks are gone, and never a directory it did not write", async () => {
    const dir = project(', hooks: { on_session_start: () => undefined }');
    const out = path.join(dir, "out");
    const first = await buildPluginPackage({ entry: path.join(dir, "entry.js"), outDir: out });
    expect(first.plugin.companion).toBe("host/hb-host");
    expect(existsSync(path.join(out, "host", "hb-host", "__init__.py"))).toBe(true);
    writeFileSync(path.join(dir, "entry.js"), readFileSync(path.join(dir, "entry.js"), "utf8").replace(", hooks: { on_session_start: () => undefined }", ""));
    const second = await buildPluginPackage({ entry: path.join(dir, "entry.js"), outDir: out });
    expect(second.plugin.companion).toBeUndefined();
    expect(existsSync(path.join(out, "host"))).toBe(false);

    const foreign = project(', commands: [{ name: "x", description: "d", handler: () => "" }]');
    mkdirSync(path.join(foreign, "out", "host", "hb-host"), { recursive: true });
    writeFileSync(path.join(foreign, "out", "host", "hb-host", "__init__.py"), "def register(ctx): pass\n");
    await expect(buildPluginPackage({ entry: path.join(foreign, "entry.js"), outDir: path.join(foreign, "out") })).rejects.toThrowWithCode(PluginKitError, "BUILD_OUTPUT_INVALID");
    expect(readFileSync(path.join(foreign, "out", "host", "hb-host", "__init__.py"), "utf8")).toBe("def register(ctx): pass\n");
    // Refused before anything was written.
    expect(existsSync(path.join(foreign, "out", "dist"))).toBe(false);
    expect(existsSync(path.join(foreign, "out", "plugin.json"))).toBe(false);
  });
});
