/**
 * Secrets reach only the process that needs them: every child the product
 * starts (npm pack and the package's own scripts, git and the git that
 * semantic-release starts, gate and install commands, oras) gets an
 * allow-listed environment. The pipeline's credentials and an unlisted
 * sentinel variable are set in our environment; each child dumps what it got.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";
import { buildRelease } from "../../release/build.js";
import { commandEnvironment, npmPackEnvironment, RELEASE_CREDENTIAL_VARIABLES } from "../../release/command-env.js";
import { runGate } from "../../release/gate.js";
import { git, gitEnvironment } from "../../release/git.js";
import { releaseIntent } from "../../release/intent.js";
import { materializeRelease } from "../../release/materialize.js";
import { OrasTarget } from "../../src/oci/oras-target.js";
import { BASE_ENV_NAMES, childEnvironment, runBounded } from "../../src/oci/subprocess.js";
import { runCli } from "../support/cli.js";
import { createFixtureRepo, type FixtureRepo } from "../support/git-fixture.js";

/** The pipeline's credentials, an npm token hidden in npm's own configuration, and a sentinel no allow-list names. */
const SECRETS: Record<string, string> = {
  ...Object.fromEntries(RELEASE_CREDENTIAL_VARIABLES.map((name) => [name, `secret-${name.toLowerCase()}`])),
  npm_config__authToken: "secret-npm-config-token",
  "npm_config_//registry.npmjs.org/:_authToken": "secret-npm-scoped-token",
  HPK_UNLISTED_SENTINEL: "secret-sentinel",
};
const VALUES = Object.values(SECRETS);

let root: string;
const repos: FixtureRepo[] = [];
const saved: Record<string, string | undefined> = {};

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "hpk-child-env-"));
  for (const [name, value] of Object.entries(SECRETS)) {
    saved[name] = process.env[name];
    process.env[name] = value;
  }
});
afterAll(async () => {
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  await rm(root, { recursive: true, force: true });
});
afterEach(async () => {
  while (repos.length > 0) await repos.pop()?.cleanup();
});

/** `node -e` that writes its environment as JSON to `file` (a fixed path: nothing may come through the environment). */
function dumpEnvCommand(file: string): string {
  return `node -e "require('fs').appendFileSync(${JSON.stringify(JSON.stringify(file)).slice(1, -1)}, JSON.stringify(process.env) + '\\\\n')"`;
}

async function dumps(file: string): Promise<Record<string, string>[]> {
  const text = await readFile(file, "utf8").catch(() => "");
  return text.split("\n").filter((l) => l.length > 0).map((l) => JSON.parse(l) as Record<string, string>);
}

function expectNoSecret(envs: Record<string, string>[], label: string): void {
  expect(envs.length, `${label}: no child ran`).toBeGreaterThan(0);
  for (const env of envs) {
    for (const name of Object.keys(SECRETS)) expect(env[name], `${label} got ${name}`).toBeUndefined();
    const leaked = Object.entries(env).filter(([, v]) => VALUES.some((s) => v.includes(s)));
    expect(leaked, label).toEqual([]);
  }
}

