/**
 * Day-to-day consumer verbs against an `oci-layout:` store holding two real
 * releases (0.8.0 and 0.9.0) of one package: `fleet list/remove/upgrade`
 * (history kept), gate pins kept in the lock, `resolve` of a tag, and a fetch
 * of an upgrade into a directory holding the previous version (`--replace`).
 */
import { generateKeyPairSync } from "node:crypto";
import { chmod, lstat, mkdir, mkdtemp, readdir, readFile, rm, symlink, truncate, writeFile } from "node:fs/promises";
import { execFileSync, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fetchRelease, type OpenReadTarget } from "../../src/fetch/fetch.js";
import { addPluginToLock, emptyFleetLock, fleetLockBytes, readFleetLockFile, verifyFleetLock } from "../../src/fetch/fleet.js";
import { listFleetLock, removePluginFromLock, upgradePluginInLock } from "../../src/fetch/fleet-edit.js";
import { parseTagReference, resolveTagReference } from "../../src/fetch/resolve.js";
import { LayoutTarget } from "../../src/oci/layout-target.js";
import type { JsonObject } from "../../src/contract/canonical-json.js";
import { verifyFinalReceipt } from "../../src/contract/release-document.js";
import { runCli } from "../support/cli.js";
import { createReleaseFixture, stageFixture, type ReleaseFixture, type StagedRelease } from "../support/release-fixture.js";

let root: string;
let repository: string;
let otherRepository: string;
const fixtures: ReleaseFixture[] = [];
let v8: StagedRelease;
let v9: StagedRelease;
let receipt8: string;
let receipt9: string;
let receipt9Elsewhere: string;
const openLayout: OpenReadTarget = async (repo) => {
  if (repo.kind !== "layout") throw new Error("layout only");
  return LayoutTarget.open(repo.dir);
};
let counter = 0;
const lockPath = () => join(root, `lock-${(counter += 1)}.json`);

async function stage(store: string, version: string): Promise<StagedRelease> {
  const repo = `oci-layout:${store}`;
  const fixture = await createReleaseFixture({ registryRepository: repo, version });
  fixtures.push(fixture);
  const staged = await stageFixture(fixture, await LayoutTarget.open(store, { create: true }), repo);
  await chmod(store, 0o700);
  return staged;
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "hpk-fleet-edit-"));
  repository = `oci-layout:${join(root, "store")}`;
  otherRepository = `oci-layout:${join(root, "other-store")}`;
  v8 = await stage(join(root, "store"), "0.8.0");
  v9 = await stage(join(root, "store"), "0.9.0");
  const elsewhere = await stage(join(root, "other-store"), "0.9.0");
  receipt8 = join(root, "receipt-0.8.0.json");
  receipt9 = join(root, "receipt-0.9.0.json");
  receipt9Elsewhere = join(root, "receipt-0.9.0-elsewhere.json");
  await writeFile(receipt8, v8.receiptBytes);
  await writeFile(receipt9, v9.receiptBytes);
  await writeFile(receipt9Elsewhere, elsewhere.receiptBytes);
}, 60_000);

afterAll(async () => {
  for (const f of fixtures) await f.cleanup();
  await rm(root, { recursive: true, force: true });
});

