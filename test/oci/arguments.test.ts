/**
 * The public entry points of `hermes-plugin-kit/oci` refuse a wrong argument at the entry with OciError
 * `OCI_ARGUMENT_INVALID` (src/oci/arguments.ts, docs/oci.md "Arguments"), never with a raw TypeError from deep
 * inside and never by ignoring it; and they write nothing. Each row: a failing call, and a passing one of the
 * same entry point.
 */
import { mkdtemp, readdir, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  LayoutTarget,
  OrasTarget,
  RegistryTarget,
  acquirePidLock,
  artifactManifest,
  artifactManifestObject,
  bufferStream,
  childEnvironment,
  copy,
  descriptorOf,
  digestFile,
  digestOf,
  fetchBlobToFile,
  forEachBounded,
  inspectLockFile,
  lockRefusal,
  openBlobStream,
  openTarget,
  parseChallenges,
  parseManifest,
  parseNextLink,
  parseRetryAfter,
  pushReferrer,
  readAllBounded,
  readSecretFromStream,
  registryCredentialsFromEnv,
  runBounded,
  type Descriptor,
} from "../../src/oci/index.js";

let root: string;
let store: LayoutTarget;
const BLOB: Descriptor = descriptorOf("application/octet-stream", Buffer.from("x"));

beforeAll(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), "hpk-oci-args-"));
  store = await LayoutTarget.open(path.join(root, "store"), { create: true });
  await store.push(BLOB, bufferStream(Buffer.from("x")));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const env = () => childEnvironment(["PATH"]);
const runOptions = { timeoutMs: 10_000, maxOutputBytes: 1024 };
const pidLockOptions = { holder: "a test", timeoutMs: 100, refuse: (message: string) => new Error(message) };

