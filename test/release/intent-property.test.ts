import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { analyzeCommits } from "@semantic-release/commit-analyzer";
import { classifyCommitMessage, COMMIT_PARSER_OPTIONS, strongerBump } from "../../release/intent.js";
import { prependChangelog } from "../../release/materialize.js";

const TYPES = ["build", "chore", "ci", "docs", "feat", "fix", "perf", "refactor", "style", "test"];
const word = fc.stringMatching(/^[a-z][a-z0-9]{0,8}$/);
const subject = fc.array(word, { minLength: 1, maxLength: 6 }).map((w) => w.join(" "));
const scope = fc.option(fc.stringMatching(/^[a-z][a-z0-9-]{0,8}$/), { nil: undefined });
/** Body lines that are prose: never a footer keyword at line start (any case mix is allowed after). */
const proseLine = fc.oneof(
  subject,
  subject.map((s) => `breaking change ${s}`),
  subject.map((s) => `breaking change: ${s}`),
  subject.map((s) => `Breaking Change: ${s}`),
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
