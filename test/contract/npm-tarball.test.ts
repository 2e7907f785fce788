/**
 * The one strict reader of npm tarballs: the handed smuggling example, every
 * sibling construct npm pack never writes (each with its exact code), real
 * `npm pack` output accepted, and a differential property: whatever the
 * reader accepts, node-tar (npm's parser) and GNU tar list identically.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import fc from "fast-check";
import { execFileSync } from "node:child_process";
import { mkdtemp, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import { WHOLE_TARBALL_BYTES, WHOLE_TARBALL_UNPACKED_BYTES, readNpmTarballFile } from "../../src/contract/npm-tarball.js";
import { createHash } from "node:crypto";
import { DEFAULT_TAR_LIMITS, resolveTarLimits } from "../../src/contract/tar-ustar.js";
import { fileEntry, gnuTarListing, gzip, nodeTarListing, paxEntry, tarStream, type CraftEntry } from "../support/tar-craft.js";

const PKG = JSON.stringify({ name: "demo-plugin", version: "1.0.0", main: "index.js", files: ["index.js"] }) + "\n";
let work: string;
let counter = 0;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "hpk-tarball-"));
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

async function file(bytes: Buffer): Promise<string> {
  counter += 1;
  const path = join(work, `t-${counter}.tgz`);
  await writeFile(path, bytes);
  return path;
}

const base = (): CraftEntry[] => [fileEntry("package/package.json", PKG), fileEntry("package/index.js", "export {};\n")];

/** A tar stream of 512-byte-aligned raw content hidden inside a member's data. */
function hiddenMembers(): Buffer {
  const evil = JSON.stringify({ name: "demo-plugin", version: "1.0.0", main: "hidden.js", scripts: { postinstall: "node hidden.js" } });
  const padded = evil + " ".repeat(512 - evil.length);
  return tarStream([fileEntry("package/package.json", padded), fileEntry("package/hidden.js", "require('child_process').exec('id');".padEnd(512, " "))], { end: false });
}

describe("the handed input: a global pax header smuggling a second package.json", () => {
  it("is refused (TARBALL_ENTRY_TYPE), while npm's own parser would list the hidden members", async () => {
    const readme = Buffer.concat([Buffer.from("# demo\n".padEnd(512, " ")), hiddenMembers()]);
    expect(readme.length).toBe(2560);
    const path = await file(gzip(tarStream([fileEntry("package/package.json", PKG), paxEntry([["size", "512"]], "g"), fileEntry("package/README.md", readme), fileEntry("package/index.js", "export {};\n")])));
    await expect(readNpmTarballFile(path)).toThrowWithCode("TARBALL_ENTRY_TYPE");
    const npmView = await nodeTarListing(path);
    expect(npmView.entries.filter((e) => e.type === "File").map((e) => e.path)).toEqual(["package/package.json", "package/README.md", "package/package.json", "package/hidden.js", "package/index.js"]);
  });
});

