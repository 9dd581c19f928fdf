// Installing the package the ways a user does, each into a fresh project in a temp dir:
// from the folder (npm 11 links it: install-links=false), from the folder packed
// (--install-links), and from the `npm pack` tarball. Each install builds the addon from
// source with cargo through the package's install script; the vendored builds prove that the
// tarball carries every Rust source it needs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pkgDir, repoRoot } from './helpers.mjs';

// One target dir for the three builds, so that crates.io dependencies compile once; the
// package's own crates still build from each install's sources.
const env = { ...process.env, CARGO_TARGET_DIR: path.join(repoRoot, 'target', 'npm-install-test') };
const temps = [];

function tempDir(prefix) {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  temps.push(dir);
  return dir;
}

function project() {
  const dir = tempDir('libsnowflake-consumer-');
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', private: true }));
  return dir;
}

function run(cmd, args, cwd) {
  try {
    return execFileSync(cmd, args, { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (e) {
    throw new Error(`${cmd} ${args.join(' ')} failed in ${cwd}:\n${e.stdout}\n${e.stderr}`);
  }
}

function npmInstall(cwd, ...args) {
  run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', ...args], cwd);
}

// The installed package works from CommonJS and ESM and ships its types.
function assertWorks(dir) {
  const installed = path.join(dir, 'node_modules', 'libsnowflake');
  assert.ok(existsSync(path.join(installed, 'index.d.ts')), 'index.d.ts ships with the package');
  assert.ok(existsSync(path.join(installed, 'libsnowflake.node')), 'the addon was built');
  const cjs = run(process.execPath, ['-e', `
    const { Generator, Layout } = require('libsnowflake');
    const g = new Generator({ layout: 'twitter', node: { worker: 3 } });
    const a = g.nextId(), b = g.nextId();
    if (!(typeof a === 'bigint' && b > a)) throw new Error('bad IDs');
    console.log(JSON.stringify(new Layout('twitter').decode(a).fields));`], dir);
  assert.equal(cjs.trim(), '{"datacenter":0,"worker":3}');
  const esm = run(process.execPath, ['--input-type=module', '-e', `
    import { Generator, encode } from 'libsnowflake';
    console.log(encode(new Generator({ layout: 'discord' }).nextId(), 'base62').length);`], dir);
  assert.equal(esm.trim(), '11');
}

test.after(() => {
  for (const dir of temps) rmSync(dir, { recursive: true, force: true });
});

test('npm install <folder> from another project (linked, npm 11 default)', () => {
  const dir = project();
  npmInstall(dir, pkgDir);
  assert.ok(lstatSync(path.join(dir, 'node_modules', 'libsnowflake')).isSymbolicLink(), 'npm linked the folder');
  assertWorks(dir);
});

test('npm install --install-links <folder> (packed by npm, built from vendor/)', () => {
  const dir = project();
  npmInstall(dir, '--install-links', pkgDir);
  const installed = path.join(dir, 'node_modules', 'libsnowflake');
  assert.ok(!lstatSync(installed).isSymbolicLink(), 'npm copied the package');
  assert.ok(existsSync(path.join(installed, 'vendor', 'core', 'src', 'lib.rs')), 'core is vendored');
  assertWorks(dir);
});

test('npm install <tarball from npm pack> (built from vendor/)', () => {
  const packDir = tempDir('libsnowflake-pack-');
  run('npm', ['pack', '--loglevel=error', '--pack-destination', packDir], pkgDir);
  const tarballs = readdirSync(packDir).filter((f) => f.endsWith('.tgz'));
  assert.equal(tarballs.length, 1);
  const dir = project();
  npmInstall(dir, path.join(packDir, tarballs[0]));
  assertWorks(dir);
});
