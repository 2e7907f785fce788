/**
 * JSON Schema (draft 2020-12) of every release document, generated from the
 * zod schemas in `schemas.ts`. The checked-in copies live in
 * `receipts-schema/<name>.schema.json`; `npm run schemas` rewrites them and a
 * test fails when they drift.
 */
import * as z from "zod";
import { canonicalJsonPretty } from "./canonical-json.js";
import { ReleaseContractError } from "./errors.js";
import { describeValue } from "./grammar.js";
import { DOCUMENT_SCHEMAS } from "./schemas.js";

/** Base of the `$id` of each generated schema. */
export const SCHEMA_ID_BASE = "https://hermes-plugin-kit.dev/schemas/";

/** The generated JSON Schema documents by file stem (e.g. `published-receipt`). */
export function documentJsonSchemas(): Record<keyof typeof DOCUMENT_SCHEMAS, Record<string, unknown>> {
  const out = {} as Record<keyof typeof DOCUMENT_SCHEMAS, Record<string, unknown>>;
  for (const [stem, schema] of Object.entries(DOCUMENT_SCHEMAS) as [keyof typeof DOCUMENT_SCHEMAS, z.ZodType][]) {
    const json = z.toJSONSchema(schema, { target: "draft-2020-12" }) as Record<string, unknown>;
    out[stem] = { ...json, $id: `${SCHEMA_ID_BASE}${stem}.schema.json`, title: stem };
  }
  return out;
}

/**
 * The exact bytes of `receipts-schema/<stem>.schema.json`.
 * @throws ReleaseContractError `POLICY_INVALID` for a `stem` that is not one of {@link DOCUMENT_SCHEMAS}' keys.
 */
export function documentJsonSchemaText(stem: keyof typeof DOCUMENT_SCHEMAS): string {
  if (typeof stem !== "string" || !Object.prototype.hasOwnProperty.call(DOCUMENT_SCHEMAS, stem)) {
    throw new ReleaseContractError("POLICY_INVALID", `documentJsonSchemaText(stem): stem must be one of ${Object.keys(DOCUMENT_SCHEMAS).join(", ")}, found ${describeValue(stem)}`);
  }
  return canonicalJsonPretty(documentJsonSchemas()[stem]);
}
