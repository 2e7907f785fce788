/** The one AbortSignal rule (src/contract/plain-options.ts `isAbortSignal`), shared by the option checks of src/oci and src/fetch. */
import { describe, expect, it } from "vitest";
import { isAbortSignal } from "../../src/contract/plain-options.js";

describe("isAbortSignal", () => {
  it("accepts an AbortSignal, and a signal-shaped object of another realm or library (boolean aborted, both listener functions)", () => {
    expect(isAbortSignal(new AbortController().signal)).toBe(true);
    expect(isAbortSignal(AbortSignal.abort())).toBe(true);
    expect(isAbortSignal({ aborted: false, addEventListener: () => undefined, removeEventListener: () => undefined })).toBe(true);
  });
  it("refuses anything else: no listeners, a non-boolean aborted, null, a primitive", () => {
    for (const value of [{ aborted: false }, { aborted: "no", addEventListener: () => undefined, removeEventListener: () => undefined }, { aborted: false, addEventListener: () => undefined }, null, undefined, true, "signal", 1]) {
      expect(isAbortSignal(value), String(JSON.stringify(value))).toBe(false);
    }
  });
});
