import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  configureStderrLogging,
  credentialIdentityHash,
  KitLogger,
  loadPluginConfig,
  logObservabilityEvent,
  newCorrelationId,
  ObservabilityEvent,
  PluginKitError,
  redactArguments,
  redactText,
  resolveCapabilitySelection,
  resolvePluginRoot,
  safeArguments,
  setLogSink,
  setStderrLogLevel,
  stderrLogLevel,
} from "../../src/kit/index.js";


afterEach(() => setStderrLogLevel("WARNING"));

describe("credential identity and correlation ids (Python kit observability)", () => {
  it.each([
    ["test", "sha256:8007bafd6bee5a61"],
    ["sk-abc", "sha256:1d4429a4a890ee4c"],
    ["hunter2", "sha256:b6de70dae582a444"],
  ])("hashes %s", (secret, hash) => {
    expect(credentialIdentityHash(secret)).toBe(hash);
    expect(credentialIdentityHash(Buffer.from(secret))).toBe(hash);
  });
  it("refuses empty and non-string credentials", () => {
    expect(() => credentialIdentityHash("")).toThrowWithCode(PluginKitError, "CREDENTIAL_INVALID");
    expect(() => credentialIdentityHash(5 as never)).toThrowWithCode(PluginKitError, "CREDENTIAL_INVALID");
  });
  it("makes 32-hex correlation ids", () => {
    const a = newCorrelationId();
    expect(a).toMatch(/^[0-9a-f]{32}$/);
    expect(newCorrelationId()).not.toBe(a);
  });
});

describe("observability events", () => {
  it("redacts text, escapes control characters", () => {
    expect(redactText("Authorization: Bearer abc.def")).toBe("Authorization: Bearer ***");
    expect(redactText("api_key=XYZ123 and password: hunter2")).toBe("api_key=*** and password=***");
    expect(redactText(`key AIza${"a".repeat(30)} and sk-${"b".repeat(20)}`)).toBe("key *** and ***");
    expect(redactText("line1\nline2\r\u0007")).toBe("line1\\nline2\\r\\u0007");
  });
  it("emits fields in schema order, omits absent ones, bounds and redacts", () => {
    const event = new ObservabilityEvent({
      plugin: "p",
      event: "call",
      correlationId: "c1",
      tool: "t",
      status: "ok",
      httpStatus: 200,
      errorMessage: "x".repeat(600),
      elapsedMs: 1.23456,
      model: "m".repeat(300),
      attributes: { api_token: "s3cr3t", nested: { password: "p", list: Array.from({ length: 30 }, (_, i) => i) }, deep: { a: { b: { c: { d: { e: 1 } } } } } },
    });
    const dict = event.asDict();
    expect(Object.keys(dict)).toEqual(["schema", "event", "correlation_id", "plugin", "tool", "model", "status", "http_status", "error_message", "elapsed_ms", "attributes"]);
    expect(dict["schema"]).toBe("hermes.plugin.observability.v1");
    expect(dict["elapsed_ms"]).toBe(1.23);
    expect((dict["error_message"] as string).length).toBe(512);
    expect((dict["model"] as string).endsWith("…")).toBe(true);
    const attributes = dict["attributes"] as Record<string, any>;
    expect(attributes["api_token"]).toBe("***");
    expect(attributes["nested"]["password"]).toBe("***");
    expect(attributes["nested"]["list"]).toHaveLength(25);
    expect(attributes["nested"]["list"][24]).toBe("<6 more>");
    expect(attributes["deep"]["a"]["b"]["c"]["d"]).toBe("<max-depth>");
    expect(JSON.stringify(dict)).not.toContain("s3cr3t");
  });
  it("truncates large attribute maps", () => {
    const many = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`k${i}`, "v".repeat(60)]));
    const attributes = new ObservabilityEvent({ plugin: "p", event: "e", attributes: many }).asDict()["attributes"] as Record<string, unknown>;
    expect(attributes["_truncated"]).toBe(true);
    expect(String(attributes["preview"]).endsWith("…")).toBe(true);
  });
  it("validates fields", () => {
    expect(() => new ObservabilityEvent({ plugin: " ", event: "e" })).toThrowWithCode(PluginKitError, "OBSERVABILITY_INVALID");
    expect(() => new ObservabilityEvent({ plugin: "p", event: "e", httpStatus: 99 })).toThrowWithCode(PluginKitError, "OBSERVABILITY_INVALID");
    expect(() => new ObservabilityEvent({ plugin: "p", event: "e", elapsedMs: -1 })).toThrowWithCode(PluginKitError, "OBSERVABILITY_INVALID");
    expect(() => new ObservabilityEvent({ plugin: "p", event: "e", attributes: [] as never })).toThrowWithCode(PluginKitError, "OBSERVABILITY_INVALID");
  });
  it("logs WARNING for failure statuses and INFO otherwise", () => {
    const lines: string[] = [];
    const previous = setLogSink((line) => lines.push(line));
    try {
      setStderrLogLevel("INFO");
      const logger = new KitLogger("p");
      logObservabilityEvent(logger, new ObservabilityEvent({ plugin: "p", event: "e", status: "Failed" }));
      logObservabilityEvent(logger, new ObservabilityEvent({ plugin: "p", event: "e", status: "ok" }));
      const logged = logObservabilityEvent(logger, new ObservabilityEvent({ plugin: "p", event: "e".repeat(20000), correlationId: "c", status: "ok" }));
      expect(logged).toEqual({ schema: "hermes.plugin.observability.v1", event: "e".repeat(255) + "…", correlation_id: "c", plugin: "p", status: "ok" });
    } finally {
      setLogSink(previous);
    }
    expect(lines[0]).toMatch(/ WARNING p hermes_plugin_observability \{"schema":"hermes.plugin.observability.v1"/);
    expect(lines[1]).toMatch(/ INFO p hermes_plugin_observability /);
  });
});

