/**
 * A loopback GitHub REST API emulator for tests (the GitHub REST API is a
 * boundary emulated behind the real Octokit; docs/release-publish.md "Testing
 * support: the GitHub API emulator").
 *
 * It speaks the real paths and JSON shapes of the endpoints the release
 * pipeline and the privacy gate use, so the production code runs unchanged
 * through the real `@octokit/rest` client pointed at `GITHUB_API_URL`:
 *
 * - `GET /user`, `GET /users/{owner}`;
 * - `GET /users/{owner}/packages/container/{package}` and the `/orgs/...` twin
 *   (package state switchable: absent, private, public, internal, `{}`,
 *   linked to a repository, another identity, no visibility, raw body);
 * - releases: `GET /repos/{o}/{r}/releases` (drafts included),
 *   `GET .../releases/tags/{tag}` (published only, as on GitHub),
 *   `POST .../releases`, `GET|PATCH|DELETE .../releases/{id}`,
 *   `GET .../releases/{id}/assets`; a published release in a repository with
 *   immutable releases enabled is `immutable: true` and any PATCH answers 422;
 * - `GET /repos/{o}/{r}/immutable-releases` (200 `{enabled, enforced_by_owner}`
 *   or 404 when disabled, as documented);
 * - `GET /repos/{o}/{r}/git/ref/{ref}`, `GET /repos/{o}/{r}/git/matching-refs/{ref}`,
 *   `GET /repos/{o}/{r}/git/tags/{sha}` (annotated tags peel through a tag object).
 *
 * Failure modes are injected per path pattern: an HTTP status with GitHub's
 * error body (401/403/404/429/500/...), a raw answer, a connection dropped
 * before any status line, a request never answered (`hang`), or a dropped
 * connection after the effect happened (`drop-after`).
 * Every request is logged (method, path, query, whether the expected token was
 * presented, parsed body); the token itself is never recorded.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

/** Package state served by the container package endpoints. */
export type PackageState =
  | "absent"
  | "private"
  | "public"
  | "internal"
  /** The body is literally `{}`. */
  | "empty"
  /** Identity correct, `visibility` omitted. */
  | "no-visibility"
  /** Private but linked to a source repository. */
  | "linked"
  /** Private, `repository: null` given explicitly. */
  | "private-null-repository"
  /** Another package name. */
  | "other-name"
  /** Another package type (`npm`). */
  | "other-type"
  /** Another owner login. */
  | "other-owner"
  /** A raw answer. */
  | { status: number; body: string; contentType?: string };

/** A failure mode for matching requests. */
export type FailureMode =
  | 401
  | 403
  | 404
  | 409
  | 422
  | 429
  | 500
  | 502
  | 503
  | "drop"
  | "drop-after"
  /** Never answer (the socket stays open until the client gives up or the emulator closes). */
  | "hang"
  /** A raw answer instead of the emulated one (extra response headers, e.g. `retry-after`). */
  | { status: number; body: string; contentType?: string; headers?: Record<string, string> };

/** One logged request. */
export interface LoggedRequest {
  method: string;
  /** Path without the query string, e.g. `/users/acme`. */
  path: string;
  /** Raw query string without `?` (empty when none). */
  query: string;
  /** Whether the configured token was presented (`token <t>` or `Bearer <t>`). */
  authorized: boolean;
  /** Whether any Authorization header was sent. */
  hadAuthorization: boolean;
  /** The `X-GitHub-Api-Version` header, if sent. */
  apiVersion?: string;
  /** The `Accept` header, if sent. */
  accept?: string;
  /** Parsed JSON body for POST/PATCH, else undefined. */
  body?: unknown;
  /** Status answered, or `"dropped"`. */
  outcome?: number | "dropped";
}

/** A release as stored by the emulator (the JSON shape GitHub returns). */
export interface EmulatedRelease {
  id: number;
  tag_name: string;
  target_commitish: string;
  name: string | null;
  body: string | null;
  draft: boolean;
  prerelease: boolean;
  immutable: boolean;
  created_at: string;
  published_at: string | null;
  assets: EmulatedAsset[];
}

/** A release asset (minimal GitHub shape). */
export interface EmulatedAsset {
  id: number;
  name: string;
  size: number;
  state: "uploaded";
  content_type: string;
}

