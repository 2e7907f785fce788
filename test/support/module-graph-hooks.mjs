// Module-resolution hooks (node:module register) that record every resolved
// import as one JSON line {parent, specifier, url} in the file named by
// `data.out`. Loaded by module-graph-register.mjs; used by test/cli/module-graph.test.ts.
import { appendFileSync } from "node:fs";

let out;

export async function initialize(data) {
  out = data.out;
}

export async function resolve(specifier, context, nextResolve) {
  const result = await nextResolve(specifier, context);
  appendFileSync(out, JSON.stringify({ parent: context.parentURL ?? null, specifier, url: result.url }) + "\n");
  return result;
}
