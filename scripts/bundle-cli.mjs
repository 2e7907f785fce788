#!/usr/bin/env node
/**
 * Build step after `tsc`: bundle the CLI's start-up path into
 * `dist/src/cli/main.js` (replacing tsc's entry file) so that `hermes-plugin-kit`
 * starts from a few files instead of dozens of small modules.
 *
 * What goes in the bundle (measured by `npm run bench:cli`):
 * - the CLI wiring (`dist/src/cli/**`) and commander;
 * - the offline verification path of `verify-final-receipt` and
 *   `verify-manifest`: `src/contract` with zod (its ESM build is ~95 files,
 *   64 of them locales, which the namespace import in `schemas.ts` lets the
 *   bundler drop), the receipt reference and the OCI manifest
 *   builder it uses. These load as lazy chunks when an action imports them.
 * What stays outside, loaded from `dist/` as before: every other area module
 * (fetch, oci transport, release, kit), every other package (Octokit,
 * semantic-release, esbuild, the MCP SDK, tar, undici, ...), and every
 * error module (`errors.js`, `*-error.js`), so each error class exists once per process (the CLI's
 * `instanceof HermesPluginKitError` sees errors thrown by any area).
 *
 * Chunks are written next to the entry, so relative paths to the external
 * modules are the same from every chunk. `dist/src/cli/bundle-meta.json`
 * records which inputs went into which output (test/cli/module-graph.test.ts
 * reads it).
 */
import { build } from "esbuild";
import { readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const dist = path.join(root, "dist");
const cliDir = path.join(dist, "src", "cli");

/**
 * Packages our bundled modules may pull in (with their own dependencies); every
 * other package stays an external import.
 */
const BUNDLED_PACKAGES = new Set(["commander", "zod"]);
/** Our compiled modules bundled in besides `src/cli/**` and `src/contract/**` (paths under dist/). */
const BUNDLED_MODULES = new Set(["src/fetch/receipt-reference.js", "src/oci/manifest.js", "src/oci/descriptor.js", "src/oci/target.js"]);

function bundled(file) {
  const rel = path.relative(dist, file).split(path.sep).join("/");
  // Error classes stay single per process (errors.js, provenance-error.js, ...).
  if (/(^|[-.])errors?\.js$/.test(path.basename(rel))) return false;
  return rel.startsWith("src/cli/") || rel.startsWith("src/contract/") || BUNDLED_MODULES.has(rel);
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

const layout = {
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
      if (bundled(target)) return undefined;
      let rel = path.relative(cliDir, target).split(path.sep).join("/");
      if (!rel.startsWith(".")) rel = `./${rel}`;
      return { path: rel, external: true };
    });
  },
};

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

// Chunks of an earlier build would otherwise pile up next to the entry.
for (const name of readdirSync(cliDir)) if (/^chunk-.*\.js(\.map)?$/.test(name)) rmSync(path.join(cliDir, name));

const result = await build({
  entryPoints: { main: path.join(cliDir, "main.js") },
  outdir: cliDir,
  allowOverwrite: true,
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  minify: true,
  sourcemap: true,
  sourcesContent: false,
  chunkNames: "chunk-[hash]",
  metafile: true,
  logLevel: "warning",
  legalComments: "none",
  plugins: [layout, lazyChildProcess],
  // CommonJS packages bundled into ESM (commander) call require() for built-ins.
  banner: { js: 'import { createRequire as __hpkCreateRequire } from "node:module";\nconst require = __hpkCreateRequire(import.meta.url);' },
});

const meta = {};
for (const [output, info] of Object.entries(result.metafile.outputs)) {
  if (output.endsWith(".map")) continue;
  meta[path.relative(root, path.resolve(root, output)).split(path.sep).join("/")] = {
    entryPoint: info.entryPoint === undefined ? null : path.relative(root, path.resolve(root, info.entryPoint)).split(path.sep).join("/"),
    inputs: Object.keys(info.inputs).map((input) => path.relative(root, path.resolve(root, input)).split(path.sep).join("/")).sort(),
    imports: info.imports.map((i) => ({ path: i.path, kind: i.kind, external: i.external === true })),
  };
}
writeFileSync(path.join(cliDir, "bundle-meta.json"), JSON.stringify(meta, null, 2) + "\n");
