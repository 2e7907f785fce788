/** Types of the shared custom matchers registered by `test/support/setup-matchers.ts`. */
import "vitest";
import type { ErrorClass } from "./to-throw-with-code.js";

interface CodedErrorMatchers<R = unknown> {
  /**
   * The function (or promise, or `.rejects` value) throws an error whose
   * `code` is `code`; with `errorClass`, the error is also an instance of it.
   * Await it when the received value is a promise or an async function.
   * One signature rather than two overloads: `.rejects` keeps only the last
   * overload of a matcher.
   *
   * @example expect(fn).toThrowWithCode("TOOL_NAME_INVALID")
   * @example expect(fn).toThrowWithCode(PluginKitError, "TOOL_NAME_INVALID")
   */
  toThrowWithCode(codeOrClass: string | ErrorClass, code?: string): R;
}

declare module "vitest" {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  interface Assertion<T = any> extends CodedErrorMatchers<T> {}
}
