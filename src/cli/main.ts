#!/usr/bin/env node
/** Entry point of the `hermes-plugin-kit` binary. */
import { runCli } from "./program.js";

// A closed pipe on stdout (`... | head -1`) ends output quietly instead of with a stack trace.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code === "EPIPE") process.exit(typeof process.exitCode === "number" ? process.exitCode : 0);
  throw error;
});

runCli(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`hermes-plugin-kit: internal error: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
