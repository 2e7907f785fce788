/**
 * Registry authentication pieces (OCI distribution-spec + the Docker token
 * flow GHCR uses): the one `WWW-Authenticate` challenge parser (RFC 9110
 * section 11.6.1; also the privacy probe's), token endpoint answers,
 * credential shapes, and reading credentials from the environment or stdin
 * (never argv).
 */
import { parseStrictJson } from "../contract/canonical-json.js";
import { requireOptionalString, requireReadable, requireStringRecord } from "./arguments.js";
import { OciError } from "./errors.js";

/**
 * Registry credentials: a username and password (GHCR: login + token), sent as
 * Basic to the registry or to the Bearer token endpoint; or a ready registry
 * bearer `token`, sent as `Authorization: Bearer` on every request.
 */
export type RegistryCredentials = { username: string; password: string } | { token: string };

// C0 controls and DEL: a CR/LF would split the Authorization header, a NUL cut it.
const CONTROL_CHAR_RE = /[\u0000-\u001f\u007f]/;

function credentialShape(value: unknown): string {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return value === null ? "null" : Array.isArray(value) ? "an array" : `a ${typeof value}`;
  const keys = Object.keys(value);
  return keys.length === 0 ? "an object with no keys" : `an object with keys ${keys.map((k) => JSON.stringify(k.length > 40 ? `${k.slice(0, 37)}...` : k)).slice(0, 6).join(", ")}`;
}

/**
 * `value` is absent or {@link RegistryCredentials}: exactly `{username, password}` or exactly `{token}`, each a
 * string without control characters. The message describes what was found by type and key names only, never
 * a value (docs/oci.md "Arguments").
 * @param call the entry point, e.g. `openTarget(repository, options)`. @param name the argument, e.g. `options.credentials`.
 * @throws OciError `OCI_ARGUMENT_INVALID`.
 */
export function requireOptionalCredentials(value: unknown, call: string, name: string): asserts value is RegistryCredentials | undefined {
  if (value === undefined) return;
  const expected = "exactly { username, password } or exactly { token } (strings without control characters)";
  const refuse = (found: string): never => {
    throw new OciError("OCI_ARGUMENT_INVALID", `${call}: ${name} must be ${expected}, found ${found}`);
  };
  if (value === null || typeof value !== "object" || Array.isArray(value)) refuse(credentialShape(value));
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record).sort();
  const shape = keys.join(",");
  if (shape !== "password,username" && shape !== "token") refuse(credentialShape(value));
  for (const key of keys) {
    const item = record[key];
    if (typeof item !== "string") refuse(`${name}.${key} of type ${item === null ? "null" : Array.isArray(item) ? "array" : typeof item}`);
    if (CONTROL_CHAR_RE.test(item as string)) refuse(`${name}.${key} holding a control character (its value is not shown)`);
  }
}

/** A parsed authentication challenge. */
export interface AuthChallenge {
  /** Lowercased scheme, e.g. `bearer` or `basic`. */
  scheme: string;
  /** Parameters with lowercased names (`realm`, `service`, `scope`, ...). */
  params: Record<string, string>;
}

/**
 * Parse a `WWW-Authenticate` header value (RFC 7235 challenges; several may
 * be comma-separated; parameter values quoted or tokens).
 * @returns the challenges in order (empty for an unparsable header).
 * @throws OciError `OCI_RESPONSE_INVALID` when one challenge names a parameter twice with
 *   different values (two realms: ambiguous, never resolved by picking one); `OCI_ARGUMENT_INVALID` when `header`
 *   is neither a string nor absent.
 */
