#!/usr/bin/env node
/**
 * Entry point of the `hermes-plugin-kit` binary. `--version` alone answers
 * without loading the command program; everything else goes through
 * `program.ts`.
 */
import { packageVersion } from "./version.js";

// A closed pipe on stdout (`... | head -1`) ends output quietly instead of with a stack trace.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code === "EPIPE") process.exit(typeof process.exitCode === "number" ? process.exitCode : 0);
  throw error;
});

const argv = process.argv.slice(2);
if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-V")) {
  process.stdout.write(`${packageVersion()}\n`);
} else {
  import("./program.js")
    .then(({ runCli }) => runCli(argv))
    .then(
      (code) => {
        process.exitCode = code;
      },
      (error: unknown) => {
        process.stderr.write(`hermes-plugin-kit: internal error: ${error instanceof Error ? error.message : String(error)}\n`);
        process.exitCode = 1;
      },
    );
}
