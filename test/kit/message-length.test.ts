/**
 * A name echoed in a kit error is cut at 80 characters (as the contract's describeValue cuts values), with its
 * length; a name of the wrong type is named by its kind.
 */
import { describe, expect, it } from "vitest";
import { checkHermesToolNames, definePlugin, PluginKitError, tool, validateToolName } from "../../src/kit/index.js";

const handler = () => "ok";

describe("kit messages cut a long name and say what was found", () => {
  it("tool({name: 'A'.repeat(1e5)}) is TOOL_NAME_INVALID with the name cut at 80 characters", () => {
    const make = () => tool({ name: "A".repeat(1e5), description: "d", params: {}, handler });
    expect(make).toThrowWithCode(PluginKitError, "TOOL_NAME_INVALID");
    expect(make).toThrow(`tool name '${"A".repeat(77)}... (100000 characters)' must match`);
    const message = (() => { try { make(); } catch (e) { return (e as Error).message; } return ""; })();
    expect(message.length).toBeLessThan(300);
  });

  it("a long valid tool name: HERMES_NAME_TOO_LONG with the Hermes name cut", () => {
    const long = tool({ name: "a".repeat(1e5), description: "d", params: {}, handler });
    const define = () => definePlugin({ name: "p", version: "1.0.0", description: "d", tools: [long] });
    expect(define).toThrowWithCode(PluginKitError, "HERMES_NAME_TOO_LONG");
    const message = (() => { try { define(); } catch (e) { return (e as Error).message; } return ""; })();
    expect(message.length).toBeLessThan(300);
    expect(message).toContain("(100008 characters)' is 100008 characters; the limit is 64");
    expect(checkHermesToolNames("p", ["b".repeat(200)])[0]?.message.length).toBeLessThan(300);
  });

  it("a short name is shown whole", () => {
    expect(() => tool({ name: "Bad", description: "d", params: {}, handler })).toThrow("tool name 'Bad' must match");
    expect(tool({ name: "good", description: "d", params: {}, handler }).name).toBe("good");
  });

  it("validateToolName(5) says what was found", () => {
    expect(() => validateToolName(5)).toThrowWithCode(PluginKitError, "TOOL_NAME_REQUIRED");
    expect(() => validateToolName(5)).toThrow("tool name is required (a non-empty string), found a number");
    expect(() => validateToolName("")).toThrow("found an empty string");
    expect(validateToolName("ok_name")).toBe("ok_name");
  });
});
