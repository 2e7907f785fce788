/**
 * A parse error of a file names the file (src/contract/json-file.ts): every
 * command reading JSON files keeps the strict parser's code (`JSON_SYNTAX`,
 * `JSON_DUPLICATE_KEY`, ...) and puts the path in front of the message, so a
 * command given two files says which one is wrong. Through the built CLI.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { namingFile, parseJsonFileBytes } from "../../src/contract/json-file.js";
import { readReleaseJsonFile } from "../../src/contract/manifest.js";
import { ReleaseContractError } from "../../src/contract/errors.js";
import { runCli } from "../support/cli.js";

let dir: string;
let truncated: string;
let duplicate: string;
let empty: string;
const BUNDLE = `127.0.0.1:5000/acme/demo@sha256:${"a".repeat(64)}`;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "hpk-json-file-"));
  truncated = join(dir, "truncated.json");
  duplicate = join(dir, "duplicate.json");
  empty = join(dir, "empty.json");
  await writeFile(truncated, '{"a":');
  await writeFile(duplicate, '{"a":1,"a":2}\n');
  await writeFile(empty, "{}\n");
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("the library", () => {
  it("parseJsonFileBytes / readReleaseJsonFile: same code, the path in front of the message", async () => {
    expect(() => parseJsonFileBytes("a/b.json", '{"a":')).toThrowWithCode(ReleaseContractError, "JSON_SYNTAX");
    expect(() => parseJsonFileBytes("a/b.json", '{"a":')).toThrow(/^a\/b\.json: invalid JSON: /);
    await expect(readReleaseJsonFile(duplicate)).rejects.toThrowWithCode("JSON_DUPLICATE_KEY");
    await expect(readReleaseJsonFile(duplicate)).rejects.toThrow(new RegExp(`^${duplicate}: `));
    expect(parseJsonFileBytes("ok.json", '{"a":1}')).toEqual({ a: 1 });
  });

  it("namingFile leaves errors other than JSON_* unchanged", () => {
    const other = new ReleaseContractError("POLICY_INVALID", "x");
    expect(() =>
      namingFile("f.json", () => {
        throw other;
      }),
    ).toThrow(other);
  });
});

describe("commands name the file that does not parse", () => {
  it("verify-final-receipt: the receipt", async () => {
    const r = await runCli(["verify-final-receipt", "--receipt", truncated, "--expect-bundle-reference", BUNDLE]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`hermes-plugin-kit: ${truncated}: invalid JSON: unexpected end of input at offset 5 [JSON_SYNTAX]\n`);
  });

  it("verify-final-receipt with a policy file: the receipt parses, the policy is named", async () => {
    const r = await runCli(["verify-final-receipt", "--receipt", empty, "--policy", truncated]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(truncated);
    expect(r.stderr).toContain("[POLICY_INVALID]");
  });

  it("verify-manifest: the manifest", async () => {
    const r = await runCli(["verify-manifest", "--manifest", duplicate, "--artifact-dir", dir, "--repository", "127.0.0.1:5000/acme/demo"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`^hermes-plugin-kit: ${duplicate}: .*\\[JSON_DUPLICATE_KEY\\]\\n$`));
  });

  it("fleet add: the receipt; fleet verify: the lock", async () => {
    const add = await runCli(["fleet", "add", "--lock", join(dir, "fleet.lock.json"), "--receipt", truncated, "--repository", "127.0.0.1:5000/acme/demo"]);
    expect(add.code).toBe(1);
    expect(add.stderr).toBe(`hermes-plugin-kit: ${truncated}: invalid JSON: unexpected end of input at offset 5 [JSON_SYNTAX]\n`);
    const verify = await runCli(["fleet", "verify", "--lock", truncated]);
    expect(verify.code).toBe(1);
    expect(verify.stderr).toContain(`fleet lock ${truncated} is not valid JSON`);
  });

  it("verify-provenance --trusted-root: the trusted root", async () => {
    const r = await runCli(["verify-provenance", "--bundle", empty, "--key", empty, "--trusted-root", truncated, empty]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`trusted root ${truncated}`);
  });
});
