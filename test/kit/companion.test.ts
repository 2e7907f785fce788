/**
 * The native companion under Python 3 (docs/kit.md; Python kit commands, middleware and hooks,
 * A.7, A.12, B.1, B.2, B.4): the generated `__init__.py` is loaded by a
 * recording stand-in of Hermes' PluginContext and every hook, command and
 * middleware is fired through the real bridge to the real built server.
 * Exact return shapes, the log lines, and the fail-closed cases (server
 * killed mid-call, timeout, malformed answer, a throwing callback).
 */
import { createHash } from "node:crypto";
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { parse as parseYaml } from "yaml";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { BuildResult } from "../../src/kit/index.js";
import { buildHookyPackage } from "./companion-fixture.js";
import { tempDir } from "./fixtures.js";
import { hostEnvironment, startHost, type HostAnswer, type HostStandIn, type LogRecord } from "./python-host.js";

const dirs: string[] = [];
let pkg: string;
let result: BuildResult;
let home: string;
let host: HostStandIn;
const extraHosts: HostStandIn[] = [];

beforeAll(async () => {
  const built = await buildHookyPackage();
  dirs.push(built.source);
  pkg = built.pkg;
  result = built.result;
  home = tempDir("hooky-home");
  dirs.push(home);
  host = await startHost(path.join(pkg, "host", "hooky-host"), { env: hostEnvironment(home, { SECRET_TOKEN: "must-not-leak", OPENAI_API_KEY: "sk-not-for-plugins" }), cwd: home });
});
afterEach(async () => {
  while (extraHosts.length > 0) await extraHosts.pop()?.close();
});
afterAll(async () => {
  await host?.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const hook = (name: string, kwargs: Record<string, unknown>) => host.request({ op: "hook", name, kwargs });
const messages = (answer: HostAnswer, level?: string) => answer.logs.filter(([l]) => level === undefined || l === level).map(([, m]) => m);
const ELAPSED = "elapsed_ms=\\d+\\.\\d{2}";

describe("plugin build writes the companion", () => {
  it("writes host/hooky-host with plugin.yaml (only keys Hermes reads) and __init__.py", () => {
    expect(result.plugin).toMatchObject({ hooks: ["on_session_start", "post_tool_call", "pre_gateway_dispatch", "pre_llm_call", "pre_tool_call", "transform_llm_output"], commands: ["fail", "quiet", "shout"], middleware: ["llm_request", "tool_request"], companion: "host/hooky-host" });
    expect(result.files).toEqual(expect.arrayContaining(["host/hooky-host/plugin.yaml", "host/hooky-host/__init__.py"]));
    const manifest = parseYaml(readFileSync(path.join(pkg, "host", "hooky-host", "plugin.yaml"), "utf8"));
    expect(manifest).toEqual({
      name: "hooky-host",
      version: "1.2.3",
      description: "Hooks, slash commands and middleware of hooky (native companion of the portable package; install both).",
      provides_hooks: ["on_session_start", "post_tool_call", "pre_gateway_dispatch", "pre_llm_call", "pre_tool_call", "transform_llm_output"],
    });
  });
});

describe("register(ctx) under the recording stand-in", () => {
  it("registers commands, middleware, hooks (each sorted) with the host's signatures, then the summary line", () => {
    expect(host.registration.calls).toEqual([
      ["register_command", "fail", "Always fails.", ""],
      ["register_command", "quiet", "Answers nothing.", ""],
      ["register_command", "shout", "Shout the text.", "<text>"],
      ["register_middleware", "llm_request"],
      ["register_middleware", "tool_request"],
      ["register_hook", "on_session_start"],
      ["register_hook", "post_tool_call"],
      ["register_hook", "pre_gateway_dispatch"],
      ["register_hook", "pre_llm_call"],
      ["register_hook", "pre_tool_call"],
      ["register_hook", "transform_llm_output"],
    ]);
    expect(host.registration.logs).toEqual([
      [
        "INFO",
        "hermes_plugin_kit: registered plugin lifecycle; plugin=hooky-host; commands=fail,quiet,shout; cli_commands=<none>; tools=<none>; middlewares=llm_request,tool_request; " +
          "hooks=on_session_start,post_tool_call,pre_gateway_dispatch,pre_llm_call,pre_tool_call,transform_llm_output; skills=<none>; skipped_optional_skills=<none>; memory_providers=<none>; " +
          "image_gen_providers=<none>; video_gen_providers=<none>; capabilities=<none>; context_engine=<none>; context_engine_registration=<none>",
      ],
    ]);
    expect(host.registration.var_keyword).toBe(true);
    expect(host.registration.non_stdlib_imports).toEqual([]);
    expect(host.registration.register_error).toBeNull();
  });
});

describe("hooks through the real bridge", () => {
  it("pre_tool_call: block, approve, modify and allow, exactly", async () => {
    const block = await hook("pre_tool_call", { tool_name: "mcp__hooky__echo", args: { text: "far too long" }, session_id: "s-1", task_id: "t-1" });
    expect(block.value).toEqual({ action: "block", message: "text over 5 characters" });
    expect(block.logs).toEqual([
      ["DEBUG", 'pre_tool_call: invoked; context={"session_id": "s-1", "task_id": "t-1"}'],
      ["INFO", expect.stringMatching(new RegExp(`^pre_tool_call: ok; ${ELAPSED}; result=dict; context=\\{"session_id": "s-1", "task_id": "t-1"\\}$`))],
    ]);
    expect((await hook("pre_tool_call", { tool_name: "mcp__hooky__echo", args: { mode: "approve" } })).value).toEqual({ action: "approve", message: "needs a human", rule_key: "echo-approve" });
    expect((await hook("pre_tool_call", { tool_name: "mcp__hooky__echo", args: { mode: "modify", text: "x" } })).value).toEqual({ action: "modify", args: { mode: "modified", text: "short" } });
    const allow = await hook("pre_tool_call", { tool_name: "mcp__other__tool", args: { text: "far too long" } });
    expect(allow).toMatchObject({ ok: true, value: null });
    expect(messages(allow, "INFO")[0]).toMatch(/result=NoneType; context=\{\}$/);
    // Older hosts' mcp_<server>_<tool> names are the plugin's own tool too.
    expect((await hook("pre_tool_call", { tool_name: "mcp_hooky_echo", args: { text: "far too long" } })).value).toEqual({ action: "block", message: "text over 5 characters" });
  });

  it("pre_llm_call answers {context}, transform_llm_output a string, observers nothing", async () => {
    expect((await hook("pre_llm_call", { session_id: "s-9", user_message: "hi" })).value).toEqual({ context: "context for s-9" });
    expect((await hook("transform_llm_output", { response_text: "quiet words" })).value).toBe("QUIET WORDS");
    expect((await hook("on_session_start", { session_id: "s-9" })).value).toBeNull();
  });

  it("logs only redacted, truncated context: never payloads or secrets", async () => {
    const answer = await hook("pre_tool_call", {
      tool_name: "mcp__hooky__echo",
      args: { text: "ok", password: "hunter2" },
      session_id: "x".repeat(300),
      api_key: "sk-abcdefghijklmnopqrstu",
      parent_agent: "not JSON-able in Hermes",
    });
    const text = JSON.stringify(answer.logs);
    expect(text).not.toContain("hunter2");
    expect(text).not.toContain("sk-abcdefghijklmnopqrstu");
    expect(text).not.toContain('"text"');
    expect(messages(answer, "DEBUG")[0]).toMatch(/^pre_tool_call: invoked; context=\{"session_id": "x{184}…$/);
  });

  it("passes only the JSON values of the host's keyword arguments (objects, callables, NaN dropped)", async () => {
    const answer = await host.request({ op: "hook", name: "post_tool_call", kwargs: { tool_name: "t", result: "r", duration_ms: 3 }, objects: true });
    expect(answer.value).toEqual({ tool_name: "t", result: "r", duration_ms: 3, nested: { ok: 1, list: [1, 2.5] } });
  });
});

describe("commands and middleware through the real bridge", () => {
  it("a command answers its text; one that answers nothing answers None", async () => {
    const answer = await host.request({ op: "command", name: "shout", raw: "hello there" });
    expect(answer.value).toBe("HELLO THERE!");
    expect(answer.logs).toEqual([
      ["DEBUG", "shout: invoked; args_chars=11"],
      ["INFO", expect.stringMatching(new RegExp(`^shout: ok; ${ELAPSED}; result=str$`))],
    ]);
    expect((await host.request({ op: "command", name: "quiet", raw: "" })).value).toBeNull();
  });

  it("a throwing command raises in the host with its error type only", async () => {
    const answer = await host.request({ op: "command", name: "fail", raw: "secret words" });
    expect(answer).toMatchObject({ ok: false, exception: "PluginCallbackError" });
    expect(messages(answer, "WARNING")).toEqual([expect.stringMatching(new RegExp(`^fail: handler raised; ${ELAPSED}; error_type=RangeError$`))]);
    expect(JSON.stringify(answer.logs)).not.toContain("secret words");
  });

  it("tool_request answers {args, source, reason}; llm_request {request} or nothing", async () => {
    const tool = await host.request({ op: "middleware", kind: "tool_request", kwargs: { tool_name: "mcp__hooky__echo", args: { text: "a" }, telemetry_schema_version: "hermes.observer.v1" } });
    expect(tool.value).toEqual({ args: { text: "a", injected: 1 }, source: "hooky", reason: "test" });
    expect(tool.logs.map(([level, message]) => [level, message.replace(/elapsed_ms=\S+;/, "elapsed_ms=X;")])).toEqual([
      ["DEBUG", "tool_request middleware: invoked; context={}"],
      ["INFO", "tool_request middleware: ok; elapsed_ms=X; result=dict; context={}"],
    ]);
    expect((await host.request({ op: "middleware", kind: "llm_request", kwargs: { request: { model: "big", messages: [] } } })).value).toEqual({ request: { model: "small", messages: [] } });
    expect((await host.request({ op: "middleware", kind: "llm_request", kwargs: { request: {}, keep: true } })).value).toBeNull();
  });
});

describe("concurrent callbacks", () => {
  it("hands every caller its own answer when threads fire at once (one reads, the others wait)", async () => {
    const requests = Array.from({ length: 12 }, (_, i) => ({
      op: "hook",
      name: "pre_tool_call",
      kwargs: { tool_name: "mcp__hooky__echo", args: i % 3 === 0 ? { mode: "slow" } : { text: i % 2 === 0 ? "far too long" : "ok" } },
    }));
    const answer = await host.request({ op: "parallel", requests });
    const values = (answer.value as Array<{ ok: boolean; value: unknown }>).map((a) => a.value);
    expect(values).toEqual(requests.map((r) => ((r.kwargs.args as { text?: string }).text === "far too long" ? { action: "block", message: "text over 5 characters" } : null)));
    // Slow answers (800 ms) overlap: the whole batch takes far less than their sum.
    expect(answer.elapsed_ms).toBeLessThan(1400);
  });
});

describe("the server runs as Hermes runs stdio servers", () => {
  it("gets the filtered environment, PLUGIN_ROOT/PLUGIN_DATA, the host's working directory, and logs to mcp-stderr.log", async () => {
    const answer = await hook("pre_gateway_dispatch", {});
    const seen = answer.value as { env: string[]; cwd: string; data: string; root: string; mode: string };
    const namespace = `agent-plugin-hooky-${createHash("sha256").update("hooky").digest("hex").slice(0, 8)}`;
    expect(seen.root).toBe(pkg);
    expect(seen.data).toBe(path.join(home, ".hermes", "plugin-data", namespace));
    expect(seen.mode).toBe(`${seen.data}/mode`);
    expect(seen.cwd).toBe(home);
    expect(seen.env).not.toContain("SECRET_TOKEN");
    expect(seen.env).not.toContain("OPENAI_API_KEY");
    expect(seen.env).not.toContain("HERMES_HOME");
    expect(seen.env).toEqual(expect.arrayContaining(["HOME", "HOOKY_MODE", "PATH", "PLUGIN_DATA", "PLUGIN_ROOT"]));
    const log = readFileSync(path.join(home, ".hermes", "logs", "mcp-stderr.log"), "utf8");
    expect(log).toMatch(/===== \[[0-9T:-]+Z\] starting hermes-plugin-kit bridge 'hooky' \(hooky 1\.2\.3\) =====/);
    expect(log).toContain("hermes_plugin_kit: registered plugin lifecycle; plugin=hooky; commands=fail,quiet,shout; cli_commands=<none>; tools=echo;");
  });
});

describe("fail closed", () => {
  const expectBlocked = (answer: HostAnswer, reason: RegExp, errorType: string) => {
    expect(answer.ok).toBe(true);
    const value = answer.value as { action: string; message: string };
    expect(Object.keys(value)).toEqual(["action", "message"]);
    expect(value.action).toBe("block");
    expect(value.message).toMatch(new RegExp(`^hooky: the pre_tool_call check is unavailable \\(${reason.source}\\); the tool call was blocked$`));
    const warnings = messages(answer, "WARNING");
    expect(warnings[0]).toMatch(new RegExp(`^pre_tool_call: callback raised; ${ELAPSED}; error_type=${errorType}; context=\\{\\}$`));
    expect(warnings[1]).toMatch(/^pre_tool_call: failed closed; action=block; reason=/);
  };

  it("a throwing callback blocks; its message never reaches the host or its logs", async () => {
    const answer = await hook("pre_tool_call", { tool_name: "mcp__hooky__echo", args: { mode: "throw" } });
    expectBlocked(answer, /callback raised TypeError/, "TypeError");
    expect(JSON.stringify(answer)).not.toContain("sk-abcdefghijklmnop1234");
  });

  it("a malformed answer blocks", async () => {
    expectBlocked(await hook("pre_tool_call", { tool_name: "mcp__hooky__echo", args: { mode: "malformed" } }), /invalid answer \(the callback returned the wrong shape\)/, "BridgeProtocolError");
  });

  /**
   * Call until the bridge runs a server other than `previous`, and return its pid. A start outlives
   * the call that began it (on a loaded machine it takes longer than this plugin's 1.5 s hook
   * timeout), so the calls before it may block; bounded at 60 s.
   */
  async function serverUp(previous?: unknown): Promise<unknown> {
    const until = Date.now() + 60_000;
    while (Date.now() < until) {
      await hook("pre_tool_call", { tool_name: "x", args: {} });
      const pid = (await host.request({ op: "server_pid" })).value;
      if (pid !== null && pid !== previous) return pid;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    throw new Error("the bridge's server did not start within 60 s");
  }

  it("a timeout blocks within the bound, and the next call gets a fresh server", async () => {
    const before = await serverUp();
    const answer = await hook("pre_tool_call", { tool_name: "mcp__hooky__echo", args: { mode: "hang" } });
    expectBlocked(answer, /timed out after 1500 ms/, "BridgeTimeout");
    expect(answer.elapsed_ms).toBeGreaterThanOrEqual(1400);
    expect(answer.elapsed_ms).toBeLessThan(5000);
    expect(await serverUp(before)).not.toBe(before);
    expect((await hook("pre_tool_call", { tool_name: "mcp__hooky__echo", args: { text: "far too long" } })).value).toEqual({ action: "block", message: "text over 5 characters" });
  });

  it("a server that dies mid-call blocks", async () => {
    await serverUp();
    expectBlocked(await hook("pre_tool_call", { tool_name: "mcp__hooky__echo", args: { mode: "die" } }), /server unavailable \(it exited\)/, "BridgeUnavailable");
  });

  it("a server killed from outside mid-call blocks, and the next call restarts it", async () => {
    await hook("pre_tool_call", { tool_name: "x", args: {} });
    const answer = await host.request({ op: "kill_after", seconds: 0.3, then: { op: "hook", name: "pre_tool_call", kwargs: { tool_name: "mcp__hooky__echo", args: { mode: "slow" } } } });
    expectBlocked(answer, /server unavailable \(it exited\)/, "BridgeUnavailable");
    expect((await hook("pre_tool_call", { tool_name: "x", args: {} })).value).toBeNull();
  });

  it("other hooks and middleware re-raise on failure (the host logs and continues)", async () => {
    const answer = await hook("pre_llm_call", { mode: "throw", session_id: "s" });
    expect(answer).toMatchObject({ ok: false, exception: "PluginCallbackError" });
    expect(messages(answer, "WARNING")).toEqual([expect.stringMatching(new RegExp(`^pre_llm_call: callback raised; ${ELAPSED}; error_type=Error; context=\\{"session_id": "s"\\}$`))]);
  });
});

describe("finding the portable package", () => {
  async function hostFor(companion: string, settings?: Record<string, unknown>): Promise<HostStandIn> {
    const started = await startHost(companion, { env: hostEnvironment(home), cwd: home, ...(settings ? { settings } : {}) });
    extraHosts.push(started);
    return started;
  }

  it("works with both directories installed side by side (plugins/hooky, plugins/hooky-host)", async () => {
    const plugins = tempDir("hooky-plugins");
    dirs.push(plugins);
    cpSync(pkg, path.join(plugins, "hooky"), { recursive: true, filter: (src) => !src.includes(`${path.sep}host`) });
    cpSync(path.join(pkg, "host", "hooky-host"), path.join(plugins, "hooky-host"), { recursive: true });
    const sideBySide = await hostFor(path.join(plugins, "hooky-host"));
    expect((await sideBySide.request({ op: "command", name: "shout", raw: "hi" })).value).toBe("HI!");
  });

  it("fails closed, naming the problem, when the package is missing or another version", async () => {
    const alone = tempDir("hooky-alone");
    dirs.push(alone);
    cpSync(path.join(pkg, "host", "hooky-host"), path.join(alone, "hooky-host"), { recursive: true });
    const lonely = await hostFor(path.join(alone, "hooky-host"));
    expect(lonely.registration.logs[0]).toEqual(["WARNING", expect.stringContaining("hermes_plugin_kit: companion of hooky cannot reach its server yet: portable package hooky 1.2.3 not found")]);
    const blocked = await lonely.request({ op: "hook", name: "pre_tool_call", kwargs: { tool_name: "x", args: {} } });
    expect((blocked.value as { message: string }).message).toContain("portable package hooky 1.2.3 not found");
    // Within the restart back-off the next call fails at once.
    const again = await lonely.request({ op: "hook", name: "pre_tool_call", kwargs: { tool_name: "x", args: {} } });
    expect((again.value as { action: string }).action).toBe("block");
    expect(again.elapsed_ms).toBeLessThan(200);

    mkdirSync(path.join(alone, "hooky"));
    writeFileSync(path.join(alone, "hooky", "plugin.json"), JSON.stringify({ name: "hooky", version: "9.9.9" }));
    const mismatched = await hostFor(path.join(alone, "hooky-host"));
    expect(mismatched.registration.logs[0]?.[1]).toContain("version mismatch: this companion is hooky 1.2.3, found hooky 9.9.9");
  });

  it("refuses to register on a host without a registrar it needs, naming it", async () => {
    const old = await hostFor(path.join(pkg, "host", "hooky-host"), { _missing_registrars: ["register_middleware"] });
    expect(old.registration.register_error).toEqual(["RuntimeError", "this Hermes has no register_middleware: hooky-host needs a host with hooks, slash commands and request middleware"]);
    expect(old.registration.calls).toEqual([]);
  });

  it("uses the plugin_root setting of the host when set", async () => {
    const alone = tempDir("hooky-configured");
    dirs.push(alone);
    cpSync(path.join(pkg, "host", "hooky-host"), path.join(alone, "hooky-host"), { recursive: true });
    const configured = await hostFor(path.join(alone, "hooky-host"), { plugin_root: pkg });
    expect(configured.registration.logs.filter(([level]: LogRecord) => level === "WARNING")).toEqual([]);
    expect((await configured.request({ op: "command", name: "shout", raw: "x" })).value).toBe("X!");
  });
});

describe("the companion trusts nothing the server answers", () => {
  const FAKE = `import { createInterface } from "node:readline";
const mode = process.env.FAKE_MODE;
const send = (m) => process.stdout.write(JSON.stringify(m) + "\\n");
const bridge = { version: mode === "old-bridge" ? 2 : 1, hooks: mode === "missing-hook" ? [] : ["on_session_start", "post_tool_call", "pre_gateway_dispatch", "pre_llm_call", "pre_tool_call", "transform_llm_output"], commands: ["fail", "quiet", "shout"], middleware: ["llm_request", "tool_request"] };
const lines = createInterface({ input: process.stdin });
lines.on("line", (line) => {
  const m = JSON.parse(line);
  if (m.method === "initialize" && mode === "slow-start" && !m.delayed) {
    return setTimeout(() => lines.emit("line", JSON.stringify({ ...m, delayed: true })), 2500);
  }
  if (m.method === "initialize") {
    const capabilities = mode === "no-bridge" ? { tools: {} } : { tools: {}, experimental: { "hermes-plugin-kit/bridge": bridge } };
    return send({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities, serverInfo: { name: mode === "wrong-server" ? "other" : "hooky", version: "1.2.3" } } });
  }
  if (m.id === undefined) return;
  if (mode === "garbage") return process.stdout.write("[db] Connecting\\n");
  if (mode === "wrong-shape") return send({ jsonrpc: "2.0", id: m.id, result: { value: { action: "block" } } });
  if (mode === "no-value") return send({ jsonrpc: "2.0", id: m.id, result: {} });
  if (mode === "rpc-error") return send({ jsonrpc: "2.0", id: m.id, error: { code: -32603, message: "internal detail" } });
  if (mode === "huge") return process.stdout.write("x".repeat(9 * 1024 * 1024) + "\\n");
  if (mode === "exit") process.exit(3);
  if (mode === "slow-start") return send({ jsonrpc: "2.0", id: m.id, result: { value: null } });
});
`;
  /** A copy of the package whose mcp.json starts the fake server in `mode`, and a host stand-in for it. */
  async function fakeHost(mode: string): Promise<HostStandIn> {
    const copy = tempDir(`hooky-fake-${mode}`);
    dirs.push(copy);
    cpSync(pkg, copy, { recursive: true });
    writeFileSync(path.join(copy, "fake.mjs"), FAKE);
    const mcp = JSON.parse(readFileSync(path.join(copy, "mcp.json"), "utf8"));
    mcp.mcpServers.hooky = { type: "stdio", command: "node", args: ["${PLUGIN_ROOT}/fake.mjs"], env: { FAKE_MODE: mode } };
    writeFileSync(path.join(copy, "mcp.json"), JSON.stringify(mcp));
    const fake = await startHost(path.join(copy, "host", "hooky-host"), { env: hostEnvironment(home), cwd: home });
    extraHosts.push(fake);
    return fake;
  }

  it("a start slower than the hook timeout blocks the call that began it, then serves the next call", async () => {
    const fake = await fakeHost("slow-start");
    const first = await fake.request({ op: "hook", name: "pre_tool_call", kwargs: { tool_name: "x", args: {} } });
    expect(first.value).toMatchObject({ action: "block", message: expect.stringContaining("timed out after 1500 ms (waiting for the server to start)") });
    const until = Date.now() + 30_000;
    let pid: unknown = null;
    while (pid === null && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      pid = (await fake.request({ op: "server_pid" })).value;
    }
    expect(pid).not.toBeNull();
    expect((await fake.request({ op: "hook", name: "pre_tool_call", kwargs: { tool_name: "x", args: {} } })).value).toBeNull();
  });

  it.each([
    ["wrong-server", /malformed answer \(initialize is not from server hooky\)/, "BridgeProtocolError"],
    ["no-bridge", /server does not speak bridge version 1; rebuild the plugin/, "BridgeProtocolError"],
    ["old-bridge", /server does not speak bridge version 1; rebuild the plugin/, "BridgeProtocolError"],
    ["missing-hook", /server does not serve every hooks of this companion; install both directories from one build/, "BridgeProtocolError"],
    ["garbage", /malformed answer \(not JSON-RPC\)/, "BridgeProtocolError"],
    ["wrong-shape", /invalid answer \(wrong shape for pre_tool_call\)/, "BridgeProtocolError"],
    ["no-value", /malformed answer \(no value\)/, "BridgeProtocolError"],
    ["rpc-error", /malformed answer \(error -32603\)/, "BridgeProtocolError"],
    ["huge", /malformed answer \(message too large\)/, "BridgeProtocolError"],
    ["exit", /server unavailable \(it exited\)/, "BridgeUnavailable"],
  ])("pre_tool_call blocks when the server answers %s", async (mode, reason, errorType) => {
    const fake = await fakeHost(mode);
    const answer = await fake.request({ op: "hook", name: "pre_tool_call", kwargs: { tool_name: "x", args: {} } });
    const value = answer.value as { action: string; message: string };
    expect(value.action).toBe("block");
    expect(value.message).toMatch(reason);
    expect(messages(answer, "WARNING")[0]).toContain(`error_type=${errorType}`);
    expect(JSON.stringify(answer)).not.toContain("internal detail");
  });
});
