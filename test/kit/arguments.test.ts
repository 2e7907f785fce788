/**
 * Every bad argument is named, one short line each (docs/kit.md, "What a
 * tool call answers"; the Python kit's @tool, extended): missing required keys, wrong types, bounds,
 * patterns, unknown keys, nested objects and array items; the zod path and
 * the envelope error mode too.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  arrayArg,
  boolArg,
  intArg,
  MAX_ARGUMENT_PROBLEM_LINES,
  objectArg,
  strArg,
  tool,
  validateArguments,
  argumentValueProblems,
  type ToolCallResult,
} from "../../src/kit/index.js";
import { captureKitLog } from "./fixtures.js";

const text = (result: ToolCallResult) => result.content.map((c) => c.text).join("\n");
const lines = captureKitLog();

const ZERO_DIGEST = "sha256:" + "0".repeat(64);
const verifyArtifact = tool({
  name: "verify_artifact",
  description: "Verify an artifact.",
  params: {
    digest: strArg("Digest.", { required: true, example: ZERO_DIGEST, pattern: "^sha256:[0-9a-f]{64}$" }),
    size: intArg("Size in bytes.", { required: true, example: 1024, minimum: 0 }),
    media_type: strArg("Media type.", { enum: ["application/octet-stream", "application/json"] }),
    strict: boolArg("Strict mode."),
  },
  handler: (args) => args,
});

describe("every bad argument named (verify_artifact)", () => {
  it("names both bad fields of the handed input, not only the first", async () => {
    const result = await verifyArtifact.call({ digest: "sha256:xyz", size: -1 });
    expect(result.isError).toBe(true);
    expect(text(result)).toBe("digest must match the pattern '^sha256:[0-9a-f]{64}$'\nsize must be >= 0");
    expect(lines.some((line) => line.includes("verify_artifact: rejected call, invalid digest,size;"))).toBe(true);
  });

  it("names every missing required key of {}", async () => {
    expect(text(await verifyArtifact.call({}))).toBe(`digest is required (e.g. '${ZERO_DIGEST}')\nsize is required (e.g. 1024)`);
    expect(lines.some((line) => line.includes("rejected call, missing digest,size;"))).toBe(true);
  });

  it("names missing, wrong-typed and unknown arguments together, in that order", async () => {
    const result = await verifyArtifact.call({ size: "big", strict: "yes", media_type: "text/plain", extra: 1, other: null });
    expect(text(result).split("\n")).toEqual([
      `digest is required (e.g. '${ZERO_DIGEST}')`,
      "size must be integer",
      "media_type must be one of 'application/octet-stream', 'application/json'",
      "strict must be boolean",
      "extra is not an accepted argument (accepted: digest, size, media_type, strict)",
    ]);
    expect(lines.some((line) => line.includes("rejected call, missing digest, invalid size,media_type,strict, unknown extra;"))).toBe(true);
  });

  it("a valid call still reaches the handler", async () => {
    const result = await verifyArtifact.call({ digest: ZERO_DIGEST, size: 0 });
    expect(result.isError).toBeUndefined();
    expect(result.structuredContent).toEqual({ success: true, data: { digest: ZERO_DIGEST, size: 0 } });
  });

  it("answers every problem in the envelope error mode too", async () => {
    const soft = tool({ name: "soft_verify", description: "S.", params: { a: intArg("a", { required: true }), b: intArg("b", { required: true }) }, errorMode: "envelope", handler: () => 1 });
    expect((await soft.call({ b: "x" })).structuredContent).toEqual({ success: false, error: "a is required\nb must be integer" });
  });
});

describe("nested objects and arrays", () => {
  const nested = tool({
    name: "nested_all",
    description: "N.",
    params: {
      cfg: objectArg("cfg", { required: true, properties: { host: strArg("h", { required: true }), port: intArg("p", { minimum: 1 }), tags: arrayArg("t", { items: strArg("tag") }) } }),
      ids: arrayArg("ids", { items: intArg("id"), maxItems: 5 }),
    },
    handler: () => "ok",
  });

  it("names each bad nested field and each bad array item at its own path", async () => {
    const result = await nested.call({ cfg: { port: 0, tags: ["a", 1, true], zone: "x" }, ids: [1, "2", 3.5] });
    expect(text(result).split("\n")).toEqual([
      "cfg.host is required",
      "cfg.port must be >= 1",
      "cfg.tags[1] must be string",
      "cfg.tags[2] must be string",
      "cfg.zone is not an accepted argument (accepted: host, port, tags)",
      "ids[1] must be integer",
      "ids[2] must be integer",
    ]);
  });

  it("one line per field: a field's own problem hides its members' problems", async () => {
    expect(text(await nested.call({ cfg: { host: "h" }, ids: [1, 2, 3, 4, 5, "x"] }))).toBe("ids must have at most 5 items");
  });

  it("caps the answer at the line limit with a count of the rest", () => {
    const big = arrayArg("big", { items: intArg("n") });
    const t = tool({ name: "capped", description: "C.", params: { big }, handler: () => 1 });
    const checked = validateArguments(t.inputSchema, { big: Array.from({ length: 50 }, () => "x") });
    expect(checked.ok).toBe(false);
    if (checked.ok) return;
    expect(checked.problems).toHaveLength(50);
    const shown = checked.message.split("\n");
    expect(shown).toHaveLength(MAX_ARGUMENT_PROBLEM_LINES + 1);
    expect(shown.at(-1)).toBe("... and 30 more problems");
    // Collection itself is bounded on huge inputs.
    const huge = validateArguments(t.inputSchema, { big: Array.from({ length: 5000 }, () => "x") });
    expect(huge.ok || huge.problems.length).toBe(1000);
    expect(huge.ok || huge.message.split("\n").at(-1)).toBe("... and at least 980 more problems");
  });

  it("argumentValueProblems lists every problem of one value", () => {
    expect(argumentValueProblems({ type: "object", properties: { a: { type: "string" }, b: { type: "integer" } }, additionalProperties: false }, { a: 1, b: "x", c: 2 }, "v")).toEqual([
      "v.a must be string",
      "v.b must be integer",
      "v.c is not an accepted argument (accepted: a, b)",
    ]);
  });
});

describe("zod tools name every issue", () => {
  it("answers one line per issue path", async () => {
    const t = tool({
      name: "zod_many",
      description: "Z.",
      zod: z.object({ city: z.string(), days: z.number().int().min(1), tags: z.array(z.string()).optional() }),
      handler: ({ city }) => city,
    });
    // The kit's own schema pass names the type problems first.
    expect(text(await t.call({ city: 3, days: "x" }))).toBe("city must be string\ndays must be integer");
    const refined = tool({
      name: "zod_refined",
      description: "Z.",
      zod: z.object({ a: z.string().refine((v) => v.startsWith("a"), "must start with a"), b: z.string().refine((v) => v.startsWith("b"), "must start with b") }),
      handler: ({ a }) => a,
    });
    expect(text(await refined.call({ a: "x", b: "y" }))).toBe("a: must start with a\nb: must start with b");
  });
});

describe("property: one line per bad field", () => {
  const fields = ["f0", "f1", "f2", "f3", "f4", "f5"];
  const t = tool({
    name: "prop_tool",
    description: "P.",
    params: Object.fromEntries(fields.map((name, index) => [name, index % 2 === 0 ? intArg(name, { required: true, minimum: 0 }) : strArg(name, { required: true, maxLength: 3 })])),
    handler: () => 1,
  });
  it("for any mix of good, missing and bad fields, names exactly the bad ones in declaration order", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.constantFrom("good", "missing", "type", "bound"), { minLength: fields.length, maxLength: fields.length }), async (states) => {
        const args: Record<string, unknown> = {};
        states.forEach((state, index) => {
          const name = fields[index] as string;
          const isInt = index % 2 === 0;
          if (state === "good") args[name] = isInt ? 1 : "ab";
          else if (state === "type") args[name] = isInt ? "1" : 1;
          else if (state === "bound") args[name] = isInt ? -1 : "abcd";
        });
        const result = await t.call(args);
        const bad = states.map((state, index) => (state === "good" ? null : { name: fields[index] as string, state })).filter((x) => x !== null);
        if (bad.length === 0) {
          // Not `return expect(...)`: fast-check reads a returned false as a failed property.
          expect(result.isError).toBeUndefined();
          return;
        }
        const shown = text(result).split("\n");
        const order = [...bad.filter((b) => b.state === "missing"), ...bad.filter((b) => b.state !== "missing")];
        expect(shown.map((line) => line.split(" ", 1)[0])).toEqual(order.map((b) => b.name));
      }),
      { numRuns: 200 },
    );
  });
});
