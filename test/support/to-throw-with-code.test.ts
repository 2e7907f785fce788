/**
 * The shared `toThrowWithCode` matcher: passes only for the named code (and
 * class, when given), for functions, async functions, promises and `.rejects`.
 */
import { describe, expect, it } from "vitest";
import { HermesPluginKitError } from "../../src/contract/errors.js";
import { PluginKitError } from "../../src/kit/errors.js";

const kitError = () => {
  throw new PluginKitError("TOOL_NAME_INVALID", "bad name");
};
const otherError = () => {
  throw new HermesPluginKitError("OCI_DIGEST_MISMATCH", "digest");
};

describe("toThrowWithCode", () => {
  it("passes for the thrown code, with or without the class", () => {
    expect(kitError).toThrowWithCode("TOOL_NAME_INVALID");
    expect(kitError).toThrowWithCode(PluginKitError, "TOOL_NAME_INVALID");
    expect(kitError).toThrowWithCode(HermesPluginKitError, "TOOL_NAME_INVALID");
    expect(kitError).not.toThrowWithCode("TOOL_NAME_RESERVED");
  });

  it("fails for another code, another class, no code or no throw, naming what it found", () => {
    expect(() => expect(kitError).toThrowWithCode("TOOL_NAME_RESERVED")).toThrow(/expected an error with code "TOOL_NAME_RESERVED", but found PluginKitError with code "TOOL_NAME_INVALID": bad name/);
    expect(() => expect(otherError).toThrowWithCode(PluginKitError, "OCI_DIGEST_MISMATCH")).toThrow(/expected a PluginKitError with code "OCI_DIGEST_MISMATCH", but found HermesPluginKitError/);
    expect(() =>
      expect(() => {
        throw new Error("plain");
      }).toThrowWithCode("X"),
    ).toThrow(/found Error \(no code\): plain/);
    expect(() => expect(() => 1).toThrowWithCode("X")).toThrow(/nothing was thrown/);
    expect(() => expect(kitError).not.toThrowWithCode("TOOL_NAME_INVALID")).toThrow(/expected an error with code "TOOL_NAME_INVALID" not to be thrown, but it was/);
  });

  it("awaits promises, async functions and .rejects", async () => {
    const rejecting = () => Promise.reject(new PluginKitError("BUILD_OUTPUT_INVALID", "x"));
    await expect(rejecting).toThrowWithCode(PluginKitError, "BUILD_OUTPUT_INVALID");
    await expect(rejecting()).toThrowWithCode("BUILD_OUTPUT_INVALID");
    await expect(rejecting()).rejects.toThrowWithCode(PluginKitError, "BUILD_OUTPUT_INVALID");
    await expect(expect(Promise.resolve(1)).toThrowWithCode("BUILD_OUTPUT_INVALID")).rejects.toThrow(/nothing was thrown/);
    await expect(expect(rejecting()).rejects.toThrowWithCode("BUILD_ENTRY_INVALID")).rejects.toThrow(/found PluginKitError with code "BUILD_OUTPUT_INVALID"/);
  });

  it("judges an error a test caught itself", async () => {
    const caught = await Promise.reject(new PluginKitError("BUILD_OUTPUT_INVALID", "x")).catch((e: unknown) => e);
    expect(caught).toThrowWithCode(PluginKitError, "BUILD_OUTPUT_INVALID");
    expect(() => expect(caught).toThrowWithCode("BUILD_ENTRY_INVALID")).toThrow(/found PluginKitError with code "BUILD_OUTPUT_INVALID"/);
    expect(() => expect("not an error").toThrowWithCode("X")).toThrow(TypeError);
  });

  it("refuses a call without a code", () => {
    expect(() => expect(kitError).toThrowWithCode(PluginKitError)).toThrow(TypeError);
  });
});
