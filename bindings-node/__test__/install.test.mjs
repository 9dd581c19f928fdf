// Installing the package from the checkout, each into a fresh project in a temp dir, and what
// the loader (native.js) says where it finds no addon. The prebuilt packages users install
// (dist/node/, from scripts/dist.sh) are tested by tests/dist/run.sh.
//
// - npm install <folder> links the checkout (npm 11's default), whose addon beside native.js
//   (`npm run build`, run by run-tests.sh: built from source, or SNOWFLAKE_ADDON's) is found;
// - `npm pack` of the checkout carries no addon and has no install script: without the
//   platform package, require() fails with ERR_SNOWFLAKE_NO_ADDON naming the package and the
//   fix;
// - a platform with no prebuilt package gets an error naming the platform and how to build
//   from source.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pkgDir } from './helpers.mjs';

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
    return execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (e) {
    throw new Error(`${cmd} ${args.join(' ')} failed in ${cwd}:\n${e.stdout}\n${e.stderr}`);
  }
}

// `npm install --offline`: nothing here may need the registry.
function npmInstall(cwd, ...args) {
  run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--loglevel=error', ...args], cwd);
}

// Runs `code` with node in `cwd`, after `preload` (a CommonJS file, or null); returns the
// error that require('libsnowflake') threw, as {code, message}, or null.
function loadError(cwd, preload) {
  const code = `
    try { require('libsnowflake'); console.log('null'); }
    catch (e) { console.log(JSON.stringify({ code: e.code, message: e.message })); }`;
  const args = preload ? ['-r', preload, '-e', code] : ['-e', code];
  const r = spawnSync(process.execPath, args, { cwd, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout.trim().split('\n').pop());
}

test.after(() => {
  for (const dir of temps) rmSync(dir, { recursive: true, force: true });
});

test('npm install <folder> links the checkout and uses the addon `npm run build` put beside native.js', () => {
  assert.ok(existsSync(path.join(pkgDir, 'libsnowflake.linux-x64-gnu.node')), 'run-tests.sh ran `npm run build`');
  const dir = project();
  npmInstall(dir, pkgDir);
  assert.ok(lstatSync(path.join(dir, 'node_modules', 'libsnowflake')).isSymbolicLink(), 'npm linked the folder');
  const cjs = run(process.execPath, ['-e', `
    const { Generator, Layout } = require('libsnowflake');
    const g = new Generator({ layout: 'twitter', node: { datacenter: 0, worker: 3 } });
    const a = g.nextId(), b = g.nextId();
    if (!(typeof a === 'bigint' && b > a)) throw new Error('bad IDs');
    console.log(JSON.stringify(new Layout('twitter').decode(a).fields));`], dir);
  assert.equal(cjs.trim(), '{"datacenter":0,"worker":3}');
  const esm = run(process.execPath, ['--input-type=module', '-e', `
    import { Generator, encode } from 'libsnowflake';
    console.log(encode(new Generator({ layout: 'discord' }).nextId(), 'base62').length);`], dir);
  assert.equal(esm.trim(), '11');
});

test('npm pack of the checkout: no install script, no addon; without the platform package require() names it', () => {
  const packDir = tempDir('libsnowflake-pack-');
  const [info] = JSON.parse(run('npm', ['pack', '--json', '--loglevel=error', '--pack-destination', packDir], pkgDir));
  const files = info.files.map((f) => f.path).sort();
  assert.deepEqual(files, [
    'README.md', 'adapters-common.js', 'drizzle.d.ts', 'drizzle.js', 'drizzle.mjs', 'index.d.ts', 'index.js', 'index.mjs',
    'json.d.ts', 'json.js', 'json.mjs', 'native.js', 'package.json', 'typeorm.d.ts', 'typeorm.js', 'typeorm.mjs',
  ]);
  const tarballs = readdirSync(packDir).filter((f) => f.endsWith('.tgz'));
  assert.equal(tarballs.length, 1);

  const dir = project();
  npmInstall(dir, '--ignore-scripts', path.join(packDir, tarballs[0]));
  const installed = JSON.parse(run(process.execPath, ['-p', "JSON.stringify(require('libsnowflake/package.json'))"], dir));
  assert.equal(installed.scripts && (installed.scripts.install || installed.scripts.postinstall || installed.scripts.preinstall), undefined);
  const err = loadError(dir, null);
  assert.equal(err.code, 'ERR_SNOWFLAKE_NO_ADDON');
  assert.match(err.message, /@libsnowflake\/linux-x64-gnu is not installed/);
  assert.match(err.message, /npm install libsnowflake/);
  assert.match(err.message, /npm run build/);
});

test('a platform without a prebuilt package: the error names the platform and the fix', () => {
  const preload = path.join(tempDir('libsnowflake-arch-'), 'riscv.cjs');
  writeFileSync(preload, "Object.defineProperty(process, 'arch', { value: 'riscv64' });\n");
  const err = loadError(pkgDir, preload);
  assert.equal(err.code, 'ERR_SNOWFLAKE_NO_ADDON');
  assert.match(err.message, /no prebuilt addon for this platform \(linux-riscv64-gnu\)/);
  assert.match(err.message, /prebuilt packages exist for linux-x64-gnu/);
  assert.match(err.message, /cd bindings-node && npm run build/);
});
