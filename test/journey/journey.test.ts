/**
 * The journey of a plugin author outside this repository and of a consumer
 * without the author's checkout, end to end, in temporary directories outside
 * the repository (README "Write and release your own plugin"):
 *
 * - a real npm registry: Verdaccio 6.8.0 on 127.0.0.1 with no uplink, seeded
 *   from npm's cache with the closure of the kit's dependencies and vitest,
 *   plus this checkout's own `npm pack` (for the by-name path);
 * - release 1 runs the README's shell blocks verbatim from step 1 (step 0, the
 *   clone and `npm pack`, is this checkout's `npm pack` as `KIT_TGZ`): the kit
 *   vendored by `init --kit`, default npm-script gates, an `oci-layout:` store,
 *   and a consumer in an empty directory;
 * - `init` without `--kit` pins the kit it ran from: `npx --package <tgz>`
 *   vendors it, `npx hermes-plugin-kit@<version>` from the registry pins it by name;
 * - release 2 switches the same project to custom gates and Debian's
 *   docker-registry with Basic auth; a second consumer pins a gate; the first
 *   consumer meets `fetch --replace`, `fleet upgrade` across repositories and
 *   `resolve`.
 *
 * Every child process runs with a `PATH` that holds no `node_modules/.bin` of
 * this repository, its own HOME, npm cache and global prefix, so nothing of
 * this checkout leaks into the author's or the consumer's commands.
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdir, mkdtemp, readFile, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeRegistry, startRegistry, type RunningRegistry } from "../support/registry.js";
import { REPO_ROOT, publishClosureFromNpmCache, publishTarball, startVerdaccio, type RunningVerdaccio } from "../support/verdaccio.js";

let root: string;
let work: string;
let verdaccio: RunningVerdaccio | undefined;
let registry: RunningRegistry | undefined;
let kitVersion: string;
let kitTgz: string;
let sdkVersion: string;
let baseEnv: Record<string, string>;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Run a bash script (argument array: `bash -c <script>`) in `cwd` with the journey's environment. */
function sh(script: string, cwd: string, extra: Record<string, string> = {}, timeoutMs = 600_000): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn("bash", ["-c", `set -euo pipefail\n${script}`], { cwd, env: { ...baseEnv, ...extra }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout = (stdout + d).slice(-200_000)));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr = (stderr + d).slice(-200_000)));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, stdout, stderr });
    });
  });
}

function ok(run: Run, label: string): Run {
  if (run.code !== 0) throw new Error(`${label} exited ${run.code}\n--- stdout\n${run.stdout.slice(-6000)}\n--- stderr\n${run.stderr.slice(-6000)}`);
  return run;
}

/** The shell blocks of the README section "Write and release your own plugin", steps 1-4. */
async function readmeJourney(): Promise<string[]> {
  const readme = await readFile(join(REPO_ROOT, "README.md"), "utf8");
  const start = readme.indexOf("## Write and release your own plugin");
  const end = readme.indexOf("\n## ", start + 10);
  const section = readme.slice(start, end);
  const steps = section.slice(0, section.indexOf("**Where the kit dependency comes from.**"));
  const blocks = [...steps.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1] as string);
  return blocks;
}

