/**
 * The `release run` command line that resumes a run, as printed when a run
 * is interrupted: the same workspace and source and every option that changes
 * what the run does (`--plain-http`, `--registry-config`, `--attest-key`,
 * `--pass-env`, `--run-id`, `--chunk-size`, ...), each word shell-quoted, so
 * that typing it as printed resumes the same run (docs/release-run.md,
 * `release run`). Never a secret: credentials come from the environment, and
 * {@link RunOptions.credentials} is not shown.
 */
import { resolve } from "node:path";
import { shellWord } from "../src/contract/grammar.js";
import { kitCliCommand } from "./cli-command.js";
import type { RunOptions } from "./run-context.js";

/** The options of a run its command line repeats; `dryRun` for `release run --dry-run`. */
export type RunCommandOptions = Pick<
  RunOptions,
  "workspace" | "source" | "runId" | "runAttempt" | "plainHttp" | "registryConfig" | "attestKey" | "chunkSize" | "mcpSdkVersion" | "githubRelease" | "gatePassEnv"
> & { dryRun?: boolean };

/** A path as the run resolved it (relative to our working directory), so the line works from any directory. */
function absolute(path: string): string {
  return path === "" ? path : resolve(path);
}

/**
 * The command that reruns `options`: `<cli> release run --workspace W --source S [flags]`.
 * @param cli how this kit's CLI is run (default {@link kitCliCommand}: `hermes-plugin-kit` or `node <its entry>`), already shell-quoted.
 */
export function runCommandLine(options: RunCommandOptions, cli: string = kitCliCommand()): string {
  const args = ["release", "run", "--workspace", absolute(options.workspace), "--source", absolute(options.source)];
  if (options.runId !== undefined) args.push("--run-id", options.runId);
  if (options.runAttempt !== undefined) args.push("--run-attempt", String(options.runAttempt));
  if (options.plainHttp === true) args.push("--plain-http");
  if (options.registryConfig !== undefined) args.push("--registry-config", absolute(options.registryConfig));
  if (options.attestKey !== undefined) args.push("--attest-key", absolute(options.attestKey));
  if (options.chunkSize !== undefined) args.push("--chunk-size", String(options.chunkSize));
  if (options.mcpSdkVersion !== undefined) args.push("--mcp-sdk-version", options.mcpSdkVersion);
  if (options.githubRelease === true) args.push("--github-release");
  if (options.dryRun === true) args.push("--dry-run");
  // Last: its value list ends at the line's end.
  if (options.gatePassEnv !== undefined && options.gatePassEnv.length > 0) args.push("--pass-env", ...options.gatePassEnv);
  return [cli, ...args.map(shellWord)].join(" ");
}
