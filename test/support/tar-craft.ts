/**
 * Hand-made tar streams for the strict tarball reader, and the two peers its
 * listing is compared with: node-tar (the parser npm installs with, the same
 * version npm 11 bundles) and GNU tar.
 */
import { spawnSync } from "node:child_process";
import { gzipSync } from "node:zlib";
import { t as nodeTarList } from "tar";

/** One ustar header's fields; anything not given is what node-tar's portable writer puts there. */
export interface CraftHeader {
  name: string;
  prefix?: string;
  /** Type flag (default "0"). */
  type?: string;
  /** Declared size (default: the data length). */
  size?: number;
  mode?: number;
  linkname?: string;
  /** Raw replacement for the 12-byte size field. */
  sizeField?: Buffer;
  /** Raw replacement for the 8-byte magic+version (default `ustar\0` `00`). */
  magic?: string;
  /** Add this to the computed checksum (0 = valid). */
  checksumDelta?: number;
  /** Raw name bytes instead of `name`. */
  nameBytes?: Buffer;
}

/** A tar entry: a header and its data, or raw bytes appended as they are. */
export type CraftEntry = { header: CraftHeader; data?: Buffer | string } | { raw: Buffer };

function octalField(value: number, length: number): string {
  return value.toString(8).padStart(length - 2, "0") + " \0";
}

/** Encode one 512-byte ustar header block. */
export function headerBlock(h: CraftHeader, dataLength: number): Buffer {
  const block = Buffer.alloc(512);
  (h.nameBytes ?? Buffer.from(h.name, "utf8")).copy(block, 0, 0, 100);
  block.write(octalField(h.mode ?? 0o644, 8), 100, "latin1");
  block.write(octalField(h.size ?? dataLength, 12), 124, "latin1");
  if (h.sizeField !== undefined) h.sizeField.copy(block, 124, 0, 12);
  block.write(octalField(499162500, 12), 136, "latin1");
  block.write(h.type ?? "0", 156, "latin1");
  if (h.linkname !== undefined) block.write(h.linkname, 157, 100, "utf8");
  block.write(h.magic ?? "ustar\u000000", 257, "latin1");
  block.write(octalField(0, 8), 329, "latin1");
  block.write(octalField(0, 8), 337, "latin1");
  if (h.prefix !== undefined) block.write(h.prefix, 345, 155, "utf8");
  block.fill(0x20, 148, 156);
  let sum = 0;
  for (const byte of block) sum += byte;
  block.write(octalField(sum + (h.checksumDelta ?? 0), 8), 148, "latin1");
  return block;
}

/** A pax extended header record `"<len> <key>=<value>\n"` with the correct length. */
export function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  let length = Buffer.byteLength(body) + 1;
  while (String(length).length + Buffer.byteLength(body) !== length) length += 1;
  return `${length}${body}`;
}

function pad(length: number): Buffer {
  return Buffer.alloc((512 - (length % 512)) % 512);
}

/** The tar stream of `entries` followed by the two-block end-of-archive marker (unless `end: false`). */
export function tarStream(entries: CraftEntry[], options: { end?: boolean } = {}): Buffer {
  const parts: Buffer[] = [];
  for (const entry of entries) {
    if ("raw" in entry) {
      parts.push(entry.raw);
      continue;
    }
    const data = typeof entry.data === "string" ? Buffer.from(entry.data, "utf8") : (entry.data ?? Buffer.alloc(0));
    parts.push(headerBlock(entry.header, data.length), data, pad(data.length));
  }
  if (options.end !== false) parts.push(Buffer.alloc(1024));
  return Buffer.concat(parts);
}

/** A pax extended header entry (type `x`, or `g` for a global one) carrying `records`. */
export function paxEntry(records: [string, string][], type: "x" | "g" = "x"): CraftEntry {
  return { header: { name: "PaxHeader/entry", type }, data: records.map(([k, v]) => paxRecord(k, v)).join("") };
}

/** A regular file entry. */
export function fileEntry(name: string, data: string | Buffer, header: Partial<CraftHeader> = {}): CraftEntry {
  return { header: { name, ...header }, data };
}

/** gzip as npm pack does (level 9, one member, no optional header fields). */
export function gzip(bytes: Buffer): Buffer {
  return gzipSync(bytes, { level: 9 });
}

/** What node-tar (npm's parser) lists: every entry with its type, path and size, plus its warnings. */
export async function nodeTarListing(file: string): Promise<{ entries: { type: string; path: string; size: number }[]; warnings: string[] }> {
  const entries: { type: string; path: string; size: number }[] = [];
  const warnings: string[] = [];
  try {
    await nodeTarList({
      file,
      onReadEntry: (entry) => {
        entries.push({ type: entry.type, path: entry.path, size: entry.size });
      },
      onwarn: (code: string, message: string | Error) => {
        warnings.push(`${code}: ${message instanceof Error ? message.message : message}`);
      },
    });
  } catch (error) {
    warnings.push(`error: ${(error as Error).message}`);
  }
  return { entries, warnings };
}

/** What GNU tar lists (names, literal quoting), its exit status and whether it printed warnings. */
export function gnuTarListing(file: string): { names: string[]; status: number | null; stderr: string } {
  const r = spawnSync("tar", ["--list", "--gzip", "--quoting-style=literal", "--file", file], { encoding: "utf8" });
  return { names: r.stdout.split("\n").filter((l) => l.length > 0), status: r.status, stderr: r.stderr };
}

/**
 * The handed smuggling example for `name@version`: a global pax header
 * (`size=512`) before `package/README.md` (ustar size 2560) whose data hides a
 * second `package/package.json` (`main: hidden.js`, a `postinstall`) and
 * `package/hidden.js`. tar-stream lists 3 files, node-tar and GNU tar 5.
 */
export function smugglingTarball(name: string, version: string): Buffer {
  const honest = JSON.stringify({ name, version, main: "index.js", files: ["index.js", "README.md"] }) + "\n";
  const evil = JSON.stringify({ name, version, main: "hidden.js", scripts: { postinstall: "node hidden.js" } });
  const hidden = tarStream([fileEntry("package/package.json", evil.padEnd(512, " ")), fileEntry("package/hidden.js", "require('child_process').exec('id');".padEnd(512, " "))], { end: false });
  const readme = Buffer.concat([Buffer.from("# readme\n".padEnd(512, " ")), hidden]);
  return gzip(tarStream([fileEntry("package/package.json", honest), paxEntry([["size", "512"]], "g"), fileEntry("package/README.md", readme), fileEntry("package/index.js", "export {};\n")]));
}
