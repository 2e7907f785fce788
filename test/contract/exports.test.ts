/**
 * The contract's public surface is an explicit list (src/contract/index.ts),
 * and the package root re-exports exactly that list: a name added to one and
 * not the other, or an `export *` creeping back into src/contract, src/fetch
 * or src/github, fails here.
 */
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import * as root from "../../src/index.js";
import * as contract from "../../src/contract/index.js";

const SRC = path.join(path.dirname(fileURLToPath(import.meta.url)), "../../src");

describe("contract public surface", () => {
  it("the package root re-exports every contract value, the same object", () => {
    const missing = Object.keys(contract).filter((name) => (root as Record<string, unknown>)[name] !== (contract as Record<string, unknown>)[name]);
    expect(Object.keys(contract).length).toBeGreaterThan(100);
    expect(missing).toEqual([]);
  });

  it("lists what consumers verify with", () => {
    for (const name of ["parseStrictJson", "canonicalJson", "verifyFinalReceipt", "verifyTestedManifest", "readNpmTarballFile", "parseReference", "ReleaseContractError", "hasCode"]) {
      expect(typeof (contract as Record<string, unknown>)[name], name).not.toBe("undefined");
    }
  });

  it("hermes-plugin-kit/fetch and hermes-plugin-kit/oci resolve by package name (the library entry points docs/fetch.md and docs/oci.md name)", () => {
    const script = 'const f = await import("hermes-plugin-kit/fetch"); const o = await import("hermes-plugin-kit/oci"); console.log(JSON.stringify([f.fetchRelease, f.installPayload, f.verifyFleetLock, f.addPluginToLock, f.resolveTagReference, f.FetchError, o.openTarget, o.writeLayout, o.LayoutTarget].map((v) => typeof v)))';
    const run = spawnSync(process.execPath, ["--input-type=module", "-e", script], { cwd: path.join(SRC, ".."), encoding: "utf8" });
    expect(run.stderr).toBe("");
    expect(JSON.parse(run.stdout)).toEqual(Array(9).fill("function"));
    // Not exported: a module path under dist (the package's exports are its public surface).
    const hidden = spawnSync(process.execPath, ["--input-type=module", "-e", 'await import("hermes-plugin-kit/dist/src/fetch/fetch.js")'], { cwd: path.join(SRC, ".."), encoding: "utf8" });
    expect(hidden.stderr).toContain("ERR_PACKAGE_PATH_NOT_EXPORTED");
  });

  it.each(["contract", "fetch", "github"])("no module of src/%s uses export *", (area) => {
    const dir = path.join(SRC, area);
    const offenders = readdirSync(dir)
      .filter((file) => file.endsWith(".ts"))
      .filter((file) => /^export \* from/m.test(readFileSync(path.join(dir, file), "utf8")));
    expect(offenders).toEqual([]);
  });
});
