/**
 * Gates are hermetic (docs/architecture.md, "Release: steps and data flow"): they run in the checkout with its
 * own `node_modules/.bin` first and no `node_modules/.bin` of the caller on
 * PATH; a gate that cannot run names the missing tool; the MCP SDK version in
 * the evidence is the one the plugin bundles (through the kit), not the
 * plugin's own; the install command comes from the policy.
 */
import { chmod, mkdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { delimiter, join } from "node:path";
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requireGateTools } from "../../release/gate-tools.js";
import { commandWords } from "../../release/shell-words.js";
import { commandEnvironment, systemPathEntries } from "../../release/command-env.js";
import { buildRelease } from "../../release/build.js";
import { bundledMcpSdkVersion, runGate } from "../../release/gate.js";
import { disarmedReason } from "../../release/intent.js";
import { runCli } from "../support/cli.js";
import { tempDir } from "../support/contract-fixture.js";
import { createFixtureRepo, type FixtureRepo } from "../support/git-fixture.js";

let work: string;
beforeAll(async () => {
  work = await tempDir("hpk-gate-hermetic-");
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

async function fakeTool(dir: string, name: string, script = "#!/bin/sh\necho from-$0\n"): Promise<void> {
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, name), script);
  await chmod(join(dir, name), 0o755);
}

describe("the gate environment (commandEnvironment)", () => {
  it("puts the checkout's node_modules/.bin first, drops every other node_modules/.bin, the caller's package context and credentials", () => {
    const env = commandEnvironment("/w/checkout", [], {
      PATH: ["/caller/node_modules/.bin", "/usr/local/bin", "/caller/parent/node_modules/.bin/", "/usr/bin"].join(delimiter),
      npm_package_name: "caller",
      npm_lifecycle_event: "demo",
      npm_config_local_prefix: "/caller",
      INIT_CWD: "/caller",
      NODE_PATH: "/caller/node_modules",
      GH_TOKEN: "secret",
      REGISTRY_PASSWORD: "secret",
      HOME: "/root",
    });
    expect(env["PATH"]).toBe(["/w/checkout/node_modules/.bin", "/usr/local/bin", "/usr/bin"].join(delimiter));
    for (const name of ["npm_package_name", "npm_lifecycle_event", "npm_config_local_prefix", "INIT_CWD", "NODE_PATH", "GH_TOKEN", "REGISTRY_PASSWORD"]) expect(env[name]).toBeUndefined();
    expect(env["HOME"]).toBe("/root");
  });
});

