/**
 * The GitHub workflows `hermes-plugin-kit init` writes: `test.yml` (read-only)
 * and `release.yml`, the gated private release of reference section 6 as this
 * repository runs it (.github/workflows/release.yml): activation switch,
 * materialize, build-stage (install, gates, one npm pack, tested manifest,
 * privacy check, staging), a keyless `attest` job (GitHub OIDC through the
 * pinned attest action; the provenance stored as an OCI referrer of the staged
 * bundle; the only job with `id-token`, `attestations` and `packages` write),
 * promote, publish and the GitHub Release. Every action is pinned by commit
 * SHA, the same commits this repository's workflows use (test/kit/init.test.ts
 * compares them, and the attest job, with this repository's).
 */

/** Pinned actions. */
const CHECKOUT = "actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683 # v4.2.2";
const SETUP_NODE = "actions/setup-node@49933ea5288caeca8642d1e84afbd3f7d6820020 # v4.4.0";
const UPLOAD = "actions/upload-artifact@ea165f8d65b6e75b540449e92b4886f43607fa02 # v4.6.2";
const DOWNLOAD = "actions/download-artifact@d3f86a106a0bac45b974a628896c90dbdf5c8093 # v4.3.0";
const ATTEST = "actions/attest@1e69f48acb82d1966a394da916b4c1698aa569d6 # v4.2.2";
const NODE_VERSION = "20.20.2";
/** The first steps of a job that needs no history: the trigger commit without persisted credentials, then Node. */
const SHALLOW_CHECKOUT_AND_NODE = `      - uses: ${CHECKOUT}
        with:
          ref: \${{ github.sha }}
          persist-credentials: false
      - uses: ${SETUP_NODE}
        with:
          node-version: \${{ env.NODE_VERSION }}
`;
/** The first steps of a release job: the trigger commit with full history and no persisted credentials, then Node. */
const CHECKOUT_AND_NODE = `      - uses: ${CHECKOUT}
        with:
          ref: \${{ github.sha }}
          fetch-depth: 0
          persist-credentials: false
      - uses: ${SETUP_NODE}
        with:
          node-version: \${{ env.NODE_VERSION }}
`;

/** `.github/workflows/test.yml`: install, test, doctor; read-only. */
export function testWorkflow(): string {
  return `# Tests of the plugin. Read-only: no secrets, no write permission.
name: test

on:
  push:
  pull_request:

permissions:
  contents: read

jobs:
  test:
    runs-on: ubuntu-24.04
    timeout-minutes: 15
    steps:
      - uses: ${CHECKOUT}
        with:
          persist-credentials: false
      - uses: ${SETUP_NODE}
        with:
          node-version: "${NODE_VERSION}"
      - run: npm ci --no-audit --no-fund
      - run: npm test
      - run: npm run doctor
`;
}

