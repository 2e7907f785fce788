/** CLI wiring of `release demo` (logic in release/demo.ts, loaded inside the action). */
import type { Command } from "commander";
import { HermesPluginKitError } from "../../contract/errors.js";
import { UsageError, currentVerbosity, printJson, printLine, printNextSteps, printNote, progressStream, runAction } from "../output.js";

interface DemoFlags {
  package?: string;
  registry?: string;
  plainHttp?: boolean;
  startRegistry?: boolean;
  keepRegistry?: boolean;
  workspace?: string;
  json?: boolean;
}

/** Register `release demo`. */
export function registerReleaseDemo(release: Command): void {
  release
    .command("demo")
    .description("Release a real package end to end into a private store, then fetch, verify, pin and install it as a consumer (loopback only).")
    .option("--package <dir>", "package to release (default: examples/calculator; '.' releases hermes-plugin-kit itself)")
    .option("--registry <repo>", "use a running registry repository host:port/ns/name instead of the embedded oci-layout store")
    .option("--plain-http", "plain HTTP to a loopback --registry")
    .option("--start-registry", "start Debian's docker-registry with Basic auth on a free loopback port")
    .option("--keep-registry", "with --start-registry: leave the registry running afterwards and print its address, the credential variables to set and how to stop it")
    .option("--workspace <dir>", "workspace directory (default: a new temp directory); rerun with the same one to resume")
    .option("--json", "print the result as one JSON object on stdout (step lines always go to stderr)")
    .action(async (flags: DemoFlags) => {
      process.exitCode = await runAction(flags.json === true, async () => {
        if (flags.registry !== undefined && flags.startRegistry === true) throw new UsageError("--registry and --start-registry exclude each other");
        if (flags.keepRegistry === true && flags.startRegistry !== true) throw new UsageError("--keep-registry goes with --start-registry (it keeps the registry the demo starts)");
        if (flags.plainHttp === true && flags.registry === undefined) throw new UsageError("--plain-http goes with --registry (the embedded store and --start-registry need no flag)");
        const { runDemo } = await import("../../../release/demo.js");
        const result = await runDemo({
          ...(flags.package === undefined ? {} : { packageDir: flags.package }),
          ...(flags.registry === undefined ? {} : { registry: flags.registry }),
          plainHttp: flags.plainHttp === true,
          startRegistry: flags.startRegistry === true,
          keepRegistry: flags.keepRegistry === true,
          ...(flags.workspace === undefined ? {} : { workspace: flags.workspace }),
          out: progressStream(),
          ...(currentVerbosity() === "verbose" ? { gateOutput: "stderr" as const } : {}),
        });
        if (flags.json === true) {
          // A failure is the convention's {"ok":false,"code","message"} (each once), then the steps that ran.
          const { ok, ...rest } = result;
          printJson(ok ? result : { ok, code: result.code ?? "DEMO_FAILED", message: result.message ?? "demo failed", ...rest });
          for (const line of result.kept_registry?.instructions ?? []) printNote(line);
          if (result.ok) printNextSteps(result.next_steps ?? []);
          return result.ok ? 0 : 1;
        }
        if (!result.ok) {
          // stdout carries a result only: a kept registry's instructions are a note, where to resume is in the error line.
          for (const line of result.kept_registry?.instructions ?? []) printNote(line);
          // No workspace (refused before one was made): nothing to resume.
          const resumable = result.workspace !== "" && !["DEMO_WORKSPACE_MISMATCH", "DEMO_PLAIN_HTTP_REFUSED", "DEMO_PACKAGE_MISSING"].includes(result.code ?? "");
          // The step's own code, whatever area raised it, is the command's.
          const { shellWord } = await import("../../contract/grammar.js");
          throw new HermesPluginKitError(result.code ?? "DEMO_FAILED", `${result.message ?? "demo failed"}${resumable ? ` (rerun with --workspace ${shellWord(result.workspace)} to resume)` : ""}`);
        }
        if (result.bundle_reference !== undefined) printLine(`bundle reference:  ${result.bundle_reference}`);
        if (result.receipt_reference !== undefined) printLine(`receipt reference: ${result.receipt_reference}`);
        if (result.attestation_reference !== undefined) printLine(`attestation:       ${result.attestation_reference}`);
        if (result.version !== undefined) printLine(`version:           ${result.version}`);
        if (result.tarball_sha256 !== undefined) printLine(`tarball sha256:    ${result.tarball_sha256}  ${result.tarball ?? ""}`);
        printLine(`store:             ${result.registry}`);
        printLine(`workspace:         ${result.workspace}`);
        for (const line of result.kept_registry?.instructions ?? []) printLine(line);
        printNextSteps(result.next_steps ?? []);
        return 0;
      });
    });
}
