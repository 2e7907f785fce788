/**
 * The reason text of a request that got no HTTP status, shared by the GitHub API client
 * (`src/github/api.ts`) and the registry's anonymous-read probe (`src/fetch/anonymous-probe.ts`).
 * Kept apart from the client so that the probe, which runs on every `fetch`, does not load Octokit.
 */

/** A short reason for a request that got no HTTP status (the innermost cause's message, at most 200 characters). */
export function networkReason(error: unknown): string {
  if (!(error instanceof Error)) return "unknown error";
  const cause = (error as { cause?: unknown }).cause;
  const inner = cause instanceof Error ? ((cause as { cause?: unknown }).cause instanceof Error ? ((cause as { cause: Error }).cause.message) : cause.message) : undefined;
  const text = inner ?? error.message;
  return text.length > 200 ? text.slice(0, 197) + "..." : text;
}
