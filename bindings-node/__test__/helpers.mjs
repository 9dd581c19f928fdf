// Shared by the tests: the package's entry, the shared vectors, and error matchers.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import assert from 'node:assert/strict';

export const pkgDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const repoRoot = path.resolve(pkgDir, '..');

export function vectors(name) {
  return JSON.parse(readFileSync(path.join(repoRoot, 'tests', 'vectors', name), 'utf8'));
}

/** The JS class of each code, from core's table (tests/vectors/tables.json): one per code. */
export const CLASS_OF_CODE = Object.fromEntries(
  vectors('tables.json').errors.map((k) => [k.node_code, globalThis[k.node_class]]),
);

/**
 * Asserts that `fn` throws an Error (of `type`) with `code`, and returns the error. Whatever
 * `type` says, the error's class must be exactly the one core's table gives its code.
 */
export function throwsCode(fn, code, type = Error) {
  let caught;
  assert.throws(fn, (e) => {
    caught = e;
    return e instanceof type && e.code === code;
  }, `expected a ${type.name} with code ${code}`);
  assert.equal(caught.constructor, CLASS_OF_CODE[code], `${code} is a ${CLASS_OF_CODE[code].name} (core's table), not a ${caught.constructor.name}: ${caught.message}`);
  return caught;
}

/** Asserts the IDs are strictly increasing, hence unique. */
export function assertIncreasing(ids) {
  for (let i = 1; i < ids.length; i++) {
    if (!(ids[i] > ids[i - 1])) assert.fail(`ID ${i} (${ids[i]}) is not above ID ${i - 1} (${ids[i - 1]})`);
  }
}
