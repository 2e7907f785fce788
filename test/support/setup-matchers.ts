/** vitest `setupFiles` entry: registers the shared custom matchers for every test file. */
import { expect } from "vitest";
import { toThrowWithCode } from "./to-throw-with-code.js";

expect.extend({ toThrowWithCode });
