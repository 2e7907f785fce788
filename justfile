# Maintainer recipes. `just` comes from the rust-just npm package: run `npx just <recipe>`.
set shell := ["bash", "-cu"]

# List recipes.
default:
    @just --list

# Install exact dependencies from package-lock.json.
install:
    npm ci --engine-strict

# The whole test suite (CI).
test:
    npm test

# Unit lane (evidence gate `unit`): every test outside the two lanes below, so the three gates run the suite once.
test-unit:
    npm run build && npx vitest run --exclude 'test/contract/**' --exclude 'test/release/**' --exclude 'test/kit/**'

# Run one test file or name pattern, e.g. `just test-one canonical-json`.
test-one name:
    npm run build && npx vitest run {{name}}

# Release-contract lane (evidence gate `public_contract`).
test-release:
    npm run build && npx vitest run test/contract test/release

# Host-contract lane (evidence gate `host_contract`): the kit against the real MCP SDK client.
test-contract:
    npm run build && npx vitest run test/kit

# Compile TypeScript to dist/.
build:
    npm run build

# Check the built package (publint, tarball contents).
check-dist:
    npx publint --strict

# Run the end-to-end demo.
demo:
    npm run demo

# Benchmarks.
bench:
    npm run bench
