/**
 * A strict reader of the tar stream inside an npm tarball: it accepts only
 * what `npm pack` writes (node-tar with `portable: true`, prefix `package/`,
 * regular files only) and refuses every construct on which tar readers
 * disagree, so the member list it returns is the one npm (node-tar) and GNU
 * tar extract (POSIX.1-2001 pax "ustar Interchange Format" and "pax
 * Interchange Format"; node-tar `lib/header.js`, `lib/pax.js`, `lib/parse.js`).
 *
 * Accepted: 512-byte ustar headers (`ustar\0` magic, version `00`, valid
 * checksum, plain octal number fields, UTF-8 names) of type `0` (a regular
 * file, permission bits only, no link name) under `package/`, each optionally
 * preceded by one pax extended header (`x`) carrying only `path`, `size` and
 * `mtime`, where `size` equals the ustar size and `path` is the full form of a
 * path the ustar fields had to truncate; then the end-of-archive marker (two
 * zero blocks) and nothing but zero bytes after it.
 *
 * Refused, each with its code (`ReleaseContractError`):
 * `TARBALL_HEADER_INVALID` (checksum, magic, number fields, non-UTF-8 names,
 * truncation, no end-of-archive marker), `TARBALL_ENTRY_TYPE` (global pax
 * headers `g`, GNU long names/links `L`/`K`, hard and symbolic links,
 * devices, FIFOs, directories, contiguous, sparse and vendor types,
 * set-id/sticky bits, a link name on a file), `TARBALL_PAX_INVALID` (malformed
 * records, duplicate keys, any other key, a `size` or `path` that overrides the
 * ustar header, two pax headers in a row, a pax header not followed by a
 * file), `TARBALL_PATH_UNSAFE` (outside `package/`, absolute, `.`/`..`/empty
 * segments, backslashes, control characters, over-long paths),
 * `TARBALL_DUPLICATE_MEMBER` (the same path twice, paths equal after Unicode
 * normalisation and case folding, a file that is also a directory of another
 * member), `TARBALL_TOO_LARGE` (member count, member or total size),
 * `TARBALL_TRAILING_DATA` (non-zero bytes after the end-of-archive marker).
 */
import { ReleaseContractError, type ReleaseContractErrorCode } from "./errors.js";
import { describeValue } from "./grammar.js";
import { nearestName } from "./near-name.js";

/** One regular file of an npm tarball. */
export interface TarballMember {
  /** Path below `package/`, e.g. `dist/index.js`. */
  path: string;
  /** Size in bytes. */
  size: number;
  /** Permission bits (`0o644`, `0o755`). */
  mode: number;
}

/** Bounds of {@link StrictTarParser} (counts and bytes). */
export interface TarLimits {
  /** Most members (default 100 000). */
  maxMembers: number;
  /** Most bytes of member content in total (default 1 GiB). */
  maxUnpackedBytes: number;
  /** Most bytes of one pax extended header (default 64 KiB). */
  maxPaxBytes: number;
  /** Most bytes of one member path (default 4096). */
  maxPathBytes: number;
}

/** Default {@link TarLimits}. */
export const DEFAULT_TAR_LIMITS: Readonly<TarLimits> = Object.freeze({ maxMembers: 100_000, maxUnpackedBytes: 1024 * 1024 * 1024, maxPaxBytes: 64 * 1024, maxPathBytes: 4096 });

/**
 * `limits` over {@link DEFAULT_TAR_LIMITS}: an absent or `undefined` bound is the default (a spread would let
 * `{ maxMembers: undefined }` lift it); a given one must be a positive safe integer.
 * @throws ReleaseContractError `TARBALL_LIMITS_INVALID` naming the bound and what was found.
 */