/** [name, failing call, the message it must carry, passing call]. */
const rows: [string, () => unknown, string, () => unknown][] = [
  ["LayoutTarget.open(5)", () => LayoutTarget.open(5 as never), "LayoutTarget.open(dir, options): dir must be the layout directory's path (a non-empty string), found number 5", () => LayoutTarget.open(path.join(root, "store"))],
  ["LayoutTarget.open(dir, 5)", () => LayoutTarget.open(path.join(root, "store"), 5 as never), "options must be an object { create?, lockTimeoutMs? } or absent, found number 5", () => LayoutTarget.open(path.join(root, "store"), { lockTimeoutMs: 50 })],
  ["LayoutTarget.open(dir, {crate})", () => LayoutTarget.open(path.join(root, "new-a"), { crate: true } as never), 'option "crate" is not one it reads (it reads create, lockTimeoutMs); did you mean "create"?', () => LayoutTarget.open(path.join(root, "new-b"), { create: true })],
  ["LayoutTarget.open(dir, {create: 'yes'})", () => LayoutTarget.open(path.join(root, "new-c"), { create: "yes" } as never), 'options.create must be true or false (or absent), found "yes"', () => LayoutTarget.open(path.join(root, "new-d"), { create: true })],
  // A number where the repository goes was OCI_REPOSITORY_INVALID ("invalid repository: number 5").
  ["openTarget(5)", () => openTarget(5 as never), "openTarget(repository, options): repository must be the repository to open, host[:port]/path or oci-layout:<dir> (a non-empty string), found number 5", () => openTarget(`oci-layout:${path.join(root, "store")}`)],
  // Options that are not an object: OCI_REPOSITORY_INVALID "undefined/undefined" (RegistryTarget), "for oras: nothing" (OrasTarget).
  ["new RegistryTarget(5)", () => new RegistryTarget(5 as never), "new RegistryTarget(options): options must be an object { registry, repository, plainHttp?, credentials?, timeoutMs?, bodyTimeoutMs?, retry?, chunkSize?, ca?, maxTagPages?, tagPageSize?, trustedTokenRealms? }, found number 5", () => new RegistryTarget({ registry: "127.0.0.1:5000", repository: "a/b", plainHttp: true }).close()],
  ["new RegistryTarget()", () => new RegistryTarget(undefined as never), "new RegistryTarget(options): options must be an object { registry, repository, ", () => new RegistryTarget({ registry: "127.0.0.1:5000", repository: "a/b", plainHttp: true }).close()],
  ["OrasTarget.open(5)", () => OrasTarget.open(5 as never), "OrasTarget.open(options): options must be an object { repository, orasPath?, plainHttp?, credentials?, timeoutMs?, env?, passEnv? }, found number 5", () => Promise.resolve()],
  ["OrasTarget.open()", () => OrasTarget.open(undefined as never), "OrasTarget.open(options): options must be an object { repository, orasPath?, plainHttp?, credentials?, timeoutMs?, env?, passEnv? }, found nothing", () => Promise.resolve()],
  ["OrasTarget.open({})", () => OrasTarget.open({} as never), "OrasTarget.open(options): options.repository must be the registry repository host[:port]/path (a non-empty string), found nothing", () => Promise.resolve()],
  ["OrasTarget.open({repositry})", () => OrasTarget.open({ repositry: "127.0.0.1:5000/a/b" } as never), 'OrasTarget.open(options): option "repositry" is not one it reads (it reads repository, orasPath, plainHttp, credentials, timeoutMs, env, passEnv); did you mean "repository"?', () => Promise.resolve()],
  ["OrasTarget.open({timeoutMs: 'x'})", () => OrasTarget.open({ repository: "127.0.0.1:5000/a/b", timeoutMs: "x" } as never), 'OrasTarget.open(options): options.timeoutMs must be a number of milliseconds of at least 1 (or absent), found "x"', () => Promise.resolve()],
  ["OrasTarget.open({passEnv: 'A'})", () => OrasTarget.open({ repository: "127.0.0.1:5000/a/b", passEnv: "A" } as never), "OrasTarget.open(options): options.passEnv must be names of further environment variables the tool needs (an array of strings), found \"A\"", () => Promise.resolve()],
  ["openTarget(repo, 5)", () => openTarget(`oci-layout:${path.join(root, "store")}`, 5 as never), "openTarget(repository, options): options must be an object", () => openTarget(`oci-layout:${path.join(root, "store")}`)],
  ["openTarget(repo, {create: 'yes'})", () => openTarget(`oci-layout:${path.join(root, "new-e")}`, { create: "yes" } as never), 'options.create must be true or false (or absent), found "yes"', () => openTarget(`oci-layout:${path.join(root, "new-f")}`, { create: true })],
  ["childEnvironment(5)", () => childEnvironment(5 as never), "childEnvironment(allow, set, source): allow must be the names of the variables to copy from source (an array of strings), found number 5", () => childEnvironment(["PATH"])],
  ["childEnvironment([], {A: 5})", () => childEnvironment([], { A: 5 } as never), "set.A must be a string (set is the variables to set on purpose), found number 5", () => childEnvironment([], { A: "5" })],
  ["childEnvironment([], {}, 5)", () => childEnvironment([], {}, 5 as never), "source must be the environment to copy from (default process.env) (an object of strings), found number 5", () => childEnvironment(["A"], {}, { A: "1", B: undefined })],
  ["parseRetryAfter(5)", () => parseRetryAfter(5 as never), "parseRetryAfter(value, now): value must be the Retry-After header's value (a string) or absent, found number 5", () => parseRetryAfter("2")],
  ["parseRetryAfter('1', 'now')", () => parseRetryAfter("1", "now" as never), 'now must be a number of milliseconds since the epoch (the current time) of at least 0 (or absent), found "now"', () => parseRetryAfter(undefined)],
  ["runBounded signal: 5", () => runBounded("true", [], { env: env(), ...runOptions, signal: 5 as never }), "runBounded(program, args, options): options.signal must be an AbortSignal (e.g. new AbortController().signal) or absent, found number 5", () => runBounded("true", [], { env: env(), ...runOptions, signal: new AbortController().signal })],
  ["runBounded signal: {}", () => runBounded("true", [], { env: env(), ...runOptions, signal: {} as never }), "options.signal must be an AbortSignal", () => runBounded("true", [], { env: env(), ...runOptions })],
  ["runBounded(5, [])", () => runBounded(5 as never, [], { env: env(), ...runOptions }), "runBounded(program, args, options): program must be the program to run (a non-empty string), found number 5", () => runBounded("true", [], { env: env(), ...runOptions })],
  ["runBounded(p, args, {timeoutMS})", () => runBounded("true", [], { env: env(), maxOutputBytes: 1, timeoutMS: 5 } as never), 'option "timeoutMS" is not one it reads', () => runBounded("true", ["x"], { env: env(), ...runOptions })],
  ["fetchBlobToFile signal: 'stop'", () => fetchBlobToFile(store, BLOB, path.join(root, "blob-a"), { signal: "stop" as never }), 'fetchBlobToFile(target, desc, filePath, options): options.signal must be an AbortSignal (e.g. new AbortController().signal) or absent, found "stop"', () => fetchBlobToFile(store, BLOB, path.join(root, "blob-b"), { signal: new AbortController().signal })],
  ["fetchBlobToFile(t, d, 5)", () => fetchBlobToFile(store, BLOB, 5 as never), "filePath must be the path of the file to write (a non-empty string), found number 5", () => fetchBlobToFile(store, BLOB, path.join(root, "blob-c"))],
  ["copy(5, ...)", () => copy(5 as never, store, BLOB.digest), "copy(src, dst, reference, options): src must be a Target to read from (resolve, fetch), found number 5", () => Promise.resolve()],
  ["copy signal: 'stop'", () => copy(store, store, "v1", { signal: "stop" as never }), 'copy(src, dst, reference, options): options.signal must be an AbortSignal (e.g. new AbortController().signal) or absent, found "stop"', () => Promise.resolve()],
  ["copy(s, d, ref, {tags})", () => copy(store, store, "v1", { tags: "x" } as never), 'option "tags" is not one it reads (it reads tag, concurrency, blobAttempts, onProgress, signal); did you mean "tag"?', () => Promise.resolve()],
  ["acquirePidLock(5)", () => acquirePidLock(5 as never, pidLockOptions), "acquirePidLock(path, options): path must be the lock file's path (a non-empty string), found number 5", async () => (await acquirePidLock(path.join(root, "pid.lock"), pidLockOptions))()],
  ["acquirePidLock(p, {})", () => acquirePidLock(path.join(root, "pid2.lock"), {} as never), "options.holder must be who takes such a lock, for messages (a non-empty string), found nothing", async () => (await acquirePidLock(path.join(root, "pid2.lock"), pidLockOptions))()],
  ["inspectLockFile(5)", () => inspectLockFile(5 as never), "inspectLockFile(path): path must be the lock file's path (a non-empty string), found number 5", () => inspectLockFile(path.join(root, "no.lock"))],
  ["lockRefusal(null)", () => lockRefusal(null as never, "l", "h", 1), "lockRefusal(found, lockPath, holder, waitedMs): found must be what inspectLockFile answered for a lock that is refused", () => lockRefusal({ kind: "empty" }, "l", "h", 1)],
  ["digestOf(5)", () => digestOf(5 as never), "digestOf(bytes): bytes must be bytes (a Uint8Array or Buffer), found number 5", () => digestOf(Buffer.from("x"))],
  ["descriptorOf(5, bytes)", () => descriptorOf(5 as never, Buffer.from("x")), "descriptorOf(mediaType, bytes): mediaType must be a media type (a non-empty string), found number 5", () => descriptorOf("a/b", Buffer.from("x"))],
  ["digestFile(5)", () => digestFile(5 as never), "digestFile(filePath): filePath must be the path of the file to hash (a non-empty string), found number 5", () => digestFile(path.join(root, "blob-b"))],
  ["bufferStream(5)", () => bufferStream(5 as never), "bufferStream(bytes): bytes must be bytes (a Uint8Array or Buffer), found number 5", () => bufferStream(Buffer.from("x"))],
  ["openBlobStream(5, d)", () => openBlobStream(5 as never, BLOB), "openBlobStream(filePath, desc): filePath must be the blob file's path (a non-empty string), found number 5", () => openBlobStream(store.blobPath(BLOB.digest), BLOB).resume()],
  ["readAllBounded(5)", () => readAllBounded(5 as never, 10, "x"), "readAllBounded(stream, maxBytes, label): stream must be a readable stream, found number 5", () => readAllBounded(Readable.from([Buffer.from("x")]), 10, "x")],
  ["readSecretFromStream(5)", () => readSecretFromStream(5 as never), "readSecretFromStream(stream): stream must be a readable stream, found number 5", () => readSecretFromStream(Readable.from([Buffer.from("secret\n")]))],
  ["registryCredentialsFromEnv(null)", () => registryCredentialsFromEnv(null as never), "registryCredentialsFromEnv(env): env must be an environment (default process.env) (an object of strings), found null", () => registryCredentialsFromEnv({})],
  ["parseChallenges(5)", () => parseChallenges(5 as never), "parseChallenges(header): header must be the WWW-Authenticate header's value (a string) or absent, found number 5", () => parseChallenges('Bearer realm="https://r.example/token"')],
  ["parseNextLink(5)", () => parseNextLink(5 as never), "parseNextLink(value, label): value must be the Link header's value (a string) or absent, found number 5", () => parseNextLink('</v2/x/tags/list?last=a>; rel="next"')],
  ["pushReferrer(5, ...)", () => pushReferrer(5 as never, BLOB, { artifactType: "a/b", mediaType: "a/b", bytes: Buffer.from("x") } as never), "pushReferrer(target, subject, artifact): target must be a Target to push to (resolve, fetch, exists, push, tag), found number 5", () => Promise.resolve()],
  ["forEachBounded(5, 1, fn)", () => forEachBounded(5 as never, 1, async () => undefined), "forEachBounded(items, limit, fn): items must be an array, found number 5", () => forEachBounded([1], 1, async () => undefined)],
  ["artifactManifestObject('t', 5)", () => artifactManifestObject("a/b", 5 as never), "artifactManifestObject(artifactType, layers): layers must be an array of { path, descriptor }, found number 5", () => artifactManifestObject("a/b", [])],
  ["artifactManifestObject('t', [{ path, descriptor: { digest: 5 } }])", () => artifactManifestObject("a/b", [{ path: "p", descriptor: { digest: 5, size: 1 } }] as never), "artifactManifestObject(artifactType, layers): layers[0] must be { path, descriptor: { digest, size } } (a non-empty path, a sha256:<64 hex> digest, a size in bytes), found digest number 5", () => artifactManifestObject("a/b", [{ path: "p", descriptor: BLOB }])],
  ["artifactManifest(5, [])", () => artifactManifest(5 as never, []), "artifactManifestObject(artifactType, layers): artifactType must be a media type (a non-empty string), found number 5", () => artifactManifest("a/b", [])],
];

