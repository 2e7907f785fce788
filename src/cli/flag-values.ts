/**
 * Structured flag values (a JSON object, a positive integer, a run id) read
 * into values or refused as usage errors (exit 2, src/cli/output.ts): one line
 * saying what was expected and what kind of value was found. Commander hands
 * every value over as a string; these run in the action, before any work.
 */
import { UsageError } from "./output.js";

/**
 * A flag that takes a positive integer of at most `maxDigits` digits (`--run-attempt`, `--timeout-seconds`).
 * @returns undefined when the flag was not given.
 * @throws UsageError naming the flag and the value found.
 */
export function positiveIntegerFlag(flag: string, value: string | undefined, maxDigits = 7): number | undefined {
  if (value === undefined) return undefined;
  if (!new RegExp(`^[1-9][0-9]{0,${maxDigits - 1}}$`).test(value)) throw new UsageError(`${flag}: expected a positive integer (1, 2, ...), found ${JSON.stringify(value)}`);
  return Number(value);
}

/**
 * An integer flag within `[min, max]` (`--timeout <ms>`).
 * @throws UsageError naming the flag, the range and the value found.
 */
export function integerInRangeFlag(flag: string, value: string, min: number, max: number): number {
  const n = /^[0-9]{1,9}$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isInteger(n) || n < min || n > max) throw new UsageError(`${flag}: expected an integer between ${min} and ${max}, found ${JSON.stringify(value)}`);
  return n;
}

/**
 * `--run-id`: a workflow run id, decimal digits without a leading zero (the tested manifest's `run_id`).
 * @throws UsageError naming the value found.
 */
export function runIdFlag(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (!/^[1-9][0-9]{0,19}$/.test(value)) throw new UsageError(`--run-id: expected a workflow run id (decimal digits without a leading zero, e.g. 12345), found ${JSON.stringify(value)}`);
  return value;
}