export function resolveTarLimits(limits: Partial<TarLimits> | undefined): TarLimits {
  if (limits !== undefined && (limits === null || typeof limits !== "object" || Array.isArray(limits))) {
    throw new ReleaseContractError("TARBALL_LIMITS_INVALID", `tar limits must be an object ({ ${Object.keys(DEFAULT_TAR_LIMITS).join(", ")} }), found ${describeValue(limits)}`);
  }
  // A misspelt bound (`maxMember`) would be ignored and leave the default in force without a word.
  const known = Object.keys(DEFAULT_TAR_LIMITS);
  const unknown = limits === undefined ? undefined : Object.keys(limits).find((key) => !known.includes(key));
  if (unknown !== undefined) {
    const near = nearestName(unknown, known);
    throw new ReleaseContractError("TARBALL_LIMITS_INVALID", `tar limits have ${describeValue(unknown)}, which is no bound it reads (it reads ${known.join(", ")})${near === undefined ? "" : `; did you mean ${JSON.stringify(near)}?`}; fix: name one of those bounds, or leave it out for the default`);
  }
  const resolved: TarLimits = { ...DEFAULT_TAR_LIMITS };
  for (const key of known as (keyof TarLimits)[]) {
    const value = limits?.[key];
    if (value === undefined) continue;
    if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 1) {
      throw new ReleaseContractError("TARBALL_LIMITS_INVALID", `tar limit ${key} must be a positive whole number (default ${DEFAULT_TAR_LIMITS[key]}), found ${describeValue(value)}; fix: pass a bound, or leave it out for the default`);
    }
    resolved[key] = value;
  }
  return resolved;
}

const BLOCK = 512;
const ZERO_BLOCK = Buffer.alloc(BLOCK);
const PREFIX = "package/";
const PAX_KEYS = new Set(["path", "size", "mtime"]);
const TYPE_NAMES: Record<string, string> = {
  "\0": "an old-style file (type NUL)",
  "1": "a hard link",
  "2": "a symbolic link",
  "3": "a character device",
  "4": "a block device",
  "5": "a directory",
  "6": "a FIFO",
  "7": "a contiguous file",
  g: "a global pax header",
  L: "a GNU long-name record",
  K: "a GNU long-link record",
  N: "an old GNU long-name record",
  S: "a GNU sparse file",
  D: "a GNU dump directory",
  M: "a GNU multi-volume continuation",
  V: "a tape volume header",
  X: "an old extended header",
  A: "a Solaris ACL",
  I: "an inode-only record",
};
const utf8 = new TextDecoder("utf-8", { fatal: true });

function fail(code: ReleaseContractErrorCode, message: string): never {
  throw tarballError(code, message);
}

/** An archive `npm pack` would not write, or that was changed after it: the one fix of every such refusal. */
const MALFORMED_FIX =
  "use the tarball exactly as `npm pack` wrote it (rebuild it with `npm pack`; an edited, truncated, re-compressed or hand-made archive is refused); a release whose own tarball fails this check cannot be installed safely: do not install it, and tell its publisher";

/** What the user does about each `TARBALL_*` refusal of the npm tarball reader (this module and `npm-tarball.ts`). */
const TARBALL_FIX: Partial<Record<ReleaseContractErrorCode, string>> = {
  TARBALL_GZIP_INVALID: MALFORMED_FIX,
  TARBALL_TRAILING_DATA: MALFORMED_FIX,
  TARBALL_HEADER_INVALID: MALFORMED_FIX,
  TARBALL_ENTRY_TYPE: MALFORMED_FIX,
  TARBALL_PAX_INVALID: MALFORMED_FIX,
  TARBALL_PATH_UNSAFE: MALFORMED_FIX,
  TARBALL_DUPLICATE_MEMBER: MALFORMED_FIX,
  TARBALL_METADATA_MISSING: MALFORMED_FIX,
  TARBALL_TOO_LARGE:
    "the bounds stop decompression bombs: make the package smaller (package.json `files`, `.npmignore`), or, calling the library, raise the bound (`limits` of readNpmTarballFile or StrictTarParser, `maxKeptBytes`)",
  TARBALL_UNREADABLE: "pass the path of the .tgz file `npm pack` wrote, a regular file you can read, and leave it unchanged while it is read",
};

