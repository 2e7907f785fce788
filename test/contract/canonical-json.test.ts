import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { createHash } from "node:crypto";
import { canonicalJson, canonicalJsonPretty, parseStrictJson, compareCodePoints } from "../../src/contract/canonical-json.js";
import { hasCode } from "../../src/contract/errors.js";
import { pythonJsonDumps } from "../support/python-json.js";

describe("canonicalJson", () => {
  it("sorts keys recursively, compact, one trailing newline", () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: null } })).toBe('{"a":{"c":null,"d":[3,{"y":2,"z":1}]},"b":1}\n');
  });
  it("escapes non-ASCII and DEL as lowercase \\u escapes like Python ensure_ascii", () => {
    expect(canonicalJson({ k: "é\u007f😀\u0001\n" })).toBe('{"k":"\\u00e9\\u007f\\ud83d\\ude00\\u0001\\n"}\n');
  });
  it("pretty form uses 2-space indent and ': '", () => {
    expect(canonicalJsonPretty({ b: [], a: { x: [1] }, c: {} })).toBe('{\n  "a": {\n    "x": [\n      1\n    ]\n  },\n  "b": [],\n  "c": {}\n}\n');
  });
  it("sorts keys by code point, not UTF-16 unit", () => {
    const keys = ["\uffff", "\u{10000}"];
    expect(Object.keys(parseStrictJson(canonicalJson({ [keys[0]!]: 1, [keys[1]!]: 2 })))).toEqual(keys);
    expect(compareCodePoints("\uffff", "\u{10000}")).toBe(-1);
  });
  it("hashes the bootstrap manifest to the reference digest", () => {
    const manifest = {
      schemaVersion: 2,
      mediaType: "application/vnd.oci.image.manifest.v1+json",
      artifactType: "application/vnd.hermes-plugin-kit.private-bootstrap.v1",
      config: {
        mediaType: "application/vnd.oci.empty.v1+json",
        digest: "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a",
        size: 2,
      },
      layers: [],
    };
    const bytes = Buffer.from(canonicalJson(manifest));
    expect(bytes.length).toBe(312);
    expect("sha256:" + createHash("sha256").update(bytes).digest("hex")).toBe(
      "sha256:2c83e94c3884c6aea03e57999e7833e8444d8ea6860a5df81a8af216e9ec884e",
    );
  });
  it("refuses NaN and Infinity", () => {
    expect(() => canonicalJson({ a: NaN })).toThrowWithCode("JSON_NON_FINITE");
    expect(() => canonicalJson({ a: Infinity })).toThrowWithCode("JSON_NON_FINITE");
  });
});

describe("parseStrictJson", () => {
  it("parses a valid object", () => {
    expect(parseStrictJson(Buffer.from('{"a":[1,"x",true,null],"b":{"c":-2.5}}'))).toEqual({ a: [1, "x", true, null], b: { c: -2.5 } });
  });
  it.each([
    ['{"a":1,"a":2}', "JSON_DUPLICATE_KEY"],
    ['{"a":{"b":1,"c":{"d":1,"d":1}}}', "JSON_DUPLICATE_KEY"],
    ['{"a":[{"x":1,"x":1}]}', "JSON_DUPLICATE_KEY"],
    ['{"a":NaN}', "JSON_NON_FINITE"],
    ['{"a":Infinity}', "JSON_NON_FINITE"],
    ['{"a":-Infinity}', "JSON_NON_FINITE"],
    ["[1,2]", "JSON_NOT_OBJECT"],
    ['"x"', "JSON_NOT_OBJECT"],
    ["null", "JSON_NOT_OBJECT"],
    ['{"a":1.0}', "JSON_AMBIGUOUS_NUMBER"],
    ['{"a":1e2}', "JSON_AMBIGUOUS_NUMBER"],
    ['{"a":1,}', "JSON_SYNTAX"],
    ['{"a":01}', "JSON_SYNTAX"],
    ["{'a':1}", "JSON_SYNTAX"],
    ['{"a":1} x', "JSON_SYNTAX"],
    ["", "JSON_SYNTAX"],
  ])("refuses %s with %s", (text, code) => {
    expect(() => parseStrictJson(Buffer.from(text))).toThrowWithCode(code);
  });
  it("refuses a UTF-8 BOM", () => {
    expect(() => parseStrictJson(Buffer.from([0xef, 0xbb, 0xbf, 0x7b, 0x7d]))).toThrowWithCode("JSON_BOM");
    expect(() => parseStrictJson("\ufeff{}")).toThrowWithCode("JSON_BOM");
  });
  it("refuses invalid UTF-8", () => {
    expect(() => parseStrictJson(Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]))).toThrowWithCode("JSON_INVALID_UTF8");
  });
  it("refuses nesting beyond the depth limit", () => {
    expect(() => parseStrictJson('{"a":' + "[".repeat(100) + "]".repeat(100) + "}")).toThrowWithCode("JSON_TOO_DEEP");
  });
  it("stores __proto__ as an own key without touching the prototype", () => {
    const value = parseStrictJson('{"__proto__":{"polluted":true}}');
    expect(Object.keys(value)).toEqual(["__proto__"]);
    expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined();
  });
  it("accepts integral floats when asked (foreign documents)", () => {
    expect(parseStrictJson('{"a":1.0}', { rejectIntegralFloats: false })).toEqual({ a: 1 });
  });
  it("reports codes through hasCode", () => {
    let error: unknown;
    try {
      parseStrictJson('{"a":1,"a":1}');
    } catch (caught) {
      error = caught;
    }
    expect(hasCode(error, "JSON_DUPLICATE_KEY")).toBe(true);
    expect(hasCode(error, "JSON_SYNTAX")).toBe(false);
    expect(hasCode(new Error("plain"), "JSON_DUPLICATE_KEY")).toBe(false);
  });
});

