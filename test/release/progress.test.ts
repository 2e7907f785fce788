/** Progress lines of long work (release/progress.ts) and the consumer's next steps (release/next-steps.ts). */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { consumerCliCommand, kitCliCommand } from "../../release/cli-command.js";
import { CLI } from "../support/cli.js";
import { createProgress } from "../../release/progress.js";
import { consumerNextSteps, shellWord } from "../../release/next-steps.js";
import { DEFAULT_GATE_COMMANDS } from "../../src/contract/policy.js";

function sink() {
  const lines: string[] = [];
  let pending = "";
  const stream = {
    write(chunk: string) {
      pending += chunk;
      const parts = pending.split("\n");
      pending = parts.pop() ?? "";
      lines.push(...parts);
      return true;
    },
  } as unknown as NodeJS.WritableStream;
  return { lines, stream };
}

describe("createProgress", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("says when a task starts, every heartbeat while it runs, and when it ends with the elapsed time", () => {
    vi.useFakeTimers();
    let clock = 0;
    const { lines, stream } = sink();
    const progress = createProgress(stream, { heartbeatMs: 10_000, now: () => clock, indent: "  " });
    const task = progress.start("gate unit");
    for (let i = 0; i < 3; i += 1) {
      clock += 10_000;
      vi.advanceTimersByTime(10_000);
    }
    clock += 1_500;
    expect(task.done("ran", "3 files")).toBe(31_500);
    vi.advanceTimersByTime(60_000);
    expect(lines).toEqual([
      "  ▸ gate unit",
      "  … gate unit still running (10 s)",
      "  … gate unit still running (20 s)",
      "  … gate unit still running (30 s)",
      "  ✓ gate unit (ran, 31.5 s) — 3 files",
    ]);
  });

  it("a failed task says why on one line and stops its heartbeat; ending twice writes once", () => {
    vi.useFakeTimers();
    let clock = 0;
    const { lines, stream } = sink();
    const progress = createProgress(stream, { heartbeatMs: 10_000, now: () => clock });
    const task = progress.start("stage");
    clock = 2_000;
    task.failed("registry said 503\nretry later");
    task.done();
    vi.advanceTimersByTime(30_000);
    progress.skipped("github-release", "no GitHub here");
    expect(lines).toEqual(["▸ stage", "✗ stage (2.0 s): registry said 503 retry later", "- github-release (no GitHub here)"]);
  });

  it("a silenced reporter still times its tasks", () => {
    let clock = 0;
    const task = createProgress(null, { now: () => clock }).start("build");
    clock = 1234;
    expect(task.done()).toBe(1234);
  });
});