interface RepoState {
  immutableReleases: boolean;
  enforcedByOwner: boolean;
  releases: EmulatedRelease[];
  /** `refs/...` -> object (commit sha, or a tag object sha). */
  refs: Map<string, { sha: string; type: "commit" | "tag" }>;
  /** tag object sha -> `{tag, object}`. */
  tagObjects: Map<string, { tag: string; object: { sha: string; type: "commit" | "tag" } }>;
}

interface FailureRule {
  method: string | undefined;
  pattern: RegExp | string;
  mode: FailureMode;
  remaining: number;
}

/** Options of {@link startGitHubEmulator}. */
export interface GitHubEmulatorOptions {
  /** The token the emulator accepts; requests without it get 401. Default `test-token-<random>`. */
  token?: string;
  /** Login of the token's user (`GET /user`). Default `release-bot`. */
  login?: string;
}

/** A running emulator. Close it with {@link GitHubEmulator.close}. */
export interface GitHubEmulator {
  /** Base URL, e.g. `http://127.0.0.1:41234` (use as `GITHUB_API_URL`). */
  readonly url: string;
  /** The accepted token (use as `GH_TOKEN`). */
  readonly token: string;
  /** Every request so far, in order. */
  readonly requests: LoggedRequest[];
  /** Environment to hand to the code under test: `GITHUB_API_URL`, `GH_TOKEN`. */
  env(extra?: Record<string, string>): Record<string, string>;
  /** Set the account type of `owner` (`User`, `Organization`, anything else, or `null` for 404). */
  setOwner(owner: string, type: string | null): void;
  /**
   * Set the state of container package `owner/name`. A function is asked on
   * every request (lets a test flip the state when a bootstrap push happens).
   */
  setPackage(owner: string, name: string, state: PackageState | (() => PackageState | Promise<PackageState>)): void;
  /** Inject `mode` for requests whose path matches `pattern` (string = exact path), `times` times (default forever). */
  fail(pattern: RegExp | string, mode: FailureMode, options?: { times?: number; method?: string }): void;
  /** Remove all injected failures. */
  clearFailures(): void;
  /** Repository settings: immutable releases on/off. */
  setImmutableReleases(owner: string, repo: string, enabled: boolean, enforcedByOwner?: boolean): void;
  /** Point a git ref (`tags/v1.0.0`, `heads/main`) at a commit; `annotated` adds a tag object in between. */
  setRef(owner: string, repo: string, ref: string, commitSha: string, options?: { annotated?: boolean }): void;
  /** Delete a git ref. */
  deleteRef(owner: string, repo: string, ref: string): void;
  /** The releases of a repository (live objects; tests may inspect or seed them). */
  releases(owner: string, repo: string): EmulatedRelease[];
  /** Add an asset to a release (as an upload would). */
  addAsset(owner: string, repo: string, releaseId: number, name: string, size?: number): void;
  /** Count of logged requests matching method and path pattern. */
  count(method: string, pattern: RegExp | string): number;
  /** Stop the server and drop open connections. */
  close(): Promise<void>;
}

const JSON_TYPE = "application/json; charset=utf-8";

