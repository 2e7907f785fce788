/**
 * Before a gate runs: every program its declared command starts must be on
 * the gate's hermetic `PATH`, and every npm script it runs must exist (with
 * the programs of that script, its `pre` script and its `post` script). A
 * gate that cannot run fails here with `RELEASE_GATE_TOOL_MISSING`, naming
 * the tool and the fix, instead of "passing" with a tool from outside the
 * checkout or failing later with a bare exit 127 (docs/release-build.md,
 * "Gate commands").
 *
 * The check reads the command line as bash does (`shell-words.ts`: quotes,
 * escapes, redirections and their targets, assignments, `&&`, `||`, `;`,
 * `|`, `&`, subshells). It is an early message, not a boundary: the gate's
 * environment (`command-env.ts`, its PATH) is what keeps tools from outside
 * the checkout away, so a word it cannot judge statically (quoted, expanded,
 * a path, a conditional branch) is left to the shell, never refused.
 */
import { accessSync, constants as fsConstants, readFileSync, statSync } from "node:fs";
import { delimiter, join } from "node:path";
import { ReleaseStepError } from "./errors.js";
import { simpleCommands, type ShellWord } from "./shell-words.js";

/** Shell builtins and keywords that need no program on PATH. */
const SHELL_WORDS = new Set([
  "!", "[", "[[", ".", ":", "alias", "bg", "break", "builtin", "case", "cd", "command", "continue", "declare", "do", "done", "echo", "elif", "else",
  "esac", "eval", "exec", "exit", "export", "false", "fi", "for", "function", "if", "local", "printf", "pwd", "read", "readonly", "return", "set",
  "shift", "source", "test", "then", "time", "trap", "true", "type", "ulimit", "umask", "unset", "until", "wait", "while", "{", "}",
  "]]", "caller", "coproc", "dirs", "disown", "enable", "fc", "fg", "getopts", "hash", "help", "history", "in", "jobs", "let", "logout", "mapfile",
  "popd", "pushd", "readarray", "select", "shopt", "suspend", "times", "typeset",
]);

/** A program name looked up on PATH: plain (unquoted, unexpanded) and nothing but name characters. */
function isProgramName(word: ShellWord | undefined): word is ShellWord {
  return word !== undefined && word.plain && /^[A-Za-z0-9_][A-Za-z0-9_.+@%:,-]*$/.test(word.text) && !SHELL_WORDS.has(word.text);
}

/** The programs {@link requireGateTools} looks up on PATH for `line` itself (npm scripts not followed), in order. */
export function programWords(line: string): string[] {
  return simpleCommands(line).flatMap((words) => (isProgramName(words[0]) ? [words[0].text] : []));
}

/** The first executable regular file `program` in the directories `entries` (empty entries skipped), as found there (not resolved through links). */
export function firstOnPath(program: string, entries: readonly string[]): string | undefined {
  for (const dir of entries) {
    if (dir === "") continue;
    const candidate = join(dir, program);
    try {
      if (statSync(candidate).isFile()) {
        accessSync(candidate, fsConstants.X_OK);
        return candidate;
      }
    } catch {
      // not here
    }
  }
  return undefined;
}

function packageScripts(dir: string): Record<string, unknown> {
  try {
    const scripts = (JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as Record<string, unknown>)["scripts"];
    return scripts !== null && typeof scripts === "object" ? (scripts as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** The npm script a command runs (`npm test`, `npm run x`, `npm run-script x`, `npm start`), if any and statically known. */
function npmScriptOf(words: readonly ShellWord[]): string | undefined {
  if (words[0]?.text !== "npm") return undefined;
  const args = words.slice(1).filter((w) => !w.text.startsWith("-"));
  const verb = args[0];
  if (verb === undefined || !verb.plain) return undefined;
  if (["test", "t", "tst", "start", "stop", "restart"].includes(verb.text)) return verb.text.startsWith("t") ? "test" : verb.text;
  if (["run", "run-script", "rum", "urn"].includes(verb.text)) {
    const script = args[1];
    // `npm run "$X"`, `npm run $(…)`: left to npm.
    return script !== undefined && !/[$`]/.test(script.text) ? script.text : undefined;
  }
  return undefined;
}

/** The package's own script `name` (never an inherited `constructor` or `__proto__`), if it is a string. */
function scriptText(scripts: Record<string, unknown>, name: string): string | undefined {
  const text = Object.hasOwn(scripts, name) ? scripts[name] : undefined;
  return typeof text === "string" ? text : undefined;
}

interface Missing {
  tool: string;
  via: string;
}

function findMissing(line: string, via: string, dir: string, pathValue: string, scripts: Record<string, unknown>, depth: number, missing: Missing[]): void {
  for (const words of simpleCommands(line)) {
    const first = words[0];
    if (!isProgramName(first)) continue;
    const program = first.text;
    if (firstOnPath(program, pathValue.split(delimiter)) === undefined) {
      missing.push({ tool: program, via });
      continue;
    }
    const script = npmScriptOf(words);
    if (script === undefined || depth > 4) continue;
    if (scriptText(scripts, script) === undefined) {
      missing.push({ tool: `npm script "${script}"`, via });
      continue;
    }
    for (const name of [`pre${script}`, script, `post${script}`]) {
      const text = scriptText(scripts, name);
      if (text !== undefined) findMissing(text, `npm script "${name}"`, dir, pathValue, scripts, depth + 1, missing);
    }
  }
}

/**
 * Require every program `command` (and the npm scripts it runs) starts to be
 * on `env.PATH`, and every npm script it names to exist in `<dir>/package.json`.
 * @throws ReleaseStepError `RELEASE_GATE_TOOL_MISSING` naming the missing tool, where the gate reaches it, and the fix.
 */
export async function requireGateTools(gate: string, command: string, dir: string, env: NodeJS.ProcessEnv): Promise<void> {
  const missing: Missing[] = [];
  findMissing(command, `hermesPluginKit.gates.${gate}`, dir, env["PATH"] ?? "", packageScripts(dir), 0, missing);
  const first = missing[0];
  if (first === undefined) return;
  const script = first.tool.startsWith("npm script");
  throw new ReleaseStepError(
    "RELEASE_GATE_TOOL_MISSING",
    `gate ${gate} cannot run ${JSON.stringify(command)}: ${first.tool} ${script ? "is not defined in package.json" : "is not on its PATH"} (needed by ${first.via}; the gate's PATH is the checkout's node_modules/.bin, then the system PATH without any other node_modules/.bin). ` +
      (script
        ? `Add the script to package.json or change hermesPluginKit.gates.${gate}.`
        : `Declare ${first.tool} as a devDependency so the install command (hermesPluginKit.install, default npm ci) provides it, install it on the system, or change hermesPluginKit.gates.${gate}.`),
  );
}