export function parseChallenges(header: string | undefined): AuthChallenge[] {
  requireOptionalString(header, "parseChallenges(header)", "header", "the WWW-Authenticate header's value");
  if (header === undefined) return [];
  const out: AuthChallenge[] = [];
  const re = /[\s,]*([A-Za-z0-9!#$%&'*+.^_`|~-]+)(?:\s*=\s*("(?:[^"\\]|\\.)*"|[^,\s]*)|(?=[\s,]|$))/y;
  let current: AuthChallenge | undefined;
  for (let guard = 0; guard < 256; guard += 1) {
    if (re.lastIndex >= header.length) break;
    const m = re.exec(header);
    if (m === null) break;
    const name = m[1] as string;
    const raw = m[2];
    if (raw === undefined) {
      current = { scheme: name.toLowerCase(), params: {} };
      out.push(current);
    } else if (current !== undefined) {
      const value = raw.startsWith('"') ? raw.slice(1, -1).replace(/\\(.)/g, "$1") : raw;
      const key = name.toLowerCase();
      const earlier = current.params[key];
      if (earlier !== undefined && earlier !== value) {
        throw new OciError("OCI_RESPONSE_INVALID", `ambiguous authentication challenge: two different ${key} parameters`);
      }
      current.params[key] = value;
    }
  }
  return out;
}

/**
 * Why `REGISTRY_USERNAME`/`REGISTRY_PASSWORD` are incomplete: which one is set and which is missing or
 * empty (names only, never a value), the rule and the fix.
 */
export function incompleteCredentialsMessage(env: NodeJS.ProcessEnv = process.env): string {
  const [set, missing] = (env["REGISTRY_USERNAME"] ?? "") === "" ? ["REGISTRY_PASSWORD", "REGISTRY_USERNAME"] : ["REGISTRY_USERNAME", "REGISTRY_PASSWORD"];
  const state = env[missing] === undefined ? "is not set" : "is empty";
  return `registry credentials are incomplete: expected REGISTRY_USERNAME and REGISTRY_PASSWORD together (or REGISTRY_TOKEN alone), found ${set} set but ${missing} ${state}; fix: set ${missing} too, or unset ${set} (to use REGISTRY_TOKEN, --registry-config or anonymous access)`;
}

/**
 * Credentials from environment variables: `REGISTRY_USERNAME` +
 * `REGISTRY_PASSWORD`, else `REGISTRY_TOKEN`; `undefined` when none is set.
 * (GitHub Actions: `REGISTRY_USERNAME=${{ github.actor }}`, `REGISTRY_PASSWORD=${{ secrets.GITHUB_TOKEN }}`.)
 * @throws OciError `OCI_AUTH_FAILED` when only one of username/password is set ({@link incompleteCredentialsMessage});
 *   `OCI_ARGUMENT_INVALID` when `env` is not an object of strings.
 */
export function registryCredentialsFromEnv(env: NodeJS.ProcessEnv = process.env): RegistryCredentials | undefined {
  requireStringRecord(env, "registryCredentialsFromEnv(env)", "env", "an environment (default process.env)", true);
  const username = env["REGISTRY_USERNAME"];
  const password = env["REGISTRY_PASSWORD"];
  const token = env["REGISTRY_TOKEN"];
  if ((username ?? "") !== "" || (password ?? "") !== "") {
    if ((username ?? "") === "" || (password ?? "") === "") {
      throw new OciError("OCI_AUTH_FAILED", incompleteCredentialsMessage(env));
    }
    return { username: username as string, password: password as string };
  }
  if ((token ?? "") !== "") return { token: token as string };
  return undefined;
}

/**
 * Read a secret from a stream (stdin by default): everything up to EOF, at
 * most 64 KiB, with one trailing newline (`\n` or `\r\n`) removed.
 * @throws OciError `OCI_AUTH_FAILED` when empty, `OCI_BODY_TOO_LARGE` when longer than 64 KiB,
 *   `OCI_ARGUMENT_INVALID` when `stream` is not a readable stream.
 */
export async function readSecretFromStream(stream: NodeJS.ReadableStream = process.stdin): Promise<string> {
  requireReadable(stream, "readSecretFromStream(stream)", "stream");
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of stream) {
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    total += buf.length;
    if (total > 64 * 1024) throw new OciError("OCI_BODY_TOO_LARGE", "secret on stdin is longer than 64 KiB");
    chunks.push(buf);
  }
  const text = Buffer.concat(chunks).toString("utf8").replace(/\r?\n$/, "");
  if (text.length === 0) throw new OciError("OCI_AUTH_FAILED", "no secret on stdin");
  return text;
}

/**
 * A token endpoint's answer: strict JSON (duplicate keys refused), `token`
 * and/or `access_token` (both present must agree), optional `expires_in` (s).
 * @returns the token and its expiry (`expires_in` - 10 s, default 60 s).
 * @throws OciError `OCI_RESPONSE_INVALID`.
 */
export function parseTokenResponse(body: Buffer, origin: string): { token: string; expiresAt: number } {
  let obj: Record<string, unknown>;
  try {
    obj = parseStrictJson(body, { rejectIntegralFloats: false });
  } catch {
    throw new OciError("OCI_RESPONSE_INVALID", `token endpoint ${origin} did not answer a JSON object (duplicate keys are refused)`);
  }
  const candidates = [obj["token"], obj["access_token"]].filter((t) => t !== undefined && t !== "");
  const token = candidates[0];
  if (candidates.length === 2 && candidates[0] !== candidates[1]) {
    throw new OciError("OCI_RESPONSE_INVALID", `token endpoint ${origin} answered two different tokens (token and access_token)`);
  }
  if (typeof token !== "string" || /[\r\n]/.test(token)) {
    throw new OciError("OCI_RESPONSE_INVALID", `token endpoint ${origin} answered without a token`);
  }
  const expiresIn = typeof obj["expires_in"] === "number" && obj["expires_in"] > 0 ? obj["expires_in"] : 60;
  return { token, expiresAt: Date.now() + Math.max(1, expiresIn - 10) * 1000 };
}
