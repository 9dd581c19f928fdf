// lease with every form of Redis address, against real servers (tests/servers): a password in
// the URL, IPv6 with the password from a file, a unix socket with db and pass, TLS verified
// against a CA file, and Sentinel. Core does the work; this checks that Node hands each form
// over, that stats() reports the lease, and that no message shows the password.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Generator } from '../index.mjs';
import { startServers } from '../../tests/servers/servers.mjs';

const LAYOUT = 'time:41,worker:3,sequence:12;epoch=1288834974657';

test('every form of Redis address issues IDs that repeat nothing', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'libsnowflake-redis-lease-'));
  const plain = await startServers('redis', ['--password', 'nd-pw', '--ipv6'], { dir });
  const tls = await startServers('redis', ['--tls'], { dir });
  const sentinel = await startServers('sentinel', ['--replicas', '1', '--sentinels', '3'], { dir });
  try {
    const port = plain.info.redis.port;
    const forms = [
      [`redis://:nd-pw@127.0.0.1:${port}/0`, {}],
      [`redis://[::1]:${port}/0`, { leasePasswordFile: plain.info.password_file }],
      [`unix://${plain.info.redis.unix_socket}?db=2&pass=nd-pw`, {}],
      [`rediss://localhost:${tls.info.redis.port}/0`, { leaseTlsCa: tls.info.tls.ca_cert }],
      [`redis+sentinel://${sentinel.info.sentinel_addrs.join(',')}/${sentinel.info.master_name}/0`, {}],
    ];
    const seen = new Set();
    for (const [lease, extra] of forms) {
      const g = new Generator({ layout: LAYOUT, lease, leaseTtlMs: 30000, ...extra });
      for (const id of g.nextIds(2000)) {
        assert.ok(!seen.has(id), `${lease}: ${id} repeated`);
        seen.add(id);
      }
      const s = g.stats();
      assert.equal(s.leaseClaims, 1, lease);
      assert.equal(typeof s.leaseValue, 'number', lease);
    }
    assert.throws(
      () => new Generator({ layout: LAYOUT, lease: `redis://:wr0ng-nd@127.0.0.1:${port}/0` }),
      (e) => e.code === 'ERR_SNOWFLAKE_LEASE' && /refused the credentials/.test(e.message) && !e.message.includes('wr0ng-nd'),
    );
  } finally {
    await plain.stop();
    await tls.stop();
    await sentinel.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
