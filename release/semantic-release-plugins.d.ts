/**
 * Type declarations for the semantic-release plugin used directly by
 * `release/intent.ts` (the package ships no types).
 */
declare module "@semantic-release/release-notes-generator" {
  /** Render release notes for `context.commits` (plugin step `generateNotes`). */
  export function generateNotes(pluginConfig: Record<string, unknown>, context: Record<string, unknown>): Promise<string>;
}

declare module "@semantic-release/commit-analyzer" {
  /** The bump `context.commits` ask for (plugin step `analyzeCommits`); `null` for no release. */
  export function analyzeCommits(pluginConfig: Record<string, unknown>, context: Record<string, unknown>): Promise<"major" | "minor" | "patch" | null>;
}
