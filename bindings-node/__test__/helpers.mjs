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

/** Asserts that `fn` throws an Error (of `type`) with `code`, and returns the error. */
export function throwsCode(fn, code, type = Error) {
  let caught;
  assert.throws(fn, (e) => {
    caught = e;
    return e instanceof type && e.code === code;
  }, `expected a ${type.name} with code ${code}`);
  return caught;
}

/** Asserts the IDs are strictly increasing, hence unique. */
export function assertIncreasing(ids) {
  for (let i = 1; i < ids.length; i++) {
    if (!(ids[i] > ids[i - 1])) assert.fail(`ID ${i} (${ids[i]}) is not above ID ${i - 1} (${ids[i - 1]})`);
  }
}
