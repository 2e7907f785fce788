/**
 * stdout belongs to JSON-RPC (docs/kit.md, "stdout"):
 * a built server routes every non-protocol stdout write (console methods,
 * process.stdout, fd 1, /dev/stdout, inherited child stdio; at module load
 * and in handlers) to stderr before any plugin code runs.
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildPluginPackage, doctorPluginPackage } from "../../src/kit/index.js";
import { tempDir } from "./fixtures.js";
import { rawSession, resultText, type RawSession } from "./rpc.js";

const dirs: string[] = [];
let out: string;
let session: RawSession;

/** Noise written at module load by an ESM module, a CommonJS module and the entry itself. */
const LOAD_NOISE = ["[db] Connecting", "[cjs] loaded", "[cjs] raw write", "[entry] top-level write"];

beforeAll(async () => {
  const src = tempDir("stdout-src");
  out = tempDir("stdout-out");
  dirs.push(src, out);
  mkdirSync(path.join(src, "src"), { recursive: true });
  writeFileSync(path.join(src, "package.json"), '{"name":"noisy","version":"1.0.0","type":"module"}');
  writeFileSync(path.join(src, "src", "db.js"), 'console.log("[db] Connecting");\nexport const db = { ready: true };\n');
  writeFileSync(path.join(src, "src", "legacy.cjs"), 'console.log("[cjs] loaded");\nprocess.stdout.write("[cjs] raw write\\n");\nmodule.exports = { legacy: 1 };\n');
  writeFileSync(
    path.join(src, "src", "entry.js"),
    `import { db } from "./db.js";
import legacy from "./legacy.cjs";
import fs, { writeSync } from "node:fs";
import { spawnSync, execFileSync, fork } from "node:child_process";
import { definePlugin, intArg, strArg, tool } from "hermes-plugin-kit";
process.stdout.write("[entry] top-level write\\n");
const noise = tool({
  name: "noise", description: "Writes to stdout in every way.", params: {}, readOnly: true,
  handler: async () => {
    console.log("[h] log"); console.info("[h] info"); console.debug("[h] debug");
    console.dir({ h: "dir" }); console.table([{ h: "table" }]); console.group("[h] group"); console.groupEnd();
    console.count("[h] count"); console.dirxml("[h] dirxml");
    process.stdout.write("[h] stdout.write\\n"); process.stdout.write(Buffer.from("[h] buffer\\n"), () => {});
    writeSync(1, "[h] writeSync named\\n"); fs.writeSync(1, "[h] writeSync default\\n");
    fs.writeFileSync("/dev/stdout", "[h] dev stdout\\n"); fs.appendFileSync(1, "[h] append fd1\\n");
    await new Promise((resolve) => fs.write(1, "[h] write async\\n", resolve));
    spawnSync(process.execPath, ["-e", "console.log('[h] child spawnSync')"], { stdio: "inherit" });
    execFileSync(process.execPath, ["-e", "console.log('[h] child execFileSync')"], { stdio: ["ignore", "inherit", "inherit"] });
    await new Promise((resolve) => fork("unused", [], { execArgv: ["-e", "console.log('[h] child fork'); process.disconnect()"] }).on("exit", resolve));
    process.stdout.end("[h] end\\n");
    return { db: db.ready, legacy: legacy.legacy };
  },
});
const verifyArtifact = tool({
  name: "verify_artifact", description: "Verify an artifact.",
  params: {
    digest: strArg("Digest.", { required: true, example: "sha256:" + "0".repeat(64), pattern: "^sha256:[0-9a-f]{64}$" }),
    size: intArg("Size in bytes.", { required: true, example: 1024, minimum: 0 }),
  },
  handler: ({ digest, size }) => ({ digest, size }),
});
export default definePlugin({ name: "noisy", version: "1.0.0", description: "Noisy.", server: "noisy", tools: [noise, verifyArtifact] });
`,
  );
  await buildPluginPackage({ entry: path.join(src, "src", "entry.js"), outDir: out });
  const cwd = tempDir("stdout-cwd");
  dirs.push(cwd);
  session = rawSession(path.join(out, "dist", "server.js"), { PATH: process.env["PATH"] ?? "", PLUGIN_ROOT: out, PLUGIN_DATA: cwd }, cwd);
});

