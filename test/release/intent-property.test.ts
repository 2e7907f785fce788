import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { analyzeCommits } from "@semantic-release/commit-analyzer";
import { classifyCommitMessage, COMMIT_PARSER_OPTIONS, strongerBump } from "../../release/history.js";
import { prependChangelog } from "../../release/materialize.js";

const TYPES = ["build", "chore", "ci", "docs", "feat", "fix", "perf", "refactor", "style", "test"];
const word = fc.stringMatching(/^[a-z][a-z0-9]{0,8}$/);
const subject = fc.array(word, { minLength: 1, maxLength: 6 }).map((w) => w.join(" "));
const scope = fc.option(fc.stringMatching(/^[a-z][a-z0-9-]{0,8}$/), { nil: undefined });
/** Body lines that are prose: never a breaking-looking marker at line start (one later in the line is prose). */
const proseLine = fc.oneof(
  subject.filter((s) => !/^breaking/.test(s)),
  subject.map((s) => `see the breaking change ${s}`),
  subject.map((s) => `a Breaking Change: ${s}`),
  fc.constant("---------"),
  word.map((w) => `Co-authored-by: ${w} <${w}@example.invalid>`),
  subject.map((s) => `* ${s}`),
);
const footer = fc.tuple(fc.constantFrom("BREAKING CHANGE", "BREAKING-CHANGE"), subject).map(([k, s]) => `${k}: ${s}`);

const message = fc.record({
  type: fc.constantFrom(...TYPES),
  scope,
  bang: fc.boolean(),
  subject,
  body: fc.array(proseLine, { maxLength: 6 }),
  breakingFooter: fc.option(footer, { nil: undefined }),
});

function render(m: { type: string; scope: string | undefined; bang: boolean; subject: string; body: string[]; breakingFooter: string | undefined }): string {
  const header = `${m.type}${m.scope !== undefined ? `(${m.scope})` : ""}${m.bang ? "!" : ""}: ${m.subject}`;
  const lines = [...m.body, ...(m.breakingFooter !== undefined ? [m.breakingFooter] : [])];
  return lines.length > 0 ? `${header}\n\n${lines.join("\n")}\n` : header;
}

const quiet = { log: () => undefined, warn: () => undefined, error: () => undefined, success: () => undefined };

describe("strict pass vs semantic-release's commit-analyzer (same parser options)", () => {
  it("classifies exactly: major iff `!` or an upper-case footer line; prose never breaks", () => {
    fc.assert(
      fc.property(message, (m) => {
        const c = classifyCommitMessage(render(m));
        const expected = m.bang || m.breakingFooter !== undefined ? "major" : m.type === "feat" ? "minor" : m.type === "fix" || m.type === "perf" ? "patch" : null;
        expect(c.release).toBe(expected);
      }),
      { numRuns: 400 },
    );
  });

  it("agrees with commit-analyzer (conventionalcommits preset) on every generated history", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(message, { minLength: 1, maxLength: 5 }), async (history) => {
        const commits = history.map((m, i) => ({ hash: i.toString(16).padStart(40, "0"), message: render(m) }));
        const analyzer = await analyzeCommits({ preset: "conventionalcommits", parserOpts: { ...COMMIT_PARSER_OPTIONS } }, { commits, logger: quiet, cwd: process.cwd() });
        let strict: ReturnType<typeof strongerBump> = null;
        for (const c of commits) strict = strongerBump(strict, classifyCommitMessage(c.message).release);
        expect(analyzer ?? null).toBe(strict);
      }),
      { numRuns: 150 },
    );
  });
});

/** Lines that look like a breaking marker without being the exact token. */
const ambiguousLine = fc
  .tuple(
    fc.constantFrom("", "* ", "- ", "  ", "> "),
    fc.constantFrom("BREAKING CHANGES", "BREAKING CHANGE", "BREAKING-CHANGE", "Breaking Change", "breaking change", "BREAKING_CHANGE", "BREAKING-CHANGES", "breaking-change", "BREAKING  CHANGE", "BREAKING", "BreakingChange"),
    fc.constantFrom(": ", " ", ":", " : ", " - "),
    subject,
  )
  .filter(([lead, token, sep]) => !(lead === "" && (token === "BREAKING CHANGE" || token === "BREAKING-CHANGE") && sep === ": "))
  .filter(([, token, sep]) => !(token === "BREAKING" && !sep.includes(":")))
  .map(([lead, token, sep, s]) => `${lead}${token}${sep}${s}`);

