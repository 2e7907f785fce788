/**
 * A scriptable loopback HTTP server standing in for a misbehaving registry
 * (wrong digests, extra or missing bytes, early close, storms, redirects,
 * odd pagination). Records every request.
 */
import { mkdtemp, rm } from "node:fs/promises";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll } from "vitest";

/** One request the fake registry saw. */
export interface SeenRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
}

/** A running fake registry. */
export interface FakeRegistry {
  /** `127.0.0.1:PORT`. */
  host: string;
  /** `http://127.0.0.1:PORT`. */
  url: string;
  requests: SeenRequest[];
  close(): Promise<void>;
}

/** Start a loopback server answering with `handler`. */
export async function startFakeRegistry(
  handler: (req: http.IncomingMessage, res: http.ServerResponse, seen: SeenRequest[]) => void | Promise<void>,
): Promise<FakeRegistry> {
  const requests: SeenRequest[] = [];
  const server = http.createServer((req, res) => {
    requests.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers });
    req.resume();
    Promise.resolve(handler(req, res, requests)).catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  return {
    host: `127.0.0.1:${port}`,
    url: `http://127.0.0.1:${port}`,
    requests,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * Write `total` bytes of `fill` to `res` in 64 KiB chunks respecting
 * backpressure; resolves with the bytes actually written when done or when
 * the client went away.
 */
export function writeMany(res: http.ServerResponse, total: number, fill = 0x61): Promise<number> {
  const chunk = Buffer.alloc(64 * 1024, fill);
  let written = 0;
  return new Promise((resolve) => {
    let done = false;
    const finish = (): void => {
      if (!done) {
        done = true;
        resolve(written);
      }
    };
    res.on("close", finish);
    const pump = (): void => {
      while (written < total && !res.destroyed) {
        const n = Math.min(chunk.length, total - written);
        written += n;
        if (!res.write(chunk.subarray(0, n))) {
          res.once("drain", pump);
          return;
        }
      }
      if (!res.destroyed) res.end(finish);
    };
    pump();
  });
}

/** What {@link fakeRegistryScope} gives a test file. */
export interface FakeRegistryScope {
  /** The file's scratch directory (valid inside tests; removed after the file). */
  readonly work: string;
  /** Start a fake registry that is closed after the current test. */
  fake(handler: Parameters<typeof startFakeRegistry>[0]): Promise<FakeRegistry>;
  /** Close `server` after the current test (any loopback stand-in). */
  track<T extends { close(): Promise<void> }>(server: T): T;
}

/**
 * The scaffolding of a test file that talks to fake registries: a scratch
 * directory `<tmp>/<prefix>XXXXXX` for the file, and every server started
 * through the scope closed after each test. Call at the top level of the file.
 */
export function fakeRegistryScope(prefix: string): FakeRegistryScope {
  let work: string | undefined;
  let servers: Array<{ close(): Promise<void> }> = [];
  beforeAll(async () => {
    work = await mkdtemp(path.join(os.tmpdir(), prefix));
  });
  afterEach(async () => {
    await Promise.all(servers.map((s) => s.close()));
    servers = [];
  });
  afterAll(async () => {
    if (work !== undefined) await rm(work, { recursive: true, force: true });
  });
  const track = <T extends { close(): Promise<void> }>(server: T): T => {
    servers.push(server);
    return server;
  };
  return {
    get work(): string {
      if (work === undefined) throw new Error("fakeRegistryScope: the scratch directory exists only inside tests");
      return work;
    },
    fake: async (handler) => track(await startFakeRegistry(handler)),
    track,
  };
}