describe("the PATH of a real gate, install or npm pack: the checkout's node_modules/.bin, the system's PATH, and the user's npm", () => {
  let repo: FixtureRepo;
  let callerBins: string[];
  let userNpmPath: string;
  let userNpmVersion: string;
  const seen = () => join(work, "gate-path.txt");
  beforeAll(async () => {
    // The gate prints its PATH, which npm it runs and that npm's version, one per line.
    const printPath = `{ printf '%s\\n' "$PATH"; command -v npm; npm --version; } > ${JSON.stringify(seen())}`;
    repo = await createFixtureRepo({ origin: false, gates: { unit: printPath, public_contract: "true", host_contract: "true", build_metadata: "true" } });
    // What an install links into the checkout: a dependency's npm (semantic-release bundles one), git-ignored.
    await fakeTool(join(repo.dir, "node_modules", ".bin"), "npm", "#!/bin/sh\necho 10.9.9-of-a-dependency\n");
    // What `npm run` puts before the caller's PATH: every ancestor's node_modules/.bin and npm's node-gyp-bin, each with an npm.
    callerBins = [join(work, "proj", "node_modules", ".bin"), join(work, "node_modules", ".bin"), join(work, "npm", "node_modules", "@npmcli", "run-script", "lib", "node-gyp-bin")];
    for (const bin of callerBins) await fakeTool(bin, "npm", "#!/bin/sh\necho 0.0.0-of-the-caller\n");
    userNpmPath = execFileSync("sh", ["-c", "command -v npm"], { encoding: "utf8", env: { PATH: systemPathEntries(process.env).join(delimiter) } }).trim();
    userNpmVersion = execFileSync(userNpmPath, ["--version"], { encoding: "utf8" }).trim();
  });
  afterAll(async () => {
    await repo.cleanup();
  });

  it("commandEnvironment drops every PATH entry inside a node_modules (a .bin, node-gyp-bin) and relative ones; npmBin comes first", () => {
    const env = commandEnvironment("/w/checkout", [], { PATH: ["/c/node_modules/.bin/../x", "/usr/lib/node_modules/npm/node_modules/@npmcli/run-script/lib/node-gyp-bin", "bin", "/usr/bin"].join(delimiter) }, {}, "/tmp/npm-bin");
    expect(env["PATH"]).toBe(["/tmp/npm-bin", "/w/checkout/node_modules/.bin", "/usr/bin"].join(delimiter));
  });

  it("runGate: only the checkout's node_modules/.bin and the system's entries, and npm is the user's (not the dependency's nor the caller's)", async () => {
    const source = { ...process.env, PATH: [...callerBins, process.env["PATH"] ?? ""].join(delimiter) };
    await runGate({ gate: "unit", dir: repo.dir, evidenceDir: join(work, "ev-path"), env: source });
    const [path, npm, version] = (await readFile(seen(), "utf8")).split("\n");
    const entries = path!.split(delimiter);
    // First the private npm directory (only npm and npx), then the checkout's own .bin, then the system's PATH as it was.
    expect(entries[0]!.startsWith(join(tmpdir(), "hpk-gate-npm-"))).toBe(true);
    expect(entries.slice(1)).toEqual([join(repo.dir, "node_modules", ".bin"), ...systemPathEntries(process.env)]);
    expect(entries.filter((e) => e.includes("node_modules"))).toEqual([join(repo.dir, "node_modules", ".bin")]);
    expect(npm).toBe(join(entries[0]!, "npm"));
    expect(version).toBe(userNpmVersion);
    // Removed with the gate's private HOME.
    expect(existsSync(entries[0]!)).toBe(false);
  });

  it("npm pack (release build): the npm that packs is the user's, not one of a node_modules/.bin first on the caller's PATH", async () => {
    const previous = process.env["PATH"];
    process.env["PATH"] = [...callerBins, previous ?? ""].join(delimiter);
    try {
      const built = await buildRelease({ dir: repo.dir, artifactDir: join(work, "dist-path") });
      expect(built.artifact.filename).toBe("fixture-plugin-0.7.0.tgz");
    } finally {
      process.env["PATH"] = previous;
    }
  });
});