describe("npm pack: the package's own scripts never see the pipeline's credentials", () => {
  it("the handed input: release build ran npm pack and prepack saw REGISTRY_PASSWORD; now prepack, prepare and postpack see an allow-list (library and CLI)", async () => {
    const file = join(root, "pack-env.jsonl");
    const cmd = dumpEnvCommand(file);
    const repo = await createFixtureRepo({ origin: false, packageJson: { scripts: { prepack: cmd, prepare: cmd, postpack: cmd } } });
    repos.push(repo);
    await buildRelease({ dir: repo.dir, artifactDir: join(repo.root, "dist-lib") }).catch((error: unknown) => {
      // The fixture declares no install-time behaviour; packing (what this test is about) ran first.
      expect((error as { code?: string }).code).toBe("INSTALL_TIME_NOT_ALLOWED");
    });
    const lib = await dumps(file);
    expect(lib.length).toBe(3);
    expectNoSecret(lib, "npm pack (library)");
    // A private HOME of its own (release/command-env.ts gateHome), not the maintainer's.
    for (const env of lib) expect(env["HOME"]).not.toBe(process.env["HOME"]);
    await rm(file, { force: true });
    const r = await runCli(["release", "build", "--dir", repo.dir, "--artifact-dir", join(repo.root, "dist-cli")], { cwd: repo.root, env: SECRETS });
    expect(r.stdout + r.stderr).not.toContain("secret-");
    expectNoSecret(await dumps(file), "npm pack (CLI)");
  });

  it("the package's pack scripts see a private, empty HOME (0700, under TMPDIR, removed afterwards), not the maintainer's with its ~/.npmrc, and npm keeps the maintainer's cache; keepHome (release run --pass-env HOME) keeps the real HOME", async () => {
    const home = join(root, "pack-maintainer-home");
    await mkdir(join(home, ".docker"), { recursive: true });
    await writeFile(join(home, ".docker", "config.json"), JSON.stringify({ auths: { "ghcr.io": { auth: Buffer.from("u:secret-docker-auth").toString("base64") } } }));
    await writeFile(join(home, ".npmrc"), "//registry.npmjs.org/:_authToken=secret-npmrc-token\n");
    const seen = join(root, "pack-home.txt");
    // What prepack sees of its HOME (path, npm's cache, mode, entries); it also tries to write there.
    const cmd = `{ printf '%s\\n' "$HOME" "\${npm_config_cache-unset}" "$(stat -c %a "$HOME")"; ls -A "$HOME"; } > ${JSON.stringify(seen)}; : > "$HOME/written-by-prepack"`;
    const repo = await createFixtureRepo({ origin: false, packageJson: { scripts: { prepack: cmd } } });
    repos.push(repo);
    const savedEnv = { HOME: process.env["HOME"], npm_config_cache: process.env["npm_config_cache"], NPM_CONFIG_CACHE: process.env["NPM_CONFIG_CACHE"] };
    process.env["HOME"] = home;
    delete process.env["npm_config_cache"];
    delete process.env["NPM_CONFIG_CACHE"];
    try {
      const built = await buildRelease({ dir: repo.dir, artifactDir: join(repo.root, "dist-private-home") });
      expect(built.artifact.filename).toBe("fixture-plugin-0.7.0.tgz");
      const [packHome, cache, mode, ...entries] = (await readFile(seen, "utf8")).split("\n").filter((l) => l !== "");
      expect(packHome).not.toBe(home);
      expect(packHome!.startsWith(join(tmpdir(), "hpk-gate-home-"))).toBe(true);
      expect(mode).toBe("700");
      expect(entries).toEqual([]);
      // npm's cache as the maintainer's npm names it (`npm config get cache` with their HOME: ~/.npm here).
      expect(cache).toBe(join(home, ".npm"));
      expect(existsSync(packHome!)).toBe(false);
      expect(existsSync(join(home, "written-by-prepack"))).toBe(false);
      // keepHome: the maintainer's HOME, as before (npm names its cache there itself).
      await buildRelease({ dir: repo.dir, artifactDir: join(repo.root, "dist-real-home"), keepHome: true });
      expect((await readFile(seen, "utf8")).split("\n").slice(0, 2)).toEqual([home, join(home, ".npm")]);
      expect(existsSync(join(home, "written-by-prepack"))).toBe(true);
    } finally {
      for (const [name, value] of Object.entries(savedEnv)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });

  it("release build --pass-env: HOME keeps the real HOME and a named variable reaches the pack scripts (as release gate's flag); a pipeline credential is RELEASE_CONFIG_INVALID before anything is made", async () => {
    const home = join(root, "pack-pass-env-home");
    await mkdir(home, { recursive: true });
    const seen = join(root, "pack-pass-env.txt");
    const cmd = `printf '%s\\n' "$HOME" "\${HPK_PACK_VAR-unset}" > ${JSON.stringify(seen)}`;
    const repo = await createFixtureRepo({ origin: false, packageJson: { scripts: { prepack: cmd } } });
    repos.push(repo);
    const env = { HOME: home, HPK_PACK_VAR: "passed" };
    const passed = await runCli(["release", "build", "--dir", repo.dir, "--artifact-dir", join(repo.root, "dist-pass"), "--pass-env", "HOME", "HPK_PACK_VAR"], { cwd: repo.root, env });
    expect(passed.code, passed.stderr).toBe(0);
    expect((await readFile(seen, "utf8")).split("\n").slice(0, 2)).toEqual([home, "passed"]);
    // Without the flag: a private HOME and the variable unset.
    const plain = await runCli(["release", "build", "--dir", repo.dir, "--artifact-dir", join(repo.root, "dist-plain")], { cwd: repo.root, env });
    expect(plain.code, plain.stderr).toBe(0);
    const [privateHome, variable] = (await readFile(seen, "utf8")).split("\n");
    expect(privateHome!.startsWith(join(tmpdir(), "hpk-gate-home-"))).toBe(true);
    expect(variable).toBe("unset");
    const refused = await runCli(["release", "build", "--dir", repo.dir, "--artifact-dir", join(repo.root, "dist-refused"), "--pass-env", "REGISTRY_PASSWORD"], { cwd: repo.root, env });
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stdout)).toMatchObject({ ok: false, code: "RELEASE_CONFIG_INVALID" });
    expect(existsSync(join(repo.root, "dist-refused"))).toBe(false);
  });

  it("npmPackEnvironment is exactly the base allow-list plus npm's quiet settings", () => {
    const env = npmPackEnvironment({ ...process.env, CI: "true" });
    expect(Object.keys(env).every((k) => BASE_ENV_NAMES.includes(k) || ["CI", "SOURCE_DATE_EPOCH"].includes(k) || /^npm_config_(update_notifier|fund|audit|progress)$/.test(k))).toBe(true);
    expect(env["CI"]).toBe("true");
  });
});

