// `node --import <this file>`: record the module graph of the process into the file named by
// MODULE_GRAPH_OUT: ESM resolutions through module-graph-hooks.mjs, and at exit every CommonJS
// module in require.cache (packages loaded by require inside CommonJS packages).
import { appendFileSync } from "node:fs";
import { createRequire, register } from "node:module";
import { pathToFileURL } from "node:url";

const out = process.env.MODULE_GRAPH_OUT;
if (out === undefined || out === "") throw new Error("MODULE_GRAPH_OUT is not set");
register(new URL("./module-graph-hooks.mjs", import.meta.url), { data: { out } });
const require = createRequire(import.meta.url);
process.on("exit", () => {
  for (const file of Object.keys(require.cache)) appendFileSync(out, JSON.stringify({ parent: null, specifier: "(require.cache)", url: pathToFileURL(file).href }) + "\n");
});
