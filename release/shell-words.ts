/**
 * A gate's command line read as bash reads it, far enough to find the
 * simple commands it runs and their words (POSIX.1-2017 XCU 2.3 "Token
 * Recognition", 2.9 "Shell Commands"; bash's `|&`, `&>`, `>|`, `<<<`, `<(…)`).
 *
 * Quotes (`'…'`, `"…"`, `$'…'`), backslash escapes and line continuations are
 * honoured; command and parameter substitutions, arithmetic and process
 * substitutions are opaque (their word is not plain); `#` comments and
 * here-document bodies are skipped; redirections (`n>`, `n>&m`, `>&`, `&>`,
 * `&>>`, `>|`, `<`, `<>`, `<<`, `<<-`, `<<<`, `{var}>`) and their targets are
 * dropped; leading assignments (`FOO=1 cmd`) are dropped; `&&`, `||`, `;`,
 * `|`, `|&`, `&`, newlines and subshell parentheses separate commands.
 *
 * The reader only serves an early "X is not on its PATH" message
 * (`gate-tools.ts`); the gate's hermetic PATH is what decides. So wherever it
 * is unsure it yields less, never more: commands inside `if`/`while`/`until`/
 * `for`/`select` are conditional and not listed, and at `case`, `function`,
 * `coproc`, a function definition `f()` or a syntax it cannot follow (an
 * unterminated quote) it lists nothing further.
 */

/** One word of a simple command after quote removal. */
export interface ShellWord {
  /** The word after quote removal (substitutions kept as written). */
  text: string;
  /** No quoting, escape or expansion of any kind: `text` is exactly what the shell runs. */
  plain: boolean;
}

type Token = { kind: "word"; word: ShellWord; raw: string } | { kind: "op"; op: string } | { kind: "redirect"; op: string } | { kind: "stop" };

/** Operators, longest first within each leading character. */
const OPERATORS = ["&>>", "&&", "&>", "&", "||", "|&", "|", ";;&", ";;", ";&", ";", "<<<", "<<-", "<<", "<&", "<>", "<", ">>", ">&", ">|", ">", "(", ")"];
const REDIRECTS = new Set(["&>>", "&>", "<<<", "<<-", "<<", "<&", "<>", "<", ">>", ">&", ">|", ">"]);
const SEPARATORS = new Set(["&&", "||", "|", "|&", ";", "&", "\n"]);

/** Index of the `close` bracket matching the `openChar` at `open`, over quotes, escapes and nesting; -1 when unclosed. */
function closingBracket(line: string, open: number, openChar: "(" | "{", close: ")" | "}"): number {
  let depth = 0;
  for (let i = open; i < line.length; i += 1) {
    const c = line[i];
    if (c === "\\") i += 1;
    else if (c === "'") {
      i = line.indexOf("'", i + 1);
      if (i < 0) return -1;
    } else if (c === '"' || c === "`") {
      i = closingQuote(line, i);
      if (i < 0) return -1;
    } else if (c === openChar) depth += 1;
    else if (c === close && --depth === 0) return i;
  }
  return -1;
}

/** Index of the `)` closing the `(` at `open`; -1 when unclosed. */
function closingParen(line: string, open: number): number {
  return closingBracket(line, open, "(", ")");
}

/** Index of the `"` or backquote closing the one at `open` (backslash escapes, `$(…)` inside); -1 when unclosed. */
function closingQuote(line: string, open: number): number {
  const quote = line[open];
  for (let i = open + 1; i < line.length; i += 1) {
    const c = line[i];
    if (c === "\\") i += 1;
    else if (c === quote) return i;
    else if (quote === '"' && c === "$" && line[i + 1] === "(") {
      i = closingParen(line, i + 1);
      if (i < 0) return -1;
    }
  }
  return -1;
}

/** Index of the `}` closing the `${` whose `{` is at `open`; -1 when unclosed. */
function closingBrace(line: string, open: number): number {
  return closingBracket(line, open, "{", "}");
}

/** Index of the `'` closing ANSI-C quoting `$'…'` (backslash escapes inside); -1 when unclosed. */
function closingAnsiQuote(line: string, open: number): number {
  for (let i = open + 1; i < line.length; i += 1) {
    if (line[i] === "\\") i += 1;
    else if (line[i] === "'") return i;
  }
  return -1;
}