/** The keyless attest job, as this repository's release workflow runs it. */
function attestJob(): string {
  return `  attest:
    name: attest (keyless provenance of the staged bundle, stored as an OCI referrer)
    needs: [materialize, build-stage]
    if: needs.materialize.outputs.released == 'true'
    runs-on: ubuntu-24.04
    timeout-minutes: 15
    environment: private-artifacts
    # The only job that may mint an OIDC token, write attestations and write packages.
    permissions:
      contents: read
      id-token: write
      attestations: write
      packages: write
    outputs:
      attested: \${{ steps.predicate.outputs.attested }}
    steps:
${SHALLOW_CHECKOUT_AND_NODE}      - run: npm ci --engine-strict --no-audit --no-fund
      - name: Keep a verifying attestation, or write the provenance predicate
        id: predicate
        env:
          GH_TOKEN: \${{ secrets.PRIVATE_ARTIFACTS_TOKEN }}
          BUNDLE_REFERENCE: \${{ needs.build-stage.outputs.bundle_reference }}
        run: |
          if [ -z "\${GH_TOKEN-}" ]; then echo "::error::PRIVATE_ARTIFACTS_TOKEN is empty"; exit 1; fi
          if npx hermes-plugin-kit verify-provenance --reference "$BUNDLE_REFERENCE" --repo "$GITHUB_REPOSITORY" --json > "$RUNNER_TEMP/existing.json"; then
            echo "attested=true" >> "$GITHUB_OUTPUT"
            exit 0
          fi
          code="$(jq -r '.code' "$RUNNER_TEMP/existing.json")"
          if [ "$code" != "PROVENANCE_NOT_FOUND" ]; then echo "::error::the bundle has attestations that do not verify for this release ($code)"; exit 1; fi
          npx hermes-plugin-kit release provenance-predicate --repository "$PRIVATE_REPOSITORY" --reference "$BUNDLE_REFERENCE" --output "$RUNNER_TEMP/predicate.json" > "$RUNNER_TEMP/subject.json"
          test "$(jq -r '.subject_name' "$RUNNER_TEMP/subject.json")" = "$PRIVATE_REPOSITORY"
          {
            echo "attested=false"
            echo "subject_digest=$(jq -r '.subject_digest' "$RUNNER_TEMP/subject.json")"
          } >> "$GITHUB_OUTPUT"
      - name: Registry login for the attest action (token on stdin)
        if: steps.predicate.outputs.attested == 'false'
        env:
          GH_TOKEN: \${{ secrets.PRIVATE_ARTIFACTS_TOKEN }}
        run: |
          if [ -z "\${GH_TOKEN-}" ]; then echo "::error::PRIVATE_ARTIFACTS_TOKEN is empty"; exit 1; fi
          printf '%s' "$GH_TOKEN" | docker login ghcr.io --username "$GITHUB_ACTOR" --password-stdin
      - name: Attest keylessly (GitHub OIDC, Fulcio, Rekor) and push the bundle as a referrer
        if: steps.predicate.outputs.attested == 'false'
        uses: ${ATTEST}
        with:
          subject-name: \${{ env.PRIVATE_REPOSITORY }}
          subject-digest: \${{ steps.predicate.outputs.subject_digest }}
          predicate-type: https://slsa.dev/provenance/v1
          predicate-path: \${{ runner.temp }}/predicate.json
          push-to-registry: true
          create-storage-record: false
      - name: Remove the registry login
        if: always()
        run: docker logout ghcr.io || true
      - name: Verify the stored attestation as a consumer would
        env:
          GH_TOKEN: \${{ secrets.PRIVATE_ARTIFACTS_TOKEN }}
          BUNDLE_REFERENCE: \${{ needs.build-stage.outputs.bundle_reference }}
        run: |
          if [ -z "\${GH_TOKEN-}" ]; then echo "::error::PRIVATE_ARTIFACTS_TOKEN is empty"; exit 1; fi
          npx hermes-plugin-kit verify-provenance --reference "$BUNDLE_REFERENCE" --repo "$GITHUB_REPOSITORY"

`;
}

/** Header, triggers, least top-level permissions, env and the activation (disarm switch) job. */
function releaseHeader(repository: string): string {
  return `# Gated private release of ${repository} with hermes-plugin-kit, the same pipeline as hermes-plugin-kit's own:
# activation switch -> materialize (release commit, tag, source bundle; nothing pushed) -> build-stage (the
# policy's install command, the gates of package.json on the restored source, one npm pack, tested manifest,
# privacy check, private staging) -> attest (keyless provenance of the staged bundle through GitHub's attest
# action, stored as an OCI referrer; the only job with id-token, attestations and packages write) -> promote
# (immutable releases required, main + tag pushed atomically) -> publish (receipt) -> github-release.
# Disarmed unless the repository variable SEMANTIC_RELEASE_ENABLED is exactly "true". Secrets are mapped only
# on the steps that need them; gate and install commands run without any credential variable.
name: release

on:
  push:
    branches: [main]
  workflow_dispatch:

permissions:
  contents: read

concurrency:
  group: semantic-release-main
  cancel-in-progress: false

defaults:
  run:
    shell: bash

env:
  NODE_VERSION: "${NODE_VERSION}"
  PRIVATE_REPOSITORY: ${repository}

jobs:
  activation:
    name: activation (SEMANTIC_RELEASE_ENABLED switch)
    runs-on: ubuntu-24.04
    timeout-minutes: 5
    permissions: {}
    outputs:
      enabled: \${{ steps.switch.outputs.enabled }}
    steps:
      - name: Read the disarm switch
        id: switch
        env:
          SEMANTIC_RELEASE_ENABLED: \${{ vars.SEMANTIC_RELEASE_ENABLED }}
        run: |
          if [ "\${SEMANTIC_RELEASE_ENABLED-}" = "true" ]; then
            echo "enabled=true" >> "$GITHUB_OUTPUT"
          else
            echo "::notice::semantic release is disarmed: SEMANTIC_RELEASE_ENABLED is not exactly \\"true\\""
            echo "enabled=false" >> "$GITHUB_OUTPUT"
          fi

`;
}