describe("constructs npm pack never writes are refused with their code", () => {
  const cases: [string, () => Buffer, string][] = [
    ["a global pax header", () => gzip(tarStream([paxEntry([["comment", "x"]], "g"), ...base()])), "TARBALL_ENTRY_TYPE"],
    ["a pax size that overrides the ustar size", () => gzip(tarStream([paxEntry([["size", "3"]]), fileEntry("package/README.md", "hello"), ...base()])), "TARBALL_PAX_INVALID"],
    ["a pax path that renames the member", () => gzip(tarStream([paxEntry([["path", "package/package.json"]]), fileEntry("package/README.md", PKG), ...base()])), "TARBALL_PAX_INVALID"],
    ["a pax path that extends a short ustar path", () => gzip(tarStream([paxEntry([["path", "package/index.js.evil"]]), fileEntry("package/index.js", "x"), fileEntry("package/package.json", PKG)])), "TARBALL_PAX_INVALID"],
    ["a pax linkpath", () => gzip(tarStream([paxEntry([["linkpath", "/etc/passwd"]]), fileEntry("package/README.md", "x"), ...base()])), "TARBALL_PAX_INVALID"],
    ["a pax uid override", () => gzip(tarStream([paxEntry([["uid", "0"]]), fileEntry("package/README.md", "x"), ...base()])), "TARBALL_PAX_INVALID"],
    ["a pax uname/gname override", () => gzip(tarStream([paxEntry([["uname", "root"], ["gname", "root"]]), fileEntry("package/README.md", "x"), ...base()])), "TARBALL_PAX_INVALID"],
    ["a pax linkpath on a hard link", () => gzip(tarStream([...base(), paxEntry([["linkpath", "package/index.js"]]), { header: { name: "package/evil.js", type: "1" } }])), "TARBALL_ENTRY_TYPE"],
    ["a pax mode", () => gzip(tarStream([paxEntry([["mode", "4755"]]), fileEntry("package/README.md", "x"), ...base()])), "TARBALL_PAX_INVALID"],
    ["a pax xattr", () => gzip(tarStream([paxEntry([["SCHILY.xattr.user.x", "y"]]), fileEntry("package/README.md", "x"), ...base()])), "TARBALL_PAX_INVALID"],
    ["a pax GNU sparse map", () => gzip(tarStream([paxEntry([["GNU.sparse.size", "9999"]]), fileEntry("package/README.md", "x"), ...base()])), "TARBALL_PAX_INVALID"],
    ["a malformed pax record length", () => gzip(tarStream([{ header: { name: "PaxHeader/x", type: "x" }, data: "99 path=package/a\n" }, fileEntry("package/a", "x"), ...base()])), "TARBALL_PAX_INVALID"],
    ["a pax key given twice", () => gzip(tarStream([paxEntry([["mtime", "1"], ["mtime", "2"]]), fileEntry("package/README.md", "x"), ...base()])), "TARBALL_PAX_INVALID"],
    ["two pax headers in a row", () => gzip(tarStream([paxEntry([["mtime", "1"]]), paxEntry([["mtime", "1"]]), fileEntry("package/README.md", "x"), ...base()])), "TARBALL_PAX_INVALID"],
    ["a pax header before the end of the archive", () => gzip(tarStream([...base(), paxEntry([["mtime", "1"]])])), "TARBALL_PAX_INVALID"],
    ["a second entry with one name", () => gzip(tarStream([...base(), fileEntry("package/index.js", "evil")])), "TARBALL_DUPLICATE_MEMBER"],
    ["names equal after case folding", () => gzip(tarStream([...base(), fileEntry("package/README.md", "a"), fileEntry("package/readme.md", "b")])), "TARBALL_DUPLICATE_MEMBER"],
    ["names equal after Unicode normalisation", () => gzip(tarStream([...base(), paxEntry([["path", `package/lib/${"d".repeat(100)}\u00e9.js`]]), fileEntry(`package/lib/${"d".repeat(88)}`, "a"), paxEntry([["path", `package/lib/${"d".repeat(100)}e\u0301.js`]]), fileEntry(`package/lib/${"d".repeat(88)}`, "b")])), "TARBALL_DUPLICATE_MEMBER"],
    ["a file that is also a directory", () => gzip(tarStream([...base(), fileEntry("package/lib", "a"), fileEntry("package/lib/x.js", "b")])), "TARBALL_DUPLICATE_MEMBER"],
    ["a directory that is also a file", () => gzip(tarStream([...base(), fileEntry("package/lib/x.js", "b"), fileEntry("package/LIB", "a")])), "TARBALL_DUPLICATE_MEMBER"],
    ["a GNU long-name record", () => gzip(tarStream([{ header: { name: "././@LongLink", type: "L" }, data: "package/package.json\0" }, fileEntry("package/README.md", PKG), ...base()])), "TARBALL_ENTRY_TYPE"],
    ["a GNU long-link record", () => gzip(tarStream([{ header: { name: "././@LongLink", type: "K" }, data: "/etc/passwd\0" }, ...base()])), "TARBALL_ENTRY_TYPE"],
    ["a hard link", () => gzip(tarStream([...base(), { header: { name: "package/evil.js", type: "1", linkname: "package/index.js" } }])), "TARBALL_ENTRY_TYPE"],
    ["a symbolic link", () => gzip(tarStream([...base(), { header: { name: "package/evil.js", type: "2", linkname: "/etc/passwd" } }])), "TARBALL_ENTRY_TYPE"],
    ["a character device", () => gzip(tarStream([...base(), { header: { name: "package/tty", type: "3" } }])), "TARBALL_ENTRY_TYPE"],
    ["a block device", () => gzip(tarStream([...base(), { header: { name: "package/sda", type: "4" } }])), "TARBALL_ENTRY_TYPE"],
    ["a directory", () => gzip(tarStream([...base(), { header: { name: "package/lib/", type: "5", mode: 0o755 } }])), "TARBALL_ENTRY_TYPE"],
    ["a FIFO", () => gzip(tarStream([...base(), { header: { name: "package/fifo", type: "6" } }])), "TARBALL_ENTRY_TYPE"],
    ["a contiguous file", () => gzip(tarStream([...base(), fileEntry("package/c.js", "x", { type: "7" })])), "TARBALL_ENTRY_TYPE"],
    ["an old-style file (type NUL)", () => gzip(tarStream([...base(), fileEntry("package/o.js", "x", { type: "\0" })])), "TARBALL_ENTRY_TYPE"],
    ["a GNU sparse file", () => gzip(tarStream([...base(), fileEntry("package/s.js", "x", { type: "S" })])), "TARBALL_ENTRY_TYPE"],
    ["a vendor extension", () => gzip(tarStream([...base(), fileEntry("package/v.js", "x", { type: "Z" })])), "TARBALL_ENTRY_TYPE"],
    ["a set-user-ID file", () => gzip(tarStream([...base(), fileEntry("package/bin.js", "x", { mode: 0o4755 })])), "TARBALL_ENTRY_TYPE"],
    ["a regular file with a link name", () => gzip(tarStream([...base(), fileEntry("package/x.js", "x", { linkname: "/etc/passwd" })])), "TARBALL_ENTRY_TYPE"],
    ["a member outside package/", () => gzip(tarStream([...base(), fileEntry("other/index.js", "x")])), "TARBALL_PATH_UNSAFE"],
    ["an absolute path", () => gzip(tarStream([...base(), fileEntry("/package/x.js", "x")])), "TARBALL_PATH_UNSAFE"],
    ["a parent segment", () => gzip(tarStream([...base(), fileEntry("package/../x.js", "x")])), "TARBALL_PATH_UNSAFE"],
    ["a dot segment", () => gzip(tarStream([...base(), fileEntry("package/./x.js", "x")])), "TARBALL_PATH_UNSAFE"],
    ["a leading ./", () => gzip(tarStream([fileEntry("./package/package.json", PKG)])), "TARBALL_PATH_UNSAFE"],
    ["an empty segment", () => gzip(tarStream([...base(), fileEntry("package//x.js", "x")])), "TARBALL_PATH_UNSAFE"],
    ["a trailing slash on a file", () => gzip(tarStream([...base(), fileEntry("package/x/", "x")])), "TARBALL_PATH_UNSAFE"],
    ["a backslash", () => gzip(tarStream([...base(), fileEntry("package/..\\x.js", "x")])), "TARBALL_PATH_UNSAFE"],
    ["a control character", () => gzip(tarStream([...base(), fileEntry("package/x\n.js", "x")])), "TARBALL_PATH_UNSAFE"],
    ["the ustar prefix leaving package/", () => gzip(tarStream([...base(), fileEntry("x.js", "x", { prefix: "elsewhere" })])), "TARBALL_PATH_UNSAFE"],
    ["a bad header checksum", () => gzip(tarStream([...base(), fileEntry("package/x.js", "x", { checksumDelta: 1 })])), "TARBALL_HEADER_INVALID"],
    ["the GNU magic", () => gzip(tarStream([...base(), fileEntry("package/x.js", "x", { magic: "ustar  \0" })])), "TARBALL_HEADER_INVALID"],
    ["pre-POSIX (v7) headers", () => gzip(tarStream([...base(), fileEntry("package/x.js", "x", { magic: "\0".repeat(8) })])), "TARBALL_HEADER_INVALID"],
    ["a base-256 size", () => gzip(tarStream([...base(), fileEntry("package/x.js", "x", { sizeField: Buffer.from([0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]) })])), "TARBALL_HEADER_INVALID"],
    ["junk after the size digits", () => gzip(tarStream([...base(), fileEntry("package/x.js", "x", { sizeField: Buffer.from("0000000001x\0", "latin1") })])), "TARBALL_HEADER_INVALID"],
    ["a name that is not UTF-8", () => gzip(tarStream([...base(), fileEntry("package/x.js", "x", { nameBytes: Buffer.from([0x70, 0x61, 0x63, 0x6b, 0x61, 0x67, 0x65, 0x2f, 0xff, 0x2e, 0x6a, 0x73]) })])), "TARBALL_HEADER_INVALID"],
    ["no end-of-archive marker", () => gzip(tarStream(base(), { end: false })), "TARBALL_HEADER_INVALID"],
    ["one zero block only", () => gzip(Buffer.concat([tarStream(base(), { end: false }), Buffer.alloc(512)])), "TARBALL_HEADER_INVALID"],
    ["a member cut short", () => gzip(tarStream([...base(), fileEntry("package/x.js", "x", { size: 4096 })], { end: false })), "TARBALL_HEADER_INVALID"],
    ["a header after one zero block (node-tar reads on)", () => gzip(Buffer.concat([tarStream([fileEntry("package/package.json", PKG)], { end: false }), Buffer.alloc(512), tarStream([fileEntry("package/index.js", "x")])])), "TARBALL_TRAILING_DATA"],
    ["data after the end-of-archive marker", () => gzip(Buffer.concat([tarStream(base()), Buffer.from("garbage")])), "TARBALL_TRAILING_DATA"],
    ["a second gzip member", () => Buffer.concat([gzip(tarStream(base())), gzip(tarStream([fileEntry("package/evil.js", "x")]))]), "TARBALL_TRAILING_DATA"],
    ["bytes after the gzip member", () => Buffer.concat([gzip(tarStream(base())), Buffer.from("junk")]), "TARBALL_TRAILING_DATA"],
    ["zero bytes after the gzip member (Node's gunzip ignores them)", () => Buffer.concat([gzip(tarStream(base())), Buffer.alloc(16)]), "TARBALL_TRAILING_DATA"],
    ["a gzip file name field", () => { const g = gzip(tarStream(base())); return Buffer.concat([g.subarray(0, 3), Buffer.from([0x08]), g.subarray(4, 10), Buffer.from("name\0"), g.subarray(10)]); }, "TARBALL_GZIP_INVALID"],
    ["a wrong gzip CRC", () => { const g = gzip(tarStream(base())); g[g.length - 8] = (g[g.length - 8] as number) ^ 0xff; return g; }, "TARBALL_GZIP_INVALID"],
    ["a truncated gzip stream", () => { const g = gzip(tarStream(base())); return Buffer.concat([g.subarray(0, g.length - 20), g.subarray(g.length - 8)]); }, "TARBALL_GZIP_INVALID"],
    ["not gzip at all", () => tarStream(base()), "TARBALL_GZIP_INVALID"],
    ["an absurd declared size (8 GiB)", () => gzip(tarStream([...base(), fileEntry("package/big.bin", "", { sizeField: Buffer.from("77777777777\0", "latin1") })], { end: false })), "TARBALL_TOO_LARGE"],
    ["no package.json", () => gzip(tarStream([fileEntry("package/index.js", "x")])), "TARBALL_METADATA_MISSING"],
  ];
  it.each(cases)("%s", async (_label, build, code) => {
    const path = await file(build());
    // Read whole (the default for a small tarball) and streamed: the same code.
    await expect(readNpmTarballFile(path)).toThrowWithCode(code);
    await expect(readNpmTarballFile(path, { wholeFileBytes: 0 })).toThrowWithCode(code);
    // Every refusal says what to do about it.
    await expect(readNpmTarballFile(path)).rejects.toThrow(/; fix: \S/);
  });

  it("the fix of a refusal is what the user does: rebuild with npm pack (malformed), shrink or raise the bound (too large), a readable .tgz (unreadable)", async () => {
    const notGzip = await file(tarStream(base()));
    await expect(readNpmTarballFile(notGzip)).rejects.toThrow(
      `${notGzip} is not gzip data; fix: use the tarball exactly as \`npm pack\` wrote it (rebuild it with \`npm pack\`; an edited, truncated, re-compressed or hand-made archive is refused); a release whose own tarball fails this check cannot be installed safely: do not install it, and tell its publisher`,
    );
    const bomb = await file(gzip(tarStream([...base(), fileEntry("package/zeros.bin", Buffer.alloc(2 * 1024 * 1024))])));
    await expect(readNpmTarballFile(bomb, { limits: { maxUnpackedBytes: 1024 * 1024 } })).rejects.toThrow(/; fix: the bounds stop decompression bombs: make the package smaller \(package\.json `files`, `\.npmignore`\), or, calling the library, raise the bound/);
    await expect(readNpmTarballFile(join(dirname(bomb), "absent.tgz"))).rejects.toThrow(/^cannot read .*absent\.tgz: ENOENT; fix: pass the path of the \.tgz file `npm pack` wrote, a regular file you can read/);
    const duplicated = await file(gzip(tarStream([fileEntry("package/package.json", '{"name":"a","name":"b","version":"1.0.0"}')])));
    await expect(readNpmTarballFile(duplicated)).rejects.toThrow(/is not strict JSON: .*; fix: make package\.json strict JSON \(no duplicate keys, no comments or trailing commas\), then rebuild with npm pack$/);
  });

  it("a tarball read whole and the same tarball streamed give the same listing, digest and kept bytes; one inflating past the whole-read bound is streamed", async () => {
    const small = await file(gzip(tarStream([...base(), fileEntry("package/data.bin", Buffer.from(Array.from({ length: 70_000 }, (_, i) => (i * 7919) % 251)))])));
    // 20 MiB of zeros: ~20 KiB of gzip, past WHOLE_TARBALL_UNPACKED_BYTES once inflated.
    const wide = await file(gzip(tarStream([...base(), fileEntry("package/zeros.bin", Buffer.alloc(20 * 1024 * 1024))])));
    expect((await readFile(wide)).length).toBeLessThan(WHOLE_TARBALL_BYTES);
    for (const path of [small, wide]) {
      const { kept: wholeKept, ...whole } = await readNpmTarballFile(path, { keep: (p) => p.endsWith(".bin") });
      const { kept: streamedKept, ...streamed } = await readNpmTarballFile(path, { keep: (p) => p.endsWith(".bin"), wholeFileBytes: 0 });
      expect(whole).toEqual(streamed);
      expect([...wholeKept.keys()]).toEqual([...streamedKept.keys()]);
      for (const [name, bytes] of wholeKept) expect(bytes.equals(streamedKept.get(name) as Buffer), name).toBe(true);
      expect(wholeKept.get("data.bin")?.length ?? wholeKept.get("zeros.bin")?.length).toBeGreaterThan(0);
      expect(whole.sha256).toBe(createHash("sha256").update(await readFile(path)).digest("hex"));
    }
    expect((await readNpmTarballFile(wide)).unpackedSize).toBeGreaterThan(WHOLE_TARBALL_UNPACKED_BYTES);
    // The trailer's size field is only a hint for choosing: forged low, the whole read stops at its bound and the stream finds the lie.
    const forged = await readFile(wide);
    forged.writeUInt32LE(1024, forged.length - 4);
    const forgedPath = await file(forged);
    await expect(readNpmTarballFile(forgedPath)).toThrowWithCode("TARBALL_GZIP_INVALID");
    await expect(readNpmTarballFile(forgedPath, { wholeFileBytes: 0 })).toThrowWithCode("TARBALL_GZIP_INVALID");
  });

  it("bounds members, unpacked bytes (a gzip bomb stops early) and kept bytes", async () => {
    const many = await file(gzip(tarStream([...base(), ...Array.from({ length: 20 }, (_, i) => fileEntry(`package/f${i}.js`, "x"))])));
    await expect(readNpmTarballFile(many, { limits: { maxMembers: 10 } })).toThrowWithCode("TARBALL_TOO_LARGE");
    const bomb = await file(gzip(tarStream([...base(), fileEntry("package/zeros.bin", Buffer.alloc(8 * 1024 * 1024))])));
    await expect(readNpmTarballFile(bomb, { limits: { maxUnpackedBytes: 1024 * 1024 } })).toThrowWithCode("TARBALL_TOO_LARGE");
    // Streamed, the refusal stops the pipeline; the descriptor is closed once, by the reader (a new-user trial saw EBADF here).
    await expect(readNpmTarballFile(bomb, { limits: { maxUnpackedBytes: 1024 * 1024 }, wholeFileBytes: 0 })).toThrowWithCode("TARBALL_TOO_LARGE");
    await expect(readNpmTarballFile(bomb, { keep: () => true, maxKeptBytes: 1024 * 1024, wholeFileBytes: 0 })).toThrowWithCode("TARBALL_TOO_LARGE");
    await expect(readNpmTarballFile(bomb, { keep: () => true, maxKeptBytes: 1024 * 1024 })).toThrowWithCode("TARBALL_TOO_LARGE");
    const bigPkg = await file(gzip(tarStream([fileEntry("package/package.json", PKG.replace("}", `,"x":"${"y".repeat(1024 * 1024)}"}`))])));
    await expect(readNpmTarballFile(bigPkg)).toThrowWithCode("TARBALL_TOO_LARGE");
    await expect(readNpmTarballFile(many)).resolves.toBeDefined();
  });

  it("a bound given as undefined is the default, not lifted; NaN, 0, a fraction or a string is TARBALL_LIMITS_INVALID (plain JavaScript)", async () => {
    expect(resolveTarLimits({ maxMembers: undefined })).toEqual(DEFAULT_TAR_LIMITS);
    expect(resolveTarLimits({ maxMembers: 10 }).maxMembers).toBe(10);
    const bomb = await file(gzip(tarStream([...base(), fileEntry("package/zeros.bin", Buffer.alloc(2 * 1024 * 1024))])));
    // Left out by spreading an options object whose bound is undefined: the default holds.
    for (const limits of [{ maxUnpackedBytes: undefined }, { maxMembers: undefined, maxUnpackedBytes: 1024 * 1024 }]) {
      const read = readNpmTarballFile(bomb, { limits, wholeFileBytes: 0 });
      if (limits.maxUnpackedBytes === undefined) await expect(read).resolves.toBeDefined();
      else await expect(() => read).toThrowWithCode("TARBALL_TOO_LARGE");
    }
    for (const value of [Number.NaN, 0, -1, 1.5, "10", null, Number.POSITIVE_INFINITY]) {
      await expect(() => readNpmTarballFile(bomb, { limits: { maxMembers: value as never } })).toThrowWithCode("TARBALL_LIMITS_INVALID");
    }
    expect(() => resolveTarLimits({ maxMembers: Number.NaN })).toThrow("tar limit maxMembers must be a positive whole number (default 100000), found number NaN");
    expect(() => resolveTarLimits("big" as never)).toThrow('tar limits must be an object ({ maxMembers, maxUnpackedBytes, maxPaxBytes, maxPathBytes }), found "big"');
  });

  it("a bound it does not read (maxMember) is TARBALL_LIMITS_INVALID naming the bound it meant, not ignored with the default in force", async () => {
    expect(resolveTarLimits({ maxPathBytes: 100 }).maxPathBytes).toBe(100);
    await expect(() => resolveTarLimits({ maxMember: 10 } as never)).toThrowWithCode("TARBALL_LIMITS_INVALID");
    expect(() => resolveTarLimits({ maxMember: 10 } as never)).toThrow('tar limits have "maxMember", which is no bound it reads (it reads maxMembers, maxUnpackedBytes, maxPaxBytes, maxPathBytes); did you mean "maxMembers"?; fix: name one of those bounds, or leave it out for the default');
    const bomb = await file(gzip(tarStream([...base(), fileEntry("package/zeros.bin", Buffer.alloc(2 * 1024 * 1024))])));
    await expect(() => readNpmTarballFile(bomb, { limits: { maxUnpackedByte: 1024 } as never })).toThrowWithCode("TARBALL_LIMITS_INVALID");
  });

  it("accepts zero padding after the end-of-archive marker and long and non-ASCII paths written as npm pack writes them", async () => {
    const long = `package/deep/${"a".repeat(60)}/${"b".repeat(60)}/${"c".repeat(120)}.js`;
    const entries: CraftEntry[] = [
      ...base(),
      paxEntry([["path", long], ["mtime", "499162500"], ["size", "3"]]),
      fileEntry(`${"c".repeat(99)}`, "hi\n", { prefix: `package/deep/${"a".repeat(60)}/${"b".repeat(60)}` }),
      paxEntry([["path", "package/deep/\u00e9.js"], ["mtime", "499162500"], ["size", "2"]]),
      fileEntry("package/deep/\u00e9.js", "y\n"),
    ];
    const path = await file(gzip(Buffer.concat([tarStream(entries), Buffer.alloc(9 * 1024)])));
    const listing = await readNpmTarballFile(path);
    expect(listing.members.map((m) => m.path)).toEqual(["package.json", "index.js", long.slice("package/".length), "deep/\u00e9.js"]);
    const npmView = await nodeTarListing(path);
    expect(npmView.entries.filter((e) => e.type === "File").map((e) => e.path)).toEqual(listing.members.map((m) => `package/${m.path}`));
  });
});

