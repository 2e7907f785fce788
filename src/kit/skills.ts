/**
 * Plugin skills as Hermes' portable loader reads them (Agent Plugins v1 loader):
 * `skills/<dir>/SKILL.md` with YAML frontmatter between `---` lines, `name`
 * equal to the directory (lowercase kebab-case, <= 64), `description` 1-1024,
 * flat string `metadata`, string `license`, `compatibility` 1-500, string
 * `allowed-tools`. A skill that breaks a rule is silently skipped by Hermes,
 * so the kit refuses it up front. Also: qualified skill names and the
 * companion-file reference tool (Python kit plugin_reference_tool).
 */
import { createHash } from "node:crypto";
import { lstatSync, readdirSync, readFileSync, realpathSync, statSync } from "node:fs";
import path from "node:path";
import { parse as parseYaml } from "yaml";
import { resolvePluginRoot } from "./config.js";
import { expectString, inputTypeError, isRecord, PluginKitError, valueKind, type PluginKitErrorCode } from "./errors.js";
import { KitLogger } from "./logging.js";
import { requireKnownOptions, requireOptionTypes } from "./option-keys.js";
import { strArg } from "./schema.js";
import { tool, type ToolDefinition } from "./tool.js";

/** Portable skill name grammar (Agent Plugins v1 loader). */
export const SKILL_NAME_PATTERN = /^(?!.*--)[a-z0-9]+(?:-[a-z0-9]+)*$/;

/** Largest SKILL.md read, in bytes. */
export const SKILL_FILE_MAX_BYTES = 256 * 1024;

/** One rule violation of a SKILL.md. */
export interface SkillProblem {
  code: PluginKitErrorCode;
  message: string;
}

/** Parsed SKILL.md. */
export interface SkillDocument {
  frontmatter: Record<string, unknown>;
  body: string;
}

/**
 * Split and parse SKILL.md text: optional BOM, a first line `---`, YAML up
 * to the next line that is exactly `---` (trailing whitespace allowed), then
 * the body.
 *
 * @throws PluginKitError `SKILL_FRONTMATTER_MISSING` (no opening `---`),
 *   `SKILL_FRONTMATTER_UNTERMINATED` (no closing `---` on its own line, e.g.
 *   glued to the previous line), `SKILL_FRONTMATTER_INVALID_YAML` (e.g. an
 *   unquoted `: ` inside a value), `SKILL_FRONTMATTER_NOT_MAPPING`,
 *   `INPUT_TYPE_INVALID` (`text` or `label` not a string).
 */
export function parseSkillDocument(text: string, label = "SKILL.md"): SkillDocument {
  expectString("parseSkillDocument", "text", text);
  expectString("parseSkillDocument", "label", label);
  const content = text.startsWith("\uFEFF") ? text.slice(1) : text;
  const lines = content.split(/\r?\n/);
  if (lines[0]?.trimEnd() !== "---") throw new PluginKitError("SKILL_FRONTMATTER_MISSING", `${label} must start with a '---' frontmatter line`);
  let close = -1;
  for (let index = 1; index < lines.length; index += 1) {
    if (/^---[ \t]*$/.test(lines[index] ?? "")) {
      close = index;
      break;
    }
  }
  if (close < 0) {
    const glued = lines.slice(1).find((line) => /\S---\s*$/.test(line));
    throw new PluginKitError(
      "SKILL_FRONTMATTER_UNTERMINATED",
      `${label} frontmatter has no closing '---' line${glued !== undefined ? " (a '---' is glued to the end of a line; put it on its own line)" : ""}`,
    );
  }
  let frontmatter: unknown;
  try {
    frontmatter = parseYaml(lines.slice(1, close).join("\n"), { uniqueKeys: true, maxAliasCount: 0 });
  } catch (error) {
    const reason = error instanceof Error ? error.message.split("\n", 1)[0] : String(error);
    throw new PluginKitError("SKILL_FRONTMATTER_INVALID_YAML", `${label} frontmatter is not valid YAML (${reason}); quote values that contain ': '`, { cause: error });
  }
  if (frontmatter === null || typeof frontmatter !== "object" || Array.isArray(frontmatter)) {
    throw new PluginKitError("SKILL_FRONTMATTER_NOT_MAPPING", `${label} frontmatter must be a YAML mapping`);
  }
  return { frontmatter: frontmatter as Record<string, unknown>, body: lines.slice(close + 1).join("\n") };
}

/**
 * Check parsed frontmatter against the portable rules for a skill in
 * directory `dirName`. Returns every problem (empty = valid). Nested
 * `metadata.hermes` (the Python kit's layout) is reported as
 * `SKILL_METADATA_NOT_FLAT` with a hint, because Hermes skips such a skill.
 * Frontmatter that is not an object is the one problem
 * `SKILL_FRONTMATTER_NOT_MAPPING`.
 *
 * @throws PluginKitError `INPUT_TYPE_INVALID` when `dirName` is not a string.
 */
