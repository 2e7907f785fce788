/**
 * Real git repositories for release tests: a small npm package (not this
 * repository) with fixed author/committer names and dates, hooks and
 * machine configuration disabled through the release git adapter, an
 * optional local bare `origin`, and helpers to commit, tag and push.
 */
import { mkdtemp, mkdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { git, gitText } from "../../release/git.js";

/** Fixed identity of fixture commits. */
export const FIXTURE_AUTHOR = { name: "Fixture Author", email: "fixture@example.invalid" };
/** First fixture commit date (seconds since the epoch, UTC); each commit adds 60 s. */
export const FIXTURE_EPOCH = 1_767_225_600; // 2026-01-01T00:00:00Z

/** Options of {@link createFixtureRepo}. */
export interface FixtureOptions {
  /** package.json name (default `fixture-plugin`). */
  name?: string;
  /** package.json version (default `0.7.0`). */
  version?: string;
  /** Tag `v<version>` on the initial commit (default true). */
  tagBaseline?: boolean;
  /** Create a bare `origin` and push `main` + tags (default true). */
  origin?: boolean;
  /** Declared gate commands (`hermesPluginKit.gates`). */
  gates?: Record<string, string>;
  /** Extra package.json fields. */
  packageJson?: Record<string, unknown>;
  /** Extra files of the initial commit, path -> content. */
  files?: Record<string, string>;
}

/** A fixture repository. */
export interface FixtureRepo {
  /** Temporary root holding `work/` (the checkout) and `origin.git`. */
  root: string;
  /** The working checkout (branch `main`). */
  dir: string;
  /** Path of the bare origin, when created. */
  origin: string | undefined;
  /** Commit `files` (path -> content; `null` deletes) with `message`; returns the new SHA. */
  commit(message: string, files?: Record<string, string | null>): Promise<string>;
  /** Run git in the checkout with fixed identity and the next fixed date; returns stdout. */
  git(args: string[]): Promise<string>;
  /** SHA of HEAD. */
  head(): Promise<string>;
  /** Remove the temporary root. */
  cleanup(): Promise<void>;
}

let counter = 0;

function dateEnv(): Record<string, string> {
  counter += 1;
  const date = `${FIXTURE_EPOCH + counter * 60} +0000`;
  return {
    GIT_AUTHOR_NAME: FIXTURE_AUTHOR.name,
    GIT_AUTHOR_EMAIL: FIXTURE_AUTHOR.email,
    GIT_COMMITTER_NAME: FIXTURE_AUTHOR.name,
    GIT_COMMITTER_EMAIL: FIXTURE_AUTHOR.email,
    GIT_AUTHOR_DATE: date,
    GIT_COMMITTER_DATE: date,
  };
}

/** package.json text of the fixture package. */
export function fixturePackageJson(options: FixtureOptions = {}): string {
  const name = options.name ?? "fixture-plugin";
  const version = options.version ?? "0.7.0";
  const doc: Record<string, unknown> = {
    name,
    version,
    description: "A fixture package for release tests.",
    license: "MIT",
    type: "module",
    main: "./index.js",
    exports: { ".": "./index.js", "./package.json": "./package.json" },
    files: ["index.js", "lib"],
    hermesPluginKit: {
      repository: `oci-layout:/tmp/${name}-store`,
      gates: options.gates ?? {
        unit: "test -f index.js",
        public_contract: "test -f package.json",
        host_contract: "true",
        build_metadata: "test -d lib",
      },
    },
    ...options.packageJson,
  };
  return JSON.stringify(doc, null, 2) + "\n";
}

/** package-lock.json text (lockfile v3) of the fixture package. */
export function fixtureLockfile(name: string, version: string): string {
  return JSON.stringify({ name, version, lockfileVersion: 3, requires: true, packages: { "": { name, version, license: "MIT" } } }, null, 2) + "\n";
}

/**
 * Create a fixture repository: an npm package with `index.js`, `lib/`,
 * `README.md`, `LICENSE`, `CHANGELOG.md`, `package-lock.json`, one initial
 * commit `chore: initial import` on `main`, the tag `v<version>` and a bare
 * origin holding both (by default).
 */
export async function createFixtureRepo(options: FixtureOptions = {}): Promise<FixtureRepo> {
  const root = await mkdtemp(join(tmpdir(), "hpk-release-"));
  const dir = join(root, "work");
  await mkdir(dir);
  const name = options.name ?? "fixture-plugin";
  const version = options.version ?? "0.7.0";
  const run = async (args: string[], cwd = dir): Promise<string> => gitText(args, { cwd, env: dateEnv() });
  await run(["init", "--quiet", "--initial-branch=main", dir]);
  await run(["config", "commit.gpgsign", "false"]);
  await run(["config", "tag.gpgsign", "false"]);
  const files: Record<string, string> = {
    "package.json": fixturePackageJson(options),
    "package-lock.json": fixtureLockfile(name, version),
    "index.js": 'export { greet } from "./lib/greet.js";\n',
    "lib/greet.js": "export function greet(name) {\n  return `hello ${name}`;\n}\n",
    "README.md": `# ${name}\n\nFixture.\n`,
    LICENSE: "MIT License\n",
    "CHANGELOG.md": "# Changelog\n\n## 0.7.0\n\n* initial\n",
    ".gitignore": "node_modules/\n",
    ...options.files,
  };
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), content);
  }
  await run(["add", "-A"]);
  await run(["commit", "--quiet", "-m", "chore: initial import"]);
  if (options.tagBaseline !== false) await run(["tag", `v${version}`]);
  let origin: string | undefined;
  if (options.origin !== false) {
    origin = join(root, "origin.git");
    await run(["init", "--quiet", "--bare", "--initial-branch=main", origin], root);
    await run(["remote", "add", "origin", origin]);
    await run(["push", "--quiet", "origin", "main", "--tags"]);
  }
  const repo: FixtureRepo = {
    root,
    dir,
    origin,
    async commit(message, changes = {}) {
      for (const [path, content] of Object.entries(changes)) {
        const full = join(dir, path);
        if (content === null) await rm(full, { force: true });
        else {
          await mkdir(dirname(full), { recursive: true });
          await writeFile(full, content);
        }
      }
      await run(["add", "-A"]);
      await git(["commit", "--quiet", "--allow-empty", "--cleanup=verbatim", "-F", "-"], { cwd: dir, env: dateEnv(), input: message });
      return run(["rev-parse", "HEAD"]);
    },
    git: (args) => run(args),
    head: () => run(["rev-parse", "HEAD"]),
    cleanup: () => rm(root, { recursive: true, force: true }),
  };
  return repo;
}

/** Run git in `cwd` with the fixture identity and the next fixed date. */
export async function fixtureGit(cwd: string, args: string[]): Promise<string> {
  return gitText(args, { cwd, env: dateEnv() });
}