/**
 * The error of a `TARBALL_*` refusal: `message`, followed by `; fix: ...` from the one table of fixes unless the
 * message names its own. Used by this module and `npm-tarball.ts`.
 */
export function tarballError(code: ReleaseContractErrorCode, message: string): ReleaseContractError {
  const fix = TARBALL_FIX[code];
  return new ReleaseContractError(code, fix === undefined || message.includes("; fix: ") ? message : `${message}; fix: ${fix}`);
}

/** A field of a header block as text up to its first NUL, strictly UTF-8. */
function field(block: Buffer, offset: number, length: number, what: string, at: number): string {
  const raw = block.subarray(offset, offset + length);
  const end = raw.indexOf(0);
  try {
    return utf8.decode(end < 0 ? raw : raw.subarray(0, end));
  } catch {
    fail("TARBALL_HEADER_INVALID", `tar header at byte ${at}: the ${what} field is not UTF-8`);
  }
}

/**
 * An octal number field as node-tar and GNU tar both read it: octal digits,
 * then only spaces or NULs (base-256 and junk after the digits are refused).
 */
function octal(block: Buffer, offset: number, length: number, what: string, at: number, optional = false): number | undefined {
  const text = block.subarray(offset, offset + length).toString("latin1");
  if (optional && /^\0*$/.test(text)) return undefined;
  const m = /^([0-7]+)[ \0]*$/.exec(text);
  if (m === null) fail("TARBALL_HEADER_INVALID", `tar header at byte ${at}: the ${what} field ${JSON.stringify(text)} is not a plain octal number`);
  return parseInt(m[1] as string, 8);
}

interface UstarHeader {
  type: string;
  path: string;
  size: number;
  mode: number;
  linkname: string;
}

function decodeHeader(block: Buffer, at: number): UstarHeader {
  const stored = octal(block, 148, 8, "checksum", at) as number;
  let sum = 8 * 0x20;
  for (let i = 0; i < BLOCK; i += 1) if (i < 148 || i >= 156) sum += block[i] as number;
  if (sum !== stored) fail("TARBALL_HEADER_INVALID", `tar header at byte ${at}: checksum ${stored} does not match the header bytes (${sum})`);
  if (block.toString("latin1", 257, 265) !== "ustar\u000000") {
    fail("TARBALL_HEADER_INVALID", `tar header at byte ${at}: expected the POSIX ustar magic "ustar\\0" version "00" that npm pack writes, found ${JSON.stringify(block.toString("latin1", 257, 265))}`);
  }
  const size = octal(block, 124, 12, "size", at) as number;
  const mode = octal(block, 100, 8, "mode", at) as number;
  octal(block, 136, 12, "mtime", at);
  for (const [offset, what] of [[108, "uid"], [116, "gid"], [329, "devmajor"], [337, "devminor"]] as const) octal(block, offset, 8, what, at, true);
  const name = field(block, 0, 100, "name", at);
  const prefix = field(block, 345, 155, "prefix", at);
  return { type: String.fromCharCode(block[156] as number), path: prefix.length > 0 ? `${prefix}/${name}` : name, size, mode, linkname: field(block, 157, 100, "linkname", at) };
}

/**
 * Parse pax extended header records `"<len> <key>=<value>\n"` strictly (POSIX pax, "pax Extended Header").
 * @param data the header's bytes. @param at the header's byte offset in the tarball, for messages.
 * @throws ReleaseContractError `TARBALL_PAX_INVALID` (a malformed record); `POLICY_INVALID` when `data` is not
 *   bytes (a Buffer or Uint8Array) or `at` is not a whole number >= 0.
 */
