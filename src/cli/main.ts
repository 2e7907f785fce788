#!/usr/bin/env node
/**
 * ES module entry of the `hermes-plugin-kit` binary, kept for `node dist/src/cli/main.js ...`:
 * it runs the CommonJS entry `main.cjs` (src/cli/main.cts), which package.json `bin` names and
 * which starts the CLI from its bundle and V8 code cache.
 */
import { createRequire } from "node:module";

const entry = createRequire(import.meta.url)("./main.cjs") as { main(): void };
entry.main();