describe("requireGateTools", () => {
  it("splits simple commands and skips env assignments", () => {
    expect(commandWords("CI=1 npm test && npm run doctor -- --no-call; just build | tee x")).toEqual([
      ["npm", "test"],
      ["npm", "run", "doctor", "--", "--no-call"],
      ["just", "build"],
      ["tee", "x"],
    ]);
  });

  it("names the missing program, the npm script that needs it, and the fix", async () => {
    const dir = join(work, "tools");
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, "package.json"), JSON.stringify({ name: "x", scripts: { predoctor: "npm run build", build: "hermes-plugin-kit plugin build src/index.ts --out .", doctor: "hermes-plugin-kit plugin doctor ." } }));
    // The machine's PATH without a global hermes-plugin-kit or just (an `npm install --global` of the kit puts one there).
    const { existsSync } = await import("node:fs");
    const path = (process.env["PATH"] ?? "").split(delimiter).filter((d) => d !== "" && !existsSync(join(d, "hermes-plugin-kit")) && !existsSync(join(d, "just"))).join(delimiter);
    const env = commandEnvironment(dir, [], { PATH: path });
    const missing = requireGateTools("host_contract", "npm run doctor", dir, env);
    await expect(missing).rejects.toMatchObject({ code: "RELEASE_GATE_TOOL_MISSING" });
    await expect(missing).rejects.toThrow(/hermes-plugin-kit is not on its PATH \(needed by npm script "build"/);
    await expect(missing).rejects.toThrow(/devDependency so the install command \(hermesPluginKit.install, default npm ci\) provides it/);
    const noScript = requireGateTools("unit", "npm run lint", dir, env);
    await expect(noScript).rejects.toThrow(/npm script "lint" is not defined in package.json/);
    await expect(requireGateTools("unit", "just test", dir, env)).rejects.toThrow(/just is not on its PATH/);
    await fakeTool(join(dir, "node_modules", ".bin"), "hermes-plugin-kit");
    await expect(requireGateTools("host_contract", "npm run doctor", dir, env)).resolves.toBeUndefined();
    await expect(requireGateTools("unit", "test -f package.json && echo ok", dir, env)).resolves.toBeUndefined();
  });

  describe("valid shell the gate-tool check used to refuse (redirections, quotes) runs", () => {
    let dir: string;
    let env: ReturnType<typeof commandEnvironment>;
    beforeAll(async () => {
      dir = join(work, "redirections");
      await mkdir(dir, { recursive: true });
      await writeFile(join(dir, "package.json"), JSON.stringify({ name: "x", scripts: { test: "node -e 1 2>&1", lint: "node -e 1 2>&1 && hpk-absent-linter --fix" } }));
      await fakeTool(join(dir, "node_modules", ".bin"), "cmd");
      env = commandEnvironment(dir, [], process.env);
    });

    it.each([
      "echo hi 2>&1",
      "echo hi >&2",
      "cmd &> out.log",
      "cmd >| o",
      'echo "tests; coverage report"',
      "npm test",
      "npm test 2>&1 | tee log",
      "cmd 2>/dev/null && cmd <<< 'input; 1' && cmd >> log 2>>err <in",
      "FOO=1 BAR='a b' cmd && (cd sub; cmd) & wait",
      "exec 3>&1 4>&- && cmd 1>&3 {fd}>&2",
    ])("%s passes the check", async (command) => {
      await expect(requireGateTools("unit", command, dir, env)).resolves.toBeUndefined();
    });

    it.each([
      ["hpk-absent-tool 2>&1 | tee log", /gate unit cannot run .*: hpk-absent-tool is not on its PATH \(needed by hermesPluginKit\.gates\.unit;/],
      ["cmd 2>&1 && FOO=1 hpk-absent-tool >&2", /: hpk-absent-tool is not on its PATH \(needed by hermesPluginKit\.gates\.unit;/],
      ["npm run lint 2>&1 | tee log", /: hpk-absent-linter is not on its PATH \(needed by npm script "lint";/],
      ["npm run constructor", /: npm script "constructor" is not defined in package\.json/],
    ])("%s fails RELEASE_GATE_TOOL_MISSING naming the missing tool", async (command, message) => {
      const run = requireGateTools("unit", command, dir, env);
      await expect(run).rejects.toThrowWithCode("RELEASE_GATE_TOOL_MISSING");
      await expect(requireGateTools("unit", command, dir, env)).rejects.toThrow(message);
    });
  });
});

describe("runGate is hermetic", () => {
  let repo: FixtureRepo;
  beforeAll(async () => {
    repo = await createFixtureRepo({ origin: false, gates: { unit: "fixture-tool", public_contract: "true", host_contract: "true", build_metadata: "true" } });
  });
  afterAll(async () => {
    await repo.cleanup();
  });

  it("a tool only in the caller's node_modules/.bin does not make the gate pass: RELEASE_GATE_TOOL_MISSING, no evidence", async () => {
    const callerBin = join(work, "caller", "node_modules", ".bin");
    await fakeTool(callerBin, "fixture-tool");
    const previous = process.env["PATH"];
    process.env["PATH"] = `${callerBin}${delimiter}${previous ?? ""}`;
    try {
      const ev = join(work, "ev-caller");
      await expect(() => runGate({ gate: "unit", dir: repo.dir, evidenceDir: ev })).toThrowWithCode("RELEASE_GATE_TOOL_MISSING");
      await expect(readFile(join(ev, "unit.json"))).rejects.toThrow();
      // The same tool installed in the checkout's own node_modules/.bin (git-ignored) runs.
      await fakeTool(join(repo.dir, "node_modules", ".bin"), "fixture-tool");
      const passed = await runGate({ gate: "unit", dir: repo.dir, evidenceDir: ev, output: "log" });
      expect(passed.passed).toBe(true);
      expect(await readFile(join(ev, "unit.log"), "utf8")).toContain(join(repo.dir, "node_modules", ".bin", "fixture-tool"));
    } finally {
      process.env["PATH"] = previous;
    }
  });
});

describe("runGate runs a gate whose command redirects and quotes", () => {
  it("the handed input: npm test 2>&1 | tee with a script that redirects, and a quoted ';', pass end to end", async () => {
    const repo = await createFixtureRepo({
      origin: false,
      gates: { unit: 'npm test 2>&1 | tee /dev/null >&2 && echo "tests; coverage report" 1>&2', public_contract: "true", host_contract: "true", build_metadata: "true" },
      packageJson: { scripts: { test: "node -e 1 2>&1" } },
    });
    try {
      const passed = await runGate({ gate: "unit", dir: repo.dir, evidenceDir: join(work, "ev-redirect"), output: "log" });
      expect(passed.passed).toBe(true);
      expect(await readFile(join(work, "ev-redirect", "unit.log"), "utf8")).toContain("tests; coverage report");
    } finally {
      await repo.cleanup();
    }
  });
});

describe("bundledMcpSdkVersion", () => {
  async function pkg(dir: string, json: Record<string, unknown>): Promise<void> {
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, "package.json"), JSON.stringify(json));
  }

  it("is the SDK the kit resolves (what plugin build bundles), not the plugin's own", async () => {
    const plugin = join(work, "plugin-a");
    await pkg(plugin, { name: "plugin-a", version: "1.0.0" });
    await pkg(join(plugin, "node_modules", "@modelcontextprotocol", "sdk"), { name: "@modelcontextprotocol/sdk", version: "1.0.0" });
    const kit = join(work, "elsewhere", "hermes-plugin-kit");
    await pkg(kit, { name: "hermes-plugin-kit", version: "0.3.0" });
    await pkg(join(kit, "node_modules", "@modelcontextprotocol", "sdk"), { name: "@modelcontextprotocol/sdk", version: "1.32.2" });
    await symlink(kit, join(plugin, "node_modules", "hermes-plugin-kit"));
    expect((await bundledMcpSdkVersion(plugin)).version).toBe("1.32.2");
  });

  it("a kit that shares the plugin's hoisted SDK reports that one; the kit's own checkout reports its own", async () => {
    const plugin = join(work, "plugin-b");
    await pkg(plugin, { name: "plugin-b", version: "1.0.0" });
    await pkg(join(plugin, "node_modules", "hermes-plugin-kit"), { name: "hermes-plugin-kit", version: "0.3.0" });
    await pkg(join(plugin, "node_modules", "@modelcontextprotocol", "sdk"), { name: "@modelcontextprotocol/sdk", version: "1.30.0" });
    expect((await bundledMcpSdkVersion(plugin)).version).toBe("1.30.0");
    const self = join(work, "kit-checkout");
    await pkg(self, { name: "hermes-plugin-kit", version: "0.3.0" });
    await pkg(join(self, "node_modules", "@modelcontextprotocol", "sdk"), { name: "@modelcontextprotocol/sdk", version: "1.31.0" });
    expect((await bundledMcpSdkVersion(self)).version).toBe("1.31.0");
  });

  it("no SDK anywhere, or an unstable version -> RELEASE_MCP_SDK_VERSION naming the install command", async () => {
    const bare = join(work, "plugin-c");
    await pkg(bare, { name: "plugin-c", version: "1.0.0" });
    const none = bundledMcpSdkVersion(bare);
    await expect(none).rejects.toMatchObject({ code: "RELEASE_MCP_SDK_VERSION" });
    await expect(none).rejects.toThrow(/install command/);
    await pkg(join(bare, "node_modules", "@modelcontextprotocol", "sdk"), { name: "@modelcontextprotocol/sdk", version: "2.0.0-beta.1" });
    await expect(() => bundledMcpSdkVersion(bare)).toThrowWithCode("RELEASE_MCP_SDK_VERSION");
  });
});

