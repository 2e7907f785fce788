#!/usr/bin/env node
/** Entry point of the `hermes-plugin-kit` binary. */
import { runCli } from "./program.js";

runCli(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`hermes-plugin-kit: internal error: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