export function checkSkillFrontmatter(frontmatter: Record<string, unknown>, dirName: string): SkillProblem[] {
  expectString("checkSkillFrontmatter", "dirName", dirName);
  if (!isRecord(frontmatter)) return [{ code: "SKILL_FRONTMATTER_NOT_MAPPING", message: `skill '${dirName}' frontmatter must be a mapping, found ${valueKind(frontmatter)}` }];
  const problems: SkillProblem[] = [];
  const name = frontmatter["name"];
  if (typeof name !== "string" || name.length < 1 || name.length > 64 || !SKILL_NAME_PATTERN.test(name)) {
    problems.push({ code: "SKILL_NAME_INVALID", message: `skill name ${JSON.stringify(name ?? null)} must be 1-64 characters of lowercase kebab-case` });
  } else if (name !== dirName) {
    problems.push({ code: "SKILL_NAME_MISMATCH", message: `skill name '${name}' must equal its directory name '${dirName}'` });
  }
  const description = frontmatter["description"];
  if (typeof description !== "string" || description.length < 1 || description.length > 1024) {
    problems.push({ code: "SKILL_DESCRIPTION_INVALID", message: `skill '${dirName}' description must be a string of 1-1024 characters` });
  }
  const metadata = frontmatter["metadata"];
  if (metadata !== undefined) {
    if (metadata === null || typeof metadata !== "object" || Array.isArray(metadata)) {
      problems.push({ code: "SKILL_METADATA_NOT_FLAT", message: `skill '${dirName}' metadata must be a flat map of strings` });
    } else {
      const nested = Object.entries(metadata as Record<string, unknown>).filter(([, value]) => typeof value !== "string").map(([key]) => key);
      if (nested.length > 0) {
        const hint = nested.includes("hermes") ? " (nested metadata.hermes is the Python kit's layout; Hermes' portable loader skips this skill)" : "";
        problems.push({ code: "SKILL_METADATA_NOT_FLAT", message: `skill '${dirName}' metadata must be a flat map of strings; non-string values: ${nested.join(", ")}${hint}` });
      }
    }
  }
  if (frontmatter["license"] !== undefined && typeof frontmatter["license"] !== "string") {
    problems.push({ code: "SKILL_FIELD_INVALID", message: `skill '${dirName}' license must be a string` });
  }
  const compatibility = frontmatter["compatibility"];
  if (compatibility !== undefined && (typeof compatibility !== "string" || compatibility.length < 1 || compatibility.length > 500)) {
    problems.push({ code: "SKILL_FIELD_INVALID", message: `skill '${dirName}' compatibility must be a string of 1-500 characters` });
  }
  if (frontmatter["allowed-tools"] !== undefined && typeof frontmatter["allowed-tools"] !== "string") {
    problems.push({ code: "SKILL_FIELD_INVALID", message: `skill '${dirName}' allowed-tools must be a string` });
  }
  return problems;
}

/** A validated portable skill. */
export interface PluginSkill {
  /** Skill name (= directory name). */
  readonly name: string;
  readonly description: string;
  /** Absolute skill directory. */
  readonly dir: string;
  /** Absolute path of SKILL.md. */
  readonly file: string;
  /** Skill directory relative to the plugin root, POSIX separators (e.g. `skills/arithmetic`). */
  readonly relativeDir: string;
  readonly frontmatter: Readonly<Record<string, unknown>>;
  /** Absolute `references/` directory when present. */
  readonly referencesDir?: string;
}

/**
 * Read and validate one skill directory's SKILL.md (structure as
 * {@link parseSkillDocument}, rules as {@link checkSkillFrontmatter}; a
 * nested `metadata.hermes` also logs one WARNING line). A relative `dir`
 * resolves against the plugin root (`PLUGIN_ROOT`, see `resolvePluginRoot`),
 * so `pluginSkill("skills/arithmetic")` works at build and at run time.
 *
 * @throws PluginKitError `SKILL_NOT_FOUND` (no regular SKILL.md or over
 *   256 KiB), the parse codes, and the first rule code found;
 *   `INPUT_TYPE_INVALID` when `options` is not an object, has a key other
 *   than `root` (named with the nearest) or `options.root` is not a string.
 */
