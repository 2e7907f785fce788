/**
 * Fleet pins against an `oci-layout:` store with real staged artifacts:
 * `fleet add` from a published receipt, `fleet verify` fetching each receipt
 * by digest, and every mismatch between lock, receipt and installed file.
 */
import { chmod, mkdir, mkdtemp, readFile, rename, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { canonicalJsonPretty } from "../../src/contract/canonical-json.js";
import { fetchRelease, type OpenReadTarget } from "../../src/fetch/fetch.js";
import { addPluginToLock, fleetLockBytes, readFleetLockFile, verifyFleetLock } from "../../src/fetch/fleet.js";
import { upgradePluginInLock } from "../../src/fetch/fleet-edit.js";
import { receiptReferenceOf } from "../../src/contract/artifact-document.js";
import { LayoutTarget } from "../../src/oci/layout-target.js";
import { createReleaseFixture, stageFixture, variantWithChecksums, type ReleaseFixture, type StagedRelease } from "../support/release-fixture.js";
import { createHash } from "node:crypto";
import { RECEIPT_ARTIFACT_TYPE, RELEASE_ARTIFACT_TYPE } from "../../src/contract/constants.js";
import { buildPublishedReceipt, receiptBytes } from "../../src/contract/manifest.js";
import { writeLayout } from "../../src/oci/layout.js";
import { copy } from "../../src/oci/transfer.js";

let root: string;
let storeDir: string;
let repository: string;
let fixture: ReleaseFixture;
let staged: StagedRelease;
let receiptFile: string;
let installed: string;
const openLayout: OpenReadTarget = async (repo) => {
  if (repo.kind !== "layout") throw new Error("layout only");
  return LayoutTarget.open(repo.dir);
};
let counter = 0;

async function lockWith(edit?: (plugin: Record<string, unknown>) => void): Promise<string> {
  counter += 1;
  const lockPath = join(root, `lock-${counter}.json`);
  await addPluginToLock({ lockPath, receiptPath: receiptFile, repository });
  if (edit !== undefined) {
    const lock = JSON.parse(await readFile(lockPath, "utf8")) as { plugins: Record<string, unknown>[] };
    edit(lock.plugins[0]!);
    await writeFile(lockPath, JSON.stringify(lock));
  }
  return lockPath;
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "hpk-fleet-"));
  storeDir = join(root, "store");
  repository = `oci-layout:${storeDir}`;
  fixture = await createReleaseFixture({ registryRepository: repository, packageName: "@acme/demo" });
  staged = await stageFixture(fixture, await LayoutTarget.open(storeDir, { create: true }), repository);
  await chmod(storeDir, 0o700);
  receiptFile = join(root, "release-receipt.json");
  await writeFile(receiptFile, staged.receiptBytes);
  installed = join(root, "installed");
  await fetchRelease({ reference: `${repository}@${staged.bundle.digest}`, repository, outputDir: installed, openTarget: openLayout, progress: null });
});

afterAll(async () => {
  await fixture.cleanup();
  await rm(root, { recursive: true, force: true });
});