const jsonValue = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    fc.constant(null),
    fc.boolean(),
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }).filter((d) => !Number.isInteger(d)),
    fc.string({ unit: "binary" }),
    fc.array(tie("value"), { maxLength: 5 }),
    fc.dictionary(fc.string({ unit: "binary" }), tie("value"), { maxKeys: 5 }),
  ),
})).value;

describe("parseStrictJson options", () => {
  it("an option it does not read is POLICY_INVALID naming the option it meant", () => {
    expect(parseStrictJson("{}", { maxDepth: 3 })).toEqual({});
    expect(() => parseStrictJson("{}", { maxDeph: 3 } as never)).toThrowWithCode("POLICY_INVALID");
    expect(() => parseStrictJson("{}", { maxDeph: 3 } as never)).toThrow('parseStrictJson(input, options): options has "maxDeph", which it does not read (did you mean "maxDepth"?)');
    expect(() => parseStrictJson("{}", { object: true } as never)).toThrow(/options has "object", which it does not read \(did you mean "requireObject"\?\)/);
  });
});

describe("canonical JSON properties", () => {
  it("round-trips: parse(canonical(x)) deep-equals x and re-serialises to the same bytes", () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string({ unit: "binary" }), jsonValue, { maxKeys: 6 }), (doc) => {
        const text = canonicalJson(doc);
        const back = parseStrictJson(text);
        expect(back).toEqual(JSON.parse(JSON.stringify(doc)));
        expect(canonicalJson(back)).toBe(text);
        expect(canonicalJsonPretty(back)).toBe(canonicalJsonPretty(doc));
        expect(/^[\x20-\x7e\n]*$/.test(text)).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });
  it("is independent of key insertion order", () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), jsonValue, { maxKeys: 8 }), (doc) => {
        const reversed = Object.fromEntries(Object.entries(doc).reverse());
        expect(canonicalJson(reversed)).toBe(canonicalJson(doc));
      }),
      { numRuns: 1000 },
    );
  });
  it("agrees with JSON.parse on every canonical output", () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), jsonValue, { maxKeys: 6 }), (doc) => {
        expect(parseStrictJson(canonicalJson(doc))).toEqual(JSON.parse(canonicalJson(doc)));
      }),
      { numRuns: 1000 },
    );
  });
});

