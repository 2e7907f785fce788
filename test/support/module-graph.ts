/**
 * Record and judge the module graph of a real `node` process: which packages
 * and which of our compiled modules it loaded, and through which import chain.
 * The recording is done by `module-graph-register.mjs` (ESM resolve hooks plus
 * CommonJS `require.cache` at exit); this module runs the process and reads it.
 */
import { runProcess } from "./cli.js";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

/** Repository root. */
export const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const REGISTER = fileURLToPath(new URL("./module-graph-register.mjs", import.meta.url));

/** One resolved import: `parent` imported `specifier`, which resolved to `url`. */
export interface GraphEdge {
  parent: string | null;
  specifier: string;
  url: string;
}

/** A process run under the recorder. */
export interface GraphRun {
  code: number;
  stdout: string;
  stderr: string;
  edges: GraphEdge[];
}

/** Run `node --import <recorder> ...nodeArgs` and return its exit code, output and module graph. */
export async function recordModuleGraph(nodeArgs: string[], options: { cwd?: string; env?: Record<string, string> } = {}): Promise<GraphRun> {
  const dir = await mkdtemp(join(tmpdir(), "hpk-graph-"));
  const out = join(dir, "graph.jsonl");
  try {
    const result = await runProcess(process.execPath, ["--import", REGISTER, ...nodeArgs], {
      cwd: options.cwd ?? ROOT,
      env: { ...process.env, ...options.env, MODULE_GRAPH_OUT: out },
      timeoutMs: 60_000,
    });
    const text = await readFile(out, "utf8").catch(() => "");
    const edges = text
      .split("\n")
      .filter((line) => line.length > 0)
      .map((line) => JSON.parse(line) as GraphEdge);
    return { ...result, edges };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The npm package a module URL belongs to (innermost `node_modules/<name>`), or undefined. */
export function packageOf(url: string): string | undefined {
  const matches = [...url.matchAll(/node_modules\/((?:@[^/]+\/)?[^/]+)\//g)];
  return matches.at(-1)?.[1];
}

/** The path of one of our compiled modules relative to the repository (`dist/src/...`), or undefined. */
export function distModuleOf(url: string): string | undefined {
  if (!url.startsWith("file:") || packageOf(url) !== undefined) return undefined;
  const rel = relative(ROOT, fileURLToPath(url));
  return rel.startsWith("dist/") ? rel : undefined;
}

/** Heavy libraries no command may load before its action runs, with the name a reader knows them by. */
export const HEAVY_PACKAGES: readonly (readonly [RegExp, string])[] = [
  [/^@octokit\//, "Octokit"],
  [/^(semantic-release|@semantic-release\/.+|conventional-.+)$/, "semantic-release"],
  [/^(esbuild|@esbuild\/.+)$/, "esbuild"],
  [/^@modelcontextprotocol\//, "the MCP SDK"],
  [/^(sigstore|@sigstore\/.+)$/, "Sigstore"],
  [/^(verdaccio|@verdaccio\/.+)$/, "Verdaccio"],
  [/^(publint|@publint\/.+)$/, "publint"],
  [/^(tar|tar-stream|tar-fs|streamx)$/, "a tar library"],
  [/^zod$/, "zod"],
  [/^undici$/, "undici"],
  [/^yaml$/, "yaml"],
  [/^ajv(-.+)?$/, "ajv"],
];

function shortName(url: string): string {
  const pkg = packageOf(url);
  if (pkg !== undefined) return pkg;
  if (url.startsWith("file:")) return relative(ROOT, fileURLToPath(url));
  return url;
}

/** The import chain from the entry to `url`, e.g. `dist/src/cli/main.js -> ... -> @octokit/rest`. */
export function importChain(edges: readonly GraphEdge[], url: string): string {
  const parentOf = new Map<string, string>();
  for (const edge of edges) if (edge.parent !== null && edge.parent !== edge.url && !parentOf.has(edge.url)) parentOf.set(edge.url, edge.parent);
  const chain = [url];
  for (let at = url, i = 0; parentOf.has(at) && i < 50; i += 1) {
    at = parentOf.get(at) as string;
    chain.unshift(at);
  }
  // Collapse consecutive modules of one package into one name.
  return chain.map(shortName).filter((name, i, all) => i === 0 || name !== all[i - 1]).join(" -> ");
}

/** What a process may load. */
export interface GraphAllowance {
  /** Packages allowed (exact names); any other package is a violation. Undefined: any package but the forbidden ones. */
  packages?: ReadonlySet<string>;
  /** Packages forbidden by name pattern (default {@link HEAVY_PACKAGES}). */
  forbidden?: readonly (readonly [RegExp, string])[];
  /** Our compiled modules allowed (`dist/...` paths). Undefined: all. */
  distModule?: (path: string) => boolean;
}

/** One line per module loaded against `allow`, naming what it is and the import chain that loaded it. */
export function graphViolations(edges: readonly GraphEdge[], allow: GraphAllowance): string[] {
  const seen = new Set<string>();
  const problems: string[] = [];
  for (const { url } of edges) {
    const pkg = packageOf(url);
    const key = pkg ?? url;
    if (seen.has(key)) continue;
    seen.add(key);
    if (pkg !== undefined) {
      const heavy = (allow.forbidden ?? HEAVY_PACKAGES).find(([pattern]) => pattern.test(pkg));
      if (heavy !== undefined) problems.push(`${heavy[1]} (${pkg}) loaded via ${importChain(edges, url)}`);
      else if (allow.packages !== undefined && !allow.packages.has(pkg)) problems.push(`package ${pkg} loaded via ${importChain(edges, url)}`);
      continue;
    }
    const dist = distModuleOf(url);
    if (dist !== undefined && allow.distModule !== undefined && !allow.distModule(dist)) problems.push(`${dist} loaded via ${importChain(edges, url)}`);
  }
  return problems;
}