afterAll(async () => {
  await session?.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const nonProtocol = () => session.lines.filter((line) => line.json?.["jsonrpc"] !== "2.0").map((line) => line.text);

describe("a built server keeps stdout for JSON-RPC", () => {
  it("sends module-load writes (ESM, CommonJS, the entry) to stderr before initialize answers", async () => {
    const result = await session.initialize();
    expect((result["serverInfo"] as { name: string }).name).toBe("noisy");
    expect(nonProtocol()).toEqual([]);
    for (const text of LOAD_NOISE) expect(session.stderr()).toContain(text);
  });

  it("sends every handler write (console, process.stdout, fd 1, /dev/stdout, child stdio) to stderr", async () => {
    const answer = await session.request("tools/call", { name: "noise", arguments: {} });
    expect(resultText(answer)).toBe('{"success":true,"data":{"db":true,"legacy":1}}');
    // The server still answers after process.stdout.end().
    const again = await session.request("tools/call", { name: "verify_artifact", arguments: { digest: "sha256:" + "a".repeat(64), size: 1 } });
    expect((again["result"] as { isError?: boolean }).isError).toBeUndefined();
    expect(nonProtocol()).toEqual([]);
    const expected = [
      "[h] log", "[h] info", "[h] debug", "h: 'dir'", "table", "[h] group", "[h] count: 1", "[h] dirxml", "[h] stdout.write", "[h] buffer",
      "[h] writeSync named", "[h] writeSync default", "[h] dev stdout", "[h] append fd1", "[h] write async",
      "[h] child spawnSync", "[h] child execFileSync", "[h] child fork", "[h] end",
    ];
    for (const text of expected) expect(session.stderr()).toContain(text);
  });

  it("names every bad argument, one line each (verify_artifact)", async () => {
    const bad = await session.request("tools/call", { name: "verify_artifact", arguments: { digest: "sha256:xyz", size: -1 } });
    expect((bad["result"] as { isError?: boolean }).isError).toBe(true);
    expect(resultText(bad)).toBe("digest must match the pattern '^sha256:[0-9a-f]{64}$'\nsize must be >= 0");
    const empty = await session.request("tools/call", { name: "verify_artifact", arguments: {} });
    expect(resultText(empty)).toBe(`digest is required (e.g. 'sha256:${"0".repeat(64)}')\nsize is required (e.g. 1024)`);
  });

  it("passes the doctor without STDOUT_NOT_PROTOCOL", async () => {
    const report = await doctorPluginPackage(out, { timeoutMs: 20_000 });
    expect(report.findings.filter((f) => f.rule === "STDOUT_NOT_PROTOCOL")).toEqual([]);
    expect(report.servers[0]?.started).toBe(true);
  });
});

describe("plugin build keeps its own stdout clean", () => {
  it("sends the entry's module-load output to stderr while reading the definition (plugin build --json)", async () => {
    const { runCompiledCli } = await import("./fixtures.js");
    const src = tempDir("stdout-build");
    const target = tempDir("stdout-build-out");
    dirs.push(src, target);
    writeFileSync(path.join(src, "package.json"), '{"name":"loud","version":"1.0.0","type":"module"}');
    writeFileSync(
      path.join(src, "entry.js"),
      `import { definePlugin, tool } from "hermes-plugin-kit";
console.log("[entry] hello from load time");
export default definePlugin({ name: "loud", version: "1.0.0", description: "Loud.", tools: [tool({ name: "ping", description: "Ping.", params: {}, handler: () => "pong" })] });
`,
    );
    const result = await runCompiledCli(["plugin", "build", path.join(src, "entry.js"), "--out", target, "--json"]);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ ok: true, plugin: { name: "loud" } });
    expect(result.stderr).toContain("[entry] hello from load time");
  });
});