describe("fleet add", () => {
  it("pins name, version, bundle and receipt references and the tarball; the receipt reference is the staged one", async () => {
    const lockPath = join(root, "fleet.lock.json");
    const { plugin, changed } = await addPluginToLock({ lockPath, receiptPath: receiptFile, repository });
    expect(changed).toBe(true);
    expect(plugin).toEqual({
      name: "@acme/demo",
      version: fixture.version,
      bundle_reference: `${repository}@${staged.bundle.digest}`,
      receipt_reference: `${repository}@${staged.receipt.digest}`,
      tarball: { filename: "acme-demo-0.8.0.tgz", sha256: fixture.manifest.artifacts[0]!.sha256 },
    });
    expect(receiptReferenceOf(repository, staged.receiptBytes)).toBe(plugin.receipt_reference);
    const lock = await readFleetLockFile(lockPath);
    expect((await readFile(lockPath)).equals(fleetLockBytes(lock))).toBe(true);
    const again = await addPluginToLock({ lockPath, receiptPath: receiptFile, repository });
    expect(again.changed).toBe(false);
    expect((await readFleetLockFile(lockPath)).plugins).toHaveLength(1);
  });

  it("expectations come from the pinned repository, never from the receipt: none pinned -> POLICY_REPOSITORY_UNPINNED, another -> RECEIPT_REGISTRY_MISMATCH; no lock written", async () => {
    const lockPath = join(root, "unpinned.lock.json");
    const unpinned = addPluginToLock({ lockPath, receiptPath: receiptFile });
    await expect(() => unpinned).toThrowWithCode("POLICY_REPOSITORY_UNPINNED");
    await expect(unpinned).rejects.toThrow(/nothing pinned to verify against: expected the registry repository you trust, found none \(receipt .* names registry_repository ".*store", but a document never sets its own expectations\); expectations come only from what you pin \(--repository\); fix: pass --repository <the registry repository you trust>$/);
    const other = addPluginToLock({ lockPath, receiptPath: receiptFile, repository: "ghcr.io/acme/other" });
    await expect(() => other).toThrowWithCode("RECEIPT_REGISTRY_MISMATCH");
    await expect(readFile(lockPath)).rejects.toThrow(/ENOENT/);
    const pinned = await addPluginToLock({ lockPath, receiptPath: receiptFile, repository });
    expect(pinned.changed).toBe(true);
  });

  it.each([
    ["addPluginToLock()", () => addPluginToLock(undefined as never), /^addPluginToLock needs its options as an object \{ lockPath, receiptPath, repository, .*\}, found nothing$/],
    ["addPluginToLock(a receipt path)", () => addPluginToLock(receiptFile as never), /^addPluginToLock needs its options as an object .*, found ".*release-receipt\.json"$/],
    ["addPluginToLock without lockPath", () => addPluginToLock({ receiptPath: receiptFile, repository } as never), /^addPluginToLock option lockPath must be the fleet lock file \(a non-empty string\), found nothing$/],
    ["addPluginToLock with receiptPath \"\"", () => addPluginToLock({ lockPath: join(root, "options.lock.json"), receiptPath: "", repository }), /^addPluginToLock option receiptPath must be the release-receipt\.json file to pin \(a non-empty string\), found an empty string$/],
    ["upgradePluginInLock(null)", () => upgradePluginInLock(null as never), /^upgradePluginInLock needs its options as an object .*, found null$/],
    ["verifyFleetLock()", () => verifyFleetLock(undefined as never), /^verifyFleetLock needs its options as an object .*, found nothing$/],
  ] as Array<[string, () => Promise<unknown>, RegExp]>)("%s -> POLICY_INVALID naming the options, before anything is read; no lock written", async (_name, call, message) => {
    const error = await call().catch((e: unknown) => e);
    expect(error).toThrowWithCode("POLICY_INVALID");
    expect((error as Error).message).toMatch(message);
    await expect(readFile(join(root, "options.lock.json"))).rejects.toThrow(/ENOENT/);
  });

  it("refuses a tested manifest where a receipt is expected", async () => {
    const manifestFile = fixture.files.get("release-manifest.json")!;
    await expect(() => addPluginToLock({ lockPath: join(root, "x.lock.json"), receiptPath: manifestFile, repository })).toThrowWithCode("RECEIPT_STATE_MISMATCH");
  });

  it("refuses a receipt that is not in its canonical published bytes", async () => {
    const pretty = join(root, "pretty-receipt.json");
    await writeFile(pretty, canonicalJsonPretty(JSON.parse(staged.receiptBytes.toString("utf8"))));
    await expect(() => addPluginToLock({ lockPath: join(root, "y.lock.json"), receiptPath: pretty, repository })).toThrowWithCode("FLEET_RECEIPT_NOT_CANONICAL");
    await expect(addPluginToLock({ lockPath: join(root, "y.lock.json"), receiptPath: pretty, repository })).rejects.toThrow(/is not in its published canonical form: expected the exact published bytes .*, found .*; fix: pass the file that fetch --reference <receipt reference> --expect receipt wrote, unreformatted$/);
  });

  it("refuses to re-pin a plugin differently", async () => {
    const lockPath = await lockWith((p) => {
      p["version"] = "0.7.0";
    });
    await expect(() => addPluginToLock({ lockPath, receiptPath: receiptFile, repository })).toThrowWithCode("FLEET_PLUGIN_CONFLICT");
  });

  it("refuses a lock with a duplicate JSON key, a tag reference, or a plugin twice", async () => {
    const lockPath = await lockWith();
    const text = await readFile(lockPath, "utf8");
    await writeFile(lockPath, text.replace('"schema_version": 1', '"schema_version": 1, "schema_version": 1'));
    await expect(() => readFleetLockFile(lockPath)).toThrowWithCode("FLEET_LOCK_INVALID");
    const tagLock = await lockWith((p) => {
      p["bundle_reference"] = `${repository}:v0.8.0`;
    });
    await expect(() => verifyFleetLock({ lockPath: tagLock, openTarget: openLayout, progress: null })).toThrowWithCode("FLEET_LOCK_INVALID");
    // Every FLEET_LOCK_INVALID names the lock file.
    await expect(verifyFleetLock({ lockPath: tagLock, openTarget: openLayout, progress: null })).rejects.toThrow(`fleet lock ${tagLock} `);
    const twice = await lockWith();
    const lock = JSON.parse(await readFile(twice, "utf8")) as { plugins: unknown[] };
    lock.plugins.push(lock.plugins[0]);
    await writeFile(twice, JSON.stringify(lock));
    await expect(() => readFleetLockFile(twice)).toThrowWithCode("FLEET_LOCK_INVALID");
  });
});