/** Release commit, tag and source bundle, nothing pushed; the bundle (already-public source) goes on as an Actions artifact. */
function materializeJob(): string {
  return `  materialize:
    name: materialize (release commit, tag and source bundle; no push)
    needs: activation
    if: needs.activation.outputs.enabled == 'true'
    runs-on: ubuntu-24.04
    timeout-minutes: 20
    permissions:
      contents: read
    outputs:
      released: \${{ steps.materialize.outputs.released }}
      version: \${{ steps.materialize.outputs.version }}
      previous_version: \${{ steps.materialize.outputs.previous_version }}
      tag: \${{ steps.materialize.outputs.tag }}
      release_sha: \${{ steps.materialize.outputs.release_sha }}
      source_artifact_name: \${{ steps.materialize.outputs.source_artifact_name }}
    steps:
${CHECKOUT_AND_NODE}      - run: npm ci --no-audit --no-fund
      - name: Materialize the release locally
        id: materialize
        env:
          TRIGGER_SHA: \${{ github.sha }}
          SEMANTIC_RELEASE_ENABLED: \${{ vars.SEMANTIC_RELEASE_ENABLED }}
        run: |
          test "$GITHUB_REF" = "refs/heads/main"
          test "$(git rev-parse HEAD)" = "$TRIGGER_SHA"
          git switch --force-create main "$TRIGGER_SHA"
          npx hermes-plugin-kit release materialize --expected-sha "$TRIGGER_SHA" --output-dir "$RUNNER_TEMP/source" > "$RUNNER_TEMP/materialize.json"
          released="$(jq -r '.released' "$RUNNER_TEMP/materialize.json")"
          echo "released=$released" >> "$GITHUB_OUTPUT"
          if [ "$released" = "true" ]; then
            version="$(jq -r '.version' "$RUNNER_TEMP/materialize.json")"
            release_sha="$(jq -r '.source_sha' "$RUNNER_TEMP/materialize.json")"
            {
              echo "version=$version"
              echo "previous_version=$(jq -r '.previous_version' "$RUNNER_TEMP/materialize.json")"
              echo "tag=$(jq -r '.tag' "$RUNNER_TEMP/materialize.json")"
              echo "release_sha=$release_sha"
              echo "source_artifact_name=release-source-$version-$release_sha"
            } >> "$GITHUB_OUTPUT"
          fi
      - name: Upload the source bundle (already-public source only)
        if: steps.materialize.outputs.released == 'true'
        uses: ${UPLOAD}
        with:
          name: \${{ steps.materialize.outputs.source_artifact_name }}
          path: |
            \${{ runner.temp }}/source/release-source.bundle
            \${{ runner.temp }}/source/release-source.sha256
          compression-level: 0
          retention-days: 90
          if-no-files-found: error

`;
}

