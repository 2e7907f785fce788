/**
 * The gate-tool check reads a gate's command line as bash does
 * (release/shell-words.ts): quotes, escapes, redirections and their targets,
 * assignments and separators. The programs it looks up on PATH
 * (`programWords`) are exactly the commands' first words; nothing inside a
 * quoted string, a redirection target or a substitution ever becomes one, and
 * where the reader is unsure it yields fewer, never more.
 */
import { execFileSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { programWords } from "../../release/gate-tools.js";
import { commandWords, simpleCommands } from "../../release/shell-words.js";

/** `s` in single quotes (a `'` as `'\''`). */
const singleQuoted = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;
/** `s` in double quotes (`\`, `"`, `$`, backquote escaped). */
const doubleQuoted = (s: string): string => `"${s.replace(/[\\"$`]/g, "\\$&")}"`;
/** `s` with every character but letters and digits backslash-escaped (no newline: `\`+newline is a line continuation). */
const escaped = (s: string): string => s.replace(/[^A-Za-z0-9\n]/g, "\\$&");

/** Strings heavy in shell syntax, and any text (no NUL: bash cannot pass one). */
const shellish = fc.string({ unit: fc.constantFrom(...";&|<>()$`\"'\\ \t\n#*?[]{}=!~ax12-/".split("")), maxLength: 24 });
const anyText = fc.oneof(shellish, fc.string({ unit: "binary", maxLength: 16 })).map((s) => s.replace(/\0/g, ""));

/** A program name no builtin or reserved word shares. */
const program = fc.stringMatching(/^hpk-[a-z0-9]{1,6}$/);
/** An argument as written and its text after quote removal. */
const argument = fc.oneof(
  fc.stringMatching(/^[a-z0-9._/-]{1,8}$/).map((s) => ({ written: s, text: s })),
  anyText.map((s) => ({ written: singleQuoted(s), text: s })),
  anyText.map((s) => ({ written: doubleQuoted(s), text: s })),
  shellish.filter((s) => !s.includes("\n")).map((s) => ({ written: s.length === 0 ? "''" : escaped(s), text: s })),
);
const redirection = fc.constantFrom("2>&1", ">&2", "&> out.log", ">| o", "> out", ">> out", "2>/dev/null", "< /dev/null", "<<< 'x; y'", "1>&-", "{fd}>&2", "3<> f", "&>> log", "2> 'a b'", ">'a;b'");
const assignment = fc.constantFrom("FOO=1", "BAR='a b; c'", 'X="$HOME/x"', "Y=$(hpk-sub | hpk-sub2)", "Z=", "A+=x");
/** Separators; a space after `;` (`;&` would be case's operator). */
const separator = fc.constantFrom(" && ", " || ", " ; ", " | ", " |& ", " & ", "\n", "; ", "&& ", "|");

interface Generated {
  line: string;
  words: string[][];
}

/** One simple command: assignments, an optional leading redirection, the program, arguments, redirections. */
const command: fc.Arbitrary<Generated> = fc
  .record({
    assignments: fc.array(assignment, { maxLength: 2 }),
    lead: fc.option(redirection, { nil: undefined }),
    program,
    args: fc.array(argument, { maxLength: 3 }),
    redirections: fc.array(redirection, { maxLength: 2 }),
  })
  .map((c) => ({
    line: [...c.assignments, ...(c.lead === undefined ? [] : [c.lead]), c.program, ...c.args.map((a) => a.written), ...c.redirections].join(" "),
    words: [[c.program, ...c.args.map((a) => a.text)]],
  }));

/** Commands joined by separators, some grouped in a subshell or braces. */
const commandLine: fc.Arbitrary<Generated> = fc
  .tuple(fc.array(fc.tuple(command, fc.constantFrom("none", "subshell", "braces")), { minLength: 1, maxLength: 4 }), fc.array(separator, { minLength: 4, maxLength: 4 }))
  .map(([parts, seps]) => ({
    line: parts.map(([c, group], i) => `${i > 0 ? seps[i - 1] : ""}${group === "subshell" ? `(${c.line})` : group === "braces" ? `{ ${c.line}; }` : c.line}`).join(""),
    words: parts.flatMap(([c]) => c.words),
  }));

