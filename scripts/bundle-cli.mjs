#!/usr/bin/env node
/**
 * Build step after `tsc`: bundle the CLI's start-up path into one CommonJS file,
 * `dist/src/cli/cli-bundle.cjs`, which `dist/src/cli/main.cjs` (src/cli/main.cts, package.json
 * `bin`) compiles with a per-user V8 code cache. A run then starts no ES module loader and, once
 * warm, parses nothing (measured by `npm run bench:cli`).
 *
 * What goes in the bundle:
 * - the CLI wiring (`dist/src/cli/**`) and commander;
 * - the offline verification path of `verify-final-receipt` and `verify-manifest`: `src/contract`
 *   with zod (its ESM build is ~95 files, 64 of them locales, which the namespace import in
 *   `schemas.ts` lets the bundler drop), the receipt reference and the OCI manifest builder it uses.
 *   The action imports them, so esbuild initialises them lazily: `--help` runs none of zod.
 * A second bundle, `dist/src/cli/fetch-bundle.cjs`, holds the consumer's network path: `src/fetch`
 * (fetch, resolve, fleet) and the `src/oci` transport with what they use of `src/contract` and zod.
 * From dist/ they are ~55 ES modules plus a second copy of `src/contract` and zod's ~100 ES modules:
 * ~150 ms of every `fetch` before its first request. Kept apart so that the commands which do not use
 * it (`--help`, `verify-*`) do not read or deserialise it: V8's code cache grows with the script. The
 * CLI bundle's `import()` of one of its modules becomes `__hpkImport(specifier)`, which main.cts
 * answers from this bundle (compiled with a code cache of its own; `cli-bundle.json` lists its
 * modules). Not in it: the Sigstore half of `src/fetch` (`AREA_EXCLUDED`: it imports the @sigstore
 * packages as it loads), which stays in dist/ and loads only for `--provenance` and
 * `verify-provenance`, and the GitHub client (Octokit), loaded for ghcr.io's package API only.
 * What stays outside both, loaded from `dist/` as before: every other area module (release, kit,
 * github), every other package (Octokit, semantic-release, esbuild, the MCP SDK, tar,
 * undici, ...), and every error module (`errors.js`, `*-error.js`), so each error class exists once
 * per process (the CLI's `instanceof HermesPluginKitError` sees errors thrown by any area). The
 * error modules are required with the bundle (require() of an ES module, Node >= 20.19); every
 * other external is an `import()`, which the build rewrites to `__hpkImport()` (main.cts), since
 * code compiled by `vm.Script` has no `import()` of its own.
 *
 * Also written: `cli-bundle.json` (each bundle's SHA-256, which names each user's code caches, and the
 * fetch bundle's modules) and `bundle-meta.json` (which inputs went in each bundle, which externals
 * it loads; test/cli/module-graph.test.ts reads it).
 */
