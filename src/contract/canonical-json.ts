/**
 * Canonical JSON: the one serialiser and the one strict parser used for every
 * document whose bytes are hashed (tested manifest, receipt, OCI manifests,
 * index.json, stage/references output).
 *
 * Serialisation matches Python's `json.dumps(sort_keys=True, ensure_ascii=True)`
 * byte for byte (Python 3 `json` module documentation, `json.dumps`; docs/contract.md
 * "Error codes", strict JSON J1-J4): keys sorted recursively by Unicode code point,
 * every character outside printable ASCII (U+0020..U+007E) escaped as a
 * lowercase `\uXXXX` (astral characters as surrogate pairs), compact separators
 * `,` `:` or 2-space indentation with `": "`, and exactly one trailing `\n`.
 *
 * Numbers follow Python's `json` module too: integers as digits, non-integral
 * numbers as Python's float repr (`1e-05`, not `0.00001`). What cannot be
 * written back exactly is refused, never rounded: the parser refuses an
 * integer beyond 2^53-1 and any number whose value is integral beyond it
 * (`JSON_UNSAFE_INTEGER`), and by default an integral value written as a float
 * (`1.0`, `1e2`: `JSON_AMBIGUOUS_NUMBER`, Python would keep it a float).
 * So for every document the default parser accepts,
 * `canonicalJson(parseStrictJson(text))` equals Python's
 * `json.dumps(json.loads(text), sort_keys=True, separators=(",", ":")) + "\n"`.
 */
import { ReleaseContractError, type ReleaseContractErrorCode } from "./errors.js";
import { describeValue } from "./grammar.js";
import { plainObjectProblem } from "./plain-options.js";
import { nearestName } from "./near-name.js";

/** A JSON value as produced by {@link parseStrictJson}. */
export type JsonValue =
  | null
  | boolean
  | number
  | string
  | JsonValue[]
  | { [key: string]: JsonValue };

/** A JSON object (the only top-level value release documents may have). */
export type JsonObject = { [key: string]: JsonValue };

/**
 * Compare two strings by Unicode code point (Python's `sorted` order).
 * @throws ReleaseContractError `POLICY_INVALID` when `a` or `b` is not a string.
 */
export function compareCodePoints(a: string, b: string): number {
  if (typeof a !== "string" || typeof b !== "string") {
    throw new ReleaseContractError("POLICY_INVALID", `compareCodePoints(a, b): both must be strings, found ${describeValue(a)} and ${describeValue(b)}`);
  }
  const ia = a[Symbol.iterator]();
  const ib = b[Symbol.iterator]();
  for (;;) {
    const ca = ia.next();
    const cb = ib.next();
    if (ca.done === true) return cb.done === true ? 0 : -1;
    if (cb.done === true) return 1;
    const da = ca.value.codePointAt(0) ?? 0;
    const db = cb.value.codePointAt(0) ?? 0;
    if (da !== db) return da < db ? -1 : 1;
  }
}

function escapeString(value: string): string {
  let out = '"';
  for (let i = 0; i < value.length; i += 1) {
    const unit = value.charCodeAt(i);
    if (unit === 0x22) out += '\\"';
    else if (unit === 0x5c) out += "\\\\";
    else if (unit === 0x0a) out += "\\n";
    else if (unit === 0x0d) out += "\\r";
    else if (unit === 0x09) out += "\\t";
    else if (unit === 0x08) out += "\\b";
    else if (unit === 0x0c) out += "\\f";
    else if (unit < 0x20 || unit > 0x7e) out += "\\u" + unit.toString(16).padStart(4, "0");
    else out += value[i];
  }
  return out + '"';
}

/**
 * Python's `repr(float)` of a finite non-integral double: the shortest digits
 * that round-trip (the same digits `Number#toString` finds), written in
 * exponent form `d[.ddd]e±XX` when the decimal point position is <= -4 or
 * > 16, fixed form otherwise (CPython `format_float_short`, mode `r`).
 */
