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

/** A TypeScript type for a text option's value form: `zero|spread:K` gives
 * `'zero' | `spread:${number}``; a single free form is a `string`. */
function textType(form) {
  const alternatives = form.split('|');
  if (alternatives.length < 2) return 'string';
  return alternatives
    .map((alt) => {
      const at = alt.search(/[A-Z]/); // the first placeholder: K, NAME, HOST, ...
      if (at < 0) return `'${alt}'`;
      return '`' + alt.slice(0, at) + (alt.slice(at) === 'K' ? '${number}' : '${string}') + '`';
    })
    .join(' | ');
}

function tables() {
  return JSON.parse(fs.readFileSync(path.join(pkgDir, '..', 'tests', 'vectors', 'tables.json'), 'utf8'));
}

/** `SnowflakeError`, its detail fields from core's table of them (DETAIL_FIELDS); the WASM
 * package's snowflake.d.ts gets the same lines from scripts/tables.py. */
function snowflakeError() {
  const lines = [
    '/**',
    " * What libsnowflake throws (an `Error`; a `RangeError` for a negative or too large bigint or",
    ' * time). Detail fields are JSON-safe: numbers, or decimal strings above 2^53. A value of the',
    " * wrong JS type is a `TypeError` with `code: 'ERR_INVALID_ARG_TYPE'` instead.",
    ' */',
    'export interface SnowflakeError extends Error {',
    "  code: SnowflakeErrorCode | 'ERR_INVALID_ARG_TYPE'",
  ];
  for (const f of tables().details) lines.push(`  /** ${f.doc} */`, `  ${f.name}?: ${f.ts}`);
  lines.push('}', '');
  return lines.join('\n');
}

/** `SnowflakeErrorCode`, from core's error table: the codes Node can throw (not the C-only ones). */
function errorCodes() {
  const codes = tables()
    .errors.filter((e) => !e.doc.startsWith('(C)') && e.node_code.startsWith('ERR_SNOWFLAKE_'))
    .map((e) => `  | '${e.node_code}'`);
  return ["/** The stable codes of libsnowflake's errors (the same in every language; core's table). */",
    'export type SnowflakeErrorCode =', ...codes, ''].join('\n');
}

/** `GeneratorOptions`, from core's option table (tests/vectors/tables.json). */
function generatorOptions() {
  const type = (o) => ({ integer: 'number | bigint', bool: 'boolean', path: 'string', text: textType(o.form) })[o.type];
  const lines = [
    "/** The options of `new Generator(...)`: `layout`, `node`, and core's option table. */",
    'export interface GeneratorOptions {',
    "  /** A preset name, a spec, or a `Layout` (default: $SNOWFLAKE_LAYOUT, else twitter); or give it as the first argument. */",
    '  layout?: string | Layout',
    "  /** This node's field values: `{ datacenter: 1, worker: 3 }`, or the text `'datacenter=1,worker=3'` (default: $SNOWFLAKE_NODE, else all zeros). */",
    '  node?: Record<string, number | bigint> | string',
  ];
  for (const o of tables().options) {
    const dflt = o.default ? ` (default ${o.default})` : '';
    lines.push(`  /** ${o.doc}${dflt} */`, `  ${o.camel}?: ${type(o)} | null`);
  }
  lines.push('}', '');
  return lines.join('\n');
}
/** `Stats`, from core's stats table: camelCase numbers, optional ones absent when unknown. */
function stats() {
  const t = tables();
  // Names in a doc (a stat's or an option's, in backquotes) in Node's spelling.
  const camel = new Map([...t.stats, ...t.options].map((r) => [r.name, r.camel]));
  const doc = (text) => text.replace(/`([a-z0-9_]+)`/g, (m, name) => (camel.has(name) ? '`' + camel.get(name) + '`' : m));
  const lines = ['/** What a generator has done (core\'s stats table). */', 'export interface Stats {'];
  for (const s of t.stats) {
    const optional = s.type.startsWith('optional_') ? '?' : '';
    lines.push(`  /** ${doc(s.doc)} */`, `  ${s.camel}${optional}: number`);
  }
  lines.push(
    '  /**',
    "   * Where each value came from: `layout`, `node` and each option (camelCase) -> `'code'`,",
    "   * `'default'`, or the environment variable (`'SNOWFLAKE_LAYOUT'`, `'SNOWFLAKE_NODE'`,",
    "   * `'SNOWFLAKE_OPTIONS'`).",
    '   */',
    '  sources: Record<string, string>',
    '}',
    '',
  );
  return lines.join('\n');
}
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
  fs.writeFileSync(outFile, header + snowflakeError() + errorCodes() + generatorOptions() + stats() + fs.readFileSync(generated, 'utf8'));
} finally {
  fs.rmSync(tmp, { recursive: true, force: true });
}