describe("real npm pack output", () => {
  it("is accepted; members, sizes and hash agree with node-tar, GNU tar and the file", async () => {
    const dir = join(work, "real");
    await mkdir(join(dir, "lib", "deep", "x".repeat(80), "y".repeat(80)), { recursive: true });
    await writeFile(join(dir, "package.json"), JSON.stringify({ name: "real-pack", version: "1.2.3", main: "index.js", bin: { "real-pack": "bin.js" }, files: ["index.js", "bin.js", "lib"] }));
    await writeFile(join(dir, "index.js"), "export {};\n");
    await writeFile(join(dir, "bin.js"), "#!/usr/bin/env node\n");
    await writeFile(join(dir, "lib", "caf\u00e9.js"), "x\n");
    await writeFile(join(dir, "lib", "deep", "x".repeat(80), "y".repeat(80), `${"z".repeat(120)}.js`), "deep\n");
    execFileSync("npm", ["pack", "--ignore-scripts", "--pack-destination", dir], { cwd: dir, env: { ...process.env, npm_config_update_notifier: "false", npm_config_fund: "false" }, stdio: "pipe" });
    const path = join(dir, "real-pack-1.2.3.tgz");
    const listing = await readNpmTarballFile(path, { keep: (p) => p.endsWith(".js") });
    const paths = listing.members.map((m) => `package/${m.path}`).sort();
    const npmView = await nodeTarListing(path);
    expect(npmView.warnings).toEqual([]);
    expect(npmView.entries.map((e) => e.path).sort()).toEqual(paths);
    expect(npmView.entries.map((e) => e.size).reduce((a, b) => a + b, 0)).toBe(listing.unpackedSize);
    expect(gnuTarListing(path).names.sort()).toEqual(paths);
    expect(listing.members.find((m) => m.path === "bin.js")?.mode).toBe(0o755);
    expect(listing.kept.get("index.js")?.toString()).toBe("export {};\n");
    const { createHash } = await import("node:crypto");
    expect(listing.sha256).toBe(createHash("sha256").update(await readFile(path)).digest("hex"));
  });
});

