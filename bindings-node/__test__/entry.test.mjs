// Both entry points (CommonJS and ES module) expose the same objects, by path and by the
// package's own name through its "exports" map; the type definitions type-check an example.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import * as esm from '../index.mjs';
import esmDefault from '../index.mjs';
import { pkgDir } from './helpers.mjs';

const require = createRequire(import.meta.url);

test('ESM and CommonJS entries are the same objects', () => {
  const cjs = require('../index.js');
  for (const name of ['Layout', 'Generator', 'PublicIds', 'encode', 'decodeStr', 'VERSION']) {
    assert.equal(esm[name], cjs[name], name);
    assert.equal(esmDefault[name], cjs[name], name);
  }
  assert.equal(typeof new esm.Generator({ layout: 'twitter' }).nextId(), 'bigint');
});

test('one version: Cargo, the addon and package.json agree', () => {
  const pkg = require('../package.json');
  assert.equal(esm.VERSION, pkg.version);
});

test('require() and import() by package name in a separate process', () => {
  // Self-reference through "exports": resolves "libsnowflake" from inside the package.
  const cjs = execFileSync(process.execPath, ['-e', "const s = require('libsnowflake'); console.log(typeof s.Generator, typeof new s.Generator({ layout: 'twitter' }).nextId())"], { cwd: pkgDir, encoding: 'utf8' });
  assert.equal(cjs.trim(), 'function bigint');
  const mjs = execFileSync(process.execPath, ['--input-type=module', '-e', "import { Generator } from 'libsnowflake'; console.log(typeof new Generator({ layout: 'twitter' }).nextId())"], { cwd: pkgDir, encoding: 'utf8' });
  assert.equal(mjs.trim(), 'bigint');
});

test('the TypeScript quick start type-checks against index.d.ts and runs', () => {
  const tsc = path.join(pkgDir, 'node_modules', 'typescript', 'bin', 'tsc');
  assert.ok(existsSync(tsc), 'typescript (a devDependency) is installed by `npm install`');
  // Inside the package, so that 'libsnowflake' resolves to it by its own name.
  const out = path.join(pkgDir, 'examples', '.build');
  execFileSync(process.execPath, [tsc, '-p', path.join(pkgDir, 'examples', 'tsconfig.json'), '--outDir', out], { stdio: 'inherit' });
  const printed = execFileSync(process.execPath, [path.join(out, 'quickstart.js')], { encoding: 'utf8' });
  assert.match(printed, /^\{"id":"\d+"/m);
});

test('the JavaScript examples run', () => {
  for (const file of ['quickstart.cjs', 'quickstart.mjs']) {
    const printed = execFileSync(process.execPath, [path.join(pkgDir, 'examples', file)], { encoding: 'utf8' });
    assert.match(printed, /^\{"id":"\d+"/m, file);
  }
});