/** Gates on the restored source after the install command, one npm pack, tested manifest, privacy gate, private staging. */
function buildStageJob(): string {
  return `  build-stage:
    name: build-stage (gates on the bundled source, build once, manifest, private staging)
    needs: materialize
    if: needs.materialize.outputs.released == 'true'
    runs-on: ubuntu-24.04
    timeout-minutes: 45
    environment: private-artifacts
    permissions:
      contents: read
    outputs:
      bundle_reference: \${{ steps.stage.outputs.bundle_reference }}
    steps:
${CHECKOUT_AND_NODE}      - uses: ${DOWNLOAD}
        with:
          name: \${{ needs.materialize.outputs.source_artifact_name }}
          path: \${{ runner.temp }}/source
      - run: npm ci --no-audit --no-fund
      - name: Restore and verify the release source
        env:
          TRIGGER_SHA: \${{ github.sha }}
          RELEASE_SHA: \${{ needs.materialize.outputs.release_sha }}
          VERSION: \${{ needs.materialize.outputs.version }}
        run: |
          npx hermes-plugin-kit release restore --bundle "$RUNNER_TEMP/source/release-source.bundle" --checksum-file "$RUNNER_TEMP/source/release-source.sha256" --expected-sha "$TRIGGER_SHA" --dir "$RUNNER_TEMP/release" > "$RUNNER_TEMP/restore.json"
          test "$(jq -r '.source_sha' "$RUNNER_TEMP/restore.json")" = "$RELEASE_SHA"
          test "$(jq -r '.version' "$RUNNER_TEMP/restore.json")" = "$VERSION"
      - name: Install (the policy's install command, hermesPluginKit.install, default npm ci), then the four gates
        run: |
          cd "$RUNNER_TEMP/release"
          npm ci --no-audit --no-fund
          for gate in unit public_contract host_contract build_metadata; do
            npx hermes-plugin-kit release gate "$gate" --evidence-dir "$RUNNER_TEMP/evidence"
          done
      - name: Build once (npm pack exactly once) and check the distribution
        env:
          VERSION: \${{ needs.materialize.outputs.version }}
        run: |
          cd "$RUNNER_TEMP/release"
          npx hermes-plugin-kit release build --artifact-dir "$RUNNER_TEMP/payload/dist" --release-version "$VERSION"
      - name: Create and verify the tested manifest and the payload checksums
        env:
          RELEASE_SHA: \${{ needs.materialize.outputs.release_sha }}
          VERSION: \${{ needs.materialize.outputs.version }}
          PREVIOUS_VERSION: \${{ needs.materialize.outputs.previous_version }}
        run: |
          cp "$RUNNER_TEMP/source/release-source.bundle" "$RUNNER_TEMP/payload/release-source.bundle"
          cd "$RUNNER_TEMP/payload"
          npx hermes-plugin-kit release create-manifest --dir "$RUNNER_TEMP/release" --previous-version "$PREVIOUS_VERSION" --release-version "$VERSION" --tag "v$VERSION" --source-sha "$RELEASE_SHA" --run-id "$GITHUB_RUN_ID" --run-attempt "$GITHUB_RUN_ATTEMPT" --evidence-dir "$RUNNER_TEMP/evidence" --artifact-dir dist --output release-manifest.json
          npx hermes-plugin-kit release verify-manifest --dir "$RUNNER_TEMP/release" --manifest release-manifest.json --artifact-dir dist
          npx hermes-plugin-kit release checksums --dir "$RUNNER_TEMP/release" --bundle release-source.bundle --manifest release-manifest.json --artifact-dir dist --output release-payload.sha256
      - name: Privacy gate and private staging
        id: stage
        env:
          GH_TOKEN: \${{ secrets.PRIVATE_ARTIFACTS_TOKEN }}
          RELEASE_SHA: \${{ needs.materialize.outputs.release_sha }}
        run: |
          if [ -z "\${GH_TOKEN-}" ]; then echo "::error::PRIVATE_ARTIFACTS_TOKEN is empty"; exit 1; fi
          npx hermes-plugin-kit release check-private --repository "$PRIVATE_REPOSITORY" --bootstrap
          npx hermes-plugin-kit release stage --repository "$PRIVATE_REPOSITORY" --tag "candidate-$GITHUB_RUN_ID-$RELEASE_SHA" --manifest "$RUNNER_TEMP/payload/release-manifest.json" --artifact-dir "$RUNNER_TEMP/payload/dist" --source-bundle "$RUNNER_TEMP/payload/release-source.bundle" --payload-checksums "$RUNNER_TEMP/payload/release-payload.sha256" --output "$RUNNER_TEMP/staged-release.json"
          echo "bundle_reference=$(jq -r '.bundle_reference' "$RUNNER_TEMP/staged-release.json")" >> "$GITHUB_OUTPUT"

`;
}

