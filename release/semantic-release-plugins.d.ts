/**
 * Type declarations for the semantic-release plugin used directly by
 * `release/intent.ts` (the package ships no types).
 */
declare module "@semantic-release/release-notes-generator" {
  /** Render release notes for `context.commits` (plugin step `generateNotes`). */
  export function generateNotes(pluginConfig: Record<string, unknown>, context: Record<string, unknown>): Promise<string>;
}