describeRegistry("journey: a plugin author outside this repository and a consumer without the author's checkout", () => {
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), "hpk-journey-"));
    work = join(root, "work");
    await mkdir(work, { recursive: true });
    await mkdir(join(root, "home"), { recursive: true });
    const kit = JSON.parse(await readFile(join(REPO_ROOT, "package.json"), "utf8")) as { version: string; dependencies: Record<string, string> };
    kitVersion = kit.version;
    sdkVersion = kit.dependencies["@modelcontextprotocol/sdk"] as string;
    // No node_modules/.bin of this repository (npm test puts it on PATH), no npm context of this repository.
    const path = (process.env["PATH"] ?? "").split(delimiter).filter((p) => p !== "" && !/node_modules[\\/]\.bin/.test(p));
    baseEnv = {};
    for (const [name, value] of Object.entries(process.env)) {
      if (value === undefined || /^(npm_|INIT_CWD$|NODE_PATH$|REGISTRY_|GH_TOKEN$|GITHUB_TOKEN$|SEMANTIC_RELEASE_ENABLED$|HERMES_PLUGIN_KIT_)/i.test(name)) continue;
      baseEnv[name] = value;
    }
    verdaccio = await startVerdaccio(join(root, "verdaccio"));
    Object.assign(baseEnv, {
      PATH: [join(root, "global", "bin"), ...path].join(delimiter),
      HOME: join(root, "home"),
      npm_config_registry: verdaccio.url,
      npm_config_cache: join(root, "npm-cache"),
      npm_config_prefix: join(root, "global"),
      npm_config_audit: "false",
      npm_config_fund: "false",
      npm_config_update_notifier: "false",
      GIT_AUTHOR_NAME: "Plugin Author",
      GIT_AUTHOR_EMAIL: "author@example.invalid",
      GIT_COMMITTER_NAME: "Plugin Author",
      GIT_COMMITTER_EMAIL: "author@example.invalid",
    });
    const lock = JSON.parse(await readFile(join(REPO_ROOT, "package-lock.json"), "utf8")) as { packages: Record<string, { dependencies?: Record<string, string> }> };
    await publishClosureFromNpmCache(verdaccio.url, [...Object.keys(lock.packages[""]?.dependencies ?? {}), "vitest"]);
    // This checkout's kit, packed as npm packs it (dist is built by npm test's pretest).
    const packed = ok(await sh(`npm pack --ignore-scripts --silent --pack-destination ${JSON.stringify(root)}`, REPO_ROOT, { npm_config_registry: verdaccio.url }), "npm pack of the kit");
    kitTgz = join(root, packed.stdout.trim().split("\n").pop() as string);
    await publishTarball(verdaccio.url, await readFile(kitTgz));
    registry = await startRegistry({ auth: "basic" });
  }, 300_000);

  afterAll(async () => {
    // Each step is bounded (stopChild gives up after twice its grace); a slow one names itself in the log.
    const timed = async (label: string, step: () => Promise<void>): Promise<void> => {
      const started = Date.now();
      await step();
      if (Date.now() - started > 10_000) console.error(`journey teardown: ${label} took ${Date.now() - started} ms`);
    };
    await timed("verdaccio stop", async () => verdaccio?.stop());
    await timed("registry stop", async () => registry?.stop());
    await timed("rm of the journey root", async () => (root === undefined ? undefined : rm(root, { recursive: true, force: true })));
  }, 180_000);

  it("README steps 1-4 verbatim: init, npm install/test/build/doctor, git + origin + baseline, release run into oci-layout, consumer in an empty dir", async () => {
    const blocks = await readmeJourney();
    expect(blocks).toHaveLength(5);
    // Step 0 clones this repository and packs it: here, this checkout's npm pack stands in for it.
    expect(blocks[0]).toMatch(/^git clone <this repository> hermes-plugin-kit && \(cd hermes-plugin-kit && npm ci && npm pack\)\nKIT_TGZ=/);
    const script = blocks.slice(1).join("\n");
    // Its own bound, near the test's: step 1 now installs the kit through npx too (424 packages), ~1 min more on a loaded machine.
    const run = ok(await sh(script, work, { KIT_TGZ: kitTgz }, 860_000), "README journey");
    // The release: 0.1.0 -> 0.2.0 with the default npm-script gates, hermetic, and the SDK the plugin bundles.
    const release = JSON.parse(await readFile(join(work, "release.json"), "utf8")) as { released: boolean; version: string; bundle_reference: string; receipt_reference: string };
    expect(release).toMatchObject({ released: true, version: "0.2.0" });
    expect(release.bundle_reference).toMatch(new RegExp(`^oci-layout:${join(root, "home", "hermes-store", "my-plugin")}@sha256:[0-9a-f]{64}$`));
    const receipt = JSON.parse(await readFile(join(work, "consumer", "vendor", "my-plugin", "release-receipt.json"), "utf8")) as {
      evidence: Record<string, { command: string; mcp_sdk_version?: string }>;
    };
    expect(Object.fromEntries(Object.entries(receipt.evidence).filter(([k]) => k !== "workflow").map(([k, v]) => [k, v.command]))).toEqual({
      unit: "npm test",
      public_contract: "npm run doctor -- --no-call",
      host_contract: "npm run doctor",
      build_metadata: "npm run build",
    });
    expect(receipt.evidence["host_contract"]?.mcp_sdk_version).toBe(sdkVersion);
    // The consumer's install: the released plugin, its plugin.json version from package.json, started by doctor.
    const installed = JSON.parse(await readFile(join(work, "consumer", "node_modules", "my-plugin", "plugin.json"), "utf8")) as { name: string; version: string };
    expect(installed).toMatchObject({ name: "my-plugin", version: "0.2.0" });
    expect(run.stdout).toMatch(/greet/);
    expect((await readdir(join(work, "consumer"))).sort()).toEqual(["fleet.lock.json", "node_modules", "package-lock.json", "package.json", "vendor"]);
    // The kit the author used is the vendored tarball, pinned by its integrity; nothing fetched it by name.
    const lock = JSON.parse(await readFile(join(work, "my-plugin", "package-lock.json"), "utf8")) as { packages: Record<string, { resolved?: string; integrity?: string }> };
    const kitBytes = await readFile(kitTgz);
    expect(lock.packages["node_modules/hermes-plugin-kit"]).toMatchObject({
      resolved: `file:vendor/hermes-plugin-kit-${kitVersion}.tgz`,
      integrity: `sha512-${createHash("sha512").update(kitBytes).digest("base64")}`,
    });
    expect((await readFile(join(work, "my-plugin", "vendor", `hermes-plugin-kit-${kitVersion}.tgz`))).equals(kitBytes)).toBe(true);
  }, 900_000);

  it("init without --kit pins the kit it ran from: npx --package <tgz> vendors that tarball, npx by name from the registry pins by name", async () => {
    // No global kit here: README step 4 installed one (npx would run that one, which keeps no lock: INIT_KIT_SOURCE_UNKNOWN).
    const noGlobal = { npm_config_prefix: join(root, "no-global"), PATH: (baseEnv["PATH"] ?? "").split(delimiter).filter((p) => p !== join(root, "global", "bin")).join(delimiter) };
    const vendored = ok(await sh(`npx --yes --package "$KIT_TGZ" hermes-plugin-kit init auto-vendored --repository oci-layout:$HOME/hermes-store/auto`, work, { KIT_TGZ: kitTgz, ...noGlobal }), "init from npx --package <tgz>");
    expect(vendored.stderr).toContain(`the kit: vendor/hermes-plugin-kit-${kitVersion}.tgz (copied from ${kitTgz}, sha512-`);
    const vendoredPkg = JSON.parse(await readFile(join(work, "auto-vendored", "package.json"), "utf8")) as { devDependencies: Record<string, string> };
    expect(vendoredPkg.devDependencies["hermes-plugin-kit"]).toBe(`file:vendor/hermes-plugin-kit-${kitVersion}.tgz`);
    expect((await readFile(join(work, "auto-vendored", "vendor", `hermes-plugin-kit-${kitVersion}.tgz`))).equals(await readFile(kitTgz))).toBe(true);
    const byName = ok(await sh(`npx --yes hermes-plugin-kit@${kitVersion} init by-name --repository oci-layout:$HOME/hermes-store/by-name`, work, noGlobal), "init from npx by name");
    expect(byName.stderr).toContain(`the kit: hermes-plugin-kit@${kitVersion} by name from your npm registry (`);
    expect(byName.stderr).toContain(`installed by name from ${new URL(verdaccio!.url).origin})`);
    const byNamePkg = JSON.parse(await readFile(join(work, "by-name", "package.json"), "utf8")) as { devDependencies: Record<string, string> };
    expect(byNamePkg.devDependencies["hermes-plugin-kit"]).toBe(kitVersion);
    expect(await readdir(join(work, "by-name"))).not.toContain("vendor");
  }, 600_000);

  it("custom gates into Debian's docker-registry with Basic auth; a second consumer pins a gate; the first meets --replace, fleet upgrade across repositories and resolve", async () => {
    const repository = `${registry!.host}/acme/my-plugin`;
    const creds = { REGISTRY_USERNAME: registry!.username as string, REGISTRY_PASSWORD: registry!.password as string };
    const project = join(work, "my-plugin");
    // The author moves the plugin to the team registry and declares custom gates (one of them a new npm script).
    ok(
      await sh(
        `git pull -q --ff-only
        node -e '
          const fs = require("fs");
          const pkg = JSON.parse(fs.readFileSync("package.json", "utf8"));
          pkg.scripts.check = "npm run build && hermes-plugin-kit plugin doctor . --no-call";
          pkg.hermesPluginKit = { repository: process.argv[1], gates: { unit: "npm test -- --reporter=dot", public_contract: "npm run check", host_contract: "npm run doctor -- --json", build_metadata: "npm run build -- --json" } };
          fs.writeFileSync("package.json", JSON.stringify(pkg, null, 2) + "\\n");
        ' ${JSON.stringify(repository)}
        git commit -qam "feat: release to the team registry with our own gates"
        git push -q origin main
        SEMANTIC_RELEASE_ENABLED=true npx hermes-plugin-kit release run --workspace ../my-plugin-release-2 --plain-http > ../release-2.json`,
        project,
        creds,
      ),
      "release 2",
    );
    const release = JSON.parse(await readFile(join(work, "release-2.json"), "utf8")) as { version: string; bundle_reference: string; receipt_reference: string };
    expect(release.version).toBe("0.3.0");
    expect(release.bundle_reference.startsWith(`${repository}@sha256:`)).toBe(true);
    const refs = { BUNDLE: release.bundle_reference, RECEIPT: release.receipt_reference };

    // A second consumer, in an empty directory, pins the unit gate's command.
    ok(
      await sh(
        `mkdir consumer-2 && cd consumer-2
        hermes-plugin-kit fetch --reference "$BUNDLE" --output-dir vendor/my-plugin --plain-http
        hermes-plugin-kit fetch --reference "$RECEIPT" --output-dir vendor/my-plugin --plain-http
        hermes-plugin-kit verify-final-receipt --receipt vendor/my-plugin/release-receipt.json --expect-bundle-reference "$BUNDLE" --expect-receipt-reference "$RECEIPT" --expect-gate 'unit=npm test -- --reporter=dot'
        hermes-plugin-kit fleet add --lock fleet.lock.json --receipt vendor/my-plugin/release-receipt.json --repository "\${BUNDLE%@*}" --expect-gate 'public_contract=npm run check' --plain-http
        hermes-plugin-kit fleet verify --lock fleet.lock.json --installed vendor/my-plugin --plain-http
        npm install --ignore-scripts --save-exact ./vendor/my-plugin/dist/my-plugin-0.3.0.tgz
        hermes-plugin-kit plugin doctor node_modules/my-plugin`,
        work,
        { ...creds, ...refs },
      ),
      "consumer 2",
    );
    const wrongPin = await sh(`cd consumer-2 && hermes-plugin-kit verify-final-receipt --receipt vendor/my-plugin/release-receipt.json --expect-bundle-reference "$BUNDLE" --expect-gate 'unit=npm test'`, work, refs);
    expect(wrongPin.code).toBe(1);
    expect(wrongPin.stderr).toMatch(/ran "npm test -- --reporter=dot", not the pinned command "npm test" \(from --expect-gate\); fix: do not use this release, or, only if you accept that command as the unit gate, pin it instead \(unit="npm test -- --reporter=dot" in --expect-gate\) \[GATE_COMMAND_MISMATCH\]/);

    // The first consumer: its directory holds 0.2.0, so the upgrade needs a new directory or --replace.
    const consumer = join(work, "consumer");
    const refused = await sh(`hermes-plugin-kit fetch --reference "$BUNDLE" --output-dir vendor/my-plugin --plain-http`, consumer, { ...creds, ...refs });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/pass --replace .*\[INSTALL_OVERWRITE_REFUSED\]/);
    ok(
      await sh(
        `hermes-plugin-kit fetch --reference "$BUNDLE" --output-dir vendor/my-plugin --plain-http --replace
        hermes-plugin-kit fetch --reference "$RECEIPT" --output-dir vendor/my-plugin --plain-http
        test "$(hermes-plugin-kit resolve --reference ${repository}:v0.3.0 --plain-http)" = "$BUNDLE"`,
        consumer,
        { ...creds, ...refs },
      ),
      "consumer 1 upgrade",
    );
    expect((await readdir(join(consumer, "vendor", "my-plugin", "dist"))).sort()).toEqual(["my-plugin-0.3.0.tgz"]);
    // The pin moves only within one repository: 0.2.0 came from the oci-layout store.
    const upgrade = await sh(`hermes-plugin-kit fleet upgrade --lock fleet.lock.json --receipt vendor/my-plugin/release-receipt.json`, consumer);
    expect(upgrade.code).toBe(1);
    expect(upgrade.stderr).toMatch(/\[RECEIPT_REGISTRY_MISMATCH\]/);
    expect(upgrade.stderr).toMatch(/pinned references in the fleet lock/);
  }, 900_000);
});