describe("disarm switch message", () => {
  it.each([
    [undefined, /is not set/],
    ["1", /is "1", not exactly "true".*1, TRUE and yes do not/],
    ["TRUE", /is "TRUE", not exactly "true"/],
  ])("SEMANTIC_RELEASE_ENABLED=%s explains itself", (value, pattern) => {
    expect(disarmedReason(value)).toMatch(pattern);
  });

  it("release intent keeps its JSON on stdout and says why on stderr; release run reports the reason", async () => {
    const intent = await runCli(["release", "intent", "--dir", work], { env: { SEMANTIC_RELEASE_ENABLED: "1" } });
    expect(intent.code).toBe(0);
    expect(intent.stdout).toBe('{"ok":true,"released":false,"disarmed":true}\n');
    expect(intent.stderr).toMatch(/SEMANTIC_RELEASE_ENABLED is "1", not exactly "true"/);
    const run = await runCli(["release", "run", "--workspace", join(work, "ws"), "--source", work], { env: { SEMANTIC_RELEASE_ENABLED: "TRUE" } });
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ released: false, reason: expect.stringMatching(/is "TRUE", not exactly "true"/) });
  });
});

describe("runGate takes its environment from the caller's env option (release run passes its run's env, as for the install command)", () => {
  let repo: FixtureRepo;
  let seen: string;
  beforeAll(async () => {
    seen = join(work, "env-seen.txt");
    repo = await createFixtureRepo({ origin: false, gates: { unit: `printf '%s\\n' "\${HPK_GATE_PROBE-unset}" "$HOME" > ${JSON.stringify(seen)}`, public_contract: "true", host_contract: "true", build_metadata: "true" } });
  });
  afterAll(async () => {
    await repo.cleanup();
  });

  it("a --pass-env name set only in env reaches the gate; HOME is a private one, or env's own with --pass-env HOME (never process.env's)", async () => {
    expect(process.env["HPK_GATE_PROBE"]).toBeUndefined();
    const callerHome = join(work, "caller-home");
    await mkdir(callerHome, { recursive: true });
    const env = { ...process.env, HPK_GATE_PROBE: "from-the-run-env", HOME: callerHome };
    await runGate({ gate: "unit", dir: repo.dir, evidenceDir: join(work, "ev-env"), output: "log", passEnv: ["HPK_GATE_PROBE"], env });
    const [probe, home] = (await readFile(seen, "utf8")).split("\n");
    expect(probe).toBe("from-the-run-env");
    expect(home).not.toBe(callerHome);
    expect(home).not.toBe(process.env["HOME"]);
    await runGate({ gate: "unit", dir: repo.dir, evidenceDir: join(work, "ev-env-home"), output: "log", passEnv: ["HPK_GATE_PROBE", "HOME"], env });
    expect((await readFile(seen, "utf8")).split("\n").slice(0, 2)).toEqual(["from-the-run-env", callerHome]);
  });

  it("without env, process.env as before: the name unset there reaches the gate unset", async () => {
    await runGate({ gate: "unit", dir: repo.dir, evidenceDir: join(work, "ev-noenv"), output: "log", passEnv: ["HPK_GATE_PROBE"] });
    expect((await readFile(seen, "utf8")).split("\n")[0]).toBe("unset");
  });
});
