/**
 * Release configuration of the package being released, read from its
 * `package.json`: `name`, `version`, `files`, `hermesPluginKit.repository`
 * and `hermesPluginKit.gates` (the declared command of each test gate).
 *
 * docs/release-build.md, "Gate commands"; docs/architecture.md, "Policy:
 * where expectations come from".
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { parseStrictJson } from "../src/contract/canonical-json.js";
import { isNpmPackageName, isStableSemver } from "../src/contract/grammar.js";
import { policyFromPackageJson, type PackagePolicy } from "../src/contract/policy.js";
import { ReleaseStepError } from "./errors.js";

export { TEST_GATES, DEFAULT_GATE_COMMANDS, DEFAULT_INSTALL_COMMAND } from "../src/contract/policy.js";
export type { TestGate, GateCommands, ReleasePolicy, PackagePolicy } from "../src/contract/policy.js";

/** The release-relevant view of a package's package.json. */
export interface ReleaseConfig {
  /** Absolute path of the package directory. */
  dir: string;
  /** package.json `name` (a valid npm name). */
  name: string;
  /** package.json `version` (stable SemVer). */
  version: string;
  /** package.json `files` (undefined when absent). */
  files: string[] | undefined;
  /**
   * The release policy: `package` (= `name`), `registryRepository`
   * (`hermesPluginKit.repository`) and the declared gate commands
   * (`hermesPluginKit.gates` over the defaults) and the install command
   * (`hermesPluginKit.install`, default `npm ci`).
   */
  policy: PackagePolicy;
}

const gateCommand = z.string().min(1).max(1000).refine((s) => !/[\0\r\n]/.test(s), "a gate command is one line");

const PackageJsonSchema = z.object({
  name: z.string().refine(isNpmPackageName, "not a valid npm package name"),
  version: z.string().refine(isStableSemver, "not a stable SemVer"),
  files: z.array(z.string().min(1)).optional(),
  hermesPluginKit: z.object({
    repository: z.string().min(1).max(512),
    install: gateCommand.optional(),
    gates: z
      .object({
        unit: gateCommand.optional(),
        public_contract: gateCommand.optional(),
        host_contract: gateCommand.optional(),
        build_metadata: gateCommand.optional(),
      })
      .strict()
      .optional(),
  }),
});

/**
 * Read `<dir>/package.json` (strict JSON: duplicate keys and a BOM refused)
 * and return its release configuration.
 *
 * @throws ReleaseStepError `RELEASE_CONFIG_INVALID` when the file is missing,
 *   not strict JSON, or `name`/`version`/`hermesPluginKit.repository`/`gates`
 *   are missing or malformed (the message names the field).
 */
export async function readReleaseConfig(dir: string): Promise<ReleaseConfig> {
  const path = join(dir, "package.json");
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (error) {
    throw new ReleaseStepError("RELEASE_CONFIG_INVALID", `cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? "error"}; expected the package.json of the package to release; fix: run it in the package's directory (or pass --dir <its directory>)`);
  }
  let doc: unknown;
  try {
    doc = parseStrictJson(bytes, { rejectIntegralFloats: false });
  } catch (error) {
    throw new ReleaseStepError("RELEASE_CONFIG_INVALID", `${path} is not strict JSON: ${(error as Error).message}; fix: make it strict JSON (no duplicate keys, comments or trailing commas)`);
  }
  const parsed = PackageJsonSchema.safeParse(doc);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue === undefined ? "" : issue.path.join(".");
    throw new ReleaseStepError("RELEASE_CONFIG_INVALID", `${path}: field ${where || "(root)"} ${issue?.message ?? "is invalid"}; fix: correct that field of package.json`);
  }
  const data = parsed.data;
  let policy: PackagePolicy;
  try {
    policy = policyFromPackageJson(doc, undefined, path);
  } catch (error) {
    throw new ReleaseStepError("RELEASE_CONFIG_INVALID", `${path}: ${(error as Error).message}`);
  }
  return { dir, name: data.name, version: data.version, files: data.files, policy };
}
