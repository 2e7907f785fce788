import { spawn, spawnSync } from "node:child_process";
import { mkdtemp, readdir, readFile, rm, stat, symlink, unlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RELEASE_ARTIFACT_TYPE } from "../../src/contract/constants.js";
import { parseReference } from "../../src/contract/reference.js";
import { resolveTagReference } from "../../src/fetch/resolve.js";
import {
  LayoutTarget,
  copy,
  descriptorOf,
  fetchBlobToFile,
  fetchManifest,
  inspectLockFile,
  openTarget,
  tagIfAbsent,
  writeLayout,
  type Descriptor,
  type Target,
} from "../../src/oci/index.js";

let work: string;
beforeAll(async () => {
  work = await mkdtemp(path.join(os.tmpdir(), "hpk-store-"));
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

const blob = (text: string): { desc: Descriptor; bytes: Buffer } => {
  const bytes = Buffer.from(text);
  return { desc: descriptorOf("application/octet-stream", bytes), bytes };
};

async function staged(name: string, contents: Record<string, string>): Promise<{ dir: string; manifest: Descriptor }> {
  const inDir = await mkdtemp(path.join(work, "in-"));
  const files = new Map<string, string>();
  for (const [p, c] of Object.entries(contents)) {
    const f = path.join(inDir, p.replace(/\//g, "_"));
    await writeFile(f, c);
    files.set(p, f);
  }
  const dir = path.join(work, name);
  const { manifest } = await writeLayout(dir, RELEASE_ARTIFACT_TYPE, files);
  return { dir, manifest };
}

describe("LayoutTarget", () => {
  it("opens only existing layouts unless create, creating mode 0700 dirs", async () => {
    const dir = path.join(work, "store-a", "nested");
    await expect(LayoutTarget.open(dir)).toThrowWithCode("OCI_NOT_FOUND");
    const store = await LayoutTarget.open(dir, { create: true });
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    expect(await readFile(path.join(dir, "oci-layout"), "utf8")).toBe('{"imageLayoutVersion":"1.0.0"}\n');
    expect(await store.tags()).toEqual([]);
    const again = await openTarget(`oci-layout:${dir}`);
    expect(again).toBeInstanceOf(LayoutTarget);
    const notLayout = path.join(work, "plain-dir");
    await writeFile(path.join(work, "plain-file"), "x");
    await expect(LayoutTarget.open(path.join(work, "plain-file"))).toThrowWithCode("OCI_LAYOUT_INVALID");
    await expect(LayoutTarget.open(notLayout)).toThrowWithCode("OCI_NOT_FOUND");
  });

  it("pushes verified blobs and refuses bad bytes without leaving files", async () => {
    const store = await LayoutTarget.open(path.join(work, "store-push"), { create: true });
    const good = blob("hello blob");
    await store.push(good.desc, Readable.from([good.bytes]));
    expect(await store.exists(good.desc)).toBe(true);
    const chunks: Buffer[] = [];
    for await (const c of await store.fetch(good.desc)) chunks.push(c as Buffer);
    expect(Buffer.concat(chunks).toString()).toBe("hello blob");

    const wrong = blob("expected content");
    await expect(store.push(wrong.desc, Readable.from([Buffer.from("other content!!!")]))).toThrowWithCode("OCI_DIGEST_MISMATCH");
    await expect(store.push(wrong.desc, Readable.from([Buffer.from("expected content plus")]))).toThrowWithCode("OCI_SIZE_MISMATCH");
    await expect(store.push(wrong.desc, Readable.from([Buffer.from("expected")]))).toThrowWithCode("OCI_SIZE_MISMATCH");
    expect(await store.exists(wrong.desc)).toBe(false);
    expect(await readdir(path.join(store.dir, "ingest"))).toEqual([]);
    await expect(store.fetch(wrong.desc)).toThrowWithCode("OCI_NOT_FOUND");
  });

  it("tags, resolves, lists tags and checks tag grammar", async () => {
    const { dir, manifest } = await staged("store-tags", { "a.txt": "A" });
    const store = await LayoutTarget.open(dir);
    expect(await store.resolve("payload")).toEqual(manifest);
    expect(await store.resolve(manifest.digest)).toEqual(manifest);
    await store.tag(manifest, "v1.0.0");
    expect(await store.tags()).toEqual(["payload", "v1.0.0"]);
    await expect(store.tag(manifest, "-bad")).toThrowWithCode("OCI_TAG_INVALID");
    await expect(store.resolve("nope")).toThrowWithCode("OCI_NOT_FOUND");
    await expect(store.resolve("bad tag")).toThrowWithCode("OCI_TAG_INVALID");
    const missing = blob("not stored");
    await expect(store.tag({ ...missing.desc, mediaType: manifest.mediaType }, "x")).toThrowWithCode("OCI_NOT_FOUND");
  });

  it("refuses a symlinked blob on fetch, saying it is a symlink (not followed) and the fix", async () => {
    const { dir, manifest } = await staged("store-symlink", { "a.txt": "AAAA" });
    const store = await LayoutTarget.open(dir);
    const bytes = await fetchManifest(store, manifest);
    const layer = JSON.parse(bytes.toString()).layers[0] as Descriptor;
    const file = store.blobPath(layer.digest);
    await writeFile(path.join(work, "elsewhere"), "AAAA");
    await unlink(file);
    await symlink(path.join(work, "elsewhere"), file);
    await expect(store.fetch(layer)).toThrowWithCode("OCI_LAYOUT_INVALID");
    await expect(store.fetch(layer)).rejects.toThrow(
      `unsafe OCI blob ${layer.digest}: expected a regular file at ${file} (OCI image-spec image-layout.md: blobs/<alg>/<encoded>), found a symlink (to ${JSON.stringify(path.join(work, "elsewhere"))}; not followed: a blob is read only from the store itself); fix: replace the link with the blob's bytes`,
    );
    await expect(store.fetch(layer)).rejects.not.toThrow(/missing or unsafe/);
  });

  it("keeps every tag when two writers tag concurrently (index.json lock)", async () => {
    const { dir, manifest } = await staged("store-lock", { "a.txt": "lock" });
    const one = await LayoutTarget.open(dir);
    const two = await LayoutTarget.open(dir);
    const jobs: Promise<void>[] = [];
    for (let i = 0; i < 20; i += 1) jobs.push((i % 2 === 0 ? one : two).tag(manifest, `t${i}`));
    await Promise.all(jobs);
    expect((await one.tags()).length).toBe(21);
    const json = JSON.parse(await readFile(path.join(dir, "index.json"), "utf8"));
    expect(json.manifests.length).toBe(21);
  });

  it("breaks a lock left by a dead process and times out on a live one", async () => {
    const { dir, manifest } = await staged("store-stale", { "a.txt": "stale" });
    const dead = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"]).stdout.toString();
    await writeFile(path.join(dir, "index.json.lock"), dead);
    const store = await LayoutTarget.open(dir, { lockTimeoutMs: 200 });
    await store.tag(manifest, "after-stale");
    expect(await store.tags()).toContain("after-stale");
    await writeFile(path.join(dir, "index.json.lock"), String(process.ppid));
    await expect(store.tag(manifest, "blocked")).toThrowWithCode("OCI_LOCKED");
    await expect(store.tag(manifest, "blocked")).rejects.toThrow(`index.json.lock is still held by PID ${process.ppid} after 200 ms`);
    await unlink(path.join(dir, "index.json.lock"));
    expect(await store.tags()).not.toContain("blocked");
  });

  it("refuses at once a lock it did not write (a symlink, other content) or whose PID names another program, naming what was found and the fix (a rerun alone would loop)", async () => {
    const { dir, manifest } = await staged("store-foreign-lock", { "a.txt": "foreign" });
    const lock = path.join(dir, "index.json.lock");
    const store = await LayoutTarget.open(dir, { lockTimeoutMs: 30_000 });
    const started = Date.now();
    await symlink("/etc/passwd", lock);
    await expect(store.tag(manifest, "blocked")).toThrowWithCode("OCI_LOCKED");
    await expect(store.tag(manifest, "blocked")).rejects.toThrow(
      `OCI layout ${dir}: cannot take index.json.lock: ${lock} is not a lock the kit writes: expected a lock file holding the PID of its holder (a writer of this store), which the kit writes when it takes the lock and removes when done, found a symlink (to "/etc/passwd"; not followed); it is neither waited for nor removed; fix: if no hermes-plugin-kit process (a writer of this store) is running, remove ${lock}`,
    );
    await unlink(lock);
    await writeFile(lock, "not a pid");
    await expect(store.tag(manifest, "blocked")).rejects.toThrow('found a file holding "not a pid"');
    if (process.platform === "linux") {
      const other = spawn("sleep", ["30"], { stdio: "ignore" });
      try {
        await new Promise((r) => setTimeout(r, 100));
        await writeFile(lock, String(other.pid));
        // A live process that is not the kit's is said to be alive and not the holder, never "gone" or "stale".
        await expect(store.tag(manifest, "blocked")).toThrowWithCode("OCI_LOCKED");
        await expect(store.tag(manifest, "blocked")).rejects.toThrow(
          `${lock} names a live process that is not the kit's: expected a lock file holding the PID of its holder (a writer of this store), which the kit writes when it takes the lock and removes when done, found PID ${other.pid}, a live process "sleep", which is no JavaScript runtime, so no hermes-plugin-kit process; the lock is not that process's, and whether the process that took it ended (its PID now reused) or something else wrote the file cannot be told, so it is neither waited for nor removed; fix: if no hermes-plugin-kit process (a writer of this store) is running, remove ${lock}, and rerun`,
        );
        await expect(inspectLockFile(lock)).resolves.toEqual({ kind: "other-program", pid: other.pid, found: `PID ${other.pid}, a live process "sleep", which is no JavaScript runtime, so no hermes-plugin-kit process` });
        await expect(store.tag(manifest, "blocked")).rejects.not.toThrow(/is stale|is gone/);
      } finally {
        other.kill();
      }
    }
    expect(Date.now() - started).toBeLessThan(10_000);
    await unlink(lock);
    expect(await store.tags()).not.toContain("blocked");
  });
});

describe("a store whose path holds '@' (a home like /home/user@domain)", () => {
  it("resolve prints a digest reference that parses back to the same store; fetch's parser reads it", async () => {
    const { dir, manifest } = await staged("user@domain/store", { "a.txt": "at" });
    const store = await LayoutTarget.open(dir);
    await store.tag(manifest, "v0.2.0");
    const resolved = await resolveTagReference(`oci-layout:${dir}:v0.2.0`, { openTarget: async (repo) => LayoutTarget.open((repo as { dir: string }).dir), requirePrivate: async () => undefined });
    expect(resolved.reference).toBe(`oci-layout:${dir}@${manifest.digest}`);
    expect(parseReference(resolved.reference, `oci-layout:${dir}`).repository).toMatchObject({ kind: "layout", dir });
  });
});

describe("tagIfAbsent", () => {
  it("same digest is success without a write; another digest is OCI_TAG_CONFLICT writing nothing", async () => {
    const { dir, manifest } = await staged("tia", { "a.txt": "one" });
    const other = await staged("tia-other", { "a.txt": "two" });
    const store = await LayoutTarget.open(dir);
    await copy(await LayoutTarget.open(other.dir), store, other.manifest.digest, { tag: null });
    expect(await tagIfAbsent(store, manifest, "v1")).toBe("tagged");
    const before = await readFile(path.join(dir, "index.json"));
    const mtime = (await stat(path.join(dir, "index.json"))).mtimeMs;
    expect(await tagIfAbsent(store, manifest, "v1")).toBe("already-tagged");
    await expect(tagIfAbsent(store, other.manifest, "v1")).toThrowWithCode("OCI_TAG_CONFLICT");
    await expect(tagIfAbsent(store, manifest, "bad tag")).toThrowWithCode("OCI_TAG_INVALID");
    expect((await readFile(path.join(dir, "index.json"))).equals(before)).toBe(true);
    expect((await stat(path.join(dir, "index.json"))).mtimeMs).toBe(mtime);
    expect((await store.resolve("v1")).digest).toBe(manifest.digest);
  });

  it("works through resolve + tag on a target without its own tagIfAbsent", async () => {
    const { dir, manifest } = await staged("tia-generic", { "a.txt": "gen" });
    const other = await staged("tia-generic-other", { "a.txt": "gen2" });
    const store = await LayoutTarget.open(dir);
    await copy(await LayoutTarget.open(other.dir), store, other.manifest.digest, { tag: null });
    let tagWrites = 0;
    const plain: Target = {
      resolve: (r) => store.resolve(r),
      fetch: (d) => store.fetch(d),
      exists: (d) => store.exists(d),
      push: (d, c) => store.push(d, c),
      tags: () => store.tags(),
      tag: async (d, t) => {
        tagWrites += 1;
        await store.tag(d, t);
      },
    };
    expect(await tagIfAbsent(plain, manifest, "g1")).toBe("tagged");
    expect(await tagIfAbsent(plain, manifest, "g1")).toBe("already-tagged");
    await expect(tagIfAbsent(plain, other.manifest, "g1")).toThrowWithCode("OCI_TAG_CONFLICT");
    expect(tagWrites).toBe(1);
  });
});

describe("verified reads and copy", () => {
  it("fetchManifest refuses an oversized descriptor before reading", async () => {
    let fetched = 0;
    const target = {
      resolve: async () => ({ mediaType: "x", digest: "sha256:" + "0".repeat(64), size: 1 }),
      fetch: async () => {
        fetched += 1;
        return Readable.from([]);
      },
      exists: async () => false,
      tags: async () => [],
    };
    const desc = { mediaType: "application/vnd.oci.image.manifest.v1+json", digest: "sha256:" + "a".repeat(64), size: 1024 * 1024 + 1 };
    await expect(fetchManifest(target, desc)).toThrowWithCode("OCI_MANIFEST_TOO_LARGE");
    expect(fetched).toBe(0);
    await expect(fetchManifest(target, { ...desc, size: 1024 * 1024 })).toThrowWithCode("OCI_SIZE_MISMATCH");
    expect(fetched).toBe(1);
  });

  it("fetchBlobToFile verifies, renames into place, and leaves nothing on failure", async () => {
    const { dir, manifest } = await staged("fetch-file", { "a.txt": "payload bytes" });
    const store = await LayoutTarget.open(dir);
    const layer = JSON.parse((await fetchManifest(store, manifest)).toString()).layers[0] as Descriptor;
    const outDir = await mkdtemp(path.join(work, "out-"));
    const progress: Array<[number, number]> = [];
    await fetchBlobToFile(store, layer, path.join(outDir, "a.txt"), { onProgress: (n, total) => progress.push([n, total]) });
    expect(await readFile(path.join(outDir, "a.txt"), "utf8")).toBe("payload bytes");
    expect(progress.at(-1)).toEqual([13, 13]);
    expect((await stat(path.join(outDir, "a.txt"))).mode & 0o777).toBe(0o600);

    // A target that serves other bytes of the right size, unverified.
    const liar = { ...store, fetch: async () => Readable.from([Buffer.from("PAYLOAD BYTES")]), resolve: store.resolve.bind(store), exists: store.exists.bind(store), tags: store.tags.bind(store) };
    await expect(fetchBlobToFile(liar, layer, path.join(outDir, "b.txt"))).toThrowWithCode("OCI_DIGEST_MISMATCH");
    const short = { ...liar, fetch: async () => Readable.from([Buffer.from("payload")]) };
    await expect(fetchBlobToFile(short, layer, path.join(outDir, "c.txt"))).toThrowWithCode("OCI_SIZE_MISMATCH");
    const long = { ...liar, fetch: async () => Readable.from([Buffer.from("payload bytes"), Buffer.from("!")]) };
    await expect(fetchBlobToFile(long, layer, path.join(outDir, "d.txt"))).toThrowWithCode("OCI_SIZE_MISMATCH");
    expect((await readdir(outDir)).sort()).toEqual(["a.txt"]);
  });

  it("copy moves a manifest and its blobs, skipping blobs the destination has", async () => {
    const { dir, manifest } = await staged("copy-src", { "a.txt": "alpha", "b.txt": "beta" });
    const src = await LayoutTarget.open(dir);
    const dst = await LayoutTarget.open(path.join(work, "copy-dst"), { create: true });
    const pushed: string[] = [];
    const counting: Target = {
      resolve: (r) => dst.resolve(r),
      fetch: (d) => dst.fetch(d),
      exists: (d) => dst.exists(d),
      tags: () => dst.tags(),
      tag: (d, t) => dst.tag(d, t),
      push: async (d, c) => {
        pushed.push(d.digest);
        await dst.push(d, c);
      },
    };
    const desc = await copy(src, counting, "payload", { tag: "v1" });
    expect(desc).toEqual(manifest);
    expect(pushed.length).toBe(4);
    expect((await dst.resolve("v1")).digest).toBe(manifest.digest);
    pushed.length = 0;
    await copy(src, counting, manifest.digest);
    expect(pushed).toEqual([]);
    await expect(copy(src, counting, "missing-tag")).toThrowWithCode("OCI_NOT_FOUND");
  });

  it("copy refuses a corrupted source blob and leaves the destination without it", async () => {
    const { dir, manifest } = await staged("copy-bad", { "a.txt": "gamma" });
    const src = await LayoutTarget.open(dir);
    const layer = JSON.parse((await fetchManifest(src, manifest)).toString()).layers[0] as Descriptor;
    await writeFile(src.blobPath(layer.digest), "GAMMA");
    const dst = await LayoutTarget.open(path.join(work, "copy-bad-dst"), { create: true });
    await expect(copy(src, dst, "payload")).toThrowWithCode("OCI_DIGEST_MISMATCH");
    expect(await dst.exists(layer)).toBe(false);
    expect(await dst.exists(manifest)).toBe(false);
    expect(await dst.tags()).toEqual([]);
  });
});

describe("a store or layout is created only where it is safe, and a refusal leaves nothing behind", () => {
  it("create over an existing directory that is not a layout: refused when it holds anything (OCI_LAYOUT_INVALID, nothing written), made private when empty", async () => {
    const project = await mkdtemp(path.join(work, "project-"));
    await writeFile(path.join(project, "package.json"), "{}");
    const opening = openTarget(`oci-layout:${project}`, { create: true });
    await expect(() => opening).toThrowWithCode("OCI_LAYOUT_INVALID");
    await expect(opening).rejects.toThrow(`cannot create an OCI layout store in ${project}: it is not a layout (no oci-layout file) and not empty (found "package.json"); a store is made only in a new or empty directory; fix: pass a new directory (e.g. ${path.join(project, "store")})`);
    expect(await readdir(project)).toEqual(["package.json"]);
    const empty = await mkdtemp(path.join(work, "empty-"));
    await import("node:fs/promises").then((fs) => fs.chmod(empty, 0o755));
    await openTarget(`oci-layout:${empty}`, { create: true });
    expect((await readdir(empty)).sort()).toEqual(["blobs", "index.json", "oci-layout"]);
    expect((await stat(empty)).mode & 0o777).toBe(0o700);
    // An existing layout opens as before.
    await expect(openTarget(`oci-layout:${empty}`, { create: true })).resolves.toBeDefined();
  });

  it("writeLayout: a missing or symlinked input is named before any directory is made (the parents it would create are not left)", async () => {
    const inputs = await mkdtemp(path.join(work, "inputs-"));
    await writeFile(path.join(inputs, "in.txt"), "hello");
    await symlink(path.join(inputs, "in.txt"), path.join(inputs, "link.txt"));
    const cases: Array<[string, string]> = [
      ["nope", "cannot be read: it does not exist; fix: pass the path of the file to publish as \"a.txt\""],
      ["link.txt", "is a symbolic link, which is not followed; fix: pass the path of the file it points to"],
    ];
    for (const [name, why] of cases) {
      const parent = path.join(work, `wl-${name}`);
      const writing = writeLayout(path.join(parent, "p2", "layout"), "application/x", new Map([["a.txt", path.join(inputs, name)]]));
      await expect(() => writing).toThrowWithCode("OCI_PATH_INVALID");
      await expect(writing).rejects.toThrow(`input file for "a.txt" (${path.join(inputs, name)}) ${why}`);
      await expect(stat(parent)).rejects.toThrow(/ENOENT/);
    }
    // Passing case: the same call with the file itself.
    const ok = path.join(work, "wl-ok", "p2", "layout");
    await expect(writeLayout(ok, "application/x", new Map([["a.txt", path.join(inputs, "in.txt")]]))).resolves.toMatchObject({ manifest: { mediaType: "application/vnd.oci.image.manifest.v1+json" } });
  });
});
