/**
 * CLI wiring of `hermes-plugin-kit release <step>`. Steps up to the tested
 * bytes are registered by `release-build.ts`; privacy, stage, promote,
 * publish and GitHub Release steps by `release-publish.ts`.
 */
import type { Command } from "commander";
import type { GroupRegistration } from "../usage.js";
import { registerReleaseBuildSteps } from "./release-build.js";
import { registerReleasePublishSteps } from "./release-publish.js";
import { registerReleaseAttestSteps } from "./release-attest.js";
import { registerReleaseDemo } from "./release-demo.js";

/** Register `release` and its steps on `program`. */
export function registerReleaseCommands(program: Command, options: GroupRegistration = {}): void {
  const release = program.command("release").description("Maintainer release pipeline steps (each prints JSON and can be rerun).");
  if (options.subcommands === false) return;
  registerReleaseBuildSteps(release);
  registerReleasePublishSteps(release);
  registerReleaseAttestSteps(release);
  // One output convention for every step: one JSON object on stdout, failures included; `--json` is accepted everywhere.
  for (const step of release.commands) {
    if (!step.options.some((o) => o.long === "--json")) step.option("--json", "a release step always prints one JSON object on stdout, failures included; --json also keeps the error line off stderr");
  }
  registerReleaseDemo(release);
}