describe("logging (Python kit redaction; Python kit config and logging helpers)", () => {
  it("redacts secret-looking keys at any depth and truncates to 200 characters", () => {
    expect(redactArguments({ auth: { api_key: "s3cr3t" }, list: [{ Token: "t" }], author: "x", ok: 1 })).toEqual({ auth: "***", list: [{ Token: "***" }], author: "***", ok: 1 });
    expect(redactArguments({ outer: { api_key: "s3cr3t", PASSWD: "p" } })).toEqual({ outer: { api_key: "***", PASSWD: "***" } });
    const long = safeArguments({ text: "x".repeat(500) });
    expect(Array.from(long)).toHaveLength(201);
    expect(long.endsWith("…")).toBe(true);
  });
  it("sets the level from an operator flag", () => {
    const name = "HPK_TEST_LOG_LEVEL";
    const cases: Array<[string | undefined, string]> = [["debug", "DEBUG"], ["1", "INFO"], ["TRUE", "INFO"], ["off", "WARNING"], ["error", "ERROR"], [undefined, "WARNING"]];
    for (const [value, level] of cases) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
      expect(configureStderrLogging({ envVar: name })).toBe(level);
      expect(stderrLogLevel()).toBe(level);
    }
    delete process.env[name];
    expect(configureStderrLogging({ envVar: name, default: "info" })).toBe("INFO");
    const previous = setLogSink(() => undefined);
    try {
      process.env[name] = "loud";
      expect(configureStderrLogging({ envVar: name })).toBe("WARNING");
    } finally {
      setLogSink(previous);
      delete process.env[name];
    }
    expect(() => configureStderrLogging({ envVar: "" })).toThrowWithCode(PluginKitError, "LOGGING_INVALID");
    expect(() => configureStderrLogging({ envVar: name, default: "chatty" as never })).toThrowWithCode(PluginKitError, "LOGGING_INVALID");
  });
});

