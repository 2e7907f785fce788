/**
 * hermes-calculator: the `calculate` and `unit_convert` tools of the Hermes
 * plugin guide, written with hermes-plugin-kit. Expressions are evaluated by
 * mathjs' parser (never `eval`) with the functions that could reach outside
 * the expression (import, createUnit, evaluate, parse, ...) disabled.
 *
 * Besides the tools: a `pre_tool_call` hook that blocks `calculate` for an
 * expression over {@link HOOK_EXPRESSION_LIMIT} characters, and a `/calc`
 * slash command. Hermes loads those only from a native plugin, so
 * `plugin build` also writes `host/hermes-calculator-host/`, the companion
 * that forwards them to this server.
 *
 * Build: `hermes-plugin-kit plugin build src/server.ts --out .`
 */
import { all, create, type MathJsInstance } from "mathjs";
import { definePlugin, numberArg, pluginSkill, strArg, tool } from "hermes-plugin-kit";

/**
 * mathjs functions an expression may not call: the ones that reach outside
 * the expression (import, createUnit, evaluate, parse, ...) and the ones
 * that allocate without bound (a model asking for `zeros(1e5, 1e5)` would
 * take the server down).
 */
const DISABLED_FUNCTIONS = [
  "import", "createUnit", "reviver", "evaluate", "parse", "simplify", "derivative", "resolve", "compile",
  "zeros", "ones", "identity", "range", "resize", "diag", "random", "randomInt", "pickRandom",
];

let instance: { math: MathJsInstance; evaluate: MathJsInstance["evaluate"] } | undefined;

/**
 * The mathjs instance, created on first use (creating all of mathjs' typed
 * functions takes a few hundred ms, so the server answers `tools/list`
 * before paying for it). Functions that could reach outside the expression
 * are disabled.
 */
function mathjs(): { math: MathJsInstance; evaluate: MathJsInstance["evaluate"] } {
  if (instance) return instance;
  const math = create(all as NonNullable<typeof all>, { number: "number", precision: 64 });
  const evaluate = math.evaluate.bind(math);
  const disabled = (name: string) => () => {
    throw new Error(`function ${name} is disabled`);
  };
  math.import(
    Object.fromEntries(DISABLED_FUNCTIONS.map((name) => [name, disabled(name)])),
    { override: true },
  );
  instance = { math, evaluate };
  return instance;
}

/** Largest accepted expression, in characters. */
const MAX_EXPRESSION = 500;

function toJsonValue(value: unknown): number | string | boolean {
  if (typeof value === "number" && Number.isFinite(value)) return value;
  if (typeof value === "boolean") return value;
  if (value === undefined || typeof value === "function") throw new Error("expression did not produce a value");
  return mathjs().math.format(value as never, { precision: 14 });
}

/** Evaluate `expression` (`**` read as `^`) to a JSON value. */
function evaluateExpression(expression: string): number | string | boolean {
  return toJsonValue(mathjs().evaluate(expression.replaceAll("**", "^")));
}

export const calculate = tool({
  name: "calculate",
  description: "Evaluate a math expression (arithmetic, powers with ** or ^, functions like sqrt, sin, log).",
  params: {
    expression: strArg("The expression to evaluate, e.g. '2**10' or 'sqrt(16) + 3'.", { required: true, example: "2**10", maxLength: MAX_EXPRESSION }),
  },
  readOnly: true,
  handler: ({ expression }) => {
    const text = String(expression);
    return { expression: text, result: evaluateExpression(text) };
  },
});

/** Short unit names people type, mapped to mathjs units. */
const UNIT_ALIASES: Record<string, string> = {
  f: "degF", fahrenheit: "degF", c: "degC", celsius: "degC", k: "K", kelvin: "K",
  meters: "m", meter: "m", feet: "ft", foot: "ft", inches: "inch", in: "inch", miles: "mi", mile: "mi",
  kilometers: "km", kilometer: "km", pounds: "lb", pound: "lb", lbs: "lb", kilograms: "kg", kilogram: "kg",
  grams: "g", gram: "g", ounces: "oz", ounce: "oz", liters: "l", liter: "l", gallons: "gal", gallon: "gal",
};

function unitName(raw: string): string {
  const trimmed = raw.trim();
  const alias = UNIT_ALIASES[trimmed.toLowerCase()];
  if (alias) return alias;
  if (!mathjs().math.Unit.isValuelessUnit(trimmed)) throw new Error(`unknown unit '${trimmed}'`);
  return trimmed;
}

export const unitConvert = tool({
  name: "unit_convert",
  description: "Convert a value between units of length, mass, volume, temperature and more (F, C, K, m, ft, mi, kg, lb, l, gal, ...).",
  params: {
    value: numberArg("The value to convert.", { required: true, example: 100 }),
    from_unit: strArg("Unit of the value, e.g. 'F', 'km', 'lb'.", { required: true, example: "F" }),
    to_unit: strArg("Unit to convert to, e.g. 'C', 'mi', 'kg'.", { required: true, example: "C" }),
  },
  readOnly: true,
  handler: ({ value, from_unit, to_unit }) => {
    const from = unitName(String(from_unit));
    const to = unitName(String(to_unit));
    const converted = mathjs().math.unit(Number(value), from).toNumber(to);
    return { value, from_unit, to_unit, result: Math.round(converted * 10_000) / 10_000 };
  },
});

/**
 * Longest expression the `pre_tool_call` hook lets through to `calculate`:
 * longer ones are blocked before the call, and the model is told to split
 * them (the tool itself accepts up to {@link MAX_EXPRESSION}).
 */
export const HOOK_EXPRESSION_LIMIT = 200;

/** `/calc <expression>`: the result as one line of text for the user. */
function calcCommand(rawArgs: string): string {
  const expression = rawArgs.trim();
  if (expression === "") return "Usage: /calc <expression>, e.g. /calc 2**10";
  if (expression.length > MAX_EXPRESSION) return `The expression is over ${MAX_EXPRESSION} characters.`;
  try {
    return `${expression} = ${String(evaluateExpression(expression))}`;
  } catch (error) {
    return `Cannot evaluate ${expression}: ${error instanceof Error ? error.message : String(error)}`;
  }
}

export default definePlugin({
  name: "hermes-calculator",
  description: "A calculator and unit converter for Hermes, served over MCP.",
  server: "calculator",
  tools: [calculate, unitConvert],
  skills: [pluginSkill("skills/calculator")],
  logging: { envVar: "CALCULATOR_LOG_LEVEL", default: "info" },
  hooks: {
    // Hermes names the tool mcp__calculator__calculate; ownTool() maps every host form back to "calculate".
    pre_tool_call(event, context) {
      if (context.ownTool(event.tool_name) !== "calculate") return undefined;
      const expression = event.args["expression"];
      if (typeof expression === "string" && expression.length > HOOK_EXPRESSION_LIMIT) {
        return { action: "block", message: `calculate: the expression is ${expression.length} characters; the limit is ${HOOK_EXPRESSION_LIMIT}. Split it into smaller calculations.` };
      }
      return undefined;
    },
  },
  commands: [{ name: "calc", description: "Evaluate a math expression and show the result.", argsHint: "<expression>", handler: calcCommand }],
  license: "MIT",
  keywords: ["calculator", "units"],
});
