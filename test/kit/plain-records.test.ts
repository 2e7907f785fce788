/**
 * definePlugin's map-like options (hooks, middleware, bridge, env, logging, author, capabilities and the options
 * object itself) are plain objects of own enumerable data entries: a hook given through a prototype, an accessor
 * or an own `__proto__` key (from JSON.parse) is refused with the kit's code, never dropped or read silently.
 */
import { describe, expect, it } from "vitest";
import { definePlugin, PluginKitError, tool } from "../../src/kit/index.js";

const ping = tool({ name: "ping", description: "Ping.", params: {}, handler: () => "pong" });
const fn = () => undefined;
const base = { name: "p", version: "1.0.0", description: "d", tools: [ping] };
const withGetter = (key: string, value: unknown) => Object.defineProperty({}, key, { get: () => value, enumerable: true });

/** [name, extra options, code, message part]. */
const refused: [string, Record<string, unknown>, string, string][] = [
  ["hooks from a prototype", { hooks: Object.create({ pre_tool_call: fn }) }, "HOOK_INVALID", "definePlugin hooks must be a plain object (an object literal or Object.create(null)) of own enumerable entries, found an object with another prototype (an inherited value is not read); it inherits 'pre_tool_call', which would be ignored"],
  ["middleware from a prototype", { middleware: Object.create({ tool_request: fn }) }, "MIDDLEWARE_INVALID", "definePlugin middleware must be a plain object"],
  ["hooks with an own __proto__ key", { hooks: JSON.parse('{"__proto__":{"a":1}}') }, "HOOK_INVALID", "found an own '__proto__' key"],
  ["hooks with a getter", { hooks: withGetter("pre_tool_call", fn) }, "HOOK_INVALID", "found an accessor (getter/setter) for 'pre_tool_call'"],
  ["hooks with a non-enumerable entry", { hooks: Object.defineProperty({}, "pre_tool_call", { value: fn, enumerable: false }) }, "HOOK_INVALID", "found a non-enumerable entry 'pre_tool_call'"],
  ["hooks a class instance", { hooks: new (class Hooks { pre_tool_call = fn })() }, "HOOK_INVALID", "of own enumerable entries, found an instance of Hooks"],
  ["bridge from a prototype", { bridge: Object.create({ timeoutMs: 1000 }) }, "BRIDGE_OPTION_INVALID", "definePlugin bridge must be a plain object"],
  ["env from a prototype", { env: Object.create({ API_KEY: "x" }) }, "PLUGIN_DEFINITION_INVALID", "env: must be a plain object (an object literal or Object.create(null)) of own enumerable entries, found an object with another prototype (an inherited value is not read); it inherits 'API_KEY', which would be ignored"],
  ["env with an own __proto__ key", { env: JSON.parse('{"__proto__":"x"}') }, "PLUGIN_DEFINITION_INVALID", "env: must be a plain object"],
  ["logging from a prototype", { logging: Object.create({ envVar: "P_LOG" }) }, "LOGGING_INVALID", "logging: must be a plain object"],
  ["capabilities.groups with a getter", { capabilities: { groups: withGetter("g", ["ping"]) } }, "CAPABILITY_INVALID", "capabilities.groups: must be a plain object"],
];

describe("definePlugin refuses map-like options that are not plain objects of own entries", () => {
  it.each(refused)("%s", (_name, extra, code, message) => {
    expect(() => definePlugin({ ...base, ...extra } as never)).toThrowWithCode(PluginKitError, code);
    expect(() => definePlugin({ ...base, ...extra } as never)).toThrow(message);
  });

  it("the options object itself: another prototype or an own __proto__ key is PLUGIN_DEFINITION_INVALID", () => {
    expect(() => definePlugin(Object.assign(Object.create({ hooks: { pre_tool_call: fn } }), base))).toThrowWithCode(PluginKitError, "PLUGIN_DEFINITION_INVALID");
    expect(() => definePlugin(Object.assign(JSON.parse('{"__proto__":{}}'), base))).toThrowWithCode(PluginKitError, "PLUGIN_DEFINITION_INVALID");
  });

  it("accepts object literals, Object.create(null) and JSON.parse output", () => {
    const nullHooks = Object.assign(Object.create(null), { pre_tool_call: fn });
    expect(definePlugin({ ...base, hooks: nullHooks }).host.hooks.size).toBe(1);
    expect(definePlugin({ ...base, hooks: { pre_tool_call: fn }, middleware: { tool_request: fn }, bridge: { timeoutMs: 1000 } }).host.middleware.size).toBe(1);
    expect(() => definePlugin({ ...base, env: JSON.parse('{"API_KEY":"x"}'), logging: { envVar: "P_LOG" }, capabilities: { groups: { g: ["ping"] } } })).not.toThrow();
  });
});
