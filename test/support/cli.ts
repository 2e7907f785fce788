/** Run the built `hermes-plugin-kit` CLI (dist/src/cli/main.cjs, package.json `bin`) as a real subprocess. */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

export const CLI = fileURLToPath(new URL("../../dist/src/cli/main.cjs", import.meta.url));

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Options of {@link runProcess}: `env` replaces the environment when given whole (use `{ ...process.env, ... }`). */
export interface ProcessOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  input?: string;
  timeoutMs?: number;
}

/** Run `command argv` (no shell), collect stdout and stderr as UTF-8; SIGKILL after `timeoutMs` (default 120 s). */
export function runProcess(command: string, argv: readonly string[], options: ProcessOptions = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, argv, { cwd: options.cwd, env: options.env ?? process.env, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 120_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, stdout, stderr });
    });
    child.stdin.end(options.input ?? "");
  });
}

/** Run the CLI with `args`; `env` is merged over a copy of process.env. */
export function runCli(args: string[], options: { cwd?: string; env?: Record<string, string | undefined>; input?: string; timeoutMs?: number } = {}): Promise<CliResult> {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first`);
  return runProcess(process.execPath, [CLI, ...args], { ...options, env: { ...process.env, ...options.env } });
}
