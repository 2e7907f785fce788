/**
 * The transfer progress bar: only on a TTY, only after the delay, redrawn at
 * most 10 times a second, replaced by one summary line (nothing when never shown);
 * on a pipe nothing, unless plain lines were asked for (`--verbose`).
 */
import { describe, expect, it } from "vitest";
import { TransferProgress } from "../../src/fetch/progress.js";
import { setVerbosity, transferProgress } from "../../src/cli/output.js";

function sink(tty: boolean): { stream: NodeJS.WritableStream; out: string[] } {
  const out: string[] = [];
  return { stream: { isTTY: tty, write: (s: string) => out.push(s) } as unknown as NodeJS.WritableStream, out };
}

describe("TransferProgress", () => {
  it("draws nothing during the first second, then a throttled bar and a summary", () => {
    let t = 0;
    const { stream, out } = sink(true);
    const bar = new TransferProgress(stream, "fetch", 100 * 1024 * 1024, { now: () => t });
    t = 500;
    bar.add(10 * 1024 * 1024);
    expect(out).toEqual([]);
    t = 1000;
    bar.add(40 * 1024 * 1024);
    t = 1050;
    bar.add(1);
    expect(out).toHaveLength(1);
    expect(out[0]).toBe("\rfetch  [##########..........]  50%  50.0/100.0 MiB  52.4 MB/s\x1b[K");
    t = 2000;
    const part = bar.part();
    part(50 * 1024 * 1024);
    part(50 * 1024 * 1024);
    bar.finish();
    bar.finish();
    expect(out.at(-1)).toBe("\rfetch 100.0 MiB in 2.0 s (52.4 MB/s)\x1b[K\n");
    expect(out).toHaveLength(3);
  });

  it("a transfer under the delay, a pipe and a null stream write nothing", () => {
    let t = 0;
    const fast = sink(true);
    const quick = new TransferProgress(fast.stream, "fetch", 10, { now: () => t });
    quick.add(10);
    t = 900;
    quick.finish();
    expect(fast.out).toEqual([]);
    const piped = sink(false);
    const slow = new TransferProgress(piped.stream, "fetch", 10, { now: () => t, delayMs: 0 });
    t = 5000;
    slow.add(5);
    slow.finish(false);
    expect(piped.out).toEqual([]);
    const none = new TransferProgress(null, "fetch", 10, { delayMs: 0 });
    none.add(10);
    none.finish();
  });

  it("a failed transfer that was shown ends with a stopped line", () => {
    let t = 0;
    const { stream, out } = sink(true);
    const bar = new TransferProgress(stream, "upload", 4 * 1024 * 1024, { now: () => t });
    t = 1500;
    bar.add(1024 * 1024);
    bar.finish(false);
    expect(out.at(-1)).toBe("\rupload stopped after 1.0 of 4.0 MiB\x1b[K\n");
  });

  it("plainLines on a pipe: the same line without redraw codes, at most every 5 s, then the summary", () => {
    let t = 0;
    const { stream, out } = sink(false);
    const bar = new TransferProgress(stream, "fetch", 100 * 1024 * 1024, { now: () => t, plainLines: true });
    t = 500;
    bar.add(10 * 1024 * 1024);
    expect(out).toEqual([]);
    t = 1000;
    bar.add(40 * 1024 * 1024);
    t = 5999;
    bar.add(1);
    expect(out).toEqual(["fetch  [##########..........]  50%  50.0/100.0 MiB  52.4 MB/s\n"]);
    t = 6000;
    bar.set(75 * 1024 * 1024);
    expect(out).toHaveLength(2);
    expect(out[1]).toBe("fetch  [###############.....]  75%  75.0/100.0 MiB  13.1 MB/s\n");
    bar.finish();
    expect(out.at(-1)).toBe("fetch 100.0 MiB in 6.0 s (17.5 MB/s)\n");
    expect(out.join("")).not.toMatch(/[\r\x1b]/);
  });

  it("plainLines changes nothing on a TTY, and a transfer under the delay still writes nothing", () => {
    let t = 0;
    const tty = sink(true);
    const bar = new TransferProgress(tty.stream, "upload", 10, { now: () => t, plainLines: true });
    t = 1500;
    bar.add(5);
    expect(tty.out).toEqual(["\rupload [##########..........]  50%  0.0/0.0 MiB  0.0 MB/s\x1b[K"]);
    const piped = sink(false);
    const quick = new TransferProgress(piped.stream, "fetch", 10, { now: () => t, plainLines: true });
    t = 2000;
    quick.add(10);
    quick.finish();
    expect(piped.out).toEqual([]);
  });

  it("--verbose asks for progress: no delay, so even a quick transfer prints a line and the summary, on a pipe and on a TTY", () => {
    try {
      setVerbosity("verbose");
      expect(transferProgress()).toMatchObject({ progressLines: true, progressDelayMs: 0 });
      setVerbosity("normal");
      expect(transferProgress()).not.toHaveProperty("progressDelayMs");
    } finally {
      setVerbosity("normal");
    }
    for (const tty of [false, true]) {
      let t = 0;
      const { stream, out } = sink(tty);
      const quick = new TransferProgress(stream, "fetch", 10, { now: () => t, plainLines: true, delayMs: 0 });
      t = 20;
      quick.add(10);
      quick.finish();
      expect(out.map((line) => line.replace(/\r|\x1b\[K/g, ""))).toEqual(["fetch  [####################] 100%  0.0/0.0 MiB  0.0 MB/s" + (tty ? "" : "\n"), "fetch 0.0 MiB in 0.0 s (0.0 MB/s)\n"]);
    }
  });
});