describe("fleet verify", () => {
  it("fetches each receipt by digest and checks it against the pins and the installed file", async () => {
    const lockPath = await lockWith();
    const results = await verifyFleetLock({ lockPath, openTarget: openLayout, progress: null, installedDir: installed });
    expect(results).toHaveLength(1);
    expect(results[0]!.installed).toEqual([join(installed, "dist", "acme-demo-0.8.0.tgz")]);
    expect(results[0]!.receipt_reference).toBe(`${repository}@${staged.receipt.digest}`);
  });

  it("a pinned bundle reference other than the receipt's -> FLEET_BUNDLE_REFERENCE_MISMATCH", async () => {
    const lockPath = await lockWith((p) => {
      p["bundle_reference"] = `${repository}@sha256:${"e".repeat(64)}`;
    });
    await expect(() => verifyFleetLock({ lockPath, openTarget: openLayout, progress: null })).toThrowWithCode("FLEET_BUNDLE_REFERENCE_MISMATCH");
  });

  it("a pinned tarball SHA-256 other than the receipt's -> FLEET_TARBALL_MISMATCH", async () => {
    const lockPath = await lockWith((p) => {
      p["tarball"] = { filename: "acme-demo-0.8.0.tgz", sha256: "0".repeat(64) };
    });
    await expect(() => verifyFleetLock({ lockPath, openTarget: openLayout, progress: null })).toThrowWithCode("FLEET_TARBALL_MISMATCH");
  });

  it("a pinned version other than the receipt's -> FLEET_VERSION_MISMATCH", async () => {
    const lockPath = await lockWith((p) => {
      p["version"] = "0.8.1";
    });
    await expect(() => verifyFleetLock({ lockPath, openTarget: openLayout, progress: null })).toThrowWithCode("FLEET_VERSION_MISMATCH");
  });

  it("a receipt reference to nothing -> OCI_NOT_FOUND; to the bundle -> FETCH_ARTIFACT_TYPE_MISMATCH", async () => {
    const lockPath = await lockWith((p) => {
      p["receipt_reference"] = `${repository}@${"sha256:" + "f".repeat(64)}`;
    });
    await expect(() => verifyFleetLock({ lockPath, openTarget: openLayout, progress: null })).toThrowWithCode("OCI_NOT_FOUND");
    await expect(verifyFleetLock({ lockPath, openTarget: openLayout, progress: null })).rejects.toThrow(
      new RegExp(`^plugin \\S+ [0-9.]+: its pinned receipt ${repository.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}@sha256:f{64} is not in the registry .*fix: .*hermes-plugin-kit fleet remove --lock \\S+ --name \\S+`),
    );
    // One fix, the fleet's (fetch's own hint for a missing digest is not repeated inside it).
    const message = await verifyFleetLock({ lockPath, openTarget: openLayout, progress: null }).then(() => "", (e: unknown) => (e as Error).message);
    expect(message.match(/fix:/g)).toHaveLength(1);
    const swapped = await lockWith((p) => {
      p["receipt_reference"] = `${repository}@${staged.bundle.digest}`;
      p["bundle_reference"] = `${repository}@${staged.receipt.digest}`;
    });
    await expect(() => verifyFleetLock({ lockPath: swapped, openTarget: openLayout, progress: null })).toThrowWithCode("FETCH_ARTIFACT_TYPE_MISMATCH");
  });

  it("a blob of the pinned receipt deleted from the store -> OCI_NOT_FOUND naming the plugin and an incomplete release (not a missing pin)", async () => {
    const lockPath = await lockWith(() => {});
    const blob = join(storeDir, "blobs", "sha256", createHash("sha256").update(staged.receiptBytes).digest("hex"));
    const saved = `${blob}.saved`;
    await rename(blob, saved);
    try {
      const message = await verifyFleetLock({ lockPath, openTarget: openLayout, progress: null }).then(() => "", (e: unknown) => `${(e as { code: string }).code} ${(e as Error).message}`);
      expect(message).toMatch(new RegExp(`^OCI_NOT_FOUND plugin \\S+ [0-9.]+: its pinned receipt ${repository.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}@sha256:[0-9a-f]{64}: OCI blob sha256:[0-9a-f]{64} not found`));
      expect(message).toContain("but not this blob it names, so the release is incomplete in this repository");
      expect(message).not.toContain("is not in the registry");
      expect(message.match(/fix:/g)).toHaveLength(1);
    } finally {
      await rename(saved, blob);
    }
  });

  it("a pinned bundle whose layers are not the receipt's payload -> FLEET_BUNDLE_MISMATCH", async () => {
    // Another real bundle (its checksum file has CRLF line ends, so one layer differs) ...
    const variant = await variantWithChecksums(fixture, (t) => t.replaceAll("\n", "\r\n"));
    const work = await mkdtemp(join(tmpdir(), "hpk-fleet-mismatch-"));
    try {
      const store = await LayoutTarget.open(storeDir);
      await writeLayout(join(work, "bundle"), RELEASE_ARTIFACT_TYPE, variant.files);
      const other = await copy(await LayoutTarget.open(join(work, "bundle")), store, "payload", { tag: null });
      // ... and a receipt that names it but records the original bundle's payload.
      const layers = [];
      for (const [path, local] of fixture.files) {
        const bytes = await readFile(local);
        layers.push({ path, digest: "sha256:" + createHash("sha256").update(bytes).digest("hex"), size: bytes.length });
      }
      const lying = receiptBytes(buildPublishedReceipt(fixture.manifest, `${repository}@${other.digest}`, layers, fixture.policy));
      const lyingFile = join(work, "release-receipt.json");
      await writeFile(lyingFile, lying);
      await writeLayout(join(work, "receipt"), RECEIPT_ARTIFACT_TYPE, new Map([["release-receipt.json", lyingFile]]));
      await copy(await LayoutTarget.open(join(work, "receipt")), store, "payload", { tag: null });
      const lockPath = join(work, "fleet.lock.json");
      // fleet add checks the new pin against the store as fleet verify does: refused, nothing written.
      await expect(() => addPluginToLock({ lockPath, receiptPath: lyingFile, repository })).toThrowWithCode("FLEET_BUNDLE_MISMATCH");
      await expect(addPluginToLock({ lockPath, receiptPath: lyingFile, repository })).rejects.toThrow(/, so this receipt is not the one published with the bundle it names; fix: add the receipt published with that bundle \(fetch it by the receipt reference the release printed\); nothing was written$/);
      await expect(readFile(lockPath)).rejects.toThrow(/ENOENT/);
      // Pinned from the file alone (offline), fleet verify refuses it.
      await addPluginToLock({ lockPath, receiptPath: lyingFile, repository, offline: true });
      await expect(() => verifyFleetLock({ lockPath, openTarget: openLayout, progress: null })).toThrowWithCode("FLEET_BUNDLE_MISMATCH");
      await expect(verifyFleetLock({ lockPath, openTarget: openLayout, progress: null })).rejects.toThrow(/, so the lock pins a receipt and a bundle that are not one release; fix: fleet remove --name @acme\/demo, then fleet add --receipt <the receipt published with the bundle you trust>$/);
    } finally {
      await variant.cleanup();
      await rm(work, { recursive: true, force: true });
    }
  });

  it("installed tarball with other bytes, missing, or a symlink -> FLEET_INSTALLED_*", async () => {
    const lockPath = await lockWith();
    const other = join(root, "installed-other");
    await mkdir(join(other, "dist"), { recursive: true });
    await writeFile(join(other, "dist", "acme-demo-0.8.0.tgz"), "other");
    await expect(() => verifyFleetLock({ lockPath, openTarget: openLayout, progress: null, installedDir: other })).toThrowWithCode("FLEET_INSTALLED_MISMATCH");
    // Each refusal says what to do: fetch the pinned bundle by its reference (named), or upgrade the pin.
    const bundleReference = (await readFleetLockFile(lockPath)).plugins[0]!.bundle_reference;
    await expect(verifyFleetLock({ lockPath, openTarget: openLayout, progress: null, installedDir: other })).rejects.toThrow(
      `; fix: install the pinned release again (hermes-plugin-kit fetch --reference ${bundleReference} --output-dir <new dir>, then copy its acme-demo-0.8.0.tgz), or, if the installed file is a newer release you want, pin it with hermes-plugin-kit fleet upgrade`,
    );
    const empty = join(root, "installed-empty");
    await mkdir(empty);
    await expect(() => verifyFleetLock({ lockPath, openTarget: openLayout, progress: null, installedDir: empty })).toThrowWithCode("FLEET_INSTALLED_MISSING");
    await expect(verifyFleetLock({ lockPath, openTarget: openLayout, progress: null, installedDir: empty })).rejects.toThrow(
      `; fix: fetch it (hermes-plugin-kit fetch --reference ${bundleReference} --output-dir <new dir>) and copy its acme-demo-0.8.0.tgz there, or give --installed the directory that holds it`,
    );
    const linked = join(root, "installed-link");
    await mkdir(linked);
    await symlink(join(installed, "dist", "acme-demo-0.8.0.tgz"), join(linked, "acme-demo-0.8.0.tgz"));
    await expect(() => verifyFleetLock({ lockPath, openTarget: openLayout, progress: null, installedDir: linked })).toThrowWithCode("FLEET_INSTALLED_UNSAFE");
    await expect(verifyFleetLock({ lockPath, openTarget: openLayout, progress: null, installedDir: linked })).rejects.toThrow("; fix: install the fetched tarball there as a regular file (copy it; do not link it)");
    // The installed directory, or its dist/, as a symbolic link to the real one: refused as fetch refuses to install through one.
    const linkedDir = join(root, "installed-dir-link");
    await symlink(installed, linkedDir);
    const viaDir = verifyFleetLock({ lockPath, openTarget: openLayout, progress: null, installedDir: linkedDir });
    await expect(() => viaDir).toThrowWithCode("FLEET_INSTALLED_UNSAFE");
    await expect(viaDir).rejects.toThrow(`${linkedDir} is a symbolic link (--installed and its dist/ must be real directories, as fetch installs into); fix: give --installed the directory itself (realpath ${linkedDir})`);
    const linkedDist = join(root, "installed-dist-link");
    await mkdir(linkedDist);
    await symlink(join(installed, "dist"), join(linkedDist, "dist"));
    await expect(() => verifyFleetLock({ lockPath, openTarget: openLayout, progress: null, installedDir: linkedDist })).toThrowWithCode("FLEET_INSTALLED_UNSAFE");
    // Passing: the real directory.
    await expect(verifyFleetLock({ lockPath, openTarget: openLayout, progress: null, installedDir: installed })).resolves.toHaveLength(1);
  });
});
