#!/usr/bin/env node
// `npm run build`: builds the native addon from source, in a checkout (bindings-node/ is a
// member of the Cargo workspace one level up), and puts it beside native.js as
// libsnowflake.<platform>.node, the file native.js loads before any prebuilt package. The
// published packages carry a prebuilt addon instead (scripts/dist.sh); this is for
// contributors and for platforms without one. Node built-ins only.
//
// With SNOWFLAKE_ADDON=<an addon file>, that file is put in place instead of building one:
// scripts/check.sh passes the addon of dist/node's package for this machine, which tests/dist
// has just installed with npm, so that CI does not build the addon a second time.
'use strict';

const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { localAddonPath } = require('../native.js');

const pkgDir = path.resolve(__dirname, '..');
const out = localAddonPath();

function fail(message) {
  console.error(`libsnowflake: ${message}`);
  process.exit(1);
}

function manifest() {
  const repoRoot = path.resolve(pkgDir, '..');
  const inRepo = path.join(pkgDir, 'Cargo.toml');
  if (
    fs.existsSync(inRepo) &&
    fs.existsSync(path.join(repoRoot, 'core', 'Cargo.toml')) &&
    /bindings-node/.test(fs.readFileSync(path.join(repoRoot, 'Cargo.toml'), 'utf8'))
  ) {
    return inRepo;
  }
  return fail('builds from source only in a checkout of the libsnowflake repository (bindings-node/ beside core/)');
}

function cargo() {
  const home = process.env.CARGO_HOME || path.join(require('node:os').homedir(), '.cargo');
  const fromHome = path.join(home, 'bin', process.platform === 'win32' ? 'cargo.exe' : 'cargo');
  if (process.env.CARGO) return process.env.CARGO;
  const probe = spawnSync('cargo', ['--version'], { stdio: 'ignore' });
  if (probe.status === 0) return 'cargo';
  if (fs.existsSync(fromHome)) return fromHome;
  return fail('builds from source and needs Rust: install it with rustup (https://rustup.rs), then `npm run build` again');
}

/** Copy then rename: a process that has the old addon loaded keeps a valid file. */
function install(library) {
  const tmp = `${out}.${process.pid}.tmp`;
  fs.copyFileSync(library, tmp);
  fs.renameSync(tmp, out);
}

const given = process.env.SNOWFLAKE_ADDON;
if (given !== undefined && given !== '') {
  if (!fs.statSync(given, { throwIfNoEntry: false })?.isFile()) fail(`SNOWFLAKE_ADDON=${given}: no such file`);
  install(given);
  console.error(`libsnowflake: put ${given} in place as ${path.relative(process.cwd(), out) || out}`);
  process.exit(0);
}

const manifestPath = manifest();
const args = [
  'build',
  '--release',
  '--lib',
  '--package',
  'snowflake-node',
  '--manifest-path',
  manifestPath,
  '--message-format=json-render-diagnostics',
];
console.error(`libsnowflake: building the native addon (cargo ${args.join(' ')})`);
const built = spawnSync(cargo(), args, {
  cwd: path.dirname(manifestPath),
  stdio: ['ignore', 'pipe', 'inherit'],
  maxBuffer: 256 * 1024 * 1024,
  encoding: 'utf8',
});
if (built.error) fail(`could not run cargo: ${built.error.message}`);
if (built.status !== 0) fail(`cargo build failed (exit ${built.status})`);

// The artifact's path comes from cargo itself, so CARGO_TARGET_DIR and friends are honoured.
let library;
for (const line of built.stdout.split('\n')) {
  if (!line.startsWith('{')) continue;
  const msg = JSON.parse(line);
  if (msg.reason === 'compiler-artifact' && msg.target && msg.target.name === 'snowflake_node') {
    library = msg.filenames.find((f) => /\.(so|dylib|dll)$/.test(f));
  }
}
if (!library) fail('cargo did not report the snowflake_node library');

install(library);
console.error(`libsnowflake: built ${path.relative(process.cwd(), out) || out}`);
