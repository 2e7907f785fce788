/**
 * What a new plugin author meets first, through the built CLI: `init` names
 * and store paths, `plugin doctor` and `plugin call` on a directory that is
 * not a built package, and `plugin doctor --python` naming an interpreter
 * that cannot run. Each answer is coded and says what was expected and how to fix it.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { policyFromPackageJson } from "../../src/contract/policy.js";
import { requirePythonInterpreter } from "../../src/kit/doctor-companion.js";
import { runCli } from "../support/cli.js";

let root: string;
let project: string;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "hpk-guidance-"));
  const made = await runCli(["init", "my-plugin", "--repository", "ghcr.io/acme/my-plugin", "--kit", "registry"], { cwd: root });
  expect(made.code, made.stderr).toBe(0);
  project = join(root, "my-plugin");
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("init names", () => {
  it("'my plugin' is INIT_NAME_INVALID in words with a valid example, never a raw pattern", async () => {
    const r = await runCli(["init", "my plugin"], { cwd: root });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("[INIT_NAME_INVALID]");
    expect(r.stderr).toContain(`plugin name "my plugin" (the directory's name) is not a valid plugin name`);
    expect(r.stderr).toContain("lowercase letters a-z, digits 0-9, '-' and '.'");
    expect(r.stderr).toContain("--name my-plugin");
    expect(r.stderr).not.toMatch(/\^\(|\(\?!|\[a-z0-9/);
    const named = await runCli(["init", "my plugin", "--name", "Bad--Name"], { cwd: root });
    expect(named.code).toBe(1);
    expect(named.stderr).toContain("e.g. --name bad-name");
  });
});

describe("init --repository oci-layout:<relative>", () => {
  it("is written as the absolute path resolved against init's directory (package.json and the workflow), with a note", async () => {
    const r = await runCli(["init", "rel-plugin", "--repository", "oci-layout:rel/store", "--kit", "registry"], { cwd: root });
    expect(r.code, r.stderr).toBe(0);
    const expected = `oci-layout:${join(root, "rel", "store")}`;
    expect(r.stderr).toContain(`--repository oci-layout:rel/store written as ${expected}`);
    const pkg = JSON.parse(readFileSync(join(root, "rel-plugin", "package.json"), "utf8")) as { hermesPluginKit: { repository: string } };
    expect(pkg.hermesPluginKit.repository).toBe(expected);
    const workflow = readFileSync(join(root, "rel-plugin", ".github", "workflows", "release.yml"), "utf8");
    expect(workflow).toContain(`PRIVATE_REPOSITORY: ${expected}`);
    expect(workflow).not.toContain("oci-layout:rel/store");
  });

  it("an absolute path is kept as given", async () => {
    const store = `oci-layout:${join(root, "abs-store")}`;
    const r = await runCli(["init", "abs-plugin", "--repository", store, "--kit", "registry"], { cwd: root });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toContain("written as");
    expect((JSON.parse(readFileSync(join(root, "abs-plugin", "package.json"), "utf8")) as { hermesPluginKit: { repository: string } }).hermesPluginKit.repository).toBe(store);
  });

  it("a relative oci-layout path in a package.json policy is POLICY_INVALID; absolute, and a --repository flag, are accepted", () => {
    const pkg = (repository: string) => ({ name: "p", version: "1.0.0", hermesPluginKit: { repository } });
    expect(() => policyFromPackageJson(pkg("oci-layout:rel/store"))).toThrowWithCode("POLICY_INVALID");
    expect(() => policyFromPackageJson(pkg("oci-layout:./store"))).toThrow(/must not depend on the directory a later command runs in/);
    expect(policyFromPackageJson(pkg("oci-layout:/srv/store")).registryRepository).toBe("oci-layout:/srv/store");
    expect(policyFromPackageJson(pkg("oci-layout:rel/store"), "oci-layout:flag/store").registryRepository).toBe("oci-layout:flag/store");
  });
});

describe("plugin doctor / plugin call on what is not a built package", () => {
  it("doctor on an unbuilt project: exit 1, PLUGIN_JSON_MISSING with the `npm run build` hint", async () => {
    const r = await runCli(["plugin", "doctor", project, "--no-call"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("ERROR [PLUGIN_JSON_MISSING] plugin.json must be a regular file at the package root;");
    expect(r.stdout).toContain("looks like an unbuilt plugin project (package.json, no plugin.json): run `npm run build` there");
  });

  it("doctor on a missing directory: DOCTOR_PACKAGE_MISSING with the fix", async () => {
    const r = await runCli(["plugin", "doctor", join(root, "nosuchdir")]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/does not exist or is not a directory: expected a built package \(plugin\.json, mcp\.json, dist\/server\.js\); fix: run `npm run build`.* \[DOCTOR_PACKAGE_MISSING\]\n$/);
  });

  it("call nosuchdir tool, and call on an unbuilt project: CALL_PACKAGE_MISSING naming what was expected and the fix", async () => {
    const missing = await runCli(["plugin", "call", "nosuchdir", "tool"], { cwd: root });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(`package directory ${join(root, "nosuchdir")} does not exist: expected a built package directory (plugin.json, mcp.json, dist/server.js); fix: run \`npm run build\``);
    expect(missing.stderr).toContain("[CALL_PACKAGE_MISSING]");
    const unbuilt = await runCli(["plugin", "call", project, "tool"]);
    expect(unbuilt.code).toBe(1);
    expect(unbuilt.stderr).toContain("has no mcp.json");
    expect(unbuilt.stderr).toContain("it looks like an unbuilt plugin project");
    expect(unbuilt.stderr).toContain("[CALL_PACKAGE_MISSING]");
  });
});

describe("plugin doctor --python", () => {
  it("/nonexistent fails (exit 1, DOCTOR_PYTHON_UNAVAILABLE) before anything is checked; it used to pass", async () => {
    const r = await runCli(["plugin", "doctor", project, "--python", "/nonexistent"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("--python /nonexistent: expected a Python 3 interpreter to run the native companion check, found no such program; fix: ");
    expect(r.stderr).toContain("[DOCTOR_PYTHON_UNAVAILABLE]");
  });

  it("accepts a Python 3; refuses a program that is not Python 3 or does not run", () => {
    const python3 = execFileSync("bash", ["-c", "command -v python3"], { encoding: "utf8" }).trim();
    expect(() => requirePythonInterpreter(python3)).not.toThrow();
    expect(() => requirePythonInterpreter("/bin/echo")).toThrowWithCode("DOCTOR_PYTHON_UNAVAILABLE");
    expect(() => requirePythonInterpreter("/bin/false")).toThrow(/found it exited 1/);
    expect(() => requirePythonInterpreter(root)).toThrowWithCode("DOCTOR_PYTHON_UNAVAILABLE");
  });
});