/** The end (exclusive) of an expansion starting with `$` at `at`, or -1 when unclosed. */
function expansionEnd(line: string, at: number): number {
  const next = line[at + 1];
  if (next === "(") {
    const end = closingParen(line, at + 1);
    return end < 0 ? -1 : end + 1;
  }
  if (next === "{") {
    const end = closingBrace(line, at + 1);
    return end < 0 ? -1 : end + 1;
  }
  const name = /^(?:[A-Za-z_][A-Za-z0-9_]*|[0-9#?@*!$-])/.exec(line.slice(at + 1));
  return name === null ? at + 1 : at + 1 + name[0].length;
}

/** A quoted, escaped or expanded part of a word: its text after quote removal, as written, and where it ends (exclusive). */
interface WordPart {
  text: string;
  raw: string;
  end: number;
  quoted: boolean;
  expanded: boolean;
}

const ASSIGNMENT_START = /^[A-Za-z_][A-Za-z0-9_]*\+?=$/;

/**
 * The part of a word starting at `i` when it is not a plain character: an
 * escape, a quoted string, an expansion, a process substitution, an
 * arithmetic command or an array assignment's value (`word` is the word so far).
 * @returns undefined for a plain character; null when the part is never closed (bash refuses the line).
 */
function wordPart(line: string, i: number, word: string | undefined): WordPart | null | undefined {
  const c = line[i];
  const next = line[i + 1];
  const opaque = (end: number): WordPart | null => (end < 0 ? null : { text: line.slice(i, end + 1), raw: line.slice(i, end + 1), end: end + 1, quoted: false, expanded: true });
  if (c === "\\") {
    if (next === undefined) return undefined;
    return next === "\n" ? { text: "", raw: "", end: i + 2, quoted: false, expanded: false } : { text: next, raw: line.slice(i, i + 2), end: i + 2, quoted: true, expanded: false };
  }
  if (c === "'") {
    const end = line.indexOf("'", i + 1);
    return end < 0 ? null : { text: line.slice(i + 1, end), raw: line.slice(i, end + 1), end: end + 1, quoted: true, expanded: false };
  }
  if (c === '"' || (c === "$" && next === '"')) {
    const open = c === "$" ? i + 1 : i; // $"…" (locale translation) reads as "…"
    const end = closingQuote(line, open);
    if (end < 0) return null;
    const body = line.slice(open + 1, end);
    return { text: body.replace(/\\([$`"\\\n])/g, "$1"), raw: line.slice(i, end + 1), end: end + 1, quoted: true, expanded: /[$`]/.test(body) };
  }
  if (c === "`") return opaque(closingQuote(line, i));
  if (c === "$" && next === "'") {
    const end = closingAnsiQuote(line, i + 1);
    return end < 0 ? null : { text: line.slice(i + 2, end), raw: line.slice(i, end + 1), end: end + 1, quoted: true, expanded: false };
  }
  if (c === "$") {
    const end = expansionEnd(line, i);
    if (end < 0) return null;
    return end === i + 1 ? undefined : { text: line.slice(i, end), raw: line.slice(i, end), end, quoted: false, expanded: true };
  }
  if ((c === "<" || c === ">") && next === "(") return opaque(closingParen(line, i + 1)); // <(…) >(…)
  if (c === "(" && ((word === undefined && next === "(") || (word !== undefined && ASSIGNMENT_START.test(word)))) return opaque(closingParen(line, i)); // ((…)), a=(…)
  return undefined;
}

/** Skip the here-document bodies that follow a line (`i`: the start of the next line), each up to its delimiter line. */
function skipHeredocs(line: string, i: number, heredocs: readonly { delimiter: string; stripTabs: boolean }[]): number {
  for (const doc of heredocs) {
    while (i < line.length) {
      const eol = line.indexOf("\n", i);
      const bodyLine = line.slice(i, eol < 0 ? line.length : eol);
      i = eol < 0 ? line.length : eol + 1;
      if ((doc.stripTabs ? bodyLine.replace(/^\t+/, "") : bodyLine) === doc.delimiter) break;
    }
  }
  return i;
}

/** Split `line` into words and operators; a `stop` token ends it where bash would refuse the line. */
function lex(line: string): Token[] {
  const tokens: Token[] = [];
  let heredocs: { delimiter: string; stripTabs: boolean }[] = [];
  let heredocNext: boolean | undefined; // the next word is a here-document delimiter (`<<-`: true)
  let word: { text: string; raw: string; quoted: boolean; expanded: boolean } | undefined;
  const finish = (): void => {
    if (word === undefined) return;
    if (heredocNext !== undefined) heredocs.push({ delimiter: word.text, stripTabs: heredocNext });
    heredocNext = undefined;
    tokens.push({ kind: "word", word: { text: word.text, plain: !word.quoted && !word.expanded }, raw: word.raw });
    word = undefined;
  };
  let i = 0;
  while (i < line.length) {
    const c = line[i] as string;
    const part = wordPart(line, i, word?.raw);
    if (part === null) {
      tokens.push({ kind: "stop" });
      return tokens;
    }
    if (part !== undefined) {
      i = part.end;
      if (part.raw === "") continue; // a line continuation: no word of its own
      word ??= { text: "", raw: "", quoted: false, expanded: false };
      word.text += part.text;
      word.raw += part.raw;
      word.quoted ||= part.quoted;
      word.expanded ||= part.expanded;
    } else if (c === " " || c === "\t") {
      finish();
      i += 1;
    } else if (c === "#" && word === undefined) {
      while (i < line.length && line[i] !== "\n") i += 1; // a comment
    } else if (c === "\n") {
      finish();
      tokens.push({ kind: "op", op: "\n" });
      i = skipHeredocs(line, i + 1, heredocs);
      heredocs = [];
    } else if ("<>&|;()".includes(c)) {
      const op = OPERATORS.find((o) => line.startsWith(o, i)) as string;
      const descriptor = word !== undefined && !word.quoted && !word.expanded && /^(?:[0-9]+|\{[A-Za-z_][A-Za-z0-9_]*\})$/.test(word.raw);
      // An all-digit word (`2>`) or `{var}` right before `<`/`>` is the redirected descriptor, not a word.
      if (REDIRECTS.has(op) && (op[0] === "<" || op[0] === ">") && descriptor) word = undefined;
      else finish();
      tokens.push({ kind: REDIRECTS.has(op) ? "redirect" : "op", op });
      if (op === "<<" || op === "<<-") heredocNext = op === "<<-";
      i += op.length;
    } else {
      word ??= { text: "", raw: "", quoted: false, expanded: false };
      word.text += c;
      word.raw += c;
      i += 1;
    }
  }
  finish();
  return tokens;
}

/** Reserved words after which the next word is again in command position. */
const PREFIX_WORDS = new Set(["!", "{", "then", "else", "elif", "do", "time"]);
/** Reserved words that open a conditional or looping compound command. */
const OPENING_WORDS = new Set(["if", "while", "until", "for", "select"]);
/** Reserved words that close a compound command; only redirections may follow before a separator. */
const CLOSING_WORDS = new Set(["fi", "done", "}", "]]"]);
/** Constructs this reader does not follow: nothing after them is listed. */
const UNFOLLOWED_WORDS = new Set(["case", "function", "coproc", "esac"]);

/**
 * The simple commands of `line` that run unconditionally enough to judge
 * (see the module comment), each as its words: the program first, then its
 * arguments; assignments before the program and redirections dropped.
 */
export function simpleCommands(line: string): ShellWord[][] {
  const commands: ShellWord[][] = [];
  const tokens = lex(line);
  let current: ShellWord[] = [];
  let depth = 0; // inside if/while/until/for/select
  let skipToSeparator = false; // for/select header; words after a closing word
  let inTest = false; // inside [[ … ]]
  let target = false; // the next word is a redirection's target
  let afterTime = false;
  const end = (): void => {
    if (current.length > 0 && depth === 0) commands.push(current);
    current = [];
    skipToSeparator = afterTime = target = false;
  };
  for (let k = 0; k < tokens.length; k += 1) {
    const token = tokens[k] as Token;
    if (token.kind === "stop") {
      current = []; // bash refuses the whole line: nothing is judged from a command cut short
      break;
    }
    if (inTest) {
      if (token.kind === "word" && token.word.plain && token.word.text === "]]") {
        inTest = false;
        skipToSeparator = true;
      }
      continue;
    }
    if (token.kind === "redirect") {
      target = true;
      continue;
    }
    if (token.kind === "op") {
      if (SEPARATORS.has(token.op)) {
        end();
        continue;
      }
      if (token.op === "(") {
        const next = tokens[k + 1];
        // `f()` (a function definition: its name may be called later) or a syntax error: nothing further.
        if (current.length > 0 || skipToSeparator || (next?.kind === "op" && next.op === ")")) {
          current = [];
          break;
        }
        continue; // subshell: its commands are listed
      }
      if (token.op === ")") {
        end();
        skipToSeparator = true;
        continue;
      }
      current = []; // ;; ;& ;;& belong to case
      break;
    }
    const { word } = token;
    if (target) {
      target = false;
      continue;
    }
    if (skipToSeparator) continue;
    if (current.length > 0) {
      current.push(word);
      continue;
    }
    // Command position.
    if (/^[A-Za-z_][A-Za-z0-9_]*\+?=/.test(token.raw)) continue; // FOO=1 cmd, FOO="a b" cmd, FOO=$(x) cmd
    if (afterTime && word.plain && word.text.startsWith("-")) continue; // time -p
    afterTime = false;
    if (!word.plain) {
      current.push(word);
      continue;
    }
    const w = word.text;
    if (UNFOLLOWED_WORDS.has(w)) break; // current is empty here
    if (PREFIX_WORDS.has(w)) {
      afterTime = w === "time";
      continue;
    }
    if (OPENING_WORDS.has(w)) {
      depth += 1;
      if (w === "for" || w === "select") skipToSeparator = true;
      continue;
    }
    if (CLOSING_WORDS.has(w)) {
      if (w === "fi" || w === "done") depth = Math.max(0, depth - 1);
      skipToSeparator = true;
      continue;
    }
    if (w === "[[") {
      inTest = true;
      continue;
    }
    current.push(word);
  }
  end();
  return commands;
}

/** The words of each simple command of `line` (see {@link simpleCommands}), as text. */
export function commandWords(line: string): string[][] {
  return simpleCommands(line).map((words) => words.map((w) => w.text));
}
