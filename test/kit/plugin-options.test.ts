/**
 * definePlugin's options have an exact shape (docs/kit.md, "Writing a
 * plugin"): every bad field is named on a line of its own, the code is the
 * first bad field's rule family, and an unknown option is refused.
 */
import { describe, expect, it } from "vitest";
import { definePlugin, PluginKitError, strArg, tool } from "../../src/kit/index.js";

const ping = tool({ name: "ping", description: "Ping.", params: { q: strArg("q") }, handler: () => "pong" });
const base = { name: "p", version: "1.0.0", description: "d", tools: [ping] };

function messageOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    if (error instanceof PluginKitError) return error.message;
    throw error;
  }
  throw new Error("nothing was thrown");
}

describe("definePlugin options", () => {
  it("accepts every documented option", () => {
    const plugin = definePlugin({
      ...base,
      server: "srv",
      skills: [],
      capabilities: { groups: { all: ["ping"] } },
      logging: { envVar: "P_LOG", default: "debug" },
      env: { MODE: "x" },
      author: { name: "A", email: "a@example.org", url: "https://example.org" },
      homepage: "https://example.org",
      repository: "https://example.org/p.git",
      license: "MIT",
      keywords: ["k"],
    });
    expect(plugin.manifest()).toMatchObject({ author: { name: "A", email: "a@example.org" }, keywords: ["k"], license: "MIT" });
    expect(plugin.mcpConfig().mcpServers["srv"]?.env).toEqual({ P_LOG: "debug", MODE: "x" });
  });

  it("names every bad field, one line each, under the first field's code", () => {
    const bad = { name: "Bad--name", version: "v1", description: " ", tools: [{ name: "ping" }], env: { "1X": "y", PLUGIN_DATA: "/d" }, keywords: "k", extra: true };
    expect(() => definePlugin(bad as never)).toThrowWithCode(PluginKitError, "PLUGIN_NAME_INVALID");
    const lines = messageOf(() => definePlugin(bad as never)).split("\n");
    expect(lines).toEqual([
      'name: must be 1-64 of a-z 0-9 - . with no --, .. or edge - or . (e.g. my-plugin), found "Bad--name"',
      'version: must be a SemVer string, found "v1"',
      "description: must be a non-empty string",
      "tools[0]: was not built with tool()",
      expect.stringMatching(/^env\.1X: key "1X" must be an environment variable name$/),
      "env.PLUGIN_DATA: key PLUGIN_DATA is set by Hermes and must not be declared",
      "keywords: must be a list of strings",
      "unknown option 'extra'",
    ]);
    for (const line of lines) expect(line.length).toBeLessThan(120);
  });

  it.each([
    ["an unknown option", { instructions: "x" }, "PLUGIN_DEFINITION_INVALID", /^unknown option 'instructions'$/],
    ["a logging section with an unknown key", { logging: { envVar: "X", level: "info" } }, "LOGGING_INVALID", /^logging: unknown option 'level' \(expected only envVar, default\)$/],
    ["a misspelt option (the nearest named)", { hoks: {} }, "PLUGIN_DEFINITION_INVALID", /^unknown option 'hoks'; did you mean 'hooks'\?$/],
    ["a misspelt logging key", { logging: { envVar: "X", defualt: "info" } }, "LOGGING_INVALID", /^logging: unknown option 'defualt'; did you mean 'default'\? \(expected only envVar, default\)$/],
    ["a misspelt capabilities key (it would enable every tool)", { capabilities: { groups: {}, enabeld: ["x"] } }, "CAPABILITY_INVALID", /^capabilities: unknown option 'enabeld'; did you mean 'enabled'\? \(expected only groups, enabled\)$/],
    ["a bad logging default", { logging: { envVar: "X", default: "loud" } }, "LOGGING_INVALID", /^logging\.default: must be debug, info, warning or error, found "loud"$/],
    ["an author with an unknown key", { author: { name: "A", phone: "1" } }, "PLUGIN_DEFINITION_INVALID", /^author: unknown option 'phone' \(expected only name, email, url\)$/],
    ["a skill that is not a pluginSkill() result", { skills: ["skills/x"] }, "PLUGIN_DEFINITION_INVALID", /^skills\[0\]: must be a pluginSkill\(\) result$/],
    ["a non-object", null, "PLUGIN_DEFINITION_INVALID", /^definePlugin\(\) needs an options object$/],
  ])("refuses %s", (_label, options, code, message) => {
    const input = options === null ? null : { ...base, ...options };
    expect(() => definePlugin(input as never)).toThrowWithCode(PluginKitError, code);
    expect(messageOf(() => definePlugin(input as never))).toMatch(message);
  });
});
