/**
 * The two halves every line-speaking child of the kit tests needs: its stdout
 * split into lines (handed to `onLine` in order) with stderr collected, and a
 * close that ends stdin and kills the child if it lingers.
 */
import type { ChildProcess } from "node:child_process";

/** Feed each stdout line of `child` to `onLine`; returns a getter of everything it wrote to stderr. */
export function followLines(child: ChildProcess, onLine: (line: string) => void): () => string {
  let buffer = "";
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  child.stdout?.on("data", (chunk: Buffer) => {
    buffer += chunk.toString("utf8");
    let newline: number;
    while ((newline = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
      onLine(line);
    }
  });
  return () => stderr;
}

/** End `child`'s stdin and wait for it to exit; SIGKILL after `killAfterMs`. */
export function closeChild(child: ChildProcess, killAfterMs: number): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once("exit", () => resolve());
    child.stdin?.end();
    setTimeout(() => child.kill("SIGKILL"), killAfterMs).unref();
  });
}
