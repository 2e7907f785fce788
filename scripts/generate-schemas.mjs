// Regenerates receipts-schema/*.schema.json from the zod schemas (run `npm run schemas` after `npm run build`).
import { writeFileSync, mkdirSync } from "node:fs";
import { DOCUMENT_SCHEMAS, documentJsonSchemaText } from "../dist/src/contract/index.js";

mkdirSync(new URL("../receipts-schema/", import.meta.url), { recursive: true });
for (const stem of Object.keys(DOCUMENT_SCHEMAS)) {
  writeFileSync(new URL(`../receipts-schema/${stem}.schema.json`, import.meta.url), documentJsonSchemaText(stem));
  process.stdout.write(`wrote receipts-schema/${stem}.schema.json\n`);
}
