import { describe, expect, it } from "vitest";
import {
  checkHermesToolNames,
  clampedHermesToolName,
  hermesToolName,
  portableServerName,
  PluginKitError,
  toolName,
  validateServerName,
  validateToolName,
} from "../../src/kit/index.js";


describe("tool names (Python kit validate_tool_name)", () => {
  it("accepts the grammar and returns the name", () => {
    expect(validateToolName("calculate")).toBe("calculate");
    expect(validateToolName("unit_convert2")).toBe("unit_convert2");
  });
  it.each([
    ["", "TOOL_NAME_REQUIRED"],
    [undefined, "TOOL_NAME_REQUIRED"],
    ["Calculate", "TOOL_NAME_INVALID"],
    ["read-file", "TOOL_NAME_INVALID"],
    ["2fast", "TOOL_NAME_INVALID"],
    ["memory", "TOOL_NAME_RESERVED"],
    ["todo", "TOOL_NAME_RESERVED"],
    ["session_search", "TOOL_NAME_RESERVED"],
    ["delegate_task", "TOOL_NAME_RESERVED"],
    ["memory_store", "TOOL_NAME_RESERVED_PREFIX"],
    ["list_resources", "TOOL_NAME_MCP_UTILITY"],
    ["read_resource", "TOOL_NAME_MCP_UTILITY"],
    ["list_prompts", "TOOL_NAME_MCP_UTILITY"],
    ["get_prompt", "TOOL_NAME_MCP_UTILITY"],
  ])("refuses %j with %s", (name, code) => {
    expect(() => validateToolName(name)).toThrowWithCode(PluginKitError, code);
  });
  it("checks an explicit namespace", () => {
    expect(validateToolName("discord_read", { namespace: "discord" })).toBe("discord_read");
    expect(() => validateToolName("slack_read", { namespace: "discord" })).toThrowWithCode(PluginKitError, "TOOL_NAME_NAMESPACE");
    expect(() => validateToolName("todo_x", { namespace: "todo" })).toThrowWithCode(PluginKitError, "TOOL_NAME_NAMESPACE");
  });
  it("joins namespace, verb and noun", () => {
    expect(toolName("discord", "read", "thread")).toBe("discord_read_thread");
    expect(toolName("calc", "", "_sum_")).toBe("calc_sum");
    expect(() => toolName("Calc", "add", "x")).toThrowWithCode(PluginKitError, "TOOL_NAME_INVALID");
  });
});

describe("Hermes names (Agent Plugins v1 loader; Hermes MCP client)", () => {
  it("builds mcp__<server>__<tool> from the sanitized slug", () => {
    expect(hermesToolName("calculator", "calculate")).toBe("mcp__calculator__calculate");
    expect(hermesToolName("My.Server", "read-file")).toBe("mcp__my_server__read_file");
    expect(portableServerName("--Weird Name__")).toBe("weird-name");
    expect(portableServerName("***")).toBe("plugin");
  });
  it("clamps names over 64 characters as new hosts do", () => {
    expect(clampedHermesToolName("a-very-long-server-name-for-testing", "fetch_the_extremely_detailed_forecast_report")).toBe(
      "mcp__a_very_long_server_name_for_testing__fetch_the_ext_59899458",
    );
    expect(clampedHermesToolName("calculator", "calculate")).toBe("mcp__calculator__calculate");
  });
  it("reports duplicates, sanitize collisions and names over 64 characters", () => {
    expect(checkHermesToolNames("calculator", ["calculate", "unit_convert"])).toEqual([]);
    expect(checkHermesToolNames("s", ["a", "a"]).map((p) => p.code)).toEqual(["TOOL_NAME_DUPLICATE"]);
    expect(checkHermesToolNames("s", ["read-file", "read_file"]).map((p) => p.code)).toEqual(["TOOL_NAME_COLLISION"]);
    const long = "t".repeat(70 - "mcp__s__".length);
    expect(hermesToolName("s", long)).toHaveLength(70);
    expect(checkHermesToolNames("s", [long]).map((p) => p.code)).toEqual(["HERMES_NAME_TOO_LONG"]);
    expect(checkHermesToolNames("s", ["t".repeat(64 - 8)])).toEqual([]);
  });
  it("validates server names and refuses built-in toolset names", () => {
    expect(validateServerName("calculator")).toBe("calculator");
    expect(() => validateServerName("terminal")).toThrowWithCode(PluginKitError, "SERVER_NAME_SHADOWS_TOOLSET");
    expect(() => validateServerName("kanban")).toThrowWithCode(PluginKitError, "SERVER_NAME_SHADOWS_TOOLSET");
    expect(() => validateServerName("hermes-cli")).toThrowWithCode(PluginKitError, "SERVER_NAME_SHADOWS_TOOLSET");
    // A toolset's own name, and the hermes-* prefix, each say which rule they break and the fix.
    expect(() => validateServerName("terminal")).toThrow("shadows the built-in Hermes toolset 'terminal' (Hermes registers a toolset alias under the server name); fix: choose a distinctive name");
    expect(() => validateServerName("hermes-plugin-kit")).toThrow("server name 'hermes-plugin-kit' starts with 'hermes-', the prefix of Hermes' own platform toolsets (hermes-*), and Hermes registers a toolset alias under the server name; fix: choose a name without that prefix");
    expect(() => validateServerName("Calc")).toThrowWithCode(PluginKitError, "SERVER_NAME_INVALID");
    expect(() => validateServerName("calc-")).toThrowWithCode(PluginKitError, "SERVER_NAME_INVALID");
  });
});