export function parsePaxRecords(given: Buffer, at: number): Map<string, string> {
  if (!(given instanceof Uint8Array)) throw new ReleaseContractError("POLICY_INVALID", `parsePaxRecords(data, at): data must be the pax header's bytes (a Buffer or Uint8Array), found ${describeValue(given)}`);
  if (typeof at !== "number" || !Number.isSafeInteger(at) || at < 0) throw new ReleaseContractError("POLICY_INVALID", `parsePaxRecords(data, at): at must be a byte offset (a whole number >= 0), found ${describeValue(at)}`);
  const bytes: Uint8Array = given;
  const data = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const records = new Map<string, string>();
  let pos = 0;
  while (pos < data.length) {
    const space = data.indexOf(0x20, pos);
    const lengthText = space < 0 ? "" : data.toString("latin1", pos, space);
    const length = /^[1-9][0-9]{0,6}$/.test(lengthText) ? Number(lengthText) : NaN;
    if (!Number.isSafeInteger(length) || pos + length > data.length || data[pos + length - 1] !== 0x0a) {
      fail("TARBALL_PAX_INVALID", `pax header at byte ${at}: malformed record at offset ${pos}`);
    }
    let record: string;
    try {
      record = utf8.decode(data.subarray(space + 1, pos + length - 1));
    } catch {
      fail("TARBALL_PAX_INVALID", `pax header at byte ${at}: record at offset ${pos} is not UTF-8`);
    }
    const eq = record.indexOf("=");
    const key = eq < 0 ? "" : record.slice(0, eq);
    if (key.length === 0) fail("TARBALL_PAX_INVALID", `pax header at byte ${at}: record at offset ${pos} has no key`);
    if (records.has(key)) fail("TARBALL_PAX_INVALID", `pax header at byte ${at}: key ${JSON.stringify(key)} appears twice`);
    records.set(key, record.slice(eq + 1));
    pos += length;
  }
  if (records.size === 0) fail("TARBALL_PAX_INVALID", `pax header at byte ${at}: no records`);
  return records;
}

/** The path a member really has after its pax header, refusing overrides npm pack never writes. */
function applyPax(header: UstarHeader, pax: Map<string, string>, at: number): string {
  for (const key of pax.keys()) {
    if (!PAX_KEYS.has(key)) fail("TARBALL_PAX_INVALID", `pax header before byte ${at}: key ${JSON.stringify(key)} is not one npm pack writes (only path, size, mtime)`);
  }
  const size = pax.get("size");
  if (size !== undefined && (!/^(0|[1-9][0-9]*)$/.test(size) || Number(size) !== header.size)) {
    fail("TARBALL_PAX_INVALID", `pax header before byte ${at}: size ${JSON.stringify(size)} overrides the ustar size ${header.size}`);
  }
  const mtime = pax.get("mtime");
  if (mtime !== undefined && !/^-?[0-9]+(\.[0-9]+)?$/.test(mtime)) fail("TARBALL_PAX_INVALID", `pax header before byte ${at}: mtime ${JSON.stringify(mtime)} is not a number`);
  const path = pax.get("path");
  if (path === undefined || path === header.path) return header.path;
  // npm pack writes a pax path only when the ustar fields cannot hold it, and then truncates it into them.
  if (header.path.length === 0 || !path.startsWith(header.path) || Buffer.byteLength(path) <= 100) {
    fail("TARBALL_PAX_INVALID", `pax header before byte ${at}: path ${JSON.stringify(path)} overrides the ustar path ${JSON.stringify(header.path)}`);
  }
  return path;
}

/** The folded form under which two paths collide on a case-insensitive, normalising file system (node-tar's path reservations). */
function fold(path: string): string {
  return path.normalize("NFD").toLocaleLowerCase("en").toLocaleUpperCase("en");
}

/**
 * Streaming strict reader of an npm tarball's tar stream (see the module
 * comment). Feed the decompressed bytes with {@link push}, then call
 * {@link end}. Member bytes are passed to `onData` as they arrive.
 * The constructor throws ReleaseContractError `POLICY_INVALID` for an `onData` that is no function, and the
 * `TARBALL_LIMITS_INVALID` of {@link resolveTarLimits} for `limits`.
 */
export class StrictTarParser {
  private readonly limits: TarLimits;
  private readonly members: TarballMember[] = [];
  private readonly files = new Map<string, string>();
  private readonly directories = new Set<string>();
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private offset = 0;
  private state: "header" | "data" | "pax" | "end" = "header";
  private remaining = 0;
  private padding = 0;
  private paxSize = 0;
  private pax: Map<string, string> | undefined;
  private current: TarballMember | undefined;
  private unpacked = 0;
  private zeroBytes = 0;

