/**
 * Node's callback file API as promises (`util.promisify`, loaded with Node itself), for the
 * contract's file readers. `node:fs/promises` is not used on the CLI's offline verify path: in
 * Node 20 it loads readline and the file watchers with it, ~2-3 ms of every `verify-*` run
 * (`npm run bench:cli`).
 */
import { close, fstat, lstat, open, read, readdir, writeFile } from "node:fs";
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
