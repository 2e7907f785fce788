import type { ChildProcess } from "node:child_process";

/**
 * Stop a test's server child: SIGTERM, SIGKILL after `graceMs`, and give up waiting `graceMs` after
 * that (a child that was already gone, by exit code or by signal, resolves at once). Never hangs an
 * `afterAll`: the worst case is `2 * graceMs`.
 */
export function stopChild(child: ChildProcess, graceMs: number): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const timers: NodeJS.Timeout[] = [];
    const done = (): void => {
      for (const t of timers) clearTimeout(t);
      resolve();
    };
    child.once("exit", done);
    child.kill("SIGTERM");
    timers.push(setTimeout(() => child.kill("SIGKILL"), graceMs));
    timers.push(setTimeout(done, 2 * graceMs));
  });
}