describe("git, and the git semantic-release starts", () => {
  it("every git process of intent and materialize gets the allow-list (a PATH shim records each one)", async () => {
    const shimDir = join(root, "git-shim");
    await mkdir(shimDir, { recursive: true });
    const log = join(root, "git-env.jsonl");
    const realGit = execFileSync("sh", ["-c", "command -v git"], { encoding: "utf8" }).trim();
    await writeFile(join(shimDir, "git"), `#!/bin/sh\nnode -e 'require("fs").appendFileSync(${JSON.stringify(log)}, JSON.stringify(process.env) + "\\n")'\nexec ${realGit} "$@"\n`);
    await chmod(join(shimDir, "git"), 0o755);
    const repo = await createFixtureRepo();
    repos.push(repo);
    await repo.commit("feat: more", { "lib/more.js": "export {};\n" });
    const trigger = await repo.head();
    const path = process.env["PATH"];
    process.env["PATH"] = `${shimDir}${delimiter}${path ?? ""}`;
    try {
      const intent = await releaseIntent({ dir: repo.dir, environment: { SEMANTIC_RELEASE_ENABLED: "true" } });
      expect(intent).toMatchObject({ released: true });
      await materializeRelease({ dir: repo.dir, expectedSha: trigger, outputDir: join(repo.root, "out"), environment: { SEMANTIC_RELEASE_ENABLED: "true" }, dateSeconds: 1_767_312_000 });
    } finally {
      process.env["PATH"] = path;
    }
    const envs = await dumps(log);
    expect(envs.length).toBeGreaterThan(10);
    expectNoSecret(envs, "git");
    for (const env of envs) {
      expect(env["GIT_CONFIG_GLOBAL"]).toBe("/dev/null");
      expect(env["GIT_CONFIG_NOSYSTEM"]).toBe("1");
    }
  }, 180_000); // semantic-release and a dozen git processes: 16 s alone, over 60 s at load 6

  it("gitEnvironment copies only allow-listed names and drops inherited GIT_DIR-style redirections", () => {
    const env = gitEnvironment({ GIT_AUTHOR_NAME: "x" }, { ...process.env, GIT_DIR: "/elsewhere", GIT_CONFIG_PARAMETERS: "'core.hooksPath=/tmp'", HTTPS_PROXY: "http://proxy:3128" });
    expect(env["GIT_DIR"]).toBeUndefined();
    expect(env["GIT_CONFIG_PARAMETERS"]).toBeUndefined();
    expect(env["HTTPS_PROXY"]).toBe("http://proxy:3128");
    expect(env["GIT_AUTHOR_NAME"]).toBe("x");
    expect(env["REGISTRY_PASSWORD"]).toBeUndefined();
  });

  it("git() runs with that environment (the secrets are not visible to a git alias)", async () => {
    const repo = await createFixtureRepo({ origin: false });
    repos.push(repo);
    const out = await git(["-c", "alias.showenv=!env", "showenv"], { cwd: repo.dir });
    expectNoSecret([Object.fromEntries(out.stdout.split("\n").filter((l) => l.includes("=")).map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]))], "git alias");
  });
});