/** Start the emulator on 127.0.0.1 with an ephemeral port. */
export async function startGitHubEmulator(options: GitHubEmulatorOptions = {}): Promise<GitHubEmulator> {
  const token = options.token ?? `test-token-${Math.random().toString(36).slice(2)}-${Date.now().toString(36)}`;
  const login = options.login ?? "release-bot";
  const owners = new Map<string, string | null>();
  const packages = new Map<string, PackageState | (() => PackageState | Promise<PackageState>)>();
  const repos = new Map<string, RepoState>();
  const failures: FailureRule[] = [];
  const requests: LoggedRequest[] = [];
  const sockets = new Set<Socket>();
  let nextId = 1000;
  let clock = Date.parse("2026-01-01T00:00:00Z");
  let baseUrl = "";

  const now = () => new Date((clock += 1000)).toISOString().replace(/\.000Z$/, "Z");
  const repoState = (owner: string, repo: string): RepoState => {
    const key = `${owner.toLowerCase()}/${repo.toLowerCase()}`;
    let state = repos.get(key);
    if (state === undefined) {
      state = { immutableReleases: false, enforcedByOwner: false, releases: [], refs: new Map(), tagObjects: new Map() };
      repos.set(key, state);
    }
    return state;
  };

  const userJson = (name: string, type: string) => ({
    login: name,
    id: 4242,
    node_id: "U_kgDOAAAAAA",
    avatar_url: `https://avatars.githubusercontent.com/u/4242?v=4`,
    url: `${baseUrl}/users/${name}`,
    html_url: `https://github.com/${name}`,
    type,
    site_admin: false,
  });

  const packageJson = (owner: string, name: string, state: Exclude<PackageState, "absent" | { status: number }>) => {
    const ownerType = owners.get(owner.toLowerCase()) ?? "User";
    const base: Record<string, unknown> = {
      id: 77001,
      name,
      package_type: "container",
      owner: userJson(owner, ownerType ?? "User"),
      version_count: 1,
      visibility: "private",
      url: `${baseUrl}/${ownerType === "Organization" ? "orgs" : "users"}/${owner}/packages/container/${encodeURIComponent(name)}`,
      created_at: "2026-01-01T00:00:00Z",
      updated_at: "2026-01-01T00:00:00Z",
      html_url: `https://github.com/${ownerType === "Organization" ? "orgs" : "users"}/${owner}/packages/container/package/${name}`,
    };
    switch (state) {
      case "empty":
        return {};
      case "private":
        return base;
      case "private-null-repository":
        return { ...base, repository: null };
      case "public":
      case "internal":
        return { ...base, visibility: state };
      case "no-visibility": {
        const copy = { ...base };
        delete copy["visibility"];
        return copy;
      }
      case "linked":
        return {
          ...base,
          repository: {
            id: 55,
            name,
            full_name: `${owner}/${name}`,
            private: false,
            owner: userJson(owner, ownerType ?? "User"),
            html_url: `https://github.com/${owner}/${name}`,
          },
        };
      case "other-name":
        return { ...base, name: `${name}-other` };
      case "other-type":
        return { ...base, package_type: "npm" };
      case "other-owner":
        return { ...base, owner: userJson(`${owner}-other`, "User") };
    }
  };

  const releaseJson = (owner: string, repo: string, release: EmulatedRelease) => ({
    url: `${baseUrl}/repos/${owner}/${repo}/releases/${release.id}`,
    html_url: `https://github.com/${owner}/${repo}/releases/tag/${release.tag_name}`,
    assets_url: `${baseUrl}/repos/${owner}/${repo}/releases/${release.id}/assets`,
    upload_url: `https://uploads.github.com/repos/${owner}/${repo}/releases/${release.id}/assets{?name,label}`,
    tarball_url: `${baseUrl}/repos/${owner}/${repo}/tarball/${release.tag_name}`,
    zipball_url: `${baseUrl}/repos/${owner}/${repo}/zipball/${release.tag_name}`,
    id: release.id,
    node_id: `RE_${release.id}`,
    tag_name: release.tag_name,
    target_commitish: release.target_commitish,
    name: release.name,
    body: release.body,
    draft: release.draft,
    prerelease: release.prerelease,
    immutable: release.immutable,
    created_at: release.created_at,
    updated_at: release.published_at ?? release.created_at,
    published_at: release.published_at,
    author: userJson(login, "User"),
    assets: release.assets.map((asset) => assetJson(owner, repo, asset)),
  });

  const assetJson = (owner: string, repo: string, asset: EmulatedAsset) => ({
    url: `${baseUrl}/repos/${owner}/${repo}/releases/assets/${asset.id}`,
    id: asset.id,
    name: asset.name,
    label: null,
    state: asset.state,
    content_type: asset.content_type,
    size: asset.size,
    download_count: 0,
  });

  const send = (res: ServerResponse, entry: LoggedRequest, status: number, body: unknown, contentType = JSON_TYPE, extra: Record<string, string> = {}) => {
    entry.outcome = status;
    const text = typeof body === "string" ? body : JSON.stringify(body);
    // A 429 is GitHub's primary rate limit: remaining 0, reset an hour away (clients must not retry before it).
    res.writeHead(status, {
      "content-type": contentType,
      "x-github-api-version-selected": "2022-11-28",
      "x-ratelimit-limit": "5000",
      "x-ratelimit-remaining": status === 429 ? "0" : "4999",
      "x-ratelimit-reset": String(Math.floor(Date.now() / 1000) + (status === 429 ? 3600 : 600)),
      ...extra,
    });
    res.end(status === 204 ? undefined : text);
  };
  const errorBody = (status: number): unknown => {
    const messages: Record<number, string> = {
      401: "Bad credentials",
      403: "Resource not accessible by personal access token",
      404: "Not Found",
      409: "Conflict",
      422: "Validation Failed",
      429: "API rate limit exceeded",
      500: "Server Error",
      502: "Bad Gateway",
      503: "Service Unavailable",
    };
    return { message: messages[status] ?? "Error", documentation_url: "https://docs.github.com/rest", status: String(status) };
  };
  const drop = (req: IncomingMessage, entry: LoggedRequest) => {
    entry.outcome = "dropped";
    req.socket.destroy();
  };

  const readBody = async (req: IncomingMessage): Promise<unknown> => {
    const chunks: Buffer[] = [];
    let total = 0;
    for await (const chunk of req) {
      total += (chunk as Buffer).length;
      if (total > 1024 * 1024) throw new Error("request body too large");
      chunks.push(chunk as Buffer);
    }
    if (total === 0) return undefined;
    const text = Buffer.concat(chunks).toString("utf8");
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return text;
    }
  };

  const matchFailure = (method: string, path: string): FailureRule | undefined => {
    for (const rule of failures) {
      if (rule.remaining <= 0) continue;
      if (rule.method !== undefined && rule.method !== method) continue;
      const hit = typeof rule.pattern === "string" ? rule.pattern === path : rule.pattern.test(path);
      if (hit) {
        rule.remaining -= 1;
        return rule;
      }
    }
    return undefined;
  };

  /** Route a request; returns `[status, body]` or `undefined` for 404. */
  const route = async (method: string, path: string, query: URLSearchParams, body: unknown): Promise<[number, unknown]> => {
    const seg = path.split("/").slice(1).map((part) => decodeURIComponent(part));
    if (method === "GET" && path === "/user") return [200, userJson(login, "User")];
    if (method === "GET" && seg.length === 2 && seg[0] === "users") {
      const type = owners.get(seg[1]!.toLowerCase());
      if (type === undefined || type === null) return [404, errorBody(404)];
      return [200, userJson(seg[1]!, type)];
    }
    if (method === "GET" && seg.length === 5 && (seg[0] === "users" || seg[0] === "orgs") && seg[2] === "packages" && seg[3] === "container") {
      const owner = seg[1]!;
      const name = seg[4]!;
      const type = owners.get(owner.toLowerCase());
      if (type === undefined || type === null) return [404, errorBody(404)];
      if ((seg[0] === "orgs") !== (type === "Organization")) return [404, errorBody(404)];
      const entry = packages.get(`${owner.toLowerCase()}/${name}`);
      const state = typeof entry === "function" ? await entry() : (entry ?? "absent");
      if (state === "absent") return [404, { message: "Package not found.", documentation_url: "https://docs.github.com/rest/packages/packages" }];
      if (typeof state === "object") return [state.status, { raw: state.body, contentType: state.contentType }];
      return [200, packageJson(owner, name, state)];
    }
    if (seg[0] !== "repos" || seg.length < 4) return [404, errorBody(404)];
    const owner = seg[1]!;
    const repo = seg[2]!;
    const state = repoState(owner, repo);
    const rest = seg.slice(3);
    if (method === "GET" && rest.length === 1 && rest[0] === "immutable-releases") {
      if (!state.immutableReleases) return [404, errorBody(404)];
      return [200, { enabled: true, enforced_by_owner: state.enforcedByOwner }];
    }
    if (rest[0] === "git") {
      if (method === "GET" && rest[1] === "ref" && rest.length >= 3) {
        const ref = `refs/${rest.slice(2).join("/")}`;
        const object = state.refs.get(ref);
        if (object === undefined) return [404, errorBody(404)];
        return [200, refJson(owner, repo, ref, object)];
      }
      if (method === "GET" && rest[1] === "matching-refs" && rest.length >= 3) {
        const prefix = `refs/${rest.slice(2).join("/")}`;
        const list = [...state.refs.entries()].filter(([ref]) => ref.startsWith(prefix)).sort(([a], [b]) => (a < b ? -1 : 1));
        return [200, list.map(([ref, object]) => refJson(owner, repo, ref, object))];
      }
      if (method === "GET" && rest[1] === "tags" && rest.length === 3) {
        const tagObject = state.tagObjects.get(rest[2]!);
        if (tagObject === undefined) return [404, errorBody(404)];
        return [200, { node_id: `TO_${rest[2]}`, sha: rest[2], url: `${baseUrl}/repos/${owner}/${repo}/git/tags/${rest[2]}`, tag: tagObject.tag, message: `${tagObject.tag}\n`, object: { ...tagObject.object, url: `${baseUrl}/repos/${owner}/${repo}/git/commits/${tagObject.object.sha}` } }];
      }
      return [404, errorBody(404)];
    }
    if (rest[0] !== "releases") return [404, errorBody(404)];
    if (rest.length === 1 && method === "GET") {
      const perPage = Math.min(100, Math.max(1, Number(query.get("per_page") ?? "30") || 30));
      const page = Math.max(1, Number(query.get("page") ?? "1") || 1);
      const sorted = [...state.releases].sort((a, b) => b.id - a.id);
      return [200, sorted.slice((page - 1) * perPage, page * perPage).map((release) => releaseJson(owner, repo, release))];
    }
    if (rest.length === 1 && method === "POST") {
      const input = (body ?? {}) as Record<string, unknown>;
      const tag = input["tag_name"];
      if (typeof tag !== "string" || tag.length === 0) {
        return [422, { message: "Validation Failed", errors: [{ resource: "Release", code: "missing_field", field: "tag_name" }] }];
      }
      const draft = input["draft"] === true;
      if (!draft && state.releases.some((release) => release.tag_name === tag && !release.draft)) {
        return [422, { message: "Validation Failed", errors: [{ resource: "Release", code: "already_exists", field: "tag_name" }] }];
      }
      const release: EmulatedRelease = {
        id: nextId++,
        tag_name: tag,
        target_commitish: typeof input["target_commitish"] === "string" ? (input["target_commitish"] as string) : "main",
        name: typeof input["name"] === "string" ? (input["name"] as string) : null,
        body: typeof input["body"] === "string" ? (input["body"] as string) : null,
        draft,
        prerelease: input["prerelease"] === true,
        immutable: !draft && state.immutableReleases,
        created_at: now(),
        published_at: draft ? null : now(),
        assets: [],
      };
      state.releases.push(release);
      return [201, releaseJson(owner, repo, release)];
    }
    if (rest.length === 3 && rest[1] === "tags" && method === "GET") {
      const release = state.releases.find((candidate) => candidate.tag_name === rest[2] && !candidate.draft);
      if (release === undefined) return [404, errorBody(404)];
      return [200, releaseJson(owner, repo, release)];
    }
    const id = Number(rest[1]);
    const release = Number.isInteger(id) ? state.releases.find((candidate) => candidate.id === id) : undefined;
    if (release === undefined) return [404, errorBody(404)];
    if (rest.length === 2 && method === "GET") return [200, releaseJson(owner, repo, release)];
    if (rest.length === 3 && rest[2] === "assets" && method === "GET") {
      return [200, release.assets.map((asset) => assetJson(owner, repo, asset))];
    }
    if (rest.length === 2 && method === "PATCH") {
      if (release.immutable) {
        return [422, { message: "Validation Failed", errors: [{ resource: "Release", code: "custom", field: "immutable", message: "Cannot modify an immutable release." }], documentation_url: "https://docs.github.com/rest/releases/releases#update-a-release" }];
      }
      const input = (body ?? {}) as Record<string, unknown>;
      if (typeof input["body"] === "string") release.body = input["body"] as string;
      if (typeof input["name"] === "string") release.name = input["name"] as string;
      if (typeof input["tag_name"] === "string") release.tag_name = input["tag_name"] as string;
      if (input["draft"] === false && release.draft) {
        if (state.releases.some((other) => other !== release && other.tag_name === release.tag_name && !other.draft)) {
          return [422, { message: "Validation Failed", errors: [{ resource: "Release", code: "already_exists", field: "tag_name" }] }];
        }
        release.draft = false;
        release.published_at = now();
        release.immutable = state.immutableReleases;
      }
      return [200, releaseJson(owner, repo, release)];
    }
    if (rest.length === 2 && method === "DELETE") {
      state.releases.splice(state.releases.indexOf(release), 1);
      return [204, ""];
    }
    return [404, errorBody(404)];
  };

  const refJson = (owner: string, repo: string, ref: string, object: { sha: string; type: "commit" | "tag" }) => ({
    ref,
    node_id: `REF_${ref}`,
    url: `${baseUrl}/repos/${owner}/${repo}/git/${ref}`,
    object: { sha: object.sha, type: object.type, url: `${baseUrl}/repos/${owner}/${repo}/git/${object.type === "tag" ? "tags" : "commits"}/${object.sha}` },
  });

  const server: Server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? "/", "http://127.0.0.1");
      const method = (req.method ?? "GET").toUpperCase();
      const authorization = req.headers["authorization"];
      const presented = typeof authorization === "string" ? authorization.replace(/^(token|bearer)\s+/i, "") : undefined;
      const entry: LoggedRequest = {
        method,
        path: url.pathname,
        query: url.search.replace(/^\?/, ""),
        authorized: presented === token,
        hadAuthorization: typeof authorization === "string",
      };
      const apiVersion = req.headers["x-github-api-version"];
      if (typeof apiVersion === "string") entry.apiVersion = apiVersion;
      if (typeof req.headers.accept === "string") entry.accept = req.headers.accept;
      requests.push(entry);
      let body: unknown;
      try {
        body = await readBody(req);
      } catch {
        send(res, entry, 413, errorBody(422));
        return;
      }
      if (body !== undefined) entry.body = body;
      const failure = matchFailure(method, url.pathname);
      if (failure !== undefined && failure.mode === "drop") {
        drop(req, entry);
        return;
      }
      if (failure !== undefined && failure.mode === "hang") {
        entry.outcome = "dropped";
        return;
      }
      if (failure !== undefined && typeof failure.mode === "number") {
        send(res, entry, failure.mode, errorBody(failure.mode));
        return;
      }
      if (failure !== undefined && typeof failure.mode === "object") {
        send(res, entry, failure.mode.status, failure.mode.body, failure.mode.contentType ?? JSON_TYPE, failure.mode.headers ?? {});
        return;
      }
      if (!entry.authorized) {
        send(res, entry, 401, errorBody(401));
        return;
      }
      const [status, answer] = await route(method, url.pathname, url.searchParams, body);
      if (failure !== undefined) {
        drop(req, entry);
        return;
      }
      if (answer !== null && typeof answer === "object" && "raw" in (answer as Record<string, unknown>)) {
        const raw = answer as { raw: string; contentType?: string };
        send(res, entry, status, raw.raw, raw.contentType ?? JSON_TYPE);
        return;
      }
      send(res, entry, status, answer);
    })().catch(() => {
      res.destroy();
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url: baseUrl,
    token,
    requests,
    env: (extra = {}) => ({ GITHUB_API_URL: baseUrl, GH_TOKEN: token, ...extra }),
    setOwner: (owner, type) => {
      owners.set(owner.toLowerCase(), type);
    },
    setPackage: (owner, name, state) => {
      packages.set(`${owner.toLowerCase()}/${name}`, state);
    },
    fail: (pattern, mode, failOptions = {}) => {
      failures.push({ pattern, mode, remaining: failOptions.times ?? Number.POSITIVE_INFINITY, method: failOptions.method?.toUpperCase() });
    },
    clearFailures: () => {
      failures.length = 0;
    },
    setImmutableReleases: (owner, repo, enabled, enforcedByOwner = false) => {
      const state = repoState(owner, repo);
      state.immutableReleases = enabled;
      state.enforcedByOwner = enforcedByOwner;
    },
    setRef: (owner, repo, ref, commitSha, refOptions = {}) => {
      const state = repoState(owner, repo);
      const full = ref.startsWith("refs/") ? ref : `refs/${ref}`;
      if (refOptions.annotated === true) {
        const tagSha = [...commitSha].reverse().join("");
        state.tagObjects.set(tagSha, { tag: full.replace(/^refs\/tags\//, ""), object: { sha: commitSha, type: "commit" } });
        state.refs.set(full, { sha: tagSha, type: "tag" });
      } else {
        state.refs.set(full, { sha: commitSha, type: "commit" });
      }
    },
    deleteRef: (owner, repo, ref) => {
      repoState(owner, repo).refs.delete(ref.startsWith("refs/") ? ref : `refs/${ref}`);
    },
    releases: (owner, repo) => repoState(owner, repo).releases,
    addAsset: (owner, repo, releaseId, name, size = 1) => {
      const release = repoState(owner, repo).releases.find((candidate) => candidate.id === releaseId);
      if (release === undefined) throw new Error(`no release ${releaseId}`);
      release.assets.push({ id: nextId++, name, size, state: "uploaded", content_type: "application/octet-stream" });
    },
    count: (method, pattern) =>
      requests.filter((entry) => entry.method === method.toUpperCase() && (typeof pattern === "string" ? entry.path === pattern : pattern.test(entry.path))).length,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
