/**
 * Checkpoint hooks of the release pipeline: named points (step boundaries,
 * each blob pushed during an upload, before a tag is bound) where
 * `release run` injects crashes (`HERMES_PLUGIN_KIT_CRASH_AT`) to prove every
 * step resumes (docs/release-run.md, `release run`, crash injection).
 */

/**
 * Test hooks of the pipeline steps. `checkpoint(point)` is called at named
 * points (step boundaries, after each blob pushed during an upload, before a
 * tag is bound); `release run` uses it for crash injection
 * (`HERMES_PLUGIN_KIT_CRASH_AT`). Production callers pass nothing.
 */
export interface PipelineHooks {
  checkpoint?: (point: string) => void | Promise<void>;
}


/** Call the checkpoint hook, if any. */
export async function checkpoint(hooks: PipelineHooks | undefined, point: string): Promise<void> {
  if (hooks?.checkpoint !== undefined) await hooks.checkpoint(point);
}