export function pluginSkill(dir: string, options: { root?: string } = {}): PluginSkill {
  if (typeof dir !== "string" || dir.trim() === "") throw new PluginKitError("SKILL_NOT_FOUND", "skill directory must be a non-empty string");
  if (!isRecord(options)) throw inputTypeError("pluginSkill", "options", "an object", options);
  requireKnownOptions("pluginSkill", options, ["root"]);
  if (options.root !== undefined) expectString("pluginSkill", "options.root", options.root);
  const root = path.resolve(options.root ?? resolvePluginRoot());
  const absolute = path.resolve(root, dir);
  const file = path.join(absolute, "SKILL.md");
  let stat;
  try {
    stat = lstatSync(file);
  } catch {
    throw new PluginKitError("SKILL_NOT_FOUND", `SKILL.md not found at ${relativeTo(root, file)}`);
  }
  if (!stat.isFile()) throw new PluginKitError("SKILL_NOT_FOUND", `${relativeTo(root, file)} must be a regular file (not a symlink or directory)`);
  if (stat.size > SKILL_FILE_MAX_BYTES) throw new PluginKitError("SKILL_NOT_FOUND", `${relativeTo(root, file)} is ${stat.size} bytes; the limit is ${SKILL_FILE_MAX_BYTES}`);
  const dirName = path.basename(absolute);
  const label = relativeTo(root, file);
  const document = parseSkillDocument(readFileSync(file, "utf8"), label);
  const problems = checkSkillFrontmatter(document.frontmatter, dirName);
  const first = problems[0];
  if (first) {
    if (first.code === "SKILL_METADATA_NOT_FLAT" && first.message.includes("metadata.hermes")) new KitLogger("hermes_plugin_kit").warning(first.message);
    throw new PluginKitError(first.code, `${label}: ${first.message}`);
  }
  const referencesDir = path.join(absolute, "references");
  let hasReferences = false;
  try {
    hasReferences = lstatSync(referencesDir).isDirectory();
  } catch {
    hasReferences = false;
  }
  const skill: PluginSkill = {
    name: dirName,
    description: document.frontmatter["description"] as string,
    dir: absolute,
    file,
    relativeDir: relativeTo(root, absolute),
    frontmatter: document.frontmatter,
    ...(hasReferences ? { referencesDir } : {}),
  };
  return Object.freeze(skill);
}

function relativeTo(root: string, target: string): string {
  const relative = path.relative(root, target);
  return relative === "" ? "." : relative.split(path.sep).join("/");
}

/**
 * The namespace Hermes registers a portable package's skills under, joined
 * with the skill: `agent-plugin-<slug>-<sha8>:<skill>`, where slug is the
 * lowercased plugin key with every char outside `[a-z0-9_-]` turned into `-`
 * and stripped of `-`/`_` (default `plugin`) and sha8 the first 8 hex of
 * SHA-256(key) (Agent Plugins v1 loader; `example-rules` -> `agent-plugin-example-rules-a0dbf553`).
 *
 * @throws PluginKitError `INPUT_TYPE_INVALID` when `pluginKey` or `skill` is not a string.
 */
export function qualifiedSkillName(pluginKey: string, skill: string): string {
  expectString("qualifiedSkillName", "pluginKey", pluginKey);
  expectString("qualifiedSkillName", "skill", skill);
  return `${skillNamespace(pluginKey)}:${skill}`;
}

/** The skill namespace of plugin key `pluginKey` (see {@link qualifiedSkillName}). @throws PluginKitError `INPUT_TYPE_INVALID` when `pluginKey` is not a string. */
export function skillNamespace(pluginKey: string): string {
  expectString("skillNamespace", "pluginKey", pluginKey);
  const slug = pluginKey.toLowerCase().replace(/[^a-z0-9_-]/g, "-").replace(/^[-_]+|[-_]+$/g, "") || "plugin";
  return `agent-plugin-${slug}-${createHash("sha256").update(pluginKey, "utf8").digest("hex").slice(0, 8)}`;
}

/** Most files listed by a reference tool. */
export const REFERENCE_LIST_LIMIT = 1000;
/** Largest reference file read, in bytes. */
export const REFERENCE_FILE_MAX_BYTES = 1024 * 1024;

function listFiles(base: string): string[] {
  const out: string[] = [];
  const walk = (dir: string, prefix: string, depth: number) => {
    if (depth > 16 || out.length >= REFERENCE_LIST_LIMIT) return;
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      if (out.length >= REFERENCE_LIST_LIMIT) return;
      const relative = prefix === "" ? entry.name : `${prefix}/${entry.name}`;
      if (entry.isDirectory()) walk(path.join(dir, entry.name), relative, depth + 1);
      else if (entry.isFile()) out.push(relative);
    }
  };
  walk(base, "", 0);
  return out.sort();
}

/**
 * Resolve `filePath` inside `referencesDir` with realpath containment.
 *
 * @throws PluginKitError `REFERENCE_PATH_INVALID` (empty, absolute, NUL,
 *   backslash or a `..` segment), `REFERENCE_PATH_ESCAPE` (resolves, through
 *   symlinks, outside the directory), `REFERENCE_NOT_FOUND` (not a regular
 *   file, or over 1 MiB), `INPUT_TYPE_INVALID` (`referencesDir` not a string).
 */
