/**
 * A raw newline-delimited JSON-RPC session with a stdio server, for tests
 * that must see every byte the server writes to stdout (the SDK client
 * hides non-protocol lines behind `onerror`).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { closeChild, followLines } from "./child-lines.js";

/** Every stdout line of the session, parsed or not. */
export interface RawLine {
  text: string;
  json?: Record<string, unknown>;
}

/** An open session. */
export interface RawSession {
  child: ChildProcess;
  lines: RawLine[];
  stderr(): string;
  request(method: string, params?: Record<string, unknown>, timeoutMs?: number): Promise<Record<string, unknown>>;
  notify(method: string, params?: Record<string, unknown>): void;
  /** initialize + notifications/initialized; resolves to the initialize result. */
  initialize(): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

/** Start `node <script>` with exactly `env` in `cwd` and speak JSON-RPC to it. */
export function rawSession(script: string, env: Record<string, string>, cwd: string): RawSession {
  const child = spawn(process.execPath, [script], { cwd, env, stdio: ["pipe", "pipe", "pipe"] });
  const lines: RawLine[] = [];
  const pending = new Map<number, (message: Record<string, unknown>) => void>();
  const stderr = followLines(child, (text) => {
    let json: Record<string, unknown> | undefined;
    try {
      json = JSON.parse(text) as Record<string, unknown>;
    } catch {
      json = undefined;
    }
    lines.push(json ? { text, json } : { text });
    if (json && typeof json["id"] === "number") pending.get(json["id"])?.(json);
  });
  let nextId = 1;
  const session: RawSession = {
    child,
    lines,
    stderr,
    request(method, params, timeoutMs = 15_000) {
      const id = nextId++;
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${method} timed out; stderr: ${stderr().slice(-500)}`)), timeoutMs);
        pending.set(id, (message) => {
          clearTimeout(timer);
          resolve(message);
        });
        child.stdin?.write(JSON.stringify({ jsonrpc: "2.0", id, method, ...(params ? { params } : {}) }) + "\n");
      });
    },
    notify(method, params) {
      child.stdin?.write(JSON.stringify({ jsonrpc: "2.0", method, ...(params ? { params } : {}) }) + "\n");
    },
    async initialize() {
      const answer = await session.request("initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw-test", version: "1" } });
      session.notify("notifications/initialized");
      return answer["result"] as Record<string, unknown>;
    },
    close: () => closeChild(child, 2000),
  };
  return session;
}

/** The text of a `tools/call` answer. */
export function resultText(message: Record<string, unknown>): string {
  const result = message["result"] as { content?: Array<{ text?: string }> } | undefined;
  return (result?.content ?? []).map((block) => block.text ?? "").join("\n");
}