describe("one reading: whatever the strict reader accepts, node-tar and GNU tar list the same members", () => {
  it("property: mutated npm-style tarballs are refused or listed identically by all three readers", async () => {
    const seed = tarStream([
      fileEntry("package/package.json", PKG),
      paxEntry([["path", `package/lib/${"n".repeat(120)}.js`], ["mtime", "499162500"], ["size", "5"]]),
      fileEntry(`package/lib/${"n".repeat(80)}`, "long\n"),
      fileEntry("package/index.js", "export {};\n"),
      fileEntry("package/README.md", "# r\n".repeat(200)),
    ]);
    const mutation = fc.oneof(
      fc.record({ kind: fc.constant("byte" as const), at: fc.nat({ max: seed.length - 1 }), value: fc.integer({ min: 0, max: 255 }) }),
      fc.record({ kind: fc.constant("header-byte" as const), block: fc.nat({ max: 8 }), at: fc.nat({ max: 511 }), value: fc.constantFrom(0, 0x20, 0x30, 0x31, 0x32, 0x35, 0x67, 0x78, 0x4c, 0x80, 0xff) }),
      fc.record({ kind: fc.constant("insert-block" as const), block: fc.nat({ max: 12 }), fill: fc.constantFrom(0, 0x41) }),
      fc.record({ kind: fc.constant("insert-pax" as const), block: fc.nat({ max: 12 }), key: fc.constantFrom("path", "size", "mtime", "linkpath", "comment"), value: fc.constantFrom("package/package.json", "512", "0", "1", "package/evil.js"), type: fc.constantFrom("x", "g") }),
      fc.record({ kind: fc.constant("truncate" as const), at: fc.nat({ max: seed.length }) }),
    );
    type Mutation = typeof mutation extends fc.Arbitrary<infer T> ? T : never;
    const apply = (bytes: Buffer, m: Mutation): Buffer => {
      const out = Buffer.from(bytes);
      switch (m.kind) {
        case "byte":
          out[m.at] = m.value;
          return out;
        case "header-byte":
          if (m.block * 512 + m.at < out.length) out[m.block * 512 + m.at] = m.value;
          return out;
        case "insert-block": {
          const at = Math.min(m.block * 512, out.length);
          return Buffer.concat([out.subarray(0, at), Buffer.alloc(512, m.fill), out.subarray(at)]);
        }
        case "insert-pax": {
          const at = Math.min(m.block * 512, out.length);
          return Buffer.concat([out.subarray(0, at), tarStream([paxEntry([[m.key, m.value]], m.type)], { end: false }), out.subarray(at)]);
        }
        default:
          return out.subarray(0, m.at);
      }
    };
    const samples = fc.sample(fc.array(mutation, { minLength: 1, maxLength: 3 }), { numRuns: 300, seed: 1729 });
    let accepted = 0;
    for (const mutations of samples) {
      const tarBytes = mutations.reduce(apply, seed);
      const path = await file(gzipSync(tarBytes, { level: 9 }));
      let ours: string[] | undefined;
      try {
        ours = (await readNpmTarballFile(path)).members.map((m) => `package/${m.path}`);
      } catch {
        ours = undefined;
      }
      if (ours === undefined) continue;
      accepted += 1;
      const npmView = await nodeTarListing(path);
      expect(npmView.warnings, JSON.stringify(mutations)).toEqual([]);
      expect(npmView.entries.map((e) => `${e.type}:${e.path}`), JSON.stringify(mutations)).toEqual(ours.map((p) => `File:${p}`));
      const gnu = gnuTarListing(path);
      expect(gnu.names, JSON.stringify(mutations)).toEqual(ours);
    }
    expect(accepted).toBeGreaterThan(10);
    // The unmutated seed is accepted by all three.
    const seedPath = await file(gzipSync(seed));
    expect((await readNpmTarballFile(seedPath)).members).toHaveLength(4);
    expect(gunzipSync(await readFile(seedPath)).equals(seed)).toBe(true);
  });
});

