#!/usr/bin/env node
// `node scripts/dts.js OUT`: regenerates the type definitions into OUT (index.d.ts, or a
// temporary file that run-tests.sh compares with the committed index.d.ts). napi-rs's CLI
// (a devDependency: the install path never needs it) builds the crate with napi-derive's
// type output switched on; the hand-written header (error codes, the iterator) goes first.
'use strict';

const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const pkgDir = path.resolve(__dirname, '..');
const outFile = path.resolve(process.argv[2] || path.join(pkgDir, 'index.d.ts'));
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'libsnowflake-dts-'));
try {
  const cli = require.resolve('@napi-rs/cli/scripts/index.js', { paths: [pkgDir] });
  // The CLI joins the output directory and the .d.ts name onto its cwd: pass both relative.
  const generated = path.join(tmp, 'native.d.ts');
  const r = spawnSync(
    process.execPath,
    [cli, 'build', '--dts', 'native.d.ts', '--no-dts-header', '--js', 'false', path.relative(pkgDir, tmp)],
    { cwd: pkgDir, stdio: ['ignore', 'inherit', 'inherit'] },
  );
  if (r.status !== 0) throw new Error(`napi build failed (exit ${r.status})`);
  const header = fs.readFileSync(path.join(__dirname, 'dts-header.d.ts'), 'utf8');
  fs.writeFileSync(outFile, header + fs.readFileSync(generated, 'utf8'));
} finally {
  fs.rmSync(tmp, { recursive: true, force: true });
}