import { build, transform } from "esbuild";
import { createHash } from "node:crypto";
import { readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const dist = path.join(root, "dist");
const cliDir = path.join(dist, "src", "cli");

/**
 * Packages our bundled modules may pull in (with their own dependencies); every
 * other package stays an external import.
 */
const BUNDLED_PACKAGES = new Set(["commander", "zod"]);

/**
 * Modules of `src/fetch` that stay in dist/: the Sigstore verification, which imports the @sigstore
 * packages as it loads (in a bundle, a module's static import of a package is a require() when it
 * initialises), and what imports it statically. The fetch bundle loads them with import().
 */
const AREA_EXCLUDED = new Set(["src/fetch/sigstore-trust.js", "src/fetch/sigstore-verify.js", "src/fetch/provenance.js", "src/fetch/verify-bundle-file.js", "src/fetch/verify-reference.js"]);

const relToDist = (file) => path.relative(dist, file).split(path.sep).join("/");
/** Error classes stay single per process (errors.js, provenance-error.js, ...): never bundled. */
const isErrorModule = (rel) => /(^|[-.])errors?\.js$/.test(path.basename(rel));

/** In the CLI bundle: src/cli and src/contract (the receipt reference is the contract's, so no src/oci module). */
function bundled(file) {
  const rel = relToDist(file);
  if (isErrorModule(rel)) return false;
  return rel.startsWith("src/cli/") || rel.startsWith("src/contract/");
}

/** A module of the fetch bundle's areas (src/fetch, src/oci), which the CLI bundle loads through it. */
function areaModule(file) {
  const rel = relToDist(file);
  if (isErrorModule(rel) || AREA_EXCLUDED.has(rel)) return false;
  return rel.startsWith("src/fetch/") || rel.startsWith("src/oci/") || rel === "src/github/network-reason.js";
}

/** In the fetch bundle: its areas and the src/contract modules they use. */
function bundledInFetch(file) {
  const rel = relToDist(file);
  return areaModule(file) || (rel.startsWith("src/contract/") && !isErrorModule(rel));
}

function isInstalled(specifier, importer) {
  try {
    createRequire(importer).resolve(specifier);
    return true;
  } catch {
    return false;
  }
}

function packageName(specifier) {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
}

/** Resolution for a bundle whose own modules are those `isBundled` accepts; `areaSeen` collects the CLI bundle's imports of fetch-bundle modules. */
const layoutFor = (isBundled, areaSeen) => ({
  name: "hermes-plugin-kit-cli-layout",
  setup(b) {
    b.onResolve({ filter: /.*/ }, (args) => {
      if (args.kind === "entry-point") return undefined;
      if (args.path.startsWith("node:")) return { path: args.path, external: true };
      if (args.importer.includes(`${path.sep}node_modules${path.sep}`)) {
        // Inside a bundled package: bundle what it imports, except optional peers that are not installed.
        if (args.path.startsWith(".") || isInstalled(args.path, args.importer)) return undefined;
        return { path: args.path, external: true };
      }
      if (!args.path.startsWith(".")) {
        return BUNDLED_PACKAGES.has(packageName(args.path)) ? undefined : { path: args.path, external: true };
      }
      const target = path.resolve(args.resolveDir, args.path);
      if (isBundled(target)) return undefined;
      let rel = path.relative(cliDir, target).split(path.sep).join("/");
      if (!rel.startsWith(".")) rel = `./${rel}`;
      // An error module is required in its CommonJS form (see ERROR_MODULES below).
      if (ERROR_MODULES.includes(relToDist(target))) rel = rel.replace(/\.js$/, ".cjs");
      if (areaSeen !== undefined && areaModule(target)) {
        if (args.kind !== "dynamic-import") throw new Error(`bundle-cli: ${relToDist(args.importer)} imports ${args.path} statically; import it inside the action (it is in the fetch bundle)`);
        areaSeen.add(rel);
      }
      return { path: rel, external: true };
    });
  },
});

/**
 * commander requires `node:child_process` when it loads, for executable
 * subcommands (`.command(name, description)`), which this CLI never declares.
 * Loading it compiles about a dozen more built-in modules (child_process, net,
 * dgram, stream bindings) on every run, `--help` included; the bundled copy
 * requires it on first use instead. The build fails if commander changes the line.
 */
const COMMANDER_CHILD_PROCESS = "const childProcess = require('node:child_process');";
const lazyChildProcess = {
  name: "hermes-plugin-kit-commander-lazy-child-process",
  setup(b) {
    b.onLoad({ filter: /[\\/]commander[\\/]lib[\\/]command\.js$/ }, (args) => {
      const source = readFileSync(args.path, "utf8");
      if (!source.includes(COMMANDER_CHILD_PROCESS)) throw new Error(`bundle-cli: ${args.path} no longer has the line ${COMMANDER_CHILD_PROCESS}`);
      const lazy = "const childProcess = { spawn: (...args) => require('node:child_process').spawn(...args) };";
      return { contents: source.replace(COMMANDER_CHILD_PROCESS, lazy), loader: "js" };
    });
  },
};

/**
 * The error modules, one class per process for every area: each is rewritten as CommonJS
 * (`X.cjs`), and `X.js` becomes `export * from "./X.cjs"`, so the bundle's require() and every
 * area's `import` get the one module instance, and the bundle's require() needs no ES module
 * loader (require() of an ES module starts it: ~5 ms of every `verify-*` run, `npm run bench:cli`).
 */
const ERROR_MODULES = ["src/contract/errors.js", "src/contract/provenance-error.js", "src/fetch/errors.js", "src/kit/errors.js", "src/oci/errors.js", "release/errors.js"];
const ERROR_SHIM = "// CommonJS form beside this file (scripts/bundle-cli.mjs, ERROR_MODULES): one instance per process.\n";
for (const rel of ERROR_MODULES) {
  const file = path.join(dist, rel);
  const source = readFileSync(file, "utf8");
  if (source.startsWith(ERROR_SHIM)) continue; // converted by an earlier run of this script (no tsc since)
  const base = path.basename(file, ".js");
  let code = (await transform(source, { format: "cjs", platform: "node", target: "node20", loader: "js" })).code;
  // Other error modules are required in their CommonJS form too.
  code = code.replace(/require\("((?:\.\.?\/)+(?:src\/)?(?:[a-z]+\/)*(?:errors|[a-z]+-error))\.js"\)/g, (_, spec) => `require("${spec}.cjs")`);
  if (/require\("[^"]*\.js"\)/.test(code)) throw new Error(`bundle-cli: ${rel} requires an ES module; only other error modules may be required`);
  writeFileSync(file.replace(/\.js$/, ".cjs"), code);
  writeFileSync(file, `${ERROR_SHIM}export * from "./${base}.cjs";\n`);
  rmSync(`${file}.map`, { force: true });
}

// Outputs of earlier builds (ESM chunks of the previous layout) would otherwise pile up next to the entry.
for (const name of readdirSync(cliDir)) if (/^chunk-.*\.js(\.map)?$/.test(name)) rmSync(path.join(cliDir, name));

/**
 * Every module outside the bundle is written as `EXTERNAL + specifier` by the layout plugin; after
 * the build, `require("<marker>x")` becomes `require("x")` (a static import: the error modules,
 * loaded with the bundle through require() of an ES module) and `import("<marker>x")` becomes
 * `__hpkImport("x")` (main.cts: a real import() from the bundle's directory).
 */
const EXTERNAL = "__hpk_external__:";
const marked = {
  name: "hermes-plugin-kit-cli-external-marker",
  setup(b) {
    b.onResolve({ filter: /.*/ }, async (args) => {
      if (args.pluginData === "marked" || args.kind === "entry-point") return undefined;
      const result = await b.resolve(args.path, { kind: args.kind, importer: args.importer, resolveDir: args.resolveDir, pluginData: "marked" });
      if (result.errors.length > 0) return { errors: result.errors };
      if (!result.external) return result;
      return { path: EXTERNAL + result.path, external: true };
    });
  },
};

/**
 * Build one bundle from `contents` (an entry module in dist/src/cli) into `outfile`, with the
 * externals rewritten (see `marked`); returns the bundle's code and esbuild's metafile.
 */
async function bundle(contents, outfile, isBundled, areaSeen) {
  const result = await build({
    stdin: { contents, resolveDir: cliDir, sourcefile: `${path.basename(outfile, ".cjs")}-entry.js`, loader: "js" },
    outfile,
    allowOverwrite: true,
    bundle: true,
    format: "cjs",
    platform: "node",
    target: "node20",
    minify: true,
    metafile: true,
    logLevel: "warning",
    legalComments: "none",
    plugins: [marked, layoutFor(isBundled, areaSeen), lazyChildProcess],
    // The bundled modules' import.meta.url is the bundle's own URL (it sits where their chunks did).
    define: { "import.meta.url": "__hpkMetaUrl" },
    banner: { js: 'var __hpkMetaUrl = require("node:url").pathToFileURL(__filename).href;' },
  });
  let code = readFileSync(outfile, "utf8");
  const staticCount = code.split(`require("${EXTERNAL}`).length - 1;
  const dynamicCount = code.split(`import("${EXTERNAL}`).length - 1;
  code = code.split(`require("${EXTERNAL}`).join('require("').split(`import("${EXTERNAL}`).join('__hpkImport("');
  if (code.includes(EXTERNAL)) throw new Error(`bundle-cli: an external module is referenced in a way neither require() nor import() (${EXTERNAL} left in ${outfile})`);
  if (/\bimport\(/.test(code)) throw new Error(`bundle-cli: ${outfile} still holds an import() expression, which code run by vm.Script cannot evaluate`);
  writeFileSync(outfile, code);
  return { code, staticCount, dynamicCount, metafile: result.metafile };
}

const bundleFile = path.join(cliDir, "cli-bundle.cjs");
const fetchBundleFile = path.join(cliDir, "fetch-bundle.cjs");
const areaSeen = new Set();
const cli = await bundle('export { runCli } from "./program.js";\n', bundleFile, bundled, areaSeen);
// The fetch bundle exports the namespace of each of its modules the CLI bundle imports, by the specifier it uses,
// and the src/oci barrel: the transport as the CLI ships it, for tools that run it without a command
// (scripts/bench-oci-phase.mjs loads it through main.cjs's importArea, with a code cache like `fetch`'s).
const areaSpecifiers = [...new Set([...areaSeen, "../oci/index.js"])].sort();
const entry = areaSpecifiers.map((spec, i) => `import * as m${i} from ${JSON.stringify(spec)};\n`).join("") + `export const modules = { ${areaSpecifiers.map((spec, i) => `${JSON.stringify(spec)}: m${i}`).join(", ")} };\n`;
const fetchBundle = await bundle(entry, fetchBundleFile, bundledInFetch, undefined);

// Each bundle's SHA-256 names each user's V8 code cache of it (src/cli/main.cts): V8 checks only a
// cache's source length, so a cache made from another bundle must never be found under this name.
// The cache itself is made on the user's machine from the installed bundle; no bytecode ships.
// The top-level command names: each gets a cache file of its own (a mistyped command shares "other").
const { COMMAND_GROUPS } = await import(pathToFileURL(path.join(cliDir, "program.js")).href);
const commands = COMMAND_GROUPS.flatMap((group) => group.names).sort();
const idOf = (code) => ({ sha256: createHash("sha256").update(code).digest("hex"), size: Buffer.byteLength(code) });
writeFileSync(
  path.join(cliDir, "cli-bundle.json"),
  JSON.stringify({ ...idOf(cli.code), commands, areas: { "fetch-bundle.cjs": { ...idOf(fetchBundle.code), modules: areaSpecifiers } } }) + "\n",
);
rmSync(path.join(cliDir, "cli-bundle.cache"), { force: true });

const meta = { staticExternal: cli.staticCount, dynamicExternal: cli.dynamicCount, outputs: {} };
for (const built of [cli, fetchBundle]) {
  for (const [output, info] of Object.entries(built.metafile.outputs)) {
    meta.outputs[path.relative(root, path.resolve(root, output)).split(path.sep).join("/")] = {
      inputs: Object.keys(info.inputs).filter((input) => !input.startsWith("<stdin>")).map((input) => path.relative(root, path.resolve(root, input)).split(path.sep).join("/")).sort(),
      imports: info.imports.map((i) => ({ path: i.path.startsWith(EXTERNAL) ? i.path.slice(EXTERNAL.length) : i.path, kind: i.kind, external: i.external === true })),
    };
  }
}
writeFileSync(path.join(cliDir, "bundle-meta.json"), JSON.stringify(meta, null, 2) + "\n");