export function resolveReferenceFile(referencesDir: string, filePath: string): string {
  expectString("resolveReferenceFile", "referencesDir", referencesDir);
  if (typeof filePath !== "string" || filePath === "" || filePath.includes("\0") || filePath.includes("\\")) {
    throw new PluginKitError("REFERENCE_PATH_INVALID", "file_path must be a non-empty relative POSIX path");
  }
  if (path.posix.isAbsolute(filePath) || path.isAbsolute(filePath)) throw new PluginKitError("REFERENCE_PATH_INVALID", `file_path '${filePath}' must be relative`);
  if (filePath.split("/").includes("..")) throw new PluginKitError("REFERENCE_PATH_INVALID", `file_path '${filePath}' must not contain '..'`);
  const base = realpathSync(referencesDir);
  let resolved: string;
  try {
    resolved = realpathSync(path.join(base, filePath));
  } catch {
    throw new PluginKitError("REFERENCE_NOT_FOUND", `file_path '${filePath}' not found in references`);
  }
  if (resolved !== base && !resolved.startsWith(base + path.sep)) throw new PluginKitError("REFERENCE_PATH_ESCAPE", `file_path '${filePath}' escapes references_dir`);
  const stat = statSync(resolved);
  if (!stat.isFile()) throw new PluginKitError("REFERENCE_NOT_FOUND", `file_path '${filePath}' is not a file`);
  if (stat.size > REFERENCE_FILE_MAX_BYTES) throw new PluginKitError("REFERENCE_NOT_FOUND", `file_path '${filePath}' is ${stat.size} bytes; the limit is ${REFERENCE_FILE_MAX_BYTES}`);
  return resolved;
}

/** Default reference tool name: skill name lowercased, chars outside `[a-z0-9_]` to `_`, `skill_` prefix when needed, `_read_reference` suffix. @throws PluginKitError `INPUT_TYPE_INVALID` when `skill` is not a string. */
export function referenceToolName(skill: string): string {
  let base = expectString("referenceToolName", "skill", skill).toLowerCase().replace(/[^a-z0-9_]/g, "_");
  if (base === "" || !/^[a-z]/.test(base)) base = `skill_${base}`;
  return `${base}_read_reference`;
}

/**
 * A read-only tool (`readOnlyHint: true`) that lists (no `file_path`) or
 * reads (`file_path`) files under the skill's `references/` (Python kit plugin_reference_tool).
 * List result `{references_dir, files}` (sorted POSIX paths, at most 1000);
 * read result `{file_path, content}` (UTF-8). Refusals (see
 * {@link resolveReferenceFile}) answer `isError` `<tool> failed: <message>`.
 * Not TOCTOU-safe against a concurrent writer of the package directory.
 *
 * @throws PluginKitError `SKILL_REFERENCES_INVALID` when the skill has no `references/` directory,
 *   `INPUT_TYPE_INVALID` when `skill` is not a skill object, `options` not an object, a key of it
 *   other than `name` and `description` (named with the nearest), or one of them not a string.
 */
export function referenceTool(skill: PluginSkill, options: { name?: string; description?: string } = {}): ToolDefinition {
  if (!isRecord(skill) || typeof skill.name !== "string" || typeof skill.relativeDir !== "string") throw inputTypeError("referenceTool", "skill", "a skill from pluginSkill()", skill);
  if (!isRecord(options)) throw inputTypeError("referenceTool", "options", "an object", options);
  requireKnownOptions("referenceTool", options, ["name", "description"]);
  requireOptionTypes("referenceTool", options, { name: "string", description: "string" });
  const referencesDir = skill.referencesDir;
  if (!referencesDir) throw new PluginKitError("SKILL_REFERENCES_INVALID", `skill '${skill.name}' has no references/ directory`);
  const shownDir = `${skill.relativeDir}/references`;
  return tool({
    name: options.name ?? referenceToolName(skill.name),
    description:
      options.description ??
      `List or read companion reference files for the '${skill.name}' skill. Omit file_path to list the files; pass one of the listed paths to read it.`,
    params: { file_path: strArg("Relative path within the skill's references directory, as listed. Omit to list the files.") },
    readOnly: true,
    validateRequired: false,
    handler: (args) => {
      const filePath = args["file_path"];
      if (filePath === undefined) return { references_dir: shownDir, files: listFiles(referencesDir) };
      const resolved = resolveReferenceFile(referencesDir, filePath as string);
      return { file_path: filePath, content: readFileSync(resolved, "utf8") };
    },
  });
}
