// The docs' examples run: every ```js block of the package README and of docs/node.md is run
// (as an ES module when it imports), and every ```ts block is the type-checked example file.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { pkgDir, repoRoot } from './helpers.mjs';

const docs = [path.join(pkgDir, 'README.md'), path.join(repoRoot, 'docs', 'node.md')];
const tsExample = readFileSync(path.join(pkgDir, 'examples', 'quickstart.ts'), 'utf8').trimEnd();

for (const doc of docs) {
  test(`the examples of ${path.relative(repoRoot, doc)} run`, () => {
    const blocks = [...readFileSync(doc, 'utf8').matchAll(/```(js|ts)\n([\s\S]*?)```/g)];
    assert.ok(blocks.length >= 4, 'the doc has its examples');
    for (const [, lang, code] of blocks) {
      if (lang === 'ts') {
        assert.equal(code.trimEnd(), tsExample, 'a TypeScript block is examples/quickstart.ts');
        continue;
      }
      const args = /^import /m.test(code) ? ['--input-type=module', '-e', code] : ['-e', code];
      // From the package directory, so that 'libsnowflake' resolves to this package.
      const out = execFileSync(process.execPath, args, { cwd: pkgDir, encoding: 'utf8' });
      assert.ok(out.length > 0, `no output from:\n${code}`);
    }
  });
}
