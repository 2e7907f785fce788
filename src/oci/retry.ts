/**
 * The one retry rule of every HTTP request the product sends (registry
 * client, token endpoints, the anonymous privacy probe, the GitHub REST
 * client): which answers are retried, how long to wait (`Retry-After` first,
 * RFC 9110 section 10.2.3; else exponential backoff with jitter), and when to
 * give up. Bounded: at most `maxAttempts` requests, no single wait longer
 * than `maxDelayMs`; a server asking for a longer wait is answered at once
 * with a give-up verdict (the caller's error says "rate limited" for 429).
 */

import { interruption } from "../contract/errors.js";
import { requireOptionalNumber, requireOptionalString } from "./arguments.js";

/** Retry budget (attempts and delays in ms). */
export interface RetryPolicy {
  /** Total attempts per request, including the first. Default 5. */
  maxAttempts: number;
  /** First backoff delay (ms); doubles each attempt. Default 200. */
  baseDelayMs: number;
  /** Largest single delay (ms), also the largest `Retry-After` honoured. Default 10 000. */
  maxDelayMs: number;
}

/** The default budget: 5 attempts, 200 ms doubling with jitter, at most 10 s per wait. */
export const DEFAULT_RETRY_POLICY: Readonly<RetryPolicy> = Object.freeze({ maxAttempts: 5, baseDelayMs: 200, maxDelayMs: 10_000 });

/** Statuses a registry request is retried on (rate limit, transient server failures). */
export const RETRYABLE_STATUS: ReadonlySet<number> = new Set([429, 500, 502, 503, 504]);

/** A policy from partial options, each value clamped to a sane range. */
export function retryPolicy(partial: Partial<RetryPolicy> = {}): RetryPolicy {
  const clamp = (value: number | undefined, fallback: number, min: number, max: number): number =>
    typeof value === "number" && Number.isFinite(value) ? Math.min(max, Math.max(min, Math.floor(value))) : fallback;
  return {
    maxAttempts: clamp(partial.maxAttempts, DEFAULT_RETRY_POLICY.maxAttempts, 1, 20),
    baseDelayMs: clamp(partial.baseDelayMs, DEFAULT_RETRY_POLICY.baseDelayMs, 0, 60_000),
    maxDelayMs: clamp(partial.maxDelayMs, DEFAULT_RETRY_POLICY.maxDelayMs, 0, 300_000),
  };
}

/**
 * Parse `Retry-After` (delay-seconds or HTTP-date, RFC 9110 section 10.2.3) into ms.
 * @param value the header's value (absent: no header). @param now the current time (ms since the epoch).
 * @returns undefined when absent or unparsable.
 * @throws OciError `OCI_ARGUMENT_INVALID` (`value` neither a string nor absent, `now` not a non-negative number).
 */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
  requireOptionalString(value, "parseRetryAfter(value, now)", "value", "the Retry-After header's value");
  requireOptionalNumber(now, "parseRetryAfter(value, now)", "now", "milliseconds since the epoch (the current time)");
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^[0-9]+$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/** The exponential backoff before attempt `attempt + 1` (ms): base * 2^(attempt-1), jitter 0.75-1.25, capped. */
export function backoffDelay(policy: RetryPolicy, attempt: number): number {
  const raw = policy.baseDelayMs * 2 ** Math.max(0, attempt - 1);
  const jitter = 0.75 + Math.random() * 0.5;
  return Math.min(policy.maxDelayMs, Math.round(raw * jitter));
}

/** What to do after a retryable answer. */
export type RetryVerdict =
  | { retry: true; delayMs: number }
  | { retry: false; reason: string };

/**
 * Decide whether attempt `attempt` (1-based) that got a retryable answer is
 * followed by another, and after how long. `requestedDelayMs` is what the
 * server asked for (`Retry-After`, or a rate-limit reset), if anything.
 * @returns `{retry: false, reason}` when the budget is spent or the server
 *   asked for a wait longer than `maxDelayMs`; `reason` is a sentence fragment.
 */
export function retryVerdict(policy: RetryPolicy, attempt: number, requestedDelayMs: number | undefined): RetryVerdict {
  if (attempt >= policy.maxAttempts) return { retry: false, reason: `gave up after ${attempt} attempt(s)` };
  if (requestedDelayMs !== undefined && requestedDelayMs > policy.maxDelayMs) {
    return { retry: false, reason: `asked to wait ${Math.ceil(requestedDelayMs / 1000)} s, beyond the retry budget (${policy.maxDelayMs} ms per wait)` };
  }
  return { retry: true, delayMs: requestedDelayMs ?? backoffDelay(policy, attempt) };
}

/** Describe a retryable status for an error message: `rate limited (HTTP 429)` or `HTTP 503`. */
export function describeRetryableStatus(status: number): string {
  return status === 429 ? "rate limited (HTTP 429)" : `HTTP ${status}`;
}

/**
 * Resolve after `ms` milliseconds; an aborted `signal` ends the wait at once.
 * @throws InterruptedError `INTERRUPTED` (`signal` aborted, before or during the wait).
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  const stopped = interruption(signal);
  if (stopped !== undefined) return Promise.reject(stopped);
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(interruption(signal));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