  constructor(
    private readonly onData: (member: TarballMember, chunk: Buffer) => void = () => undefined,
    limits: Partial<TarLimits> = {},
  ) {
    if (typeof onData !== "function") throw new ReleaseContractError("POLICY_INVALID", `new StrictTarParser(onData, limits): onData must be a function (member, chunk) => void, found ${describeValue(onData)}`);
    this.limits = resolveTarLimits(limits);
  }

  /** Feed the next bytes of the tar stream. @throws ReleaseContractError (codes in the module comment). */
  push(chunk: Buffer): void {
    let pos = 0;
    while (pos < chunk.length) {
      if (this.state === "end") {
        this.consumeTrailer(chunk.subarray(pos));
        return;
      }
      if (this.state === "data" && (this.remaining > 0 || this.padding > 0)) {
        pos += this.consumeData(chunk.subarray(pos));
        continue;
      }
      const need = (this.state === "pax" ? this.paxSize + ((BLOCK - (this.paxSize % BLOCK)) % BLOCK) : BLOCK) - this.pendingBytes;
      const take = Math.min(need, chunk.length - pos);
      this.pending.push(chunk.subarray(pos, pos + take));
      this.pendingBytes += take;
      pos += take;
      if (take === need) {
        const block = Buffer.concat(this.pending, this.pendingBytes);
        this.pending = [];
        this.pendingBytes = 0;
        const at = this.offset;
        this.offset += block.length;
        if (this.state === "pax") this.finishPax(block, at);
        else this.header(block, at);
      }
    }
  }

  /**
   * Finish: the stream must have ended after the end-of-archive marker.
   * @returns the regular files, in archive order.
   */
  end(): TarballMember[] {
    if (this.state !== "end" || this.zeroBytes < 2 * BLOCK) {
      fail("TARBALL_HEADER_INVALID", `tar stream ends at byte ${this.offset + this.pendingBytes} without the end-of-archive marker (two zero blocks): truncated`);
    }
    return this.members;
  }

  private consumeData(chunk: Buffer): number {
    let used = 0;
    if (this.remaining > 0) {
      used = Math.min(this.remaining, chunk.length);
      this.remaining -= used;
      this.onData(this.current as TarballMember, chunk.subarray(0, used));
    }
    const pad = Math.min(this.padding, chunk.length - used);
    this.padding -= pad;
    this.offset += used + pad;
    if (this.remaining === 0 && this.padding === 0) this.state = "header";
    return used + pad;
  }

  private consumeTrailer(rest: Buffer): void {
    let nonZero = -1;
    for (let i = 0; i < rest.length; i += 1) {
      if (rest[i] !== 0) {
        nonZero = i;
        break;
      }
    }
    if (nonZero >= 0) {
      fail("TARBALL_TRAILING_DATA", `tar stream has data at byte ${this.offset + nonZero} after the end-of-archive marker`);
    }
    this.zeroBytes += rest.length;
    this.offset += rest.length;
  }