describe("consumerNextSteps", () => {
  const bundle = `ghcr.io/acme/my-plugin@sha256:${"b".repeat(64)}`;
  const receipt = `ghcr.io/acme/my-plugin@sha256:${"c".repeat(64)}`;

  it("fills in the references, repository and tarball; installs with --ignore-scripts", () => {
    const lines = consumerNextSteps({ repository: "ghcr.io/acme/my-plugin", bundleReference: bundle, receiptReference: receipt, packageName: "@acme/my-plugin", tarball: "acme-my-plugin-1.2.0.tgz" });
    expect(lines[0]).toMatch(/^# read credentials for ghcr\.io: /);
    expect(lines.slice(1)).toEqual([
      `hermes-plugin-kit fetch --reference ${bundle} --repository ghcr.io/acme/my-plugin --output-dir vendor/acme-my-plugin --expect bundle`,
      `hermes-plugin-kit fetch --reference ${receipt} --repository ghcr.io/acme/my-plugin --output-dir vendor/acme-my-plugin --expect receipt`,
      `hermes-plugin-kit verify-final-receipt --receipt vendor/acme-my-plugin/release-receipt.json --repository ghcr.io/acme/my-plugin --expect-bundle-reference ${bundle} --expect-receipt-reference ${receipt}`,
      "hermes-plugin-kit fleet add --lock fleet.lock.json --receipt vendor/acme-my-plugin/release-receipt.json --repository ghcr.io/acme/my-plugin",
      "hermes-plugin-kit fleet verify --lock fleet.lock.json --installed vendor/acme-my-plugin",
      "npm install --ignore-scripts --save-exact ./vendor/acme-my-plugin/dist/acme-my-plugin-1.2.0.tgz",
    ]);
  });

  it("a loopback registry gets --plain-http on every registry command; a layout store needs no credentials line", () => {
    const plain = consumerNextSteps({ repository: "127.0.0.1:5000/acme/p", bundleReference: bundle, receiptReference: receipt, packageName: "p", tarball: "p-1.0.0.tgz", plainHttp: true, credentialsHint: "export REGISTRY_USERNAME=u" });
    expect(plain[0]).toBe("export REGISTRY_USERNAME=u");
    const registryCommands = plain.filter((l) => l.includes(" fetch ") || l.includes("fleet verify") || l.includes("fleet add"));
    expect(registryCommands).toHaveLength(4);
    expect(registryCommands.every((l) => l.endsWith(" --plain-http"))).toBe(true);
    const layout = consumerNextSteps({ repository: "oci-layout:/tmp/my store", bundleReference: "oci-layout:/tmp/my store@sha256:" + "b".repeat(64), receiptReference: "oci-layout:/tmp/my store@sha256:" + "c".repeat(64), packageName: "p", tarball: "p-1.0.0.tgz" });
    expect(layout[0]).toMatch(/^hermes-plugin-kit fetch --reference 'oci-layout:\/tmp\/my store@sha256:b{64}' --repository 'oci-layout:\/tmp\/my store' /);
  });

  it("with the attestation's public key, the bundle fetch and fleet add require signed provenance by that key; the receipt fetch does not", () => {
    const lines = consumerNextSteps({ repository: "127.0.0.1:5000/acme/p", bundleReference: bundle, receiptReference: receipt, packageName: "p", tarball: "p-1.0.0.tgz", plainHttp: true, provenanceKey: "/tmp/demo ws/attest-key.pub" });
    const key = "--provenance --key '/tmp/demo ws/attest-key.pub'";
    expect(lines.filter((l) => l.includes(key))).toEqual([
      `hermes-plugin-kit fetch --reference ${bundle} --repository 127.0.0.1:5000/acme/p --output-dir vendor/p --expect bundle ${key} --plain-http`,
      `hermes-plugin-kit fleet add --lock fleet.lock.json --receipt vendor/p/release-receipt.json --repository 127.0.0.1:5000/acme/p ${key} --plain-http`,
    ]);
    expect(consumerNextSteps({ repository: "oci-layout:/s", bundleReference: bundle, receiptReference: receipt, packageName: "p", tarball: "p-1.0.0.tgz" }).join("\n")).not.toContain("--provenance");
  });

  it("names the gate commands that are not the defaults as --expect-gate pins; default gates need no line", () => {
    const refs = { repository: "oci-layout:/s", bundleReference: "oci-layout:/s@sha256:" + "b".repeat(64), receiptReference: "oci-layout:/s@sha256:" + "c".repeat(64), packageName: "p", tarball: "p-1.0.0.tgz" };
    const gates = { unit: "npm test", public_contract: "just test-release", host_contract: "just test-contract", build_metadata: "just build && just check-dist" };
    const lines = consumerNextSteps({ ...refs, gates });
    expect(lines[0]).toBe(
      "# this release's gates are not the defaults; to require exactly these commands, add to verify-final-receipt and fleet add: --expect-gate 'public_contract=just test-release' --expect-gate 'host_contract=just test-contract' --expect-gate 'build_metadata=just build && just check-dist'",
    );
    expect(lines.filter((l) => l.startsWith("#"))).toHaveLength(1);
    expect(consumerNextSteps({ ...refs, gates: { ...DEFAULT_GATE_COMMANDS } })[0]).toMatch(/^hermes-plugin-kit fetch /);
  });

  it("shellWord quotes what a shell would split or expand", () => {
    expect(shellWord("ghcr.io/a/b@sha256:00")).toBe("ghcr.io/a/b@sha256:00");
    expect(shellWord("a b")).toBe("'a b'");
    expect(shellWord("it's $HOME")).toBe(`'it'\\''s $HOME'`);
  });
});

describe("kitCliCommand: the CLI form release run and release demo print (the kit is not on the npm registry)", () => {
  it("without this installation on PATH: node <absolute path of its CLI>, which runs from any directory", () => {
    const command = kitCliCommand({ PATH: "/nonexistent-bin" });
    expect(command).toBe(`node ${CLI}`);
    const run = spawnSync("sh", ["-c", `${command} --version`], { cwd: tmpdir(), encoding: "utf8" });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout.trim()).toMatch(/^[0-9]+\.[0-9]+\.[0-9]+$/);
    expect(command).not.toContain("npx");
  });

  it("with a hermes-plugin-kit on PATH that is this installation (a global install's bin link): hermes-plugin-kit", () => {
    const bin = mkdtempSync(join(tmpdir(), "hpk-bin-"));
    try {
      symlinkSync(CLI, join(bin, "hermes-plugin-kit"));
      expect(kitCliCommand({ PATH: `/nonexistent-bin${delimiter}${bin}` })).toBe("hermes-plugin-kit");
      // Another installation of the same name is not this one.
      const other = mkdtempSync(join(tmpdir(), "hpk-bin-other-"));
      writeFileSync(join(other, "hermes-plugin-kit"), "#!/bin/sh\n", { mode: 0o755 });
      expect(kitCliCommand({ PATH: other })).toBe(`node ${CLI}`);
      rmSync(other, { recursive: true, force: true });
      // A project's node_modules/.bin (what npx and npm run put on their child's PATH, not the shell's) does not count.
      const project = mkdtempSync(join(tmpdir(), "hpk-project-"));
      const dotBin = join(project, "node_modules", ".bin");
      mkdirSync(dotBin, { recursive: true });
      symlinkSync(CLI, join(dotBin, "hermes-plugin-kit"));
      expect(kitCliCommand({ PATH: dotBin })).toBe(`node ${CLI}`);
      expect(kitCliCommand({ PATH: `${dotBin}/` })).toBe(`node ${CLI}`);
      expect(kitCliCommand({ PATH: `${dotBin}${delimiter}${bin}` })).toBe("hermes-plugin-kit");
      rmSync(project, { recursive: true, force: true });
    } finally {
      rmSync(bin, { recursive: true, force: true });
    }
  });
});