describe("canonical JSON numbers agree with Python's json module", () => {
  it("writes the handed non-integral numbers as Python does", () => {
    const texts = ['{"f":0.00001}', '{"f":1e-7}', '{"f":-2.5e-300}', '{"f":0.0001}', '{"f":1234567890123456.7}', '{"f":1.5e-16}', '{"f":98765.4321e3}', '{"f":0.1}'];
    const python = pythonJsonDumps(texts);
    expect(canonicalJson(parseStrictJson(texts[0]!))).toBe('{"f":1e-05}\n');
    expect(canonicalJson(parseStrictJson(texts[1]!))).toBe('{"f":1e-07}\n');
    texts.forEach((text, i) => {
      expect(canonicalJson(parseStrictJson(text))).toBe(python[i]!.dumps);
      expect(canonicalJsonPretty(parseStrictJson(text))).toBe(python[i]!.pretty);
    });
  });
  it.each([
    ['{"run_attempt":9007199254740993}', { rejectIntegralFloats: true }],
    ['{"n":12345678901234567890}', { rejectIntegralFloats: true }],
    ['{"n":-9007199254740992}', { rejectIntegralFloats: true }],
    ['{"f":123456789012345678.5}', { rejectIntegralFloats: false }],
    ['{"f":1e23}', { rejectIntegralFloats: false }],
    ['{"f":1e23}', { rejectIntegralFloats: true }],
    ['{"n":' + "9".repeat(400) + "}", { rejectIntegralFloats: true }],
  ])("refuses %s (%o) instead of rounding: JSON_UNSAFE_INTEGER", (text, options) => {
    expect(() => parseStrictJson(text, options)).toThrowWithCode("JSON_UNSAFE_INTEGER");
  });
  it("keeps the largest safe integers exact", () => {
    expect(canonicalJson(parseStrictJson('{"a":9007199254740991,"b":-9007199254740991}'))).toBe('{"a":9007199254740991,"b":-9007199254740991}\n');
  });
  it("refuses to serialise an integral number beyond 2^53-1 (int or float is unknowable)", () => {
    expect(() => canonicalJson({ n: 2 ** 53 })).toThrowWithCode("JSON_UNSAFE_INTEGER");
    expect(() => canonicalJson({ n: 1e23 })).toThrowWithCode("JSON_UNSAFE_INTEGER");
    expect(() => canonicalJsonPretty({ n: -(2 ** 60) })).toThrowWithCode("JSON_UNSAFE_INTEGER");
    expect(canonicalJson({ n: 2 ** 53 - 1 })).toBe('{"n":9007199254740991}\n');
  });
  it("property: every serialised value equals Python's dumps of the same value", () => {
    const numbers = fc.oneof(
      fc.maxSafeInteger(),
      fc.double({ noNaN: true, noDefaultInfinity: true }).filter((d) => !Number.isInteger(d)),
      fc.double({ min: -1e-3, max: 1e-3, noNaN: true }).filter((d) => !Number.isInteger(d)),
      fc.double({ min: 1e14, max: 1e17, noNaN: true }).filter((d) => !Number.isInteger(d)),
    );
    const docs = fc.sample(fc.dictionary(fc.string(), fc.oneof(numbers, fc.array(numbers, { maxLength: 4 })), { maxKeys: 4 }), 3000);
    // JSON.stringify keeps the exact double; Python parses it to the same value.
    const python = pythonJsonDumps(docs.map((d) => JSON.stringify(d)));
    docs.forEach((doc, i) => {
      expect(canonicalJson(doc)).toBe(python[i]!.dumps);
      expect(canonicalJsonPretty(doc)).toBe(python[i]!.pretty);
    });
  });
  it("property: every number text the parser accepts round-trips to Python's bytes; every refusal is a value JavaScript cannot write back", () => {
    const digits = (min: number, max: number) => fc.string({ unit: fc.constantFrom(..."0123456789"), minLength: min, maxLength: max });
    const numberText = fc
      .tuple(fc.constantFrom("", "-"), fc.oneof(fc.constant("0"), fc.tuple(fc.constantFrom(..."123456789"), digits(0, 22)).map(([a, b]) => a + b)), fc.option(digits(1, 20)), fc.option(fc.tuple(fc.constantFrom("e", "E"), fc.constantFrom("", "+", "-"), fc.integer({ min: 0, max: 330 }))))
      .map(([sign, int, frac, exp]) => `${sign}${int}${frac === null ? "" : "." + frac}${exp === null ? "" : exp[0] + exp[1] + String(exp[2])}`);
    const texts = fc.sample(numberText, 4000).map((n) => `{"n":${n}}`);
    const python = pythonJsonDumps(texts);
    let accepted = 0;
    texts.forEach((text, i) => {
      const answer = python[i]!;
      const kinds = answer.kinds ?? [];
      let code: string | undefined;
      let ours: string | undefined;
      try {
        ours = canonicalJson(parseStrictJson(text));
      } catch (error) {
        code = (error as { code?: string }).code;
      }
      if (code === undefined) {
        accepted += 1;
        expect(ours).toBe(answer.dumps);
      } else if (code === "JSON_UNSAFE_INTEGER") {
        expect(kinds.includes("big-int") || (kinds.includes("integral-float") && Math.abs(Number(JSON.parse(text).n)) > Number.MAX_SAFE_INTEGER)).toBe(true);
      } else if (code === "JSON_AMBIGUOUS_NUMBER") {
        expect(kinds).toEqual(["integral-float"]);
      } else {
        expect(code).toBe("JSON_NON_FINITE");
        expect(answer.dumps).toMatch(/Infinity/);
      }
    });
    expect(accepted).toBeGreaterThan(1000);
  });
});