describe("fleet upgrade / list / remove", () => {
  it("fleet add of a pinned package names fleet upgrade; upgrade moves the pin and keeps the old one in history", async () => {
    const lock = lockPath();
    await addPluginToLock({ lockPath: lock, receiptPath: receipt8, repository });
    const conflict = addPluginToLock({ lockPath: lock, receiptPath: receipt9, repository });
    await expect(conflict).rejects.toMatchObject({ code: "FLEET_PLUGIN_CONFLICT" });
    await expect(conflict).rejects.toThrow(/fleet upgrade --lock .* --receipt /);
    const { plugin, previous, changed } = await upgradePluginInLock({ lockPath: lock, receiptPath: receipt9 });
    expect(changed).toBe(true);
    expect(previous!.version).toBe("0.8.0");
    expect(plugin.version).toBe("0.9.0");
    expect(plugin.bundle_reference).toBe(`${repository}@${v9.bundle.digest}`);
    const listed = await listFleetLock(lock);
    expect(listed).toHaveLength(1);
    expect(listed[0]!.history).toEqual([{ version: "0.8.0", bundle_reference: `${repository}@${v8.bundle.digest}`, receipt_reference: `${repository}@${v8.receipt.digest}`, tarball: previous!.tarball }]);
    // The upgraded pin verifies against the store.
    const verified = await verifyFleetLock({ lockPath: lock, openTarget: openLayout, progress: null });
    expect(verified.map((r) => r.version)).toEqual(["0.9.0"]);
  });

  it("add and upgrade check the new pin against the store first: an edited receipt (valid on its own) pins nothing, and the good pin stays (library and CLI)", async () => {
    const lock = lockPath();
    const edited = join(root, "edited-receipt-9.json");
    await writeFile(edited, (await readFile(receipt9, "utf8")).replace(/"run_id":"([0-9]+)"/, (_m, id: string) => `"run_id":"${id}7"`));
    await expect(() => addPluginToLock({ lockPath: lock, receiptPath: edited, repository })).toThrowWithCode("OCI_NOT_FOUND");
    await expect(readFile(lock)).rejects.toThrow(/ENOENT/);
    await addPluginToLock({ lockPath: lock, receiptPath: receipt8, repository });
    const before = await readFile(lock);
    const upgrading = upgradePluginInLock({ lockPath: lock, receiptPath: edited });
    await expect(() => upgrading).toThrowWithCode("OCI_NOT_FOUND");
    await expect(upgrading).rejects.toThrow(`plugin demo-plugin 0.9.0: the repository holds no receipt with this file's digest`);
    expect((await readFile(lock)).equals(before)).toBe(true);
    const cli = await runCli(["fleet", "upgrade", "--lock", lock, "--receipt", edited]);
    expect(cli.code).toBe(1);
    expect(cli.stderr).toContain(`${edited} is not a receipt this repository published (edited, or from another store); nothing was pinned`);
    expect((await readFile(lock)).equals(before)).toBe(true);
    // --offline moves it from the file alone (and warns); fleet verify then refuses the pin.
    const offline = await runCli(["fleet", "upgrade", "--lock", lock, "--receipt", edited, "--offline", "--json"]);
    expect(offline.code).toBe(0);
    expect(JSON.parse(offline.stdout)).toMatchObject({ ok: true, changed: true, checked_against_registry: false });
    expect(offline.stderr).toContain("warning: --offline");
    await expect(() => verifyFleetLock({ lockPath: lock, openTarget: openLayout, progress: null })).toThrowWithCode("OCI_NOT_FOUND");
    // Rerun without --offline: "already pinned" is not taken on trust, the pin is checked (it used to exit 0).
    const movedOffline = await readFile(lock);
    const rerun = await runCli(["fleet", "upgrade", "--lock", lock, "--receipt", edited]);
    expect(rerun.code).toBe(1);
    expect(rerun.stderr).toContain("is not a receipt this repository published");
    const readd = await runCli(["fleet", "add", "--lock", lock, "--receipt", edited, "--repository", repository, "--json"]);
    expect([readd.code, JSON.parse(readd.stdout).code]).toEqual([1, "OCI_NOT_FOUND"]);
    expect((await readFile(lock)).equals(movedOffline)).toBe(true);
  });

  it("add and upgrade write only while the lock is still what they read: an edit made during the registry check is kept (FLEET_LOCK_CHANGED, nothing written, no temp file left)", async () => {
    const dir = await mkdtemp(join(root, "race-"));
    const lock = join(dir, "fleet.lock.json");
    const concurrent = fleetLockBytes(emptyFleetLock());
    // The check opens the store; meanwhile "someone else" writes the lock.
    const editDuringCheck: OpenReadTarget = async (repo, options) => {
      await writeFile(lock, concurrent);
      return openLayout(repo, options);
    };
    const adding = addPluginToLock({ lockPath: lock, receiptPath: receipt8, repository, registry: { openTarget: editDuringCheck } });
    await expect(() => adding).toThrowWithCode("FLEET_LOCK_CHANGED");
    await expect(adding).rejects.toThrow(`fleet lock ${lock} changed while this command ran (a lock file was created: another fleet add, upgrade or remove, or an edit); nothing was written; fix: rerun the command`);
    expect((await readFile(lock)).equals(concurrent)).toBe(true);
    expect(await readdir(dir)).toEqual(["fleet.lock.json"]);
    // Passing case: a check that leaves the lock alone writes it.
    await expect(addPluginToLock({ lockPath: lock, receiptPath: receipt8, repository, registry: { openTarget: openLayout } })).resolves.toMatchObject({ changed: true });
    const pinned8 = await readFile(lock);
    const upgrading = upgradePluginInLock({ lockPath: lock, receiptPath: receipt9, registry: { openTarget: editDuringCheck } });
    await expect(() => upgrading).toThrowWithCode("FLEET_LOCK_CHANGED");
    await expect(upgrading).rejects.toThrow("(its bytes differ: another fleet add");
    expect((await readFile(lock)).equals(concurrent)).toBe(true);
    expect(await readdir(dir)).toEqual(["fleet.lock.json"]);
    // Removed during the check: the upgrade does not bring the lock back.
    await writeFile(lock, pinned8);
    const removeDuringCheck: OpenReadTarget = async (repo, options) => {
      await rm(lock, { force: true });
      return openLayout(repo, options);
    };
    await expect(() => upgradePluginInLock({ lockPath: lock, receiptPath: receipt9, registry: { openTarget: removeDuringCheck } })).toThrowWithCode("FLEET_LOCK_CHANGED");
    expect(await readdir(dir)).toEqual([]);
    await writeFile(lock, pinned8);
    await expect(upgradePluginInLock({ lockPath: lock, receiptPath: receipt9, registry: { openTarget: openLayout } })).resolves.toMatchObject({ changed: true });
  });

  it("two adds that both read the lock before either wrote it: one pins, the other is FLEET_LOCK_CHANGED (never two successes that lose an edit)", async () => {
    const dir = await mkdtemp(join(root, "concurrent-"));
    const lock = join(dir, "fleet.lock.json");
    // Both checks wait for each other, so both adds have read the (absent) lock before either writes.
    let arrived = 0;
    let release!: () => void;
    const bothChecking = new Promise<void>((r) => (release = r));
    const barrier: OpenReadTarget = async (repo, options) => {
      arrived += 1;
      if (arrived === 2) release();
      await bothChecking;
      return openLayout(repo, options);
    };
    const results = await Promise.allSettled([8, 9].map(() => addPluginToLock({ lockPath: lock, receiptPath: receipt8, repository, registry: { openTarget: barrier } })));
    const codes = results.map((r) => (r.status === "fulfilled" ? "pinned" : (r.reason as { code?: string }).code)).sort();
    expect(codes).toEqual(["FLEET_LOCK_CHANGED", "pinned"]);
    expect((await listFleetLock(lock)).map((p) => p.version)).toEqual(["0.8.0"]);
    expect(await readdir(dir)).toEqual(["fleet.lock.json"]);
  });

  it("the edit guard: one left by a killed edit is broken; one that is not the kit's (a directory, another program's pid) is FLEET_LOCK_BUSY at once, nothing written", async () => {
    const dir = await mkdtemp(join(root, "guard-"));
    const lock = join(dir, "fleet.lock.json");
    const guard = `${lock}.edit-guard`;
    // A pid that runs no process: a killed edit's guard, broken without a word.
    await writeFile(guard, "999999\n");
    await expect(addPluginToLock({ lockPath: lock, receiptPath: receipt8, repository, offline: true })).resolves.toMatchObject({ changed: true });
    expect(await readdir(dir)).toEqual(["fleet.lock.json"]);
    const pinned = await readFile(lock);
    // Not what the kit writes, or a pid that names another program (init): refused at once, naming it.
    for (const [make, found] of [
      [() => mkdir(guard), "a directory"],
      [() => writeFile(guard, "1\n"), "found PID 1, a live process"],
    ] as const) {
      await make();
      const removing = removePluginFromLock(lock, "demo-plugin");
      await expect(() => removing).toThrowWithCode("FLEET_LOCK_BUSY");
      const message = await removing.catch((e: Error) => e.message);
      expect(message).toMatch(new RegExp(`^fleet lock ${lock}: nothing was written; `));
      expect(message).toContain(found);
      expect(message).toContain(`remove ${guard}`);
      expect((await readFile(lock)).equals(pinned)).toBe(true);
      await rm(guard, { recursive: true });
    }
    await expect(removePluginFromLock(lock, "demo-plugin")).resolves.toMatchObject({ name: "demo-plugin" });
    expect(await readdir(dir)).toEqual(["fleet.lock.json"]);
  });

  it("a misspelt gate pin is POLICY_INVALID with the nearest gate, before any file or directory is made (it used to leave a temp lock file)", async () => {
    const lock = join(root, "gate-pin", "new", "dir", "fleet.lock.json");
    const adding = addPluginToLock({ lockPath: lock, receiptPath: receipt8, repository, gates: { unti: "npm test" } as never, offline: true });
    await expect(() => adding).toThrowWithCode("POLICY_INVALID");
    await expect(adding).rejects.toThrow('gates (--expect-gate) names unknown gate "unti" (expected one of unit, public_contract, host_contract, build_metadata; did you mean "unit"?)');
    expect(existsSync(join(root, "gate-pin"))).toBe(false);
  });

  it("a package pin that is no npm name (uppercase) is POLICY_INVALID naming it and the rule, before the receipt is read; the lowercase name pins", async () => {
    const dir = await mkdtemp(join(root, "package-pin-"));
    const lock = join(dir, "fleet.lock.json");
    // It was FLEET_RECEIPT_UNREADABLE: the caller's pin blamed on a good receipt.
    const adding = addPluginToLock({ lockPath: lock, receiptPath: receipt8, repository, package: "Demo-Plugin", offline: true });
    await expect(() => adding).toThrowWithCode("POLICY_INVALID");
    await expect(adding).rejects.toThrow(/^package \(--package\) must be an npm package name \(lowercase letters, digits, .*\), found "Demo-Plugin"; fix: give "demo-plugin" \(npm names are lowercase\)$/);
    const r = await runCli(["fleet", "add", "--lock", lock, "--receipt", receipt8, "--repository", repository, "--package", "Demo-Plugin", "--offline"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/found "Demo-Plugin"; fix: give "demo-plugin" \(npm names are lowercase\) \[POLICY_INVALID\]\n$/);
    expect(await readdir(dir)).toEqual([]);
    // Passing: the same call with the package's own name.
    await expect(addPluginToLock({ lockPath: lock, receiptPath: receipt8, repository, package: "demo-plugin", offline: true })).resolves.toMatchObject({ changed: true, plugin: { name: "demo-plugin" } });
  });

  it("fleet verify checks every plugin: one bad pin does not hide another (the first code, the others' messages and codes after it)", async () => {
    const lock = lockPath();
    await addPluginToLock({ lockPath: lock, receiptPath: receipt8, repository });
    const good = (await listFleetLock(lock))[0]!;
    const twoBad = {
      schema_version: 1,
      plugins: [
        { ...good, tarball: { ...good.tarball, sha256: "0".repeat(64) } },
        { ...good, name: "other-plugin", tarball: { ...good.tarball, filename: "other-plugin-0.8.0.tgz" } },
      ],
    };
    await writeFile(lock, fleetLockBytes(twoBad as never));
    const verifying = verifyFleetLock({ lockPath: lock, openTarget: openLayout, progress: null });
    await expect(() => verifying).toThrowWithCode("FLEET_TARBALL_MISMATCH");
    const message = await verifying.catch((e: Error) => e.message);
    expect(message).toMatch(/^plugin demo-plugin 0\.8\.0: /);
    expect(message).toContain("; 1 more of the lock's 2 plugins failed too: plugin other-plugin 0.8.0: ");
    expect(message).toMatch(/\[RECEIPT_PACKAGE_MISMATCH\]$/);
    // One bad plugin among good ones: its own message alone.
    await writeFile(lock, fleetLockBytes({ schema_version: 1, plugins: [twoBad.plugins[0]!] } as never));
    await expect(verifyFleetLock({ lockPath: lock, openTarget: openLayout, progress: null })).rejects.toThrow(/^plugin demo-plugin 0\.8\.0: (?!.*more of the lock)/);
  });

  it("a misspelt library option is refused (POLICY_INVALID, the nearest name), never ignored: provenance, installedDir, registry options; nothing written", async () => {
    const lock = join(root, "typo-lock", "fleet.lock.json");
    const cases: Array<[string, () => Promise<unknown>, string]> = [
      ["provenanse", () => addPluginToLock({ lockPath: lock, receiptPath: receipt8, repository, provenanse: { policy: { key: "x" } } } as never), 'did you mean "provenance"?'],
      ["registry.plainHtp", () => addPluginToLock({ lockPath: lock, receiptPath: receipt8, repository, registry: { plainHtp: true } } as never), 'did you mean "plainHttp"?'],
      ["expectGates", () => upgradePluginInLock({ lockPath: lock, receiptPath: receipt9, expectGates: { unit: "x" } } as never), "it reads lockPath, receiptPath, gates, registry, offline"],
      ["installDir", () => verifyFleetLock({ lockPath: lock, installDir: "/nonexistent" } as never), 'did you mean "installedDir"?'],
    ];
    for (const [label, call, message] of cases) {
      const calling = call();
      await expect(() => calling, label).toThrowWithCode("POLICY_INVALID");
      await expect(calling, label).rejects.toThrow(message);
    }
    await expect(() => verifyFleetLock({ lockPath: lock, installedDir: 5 } as never)).toThrowWithCode("POLICY_INVALID");
    expect(existsSync(join(root, "typo-lock"))).toBe(false);
  });

  it("reads the receipt once, bounded: /dev/zero, a FIFO with a writer that never stops, a sparse 2 GiB file are FLEET_RECEIPT_UNREADABLE, the lock unchanged", async () => {
    const lock = lockPath();
    await addPluginToLock({ lockPath: lock, receiptPath: receipt8, repository, offline: true });
    const before = await readFile(lock);
    // Passing: the bounded read of a real receipt (offline: no registry check).
    const sparse = join(root, "sparse-receipt.json");
    await writeFile(sparse, "");
    await truncate(sparse, 2 * 1024 * 1024 * 1024);
    const fifo = join(root, "receipt.fifo");
    execFileSync("mkfifo", [fifo]);
    // A writer that would feed the FIFO forever: an unbounded read would never end (and fill memory).
    const writer = spawn("sh", ["-c", `exec yes '{"package":"demo-plugin"' > '${fifo}'`], { stdio: "ignore" });
    try {
      for (const receiptPath of ["/dev/zero", fifo, sparse]) {
        const upgrading = upgradePluginInLock({ lockPath: lock, receiptPath, offline: true });
        await expect(upgrading, receiptPath).rejects.toMatchObject({ code: "FLEET_RECEIPT_UNREADABLE" });
        await expect(upgrading).rejects.toThrow(`receipt ${receiptPath}: expected a regular file of at most 1048576 bytes`);
      }
    } finally {
      writer.kill("SIGKILL");
      await rm(sparse, { force: true });
      await rm(fifo, { force: true });
    }
    expect((await readFile(lock)).equals(before)).toBe(true);
    expect(await upgradePluginInLock({ lockPath: lock, receiptPath: receipt9, offline: true })).toMatchObject({ changed: true, plugin: { version: "0.9.0" } });
  });

  it("refuses an older version (FLEET_UPGRADE_NOT_NEWER, naming fleet remove + fleet add), takes the pinned one as done, another repository (RECEIPT_REGISTRY_MISMATCH), an unpinned package (FLEET_PLUGIN_NOT_PINNED); the lock is unchanged", async () => {
    const lock = lockPath();
    await addPluginToLock({ lockPath: lock, receiptPath: receipt9, repository });
    const before = await readFile(lock);
    await expect(() => upgradePluginInLock({ lockPath: lock, receiptPath: receipt8 })).toThrowWithCode("FLEET_UPGRADE_NOT_NEWER");
    await expect(upgradePluginInLock({ lockPath: lock, receiptPath: receipt8 })).rejects.toThrow(
      `an older release; to pin it instead run \`fleet remove --lock ${lock} --name demo-plugin\`, then \`fleet add --lock ${lock} --receipt ${receipt8} --repository ${repository}\``,
    );
    // The release already pinned is an idempotent success (a rerun of an upgrade), not an error.
    expect(await upgradePluginInLock({ lockPath: lock, receiptPath: receipt9 })).toMatchObject({ changed: false, plugin: { version: "0.9.0" } });
    const lock8 = lockPath();
    await addPluginToLock({ lockPath: lock8, receiptPath: receipt8, repository });
    const other = upgradePluginInLock({ lockPath: lock8, receiptPath: receipt9Elsewhere });
    await expect(other).rejects.toMatchObject({ code: "RECEIPT_REGISTRY_MISMATCH" });
    await expect(other).rejects.toThrow(/pinned references in the fleet lock/);
    const empty = lockPath();
    await writeFile(empty, '{"plugins":[],"schema_version":1}\n');
    await expect(() => upgradePluginInLock({ lockPath: empty, receiptPath: receipt9 })).toThrowWithCode("FLEET_PLUGIN_NOT_PINNED");
    await expect(upgradePluginInLock({ lockPath: empty, receiptPath: receipt9 })).rejects.toThrow(`pin it with \`fleet add --lock ${empty} --receipt ${receipt9} --repository <the registry repository you trust>\``);
    expect((await readFile(lock)).equals(before)).toBe(true);
    expect(otherRepository).not.toBe(repository);
  });

  it("fleet remove drops the pin; an unknown name lists what is pinned", async () => {
    const lock = lockPath();
    await addPluginToLock({ lockPath: lock, receiptPath: receipt8, repository });
    const missing = removePluginFromLock(lock, "nope");
    await expect(missing).rejects.toMatchObject({ code: "FLEET_PLUGIN_NOT_PINNED" });
    await expect(missing).rejects.toThrow(`(it pins demo-plugin); fix: give the name of a pinned plugin (hermes-plugin-kit fleet list --lock ${lock})`);
    const removed = await removePluginFromLock(lock, "demo-plugin");
    expect(removed.version).toBe("0.8.0");
    expect((await readFleetLockFile(lock)).plugins).toEqual([]);
  });

  it("fleet verify of a lock that pins nothing exits 0 but warns that nothing was verified (stderr, text, --json and --quiet); one pin: no such warning", async () => {
    const lock = lockPath();
    await addPluginToLock({ lockPath: lock, receiptPath: receipt8, repository });
    const one = await runCli(["fleet", "verify", "--lock", lock]);
    expect(one.code, one.stderr).toBe(0);
    expect(one.stderr).not.toContain("pins no plugin");
    await removePluginFromLock(lock, "demo-plugin");
    const text = await runCli(["fleet", "verify", "--lock", lock]);
    expect(text.code).toBe(0);
    expect(text.stdout).toBe(`fleet lock ${lock}: 0 plugin(s) verified\n`);
    expect(text.stderr).toBe(`hermes-plugin-kit: warning: fleet lock ${lock} pins no plugin: nothing was verified; pin one with hermes-plugin-kit fleet add --lock ${lock} --receipt <release-receipt.json> --repository <registry/repository>\n`);
    const json = await runCli(["fleet", "verify", "--lock", lock, "--json"]);
    expect(JSON.parse(json.stdout)).toEqual({ ok: true, plugins: [] });
    expect(json.stderr).toContain("pins no plugin: nothing was verified");
    // A warning (what was not verified) stays under --quiet, before or after the command's name.
    expect((await runCli(["fleet", "verify", "--lock", lock, "--quiet"])).stderr).toBe(text.stderr);
    const before = await runCli(["--quiet", "fleet", "verify", "--lock", lock]);
    expect([before.code, before.stdout, before.stderr]).toEqual([0, `fleet lock ${lock}: 0 plugin(s) verified\n`, text.stderr]);
    // With installed files to check, an empty lock fails: FLEET_LOCK_EMPTY (a passing answer would be about nothing).
    const installed = await runCli(["fleet", "verify", "--lock", lock, "--installed", tmpdir(), "--json"]);
    expect(installed.code).toBe(1);
    expect(JSON.parse(installed.stdout)).toMatchObject({ ok: false, code: "FLEET_LOCK_EMPTY" });
    expect(JSON.parse(installed.stdout).message).toBe(`fleet lock ${lock} pins no plugin, so nothing installed in ${tmpdir()} can be verified against a pin; fix: check that --lock names your fleet's lock, or pin the plugins first (hermes-plugin-kit fleet add --lock ${lock} --receipt <release-receipt.json> --repository <registry/repository>)`);
  });

  it("gate pins: a mismatching pin is refused before any write; a matching one is kept in the lock, survives upgrade and is enforced by fleet verify", async () => {
    const lock = lockPath();
    await expect(() => addPluginToLock({ lockPath: lock, receiptPath: receipt8, repository, gates: { unit: "just unit" } })).toThrowWithCode("GATE_COMMAND_MISMATCH");
    await expect(readFile(lock)).rejects.toThrow();
    await addPluginToLock({ lockPath: lock, receiptPath: receipt8, repository, gates: { unit: "npm test" } });
    const { plugin } = await upgradePluginInLock({ lockPath: lock, receiptPath: receipt9 });
    expect(plugin.gates).toEqual({ unit: "npm test" });
    const doc = JSON.parse(await readFile(lock, "utf8")) as { plugins: { gates: Record<string, string> }[] };
    doc.plugins[0]!.gates = { host_contract: "just contract" };
    await writeFile(lock, JSON.stringify(doc));
    const verify = verifyFleetLock({ lockPath: lock, openTarget: openLayout, progress: null });
    await expect(verify).rejects.toMatchObject({ code: "GATE_COMMAND_MISMATCH" });
    await expect(verify).rejects.toThrow(/from the fleet lock/);
  });
});

describe("resolve", () => {
  it("resolves a tag to the digest reference after the privacy gate; fetch still refuses the tag", async () => {
    const resolved = await resolveTagReference(`${repository}:v0.9.0`, { openTarget: openLayout });
    expect(resolved.reference).toBe(`${repository}@${v9.bundle.digest}`);
    await expect(() => fetchRelease({ reference: `${repository}:v0.9.0`, repository, outputDir: join(root, "never"), openTarget: openLayout, progress: null })).toThrowWithCode("REFERENCE_NOT_PINNED");
    await expect(() => resolveTagReference(`${repository}:v9.9.9`, { openTarget: openLayout })).toThrowWithCode("OCI_NOT_FOUND");
  });

  it.each([
    [`oci-layout:/srv/store@sha256:${"a".repeat(64)}`, "TAG_REFERENCE_INVALID"],
    ["ghcr.io/acme/plugin", "TAG_REFERENCE_INVALID"],
    ["127.0.0.1:5000/acme/plugin", "TAG_REFERENCE_INVALID"],
    ["ghcr.io/acme/plugin:-bad", "TAG_INVALID"],
    ["ghcr.io/Acme/plugin:v1", "REPOSITORY_INVALID"],
  ])("parseTagReference(%s) -> %s", async (value, code) => {
    await expect(() => parseTagReference(value)).toThrowWithCode(code);
  });

  it("parses host:port/path:tag and oci-layout:<dir>:tag", () => {
    expect(parseTagReference("127.0.0.1:5000/acme/plugin:v1.2.0")).toMatchObject({ tag: "v1.2.0", repository: { repository: "127.0.0.1:5000/acme/plugin" } });
    expect(parseTagReference("oci-layout:/srv/store:v1.2.0")).toMatchObject({ tag: "v1.2.0", repository: { repository: "oci-layout:/srv/store" } });
  });
});

describe("fetch an upgrade into a directory holding the previous version", () => {
  it("is refused with the fix (a new directory or --replace); --replace swaps the whole directory after verification", async () => {
    const out = join(root, "vendor");
    await fetchRelease({ reference: `${repository}@${v8.bundle.digest}`, repository, outputDir: out, openTarget: openLayout, progress: null });
    await fetchRelease({ reference: `${repository}@${v8.receipt.digest}`, repository, outputDir: out, openTarget: openLayout, progress: null });
    const before = (await readdir(out, { recursive: true })).sort();
    const refused = fetchRelease({ reference: `${repository}@${v9.bundle.digest}`, repository, outputDir: out, openTarget: openLayout, progress: null });
    await expect(refused).rejects.toMatchObject({ code: "INSTALL_OVERWRITE_REFUSED" });
    await expect(refused).rejects.toThrow(/install into a new directory \(another outputDir\), or swap the whole directory for demo-plugin 0\.9\.0 after verification \(fetchRelease with replace: true, or replaceInstall\)$/);
    expect((await readdir(out, { recursive: true })).sort()).toEqual(before);
    await fetchRelease({ reference: `${repository}@${v9.bundle.digest}`, repository, outputDir: out, openTarget: openLayout, progress: null, replace: true });
    const after = (await readdir(out, { recursive: true })).sort();
    expect(after).toContain("dist/demo-plugin-0.9.0.tgz");
    expect(after).not.toContain("dist/demo-plugin-0.8.0.tgz");
    expect(after).not.toContain("release-receipt.json");
    expect((await readdir(root)).filter((n) => n.includes(".hpk-"))).toEqual([]);
  });

  it("a failing verification with --replace leaves the directory exactly as it was", async () => {
    const out = join(root, "vendor-2");
    await fetchRelease({ reference: `${repository}@${v8.bundle.digest}`, repository, outputDir: out, openTarget: openLayout, progress: null });
    const before = (await readdir(out, { recursive: true })).sort();
    const wrongKind = fetchRelease({ reference: `${repository}@${v9.receipt.digest}`, repository, outputDir: out, openTarget: openLayout, progress: null, replace: true, expect: "bundle" });
    await expect(wrongKind).rejects.toMatchObject({ code: "FETCH_ARTIFACT_TYPE_MISMATCH" });
    expect((await readdir(out, { recursive: true })).sort()).toEqual(before);
  });
});

describe("one directory holds one release: a bundle and a receipt of different releases are never mixed", () => {
  const fetchInto = (out: string, reference: string, extra: Partial<Parameters<typeof fetchRelease>[0]> = {}) =>
    fetchRelease({ reference: `${repository}@${reference}`, repository, outputDir: out, openTarget: openLayout, progress: null, ...extra });
  const tree = async (dir: string) => (await readdir(dir, { recursive: true })).map(String).sort();

  it("library: the 0.9.0 receipt into a directory holding the 0.8.0 bundle is refused, naming both versions and the fix; nothing written", async () => {
    const out = join(root, "mixed-1");
    await fetchInto(out, v8.bundle.digest);
    const before = await tree(out);
    const refused = fetchInto(out, v9.receipt.digest);
    await expect(refused).rejects.toMatchObject({ code: "INSTALL_OVERWRITE_REFUSED" });
    await expect(refused).rejects.toThrow(/holds demo-plugin 0\.8\.0 .*being installed are demo-plugin 0\.9\.0 .*differ in version \(0\.8\.0 in .*\/mixed-1\/release-manifest\.json, 0\.9\.0 in release-receipt\.json of the demo-plugin 0\.9\.0 being installed\).*fix: install into a new directory \(another outputDir\), or swap .*\(fetchRelease with replace: true, or replaceInstall\)$/);
    expect(await tree(out)).toEqual(before);
    // The same release's receipt is still welcome, and --replace swaps the directory for the other release.
    await fetchInto(out, v8.receipt.digest);
    await fetchInto(out, v9.receipt.digest, { replace: true });
    expect(await tree(out)).toEqual(["release-receipt.json"]);
  });

  it("library: the 0.8.0 bundle into a directory holding the 0.9.0 receipt is refused; nothing written", async () => {
    const out = join(root, "mixed-2");
    await fetchInto(out, v9.receipt.digest);
    const before = await readFile(join(out, "release-receipt.json"));
    const refused = fetchInto(out, v8.bundle.digest);
    await expect(refused).rejects.toMatchObject({ code: "INSTALL_OVERWRITE_REFUSED" });
    await expect(refused).rejects.toThrow(/holds demo-plugin 0\.9\.0 .*demo-plugin 0\.8\.0/);
    expect(await tree(out)).toEqual(["release-receipt.json"]);
    expect(await readFile(join(out, "release-receipt.json"))).toEqual(before);
    // The bundle the receipt names is the same release: accepted.
    await fetchInto(out, v9.bundle.digest);
    expect(await tree(out)).toContain("dist/demo-plugin-0.9.0.tgz");
  });

  it("CLI: fetch of the 0.9.0 receipt into the 0.8.0 bundle's directory exits 1 with the code and both versions", async () => {
    const out = join(root, "mixed-cli");
    await fetchInto(out, v8.bundle.digest);
    const before = await tree(out);
    const result = await runCli(["fetch", "--reference", `${repository}@${v9.receipt.digest}`, "--output-dir", out]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(/demo-plugin 0\.8\.0 .*demo-plugin 0\.9\.0 .*pass --replace .*\[INSTALL_OVERWRITE_REFUSED\]\n$/);
    // The installed side is named by its path in the directory, the other as the release being installed; the CLI's fix names flags only.
    expect(result.stderr).toContain(`(0.8.0 in ${join(out, "release-manifest.json")}, 0.9.0 in release-receipt.json of the demo-plugin 0.9.0 being installed)`);
    expect(result.stderr).not.toContain("replace: true");
    expect(result.stderr).not.toContain("replaceInstall");
    expect(await tree(out)).toEqual(before);
  });
});

describe("an interruption and the install's commit (library AbortSignal, aborted from the commit hook)", () => {
  it("aborted right after --replace renamed the new release into place: the fetch succeeds, D holds the new release only", async () => {
    const out = join(root, "commit-1");
    await fetchRelease({ reference: `${repository}@${v8.bundle.digest}`, repository, outputDir: out, openTarget: openLayout, progress: null });
    const controller = new AbortController();
    let committed = 0;
    const result = await fetchRelease({
      reference: `${repository}@${v9.bundle.digest}`, repository, outputDir: out, openTarget: openLayout, progress: null, replace: true, signal: controller.signal,
      onCommit: () => {
        committed += 1;
        controller.abort();
      },
    });
    expect(committed).toBe(1);
    expect(controller.signal.aborted).toBe(true);
    expect(result.version).toBe("0.9.0");
    const after = (await readdir(out, { recursive: true })).map(String).sort();
    expect(after).toContain("dist/demo-plugin-0.9.0.tgz");
    expect(after).not.toContain("dist/demo-plugin-0.8.0.tgz");
    expect((await readdir(root)).filter((n) => n.startsWith(".commit-1.hpk-"))).toEqual([]);
  });

  it("aborted right after a plain install linked its last file: the fetch succeeds and the files stay", async () => {
    const out = join(root, "commit-2");
    const controller = new AbortController();
    const result = await fetchRelease({ reference: `${repository}@${v8.receipt.digest}`, repository, outputDir: out, openTarget: openLayout, progress: null, signal: controller.signal, onCommit: () => controller.abort() });
    expect(result.version).toBe("0.8.0");
    expect((await readdir(out)).sort()).toEqual(["release-receipt.json"]);
  });

  it("aborted before the install: INTERRUPTED, the directory left as it was", async () => {
    const out = join(root, "commit-3");
    await fetchRelease({ reference: `${repository}@${v8.bundle.digest}`, repository, outputDir: out, openTarget: openLayout, progress: null });
    const before = (await readdir(out, { recursive: true })).map(String).sort();
    const controller = new AbortController();
    controller.abort();
    const refused = fetchRelease({ reference: `${repository}@${v9.bundle.digest}`, repository, outputDir: out, openTarget: openLayout, progress: null, replace: true, signal: controller.signal, onCommit: () => expect.fail("no commit") });
    await expect(refused).rejects.toMatchObject({ code: "INTERRUPTED" });
    expect((await readdir(out, { recursive: true })).map(String).sort()).toEqual(before);
  });
});

describe("fetch --verbose shows progress even when stderr is not a terminal", () => {
  it("a quick fetch from a layout store prints a progress line and the summary on stderr; without --verbose nothing", async () => {
    const verbose = await runCli(["fetch", "--verbose", "--reference", `${repository}@${v8.bundle.digest}`, "--output-dir", join(root, "verbose-1")]);
    expect(verbose.code).toBe(0);
    expect(verbose.stderr).toMatch(/^fetch  \[[#.]{20}\] +\d+%  [\d.]+\/[\d.]+ MiB .*\n(.*\n)*fetch [\d.]+ MiB in [\d.]+ s \([\d.]+ MB\/s\)\n/m);
    const plain = await runCli(["fetch", "--reference", `${repository}@${v8.bundle.digest}`, "--output-dir", join(root, "verbose-2")]);
    expect(plain.code).toBe(0);
    expect(plain.stderr).toBe("");
  });
});

describe("fleet add run again (CLI): the pin already there is an idempotent success; another release names the command that works", () => {
  // The consumer pins the repository it trusts (required): here, the one each receipt was published to.
  const add = async (lock: string, receipt: string, ...extra: string[]) => {
    const repository = (JSON.parse(await readFile(receipt, "utf8")) as { registry_repository: string }).registry_repository;
    return runCli(["fleet", "add", "--lock", lock, "--receipt", receipt, "--repository", repository, ...extra]);
  };
  const codeOf = (stderr: string) => /\[([A-Z_]+)\]\n$/.exec(stderr)?.[1];
  let key: string;
  beforeAll(async () => {
    key = join(root, "attest.pub");
    await writeFile(key, generateKeyPairSync("ec", { namedCurve: "P-256" }).publicKey.export({ format: "pem", type: "spki" }));
  });

  it("the same receipt twice: exit 0 both times, the second says already pinned and writes nothing", async () => {
    const lock = lockPath();
    expect((await add(lock, receipt8)).stdout).toMatch(/^pinned demo-plugin 0\.8\.0/);
    const before = await readFile(lock);
    const again = await add(lock, receipt8);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/^already pinned demo-plugin 0\.8\.0/);
    expect((await readFile(lock)).equals(before)).toBe(true);
  });

  it("pinned with a provenance policy, added again without one (as README and the demo's next steps differ): already pinned, policy kept", async () => {
    const lock = lockPath();
    // The release has no attestation by this key: checked against the registry the add is refused, nothing written.
    const checked = await add(lock, receipt8, "--provenance", "--key", key);
    expect([checked.code, codeOf(checked.stderr)]).toEqual([1, "PROVENANCE_NOT_FOUND"]);
    expect(checked.stderr).toMatch(/^hermes-plugin-kit: plugin demo-plugin 0\.8\.0: /);
    await expect(readFile(lock)).rejects.toThrow(/ENOENT/);
    // --offline pins the policy from the file alone, and warns that nothing was checked against the registry.
    const offline = await add(lock, receipt8, "--provenance", "--key", key, "--offline");
    expect(offline.code).toBe(0);
    expect(offline.stderr).toBe(`hermes-plugin-kit: warning: --offline: the pin was made from the receipt file alone and not checked against the registry (that the repository published this receipt, its bundle, provenance); check it with hermes-plugin-kit fleet verify --lock ${lock}\n`);
    const before = await readFile(lock);
    // Added again without --offline, the pinned entry is checked: its provenance policy has no attestation to verify.
    const checkedAgain = await add(lock, receipt8);
    expect([checkedAgain.code, codeOf(checkedAgain.stderr)]).toEqual([1, "PROVENANCE_NOT_FOUND"]);
    const plain = await add(lock, receipt8, "--json", "--offline");
    expect(plain.code, plain.stderr).toBe(0);
    expect(JSON.parse(plain.stdout)).toMatchObject({ ok: true, changed: false, plugin: { version: "0.8.0", provenance: { key: expect.stringContaining("BEGIN PUBLIC KEY") } } });
    expect((await readFile(lock)).equals(before)).toBe(true);
  });

  it("the same release with another policy: FLEET_PLUGIN_CONFLICT naming fleet remove + fleet add (not fleet upgrade), which then works", async () => {
    const lock = lockPath();
    await add(lock, receipt8);
    const stricter = await add(lock, receipt8, "--provenance", "--key", key);
    expect(stricter.code).toBe(1);
    expect(codeOf(stricter.stderr)).toBe("FLEET_PLUGIN_CONFLICT");
    expect(stricter.stderr).toContain("with another provenance policy");
    expect(stricter.stderr).toContain(`\`fleet remove --lock ${lock} --name demo-plugin\`, then this \`fleet add\` again`);
    expect(stricter.stderr).not.toContain("fleet upgrade --lock");
    expect((await runCli(["fleet", "remove", "--lock", lock, "--name", "demo-plugin"])).code).toBe(0);
    expect((await add(lock, receipt8, "--provenance", "--key", key, "--offline")).code).toBe(0);
  });

  it("a newer release: names fleet upgrade, which works; rerunning either is an idempotent success", async () => {
    const lock = lockPath();
    await add(lock, receipt8);
    const newer = await add(lock, receipt9);
    expect(newer.code).toBe(1);
    expect(codeOf(newer.stderr)).toBe("FLEET_PLUGIN_CONFLICT");
    const suggested = /`fleet upgrade (--lock \S+ --receipt \S+)`/.exec(newer.stderr);
    expect(suggested, newer.stderr).not.toBeNull();
    const upgraded = await runCli(["fleet", "upgrade", ...suggested![1]!.split(" ")]);
    expect(upgraded.code, upgraded.stderr).toBe(0);
    expect(upgraded.stdout).toMatch(/^upgraded demo-plugin 0\.8\.0 -> 0\.9\.0/);
    const rerun = await runCli(["fleet", "upgrade", "--lock", lock, "--receipt", receipt9]);
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(rerun.stdout).toMatch(/^already pinned demo-plugin 0\.9\.0/);
    // The upgraded entry has a history; adding its current release again is still "already pinned".
    const readd = await add(lock, receipt9);
    expect(readd.code, readd.stderr).toBe(0);
    expect(readd.stdout).toMatch(/^already pinned demo-plugin 0\.9\.0/);
  });

  it.each([
    ["an older release", () => [receipt9, receipt8] as const, "an older release"],
    ["a release of another repository", () => [receipt8, receipt9Elsewhere] as const, "another repository"],
  ])("%s: FLEET_PLUGIN_CONFLICT naming fleet remove + fleet add, which then works", async (_label, receipts, why) => {
    const lock = lockPath();
    const [first, second] = receipts();
    await add(lock, first);
    const r = await add(lock, second);
    expect(r.code).toBe(1);
    expect(codeOf(r.stderr)).toBe("FLEET_PLUGIN_CONFLICT");
    expect(r.stderr).toContain(why);
    expect(r.stderr).toContain(`\`fleet remove --lock ${lock} --name demo-plugin\`, then this \`fleet add\` again`);
    expect(r.stderr).not.toContain("fleet upgrade --lock");
    expect((await runCli(["fleet", "remove", "--lock", lock, "--name", "demo-plugin"])).code).toBe(0);
    expect((await add(lock, second)).code).toBe(0);
  });
});

describe("a pinned repository with credentials in it is refused and never echoed (fleet add; the contract's own check)", () => {
  const secret = "S3cretPW";
  const withCredentials = (repo: string) => [`https://alice:${secret}@${repo}`, `alice:${secret}@${repo}`];

  it.each([0, 1])("fleet add --repository <form %i>: REPOSITORY_INVALID (exit 1), the password in neither stream, no lock written", async (form) => {
    const lock = lockPath();
    const r = await runCli(["fleet", "add", "--lock", lock, "--receipt", receipt8, "--repository", withCredentials("ghcr.io/acme/p")[form]!, "--json"]);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, code: "REPOSITORY_INVALID" });
    expect(r.stdout + r.stderr).not.toContain(secret);
    await expect(readFile(lock)).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("library addPluginToLock: the same code, message redacted, nothing written", async () => {
    const lock = lockPath();
    const error = await addPluginToLock({ lockPath: lock, receiptPath: receipt8, repository: withCredentials("ghcr.io/acme/p")[0]! }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "REPOSITORY_INVALID" });
    expect(String((error as Error).message)).not.toContain(secret);
    await expect(readFile(lock)).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("contract verifyFinalReceipt with such a policy: REPOSITORY_INVALID before any comparison could echo it", async () => {
    const doc = JSON.parse(await readFile(receipt8, "utf8")) as JsonObject;
    for (const registryRepository of withCredentials("ghcr.io/acme/p")) {
      const error = (() => {
        try {
          verifyFinalReceipt(doc, { package: "demo-plugin", registryRepository, gates: {} });
          return undefined;
        } catch (e) {
          return e as Error & { code?: string };
        }
      })();
      expect(error?.code).toBe("REPOSITORY_INVALID");
      expect(error?.message).not.toContain(secret);
    }
  });

  it("the right repository still pins (the passing case)", async () => {
    const lock = lockPath();
    await expect(addPluginToLock({ lockPath: lock, receiptPath: receipt8, repository })).resolves.toMatchObject({ changed: true });
  });
});

describe("a fleet lock path that is no regular file", () => {
  it("FLEET_LOCK_UNREADABLE says what was found (a device, a directory, a symbolic link) and the fix", async () => {
    const dir = await mkdtemp(join(tmpdir(), "hpk-fleet-lock-kind-"));
    try {
      await writeFile(join(dir, "real.json"), "{}");
      await symlink(join(dir, "real.json"), join(dir, "link.json"));
      for (const [path, found] of [["/dev/null", "a FIFO, socket or device"], [dir, "a directory"], [join(dir, "link.json"), "a symbolic link (not followed)"]] as const) {
        await expect(() => readFleetLockFile(path)).toThrowWithCode("FLEET_LOCK_UNREADABLE");
        const r = await runCli(["fleet", "list", "--lock", path]);
        expect(r.code).toBe(1);
        expect(r.stderr).toBe(`hermes-plugin-kit: fleet lock ${path} must be a regular file; found ${found}; fix: pass the path of the lock file itself [FLEET_LOCK_UNREADABLE]\n`);
      }
      // A lock that is not there (fleet verify / list / remove; fleet add creates it).
      const missing = join(dir, "missing.json");
      const r = await runCli(["fleet", "verify", "--lock", missing]);
      expect(r.code).toBe(1);
      expect(r.stderr).toBe(`hermes-plugin-kit: fleet lock ${missing} does not exist (ENOENT); fix: give the path of your fleet lock (hermes-plugin-kit fleet add --lock <file> creates one) [FLEET_LOCK_UNREADABLE]\n`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("fleet add: FLEET_RECEIPT_UNREADABLE says what it expected and what it found (missing, a directory, a device, too large); the lock is not created", async () => {
    const dir = await mkdtemp(join(tmpdir(), "hpk-fleet-receipt-kind-"));
    try {
      await writeFile(join(dir, "big.json"), Buffer.alloc(1024 * 1024 + 1, 0x20));
      const expected = "expected a regular file of at most 1048576 bytes (the release-receipt.json that fetch --expect receipt writes), found";
      for (const [path, found] of [
        [join(dir, "missing.json"), "no such file (ENOENT)"],
        [dir, "a directory, not a regular file; pass the path of the file itself"],
        ["/dev/zero", "a FIFO, socket or device, not a regular file; pass the path of the file itself"],
        [join(dir, "big.json"), "1048577 bytes, more than 1048576"],
      ] as const) {
        const lock = join(dir, "lock.json");
        await expect(() => addPluginToLock({ lockPath: lock, receiptPath: path, repository })).toThrowWithCode("FLEET_RECEIPT_UNREADABLE");
        const r = await runCli(["fleet", "add", "--lock", lock, "--receipt", path, "--repository", repository]);
        expect(r.code).toBe(1);
        expect(r.stderr).toBe(`hermes-plugin-kit: receipt ${path}: ${expected} ${found} [FLEET_RECEIPT_UNREADABLE]\n`);
        expect(existsSync(lock)).toBe(false);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("a fleet lock's permissions survive an edit", () => {
  it("fleet remove keeps a 0600 lock at 0600 (it became 0644)", async () => {
    const lock = lockPath();
    await addPluginToLock({ lockPath: lock, receiptPath: receipt8, repository });
    await chmod(lock, 0o600);
    await removePluginFromLock(lock, "demo-plugin");
    expect((await lstat(lock)).mode & 0o777).toBe(0o600);
    await chmod(lock, 0o640);
    await addPluginToLock({ lockPath: lock, receiptPath: receipt8, repository });
    expect((await lstat(lock)).mode & 0o777).toBe(0o640);
  });

  it("a read-only lock (0444) is refused (FLEET_LOCK_READ_ONLY) by remove, add and upgrade, even for root, and not replaced through its writable directory; nothing changes", async () => {
    const dir = await mkdtemp(join(tmpdir(), "hpk-fleet-ro-"));
    try {
      const lock = join(dir, "lock.json");
      await addPluginToLock({ lockPath: lock, receiptPath: receipt8, repository });
      await chmod(lock, 0o444);
      const before = await readFile(lock);
      const message = `fleet lock ${lock}: expected a lock this user may write, found mode 0444 owned by uid ${process.getuid!()}; nothing was changed; fix: make it writable (chmod u+w) if you mean to change it, as its owner`;
      await expect(() => removePluginFromLock(lock, "demo-plugin")).toThrowWithCode("FLEET_LOCK_READ_ONLY");
      await expect(removePluginFromLock(lock, "demo-plugin")).rejects.toThrow(message);
      await expect(() => upgradePluginInLock({ lockPath: lock, receiptPath: receipt9 })).toThrowWithCode("FLEET_LOCK_READ_ONLY");
      const r = await runCli(["fleet", "remove", "--lock", lock, "--name", "demo-plugin"]);
      expect(r.code).toBe(1);
      expect(r.stderr).toBe(`hermes-plugin-kit: ${message} [FLEET_LOCK_READ_ONLY]\n`);
      expect((await readFile(lock)).equals(before)).toBe(true);
      expect((await lstat(lock)).mode & 0o777).toBe(0o444);
      expect((await readdir(dir)).sort()).toEqual(["lock.json"]);
      // Made writable again, the edit goes through.
      await chmod(lock, 0o644);
      await expect(removePluginFromLock(lock, "demo-plugin")).resolves.toMatchObject({ name: "demo-plugin" });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
