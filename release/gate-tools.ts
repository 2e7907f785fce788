/**
 * Before a gate runs: every program its declared command starts must be on
 * the gate's hermetic `PATH`, and every npm script it runs must exist (with
 * the programs of that script, its `pre` script and its `post` script). A
 * gate that cannot run fails here with `RELEASE_GATE_TOOL_MISSING`, naming
 * the tool and the fix, instead of "passing" with a tool from outside the
 * checkout or failing later with a bare exit 127 (docs/release-build.md,
 * "Gate commands").
 *
 * The check reads the command line the way a POSIX shell splits simple
 * commands (`&&`, `||`, `;`, `|`, `&`, newlines); words it cannot judge
 * statically (a variable, a subshell, a path) are left to the shell.
 */
import { accessSync, constants as fsConstants, readFileSync, statSync } from "node:fs";
import { delimiter, join } from "node:path";
import { ReleaseStepError } from "./errors.js";

/** Shell builtins and keywords that need no program on PATH. */
const SHELL_WORDS = new Set([
  "!", "[", "[[", ".", ":", "alias", "bg", "break", "builtin", "case", "cd", "command", "continue", "declare", "do", "done", "echo", "elif", "else",
  "esac", "eval", "exec", "exit", "export", "false", "fi", "for", "function", "if", "local", "printf", "pwd", "read", "readonly", "return", "set",
  "shift", "source", "test", "then", "time", "trap", "true", "type", "ulimit", "umask", "unset", "until", "wait", "while", "{", "}",
]);

/** The first word of each simple command of a shell command line (env assignments skipped). */
export function commandWords(line: string): string[][] {
  const commands: string[][] = [];
  for (const part of line.split(/&&|\|\||[;|&\n]/)) {
    const words = part.trim().split(/\s+/).filter((w) => w.length > 0);
    while (words.length > 0 && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[0] as string)) words.shift();
    if (words.length > 0) commands.push(words);
  }
  return commands;
}

function onPath(program: string, pathValue: string): string | undefined {
  for (const dir of pathValue.split(delimiter)) {
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

function packageScripts(dir: string): Record<string, string> {
  try {
    const scripts = (JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as Record<string, unknown>)["scripts"];
    return scripts !== null && typeof scripts === "object" ? (scripts as Record<string, string>) : {};
  } catch {
    return {};
  }
}

/** The npm script a command runs (`npm test`, `npm run x`, `npm run-script x`, `npm start`), if any. */
function npmScriptOf(words: string[]): string | undefined {
  if (words[0] !== "npm") return undefined;
  const args = words.slice(1).filter((w) => !w.startsWith("-"));
  const verb = args[0];
  if (verb === "test" || verb === "t" || verb === "tst" || verb === "start" || verb === "stop" || verb === "restart") return verb.startsWith("t") ? "test" : verb;
  if (verb === "run" || verb === "run-script" || verb === "rum" || verb === "urn") return args[1];
  return undefined;
}

interface Missing {
  tool: string;
  via: string;
}

function findMissing(line: string, via: string, dir: string, pathValue: string, scripts: Record<string, string>, depth: number, missing: Missing[]): void {
  for (const words of commandWords(line)) {
    const program = words[0] as string;
    if (SHELL_WORDS.has(program) || /[$`(/\\"']/.test(program)) continue;
    if (onPath(program, pathValue) === undefined) {
      missing.push({ tool: program, via });
      continue;
    }
    const script = npmScriptOf(words);
    if (script === undefined || depth > 4) continue;
    const body = scripts[script];
    if (body === undefined) {
      missing.push({ tool: `npm script "${script}"`, via });
      continue;
    }
    for (const name of [`pre${script}`, script, `post${script}`]) {
      const text = scripts[name];
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
