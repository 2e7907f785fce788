/**
 * semantic-release's dry run, in a child Node process whose environment is
 * an allow-list (docs/release-build.md, "Subprocesses"; "Intent rules").
 *
 * semantic-release starts git with `execa`, which adds the whole
 * environment of the process it runs in to the `env` it is given; in our
 * process that environment may hold `REGISTRY_PASSWORD`, `GH_TOKEN` or the
 * Actions OIDC request token. Run in a child started with the allow-listed
 * {@link semanticReleaseEnvironment}, semantic-release and every git it
 * starts see only that. The child is an inline ES module: it reads its
 * options as JSON on stdin (parser patterns as data, `COMMIT_PARSER_SOURCE`),
 * imports semantic-release from where this package resolves it, writes its
 * log to stderr and one JSON line to stdout.
 */
import { createRequire } from "node:module";
import type { Writable } from "node:stream";
import { pathToFileURL } from "node:url";
import type { ReleaseClass } from "../src/contract/grammar.js";
import { BASE_ENV_NAMES, childEnvironment, runBounded, type ChildEnvironment } from "../src/oci/subprocess.js";
import { ReleaseStepError } from "./errors.js";
import { gitEnvironment } from "./git.js";
import { COMMIT_PARSER_OPTIONS, COMMIT_PARSER_SOURCE } from "./history.js";

/** Time limit of the dry run (ms). */
export const SEMANTIC_RELEASE_TIMEOUT_MS = 10 * 60_000;
const MAX_OUTPUT_BYTES = 64 * 1024 * 1024;

/** Environment of semantic-release (and the git it starts): the base allow-list and isolated git; no tokens, no CI detection variables. */
export function semanticReleaseEnvironment(source: Readonly<Record<string, string | undefined>> = process.env): ChildEnvironment {
  const git = gitEnvironment({}, source);
  const isolation = Object.fromEntries(Object.entries(git).filter(([name]) => name.startsWith("GIT_") || name === "LC_ALL"));
  return childEnvironment(BASE_ENV_NAMES, isolation, source);
}

/**
 * semantic-release merges the repository's own config (`.releaserc`,
 * `release.config.*`, package.json `release`) under the API options; these
 * keys, set to `undefined`, drop its `extends` and per-step plugin overrides.
 */
const OVERRIDDEN_CONFIG_KEYS = Object.freeze(["extends", "verifyConditions", "analyzeCommits", "verifyRelease", "generateNotes", "prepare", "publish", "addChannel", "success", "fail"]);

const PLUGIN_ANALYZER = "@semantic-release/commit-analyzer";
const PLUGIN_NOTES = "@semantic-release/release-notes-generator";

/** The two plugins' configurations (same parser options as the strict pass). */
export function pluginConfigs(): { analyzer: Record<string, unknown>; notes: Record<string, unknown> } {
  return {
    analyzer: { preset: "conventionalcommits", parserOpts: { ...COMMIT_PARSER_OPTIONS } },
    notes: { preset: "conventionalcommits", linkCompare: false, linkReferences: false, parserOpts: { ...COMMIT_PARSER_OPTIONS } },
  };
}

const CHILD_SCRIPT = `
import { pathToFileURL } from "node:url";
let raw = "";
for await (const chunk of process.stdin) raw += chunk;
const input = JSON.parse(raw);
const re = (r) => new RegExp(r.source, r.flags);
const p = input.parser;
const parserOpts = {
  headerPattern: re(p.headerPattern), breakingHeaderPattern: re(p.breakingHeaderPattern), headerCorrespondence: p.headerCorrespondence,
  noteKeywords: p.noteKeywords, notesPattern: (keywords) => new RegExp(p.notesPattern.replace("KEYWORDS", keywords)),
  fieldPattern: re(p.fieldPattern), revertPattern: re(p.revertPattern), revertCorrespondence: p.revertCorrespondence,
};
const options = { ...input.options, plugins: input.options.plugins.map(([name, config]) => [name, { ...config, parserOpts }]) };
for (const key of input.undefinedKeys) options[key] = undefined;
try {
  const { default: semanticRelease } = await import(input.module);
  const result = await semanticRelease(options, { cwd: input.cwd, env: process.env, stdout: process.stderr, stderr: process.stderr });
  process.stdout.write(JSON.stringify(result === false ? { released: false } : { released: true, type: result.nextRelease.type, lastVersion: result.lastRelease.version ?? null }) + "\\n");
} catch (error) {
  process.stdout.write(JSON.stringify({ error: String((error && error.message) || error).split("\\n")[0] }) + "\\n");
  process.exitCode = 1;
}
`;

/**
 * Run semantic-release's JS API in dry-run on `dir` (branch `branch`) in the
 * child described in the module comment; its log goes to `log`.
 * @returns the bump its commit-analyzer computed and its last release version.
 * @throws ReleaseStepError `RELEASE_ANALYZER_FAILED` when semantic-release fails, the child cannot run, or it answers something else.
 */
export async function semanticReleaseDryRun(dir: string, branch: string, log: Writable): Promise<{ type: ReleaseClass | null; lastVersion: string | undefined }> {
  const module = pathToFileURL(createRequire(import.meta.url).resolve("semantic-release")).href;
  const configs = pluginConfigs();
  const strip = (config: Record<string, unknown>) => Object.fromEntries(Object.entries(config).filter(([key]) => key !== "parserOpts"));
  const input = {
    module,
    cwd: dir,
    parser: COMMIT_PARSER_SOURCE,
    undefinedKeys: OVERRIDDEN_CONFIG_KEYS,
    options: {
      dryRun: true,
      ci: false,
      noCi: true,
      branches: [branch],
      repositoryUrl: pathToFileURL(dir).href,
      tagFormat: "v${version}",
      plugins: [
        [PLUGIN_ANALYZER, strip(configs.analyzer)],
        [PLUGIN_NOTES, strip(configs.notes)],
      ],
    },
  };
  const run = await runBounded(process.execPath, ["--input-type=module", "-e", CHILD_SCRIPT], {
    cwd: dir,
    env: semanticReleaseEnvironment(),
    timeoutMs: SEMANTIC_RELEASE_TIMEOUT_MS,
    maxOutputBytes: MAX_OUTPUT_BYTES,
    input: JSON.stringify(input),
  });
  log.write(run.stderr);
  const fail = (why: string): never => {
    throw new ReleaseStepError("RELEASE_ANALYZER_FAILED", `semantic-release dry-run failed: ${why}`);
  };
  if (run.outcome.kind !== "exited") fail(run.outcome.kind === "start-failed" ? `node could not start (${run.outcome.errno})` : run.outcome.kind);
  let answer: { released?: boolean; type?: unknown; lastVersion?: string | null; error?: string };
  try {
    answer = JSON.parse(run.stdout.toString("utf8").trim().split("\n").pop() ?? "") as typeof answer;
  } catch {
    return fail(`no result (exit ${String(run.outcome.kind === "exited" ? run.outcome.code : "?")})`);
  }
  if (answer.error !== undefined) fail(answer.error);
  if (answer.released !== true) return { type: null, lastVersion: undefined };
  const type = answer.type;
  if (type !== "major" && type !== "minor" && type !== "patch") {
    throw new ReleaseStepError("RELEASE_ANALYZER_FAILED", `semantic-release computed an unsupported release type ${JSON.stringify(type)}`);
  }
  return { type, lastVersion: answer.lastVersion ?? undefined };
}
