/**
 * CLI wiring of `release attest` (sign the staged bundle's provenance with a
 * local key and store it as an OCI referrer) and `release provenance-predicate`
 * (the SLSA predicate CI hands GitHub's attest action). Logic in
 * `release/attest.ts`; modules load inside the actions.
 */
import type { Command } from "commander";
import { positiveIntegerFlag } from "../flag-values.js";
import { printJson, runAction } from "../output.js";
import { addRegistryOptions } from "../registry-options.js";
import { publishPolicy, registryCredentials } from "./release-publish.js";

interface AttestFlags {
  reference: string;
  repository?: string;
  key?: string;
  sourceRepository?: string;
  workflowRef?: string;
  runAttempt?: string;
  output?: string;
  plainHttp?: boolean;
  registryConfig?: string;
  json?: boolean;
}

function runAttemptOf(value: string | undefined): number | undefined {
  return positiveIntegerFlag("--run-attempt", value);
}

/** Options both commands share, from the flags. */
async function inputsOf(flags: AttestFlags) {
  const runAttempt = runAttemptOf(flags.runAttempt);
  const policy = await publishPolicy({ ...(flags.repository === undefined ? {} : { repository: flags.repository }) });
  return {
    ...(await registryCredentials(policy, flags.registryConfig)),
    policy,
    repository: policy.registryRepository,
    reference: flags.reference,
    plainHttp: flags.plainHttp === true,
    ...(flags.sourceRepository === undefined ? {} : { sourceRepository: flags.sourceRepository }),
    ...(flags.workflowRef === undefined ? {} : { workflowRef: flags.workflowRef }),
    ...(runAttempt === undefined ? {} : { runAttempt }),
    ...(flags.output === undefined ? {} : { output: flags.output }),
  };
}

function sharedOptions(command: Command): Command {
  return addRegistryOptions(command)
    .requiredOption("--reference <ref>", "the staged release bundle <repository>@sha256:<64 hex>")
    .option("--repository <repository>", "host[:port]/path or oci-layout:<dir> (default: hermesPluginKit.repository of ./package.json)")
    .option("--source-repository <url>", "source repository URI recorded in the statement (default: $GITHUB_SERVER_URL/$GITHUB_REPOSITORY)")
    .option("--workflow-ref <ref>", "ref the release workflow ran at (default: $GITHUB_REF, else refs/heads/main)")
    .option("--run-attempt <n>", "workflow run attempt recorded (default: $GITHUB_RUN_ATTEMPT, else the tested manifest's)")
    .option("--json", "a release step always prints one JSON object on stdout, failures included; --json also keeps the error line off stderr");
}

/** Register `release attest` and `release provenance-predicate`. */
export function registerReleaseAttestSteps(release: Command): void {
  sharedOptions(
    release
      .command("attest")
      .description(
        "Sign the staged bundle's provenance (in-toto v1 + SLSA v1, DSSE, no transparency log) with a local P-256 key and store it " +
          "in the repository as an OCI referrer of the bundle; idempotent (an attestation that verifies with the key is kept).",
      )
      .requiredOption("--key <pem>", "P-256 private key (PEM, mode 0600); consumers verify with its public key"),
  )
    .option("--output <file>", "write the result JSON here")
    .action(async (flags: AttestFlags) => {
      process.exitCode = await runAction(true, async () => {
        const inputs = await inputsOf(flags);
        const { readSigningKeyFile } = await import("../../../release/provenance-sign.js");
        const { attestRelease } = await import("../../../release/attest.js");
        const privateKey = await readSigningKeyFile(flags.key as string);
        printJson(await attestRelease({ ...inputs, signer: { kind: "key", privateKey } }));
      });
    });

  sharedOptions(
    release
      .command("provenance-predicate")
      .description("Write the SLSA provenance v1 predicate of the staged bundle (for CI's attest action: predicate-path) and print its subject."),
  )
    .requiredOption("--output <file>", "where the predicate JSON is written")
    .action(async (flags: AttestFlags) => {
      process.exitCode = await runAction(true, async () => {
        const inputs = await inputsOf(flags);
        const { provenancePredicate } = await import("../../../release/attest.js");
        const { outputJsonBytes, writeOutputFile } = await import("../../../release/output.js");
        const { output: _output, ...rest } = inputs;
        const result = await provenancePredicate(rest);
        await writeOutputFile(flags.output as string, outputJsonBytes(result.predicate));
        printJson({ subject_name: result.subject.name, subject_digest: result.subject.digest, predicate_type: "https://slsa.dev/provenance/v1", output: flags.output });
      });
    });
}