describe("ambiguous breaking markers", () => {
  it("are an error naming the commit and the line, wherever they sit in the body", () => {
    fc.assert(
      fc.property(message, ambiguousLine, fc.nat(), (m, line, at) => {
        const body = [...m.body];
        body.splice(at % (body.length + 1), 0, line);
        const sha = "ab".repeat(20);
        let error: { code?: string; message?: string } = {};
        try {
          classifyCommitMessage(render({ ...m, body }), sha);
        } catch (e) {
          error = e as typeof error;
        }
        expect(error.code).toBe("RELEASE_BREAKING_AMBIGUOUS");
        expect(error.message).toContain(sha);
        expect(error.message).toContain(JSON.stringify(line.length > 120 ? line.slice(0, 117) + "..." : line));
      }),
      { numRuns: 400 },
    );
  });
});

describe("prependChangelog", () => {
  it("keeps every older byte after the new notes and the title first", () => {
    fc.assert(
      fc.property(fc.array(subject, { maxLength: 5 }), subject, (older, note) => {
        const existing = `# Changelog\n\n${older.map((o) => `## ${o}\n`).join("\n")}`;
        const out = prependChangelog(existing, `## ${note}\n`);
        expect(out.startsWith(`# Changelog\n\n## ${note}\n`)).toBe(true);
        const rest = existing.slice("# Changelog\n\n".length);
        expect(out.endsWith(rest)).toBe(true);
      }),
      { numRuns: 200 },
    );
  });
});

/** The exact token as a reader sees it, disguised: an invisible character inserted, or one letter swapped for a full-width or look-alike capital. */
const LOOK_ALIKES: Record<string, string[]> = {
  A: ["\uff21", "\u0410", "\u0391"],
  B: ["\uff22", "\u0412", "\u0392"],
  C: ["\uff23", "\u0421"],
  E: ["\uff25", "\u0415", "\u0395"],
  G: ["\uff27"],
  H: ["\uff28", "\u041d", "\u0397"],
  I: ["\uff29", "\u0406", "\u0399", "\u0130"],
  K: ["\uff2b", "\u041a", "\u039a"],
  N: ["\uff2e", "\u039d"],
  R: ["\uff32"],
};
const disguisedToken = fc
  .tuple(fc.constantFrom("BREAKING CHANGE", "BREAKING-CHANGE"), fc.nat(), fc.boolean(), fc.constantFrom("\u200b", "\u200c", "\u200d", "\u2060", "\u00ad", "\ufeff"), fc.nat())
  .map(([token, at, insert, invisible, pick]) => {
    if (insert) {
      const i = 1 + (at % (token.length - 1));
      return token.slice(0, i) + invisible + token.slice(i);
    }
    const letters = [...token].map((c, i) => [c, i] as const).filter(([c]) => LOOK_ALIKES[c] !== undefined);
    const [c, i] = letters[at % letters.length] as readonly [string, number];
    const options = LOOK_ALIKES[c] as string[];
    return token.slice(0, i) + (options[pick % options.length] as string) + token.slice(i + 1);
  });

describe("breaking markers that only read as the exact token", () => {
  it("are RELEASE_BREAKING_AMBIGUOUS, never a silent minor or patch", () => {
    fc.assert(
      fc.property(message, disguisedToken, subject, fc.nat(), (m, token, text, at) => {
        const body = [...m.body];
        body.splice(at % (body.length + 1), 0, `${token}: ${text}`);
        let code: string | undefined;
        try {
          classifyCommitMessage(render({ ...m, body }), "cd".repeat(20));
        } catch (e) {
          code = (e as { code?: string }).code;
        }
        expect(code).toBe("RELEASE_BREAKING_AMBIGUOUS");
      }),
      { numRuns: 400 },
    );
  });
});
