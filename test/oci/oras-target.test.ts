/**
 * OrasTarget against a stand-in `oras` executable that records argv and stdin
 * (no oras binary exists on these machines). Asserts that no secret ever
 * reaches argv and that tool output is never echoed.
 */
import { chmod, copyFile, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RELEASE_ARTIFACT_TYPE } from "../../src/contract/constants.js";
import {
  LayoutTarget,
  OrasTarget,
  copy,
  fetchBlobToFile,
  fetchManifest,
  readLayout,
  tagIfAbsent,
  writeLayout,
  type Descriptor,
  type OrasTargetOptions,
} from "../../src/oci/index.js";

const PASSWORD = "s3cret-registry-password-0123";
const USERNAME = "release-bot";
let work: string;
let oras: string;
let log: string;
let storeDir: string;
let layoutDir: string;
let manifest: Descriptor;

beforeAll(async () => {
  work = await mkdtemp(path.join(os.tmpdir(), "hpk-oras-test-"));
  oras = path.join(work, "oras");
  await copyFile(fileURLToPath(new URL("./fixtures/oras-standin.mjs", import.meta.url)), oras);
  await chmod(oras, 0o755);
  log = path.join(work, "calls.jsonl");
  storeDir = path.join(work, "store");
  const files = new Map<string, string>();
  for (const [name, text] of [["release-manifest.json", '{"a":1}\n'], ["dist/pkg-1.0.0.tgz", "tarball bytes"]] as const) {
    const f = path.join(work, name.replace("/", "_"));
    await writeFile(f, text);
    files.set(name, f);
  }
  layoutDir = path.join(work, "layout");
  manifest = (await writeLayout(layoutDir, RELEASE_ARTIFACT_TYPE, files)).manifest;
});

afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

function options(extraEnv: Record<string, string> = {}, extra: Partial<OrasTargetOptions> = {}): OrasTargetOptions {
  return {
    repository: "127.0.0.1:5000/owner/kit",
    orasPath: oras,
    plainHttp: true,
    credentials: { username: USERNAME, password: PASSWORD },
    env: { ...process.env, ORAS_STANDIN_LOG: log, ORAS_STANDIN_STORE: storeDir, ORAS_STANDIN_REQUIRE_AUTH: "1", ...extraEnv },
    passEnv: ["ORAS_STANDIN_LOG", "ORAS_STANDIN_STORE", "ORAS_STANDIN_REQUIRE_AUTH", ...Object.keys(extraEnv)],
    ...extra,
  };
}

async function caught(p: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await p;
  } catch (error) {
    return { code: (error as { code?: string }).code ?? "NO_CODE", message: (error as Error).message };
  }
  return { code: "NO_ERROR", message: "" };
}

async function calls(): Promise<Array<{ argv: string[]; stdin: string }>> {
  const text = await readFile(log, "utf8").catch(() => "");
  return text.split("\n").filter((l) => l.length > 0).map((l) => JSON.parse(l) as { argv: string[]; stdin: string });
}