describe("gate and install commands", () => {
  it("get the allow-list, the checkout's node_modules/.bin first, and only the names passed on purpose", async () => {
    const file = join(root, "gate-env.jsonl");
    const repo = await createFixtureRepo({ origin: false, gates: { unit: dumpEnvCommand(file), public_contract: "true", host_contract: "true", build_metadata: "true" } });
    repos.push(repo);
    process.env["REQUIRE_REGISTRY"] = "1";
    try {
      await runGate({ gate: "unit", dir: repo.dir, evidenceDir: join(repo.root, "evidence") });
      await runGate({ gate: "unit", dir: repo.dir, evidenceDir: join(repo.root, "evidence2"), passEnv: ["REQUIRE_REGISTRY"] });
    } finally {
      delete process.env["REQUIRE_REGISTRY"];
    }
    const [plain, passed] = await dumps(file);
    expectNoSecret([plain!, passed!], "gate");
    expect(plain!["REQUIRE_REGISTRY"]).toBeUndefined();
    expect(passed!["REQUIRE_REGISTRY"]).toBe("1");
    // First the private directory holding only the user's npm and npx, then the checkout's node_modules/.bin.
    expect(plain!["PATH"]!.split(delimiter)[0]!.startsWith(join(tmpdir(), "hpk-gate-npm-"))).toBe(true);
    expect(plain!["PATH"]!.split(delimiter)[1]).toBe(join(repo.dir, "node_modules", ".bin"));
  });

  it("do not read the maintainer's ~/.bashrc (bash sources it when stdin is a socket): nothing it exports reaches the command", async () => {
    const home = join(root, "home-with-bashrc");
    await mkdir(home, { recursive: true });
    await writeFile(join(home, ".bashrc"), "export LEAKED_FROM_BASHRC=secret-from-bashrc\nexport PATH=/evil/bin:$PATH\n");
    const file = join(root, "gate-bashrc-env.jsonl");
    const repo = await createFixtureRepo({ origin: false, gates: { unit: dumpEnvCommand(file), public_contract: "true", host_contract: "true", build_metadata: "true" } });
    repos.push(repo);
    const savedHome = process.env["HOME"];
    process.env["HOME"] = home;
    try {
      await runGate({ gate: "unit", dir: repo.dir, evidenceDir: join(repo.root, "evidence") });
    } finally {
      process.env["HOME"] = savedHome;
    }
    const [env] = await dumps(file);
    // The gate's HOME is a private one of its own (release/command-env.ts gateHome), not the maintainer's.
    expect(env!["HOME"]).not.toBe(home);
    expect(env!["LEAKED_FROM_BASHRC"]).toBeUndefined();
    expect(env!["PATH"]).not.toContain("/evil/bin");
  });

  it("a gate's HOME is a private empty directory (0700) removed afterwards: the maintainer's ~/.docker/config.json and ~/.npmrc are not found there; npm keeps the maintainer's cache", async () => {
    const home = join(root, "maintainer-home");
    await mkdir(join(home, ".docker"), { recursive: true });
    await writeFile(join(home, ".docker", "config.json"), JSON.stringify({ auths: { "ghcr.io": { auth: Buffer.from("u:secret-docker-auth").toString("base64") } } }));
    await writeFile(join(home, ".npmrc"), "//registry.npmjs.org/:_authToken=secret-npmrc-token\n");
    const seen = join(root, "gate-home.txt");
    // What the gate sees of its HOME, then whether the maintainer's Docker config and npmrc are there (must not be).
    const cmd = `{ printf '%s\\n' "$HOME" "\${npm_config_cache-unset}" "$(stat -c %a "$HOME")"; ls -A "$HOME"; } > ${JSON.stringify(seen)}; test ! -e "$HOME/.docker/config.json" && test ! -e "$HOME/.npmrc"`;
    const repo = await createFixtureRepo({ origin: false, gates: { unit: cmd, public_contract: "true", host_contract: "true", build_metadata: "true" } });
    repos.push(repo);
    const savedEnv = { HOME: process.env["HOME"], npm_config_cache: process.env["npm_config_cache"], NPM_CONFIG_CACHE: process.env["NPM_CONFIG_CACHE"] };
    process.env["HOME"] = home;
    // npm's cache as the maintainer's npm names it (`npm config get cache` with their HOME: ~/.npm here).
    delete process.env["npm_config_cache"];
    delete process.env["NPM_CONFIG_CACHE"];
    try {
      const result = await runGate({ gate: "unit", dir: repo.dir, evidenceDir: join(repo.root, "evidence-private") });
      expect(result.passed).toBe(true);
      const [gateHomeDir, cache, mode, ...entries] = (await readFile(seen, "utf8")).split("\n").filter((l) => l !== "");
      expect(gateHomeDir).not.toBe(home);
      expect(gateHomeDir!.startsWith(join(tmpdir(), "hpk-gate-home-"))).toBe(true);
      expect(mode).toBe("700");
      expect(entries).toEqual([]);
      expect(cache).toBe(join(home, ".npm"));
      // Removed after the gate.
      expect(existsSync(gateHomeDir!)).toBe(false);
      // --pass-env HOME keeps the maintainer's HOME: the gate finds the Docker config and fails.
      const error = await runGate({ gate: "unit", dir: repo.dir, evidenceDir: join(repo.root, "evidence-home"), passEnv: ["HOME"] }).catch((e: unknown) => e);
      expect(error).toThrowWithCode("RELEASE_GATE_FAILED");
      const [realHome, realCache] = (await readFile(seen, "utf8")).split("\n");
      expect(realHome).toBe(home);
      expect(realCache).toBe("unset");
      expect((error as Error).message).not.toContain("secret-");
    } finally {
      for (const [name, value] of Object.entries(savedEnv)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });

  it("refuses to pass a pipeline credential even when asked (library and CLI)", async () => {
    expect(() => commandEnvironment("/tmp/x", ["REGISTRY_PASSWORD"])).toThrow(expect.objectContaining({ code: "RELEASE_CONFIG_INVALID" }));
    expect(() => commandEnvironment("/tmp/x", ["NOT A NAME"])).toThrow(expect.objectContaining({ code: "RELEASE_CONFIG_INVALID" }));
    const repo = await createFixtureRepo({ origin: false });
    repos.push(repo);
    const r = await runCli(["release", "gate", "unit", "--dir", repo.dir, "--evidence-dir", join(repo.root, "ev"), "--pass-env", "GH_TOKEN"], { cwd: repo.root });
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, code: "RELEASE_CONFIG_INVALID" });
    expect(await readdir(join(repo.root, "ev")).catch(() => [])).toEqual([]);
  });
});

