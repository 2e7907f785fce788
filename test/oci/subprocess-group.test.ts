/**
 * `runBounded` with `processGroup`: a stop (abort or timeout) ends the whole
 * process group, and the run resolves only once nothing of it still runs
 * (src/oci/subprocess.ts). The command line starts many background children
 * (grandchildren of ours, like the processes `npm ci` starts) so that the
 * kernel still has work left when kill() returns: a runner that resolves right
 * after sending SIGKILL leaves some of them running when its caller looks.
 */
import { closeSync, existsSync, openSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BASE_ENV_NAMES, childEnvironment, runBounded } from "../../src/oci/subprocess.js";

/** True while `pid` is a live (not zombie) process. */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    return state !== "Z" && state !== "X";
  } catch {
    return false;
  }
}

const CHILDREN = 40;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "hpk-group-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe.runIf(process.platform === "linux")("runBounded with processGroup", () => {
  for (const how of ["abort", "timeout"] as const) {
    it(`${how}: resolves only once every process of the group has ended`, async () => {
      const pidFile = join(dir, `${how}.pids`);
      // CHILDREN background sleeps; their pids go to a file, completed by a last line "done"; then wait.
      const script = `for i in $(seq ${CHILDREN}); do sleep 300 & echo $! >> "$1"; done; echo done >> "$1"; wait`;
      const controller = new AbortController();
      // Output to a file descriptor, as gate and install commands log: "close" then comes when the shell
      // ends, not when the last process holding a pipe does.
      const log = openSync(join(dir, `${how}.log`), "w");
      const run = runBounded("sh", ["-c", script, "sh", pidFile], {
        env: childEnvironment(BASE_ENV_NAMES, {}),
        timeoutMs: how === "timeout" ? 3_000 : 60_000,
        maxOutputBytes: 1 << 20,
        output: log,
        processGroup: true,
        ...(how === "abort" ? { signal: controller.signal } : {}),
      });
      const deadline = Date.now() + 20_000;
      while (!(existsSync(pidFile) && readFileSync(pidFile, "utf8").endsWith("done\n")) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      const pids = readFileSync(pidFile, "utf8").split("\n").filter((l) => /^[0-9]+$/.test(l)).map(Number);
      expect(pids).toHaveLength(CHILDREN);
      expect(pids.every(alive)).toBe(true);
      if (how === "abort") controller.abort();
      const result = await run;
      closeSync(log);
      const running = pids.filter(alive);
      expect(running, `still running after the run resolved: ${running.join(" ")}`).toEqual([]);
      expect(result.outcome.kind).toBe(how === "abort" ? "aborted" : "timeout");
    }, 60_000);
  }
});
