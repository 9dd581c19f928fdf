<?php

// The `lease` option with every form of Redis address, against real servers (tests/servers):
// a password in the URL, IPv6 with the password from a file, a unix socket with db and pass,
// TLS verified against a CA file, and Sentinel. Core does the work; this checks that PHP hands
// each form over, that stats() reports the lease, and that no message shows the password.

declare(strict_types=1);

use Snowflake\Generator;
use Snowflake\LeaseException;

test('lease: every form of Redis address issues IDs that repeat nothing', function () {
    $dir = sys_get_temp_dir() . '/sf-redis-lease-' . getmypid() . '-' . bin2hex(random_bytes(4));
    mkdir($dir, 0700);
    $plain = TestServers::start('redis', ['--password', 'php-pw', '--ipv6'], $dir);
    $tls = TestServers::start('redis', ['--tls'], $dir);
    $sentinel = TestServers::start('sentinel', ['--replicas', '1', '--sentinels', '3'], $dir);
    try {
        $layout = 'time:41,worker:3,sequence:12;epoch=1288834974657';
        $port = $plain->info['redis']['port'];
        $forms = [
            ["redis://:php-pw@127.0.0.1:$port/0", []],
            ["redis://[::1]:$port/0", ['lease_password_file' => $plain->info['password_file']]],
            ["unix://{$plain->info['redis']['unix_socket']}?db=2&pass=php-pw", []],
            ["rediss://localhost:{$tls->info['redis']['port']}/0", ['lease_tls_ca' => $tls->info['tls']['ca_cert']]],
            ['redis+sentinel://' . implode(',', $sentinel->info['sentinel_addrs']) . "/{$sentinel->info['master_name']}/0", []],
        ];
        $seen = [];
        foreach ($forms as [$url, $extra]) {
            $g = new Generator($layout, [], ['lease' => $url, 'lease_ttl_ms' => 30000] + $extra);
            foreach ($g->nextIds(2000) as $id) {
                assert_true(!isset($seen[$id]), "$url: $id repeated");
                $seen[$id] = true;
            }
            $s = $g->stats();
            assert_same(1, $s->leaseClaims, $url);
            assert_true($s->leaseValue !== null, $url);
        }
        $e = assert_throws(LeaseException::class, fn () => new Generator($layout, [], ['lease' => "redis://:wr0ng-php@127.0.0.1:$port/0"]));
        assert_true(str_contains($e->getMessage(), 'refused the credentials') && !str_contains($e->getMessage(), 'wr0ng-php'), $e->getMessage());
    } finally {
        $plain->stop();
        $tls->stop();
        $sentinel->stop();
        exec('rm -rf ' . escapeshellarg($dir));
    }
});