function pythonFloatRepr(value: number): string {
  const m = /^(-?)([0-9]+)(?:\.([0-9]+))?(?:e([+-][0-9]+))?$/.exec(String(value));
  if (m === null) throw new ReleaseContractError("JSON_UNSUPPORTED_VALUE", `canonical JSON cannot encode ${String(value)}`);
  const sign = m[1] as string;
  const whole = (m[2] as string) + (m[3] ?? "");
  const leading = whole.length - whole.replace(/^0+/, "").length;
  const digits = whole.slice(leading).replace(/0+$/, "");
  // value = 0.<digits> x 10^decpt
  const decpt = (m[2] as string).length - leading + Number(m[4] ?? "0");
  if (decpt <= -4 || decpt > 16) {
    const exponent = decpt - 1;
    const mantissa = digits.length === 1 ? digits : `${digits[0]}.${digits.slice(1)}`;
    const magnitude = String(Math.abs(exponent)).padStart(2, "0");
    return `${sign}${mantissa}e${exponent < 0 ? "-" : "+"}${magnitude}`;
  }
  if (decpt <= 0) return `${sign}0.${"0".repeat(-decpt)}${digits}`;
  if (decpt >= digits.length) return `${sign}${digits}${"0".repeat(decpt - digits.length)}.0`;
  return `${sign}${digits.slice(0, decpt)}.${digits.slice(decpt)}`;
}

/**
 * A number as Python's `json.dumps` writes the value `json.loads` gives for
 * the same text: safe integers as integers (`-0` as `0`, an int in Python),
 * non-integral numbers in Python's float repr (`1e-05`, `1.2345678901234568e+16`).
 * An integral value beyond 2^53-1 cannot say whether it was an int (exact in
 * Python, rounded here) or a float, so it is refused instead of rounded.
 */
function formatNumber(value: number): string {
  if (!Number.isFinite(value)) {
    throw new ReleaseContractError("JSON_NON_FINITE", `canonical JSON cannot encode ${String(value)}`);
  }
  if (Number.isInteger(value)) {
    if (!Number.isSafeInteger(value)) {
      throw new ReleaseContractError("JSON_UNSAFE_INTEGER", `canonical JSON cannot encode ${String(value)} exactly: integers beyond 2^53-1 (${Number.MAX_SAFE_INTEGER}) lose digits in JavaScript`);
    }
    return Object.is(value, -0) ? "0" : String(value);
  }
  return pythonFloatRepr(value);
}

function serialise(value: unknown, indent: number | null, depth: number, seen: Set<object>): string {
  if (value === null) return "null";
  switch (typeof value) {
    case "boolean":
      return value ? "true" : "false";
    case "number":
      return formatNumber(value);
    case "string":
      return escapeString(value);
    case "object":
      break;
    default:
      throw new ReleaseContractError("JSON_UNSUPPORTED_VALUE", `canonical JSON cannot encode a ${typeof value}`);
  }
  const obj = value as object;
  if (seen.has(obj)) throw new ReleaseContractError("JSON_UNSUPPORTED_VALUE", "canonical JSON cannot encode a cycle");
  seen.add(obj);
  const pad = indent === null ? "" : "\n" + " ".repeat(indent * (depth + 1));
  const close = indent === null ? "" : "\n" + " ".repeat(indent * depth);
  const sep = indent === null ? ":" : ": ";
  let out: string;
  if (Array.isArray(obj)) {
    if (obj.length === 0) out = "[]";
    else out = "[" + obj.map((item) => pad + serialise(item, indent, depth + 1, seen)).join(",") + close + "]";
  } else {
    const keys = Object.keys(obj).filter((k) => (obj as Record<string, unknown>)[k] !== undefined);
    keys.sort(compareCodePoints);
    if (keys.length === 0) out = "{}";
    else
      out =
        "{" +
        keys
          .map((k) => pad + escapeString(k) + sep + serialise((obj as Record<string, unknown>)[k], indent, depth + 1, seen))
          .join(",") +
        close +
        "}";
  }
  seen.delete(obj);
  return out;
}

/**
 * Serialise `value` compactly (`,` and `:` separators) with keys sorted
 * recursively and non-ASCII escaped, followed by one `\n`.
 * Registry-bound bytes (OCI manifests, receipts, stage/references output) use this.
 *
 * Properties whose value is `undefined` are omitted. Numbers are written as
 * Python writes them (see the module comment).
 * @throws ReleaseContractError `JSON_NON_FINITE` for NaN/Infinity,
 *   `JSON_UNSAFE_INTEGER` for an integral number beyond 2^53-1,
 *   `JSON_UNSUPPORTED_VALUE` for functions, bigint, symbols or cycles.
 */
export function canonicalJson(value: unknown): string {
  return serialise(value, null, 0, new Set()) + "\n";
}

/**
 * Same as {@link canonicalJson} but indented by 2 spaces with `": "` after keys
 * (the tested `release-manifest.json` form, docs/contract.md).
 */
export function canonicalJsonPretty(value: unknown): string {
  return serialise(value, 2, 0, new Set()) + "\n";
}

/** UTF-8 bytes of {@link canonicalJson}. */
export function canonicalJsonBytes(value: unknown): Buffer {
  return Buffer.from(canonicalJson(value), "utf8");
}

