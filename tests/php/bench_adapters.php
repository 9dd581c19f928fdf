<?php

// What the Eloquent and Doctrine adapters cost per row inserted, beside the plain column (an
// autoincrement key), on SQLite in memory and on a PostgreSQL that tests/servers starts:
//
//   SNOWFLAKE_LIB=target/release/libsnowflake.so php tests/php/bench_adapters.php [rows]
//
// Eloquent: Model::create() one row at a time; Doctrine: persist() of every row, one flush().
// Microseconds per row, the best of three runs; the frameworks as Debian packages them.

declare(strict_types=1);

require __DIR__ . '/harness.php';
require dirname(__DIR__) . '/servers/servers.php';
require dirname(__DIR__, 2) . '/ffi-c/php/autoload.php';
require __DIR__ . '/orm_test.php';

use Snowflake\Generator;

$rows = (int) ($argv[1] ?? 2000);

function best_us(callable $fn, int $n): float
{
    $best = INF;
    for ($i = 0; $i < 3; $i++) {
        $t = hrtime(true);
        $fn();
        $best = min($best, (hrtime(true) - $t) / 1e3 / $n);
    }
    return $best;
}

$dir = sys_get_temp_dir() . '/snowflake-php-bench-' . getmypid();
@mkdir($dir, 0700, true);
$servers = TestServers::start('postgres', [], $dir);
$pg = $servers->info['postgres'];
$databases = [
    'SQLite' => [['driver' => 'sqlite', 'database' => ':memory:'], ['driver' => 'pdo_sqlite', 'memory' => true]],
    'PostgreSQL' => [
        ['driver' => 'pgsql', 'host' => $pg['socket_dir'], 'port' => $pg['port'], 'database' => $pg['database'], 'username' => $pg['user'], 'password' => ''],
        ['driver' => 'pdo_pgsql', 'host' => $pg['socket_dir'], 'port' => $pg['port'], 'dbname' => $pg['database'], 'user' => $pg['user']],
    ],
];
$results = [];
foreach ($databases as $name => [$eloquentConfig, $doctrineParams]) {
    with_snowflake_env(['SNOWFLAKE_NODE' => 'datacenter=1,worker=1'], function () use ($name, $eloquentConfig, $doctrineParams, $rows, &$results) {
        eloquent($eloquentConfig);
        $n = intdiv($rows, 2);
        foreach ([1, 2] as $round) {
            $plain = best_us(function () use ($n) {
                for ($i = 0; $i < $n; $i++) {
                    \SnowflakeOrmTest\Plain::create(['item' => 'x']);
                }
            }, $n);
            $snow = best_us(function () use ($n) {
                for ($i = 0; $i < $n; $i++) {
                    \SnowflakeOrmTest\Order::create(['item' => 'x']);
                }
            }, $n);
            $results["Eloquent create(), $name"] = [min($plain, $results["Eloquent create(), $name"][0] ?? INF), min($snow, $results["Eloquent create(), $name"][1] ?? INF)];
        }
        $em = doctrine($doctrineParams);
        \Snowflake\Doctrine\SnowflakeIdGenerator::useGenerator(new Generator('twitter', ['datacenter' => 1, 'worker' => 2]));
        foreach ([1, 2] as $round) {
            $times = [];
            foreach ([\SnowflakeOrmTest\DoctrinePlain::class, \SnowflakeOrmTest\DoctrineOrder::class] as $class) {
                $times[] = best_us(function () use ($em, $class, $rows) {
                    for ($i = 0; $i < $rows; $i++) {
                        $o = new $class();
                        $o->item = 'x';
                        $em->persist($o);
                    }
                    $em->flush();
                    $em->clear();
                }, $rows);
            }
            $key = "Doctrine persist() + flush(), $name";
            $results[$key] = [min($times[0], $results[$key][0] ?? INF), min($times[1], $results[$key][1] ?? INF)];
        }
        \Snowflake\Doctrine\SnowflakeIdGenerator::useGenerator(null);
        $em->close();
    });
}
$servers->stop();
$debian = fn (string $package) => trim((string) shell_exec("dpkg-query -W -f='\${Version}' $package"));
printf("PHP %s, illuminate/database %s, doctrine/orm %s, doctrine/dbal %s; %d rows; us per row (best of 3)\n", PHP_VERSION,
    $debian('php-illuminate-database'), $debian('php-doctrine-orm'), $debian('php-doctrine-dbal'), $rows);
printf("%-40s %9s %10s %9s\n", '', 'plain', 'snowflake', 'cost');
foreach ($results as $name => [$plain, $snow]) {
    printf("%-40s %9.2f %10.2f %+9.2f\n", $name, $plain, $snow, $snow - $plain);
}
