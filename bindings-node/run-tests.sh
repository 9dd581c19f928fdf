#!/usr/bin/env bash
# The Node binding's tests (`make test-node`): builds the addon (`npm run build`; with
# SNOWFLAKE_ADDON=<an addon file>, as scripts/check.sh passes dist/node's, that file is put in
# place instead), checks that the committed index.d.ts is what the sources generate, and runs
# every node:test file. Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")"

# Dev dependencies (@napi-rs/cli for the type definitions, typescript for the TS example,
# express and fastify for the JSON helpers against the real frameworks).
if [ ! -d node_modules/@napi-rs/cli ] || [ ! -d node_modules/typescript ] || [ ! -d node_modules/express ] || [ ! -d node_modules/fastify ]; then
  npm install --no-audit --no-fund --loglevel=error --ignore-scripts
fi

node scripts/build.js

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
node scripts/dts.js "$tmp/index.d.ts"
if ! diff -u index.d.ts "$tmp/index.d.ts"; then
  echo "bindings-node/index.d.ts is stale: run \`npm run dts\` in bindings-node and commit it" >&2
  exit 1
fi

# One file at a time: every generator uses the host's state of its layout and node values
# (in SNOWFLAKE_SHM_DIR), and files run at once could meet there with other policies.
node --test --test-concurrency=1 __test__/*.test.mjs