/**
 * How `bytes` differ from `canonical` (the {@link canonicalJson} text of the value they parse to), in a
 * few words for an error message: pretty-printed, a missing or extra line break, raw non-ASCII, spaces
 * between tokens, keys in another order, or the first byte that differs.
 */
export function canonicalFormDifference(bytes: Uint8Array, canonical: string): string {
  const text = Buffer.from(bytes).toString("utf8");
  const body = text.replace(/\s+$/, "");
  const tail = text.slice(body.length);
  if (/\n[ \t]*["}\]]/.test(body)) return "pretty-printed JSON (line breaks and indentation)";
  if (/[\r\n]/.test(body)) return "a line break inside the JSON";
  if (tail === "") return "no trailing newline";
  if (tail === "\r\n") return "a CRLF line ending";
  if (tail !== "\n") return `${JSON.stringify(tail)} after the JSON (canonical JSON ends with exactly one newline)`;
  // eslint-disable-next-line no-control-regex
  if (/[^\x00-\x7f]/.test(text)) return "non-ASCII characters written as is (canonical JSON escapes them as \\uXXXX)";
  if (text.length > canonical.length && /^[{[]\s|[,:]\s/.test(text)) return "spaces between tokens";
  if ([...text].sort().join("") === [...canonical].sort().join("")) return "keys in another order (canonical JSON sorts keys by code point)";
  const at = [...text].findIndex((char, i) => char !== canonical[i]);
  return `other bytes than the canonical form (first difference at character ${at + 1})`;
}

/** Options of {@link parseStrictJson}. */
export interface StrictJsonOptions {
  /**
   * When true (the default), a number written with a fraction or exponent
   * (`1.0`, `1e0`) whose value is an integer is refused with
   * `JSON_AMBIGUOUS_NUMBER`, so integer fields cannot be smuggled as floats
   * (porting hazard 9.2). Set false for foreign documents (GitHub API bodies)
   * that are read for their values only: such a value re-serialises as an
   * integer (`1`), where Python would keep the float (`1.0`).
   */
  rejectIntegralFloats?: boolean;
  /** When true (the default) the top-level value must be an object. */
  requireObject?: boolean;
  /** Maximum nesting depth (default 64): deeper input fails with `JSON_TOO_DEEP`. */
  maxDepth?: number;
}

class Parser {
  private pos = 0;
  constructor(
    private readonly text: string,
    private readonly opts: Required<StrictJsonOptions>,
  ) {}

  fail(code: ReleaseContractErrorCode, what: string): never {
    throw new ReleaseContractError(code, `${what} at offset ${this.pos}`);
  }

  skipWs(): void {
    for (;;) {
      const c = this.text.charCodeAt(this.pos);
      if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) this.pos += 1;
      else return;
    }
  }

  parseDocument(): JsonValue {
    this.skipWs();
    const value = this.parseValue(0);
    this.skipWs();
    if (this.pos !== this.text.length) this.fail("JSON_SYNTAX", "invalid JSON: unexpected trailing data");
    return value;
  }

  parseValue(depth: number): JsonValue {
    if (depth > this.opts.maxDepth) this.fail("JSON_TOO_DEEP", `invalid JSON: nesting deeper than ${this.opts.maxDepth}`);
    const c = this.text[this.pos];
    switch (c) {
      case "{":
        return this.parseObject(depth);
      case "[":
        return this.parseArray(depth);
      case '"':
        return this.parseString();
      case "t":
        return this.literal("true", true);
      case "f":
        return this.literal("false", false);
      case "n":
        return this.literal("null", null);
      case "N":
        if (this.text.startsWith("NaN", this.pos)) this.fail("JSON_NON_FINITE", "invalid JSON: NaN is not JSON");
        break;
      case "I":
        if (this.text.startsWith("Infinity", this.pos)) this.fail("JSON_NON_FINITE", "invalid JSON: Infinity is not JSON");
        break;
      case "-":
        if (this.text.startsWith("-Infinity", this.pos)) this.fail("JSON_NON_FINITE", "invalid JSON: -Infinity is not JSON");
        return this.parseNumber();
      default:
        if (c !== undefined && c >= "0" && c <= "9") return this.parseNumber();
    }
    if (c === undefined) this.fail("JSON_SYNTAX", "invalid JSON: unexpected end of input");
    this.fail("JSON_SYNTAX", `invalid JSON: unexpected character ${JSON.stringify(c)}`);
  }

  literal<T extends JsonValue>(word: string, value: T): T {
    if (!this.text.startsWith(word, this.pos)) this.fail("JSON_SYNTAX", "invalid JSON: bad literal");
    this.pos += word.length;
    return value;
  }

  parseNumber(): number {
    const re = /-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/y;
    re.lastIndex = this.pos;
    const m = re.exec(this.text);
    if (m === null) this.fail("JSON_SYNTAX", "invalid JSON: bad number");
    const value = Number(m[0]);
    const written = m[0].length > 40 ? `${m[0].slice(0, 37)}...` : m[0];
    if (m[1] === undefined && m[2] === undefined && !Number.isSafeInteger(value)) {
      this.fail("JSON_UNSAFE_INTEGER", `invalid JSON: integer ${written} is beyond 2^53-1 and would be rounded`);
    }
    if (!Number.isFinite(value)) this.fail("JSON_NON_FINITE", "invalid JSON: number out of range");
    if (Number.isInteger(value) && !Number.isSafeInteger(value)) {
      this.fail("JSON_UNSAFE_INTEGER", `invalid JSON: number ${written} has the integral value ${String(value)}, beyond 2^53-1, which canonical JSON cannot write back exactly`);
    }
    if (this.opts.rejectIntegralFloats && (m[1] !== undefined || m[2] !== undefined) && Number.isInteger(value)) {
      this.fail("JSON_AMBIGUOUS_NUMBER", `invalid JSON: integer written as ${m[0]}`);
    }
    this.pos += m[0].length;
    return value;
  }

  parseString(): string {
    this.pos += 1;
    let out = "";
    let start = this.pos;
    for (;;) {
      const c = this.text.charCodeAt(this.pos);
      if (Number.isNaN(c)) this.fail("JSON_SYNTAX", "invalid JSON: unterminated string");
      if (c === 0x22) {
        out += this.text.slice(start, this.pos);
        this.pos += 1;
        return out;
      }
      if (c < 0x20) this.fail("JSON_SYNTAX", "invalid JSON: control character in string");
      if (c === 0x5c) {
        out += this.text.slice(start, this.pos);
        const e = this.text[this.pos + 1];
        const simple: Record<string, string> = { '"': '"', "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" };
        if (e !== undefined && simple[e] !== undefined) {
          out += simple[e];
          this.pos += 2;
        } else if (e === "u") {
          const hex = this.text.slice(this.pos + 2, this.pos + 6);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) this.fail("JSON_SYNTAX", "invalid JSON: bad \\u escape");
          out += String.fromCharCode(parseInt(hex, 16));
          this.pos += 6;
        } else {
          this.fail("JSON_SYNTAX", "invalid JSON: bad escape");
        }
        start = this.pos;
        continue;
      }
      this.pos += 1;
    }
  }

  parseArray(depth: number): JsonValue[] {
    this.pos += 1;
    const out: JsonValue[] = [];
    this.skipWs();
    if (this.text[this.pos] === "]") {
      this.pos += 1;
      return out;
    }
    for (;;) {
      this.skipWs();
      out.push(this.parseValue(depth + 1));
      this.skipWs();
      const c = this.text[this.pos];
      if (c === ",") this.pos += 1;
      else if (c === "]") {
        this.pos += 1;
        return out;
      } else this.fail("JSON_SYNTAX", "invalid JSON: expected ',' or ']'");
    }
  }

  parseObject(depth: number): JsonObject {
    this.pos += 1;
    const out: JsonObject = {};
    const keys = new Set<string>();
    this.skipWs();
    if (this.text[this.pos] === "}") {
      this.pos += 1;
      return out;
    }
    for (;;) {
      this.skipWs();
      if (this.text[this.pos] !== '"') this.fail("JSON_SYNTAX", "invalid JSON: expected a string key");
      const keyPos = this.pos;
      const key = this.parseString();
      if (keys.has(key)) {
        this.pos = keyPos;
        this.fail("JSON_DUPLICATE_KEY", `duplicate JSON key: ${JSON.stringify(key)}`);
      }
      keys.add(key);
      this.skipWs();
      if (this.text[this.pos] !== ":") this.fail("JSON_SYNTAX", "invalid JSON: expected ':'");
      this.pos += 1;
      this.skipWs();
      const value = this.parseValue(depth + 1);
      Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
      this.skipWs();
      const c = this.text[this.pos];
      if (c === ",") this.pos += 1;
      else if (c === "}") {
        this.pos += 1;
        return out;
      } else this.fail("JSON_SYNTAX", "invalid JSON: expected ',' or '}'");
    }
  }
}

const STRICT_JSON_OPTION_KEYS = ["rejectIntegralFloats", "requireObject", "maxDepth"] as const;

/** Refuses options of another shape than {@link StrictJsonOptions} (a `null`, a number, a misspelt key, a string `maxDepth`). */
function strictJsonOptionsCheck(options: unknown): void {
  const fail = (message: string): never => {
    throw new ReleaseContractError("POLICY_INVALID", `parseStrictJson(input, options): ${message}; expected { rejectIntegralFloats?: boolean, requireObject?: boolean, maxDepth?: number }`);
  };
  const problem = plainObjectProblem(options, "options");
  if (problem !== undefined) fail(problem);
  const given = options as Record<string, unknown>;
  for (const key of Object.keys(given)) {
    if ((STRICT_JSON_OPTION_KEYS as readonly string[]).includes(key)) continue;
    const near = nearestName(key, STRICT_JSON_OPTION_KEYS);
    fail(`options has ${describeValue(key)}, which it does not read${near === undefined ? "" : ` (did you mean ${JSON.stringify(near)}?)`}`);
  }
  for (const key of ["rejectIntegralFloats", "requireObject"] as const) {
    if (given[key] !== undefined && typeof given[key] !== "boolean") fail(`options.${key} must be a boolean, found ${describeValue(given[key])}`);
  }
  const depth = given["maxDepth"];
  if (depth !== undefined && (typeof depth !== "number" || !Number.isSafeInteger(depth) || depth < 1)) fail(`options.maxDepth must be a whole number >= 1, found ${describeValue(depth)}`);
}

/**
 * Strictly parse JSON bytes or text.
 *
 * Stricter than `JSON.parse`: refuses duplicate keys at any depth
 * (`JSON_DUPLICATE_KEY`, check J2), `NaN`/`Infinity` (`JSON_NON_FINITE`),
 * a byte-order mark (`JSON_BOM`), bytes that are not UTF-8
 * (`JSON_INVALID_UTF8`), a non-object top level (`JSON_NOT_OBJECT`, J3, unless
 * `requireObject: false`), integral floats such as `1.0` (`JSON_AMBIGUOUS_NUMBER`,
 * unless disabled), nesting beyond `maxDepth` (`JSON_TOO_DEEP`) and any other
 * syntax error (`JSON_SYNTAX`). Integers beyond 2^53-1, and numbers whose
 * value is integral beyond it, are refused with `JSON_UNSAFE_INTEGER`
 * instead of being rounded. A key `__proto__` is stored as an own property.
 *
 * @param input UTF-8 bytes or an already decoded string.
 * @throws ReleaseContractError with one of the codes above; `JSON_SYNTAX` for an `input` that is neither bytes
 *   nor text; `POLICY_INVALID` for `options` that are not a plain object of `rejectIntegralFloats` (boolean),
 *   `requireObject` (boolean) and `maxDepth` (a whole number >= 1).
 */
export function parseStrictJson(input: Uint8Array | string, options: StrictJsonOptions & { requireObject: false }): JsonValue;
export function parseStrictJson(input: Uint8Array | string, options?: StrictJsonOptions): JsonObject;
export function parseStrictJson(input: Uint8Array | string, options: StrictJsonOptions = {}): JsonValue {
  strictJsonOptionsCheck(options);
  const opts: Required<StrictJsonOptions> = {
    rejectIntegralFloats: options.rejectIntegralFloats ?? true,
    requireObject: options.requireObject ?? true,
    maxDepth: options.maxDepth ?? 64,
  };
  let text: string;
  if (typeof input === "string") {
    text = input;
  } else {
    // A caller without types (plain JavaScript) may hand anything: a coded refusal, not a TypeError.
    if (!(input instanceof Uint8Array)) throw new ReleaseContractError("JSON_SYNTAX", `invalid JSON input: expected the document's bytes (a Uint8Array or Buffer) or its text, found ${input === null ? "null" : typeof input}`);
    if (input.length >= 3 && input[0] === 0xef && input[1] === 0xbb && input[2] === 0xbf) {
      throw new ReleaseContractError("JSON_BOM", "invalid JSON: a byte-order mark is not allowed");
    }
    try {
      text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(input);
    } catch {
      throw new ReleaseContractError("JSON_INVALID_UTF8", "invalid JSON: bytes are not valid UTF-8");
    }
  }
  if (text.charCodeAt(0) === 0xfeff) throw new ReleaseContractError("JSON_BOM", "invalid JSON: a byte-order mark is not allowed");
  const value = new Parser(text, opts).parseDocument();
  if (opts.requireObject && (value === null || typeof value !== "object" || Array.isArray(value))) {
    throw new ReleaseContractError("JSON_NOT_OBJECT", `JSON document must be an object, found ${Array.isArray(value) ? "an array" : value === null ? "null" : typeof value}`);
  }
  return value;
}
