#!/usr/bin/env node
// The package's `prepare` script (npm runs it for `npm pack` and when it packs a folder for
// `npm install --install-links`): copies the Rust sources that sit outside bindings-node/ into
// vendor/, as a Cargo workspace of its own, so that a tarball builds without the repository.
// Outside the repository (an unpacked tarball) it leaves vendor/ as it is.
'use strict';

const fs = require('node:fs');
const path = require('node:path');

const pkgDir = path.resolve(__dirname, '..');
const repoRoot = path.resolve(pkgDir, '..');
const vendor = path.join(pkgDir, 'vendor');

if (!fs.existsSync(path.join(repoRoot, 'core', 'Cargo.toml')) || !fs.existsSync(path.join(pkgDir, 'Cargo.toml'))) {
  process.exit(0);
}

const skip = new Set(['target', 'node_modules', 'vendor', '.git']);
const copy = (from, to) =>
  fs.cpSync(from, to, { recursive: true, filter: (src) => !skip.has(path.basename(src)) });

fs.rmSync(vendor, { recursive: true, force: true });
fs.mkdirSync(vendor);

// The root manifest keeps [workspace.package], [workspace.dependencies] and the release
// profile (one version source), with only the two members the addon needs.
const rootManifest = fs.readFileSync(path.join(repoRoot, 'Cargo.toml'), 'utf8');
const members = /^members\s*=\s*\[[^\]]*\]/m;
if (!members.test(rootManifest)) throw new Error('vendor.js: no `members = [...]` in Cargo.toml');
fs.writeFileSync(
  path.join(vendor, 'Cargo.toml'),
  `# Written by bindings-node/scripts/vendor.js from the repository's Cargo.toml.\n${rootManifest.replace(
    members,
    'members = ["core", "bindings-node"]',
  )}`,
);
// The lock file pins the same dependency versions the repository is tested with.
fs.copyFileSync(path.join(repoRoot, 'Cargo.lock'), path.join(vendor, 'Cargo.lock'));
// All of core, tests included: its manifest names test and bench targets, and Cargo checks
// that their files exist even to build the library.
copy(path.join(repoRoot, 'core'), path.join(vendor, 'core'));
fs.mkdirSync(path.join(vendor, 'bindings-node'));
for (const item of ['Cargo.toml', 'build.rs', 'src']) {
  copy(path.join(pkgDir, item), path.join(vendor, 'bindings-node', item));
}
