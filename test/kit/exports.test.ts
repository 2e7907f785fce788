/**
 * The kit's public surface is an explicit list (src/kit/index.ts), and the
 * package root re-exports exactly that list: a name added to one and not the
 * other, or an `export *` creeping back into src/kit, fails here.
 */
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import * as root from "../../src/index.js";
import * as kit from "../../src/kit/index.js";

const KIT_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), "../../src/kit");

describe("kit public surface", () => {
  it("the package root re-exports every kit value, the same object", () => {
    const missing = Object.keys(kit).filter((name) => (root as Record<string, unknown>)[name] !== (kit as Record<string, unknown>)[name]);
    expect(missing).toEqual([]);
  });

  it("lists the names an author uses and the ones generated server bundles import", () => {
    for (const name of ["definePlugin", "tool", "strArg", "numberArg", "pluginSkill", "pluginPath", "loadPluginConfig", "servePluginModule", "refusalLine", "PluginKitError"]) {
      expect(typeof (kit as Record<string, unknown>)[name], name).not.toBe("undefined");
    }
  });

  it("the library functions docs/kit.md documents resolve by package name, from the root and from hermes-plugin-kit/kit (the compiled build)", () => {
    const names = ["callPluginTool", "parseCallArguments", "buildPluginPackage", "doctorPluginPackage", "definePlugin", "tool", "strArg"];
    const script = `const root = await import("hermes-plugin-kit"); const kit = await import("hermes-plugin-kit/kit");
      console.log(JSON.stringify(${JSON.stringify(names)}.map((name) => [typeof root[name], root[name] === kit[name]])));`;
    const run = spawnSync(process.execPath, ["--input-type=module", "-e", script], { cwd: path.join(KIT_DIR, "../.."), encoding: "utf8" });
    expect(run.stderr).toBe("");
    expect(JSON.parse(run.stdout)).toEqual(names.map(() => ["function", true]));
    for (const name of ["callPluginTool", "parseCallArguments"]) expect(typeof (kit as Record<string, unknown>)[name], name).toBe("function");
  });

  it("no module of src/kit uses export *", () => {
    const offenders = readdirSync(KIT_DIR)
      .filter((file) => file.endsWith(".ts"))
      .filter((file) => /^export \* from/m.test(readFileSync(path.join(KIT_DIR, file), "utf8")));
    expect(offenders).toEqual([]);
  });
});
