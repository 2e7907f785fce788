import { beforeAll, describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import Ajv2020 from "ajv/dist/2020.js";
import { DOCUMENT_SCHEMAS, documentJsonSchemaText, documentJsonSchemas, type PublishedReceipt, type TestedManifest } from "../../src/contract/index.js";
import { BUNDLE_REFERENCE, clone, packTinyPackage, receiptFor, tempDir, testedManifestFor } from "../support/contract-fixture.js";

const dir = new URL("../../receipts-schema/", import.meta.url);
let manifest: TestedManifest;
let receipt: PublishedReceipt;

beforeAll(async () => {
  const root = await tempDir();
  manifest = await testedManifestFor(await packTinyPackage(root, "demo-plugin", "0.8.0"));
  receipt = receiptFor(manifest);
});

describe("receipts-schema/*.schema.json", () => {
  it("are exactly what the zod schemas generate (run `npm run schemas` after changing them)", () => {
    const files = readdirSync(dir).filter((f) => f.endsWith(".schema.json")).sort();
    expect(files).toEqual(Object.keys(DOCUMENT_SCHEMAS).map((s) => `${s}.schema.json`).sort());
    for (const stem of Object.keys(DOCUMENT_SCHEMAS) as (keyof typeof DOCUMENT_SCHEMAS)[]) {
      expect(readFileSync(new URL(`${stem}.schema.json`, dir), "utf8")).toBe(documentJsonSchemaText(stem));
    }
  });

  const ajv = new Ajv2020.default({ strict: false, allErrors: true });
  const compiled = new Map<string, ReturnType<typeof ajv.compile>>();
  const validator = (stem: keyof typeof DOCUMENT_SCHEMAS) => {
    if (!compiled.has(stem)) compiled.set(stem, ajv.compile(JSON.parse(readFileSync(new URL(`${stem}.schema.json`, dir), "utf8")) as object));
    return compiled.get(stem)!;
  };

  it("an independent validator (ajv, draft 2020-12) accepts valid documents", () => {
    expect(validator("tested-manifest")(clone(manifest))).toBe(true);
    expect(validator("published-receipt")(clone(receipt))).toBe(true);
    expect(validator("stage-output")({ bundle_reference: BUNDLE_REFERENCE })).toBe(true);
    expect(validator("references-output")({ bundle_reference: BUNDLE_REFERENCE, receipt_reference: BUNDLE_REFERENCE.replace("bbbb", "cccc") })).toBe(true);
    expect(
      validator("fleet-lock")({
        schema_version: 1,
        plugins: [{ name: "demo-plugin", version: "0.8.0", bundle_reference: BUNDLE_REFERENCE, receipt_reference: BUNDLE_REFERENCE, tarball: { filename: "demo-plugin-0.8.0.tgz", sha256: "a".repeat(64) } }],
      }),
    ).toBe(true);
  });

  it("and rejects invalid ones (extra key, wrong type, tag reference, wrong schema version)", () => {
    const r1 = clone(receipt) as Record<string, unknown>;
    r1["extra"] = 1;
    expect(validator("published-receipt")(r1)).toBe(false);
    const r2 = clone(receipt) as unknown as { artifacts: { size: unknown }[] };
    r2.artifacts[0]!.size = 1.5;
    expect(validator("published-receipt")(r2)).toBe(false);
    expect(validator("stage-output")({ bundle_reference: "ghcr.io/a/b:v1" })).toBe(false);
    expect(validator("fleet-lock")({ schema_version: 2, plugins: [] })).toBe(false);
    const m = clone(manifest) as Record<string, unknown>;
    m["receipt_state"] = "published";
    expect(validator("tested-manifest")(m)).toBe(false);
  });

  it("every generated schema is closed (additionalProperties false at the top level)", () => {
    for (const schema of Object.values(documentJsonSchemas())) expect(schema["additionalProperties"]).toBe(false);
  });
});

describe("the release documents' zod/mini schemas say what is wrong", () => {
  it("in a process that loads only them (as the CLI's verify commands do), an issue reads as zod classic's would, not 'Invalid input'", () => {
    const module = new URL("../../dist/src/contract/release-document-schemas.js", import.meta.url).href;
    const script = `const { PublishedReceiptSchema, StageOutputSchema } = await import(${JSON.stringify(module)});
      const a = StageOutputSchema.safeParse({ bundle_reference: "x", extra: 1 }).error.issues.map((i) => i.message);
      const b = PublishedReceiptSchema.safeParse({ schema_version: "2" }).error.issues[0].message;
      process.stdout.write(JSON.stringify({ a, b }));`;
    const run = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8", timeout: 60_000 });
    expect(run.status, run.stderr).toBe(0);
    const out = JSON.parse(run.stdout) as { a: string[]; b: string };
    expect(out.a).toContain('Unrecognized key: "extra"');
    expect(out.a.some((m) => m.includes("<repository>@sha256:<64 hex>"))).toBe(true);
    expect(out.b).toMatch(/^Invalid input: expected 2/);
  });
});