describe("consumerCliCommand: the CLI form of the consumer's printed next steps (README step 4: hermes-plugin-kit on the consumer's PATH)", () => {
  it("from an installed kit (its CLI inside a node_modules: the author's project or a global install): hermes-plugin-kit, never a path into the author's project", () => {
    const installed = "/home/author/my-plugin/node_modules/hermes-plugin-kit/dist/src/cli/main.cjs";
    expect(consumerCliCommand({ PATH: "/nonexistent-bin" }, installed)).toBe("hermes-plugin-kit");
    expect(consumerCliCommand({ PATH: "/nonexistent-bin" }, "/usr/lib/node_modules/hermes-plugin-kit/dist/src/cli/main.cjs")).toBe("hermes-plugin-kit");
    // The resume line is for the author, on this machine: it keeps the absolute form.
    expect(kitCliCommand({ PATH: "/nonexistent-bin" }, installed)).toBe(`node ${installed}`);
  });

  it("from a clone (this checkout): node <absolute path of its CLI>, as README's demo section says", () => {
    expect(CLI.split("/")).not.toContain("node_modules");
    expect(consumerCliCommand({ PATH: "/nonexistent-bin" })).toBe(`node ${CLI}`);
    // A directory merely named like a package is no node_modules.
    expect(consumerCliCommand({ PATH: "/nonexistent-bin" }, "/src/node_modules-like/hermes-plugin-kit/dist/src/cli/main.cjs")).toBe("node /src/node_modules-like/hermes-plugin-kit/dist/src/cli/main.cjs");
  });

  it("the steps printed with it call hermes-plugin-kit for every command", () => {
    const steps = consumerNextSteps({ repository: "oci-layout:/tmp/store", bundleReference: "oci-layout:/tmp/store@sha256:" + "a".repeat(64), receiptReference: "oci-layout:/tmp/store@sha256:" + "b".repeat(64), packageName: "p", tarball: "p-0.2.0.tgz", cli: consumerCliCommand({ PATH: "" }, "/a/node_modules/hermes-plugin-kit/dist/src/cli/main.cjs") });
    const commands = steps.filter((line) => !line.startsWith("#") && !line.startsWith("npm "));
    expect(commands.length).toBeGreaterThan(3);
    for (const line of commands) expect(line).toMatch(/^hermes-plugin-kit /);
    expect(steps.join("\n")).not.toContain("/a/node_modules");
  });
});