describe("oras", () => {
  it("gets the allow-list (credentials only on stdin to login)", async () => {
    const standin = fileURLToPath(new URL("../oci/fixtures/oras-standin.mjs", import.meta.url));
    const log = join(root, "oras-env.jsonl");
    const wrapper = join(root, "oras-wrapper");
    await writeFile(wrapper, `#!/bin/sh\nnode -e 'require("fs").appendFileSync(${JSON.stringify(log)}, JSON.stringify(process.env) + "\\n")'\nexec node ${standin} "$@"\n`);
    await chmod(wrapper, 0o755);
    const target = await OrasTarget.open({ repository: "127.0.0.1:5000/owner/kit", orasPath: wrapper, plainHttp: true, credentials: { username: "u", password: "secret-oras-password" } });
    await target.close?.();
    const envs = await dumps(log);
    expectNoSecret(envs, "oras");
    for (const env of envs) expect(JSON.stringify(env)).not.toContain("secret-oras-password");
  });
});

describe("the bounded runner", () => {
  it("childEnvironment copies only the listed names, then the values set on purpose", () => {
    expect(childEnvironment(["PATH", "MISSING"], { X: "1" }, { PATH: "/bin", REGISTRY_PASSWORD: "p" })).toEqual({ PATH: "/bin", X: "1" });
  });
  it("reports timeout, output over the ceiling and a program that cannot start as outcomes", async () => {
    const env = childEnvironment(BASE_ENV_NAMES);
    expect((await runBounded("sleep", ["5"], { env, timeoutMs: 200, maxOutputBytes: 1024 })).outcome).toEqual({ kind: "timeout" });
    expect((await runBounded("node", ["-e", "process.stdout.write('x'.repeat(100000))"], { env, timeoutMs: 20_000, maxOutputBytes: 1024 })).outcome).toEqual({ kind: "output-limit" });
    expect((await runBounded("no-such-program-hpk", [], { env, timeoutMs: 1000, maxOutputBytes: 1024 })).outcome).toEqual({ kind: "start-failed", errno: "ENOENT" });
    const ok = await runBounded("node", ["-e", "process.stdout.write(process.env.X ?? 'unset')"], { env: childEnvironment(["PATH"], { X: "y" }), timeoutMs: 20_000, maxOutputBytes: 1024 });
    expect(ok).toMatchObject({ outcome: { kind: "exited", code: 0 } });
    expect(ok.stdout.toString()).toBe("y");
  });
});
