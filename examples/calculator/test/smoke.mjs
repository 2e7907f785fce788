#!/usr/bin/env node
/**
 * Dependency-free smoke test of the built package (`npm test`): starts
 * `dist/server.js` the way Hermes does (node, filtered environment,
 * PLUGIN_ROOT), speaks newline-delimited JSON-RPC on stdio and checks the
 * answers and that stdout carries nothing but JSON-RPC. Exit 0 = pass.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const data = mkdtempSync(path.join(os.tmpdir(), "hermes-calculator-smoke-"));
const child = spawn(process.execPath, [path.join(root, "dist", "server.js")], {
  cwd: data, // Hermes does not start servers in the package root (mcp.json sets no cwd)
  env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", PLUGIN_ROOT: root, PLUGIN_DATA: data, CALCULATOR_LOG_LEVEL: "debug" },
  stdio: ["pipe", "pipe", "pipe"],
});
let stderr = "";
child.stderr.on("data", (chunk) => (stderr += chunk));

const pending = new Map();
let buffer = "";
const failures = [];
child.stdout.on("data", (chunk) => {
  buffer += chunk;
  let newline;
  while ((newline = buffer.indexOf("\n")) >= 0) {
    const line = buffer.slice(0, newline);
    buffer = buffer.slice(newline + 1);
    let message;
    try {
      message = JSON.parse(line);
    } catch {
      failures.push(`stdout carried a non-JSON line: ${line.slice(0, 80)}`);
      continue;
    }
    if (message.jsonrpc !== "2.0") failures.push(`stdout carried a non-JSON-RPC message: ${line.slice(0, 80)}`);
    pending.get(message.id)?.(message);
  }
});
let nextId = 1;
function request(method, params) {
  const id = nextId++;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${method} timed out`)), 15000);
    pending.set(id, (message) => {
      clearTimeout(timer);
      resolve(message);
    });
    child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, ...(params ? { params } : {}) }) + "\n");
  });
}
function check(label, condition, detail) {
  if (!condition) failures.push(`${label}: ${detail}`);
  else process.stdout.write(`ok - ${label}\n`);
}
const text = (message) => (message.result?.content ?? []).map((c) => c.text).join("\n");

try {
  const init = await request("initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "smoke", version: "1" } });
  check("initialize", init.result?.serverInfo?.name === "calculator", JSON.stringify(init));
  child.stdin.write(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n");
  const list = await request("tools/list");
  const tools = list.result?.tools ?? [];
  check("tools/list names", tools.map((t) => t.name).join(",") === "calculate,unit_convert", JSON.stringify(tools.map((t) => t.name)));
  check("closed schemas", tools.every((t) => t.inputSchema?.additionalProperties === false), "additionalProperties is not false");
  check("augmented description", tools[0]?.description?.endsWith("Required: `expression` (e.g. '2**10')."), tools[0]?.description);
  const power = await request("tools/call", { name: "calculate", arguments: { expression: "2**16" } });
  check("2**16", text(power) === '{"success":true,"data":{"expression":"2**16","result":65536}}', text(power));
  const missing = await request("tools/call", { name: "calculate", arguments: {} });
  check("missing expression", missing.result?.isError === true && text(missing) === "expression is required (e.g. '2**10')", text(missing));
  const convert = await request("tools/call", { name: "unit_convert", arguments: { value: 100, from_unit: "F", to_unit: "C" } });
  check("100 F -> C", JSON.parse(text(convert) || "{}").data?.result === 37.7778, text(convert));
  const unknown = await request("tools/call", { name: "unit_convert", arguments: { value: 1, from_unit: "parsec-ish", to_unit: "m" } });
  check("unknown unit", unknown.result?.isError === true && text(unknown).startsWith("unit_convert failed: "), text(unknown));
  check("receipt on stderr", stderr.includes("hermes_plugin_kit: registered plugin lifecycle; plugin=hermes-calculator;"), "no registration receipt");
  // The bridge the native companion (host/hermes-calculator-host) uses: methods tools/list does not show.
  const bridge = init.result?.capabilities?.experimental?.["hermes-plugin-kit/bridge"];
  check("bridge capability", bridge?.version === 1 && bridge.hooks?.join() === "pre_tool_call" && bridge.commands?.join() === "calc", JSON.stringify(bridge));
  const long = "1+".repeat(100) + "1";
  const blocked = await request("hermes-plugin-kit/hook", { name: "pre_tool_call", kwargs: { tool_name: "mcp__calculator__calculate", args: { expression: long } } });
  check("pre_tool_call blocks over 200 characters", blocked.result?.value?.action === "block", JSON.stringify(blocked));
  const allowed = await request("hermes-plugin-kit/hook", { name: "pre_tool_call", kwargs: { tool_name: "mcp__calculator__calculate", args: { expression: "2**10" } } });
  check("pre_tool_call allows a short expression", allowed.result?.value === null, JSON.stringify(allowed));
  const calc = await request("hermes-plugin-kit/command", { name: "calc", rawArgs: "2**10" });
  check("/calc 2**10", calc.result?.value === "2**10 = 1024", JSON.stringify(calc));
} catch (error) {
  failures.push(String(error));
} finally {
  child.kill();
  rmSync(data, { recursive: true, force: true });
}
if (failures.length > 0) {
  for (const failure of failures) process.stderr.write(`not ok - ${failure}\n`);
  process.exit(1);
}
process.stdout.write("smoke: all checks passed\n");