  private header(block: Buffer, at: number): void {
    if (block.equals(ZERO_BLOCK)) {
      if (this.pax !== undefined) fail("TARBALL_PAX_INVALID", `pax header before byte ${at} is followed by the end of the archive, not a file`);
      this.state = "end";
      this.zeroBytes = BLOCK;
      return;
    }
    const header = decodeHeader(block, at);
    if (header.type === "x") {
      if (this.pax !== undefined) fail("TARBALL_PAX_INVALID", `two pax headers in a row at byte ${at}`);
      if (header.size === 0 || header.size > this.limits.maxPaxBytes) fail("TARBALL_PAX_INVALID", `pax header at byte ${at} has ${header.size} bytes (1..${this.limits.maxPaxBytes})`);
      this.paxSize = header.size;
      this.state = "pax";
      return;
    }
    if (header.type !== "0") {
      const what = TYPE_NAMES[header.type] ?? `an entry of type ${JSON.stringify(header.type)}`;
      fail("TARBALL_ENTRY_TYPE", `tar entry ${JSON.stringify(header.path)} at byte ${at} is ${what}; npm pack writes only regular files`);
    }
    const path = this.pax === undefined ? header.path : applyPax(header, this.pax, at);
    this.pax = undefined;
    if (header.linkname.length > 0) fail("TARBALL_ENTRY_TYPE", `tar entry ${JSON.stringify(path)} at byte ${at} is a regular file with a link name ${JSON.stringify(header.linkname)}`);
    if ((header.mode & ~0o777) !== 0) fail("TARBALL_ENTRY_TYPE", `tar entry ${JSON.stringify(path)} at byte ${at} has mode ${header.mode.toString(8)}: set-user-ID, set-group-ID and sticky bits are refused`);
    this.addMember({ path: this.checkPath(path, at), size: header.size, mode: header.mode }, at);
  }

  private finishPax(block: Buffer, at: number): void {
    this.pax = parsePaxRecords(block.subarray(0, this.paxSize), at);
    this.state = "header";
  }

  private checkPath(full: string, at: number): string {
    const unsafe = (why: string): never => fail("TARBALL_PATH_UNSAFE", `tar entry ${JSON.stringify(full)} at byte ${at}: ${why}`);
    if (!full.startsWith(PREFIX)) unsafe(`every member must be under ${PREFIX}`);
    const rel = full.slice(PREFIX.length);
    if (Buffer.byteLength(full) > this.limits.maxPathBytes) unsafe(`path longer than ${this.limits.maxPathBytes} bytes`);
    if (/[\\\u0000-\u001f\u007f]/.test(rel)) unsafe("backslashes and control characters are refused");
    const segments = rel.split("/");
    if (segments.some((s) => s === "" || s === "." || s === "..")) unsafe("empty, '.' and '..' segments are refused");
    if (segments.some((s) => Buffer.byteLength(s) > 255)) unsafe("a path segment is longer than 255 bytes");
    return rel;
  }

  private addMember(member: TarballMember, at: number): void {
    const key = fold(member.path);
    const previous = this.files.get(key);
    if (previous !== undefined) {
      fail("TARBALL_DUPLICATE_MEMBER", previous === member.path ? `tar entry ${JSON.stringify(PREFIX + member.path)} at byte ${at} appears twice` : `tar entries ${JSON.stringify(PREFIX + previous)} and ${JSON.stringify(PREFIX + member.path)} name one file on case-insensitive or normalising file systems`);
    }
    if (this.directories.has(key)) fail("TARBALL_DUPLICATE_MEMBER", `tar entry ${JSON.stringify(PREFIX + member.path)} at byte ${at} is a file and also the directory of another member`);
    const parts = key.split("/");
    for (let i = 1; i < parts.length; i += 1) {
      const dir = parts.slice(0, i).join("/");
      if (this.files.has(dir)) fail("TARBALL_DUPLICATE_MEMBER", `tar entry ${JSON.stringify(PREFIX + member.path)} at byte ${at} lies below ${JSON.stringify(PREFIX + (this.files.get(dir) as string))}, which is a file`);
      this.directories.add(dir);
    }
    this.files.set(key, member.path);
    if (this.members.length >= this.limits.maxMembers) fail("TARBALL_TOO_LARGE", `tarball has more than ${this.limits.maxMembers} members`);
    this.unpacked += member.size;
    if (this.unpacked > this.limits.maxUnpackedBytes) fail("TARBALL_TOO_LARGE", `tarball members declare more than ${this.limits.maxUnpackedBytes} bytes (at ${JSON.stringify(PREFIX + member.path)})`);
    this.members.push(member);
    this.current = member;
    this.remaining = member.size;
    this.padding = (BLOCK - (member.size % BLOCK)) % BLOCK;
    this.state = member.size > 0 ? "data" : "header";
  }
}