describe("a wrong argument to a public src/oci entry point is OCI_ARGUMENT_INVALID at the entry", () => {
  it.each(rows)("%s", async (_name, failing, message, passing) => {
    await expect(async () => failing()).toThrowWithCode("OCI_ARGUMENT_INVALID");
    await expect(async () => failing()).rejects.toThrow(message);
    await expect(async () => failing()).rejects.not.toThrow(TypeError);
    await passing();
  });

  it("a refused call writes nothing: no layout directory, no blob file, no lock file", async () => {
    const before = (await readdir(root)).sort();
    await expect(LayoutTarget.open(path.join(root, "never"), { create: "yes" } as never)).toThrowWithCode("OCI_ARGUMENT_INVALID");
    await expect(fetchBlobToFile(store, BLOB, path.join(root, "never-blob"), { signal: 5 as never })).toThrowWithCode("OCI_ARGUMENT_INVALID");
    await expect(acquirePidLock(path.join(root, "never.lock"), { ...pidLockOptions, refuse: 5 as never })).toThrowWithCode("OCI_ARGUMENT_INVALID");
    expect((await readdir(root)).sort()).toEqual(before);
  });

  it("a signal-like object (boolean aborted, add/removeEventListener) is accepted; an aborted AbortSignal still stops the run", async () => {
    const controller = new AbortController();
    controller.abort();
    expect((await runBounded("true", [], { env: env(), ...runOptions, signal: controller.signal })).outcome).toEqual({ kind: "aborted" });
    const likeSignal = { aborted: true, addEventListener: () => undefined, removeEventListener: () => undefined };
    expect((await runBounded("true", [], { env: env(), ...runOptions, signal: likeSignal as never })).outcome).toEqual({ kind: "aborted" });
  });

  it("parseManifest given no bytes is OCI_MANIFEST_INVALID (as for a number), never a TypeError", async () => {
    for (const bad of [null, undefined, 5]) {
      await expect(() => parseManifest(bad as never)).toThrowWithCode("OCI_MANIFEST_INVALID");
    }
  });
});