/** Immutable releases required, then main + tag pushed atomically from the staged bundle. */
function promoteJob(): string {
  return `  promote:
    name: promote (immutable releases required; atomic push of main and the tag)
    needs: [materialize, build-stage, attest]
    if: needs.materialize.outputs.released == 'true'
    runs-on: ubuntu-24.04
    timeout-minutes: 20
    environment: source-promotion
    permissions:
      contents: read
    steps:
${CHECKOUT_AND_NODE}      - run: npm ci --no-audit --no-fund
      - name: Require immutable releases
        env:
          GH_TOKEN: \${{ secrets.SOURCE_PROMOTION_TOKEN }}
        run: |
          if [ -z "\${GH_TOKEN-}" ]; then echo "::error::SOURCE_PROMOTION_TOKEN is empty"; exit 1; fi
          npx hermes-plugin-kit release check-immutable
      - name: Fetch the staged bundle by digest, verify it and push main + tag atomically
        env:
          SOURCE_PROMOTION_TOKEN: \${{ secrets.SOURCE_PROMOTION_TOKEN }}
          GH_TOKEN: \${{ secrets.PRIVATE_ARTIFACTS_TOKEN }}
          BUNDLE_REFERENCE: \${{ needs.build-stage.outputs.bundle_reference }}
          TRIGGER_SHA: \${{ github.sha }}
        run: |
          if [ -z "\${SOURCE_PROMOTION_TOKEN-}" ]; then echo "::error::SOURCE_PROMOTION_TOKEN is empty"; exit 1; fi
          if [ -z "\${GH_TOKEN-}" ]; then echo "::error::PRIVATE_ARTIFACTS_TOKEN is empty"; exit 1; fi
          npx hermes-plugin-kit release promote --repository "$PRIVATE_REPOSITORY" --reference "$BUNDLE_REFERENCE" --remote origin > "$RUNNER_TEMP/promote.json"
          test "$(jq -r '.trigger_sha' "$RUNNER_TEMP/promote.json")" = "$TRIGGER_SHA"

`;
}

/** Bind the version tags and write the receipt. */
function publishJob(): string {
  return `  publish:
    name: publish (bind v<V>, receipt artifact)
    needs: [materialize, build-stage, promote]
    if: needs.materialize.outputs.released == 'true'
    runs-on: ubuntu-24.04
    timeout-minutes: 20
    environment: private-artifacts
    permissions:
      contents: read
    outputs:
      bundle_reference: \${{ steps.publish.outputs.bundle_reference }}
      receipt_reference: \${{ steps.publish.outputs.receipt_reference }}
    steps:
${SHALLOW_CHECKOUT_AND_NODE}      - run: npm ci --no-audit --no-fund
      - name: Publish privately and write the receipt
        id: publish
        env:
          GH_TOKEN: \${{ secrets.PRIVATE_ARTIFACTS_TOKEN }}
          BUNDLE_REFERENCE: \${{ needs.build-stage.outputs.bundle_reference }}
        run: |
          if [ -z "\${GH_TOKEN-}" ]; then echo "::error::PRIVATE_ARTIFACTS_TOKEN is empty"; exit 1; fi
          npx hermes-plugin-kit release publish --repository "$PRIVATE_REPOSITORY" --reference "$BUNDLE_REFERENCE" --output "$RUNNER_TEMP/release-receipt.json" --references "$RUNNER_TEMP/publication.json"
          {
            echo "bundle_reference=$(jq -r '.bundle_reference' "$RUNNER_TEMP/publication.json")"
            echo "receipt_reference=$(jq -r '.receipt_reference' "$RUNNER_TEMP/publication.json")"
          } >> "$GITHUB_OUTPUT"

`;
}

/** The immutable GitHub Release (metadata only). */
function githubReleaseJob(): string {
  return `  github-release:
    name: github-release (immutable, metadata only)
    needs: [materialize, promote, publish]
    if: needs.materialize.outputs.released == 'true'
    runs-on: ubuntu-24.04
    timeout-minutes: 10
    permissions:
      contents: write
    steps:
${SHALLOW_CHECKOUT_AND_NODE}      - run: npm ci --no-audit --no-fund
      - name: Create or verify the immutable GitHub Release
        env:
          GH_TOKEN: \${{ github.token }}
          VERSION: \${{ needs.materialize.outputs.version }}
          RELEASE_SHA: \${{ needs.materialize.outputs.release_sha }}
          BUNDLE_REFERENCE: \${{ needs.publish.outputs.bundle_reference }}
          RECEIPT_REFERENCE: \${{ needs.publish.outputs.receipt_reference }}
        run: npx hermes-plugin-kit release github-release --release-version "$VERSION" --release-sha "$RELEASE_SHA" --bundle-reference "$BUNDLE_REFERENCE" --receipt-reference "$RECEIPT_REFERENCE"
`;
}

/**
 * `.github/workflows/release.yml` for a plugin whose releases go to `repository`
 * (`hermesPluginKit.repository`, a `host/path` checked by init).
 */
export function releaseWorkflow(repository: string): string {
  return [releaseHeader(repository), materializeJob(), buildStageJob(), attestJob(), promoteJob(), publishJob(), githubReleaseJob()].join("");
}