describe("shell words: properties", () => {
  it("a generated command line yields exactly its commands' words (quote removal, redirections and assignments dropped)", () => {
    fc.assert(
      fc.property(commandLine, ({ line, words }) => {
        expect(commandWords(line)).toEqual(words);
        expect(programWords(line)).toEqual(words.map((w) => w[0]));
      }),
      { numRuns: 400 },
    );
  });

  it("the generated lines are valid bash (bash -n), so the expectations are bash's own reading", async () => {
    const lines = fc.sample(commandLine, { numRuns: 60, seed: 7 }).map((g) => g.line);
    const dir = await mkdtemp(join(tmpdir(), "hpk-shell-words-"));
    try {
      for (const [i, line] of lines.entries()) await writeFile(join(dir, `${i}.sh`), line);
      // One bash checks every file: prints the index of any that does not parse.
      const out = execFileSync("bash", ["--norc", "--noprofile", "-c", `for f in "$1"/*.sh; do bash -n "$f" 2>/dev/null || echo "$f"; done`, "_", dir], { encoding: "utf8" });
      expect(out).toBe("");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("a quoted or escaped string never yields a program word from its contents", () => {
    fc.assert(
      fc.property(anyText, fc.constantFrom(singleQuoted, doubleQuoted), (text, quote) => {
        expect(programWords(`node ${quote(text)}`)).toEqual(["node"]);
        expect(programWords(`echo ${quote(text)} 2>&1 | node -e 1 ${quote(text)}`)).toEqual(["node"]);
        expect(programWords(quote(`hpk-x ${text}`))).toEqual([]);
      }),
      { numRuns: 400 },
    );
  });

  it("any input: no exception, and every program word is a name written in the line", () => {
    fc.assert(
      fc.property(fc.oneof(anyText, commandLine.map((g) => g.line), fc.tuple(commandLine, anyText).map(([g, t]) => g.line + t)), (line) => {
        for (const name of programWords(line)) {
          expect(name).toMatch(/^[A-Za-z0-9_][A-Za-z0-9_.+@%:,-]*$/);
          expect(line.includes(name) || line.replace(/\\\n/g, "").includes(name), name).toBe(true);
        }
      }),
      { numRuns: 600 },
    );
  });

  it("after a construct it does not follow (case, a function definition) it lists nothing further", () => {
    fc.assert(
      fc.property(commandLine, commandLine, fc.constantFrom("case $x in a) ", "f() { ", "function g { ", "coproc "), (before, after, construct) => {
        expect(programWords(`${before.line}\n${construct}${after.line}`)).toEqual(before.words.map((w) => w[0]));
      }),
      { numRuns: 200 },
    );
  });
});

describe("shell words: examples", () => {
  it.each<[string, string[][]]>([
    ["echo hi 2>&1", [["echo", "hi"]]],
    ["echo hi >&2", [["echo", "hi"]]],
    ["cmd &> out.log", [["cmd"]]],
    ["cmd >| o", [["cmd"]]],
    ['echo "tests; coverage report"', [["echo", "tests; coverage report"]]],
    ["node -e 1 2>&1", [["node", "-e", "1"]]],
    ["npm test 2>&1 | tee log", [["npm", "test"], ["tee", "log"]]],
    ["a2>x", [["a2"]]],
    ["CI=1 npm test && npm run doctor -- --no-call; just build | tee x", [["npm", "test"], ["npm", "run", "doctor", "--", "--no-call"], ["just", "build"], ["tee", "x"]]],
    ["(cd x && npm test) > log 2>/dev/null", [["cd", "x"], ["npm", "test"]]],
    ["{ a; b; } >o", [["a"], ["b"]]],
    ["cat <<EOF\nfoo bar; baz\nEOF\nnext", [["cat"], ["next"]]],
    ["cat <<-'EOF' && m\n\tfoo\n\tEOF\nnext", [["cat"], ["m"], ["next"]]],
    ["cat <<< 'w; z' && m", [["cat"], ["m"]]],
    ["echo a#b # c; d", [["echo", "a#b"]]],
    ["a\\\nb c", [["ab", "c"]]],
    ["a \\\n b", [["a", "b"]]],
    ["diff <(a x) <(b)", [["diff", "<(a x)", "<(b)"]]],
    ["x=(1 2) y", [["y"]]],
    ["time -p npm t", [["npm", "t"]]],
    ["! a |& b", [["a"], ["b"]]],
    ["echo $'a;b' | c", [["echo", "a;b"], ["c"]]],
    ["echo $\"a;b\" | c", [["echo", "a;b"], ["c"]]],
    ["echo \"$(a; b)\" `c; d` ${e:-f;g} $((1+2)) | h", [["echo", "$(a; b)", "`c; d`", "${e:-f;g}", "$((1+2))"], ["h"]]],
  ])("%j", (line, words) => {
    expect(commandWords(line)).toEqual(words);
  });

  it.each<[string, string[]]>([
    ["if hpk-cond; then hpk-a; else hpk-b; fi; hpk-after", ["hpk-after"]],
    ["while hpk-cond; do hpk-a; done && hpk-after", ["hpk-after"]],
    ["for i in a b; do hpk-a; done; hpk-after", ["hpk-after"]],
    ["[[ a < b && -f c ]] && hpk-after", ["hpk-after"]],
    ["((i++)) && hpk-after", ["hpk-after"]],
    ["hpk-before; case $x in a) hpk-a;; esac; hpk-after", ["hpk-before"]],
    ["hpk-before; f() { hpk-a; }; f", ["hpk-before"]],
    ["hpk-before; echo 'unterminated; hpk-after", ["hpk-before"]],
    ["$CMD x; \"hpk-quoted\" y; hpk\\-escaped; ./bin/tool; ~/tool; hpk-*", []],
    ["exec 3>&1 4>&- && cd x && echo y && printf z && true", []],
  ])("programs of %j", (line, programs) => {
    expect(programWords(line)).toEqual(programs);
  });

  it("marks words that are not plain text", () => {
    expect(simpleCommands(`npm run "$X" 'y' z`)[0]).toEqual([
      { text: "npm", plain: true },
      { text: "run", plain: true },
      { text: "$X", plain: false },
      { text: "y", plain: false },
      { text: "z", plain: true },
    ]);
  });
});
