// The docs' examples run: every ```js block of the package README and of docs/node.md is run
// (as an ES module when it imports), and every ```ts block is the type-checked example file.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { pkgDir, repoRoot } from './helpers.mjs';
import { startServers } from '../../tests/servers/servers.mjs';

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

// docs/integrations-node.md: its ORM examples against a PostgreSQL of this test, named by
// libpq's variables as the page says.
test('the examples of docs/integrations-node.md run', async () => {
  const doc = path.join(repoRoot, 'docs', 'integrations-node.md');
  const blocks = [...readFileSync(doc, 'utf8').matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]);
  assert.ok(blocks.length >= 5, 'the page has its examples');
  const dir = mkdtempSync(path.join(tmpdir(), 'snowflake-docs-pg-'));
  const servers = await startServers('postgres', [], { dir });
  try {
    const pg = servers.info.postgres;
    const env = { ...process.env, PGHOST: pg.socket_dir, PGPORT: String(pg.port), PGUSER: pg.user, PGDATABASE: pg.database };
    for (const k of ['SNOWFLAKE_LAYOUT', 'SNOWFLAKE_NODE', 'SNOWFLAKE_OPTIONS']) delete env[k];
    for (const code of blocks) {
      const out = execFileSync(process.execPath, ['-e', code], { cwd: pkgDir, encoding: 'utf8', env });
      assert.ok(out.length > 0, `no output from:\n${code}`);
      assert.ok(!/\bfalse\b/.test(out), `an example printed false:\n${code}\n${out}`);
    }
  } finally {
    await servers.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
