<?php

// One issuing process of the arbiter tests (tests/arbiter/test_arbiter.py), in PHP (FFI; SNOWFLAKE_LIB
// points at the library).
//
//   php issue.php LAYOUT NODE OPTIONS MS OUT SYNC
//
// As tests/arbiter/issue.py: opens a generator (OPTIONS in the text form, `-` for none, here as
// an array), `error <code> <message>` on failure; else ready, go, nextId() for MS ms, then `ok`
// and one ID a line.

declare(strict_types=1);

require dirname(__DIR__, 2) . '/ffi-c/php/autoload.php';

use Snowflake\Generator;
use Snowflake\SnowflakeException;

[, $layout, $node, $options, $ms, $out, $sync] = $argv;
$values = [];
if ($node !== '-') {
    foreach (explode(',', $node) as $pair) {
        [$k, $v] = explode('=', $pair);
        $values[$k] = (int) $v;
    }
}
$opts = [];
if ($options !== '-') {
    foreach (explode(';', $options) as $item) {
        [$k, $v] = explode('=', $item, 2);
        $opts[$k] = match (true) {
            $v === 'true' => true,
            $v === 'false' => false,
            ctype_digit($v) => (int) $v,
            default => $v,
        };
    }
}
try {
    $gen = new Generator($layout, $values, $opts);
} catch (SnowflakeException $e) {
    file_put_contents($out, "error {$e->statusCode} " . str_replace("\n", ' ', $e->getMessage()) . "\n");
    exit(0);
}
touch("$sync/ready." . getmypid());
while (!file_exists("$sync/go")) {
    usleep(500);
}
$ids = [];
$tail = '';
$end = hrtime(true) + (int) $ms * 1000000;
try {
    // At least one batch, however late this process runs after `go`.
    do {
        for ($i = 0; $i < 200; $i++) {
            $ids[] = $gen->nextId();
        }
        if (count($ids) === 200) {
            touch("$sync/issued." . getmypid()); // the test may wait for this one: it has issued
        }
    } while (hrtime(true) < $end);
} catch (SnowflakeException $e) {
    $tail = "error {$e->statusCode} " . str_replace("\n", ' ', $e->getMessage()) . "\n";
}
file_put_contents($out, "ok\n" . implode('', array_map(fn ($id) => "$id\n", $ids)) . $tail);
