/**
 * Node's callback file API as promises (`util.promisify`, loaded with Node itself), for the
 * contract's file readers. `node:fs/promises` is not used on the CLI's offline verify path: in
 * Node 20 it loads readline and the file watchers with it, ~2-3 ms of every `verify-*` run
 * (`npm run bench:cli`).
 */
import { close, constants as fsConstants, fstat, lstat, open, read, readdir, writeFile } from "node:fs";
import { promisify } from "node:util";

/** `fs.open` as a promise of the descriptor. */
export const openAsync = promisify(open);
/** `fs.fstat` as a promise. */
export const fstatAsync = promisify(fstat);
/** `fs.lstat` as a promise. */
export const lstatAsync = promisify(lstat);
/** `fs.readdir` (names) as a promise. */
export const readdirAsync = promisify(readdir);
/** `fs.writeFile` as a promise. */
export const writeFileAsync = promisify(writeFile);
/** `fs.close` as a promise. */
export const closeAsync = promisify(close);

/** Read `length` bytes at `position` into `buffer` at `offset`; resolves to the count read (0 at end of file). */
export function readAsync(fd: number, buffer: Buffer, offset: number, length: number, position: number): Promise<number> {
  return new Promise((resolve, reject) => read(fd, buffer, offset, length, position, (error, bytesRead) => (error ? reject(error) : resolve(bytesRead))));
}

/**
 * Read `size` bytes of `fd` from its start into a new buffer; fewer when the file ends sooner
 * (the buffer returned is then cut to what was read). Bounded by `size`: every pass reads at least
 * one byte or ends the loop.
 */
export async function readWhole(fd: number, size: number): Promise<Buffer> {
  const bytes = Buffer.alloc(size);
  let offset = 0;
  while (offset < size) {
    const n = await readAsync(fd, bytes, offset, size - offset, offset);
    if (n === 0) break;
    offset += n;
  }
  return bytes.subarray(0, offset);
}

/** What {@link readRegularFile} found. */
export type RegularFileRead =
  /** `mode` and `uid` are the opened file's (permission bits and owner, for files that must be private). */
  | { kind: "read"; bytes: Buffer; mode: number; uid: number }
  /** The open or a read failed (`ENOENT`, `EACCES`, `ELOOP` for a link when links are not followed, ...). */
  | { kind: "failed"; code: string }
  | { kind: "not-regular"; what: "a directory" | "a FIFO, socket or device" }
  | { kind: "too-large"; size: number };

/**
 * Read a small file that must be a regular file of at most `maxBytes` bytes: opened without waiting on
 * a FIFO (`O_NONBLOCK`) and, unless `followLinks`, without following a link (`O_NOFOLLOW`); the type
 * and size are those of the opened descriptor (`fstat`), so nothing can be swapped in between a check
 * and the read, and a device (`/dev/zero`) or FIFO is refused before any byte is read. Never throws for
 * the file's sake: the caller turns each outcome into its own coded error.
 */
export async function readRegularFile(path: string, options: { maxBytes: number; followLinks?: boolean }): Promise<RegularFileRead> {
  let fd: number;
  try {
    fd = await openAsync(path, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK | (options.followLinks === true ? 0 : fsConstants.O_NOFOLLOW));
  } catch (error) {
    return { kind: "failed", code: (error as NodeJS.ErrnoException).code ?? "EIO" };
  }
  try {
    const st = await fstatAsync(fd);
    if (!st.isFile()) return { kind: "not-regular", what: st.isDirectory() ? "a directory" : "a FIFO, socket or device" };
    if (st.size > options.maxBytes) return { kind: "too-large", size: st.size };
    return { kind: "read", bytes: await readWhole(fd, st.size), mode: st.mode, uid: st.uid };
  } catch (error) {
    return { kind: "failed", code: (error as NodeJS.ErrnoException).code ?? "EIO" };
  } finally {
    await closeAsync(fd).catch(() => undefined);
  }
}

/** What an open failure means, by errno, with what to check. */
const READ_FAILURES: Record<string, string> = {
  ENOENT: "no such file (ENOENT)",
  EACCES: "permission denied (EACCES); make the file readable for this user",
  ELOOP: "a symbolic link (ELOOP), which is not followed; pass the path of the file it points to",
  ENOTDIR: "a parent of it is not a directory (ENOTDIR); check the path",
  EISDIR: "a directory (EISDIR); pass the path of the file itself",
  ENAMETOOLONG: "a path the system refuses as too long (ENAMETOOLONG); choose a shorter path",
};

/**
 * What {@link readRegularFile} found when it did not read the file, as the "found ..." part of an
 * error message: `no such file (ENOENT)`, `a directory, not a regular file`, `3145728 bytes, more than
 * 1048576`, with what to check where there is one. For `kind: "read"` it answers `a readable file`.
 */
export function describeUnreadFile(found: RegularFileRead, maxBytes: number): string {
  switch (found.kind) {
    case "read":
      return "a readable file";
    case "failed":
      return READ_FAILURES[found.code] ?? `an error (${found.code})`;
    case "not-regular":
      return `${found.what}, not a regular file; pass the path of the file itself`;
    case "too-large":
      return `${found.size} bytes, more than ${maxBytes}`;
  }
}
