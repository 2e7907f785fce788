/**
 * `toThrowWithCode`: the one matcher every test uses to assert a coded error
 * (the shape of sigstore-js' matcher of the same name). Registered for all
 * tests by `test/support/setup-matchers.ts` (vitest `setupFiles`); its types
 * are in `test/support/matchers.d.ts`.
 *
 * ```ts
 * expect(() => validateToolName("Calc")).toThrowWithCode("TOOL_NAME_INVALID");
 * expect(() => validateToolName("Calc")).toThrowWithCode(PluginKitError, "TOOL_NAME_INVALID");
 * await expect(buildPluginPackage(options)).rejects.toThrowWithCode(PluginKitError, "BUILD_OUTPUT_INVALID");
 * await expect(fetchManifest(target, ref)).toThrowWithCode("OCI_MANIFEST_TOO_LARGE");
 * const error = await runRelease(options).catch((e: unknown) => e);
 * expect(error).toThrowWithCode("RUN_STEP_DIVERGED"); // then inspect its message
 * ```
 *
 * The received value may be a function (called; a returned promise is
 * awaited), a promise (awaited), or the error itself (after `.rejects`, or an
 * `Error` a test caught to inspect further: `expect(error).toThrowWithCode(code)`).
 * With an error class, the thrown value must also be an instance of it.
 */
import type { MatcherState } from "vitest";

/** A class a thrown error must be an instance of. */
export type ErrorClass = abstract new (...args: never[]) => Error;

/** What vitest expects a synchronous matcher to return. */
interface SyncExpectationResult {
  pass: boolean;
  message: () => string;
  actual?: unknown;
  expected?: unknown;
}

type Outcome = { threw: false } | { threw: true; error: unknown };

function describeThrown(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return `${error.name}${code === undefined ? " (no code)" : ` with code ${JSON.stringify(code)}`}: ${error.message}`;
  }
  return `a non-error value ${String(error)}`;
}

function judge(this: MatcherState, outcome: Outcome, expectedClass: ErrorClass | undefined, code: string): SyncExpectationResult {
  const wanted = `${expectedClass === undefined ? "an error" : `a ${expectedClass.name}`} with code ${JSON.stringify(code)}`;
  if (!outcome.threw) return { pass: false, message: () => `expected ${wanted} to be thrown, but nothing was thrown` };
  const { error } = outcome;
  const classOk = expectedClass === undefined || error instanceof expectedClass;
  const codeOk = error !== null && typeof error === "object" && (error as { code?: unknown }).code === code;
  const pass = classOk && codeOk;
  return {
    pass,
    message: () => (pass ? `expected ${wanted} not to be thrown, but it was: ${describeThrown(error)}` : `expected ${wanted}, but found ${describeThrown(error)}`),
    actual: (error as { code?: unknown } | null)?.code,
    expected: code,
  };
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return value !== null && (typeof value === "object" || typeof value === "function") && typeof (value as { then?: unknown }).then === "function";
}

async function settle(promise: PromiseLike<unknown>): Promise<Outcome> {
  try {
    await promise;
    return { threw: false };
  } catch (error) {
    return { threw: true, error };
  }
}

/** The matcher; `expect.extend({ toThrowWithCode })` registers it. */
export function toThrowWithCode(
  this: MatcherState,
  received: unknown,
  classOrCode: ErrorClass | string,
  maybeCode?: string,
): SyncExpectationResult | Promise<SyncExpectationResult> {
  const expectedClass = typeof classOrCode === "string" ? undefined : classOrCode;
  const code = typeof classOrCode === "string" ? classOrCode : maybeCode;
  if (typeof code !== "string") throw new TypeError("toThrowWithCode needs a code: toThrowWithCode(code) or toThrowWithCode(ErrorClass, code)");
  if (this.promise === "rejects") return judge.call(this, { threw: true, error: received }, expectedClass, code);
  if (this.promise === "resolves") return judge.call(this, { threw: false }, expectedClass, code);
  if (isThenable(received)) return settle(received).then((outcome) => judge.call(this, outcome, expectedClass, code));
  if (received instanceof Error) return judge.call(this, { threw: true, error: received }, expectedClass, code);
  if (typeof received !== "function") throw new TypeError(`toThrowWithCode expects a function, a promise, an error or .rejects, got ${typeof received}`);
  let result: unknown;
  try {
    result = (received as () => unknown)();
  } catch (error) {
    return judge.call(this, { threw: true, error }, expectedClass, code);
  }
  if (isThenable(result)) return settle(result).then((outcome) => judge.call(this, outcome, expectedClass, code));
  return judge.call(this, { threw: false }, expectedClass, code);
}

/**
 * The error `p` rejects with, to inspect its code and message together (`{code: "NO_ERROR", message: ""}`
 * when it resolves, so an assertion on the code fails with a readable difference).
 */
export async function failureOf(p: Promise<unknown>): Promise<{ code?: string; message: string }> {
  try {
    await p;
  } catch (error) {
    return error as { code?: string; message: string };
  }
  return { code: "NO_ERROR", message: "" };
}
