/**
 * Drives a generated companion under Python 3 through the recording stand-in
 * of Hermes' PluginContext (test/kit/python/host_standin.py): one JSON line
 * per request, one JSON answer per line.
 */
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { closeChild, followLines } from "./child-lines.js";

/** The stand-in script. */
export const HOST_STANDIN = path.join(path.dirname(fileURLToPath(import.meta.url)), "python", "host_standin.py");

/** A log record: [levelname, message]. */
export type LogRecord = [string, string];

/** What register(ctx) did. */
export interface Registration {
  calls: unknown[][];
  logs: LogRecord[];
  var_keyword: boolean;
  non_stdlib_imports: string[];
  /** [exception type, message] when register(ctx) raised. */
  register_error: [string, string] | null;
}

/** One answer of the stand-in. */
export interface HostAnswer {
  ok: boolean;
  value?: unknown;
  exception?: string;
  elapsed_ms: number;
  logs: LogRecord[];
}

/** A running stand-in. */
export interface HostStandIn {
  child: ChildProcess;
  registration: Registration;
  request(body: Record<string, unknown>, timeoutMs?: number): Promise<HostAnswer>;
  stderr(): string;
  close(): Promise<void>;
}

/** Start the stand-in on `companionDir` with exactly `env` (plus PATH) in `cwd`; `settings` are the host's plugin settings. */
export async function startHost(companionDir: string, options: { env: Record<string, string>; cwd: string; settings?: Record<string, unknown> }): Promise<HostStandIn> {
  const args = [HOST_STANDIN, companionDir, ...(options.settings ? [JSON.stringify(options.settings)] : [])];
  const child = spawn("python3", args, { cwd: options.cwd, env: options.env, stdio: ["pipe", "pipe", "pipe"] });
  const waiting: Array<(line: string) => void> = [];
  const lines: string[] = [];
  const stderr = followLines(child, (line) => {
    const next = waiting.shift();
    if (next) next(line);
    else lines.push(line);
  });
  const nextLine = (timeoutMs: number) =>
    new Promise<string>((resolve, reject) => {
      const queued = lines.shift();
      if (queued !== undefined) return resolve(queued);
      const timer = setTimeout(() => reject(new Error(`host stand-in answered nothing in ${timeoutMs} ms; stderr: ${stderr().slice(-2000)}`)), timeoutMs);
      waiting.push((line) => {
        clearTimeout(timer);
        resolve(line);
      });
    });
  const registration = JSON.parse(await nextLine(20_000)) as Registration;
  return {
    child,
    registration,
    stderr,
    async request(body, timeoutMs = 30_000) {
      child.stdin?.write(JSON.stringify(body) + "\n");
      return JSON.parse(await nextLine(timeoutMs)) as HostAnswer;
    },
    close: () => closeChild(child, 5000),
  };
}

/** The environment of a Hermes process for the stand-in: PATH with node on it, HOME, HERMES_HOME, plus `extra`. */
export function hostEnvironment(home: string, extra: Record<string, string> = {}): Record<string, string> {
  return { PATH: `${path.dirname(process.execPath)}:/usr/bin:/bin`, HOME: home, HERMES_HOME: path.join(home, ".hermes"), ...extra };
}
