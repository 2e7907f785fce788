/**
 * The registry transport's module graph (docs/oci.md "Registry client
 * behaviour"; docs/oci.md "Benchmark"): importing `src/oci` (the
 * barrel `bench:oci`'s fetch process loads) or the modules the `fetch` command
 * imports loads no zod and no TLS or child-process built-ins; the layout
 * reader's zod check loads when a layout is read. Checked on the compiled
 * modules' real graph, not by timing.
 */
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { ROOT, packageOf, recordModuleGraph, type GraphEdge } from "../support/module-graph.js";

const dist = (rel: string): string => pathToFileURL(join(ROOT, "dist", "src", "oci", rel)).href;
const LAZY_BUILTINS = ["node:tls", "node:https", "node:child_process"];

async function graphOf(script: string): Promise<GraphEdge[]> {
  const run = await recordModuleGraph(["--input-type=module", "-e", script]);
  expect(run.code, run.stderr).toBe(0);
  return run.edges;
}

const packages = (edges: GraphEdge[]): string[] => [...new Set(edges.map((e) => packageOf(e.url)).filter((p): p is string => p !== undefined))].sort();
const builtins = (edges: GraphEdge[]): string[] => [...new Set(edges.map((e) => e.url).filter((u) => LAZY_BUILTINS.includes(u)))].sort();

describe("the OCI transport's module graph", () => {
  it.each([["index.js"], ["open.js"], ["transfer.js"]])("importing dist/src/oci/%s loads no package and no TLS or child-process built-in", async (entry) => {
    const edges = await graphOf(`await import(${JSON.stringify(dist(entry))});`);
    expect(edges.some((e) => e.url === dist(entry))).toBe(true);
    // Built-ins are recorded too (node:crypto hashes every blob).
    expect(edges.some((e) => e.url === "node:crypto")).toBe(true);
    expect(packages(edges)).toEqual([]);
    expect(builtins(edges)).toEqual([]);
  });

  it("reading a layout loads the zod schema check (the recorder sees zod when it is loaded)", async () => {
    const script = `
      const oci = await import(${JSON.stringify(dist("index.js"))});
      const { mkdtemp, writeFile } = await import("node:fs/promises");
      const dir = await mkdtemp((await import("node:os")).tmpdir() + "/hpk-oci-graph-");
      await writeFile(dir + "/a.txt", "a");
      await oci.writeLayout(dir + "/layout", "application/vnd.example", new Map([["a.txt", dir + "/a.txt"]]));
      await oci.readLayout(dir + "/layout");
      await (await import("node:fs/promises")).rm(dir, { recursive: true });`;
    expect(packages(await graphOf(script))).toEqual(["zod"]);
  });
});