describe("capability selection (Python kit resolve_capability_selection)", () => {
  const groups = { math: ["calculate"], units: ["unit_convert"] };
  const names = ["unit_convert", "calculate", "extra"];
  it("resolves capabilities, names, or everything", () => {
    expect(resolveCapabilitySelection(names, { capabilityGroups: groups, enabledCapabilities: ["units", " math"] })).toEqual({ capabilities: ["math", "units"], names: ["calculate", "unit_convert"] });
    expect(resolveCapabilitySelection(names, { capabilityGroups: groups, enabledNames: ["extra"] })).toEqual({ capabilities: [], names: ["extra"] });
    expect(resolveCapabilitySelection(names, { capabilityGroups: groups })).toEqual({ capabilities: [], names: ["calculate", "extra", "unit_convert"] });
  });
  it("fails on unknown names, capabilities and conflicts", () => {
    expect(() => resolveCapabilitySelection(names, { capabilityGroups: { x: ["nope"] } })).toThrowWithCode(PluginKitError, "CAPABILITY_NAME_UNKNOWN");
    expect(() => resolveCapabilitySelection(names, { capabilityGroups: groups, enabledCapabilities: ["nope"] })).toThrowWithCode(PluginKitError, "CAPABILITY_UNKNOWN");
    expect(() => resolveCapabilitySelection(names, { capabilityGroups: groups, enabledNames: ["nope"] })).toThrowWithCode(PluginKitError, "CAPABILITY_NAME_UNKNOWN");
    expect(() => resolveCapabilitySelection(names, { capabilityGroups: groups, enabledNames: [], enabledCapabilities: [] })).toThrowWithCode(PluginKitError, "CAPABILITY_CONFLICT");
    expect(() => resolveCapabilitySelection(names, { capabilityGroups: groups, enabledNames: [" "] })).toThrowWithCode(PluginKitError, "CAPABILITY_INVALID");
  });
});

describe("loadPluginConfig", () => {
  const saved = { root: process.env["PLUGIN_ROOT"], data: process.env["PLUGIN_DATA"] };
  afterEach(() => {
    for (const [key, value] of [["PLUGIN_ROOT", saved.root], ["PLUGIN_DATA", saved.data]] as const) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  });
  it("merges package defaults with operator settings", () => {
    const base = mkdtempSync(path.join(os.tmpdir(), "hpk-config-"));
    try {
      mkdirSync(path.join(base, "root"));
      mkdirSync(path.join(base, "data"));
      writeFileSync(path.join(base, "root", "config.json"), '{"units":"metric","capabilities":["math"]}');
      writeFileSync(path.join(base, "data", "config.json"), '{"capabilities":["units"]}');
      process.env["PLUGIN_ROOT"] = path.join(base, "root");
      process.env["PLUGIN_DATA"] = path.join(base, "data");
      expect(resolvePluginRoot()).toBe(path.join(base, "root"));
      const config = loadPluginConfig();
      expect(config.settings).toEqual({ units: "metric", capabilities: ["units"] });
      expect(config.sources).toHaveLength(2);
      writeFileSync(path.join(base, "data", "config.json"), '{"threshold":1.0,"ratio":0.5}');
      expect(loadPluginConfig().settings).toMatchObject({ threshold: 1, ratio: 0.5 });
      writeFileSync(path.join(base, "data", "config.json"), '{"a":1,"a":2}');
      expect(() => loadPluginConfig()).toThrowWithCode(PluginKitError, "CONFIG_INVALID");
      writeFileSync(path.join(base, "data", "config.json"), "[1]");
      expect(() => loadPluginConfig()).toThrowWithCode(PluginKitError, "CONFIG_INVALID");
      delete process.env["PLUGIN_DATA"];
      expect(loadPluginConfig()).toMatchObject({ data: null, settings: { units: "metric" } });
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });
});
