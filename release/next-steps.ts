/**
 * What a consumer runs next after a release: the commands of README
 * "Consumers: fetch, verify, pin, install" (docs/architecture.md, "Fetch: data flow") with the
 * release's real references, repository and tarball filled in. `release run`
 * and `release demo` print them after success and return them as
 * `next_steps`. Pure: builds strings, reads and writes nothing.
 */
import { shellWord } from "../src/contract/grammar.js";
import { DEFAULT_GATE_COMMANDS, TEST_GATES, type GateCommands } from "../src/contract/policy.js";

/** What {@link consumerNextSteps} fills in. */
export interface NextStepsInput {
  /** The pinned repository (`host[:port]/path` or `oci-layout:<dir>`). */
  repository: string;
  /** Digest-pinned bundle reference. */
  bundleReference: string;
  /** Digest-pinned receipt reference. */
  receiptReference: string;
  /** npm package name (names the vendor directory). */
  packageName: string;
  /** The npm tarball's file name, e.g. `my-plugin-1.2.0.tgz`. */
  tarball: string;
  /** The registry is a loopback one reached over plain HTTP. */
  plainHttp?: boolean;
  /**
   * A comment line saying where the registry credentials come from (the demo's
   * started registry names its password file); default: a generic hint. Never a secret.
   */
  credentialsHint?: string;
  /** The release's gate commands; when they are not the defaults a note line shows how a consumer pins them (`--expect-gate`). */
  gates?: Partial<GateCommands>;
  /**
   * The public key (PEM file) the release's attestation verifies with: the bundle fetch and
   * `fleet add` then require and pin signed provenance (`--provenance --key <file>`).
   */
  provenanceKey?: string;
  /** Where a consumer finds {@link NextStepsInput.provenanceKey} (one comment line), e.g. "keys/release.pub in the source repository at v1.2.0". Never a secret. */
  provenanceKeyOrigin?: string;
  /**
   * The command that runs the CLI (default `hermes-plugin-kit`); `release run` and `release demo` pass
   * `consumerCliCommand()` (release/cli-command.ts): `hermes-plugin-kit` from an installed kit (the consumer's
   * own global install, README step 4), `node <clone>/dist/src/cli/main.cjs` from a clone.
   */
  cli?: string;
}

// Shell quoting is the contract's (src/contract/grammar.ts); re-exported for the release modules that print commands.
export { shellWord };

/**
 * The consumer's commands, one shell line each (comments start with `#`):
 * fetch of the bundle and the receipt by digest, `verify-final-receipt` with
 * both pins, `fleet add` + `fleet verify`, and `npm install --ignore-scripts`
 * of the fetched tarball; with `provenanceKey`, the bundle fetch and `fleet add`
 * require the attestation signed by that key (`--provenance --key`).
 */
export function consumerNextSteps(input: NextStepsInput): string[] {
  const cli = input.cli ?? "hermes-plugin-kit";
  const vendor = `vendor/${input.packageName.replace(/^@/, "").replace(/\//g, "-")}`;
  const receipt = `${vendor}/release-receipt.json`;
  const plain = input.plainHttp === true ? " --plain-http" : "";
  const repo = shellWord(input.repository);
  const provenance = input.provenanceKey === undefined ? "" : ` --provenance --key ${shellWord(input.provenanceKey)}`;
  const lines: string[] = [];
  if (!input.repository.startsWith("oci-layout:")) {
    const host = input.repository.split("/")[0] ?? input.repository;
    lines.push(input.credentialsHint ?? `# read credentials for ${host}: REGISTRY_USERNAME + REGISTRY_PASSWORD, REGISTRY_TOKEN, or \`docker login ${host}\``);
  }
  if (input.provenanceKey !== undefined && input.provenanceKeyOrigin !== undefined) {
    lines.push(`# --key ${shellWord(input.provenanceKey)}: the release's public key, ${input.provenanceKeyOrigin.replace(/[\r\n]+/g, " ")}`);
  }
  const gates = input.gates;
  const custom = gates === undefined ? [] : TEST_GATES.filter((gate) => gates[gate] !== undefined && gates[gate] !== DEFAULT_GATE_COMMANDS[gate]);
  if (gates !== undefined && custom.length > 0) {
    // The receipt proves its gates passed and the verified tarball declares them; a consumer pins commands only if it
    // requires them (docs/architecture.md, "Policy: where expectations come from"): nothing is read from the consumer's directory.
    const pins = custom.map((gate) => `--expect-gate ${shellWord(`${gate}=${gates[gate] ?? ""}`)}`).join(" ");
    lines.push(`# this release's gates are not the defaults; to require exactly these commands, add to verify-final-receipt and fleet add: ${pins}`);
  }
  lines.push(
    `${cli} fetch --reference ${shellWord(input.bundleReference)} --repository ${repo} --output-dir ${shellWord(vendor)} --expect bundle${provenance}${plain}`,
    `${cli} fetch --reference ${shellWord(input.receiptReference)} --repository ${repo} --output-dir ${shellWord(vendor)} --expect receipt${plain}`,
    `${cli} verify-final-receipt --receipt ${shellWord(receipt)} --repository ${repo} --expect-bundle-reference ${shellWord(input.bundleReference)} --expect-receipt-reference ${shellWord(input.receiptReference)}`,
    `${cli} fleet add --lock fleet.lock.json --receipt ${shellWord(receipt)} --repository ${repo}${provenance}${plain}`,
    `${cli} fleet verify --lock fleet.lock.json --installed ${shellWord(vendor)}${plain}`,
    `npm install --ignore-scripts --save-exact ${shellWord(`./${vendor}/dist/${input.tarball}`)}`,
  );
  return lines;
}