describe("OrasTarget", () => {
  it("logs in with --password-stdin into a temporary registry config, pushes a layout and reads it back verified", async () => {
    const target = await OrasTarget.open(options());
    const login = (await calls()).find((c) => c.argv[0] === "login");
    expect(login?.argv).toContain("--password-stdin");
    expect(login?.stdin).toBe(`${PASSWORD}\n`);
    const configPath = login?.argv[login.argv.indexOf("--registry-config") + 1] as string;
    expect((await stat(path.dirname(configPath))).mode & 0o077).toBe(0);

    await target.pushLayout(layoutDir, "candidate-1");
    const cp = (await calls()).find((c) => c.argv[0] === "cp");
    expect(cp?.argv).toEqual(expect.arrayContaining(["--from-oci-layout", "--no-tty", `${layoutDir}:payload`, "127.0.0.1:5000/owner/kit:candidate-1"]));
    expect(await target.resolve("candidate-1")).toEqual(manifest);
    expect(await target.tags()).toEqual(["candidate-1"]);
    const bytes = await fetchManifest(target, manifest);
    const layer = (JSON.parse(bytes.toString()) as { layers: Descriptor[] }).layers[0] as Descriptor;
    const out = path.join(work, "layer.out");
    await fetchBlobToFile(target, layer, out);
    expect(await readFile(out, "utf8")).toBe("tarball bytes");

    await target.copyDigestToTag(manifest.digest, "v1.0.0");
    expect((await target.resolve("v1.0.0")).digest).toBe(manifest.digest);
    expect(await tagIfAbsent(target, manifest, "v1.0.0")).toBe("already-tagged");

    const back = await LayoutTarget.open(path.join(work, "back"), { create: true });
    await copy(target, back, "v1.0.0", { tag: "payload" });
    expect((await readLayout(back.dir)).manifest).toEqual(manifest);

    const other = await OrasTarget.open(options({}, { repository: "127.0.0.1:5000/owner/other" }));
    await copy(await LayoutTarget.open(layoutDir), other, "payload", { tag: "pushed" });
    expect(await other.resolve("pushed")).toEqual(manifest);

    await target.close();
    await other.close();
    await expect(stat(path.dirname(configPath))).rejects.toThrow();
  });

  it("refuses bytes from oras that do not match, leaving no partial file", async () => {
    const target = await OrasTarget.open(options({ ORAS_STANDIN_CORRUPT: "1" }));
    const layer = (await readLayout(layoutDir)).layers[0]?.descriptor as Descriptor;
    const dir = await mkdtemp(path.join(work, "corrupt-"));
    expect((await caught(fetchBlobToFile(target, layer, path.join(dir, "x")))).code).toBe("OCI_DIGEST_MISMATCH");
    expect(await readdir(dir)).toEqual([]);
    await target.close();
  });

  it("a push the registry does not then report with its size fails (OCI_SIZE_MISMATCH), also through copy", async () => {
    const target = await OrasTarget.open(options({ ORAS_STANDIN_SHORT: "1" }));
    const layer = (await readLayout(layoutDir)).layers[0]?.descriptor as Descriptor;
    const source = await LayoutTarget.open(layoutDir);
    expect((await caught(target.push(layer, await source.fetch(layer)))).code).toBe("OCI_SIZE_MISMATCH");
    expect((await caught(copy(source, target, "payload", { tag: "short" }))).code).toBe("OCI_SIZE_MISMATCH");
    await target.close();
  });

  it("requires exactly the three descriptor keys", async () => {
    const target = await OrasTarget.open(options({ ORAS_STANDIN_EXTRA_KEY: "1" }));
    expect((await caught(target.resolve("candidate-1"))).code).toBe("OCI_RESPONSE_INVALID");
    await target.close();
  });

  it("reports failures as `oras <subcommand> failed (exit N)` without echoing tool output", async () => {
    const target = await OrasTarget.open(options({ ORAS_STANDIN_FAIL: "repo tags" }));
    const failure = await caught(target.tags());
    expect(failure).toEqual({ code: "OCI_TOOL_FAILED", message: "oras repo tags failed (exit 3)" });
    await target.close();
    const refused = await caught(OrasTarget.open(options({ ORAS_STANDIN_REJECT_PASSWORD: PASSWORD })));
    expect(refused).toEqual({ code: "OCI_AUTH_FAILED", message: "oras login failed (exit 1)" });
  });

  it("checks the oras version and the executable", async () => {
    expect((await caught(OrasTarget.open(options({ ORAS_STANDIN_VERSION: "1.2.3" })))).code).toBe("OCI_TOOL_VERSION");
    expect((await caught(OrasTarget.open(options({ ORAS_STANDIN_VERSION: "garbage" })))).code).toBe("OCI_TOOL_VERSION");
    const newer = await OrasTarget.open(options({ ORAS_STANDIN_VERSION: "1.4.0" }));
    await newer.close();
    expect((await caught(OrasTarget.open(options({}, { orasPath: path.join(work, "no-such-oras") })))).code).toBe("OCI_TOOL_MISSING");
  });

  it("is reachable through openTarget with transport oras", async () => {
    const { openTarget } = await import("../../src/oci/index.js");
    const saved = { log: process.env["ORAS_STANDIN_LOG"], store: process.env["ORAS_STANDIN_STORE"] };
    process.env["ORAS_STANDIN_LOG"] = log;
    process.env["ORAS_STANDIN_STORE"] = storeDir;
    try {
      const target = await openTarget("127.0.0.1:5000/owner/kit", { transport: "oras", orasPath: oras, orasPassEnv: ["ORAS_STANDIN_LOG", "ORAS_STANDIN_STORE"], plainHttp: true, credentials: { username: USERNAME, password: PASSWORD } });
      expect(target).toBeInstanceOf(OrasTarget);
      expect(await target.tags()).toContain("candidate-1");
      await target.close?.();
    } finally {
      if (saved.log === undefined) delete process.env["ORAS_STANDIN_LOG"];
      else process.env["ORAS_STANDIN_LOG"] = saved.log;
      if (saved.store === undefined) delete process.env["ORAS_STANDIN_STORE"];
      else process.env["ORAS_STANDIN_STORE"] = saved.store;
    }
  });

  it("refuses token credentials, plain HTTP off loopback, and layout repositories", async () => {
    expect((await caught(OrasTarget.open(options({}, { credentials: { token: "t" } })))).code).toBe("OCI_AUTH_FAILED");
    expect((await caught(OrasTarget.open(options({}, { repository: "ghcr.io/owner/kit" })))).code).toBe("OCI_PLAIN_HTTP_REFUSED");
    expect((await caught(OrasTarget.open(options({}, { repository: `oci-layout:${layoutDir}` })))).code).toBe("OCI_REPOSITORY_INVALID");
  });

  it("never put a secret in argv (every recorded call)", async () => {
    const all = await calls();
    expect(all.length).toBeGreaterThan(10);
    const basic = Buffer.from(`${USERNAME}:${PASSWORD}`).toString("base64");
    for (const call of all) {
      for (const arg of call.argv) {
        expect(arg).not.toContain(PASSWORD);
        expect(arg).not.toContain(basic);
      }
    }
    expect(all.filter((c) => c.stdin.includes(PASSWORD)).every((c) => c.argv[0] === "login")).toBe(true);
  });
});
